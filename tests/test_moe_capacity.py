"""Routing under a capacity limit: closed forms, limits and the simulated router."""

import math

import numpy as np
import pytest

from llmphys import moe_capacity as mc


def test_capacity_is_ceil_f_k_t_over_e():
    # Switch eq. 3 with top-k (GShard): 1.25 * 2 * 4096 / 64 = 160 exactly; 1.0 * 1 * 100 / 3 -> 34
    assert mc.expert_capacity(n_tokens=4096, n_experts=64, top_k=2, capacity_factor=1.25) == 160
    assert mc.expert_capacity(n_tokens=100, n_experts=3, top_k=1, capacity_factor=1.0) == 34


def test_everything_to_one_expert_drops_all_but_its_capacity():
    idx = np.zeros(1000, dtype=int)
    c = mc.expert_capacity(n_tokens=1000, n_experts=8, top_k=1, capacity_factor=2.0)
    assert mc.dropped_fraction(idx, n_experts=8, capacity=c) == 1 - c / 1000  # 1 - f / E


def test_perfect_balance_drops_nothing_at_factor_one():
    idx = np.arange(64 * 32) % 64
    assert mc.dropped_fraction(idx, n_experts=64, capacity=32) == 0.0
    assert mc.dropped_fraction(idx, n_experts=64, capacity=31) == pytest.approx(1 / 32)


def test_first_choices_are_served_before_second_choices():
    # two tokens both want expert 0 first; token 1's second choice (0) must lose to token 0's first
    idx = np.array([[0, 1], [1, 0]])
    assert mc.dropped_fraction(idx, n_experts=2, capacity=1) == 0.5
    idx = np.array([[0, 1], [0, 1]])  # both rank-1 assignments to 0: the second token's drops
    assert mc.dropped_fraction(idx, n_experts=2, capacity=1) == 0.5


def test_unskewed_top1_router_matches_the_binomial_closed_form():
    # skew 0: argmax of iid noise is a uniform pick. 20 batches of 2,048 tokens over 32 experts
    # at f = 1: the mean of 20 batch shares is within 10% of E * E[(L - C)+] / T.
    cap = mc.expert_capacity(n_tokens=2048, n_experts=32, top_k=1, capacity_factor=1.0)
    rng = np.random.default_rng(3)
    sim = np.mean([mc.drop_curve(mc.skewed_logits(rng, n_tokens=2048, n_experts=32, skew=0.0),
                                 top_k=1, capacity_factors=np.array([1.0]))[0] for _ in range(20)])
    closed = mc.expected_dropped_fraction_uniform(n_tokens=2048, n_experts=32, capacity=cap)
    assert sim == pytest.approx(closed, rel=0.10)


def test_drops_fall_with_the_capacity_factor_and_rise_with_the_skew():
    f = np.array([0.5, 1.0, 1.5, 2.0])
    curves = [mc.drop_curve(mc.skewed_logits(np.random.default_rng(1), n_tokens=1024,
                                             n_experts=16, skew=s), top_k=2, capacity_factors=f)
              for s in (0.0, 0.5)]
    for c in curves:
        assert np.all(np.diff(c) <= 0) and c[0] >= 0.5 - 1e-12  # f = 0.5 keeps at most half
    assert np.all(curves[1] >= curves[0])


def test_expert_choice_fills_every_expert_and_averages_k():
    s = np.random.default_rng(0).random((512, 16))
    out = mc.expert_choice_coverage(s, capacity=64)
    assert out["mean_experts"] == 16 * 64 / 512 and 0 <= out["unrouted"] < 1


def test_fine_grained_combinations_are_deepseekmoes_example():
    # DeepSeekMoE sec. 3.1: C(16, 2) = 120, split by 4: C(64, 8) = 4,426,165,368
    assert mc.routing_combinations(n_experts=16, top_k=2) == 120
    assert mc.routing_combinations(n_experts=16, top_k=2, split=4) == 4_426_165_368


def test_z_loss_of_zero_logits_is_log_e_squared_and_grows_with_scale():
    assert mc.z_loss(np.zeros((3, 64))) == pytest.approx(math.log(64) ** 2, rel=1e-14)
    x = np.random.default_rng(0).standard_normal((100, 64))
    assert mc.z_loss(10 * x) > mc.z_loss(x)
    assert mc.z_loss(x + 1000.0) == pytest.approx(np.mean((1000.0 + np.log(np.exp(x).sum(1))) ** 2))


@pytest.mark.parametrize("call, match", [
    (lambda: mc.expert_capacity(n_tokens=0, n_experts=8, top_k=1, capacity_factor=1.0), "n_tokens"),
    (lambda: mc.expert_capacity(n_tokens=8, n_experts=8, top_k=9, capacity_factor=1.0), "top_k"),
    (lambda: mc.expert_capacity(n_tokens=8, n_experts=8, top_k=1, capacity_factor=0.0),
     "capacity_factor"),
    (lambda: mc.dropped_fraction(np.array([0, 5]), n_experts=4, capacity=1), "expert_index"),
    (lambda: mc.dropped_fraction(np.array([0, 1]), n_experts=4, capacity=-1), "capacity"),
    (lambda: mc.skewed_logits(np.random.default_rng(0), n_tokens=2, n_experts=2, skew=-1), "skew"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
