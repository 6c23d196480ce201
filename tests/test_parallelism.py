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


def _saved_tensor_bytes(*, s, b, h, a, kv, f, gated, dropout):
    """An independent count: each tensor a layer saves for backward, by name and shape.

    Korthikanti et al. 2022, sec. 4.1, list these for GPT; a Llama layer (RMSNorm, GQA,
    SwiGLU, no dropout) keeps the same tensors without the masks, with K and V kv/a as wide
    and the gate and up projections both saved.
    """
    d_head = h // a
    tensors = {  # name: (number of values, bytes per value)
        "attn_norm_in": (s * b * h, 2), "qkv_in": (s * b * h, 2),
        "q": (s * b * h, 2), "k": (s * b * kv * d_head, 2), "v": (s * b * kv * d_head, 2),
        "softmax_out": (b * a * s * s, 2), "o_proj_in": (s * b * h, 2),
        "mlp_norm_in": (s * b * h, 2), "mlp_in": (s * b * h, 2),
        "act_in": (s * b * f, 2), "down_in": (s * b * f, 2),
    }
    if gated:
        tensors["up_out"] = (s * b * f, 2)
    if dropout:
        tensors.update({"attn_drop_mask": (b * a * s * s, 1), "attn_drop_out": (b * a * s * s, 2),
                        "o_drop_mask": (s * b * h, 1), "mlp_drop_mask": (s * b * h, 1)})
    return sum(n * nbytes for n, nbytes in tensors.values())


@pytest.mark.parametrize("kv, f, gated, dropout", [(96, 4 * 12288, False, True),
                                                    (8, 53248, True, False),
                                                    (32, 20000, True, True)])
def test_activation_memory_matches_a_tensor_by_tensor_count(kv, f, gated, dropout):
    s, b, h, a = 2048, 2, 12288, 96
    got = parallelism.activation_bytes_per_layer(seq_len=s, micro_batch=b, d_model=h, n_heads=a,
                                                 n_kv_heads=kv, d_ff=f, gated_mlp=gated,
                                                 dropout=dropout)
    assert got == _saved_tensor_bytes(s=s, b=b, h=h, a=a, kv=kv, f=f, gated=gated, dropout=dropout)


def test_llama3_405b_activations_are_under_half_the_gpt_formula():
    # Chapter 4's layout: s = 8192, b = 1, TP 8 with SP, 126 layers in flight on stage one.
    # Closed form for a Llama layer: s b (12 h + 4 h_kv + 6 f + 2 a s) / t
    # = 8192 (196,608 + 4,096 + 319,488 + 2,097,152) / 8 = 2.680 GB, x 126 = 337.7 GB,
    # against 748 GB from the GPT formula s b h (34 + 5 a s / h) / t.
    s, h, a, kv, f, t = 8192, 16384, 128, 8, 53248, 8
    llama = parallelism.activation_bytes_per_layer(seq_len=s, micro_batch=1, d_model=h, n_heads=a,
                                                   tp=t, n_kv_heads=kv, d_ff=f, gated_mlp=True,
                                                   dropout=False)
    assert llama == pytest.approx(s * (12 * h + 4 * 1024 + 6 * f + 2 * a * s) / t, rel=1e-12)
    assert 126 * llama / 1e9 == pytest.approx(337.7, abs=0.05)
    gpt = parallelism.activation_bytes_per_layer(seq_len=s, micro_batch=1, d_model=h, n_heads=a,
                                                 tp=t)
    assert 126 * gpt / 1e9 == pytest.approx(748.3, abs=0.05)
    selective = parallelism.activation_bytes_per_layer(
        seq_len=s, micro_batch=1, d_model=h, n_heads=a, tp=t, n_kv_heads=kv, d_ff=f,
        gated_mlp=True, dropout=False, recompute="selective")
    assert selective == pytest.approx(s * (12 * h + 4 * 1024 + 6 * f) / t, rel=1e-12)


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
    with pytest.raises(ValueError, match="n_kv_heads"):
        parallelism.activation_bytes_per_layer(seq_len=1, micro_batch=1, d_model=64, n_heads=8,
                                               n_kv_heads=3)
    with pytest.raises(ValueError, match="d_ff"):
        parallelism.activation_bytes_per_layer(seq_len=1, micro_batch=1, d_model=64, n_heads=8,
                                               d_ff=0)
    with pytest.raises(ValueError, match="n_microbatches"):
        parallelism.pipeline_bubble_fraction(4, 0)
