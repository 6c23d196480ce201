import numpy as np
import pytest

from llmphys.pipeline import crawl, decontam


@pytest.fixture(scope="module")
def sweep():
    c = crawl.generate_crawl(200, rng=np.random.default_rng(9))
    texts = [d.main_text for d in c.documents]
    verbatim = np.array([d.kind == "leak" and d.defect == "verbatim" for d in c.documents])
    edited = np.array([d.kind == "leak" and d.defect == "edited" for d in c.documents])
    res = {}
    for label, truth in (("verbatim", verbatim), ("edited", edited)):
        other = ~(verbatim | edited) | truth   # score each kind of leak against clean pages only
        res[label] = decontam.sweep([t for t, o in zip(texts, other, strict=True) if o],
                                    list(c.benchmark), truth[other], [3, 8, 13, 50])
    return res


def test_verbatim_quotes_are_caught_whenever_n_fits_inside_the_item(sweep):
    # Items have 20 to 40 words: every n <= 20 must catch every verbatim quote, n = 50 none.
    assert all(sweep["verbatim"][n]["recall"] == 1.0 for n in (3, 8, 13))
    assert sweep["verbatim"][50]["recall"] == 0.0


def test_edits_defeat_long_ngrams_and_short_ngrams_flag_clean_pages(sweep):
    # With 15% of words edited, P(an n-gram survives) = 0.85^n: 0.27 at n=8, 0.12 at n=13.
    assert sweep["edited"][8]["recall"] > sweep["edited"][13]["recall"]
    assert sweep["edited"][3]["false_positive_rate"] > 0.02     # common trigrams recur by chance
    assert sweep["edited"][13]["false_positive_rate"] == 0.0


def test_chance_overlap_formula_limits():
    assert decontam.chance_overlap_rate(100, 100, 0.0) == 0.0
    assert decontam.chance_overlap_rate(100, 100, 1.0) == 1.0
    with pytest.raises(ValueError, match="p_gram"):
        decontam.chance_overlap_rate(1, 1, 2.0)


def test_leaked_items_marks_the_quoted_item():
    leaked = decontam.leaked_items(["x a b c d y"], ["a b c d", "e f g h"], n=4)
    assert leaked.tolist() == [True, False]


def test_detection_probability_matches_a_monte_carlo_of_edited_items():
    # 40,000 simulated items: binomial standard error <= 0.0025; test at 5 sigma.
    rng = np.random.default_rng(1)
    for n_words, n, e in [(30, 13, 0.15), (25, 6, 0.3)]:
        intact = rng.random((40_000, n_words)) >= e
        hit = np.zeros(40_000, dtype=bool)
        for s in range(n_words - n + 1):
            hit |= intact[:, s: s + n].all(axis=1)
        assert abs(hit.mean() - decontam.detection_probability(n_words, n, e)) < 0.0125
    with pytest.raises(ValueError, match="edit_rate"):
        decontam.detection_probability(10, 3, 1.5)
