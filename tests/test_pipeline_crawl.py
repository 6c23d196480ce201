import numpy as np
import pytest

from llmphys.pipeline import crawl, text
from llmphys.pipeline import words as word_tables


@pytest.fixture(scope="module")
def small():
    return crawl.generate_crawl(200, rng=np.random.default_rng(7))


def test_same_seed_gives_the_same_crawl():
    a = crawl.generate_crawl(40, rng=np.random.default_rng(1))
    b = crawl.generate_crawl(40, rng=np.random.default_rng(1))
    assert a == b


def test_kind_counts_follow_the_requested_fractions(small):
    # Counts are rounded per kind; templates come in groups of 3-6, so they may overshoot by < 6.
    kinds = [d.kind for d in small.documents]
    for kind, frac in crawl.KINDS.items():
        if kind != "templated":
            assert kinds.count(kind) == round(frac * 200)
    assert abs(kinds.count("templated") - round(crawl.KINDS["templated"] * 200)) < 6


def test_exact_duplicates_carry_their_originals_text(small):
    by_id = {d.doc_id: d for d in small.documents}
    dups = [d for d in small.documents if d.kind == "exact_dup"]
    assert dups and all(d.main_text == by_id[d.cluster].main_text for d in dups)


def test_near_duplicates_differ_from_their_original_in_few_words(small):
    # Edit rates are drawn from [0.5%, 5%] per word, so at most ~10% of words differ.
    by_id = {d.doc_id: d for d in small.documents}
    for d in (d for d in small.documents if d.kind == "near_dup"):
        a, b = text.words(d.main_text), text.words(by_id[d.cluster].main_text)
        assert len(a) == len(b) and np.mean([x != y for x, y in zip(a, b, strict=True)]) < 0.12


def test_leaks_quote_their_benchmark_item_verbatim_or_edited(small):
    leaks = [d for d in small.documents if d.kind == "leak"]
    verbatim = [d for d in leaks if d.defect == "verbatim"]
    assert verbatim and all(small.benchmark[d.benchmark_items[0]] in d.main_text for d in verbatim)
    edited = [d for d in leaks if d.defect == "edited"]
    assert edited and not any(small.benchmark[d.benchmark_items[0]] in d.main_text for d in edited)


def test_every_language_appears_and_main_text_is_inside_the_html(small):
    assert {d.lang for d in small.documents} == set(crawl.LANGUAGES)
    d = next(d for d in small.documents if d.kind == "clean")
    assert d.main_text.split("\n")[1][:40] in d.html


def test_word_tables_come_from_wordfreq_offline_and_keep_devanagari_marks():
    words, p = word_tables.word_table("hi", 200)
    assert "है" in words and np.isclose(p.sum(), 1.0)   # 'है' carries a vowel sign (category Mc/Mn)


def test_the_crawl_draws_from_exactly_the_languages_that_have_word_tables():
    # the crawl's mixture and the word tables (which the quality filter also reads) are
    # kept in two places; this is what holds them together
    assert tuple(crawl.LANGUAGES) == word_tables.LANGUAGES
    assert sum(crawl.LANGUAGES.values()) == pytest.approx(1.0, abs=1e-12)


def test_duplicate_truth_removes_all_but_the_first_of_each_cluster(small):
    remove = crawl.should_remove_as_duplicate(small)
    clusters = {d.cluster for d in small.documents}
    assert len(small.documents) - remove.sum() == len(clusters)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="n_docs"):
        crawl.generate_crawl(5, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="kinds"):
        crawl.generate_crawl(50, rng=np.random.default_rng(0), kinds={"clean": 0.5})
    with pytest.raises(ValueError, match="defect"):
        crawl.defect_blocks("nonsense", "en", np.random.default_rng(0))
