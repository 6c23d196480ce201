import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from llmphys import inference_optimal as io
from llmphys import scaling_laws as sl
from llmphys import specs

SARDANA = sl.parametric_law("sardana2024")
EPOCH = sl.parametric_law("besiroglu2024")


def test_sardanas_worked_example_13b_with_2t_inference_tokens():
    # Sardana et al. 2024, Figure 1: instead of a Chinchilla-optimal 13B model, a 7B model
    # trained on more data reaches the same loss and saves 1.7e22 FLOP (17%) over a lifetime
    # of 2T inference tokens. Tolerances: the paper rounds to 7B, 1.7e22 and 17%.
    r = io.versus_chinchilla(SARDANA, n_params=13e9, n_inference_tokens=2e12)
    assert r["opt_n_params"] == pytest.approx(7e9, rel=0.05)
    assert r["saving_flop"] == pytest.approx(1.7e22, rel=0.03)
    assert r["saving_fraction"] == pytest.approx(0.17, abs=0.01)


def test_two_digit_exponents_do_not_reproduce_the_example():
    # The same example with Hoffmann's printed alpha = 0.34, beta = 0.28: the 13B model's
    # compute-optimal data jumps from ~580B to ~990B tokens and the saving drops to ~10%.
    r = io.versus_chinchilla(sl.parametric_law("hoffmann2022"), n_params=13e9,
                             n_inference_tokens=2e12)
    assert r["saving_fraction"] < 0.12 and r["opt_n_params"] > 7.5e9


def test_optimum_matches_a_brute_force_search_on_the_iso_loss_curve():
    loss = 2.1
    d_inf = 5e12
    total = lambda log_n: io.lifetime_flop(  # noqa: E731
        n_params=np.exp(log_n), n_inference_tokens=d_inf,
        n_train_tokens=io.tokens_for_loss(EPOCH, n_params=np.exp(log_n), target_loss=loss))
    n_min = (EPOCH.A / (loss - EPOCH.E)) ** (1 / EPOCH.alpha)
    brute = minimize_scalar(total, bounds=(np.log(n_min * 1.001), np.log(1e13)), method="bounded",
                            options={"xatol": 1e-10})
    opt = io.inference_optimal(EPOCH, target_loss=loss, n_inference_tokens=d_inf)
    assert opt["n_params"] == pytest.approx(np.exp(brute.x), rel=1e-4)
    assert sl.loss(EPOCH, n_params=opt["n_params"], n_tokens=opt["n_tokens"]) == pytest.approx(loss)


def test_without_inference_the_optimum_is_chinchillas():
    opt_c = sl.compute_optimal(EPOCH, train_flop=1e23)
    opt_i = io.inference_optimal(EPOCH, target_loss=opt_c["loss"], n_inference_tokens=0.0)
    assert opt_i["n_params"] == pytest.approx(opt_c["n_params"], rel=1e-6)


def test_break_even_demand_makes_the_model_optimal():
    # Closed form D_inf = 3D(aX/bY - 1) vs the numerical optimum at that demand.
    n, d = 8e9, 15e12
    d_inf = io.break_even_inference_tokens(EPOCH, n_params=n, n_tokens=d)
    opt = io.inference_optimal(EPOCH, target_loss=sl.loss(EPOCH, n_params=n, n_tokens=d),
                               n_inference_tokens=d_inf)
    assert opt["n_params"] == pytest.approx(n, rel=1e-6)
    share = io.training_share_at_optimum(EPOCH, n_params=n, n_tokens=d)
    assert share == pytest.approx(opt["train_flop"] / opt["total_flop"], rel=1e-9)


def test_llama3_8b_is_about_100x_overtrained_under_the_replications_law():
    # 15T tokens on 8B parameters (data/models.toml) vs ~20 tokens per parameter.
    m = specs.model("llama3_8b")
    f = io.overtraining_factor(EPOCH, n_params=m.published_n_params, n_tokens=m.n_training_tokens)
    assert 70 < f < 120


def test_undertrained_models_have_no_optimal_demand():
    with pytest.raises(ValueError, match="undertrained"):
        io.training_share_at_optimum(EPOCH, n_params=175e9, n_tokens=300e9)  # GPT-3


def test_unreachable_loss_names_the_target():
    with pytest.raises(ValueError, match="target_loss"):
        io.tokens_for_loss(EPOCH, n_params=1e6, target_loss=1.9)
    with pytest.raises(ValueError, match="n_inference_tokens"):
        io.inference_optimal(EPOCH, target_loss=2.1, n_inference_tokens=-1)


def _brute_force_n(law, *, target_loss, d_inf, c=1.0):
    """argmin over N of 6ND(N) + 2cN D_inf on the iso-loss curve, by bounded scalar search."""
    n_min = (law.A / (target_loss - law.E)) ** (1 / law.alpha)

    def log_cost(log_n):
        n = np.exp(log_n)
        return np.log(6 * n * io.tokens_for_loss(law, n_params=n, target_loss=target_loss)
                      + 2 * c * n * d_inf)

    lo = np.log(n_min) + 1e-9
    return np.exp(minimize_scalar(log_cost, bounds=(lo, lo + 25), method="bounded",
                                  options={"xatol": 1e-10}).x)


def test_break_even_demand_with_a_decode_multiplier_matches_a_priced_optimum():
    # An inference FLOP that costs c training FLOP divides the break-even demand by c. Checked
    # against the root of 6D(1 - aX/bY) + 2c D_inf = 0 and against a brute-force minimiser of
    # 6ND + 2cN D_inf (same A, B, alpha, beta; the break-even does not depend on E).
    n, d, c = 8e9, 15e12, io.inference_flop_cost(train_mfu=0.4, decode_efficiency=0.16)
    assert c == pytest.approx(2.5)
    d_inf = io.break_even_inference_tokens(EPOCH, n_params=n, n_tokens=d, inference_cost_per_flop=c)
    assert d_inf == pytest.approx(io.break_even_inference_tokens(EPOCH, n_params=n, n_tokens=d) / c)
    target = sl.loss(EPOCH, n_params=n, n_tokens=d)
    opt = io.inference_optimal(EPOCH, target_loss=target, n_inference_tokens=d_inf,
                               inference_cost_per_flop=c)
    assert opt["n_params"] == pytest.approx(n, rel=1e-9)  # the root is exact to 1e-13 in log N
    # the bounded search stops within ~1e-5 in log N of a flat minimum: 1e-4 relative
    assert _brute_force_n(EPOCH, target_loss=target, d_inf=d_inf, c=c) == pytest.approx(n, rel=1e-4)
    assert opt["cost_ratio"] == pytest.approx(c * opt["inference_flop"] / opt["train_flop"])
    with pytest.raises(ValueError, match="decode_efficiency"):
        io.inference_flop_cost(train_mfu=0.4, decode_efficiency=0.0)
    with pytest.raises(ValueError, match="inference_cost_per_flop"):
        io.inference_optimal(EPOCH, target_loss=2.1, n_inference_tokens=1e12,
                             inference_cost_per_flop=0.0)
    with pytest.raises(ValueError, match="n_inference_tokens"):
        io.inference_optimal(EPOCH, target_loss=2.1, n_inference_tokens=float("inf"))


def test_overtraining_at_the_optimum_is_a_function_of_the_cost_ratio():
    # Closed form (1 + C_inf/C_train)^(1/beta): 2^(1/0.3658) = 6.652 at equal costs, against
    # the optimum found by root-finding at that demand, at two target losses and two prices
    # of an inference FLOP.
    assert io.overtraining_at_cost_ratio(EPOCH, cost_ratio=1.0) == pytest.approx(6.652, abs=5e-4)
    for target in (2.0, 2.2):
        for c in (1.0, 3.0):
            r = io.optimum_at_cost_ratio(EPOCH, target_loss=target, cost_ratio=1.0,
                                         inference_cost_per_flop=c)
            root = io.inference_optimal(EPOCH, target_loss=target, inference_cost_per_flop=c,
                                        n_inference_tokens=r["n_inference_tokens"])
            assert root["n_params"] == pytest.approx(r["n_params"], rel=1e-9)
            assert root["cost_ratio"] == pytest.approx(1.0, rel=1e-9)
            f = io.overtraining_factor(EPOCH, n_params=r["n_params"], n_tokens=r["n_tokens"])
            assert f == pytest.approx(2 ** (1 / EPOCH.beta), rel=1e-12) == r["overtraining"]
    assert io.cost_ratio_for_overtraining(EPOCH, overtraining=100.0) == pytest.approx(
        100 ** 0.3658 - 1)
    assert io.cost_ratio_for_overtraining(EPOCH, overtraining=1.0) == 0.0
    with pytest.raises(ValueError, match="overtraining"):
        io.cost_ratio_for_overtraining(EPOCH, overtraining=0.5)


def test_equal_costs_put_the_loss_terms_in_the_ratio_2beta_to_alpha():
    # C_inf / C_train = alpha X / (beta Y) - 1 = 1  =>  X / Y = 2 beta / alpha = 2 x 0.3658 /
    # 0.3478 = 2.1035 for Besiroglu et al.'s refit. At target loss 2.0 the optimum trains
    # 129.7 tokens per parameter (pinned regression of the closed form).
    r = io.optimum_at_cost_ratio(EPOCH, target_loss=2.0, cost_ratio=1.0)
    x, y = EPOCH.A * r["n_params"] ** -EPOCH.alpha, EPOCH.B * r["n_tokens"] ** -EPOCH.beta
    assert x / y == pytest.approx(2 * EPOCH.beta / EPOCH.alpha, rel=1e-12)
    assert x + y == pytest.approx(2.0 - EPOCH.E, rel=1e-12)
    assert round(r["tokens_per_param"], 1) == 129.7
    with pytest.raises(ValueError, match="cost_ratio"):
        io.optimum_at_cost_ratio(EPOCH, target_loss=2.0, cost_ratio=-1.0)


def test_a_100x_overtrained_optimum_costs_4_39x_its_training_to_serve():
    # 100^beta - 1 = 100^0.3658 - 1 = 4.390 (Besiroglu et al.'s beta), round-tripped through
    # the optimum at that cost ratio: the old grid interpolation gave 4.25 for a different ratio.
    ratio = io.cost_ratio_for_overtraining(EPOCH, overtraining=100.0)
    assert round(ratio, 2) == 4.39
    r = io.optimum_at_cost_ratio(EPOCH, target_loss=2.0, cost_ratio=ratio)
    assert r["overtraining"] == pytest.approx(100.0, rel=1e-12)


def test_llama3_8b_overtraining_has_one_value():
    # D / D*(N) under the refit for 15T tokens on 8.03B parameters: 91.2x, not the 93.4x of
    # 15T / 8.03B / 20 (a fixed 20 tokens per parameter is not the law's D*(N)).
    m = specs.model("llama3_8b")
    f = io.overtraining_factor(EPOCH, n_params=m.published_n_params, n_tokens=m.n_training_tokens)
    assert round(f, 1) == 91.2
