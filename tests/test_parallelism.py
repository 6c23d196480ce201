"""ZeRO, activation memory and pipeline bubbles against the papers' numbers and closed forms."""

import pytest

from llmphys import parallelism, training


def test_zero_paper_figure_1_worked_example():
    # Rajbhandari et al. 2020, fig. 1: psi = 7.5B, K = 12, N_d = 64 -> 120, 31.4, 16.6, 1.88 GB
    # (the paper rounds to three significant figures: half a unit there is up to 0.3%).
    got = [parallelism.zero_bytes_per_param(s, 64) * 7.5e9 / 1e9 for s in range(4)]
    assert got == pytest.approx([120.0, 31.4, 16.6, 1.88], rel=3e-3)


def test_zero_with_one_rank_shards_nothing():
    assert {parallelism.zero_bytes_per_param(s, 1) for s in range(4)} == {16.0}


def test_zero_uses_the_training_module_breakdown():
    fp32_grads = training.training_state_bytes_per_param(grad_dtype="fp32")
    assert parallelism.zero_bytes_per_param(0, 8, state=fp32_grads) == 18.0
    assert parallelism.zero_bytes_per_param(2, 8, state=fp32_grads) == pytest.approx(2 + 16 / 8)


def test_activation_memory_matches_korthikanti_equations():
    s, b, h, a = 2048, 1, 12288, 96
    base = s * b * h * (34 + 5 * a * s / h)  # no parallelism
    f = parallelism.activation_bytes_per_layer
    assert f(seq_len=s, micro_batch=b, d_model=h, n_heads=a) == pytest.approx(base)
    assert f(seq_len=s, micro_batch=b, d_model=h, n_heads=a, tp=8) == pytest.approx(base / 8)
    no_sp = s * b * h * (10 + 24 / 8 + 5 * a * s / (h * 8))  # TP without sequence parallelism
    assert f(seq_len=s, micro_batch=b, d_model=h, n_heads=a, tp=8,
             sequence_parallel=False) == pytest.approx(no_sp)
    assert f(seq_len=s, micro_batch=b, d_model=h, n_heads=a,
             recompute="selective") == pytest.approx(34 * s * b * h)
    assert f(seq_len=s, micro_batch=b, d_model=h, n_heads=a, recompute="full") == 2 * s * b * h


def test_pipeline_bubble_limits():
    bubble = parallelism.pipeline_bubble_fraction
    assert bubble(1, 8) == 0.0
    assert bubble(8, 1) == pytest.approx(7 / 8)  # one micro-batch: only one stage busy at a time
    assert bubble(8, 10**6) < 1e-5
    assert bubble(16, 64, n_chunks=4) < bubble(16, 64)
    assert bubble(4, 12) == pytest.approx(3 / 15)


def test_llama3_405b_model_state_fits_an_h100():
    # TP 8 x PP 16 x DP 128 on 16,384 GPUs (Dubey et al. 2024, table 4), ZeRO-1 style sharding.
    b = parallelism.model_state_bytes_per_gpu(405e9, tp=8, pp=16, dp=128, zero_stage=1)
    assert 12e9 < b < 14e9


def test_communication_volumes_vanish_without_partners():
    assert parallelism.tp_bytes_per_layer(tokens=4096, d_model=8192, tp=1) == 0.0
    assert parallelism.ep_bytes_per_layer(tokens=4096, d_model=8192, ep=1, top_k=8) == 0.0
    assert parallelism.tp_bytes_per_layer(tokens=1, d_model=1, tp=2) == pytest.approx(8.0)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="stage"):
        parallelism.zero_bytes_per_param(4, 8)
    with pytest.raises(ValueError, match="recompute"):
        parallelism.activation_bytes_per_layer(seq_len=1, micro_batch=1, d_model=1, n_heads=1,
                                               recompute="some")
    with pytest.raises(ValueError, match="n_microbatches"):
        parallelism.pipeline_bubble_fraction(4, 0)
