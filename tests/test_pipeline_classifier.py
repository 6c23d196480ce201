"""The planted quality signal and the hashed n-gram logistic regression."""

import math

import numpy as np
import pytest

from llmphys.pipeline import classifier, crawl


@pytest.fixture(scope="module")
def web():
    return crawl.generate_crawl(800, rng=np.random.default_rng(2))


def test_published_filters_keep_about_a_tenth_of_the_pool():
    f = classifier.published_filters()
    # Penedo et al. 2024 sec. 4: FineWeb-Edu is 1.3T tokens of FineWeb's 15T
    assert f["fineweb_edu"].kept_share == pytest.approx(1.3 / 15, rel=1e-12)
    # the classifier's model card: binary F1 82% at threshold 3
    assert f["fineweb_edu"].binary_f1 == 0.82
    # Li et al. 2024 sec. 4.4: the top 10% by fastText score; abstract: 64% MMLU at 2.6T
    assert f["dclm"].kept_share == 0.10
    assert (f["dclm"].mmlu_7b, f["dclm"].train_tokens) == (0.64, 2.6e12)


def test_logistic_regression_with_no_features_fits_the_log_odds():
    # closed form: with only a bias, the maximum-likelihood bias is log(k / (n - k))
    n, k = 50, 15
    empty = (np.zeros(0, np.int64), np.zeros(n + 1, np.int64), np.zeros(0))
    y = np.arange(n) < k
    _, b = classifier.fit_logistic(empty, y, n_buckets=4, n_steps=2000, learning_rate=0.05)
    assert b == pytest.approx(math.log(k / (n - k)), abs=1e-3)


def test_hashed_features_are_deterministic_unit_rows():
    a = classifier.hashed_features(["the cat sat", "a dog"], ngrams=2)
    b = classifier.hashed_features(["the cat sat", "a dog"], ngrams=2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    _, off, val = a
    assert off.tolist() == [0, 5, 8]          # 3 + 2 grams, 2 + 1 grams (no collisions)
    norms = np.sqrt(np.add.reduceat(val**2, off[:-1]))
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)


def test_annotator_disagreement_matches_its_closed_form(web):
    # a clean page's label flips when the N(0, 0.1) noise crosses 1/2 - e:
    # P(flip) = integral of 6 e (1 - e) Phi(-|e - 1/2| / 0.1) de over e in [0, 1]
    pq = classifier.plant_quality(web, rng=np.random.default_rng(19))
    ok = np.array([d.kind not in ("spam", "low_quality") for d in web.documents])
    e = np.linspace(0, 1, 20001)
    phi = 0.5 * np.vectorize(math.erfc)(np.abs(e - 0.5) / 0.1 / math.sqrt(2))
    expected = np.trapezoid(6 * e * (1 - e) * phi, e)
    measured = float(np.mean(pq.annotator[ok] != pq.keep[ok]))
    sigma = math.sqrt(expected * (1 - expected) / ok.sum())
    assert abs(measured - expected) < 4 * sigma, (measured, expected)


def test_rules_keep_every_register_while_the_classifier_reads_it(web):
    r = classifier.compare_filters(web, rng=np.random.default_rng(19)).points
    p_rules, rec_rules, _ = r["rules"]
    p_clf, rec_clf, _ = r["classifier"]
    base = 0.5 * np.mean([d.kind not in ("spam", "low_quality") for d in web.documents])
    # the rules cannot see the register: their precision stays within 0.1 of the base rate
    assert rec_rules > 0.95 and abs(p_rules - base) < 0.1
    # the classifier must beat the rules' precision by a wide margin, with recall >= 0.6
    assert p_clf > p_rules + 0.15 and rec_clf >= 0.6
    # it cannot beat the labels it learnt from (pinned regression: 0.877 on this crawl)
    assert r["annotators"][0] == pytest.approx(0.877, abs=0.005) and p_clf < r["annotators"][0]


def test_bad_input_names_the_argument(web):
    with pytest.raises(ValueError, match="rate"):
        classifier.plant_quality(web, rng=np.random.default_rng(0), rate=1.5)
    with pytest.raises(ValueError, match="lang"):
        classifier.registers("xx")
    with pytest.raises(ValueError, match="labels"):
        classifier.fit_logistic(classifier.hashed_features(["a"]), np.array([True, False]))
    with pytest.raises(ValueError, match="ngrams"):
        classifier.hashed_features(["a"], ngrams=4)
