import numpy as np
import pytest

from llmphys import emergence as em

N = np.logspace(6, 18, 3001)


def test_exact_match_is_the_per_token_curve_shifted_in_log_n():
    # p(N)^L = exp(-L (N/c)^-a) = p(N / L^(1/a)): on a log-N axis exact match on L tokens is
    # the one-token curve moved right by log10(L)/a decades, not a steeper curve.
    L = 20
    shift = L ** (1 / em.ILLUSTRATIVE_ALPHA)
    p = em.token_accuracy(em.per_token_loss(N))
    p_shifted = em.token_accuracy(em.per_token_loss(N / shift))
    assert np.allclose(em.exact_match(p, answer_tokens=L), p_shifted, rtol=1e-9, atol=1e-300)


def test_token_errors_fall_as_a_power_law_where_exact_match_reads_zero():
    # Where 20-token exact match is below 1e-3, the per-token error still falls with slope
    # close to -alpha on log-log axes (1 - exp(-x) ~ x for small x; here x is not yet small,
    # so allow 0.1): steady progress that the all-or-nothing metric cannot see.
    p = em.token_accuracy(em.per_token_loss(N))
    dark = em.exact_match(p, answer_tokens=20) < 1e-3
    err = em.token_edit_distance(p[dark], answer_tokens=1)
    assert err[0] / err[-1] > 1.5
    late = N > 1e14
    slope = np.polyfit(np.log(N[late]), np.log(1 - p[late]), 1)[0]
    assert slope == pytest.approx(-em.ILLUSTRATIVE_ALPHA, abs=0.01)


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
