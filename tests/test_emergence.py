import numpy as np
import pytest

from llmphys import emergence as em

N = np.logspace(6, 18, 3001)


def test_exact_match_is_sharp_where_token_errors_are_smooth():
    # Width of the 10%-90% rise, in decades of N: exact match on a 20-token answer rises
    # over a narrower range than per-token accuracy, which spans the whole axis.
    p = em.token_accuracy(em.per_token_loss(N))
    def decades(y):
        lo, hi = N[np.argmax(y >= 0.1)], N[np.argmax(y >= 0.9)]
        return np.log10(hi / lo)
    assert decades(em.exact_match(p, answer_tokens=20)) < 0.6 * decades(p)


def test_threshold_moves_with_answer_length():
    t5, t20 = (em.threshold_n_params(answer_tokens=k) for k in (5, 20))
    # N* = n_c (L / ln 2)^(1/alpha): four times the tokens, 4^(1/0.3) = 101x the parameters.
    assert t20 / t5 == pytest.approx(4 ** (1 / em.ILLUSTRATIVE_ALPHA))
    p = em.token_accuracy(em.per_token_loss(t20))
    assert em.exact_match(p, answer_tokens=20) == pytest.approx(0.5)


def test_edit_distance_is_linear_in_per_token_error():
    assert em.token_edit_distance(0.9, answer_tokens=10) == pytest.approx(1.0)


def test_a_small_test_set_reports_zero_below_its_resolution(rng):
    # 100 items: a true accuracy of 0.1% reads 0 in most draws (P = 0.999^100 = 0.905).
    zeros = np.mean(em.measured_accuracy(np.full(2000, 1e-3), n_items=100, rng=rng) == 0)
    assert zeros == pytest.approx(0.999**100, abs=0.03)


def test_bad_answer_length_is_rejected():
    with pytest.raises(ValueError, match="answer_tokens"):
        em.exact_match(0.5, answer_tokens=0)
    with pytest.raises(ValueError, match="n_items"):
        em.measured_accuracy(0.5, n_items=2.5, rng=np.random.default_rng(0))
