"""The word-list toxicity filter: its false-positive rate against the binomial closed form."""

import math

import numpy as np
import pytest

from llmphys.pipeline import crawl, toxicity, words


def test_the_word_list_ships_with_its_source_and_licence():
    wl = toxicity.word_list()
    assert wl.licence == "CC0-1.0" and "written for this book" in wl.source
    # every listed word is one the crawl can draw, so the crawl holds it at its real rate
    assert set(wl.words) <= set(words.word_table("en")[0])


def test_closed_form_is_one_minus_the_binomial_cdf():
    q, n = 0.0023, 250
    assert toxicity.false_positive_rate(n, q) == pytest.approx(1 - (1 - q) ** n, rel=1e-12)
    two = 1 - (1 - q) ** n - n * q * (1 - q) ** (n - 1)
    assert toxicity.false_positive_rate(n, q, min_hits=2) == pytest.approx(two, rel=1e-12)
    assert toxicity.false_positive_rate(0, q) == 0.0


@pytest.mark.parametrize("min_hits", [1, 2, 3])
def test_measured_false_positive_rate_matches_the_closed_form(min_hits):
    # independent cross-check: 3,000 pages of 250 words drawn as the crawl draws them
    rng = np.random.default_rng(min_hits)
    pages = [" ".join(crawl.sample_words("en", 250, rng)) for _ in range(3000)]
    q = toxicity.listed_share("en")
    expected = float(toxicity.false_positive_rate(250, q, min_hits=min_hits))
    measured = float(np.mean(toxicity.hits(pages) >= min_hits))
    sigma = math.sqrt(expected * (1 - expected) / 3000)
    assert abs(measured - expected) < 4 * sigma, (measured, expected)


def test_an_english_list_misfires_on_german_homographs_and_is_blind_elsewhere():
    # "dick" (thick) and "hell" (bright) are ordinary German words
    assert toxicity.hits(["Der Tisch ist dick und das Zimmer ist hell."])[0] == 2
    assert 0 < toxicity.listed_share("de") < toxicity.listed_share("en") / 5
    assert toxicity.listed_share("ru") == 0.0


def test_planted_pages_carry_the_planted_rate():
    rng = np.random.default_rng(0)
    pages = [" ".join(crawl.sample_words("en", 400, rng)) for _ in range(200)]
    out, toxic = toxicity.plant_toxicity(pages, rng=rng, share=0.5, rate=0.02)
    rate = toxicity.hits([t for t, x in zip(out, toxic, strict=True) if x]).mean() / 400
    q = toxicity.listed_share("en")
    # expected share: 0.02 planted + (1 - 0.02) q natural, within 10%
    assert rate == pytest.approx(0.02 + 0.98 * q, rel=0.1)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="min_hits"):
        toxicity.false_positive_rate(10, 0.1, min_hits=0)
    with pytest.raises(ValueError, match="share"):
        toxicity.false_positive_rate(10, 1.5)
    with pytest.raises(ValueError, match="lang"):
        toxicity.listed_share("xx")
    with pytest.raises(KeyError, match="word list"):
        toxicity.word_list("klingon")


def test_the_hit_threshold_flips_where_the_tail_crosses_the_rate():
    # Issue 32 item 12: at q = 0.23% the 1% threshold is 7 hits, at the crawl's 0.2345% it is 8.
    q_flip = toxicity.share_at_rate(1000, min_hits=7, rate=0.01)
    assert float(toxicity.false_positive_rate(1000, q_flip, min_hits=7)) == pytest.approx(0.01,
                                                                                          rel=1e-9)
    assert toxicity.min_hits_for_rate(1000, 0.999 * q_flip, max_rate=0.01) == 7
    assert toxicity.min_hits_for_rate(1000, 1.001 * q_flip, max_rate=0.01) == 8
    # m = 1 has the closed form 1 - (1 - q)^n = r  ->  q = 1 - (1 - r)^(1/n)
    assert toxicity.share_at_rate(300, min_hits=1, rate=0.5) == pytest.approx(1 - 0.5 ** (1 / 300),
                                                                              rel=1e-9)
    with pytest.raises(ValueError, match="max_rate"):
        toxicity.min_hits_for_rate(1000, 0.002, max_rate=0.0)
