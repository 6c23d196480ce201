"""Best-of-n sampling against its closed forms: coverage, verifier precision, majority limit."""

import math

import numpy as np
import pytest

from llmphys import best_of_n

W = 1 / np.arange(1, 11)  # ten wrong answers, Zipf weights


def _sim(acc, n_max=256, n_problems=4000, seed=0):
    return best_of_n.simulate(n_problems=n_problems, n_max=n_max, difficulty_a=0.3,
                              difficulty_b=3.0, wrong_weights=W, verifier_accuracy=acc,
                              rng=np.random.default_rng(seed))


def test_simulated_coverage_matches_the_beta_closed_form_within_binomial_error():
    # per n the covered share is a binomial over 4,000 problems (p itself drawn): 4 s.e.
    r = _sim(0.9)
    want = best_of_n.coverage_beta(0.3, 3.0, r["n_samples"])
    se = np.sqrt(want * (1 - want) / 4000)
    assert np.all(np.abs(r["coverage"] - want) < 4 * se)


def test_one_sample_is_the_same_for_every_selection_rule():
    r = _sim(0.9)
    assert r["coverage"][0] == r["majority"][0] == r["verifier"][0]


def test_verifier_selection_plateaus_at_its_precision_not_at_coverage():
    # at n = 256 a 0.99 verifier has accepted a sample on all but a negligible share of problems,
    # so the selected accuracy is the mean precision over the drawn p (4 s.e. of a binomial)
    r = _sim(0.99)
    want = float(np.mean(best_of_n.verifier_precision(r["p"], true_accept=0.99,
                                                       false_accept=0.01)))
    assert abs(r["verifier"][-1] - want) < 4 * math.sqrt(want * (1 - want) / 4000)
    assert r["verifier"][-1] < r["coverage"][-1] - 0.1


def test_majority_vote_converges_to_its_limit():
    # with n = 2048 only problems within a few percent of the threshold p = (1-p) w1/sum(w) are
    # undecided; allow 4 binomial s.e. plus 0.01 for them
    r = _sim(0.9, n_max=2048, n_problems=1000, seed=3)
    want = best_of_n.majority_limit(r["p"], W)
    assert abs(r["majority"][-1] - want) < 4 * math.sqrt(want * (1 - want) / 1000) + 0.01


def test_coverage_closed_forms_agree_and_anchor():
    assert float(best_of_n.coverage(0.5, 3)) == 0.875
    # Beta(1, 1): E[1 - (1-p)^n] = n / (n + 1)
    n = np.array([1, 2, 9])
    assert best_of_n.coverage_beta(1.0, 1.0, n) == pytest.approx(n / (n + 1), rel=1e-12)


def test_best_of_n_costs_what_one_sample_of_an_n_times_larger_model_costs():
    a = best_of_n.sampling_flop(n_params=8e9, n_tokens_per_sample=500, n_samples=64)
    b = best_of_n.sampling_flop(n_params=64 * 8e9, n_tokens_per_sample=500, n_samples=1)
    assert a == b == 2 * 8e9 * 500 * 64
    # break-even: training 6 N D equals Q problems of 2 N T n
    q = best_of_n.break_even_problems(n_train_tokens=2e12, n_tokens_per_sample=500, n_samples=64)
    assert q * a == pytest.approx(6 * 8e9 * 2e12, rel=1e-12)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_samples"):
        best_of_n.coverage(0.5, 0)
    with pytest.raises(ValueError, match="n_max"):
        _sim(0.9, n_max=100)
    with pytest.raises(ValueError, match="false_accept"):
        best_of_n.verifier_precision(0.5, true_accept=0.9, false_accept=1.5)
