"""Busiest-rank load and grouped-GEMM tile padding under uniform top-k routing."""

import math

import numpy as np
import pytest

from llmphys.predict import expert_load


def test_expected_max_of_two_normals_is_near_one_over_root_pi():
    # E[max of 2 standard normals] = 1/sqrt(pi) exactly; Blom's approximation is within 5% there
    assert expert_load.expected_max_standard_normal(2) == pytest.approx(
        1 / math.sqrt(math.pi), rel=0.05
    )
    assert expert_load.expected_max_standard_normal(1) == 0.0


def test_max_rank_load_factor_matches_a_simulation_of_uniform_top_k_routing():
    # 8,192 tokens, top-8 of 128 experts, 8 ranks of 16 experts: simulate 400 micro-batches;
    # the busiest rank's mean excess over the mean load agrees within 15% (sampling error of the
    # simulated excess, about 1.4%, and Blom's approximation with the ranks' anti-correlation)
    rng = np.random.default_rng(0)
    excess = []
    for _ in range(400):
        experts = np.argsort(rng.random((8192, 128)), axis=1)[:, :8]
        per_rank = np.bincount((experts // 16).ravel(), minlength=8)
        excess.append(per_rank.max() / per_rank.mean() - 1.0)
    got = expert_load.max_rank_load_factor(8192, 8, 128, 8) - 1.0
    assert got == pytest.approx(float(np.mean(excess)), rel=0.15)


def test_one_rank_has_no_imbalance_and_more_tokens_shrink_it_as_one_over_root_t():
    assert expert_load.max_rank_load_factor(4096, 8, 128, 1) == 1.0
    a = expert_load.max_rank_load_factor(4096, 8, 128, 8) - 1.0
    b = expert_load.max_rank_load_factor(4 * 4096, 8, 128, 8) - 1.0
    assert b == pytest.approx(a / 2, rel=1e-12)  # sigma / mu falls as 1 / sqrt(T)


def test_padded_rows_is_half_a_tile_when_counts_spread_and_none_below_a_tile():
    # counts spread over many tiles: E[ceil(X/128)] * 128 = mean + 64 to within 0.1%
    assert expert_load.padded_rows_factor(5000, 500, 128) == pytest.approx(5064 / 5000, rel=1e-3)
    assert expert_load.padded_rows_factor(100, 10, 128) == 1.0  # gemm_efficiency's tile charges it
    assert expert_load.padded_rows_factor(1000, 0, 128) == 1024 / 1000  # fixed count: exact ceil


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="n_tokens"):
        expert_load.max_rank_load_factor(0, 8, 128, 8)
    with pytest.raises(ValueError, match="n_ranks dividing n_experts"):
        expert_load.max_rank_load_factor(10, 8, 128, 3)
    with pytest.raises(ValueError, match="rows"):
        expert_load.padded_rows_factor(-1, 1, 128)
    with pytest.raises(ValueError, match="n must be"):
        expert_load.expected_max_standard_normal(0)
