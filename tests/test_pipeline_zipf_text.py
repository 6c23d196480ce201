import numpy as np
import pytest

from llmphys.pipeline import dedup, zipf_text


def test_vocabulary_grows_as_heaps_law_with_exponent_one_over_a():
    # Zipf ranks p(k) ~ k^-a have V(N) ~ N^(1/a) distinct values (Baeza-Yates and Navarro
    # 2000). Seeded, so this is exact to rerun; 0.02 covers the finite-N bias (measured
    # 0.713 against 0.714 at a = 1.4 and 0.542 against 0.556 at a = 1.8).
    for a in (1.4, 1.8):
        ranks = zipf_text.zipf_ranks(2_000_000, rng=np.random.default_rng(0), a=a)
        ns = np.array([20_000, 200_000, 2_000_000])
        v = [np.unique(ranks[:n]).size for n in ns]
        assert np.polyfit(np.log(ns), np.log(v), 1)[0] == pytest.approx(1 / a, abs=0.02)


def test_every_rank_has_its_own_spelling_and_frequent_words_are_short():
    spelled = [zipf_text.spell(k) for k in range(1, 20_000)]
    assert len(set(spelled)) == len(spelled)
    assert len(zipf_text.spell(1)) == 2 and len(zipf_text.spell(19_999)) == 6


def test_corpus_reaches_the_requested_size_and_is_deterministic():
    a = zipf_text.corpus(50_000, rng=np.random.default_rng(3))
    b = zipf_text.corpus(50_000, rng=np.random.default_rng(3))
    assert a == b and 50_000 <= sum(len(d) + 1 for d in a) < 50_000 + 8 * 1000
    assert all(d.isascii() and d.endswith(".") for d in a)


def test_near_duplicates_are_planted_at_the_stated_rate_and_similarity():
    docs = zipf_text.documents(400, rng=np.random.default_rng(1), dup_fraction=0.1,
                               edit_fraction=0.02)
    flat, off = dedup.shingles(docs, k=5)
    sig = dedup.signatures(flat, off, dedup.permutations(112, rng=np.random.default_rng(0)))
    pairs = dedup.candidate_pairs(sig, n_bands=14, n_rows=8)
    j = np.array([dedup.exact_jaccard(flat, off, a, b) for a, b in pairs])
    copies = {int(b) for (a, b), x in zip(pairs, j, strict=True) if x > 0.5}
    # Copies ~ binomial(399, 0.1): 40 +- 3 sigma (sigma = 6). A copy of a copy also matches its
    # grandparent, so pairs can outnumber copies; each copy is counted once here.
    assert 40 - 18 <= len(copies) <= 40 + 18
    # 2% of words edited: J = 0.98^5 / (2 - 0.98^5) = 0.82 for a direct copy (fewer for chains).
    assert np.median(j[j > 0.5]) == pytest.approx(0.82, abs=0.06)


def test_bad_arguments_are_rejected():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="rank"):
        zipf_text.spell(0)
    with pytest.raises(ValueError, match="a must"):
        zipf_text.zipf_ranks(3, rng=rng, a=1.0)
    with pytest.raises(ValueError, match="n_bytes"):
        zipf_text.corpus(0, rng=rng)
    with pytest.raises(ValueError, match="dup_fraction"):
        zipf_text.documents(3, rng=rng, dup_fraction=1.0)
