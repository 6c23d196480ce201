"""Chapter 6's compute split: the lifetime optimum under the default law (inference_optimal's)."""

import numpy as np
import pytest

from llmphys import compute_split as cs
from llmphys import inference_optimal, scaling_laws

REFIT = scaling_laws.parametric_law("besiroglu2024")  # the law compute_split optimises


def test_besiroglu_fit_is_compute_optimal_near_twenty_tokens_per_parameter():
    # Besiroglu et al. 2024 (arXiv:2404.10102): their refit agrees with Hoffmann et al.'s
    # ~20 tokens/parameter. The ratio drifts slowly with scale, hence the band.
    for loss in (2.2, 2.0, 1.9):
        r = cs.lifetime_optimum(target_loss=loss, inference_tokens=0.0)
        assert 15 < r["tokens_per_param"] < 26
        assert r["overtraining"] == pytest.approx(1.0, rel=1e-9)  # D / D*(N) at zero demand


def test_hoffmann_fit_puts_its_own_optimum_far_above_twenty():
    # The published eq. 10 constants give ~80-120 tokens/param: the inconsistency
    # Besiroglu et al. report, and the reason the book uses their refit.
    r = cs.lifetime_optimum(target_loss=2.0, inference_tokens=0.0,
                            fit=scaling_laws.parametric_law("hoffmann2022"))
    assert r["tokens_per_param"] > 60


@pytest.mark.parametrize("d_inf", [1e12, 1e13, 1e14, 1e15])
def test_optimum_satisfies_the_first_order_condition(d_inf):
    # C_inf / C_pre = alpha X / (beta Y) - 1 at the optimum; the root is exact to ~1e-13.
    r = cs.lifetime_optimum(target_loss=2.0, inference_tokens=d_inf)
    x = REFIT.A * r["n_params"] ** -REFIT.alpha
    y = REFIT.B * r["n_tokens"] ** -REFIT.beta
    assert r["cost_ratio"] == pytest.approx(REFIT.alpha * x / (REFIT.beta * y) - 1, rel=1e-9)
    assert cs.loss(r["n_params"], r["n_tokens"]) == pytest.approx(2.0, rel=1e-12)
    assert r["overtraining"] == pytest.approx(
        inference_optimal.overtraining_at_cost_ratio(REFIT, cost_ratio=r["cost_ratio"]), rel=1e-9)


def test_compute_split_calls_the_one_lifetime_optimum():
    # One implementation: chapter 6's names over inference_optimal's numbers, same law.
    r = cs.lifetime_optimum(target_loss=2.0, inference_tokens=1e14, inference_cost_per_flop=2.5)
    o = inference_optimal.inference_optimal(REFIT, target_loss=2.0, n_inference_tokens=1e14,
                                            inference_cost_per_flop=2.5)
    assert (r["n_params"], r["n_tokens"], r["pretrain_flop"], r["cost_ratio"]) == (
        o["n_params"], o["n_tokens"], o["train_flop"], o["cost_ratio"])


def test_overtraining_grows_with_the_tokens_served():
    o = [cs.lifetime_optimum(target_loss=2.0, inference_tokens=d)["overtraining"]
         for d in np.logspace(11, 16, 6)]
    assert np.all(np.diff(o) > 0)


def test_equal_pretraining_and_inference_costs_mean_single_digit_overtraining():
    # The series pairs "a third each" with "100x overtrained"; under the Chinchilla law the
    # first implies D / D*(N) = 2^(1/beta) = 6.65x at every target loss, and 100x needs
    # inference to cost 100^beta - 1 = 4.39x pretraining.
    for loss in (2.2, 2.0, 1.9):
        eq = cs.optimum_at_cost_ratio(target_loss=loss, cost_ratio=1.0)
        assert eq["cost_ratio"] == pytest.approx(1.0, rel=1e-12)
        assert eq["overtraining"] == pytest.approx(2 ** (1 / 0.3658), rel=1e-12)
        assert round(eq["overtraining"], 2) == 6.65


def test_cost_minimising_shares_match_a_brute_force_search():
    e = np.array([0.5, 0.3, 0.2])
    grid = np.linspace(0.01, 0.98, 98)
    best = max(((a, b) for a in grid for b in grid if a + b < 0.995),
                key=lambda s: (e[0] * np.log(s[0]) + e[1] * np.log(s[1])
                               + e[2] * np.log(1 - s[0] - s[1])))
    np.testing.assert_allclose(best, cs.cost_minimising_shares(e)[:2], atol=0.011)  # grid step 0.01


def test_rl_tokens_at_equal_efficiency_are_three_quarters_of_pretraining():
    # (6/u) / (2/u + 6/u) = 3/4 exactly when generation is as efficient as training.
    assert cs.rl_tokens_for_equal_cost(pretrain_tokens=1e12, train_mfu=0.4,
                                       decode_efficiency=0.4) == pytest.approx(0.75e12)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="target_loss"):
        cs.lifetime_optimum(target_loss=1.5, inference_tokens=1e12)
    with pytest.raises(ValueError, match="inference_tokens"):
        cs.lifetime_optimum(target_loss=2.0, inference_tokens=-1.0)
    with pytest.raises(ValueError, match="elasticities"):
        cs.cost_minimising_shares([1.0, -1.0])
    with pytest.raises(ValueError, match="decode_efficiency"):
        cs.rl_tokens_for_equal_cost(pretrain_tokens=1e12, train_mfu=0.4, decode_efficiency=0.0)


def test_equal_costs_put_the_loss_terms_in_the_ratio_2beta_to_alpha():
    # C_inf / C_pre = alpha X / (beta Y) - 1 = 1  =>  X / Y = 2 beta / alpha = 2 x 0.3658 / 0.3478
    # = 2.1035 for Besiroglu et al.'s refit (not beta : 2 alpha = 0.53); the optimum at equal
    # costs, closed form, agrees to rounding.
    r = cs.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)
    x = REFIT.A * r["n_params"] ** -REFIT.alpha
    y = REFIT.B * r["n_tokens"] ** -REFIT.beta
    assert 2 * REFIT.beta / REFIT.alpha == pytest.approx(2.1035, abs=5e-5)
    assert x / y == pytest.approx(2 * REFIT.beta / REFIT.alpha, rel=1e-12)


def test_at_the_lifetime_optimum_one_more_training_flop_saves_one_inference_flop():
    # The first-order condition: the finite step's ratio misses 1 by a term linear in the step
    # (about 5.6 x step at loss 2.0, 1e15 tokens), so a tenfold smaller step is ten times closer.
    gaps = [abs(cs.marginal_saving_at_optimum(target_loss=2.0, inference_tokens=1e15, step=s) - 1)
            for s in (1e-3, 1e-4, 1e-5)]
    assert gaps[0] < 1e-2 and gaps[1] < 1e-3 and gaps[2] < 1e-4
    assert gaps[0] / gaps[1] == pytest.approx(10, rel=0.01)
    assert gaps[1] / gaps[2] == pytest.approx(10, rel=0.01)
    with pytest.raises(ValueError, match="step"):
        cs.marginal_saving_at_optimum(target_loss=2.0, inference_tokens=1e15, step=1.0)


def test_at_the_optimum_a_training_flop_saves_one_over_the_inference_price():
    # Pricing a served FLOP at c training FLOP moves the optimum until c x saved = extra, so the
    # saving in inference FLOP is 1/c: five at c = 0.2 (to the step's first-order error).
    r = cs.marginal_saving_at_optimum(target_loss=2.0, inference_tokens=1e15,
                                      inference_cost_per_flop=0.2)
    assert r == pytest.approx(5.0, rel=1e-3)
