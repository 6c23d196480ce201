"""What a chip holds for a layout: the architecture's activations, sharded optimizer, FP8 copies.

Tolerances: closed forms to float rounding (1e-9 relative).
"""

import pytest

from llmphys import accounting, parallelism, predict, specs
from llmphys.predict import validation

KW = dict(tp=8, pp=16, cp=1, dp=128, ep=1, seq_len=8192, micro_batch_size=1, recompute="none",
          zero_stage=1, dtype="bf16", fsdp_weight_gathers=2, sequence_parallel=True,
          flash_attention=True, activation_microbatches=16.0, weight_copies=1.0,
          allocator_overhead=0.0)
M = specs.model("llama31_405b")


def test_activations_use_the_architecture_not_gpt3():
    # Llama's GQA, SwiGLU and no dropout, not GPT-3's 34 s b h + 5 a s^2 b
    parts = predict.memory_parts(M, **KW)
    per_layer = parallelism.activation_bytes_per_layer(
        seq_len=8192, micro_batch=1, d_model=M.d_model, n_heads=M.n_heads, tp=8,
        recompute="selective", n_kv_heads=M.n_kv_heads, d_ff=M.d_ff, gated_mlp=True,
        dropout=False)
    assert parts["activations"] == pytest.approx(per_layer * M.n_layers / 16 * 16, rel=1e-9)
    gpt = parallelism.activation_bytes_per_layer(seq_len=8192, micro_batch=1, d_model=M.d_model,
                                                 n_heads=M.n_heads, tp=8, recompute="selective")
    assert per_layer != gpt


def test_the_distributed_optimizer_shards_over_dp_times_cp():
    n_local = accounting.n_params(M) / (8 * 16)
    a = predict.memory_parts(M, **KW)
    b = predict.memory_parts(M, **(KW | dict(dp=64, cp=2)))
    assert a["optimizer"] == pytest.approx(12 * n_local / 128, rel=1e-9) == b["optimizer"]
    assert a["gradients"] == pytest.approx(4 * n_local, rel=1e-9)  # FP32 main grads, unsharded


def test_fp8_keeps_a_weight_copy_and_overhead_is_a_named_fraction():
    n_local = accounting.n_params(M) / (8 * 16)
    f = predict.memory_parts(M, **(KW | dict(dtype="fp8", allocator_overhead=0.05)))
    assert f["fp8 weights"] == pytest.approx(2 * n_local, rel=1e-9)
    rest = sum(v for k, v in f.items() if k != "overhead")
    assert f["overhead"] == pytest.approx(0.05 * rest, rel=1e-9)


def test_the_experts_state_shards_over_the_expert_data_parallel_group():
    # Qwen3-235B as row 5 lays it out (TP 4, PP 8, DP 8, EP 8, expert TP 1): Megatron-LM at
    # 1e057005 builds the experts' optimizer over the expert data-parallel group (optimizer/
    # __init__.py 568-602), world / (ETP x EP x PP) = 256 / 64 = 4 ranks = TP x DP x CP / EP,
    # the table's EDP 4; the dense parameters' state shards over DP x CP = 8.
    qwen = validation.run_context(
        "mcore_qwen3_235b_row5", efficiencies=predict.default_efficiencies()).mdl
    kw = KW | dict(tp=4, pp=8, dp=8, ep=8)
    expert = 3 * 4096 * 1536 * 128 * 94 / 8  # one stage's experts, all 128 of each layer
    n = accounting.n_params(qwen)
    dense = n / (4 * 8) - expert / 4
    parts = predict.memory_parts(qwen, **kw)
    assert parts["optimizer"] == pytest.approx(12 * (dense / 8 + expert / 8 / 4), rel=1e-9)
    assert parts["optimizer"] / 1e9 == pytest.approx(11.02, abs=0.005)
    # ZeRO-3 gradients follow the same two groups; ep 1 keeps the experts TP-split over DP x CP.
    z3 = predict.memory_parts(qwen, **(kw | dict(zero_stage=3)))
    assert z3["gradients"] == pytest.approx(4 * (dense / 8 + expert / 8 / 4), rel=1e-9)
    one = predict.memory_parts(qwen, **(kw | dict(ep=1)))
    assert one["optimizer"] == pytest.approx(12 * n / (4 * 8) / 8, rel=1e-9)
    with pytest.raises(ValueError, match=r"ep=8 x state_replicas=1 must divide tp x dp x cp"):
        predict.memory_parts(qwen, **(kw | dict(tp=1, dp=4)))
