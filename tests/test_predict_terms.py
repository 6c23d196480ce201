"""The step model's mechanisms added for issue 27: torchtitan's op-level checkpointing, DeepEP's
node-deduplicated dispatch, and chips as published runs ran them."""

import dataclasses
import math

import pytest

from llmphys import accounting, predict, specs
from llmphys.predict import terms, validation

L3_8B = dict(n_chips=8, seq_len=8192, global_batch_tokens=16 * 8192, micro_batch_size=2,
             zero_stage=3, recompute="selective", check_memory=False)


def test_op_level_checkpointing_reruns_wk_wo_and_w3_of_every_block():
    # torchtitan's policy saves every mm output "except every second mm": in a Llama block the
    # mms run wq, wk, wv, wo, w1, w3, w2, so wk, wo, w3 run again. HFU - MFU is exactly their
    # forward FLOP over the model FLOP (closed form from the shapes; 1e-9 is float rounding).
    m = specs.model("llama3_8b")
    s = predict.train_step("llama3_8b", "h100_sxm", **L3_8B, selective_policy="op")
    again = 2 * m.n_layers * m.d_model * (m.n_kv_heads * m.d_head + m.n_heads * m.d_head
                                          + m.d_ff)
    model_flop = 6 * accounting.n_active_params(m) + 6 * m.n_layers * m.n_heads * m.d_head * 8192
    assert s.hfu / s.mfu - 1 == pytest.approx(again / model_flop, rel=1e-9)
    base = predict.train_step("llama3_8b", "h100_sxm", **L3_8B)
    assert base.hfu == pytest.approx(base.mfu, rel=1e-12)  # Megatron's selective: flash, free
    assert s.step_time_s > base.step_time_s


def test_layer_checkpointing_every_second_block_costs_half_a_full_recompute():
    # torchtitan's "int" option at its default 2 checkpoints every other block: half the extra
    # forward of full recomputation, in HFU (exact: both charge a recomputed forward as 1/3).
    sel = predict.train_step("llama3_8b", "h100_sxm", **L3_8B, selective_policy="layer")
    full = predict.train_step("llama3_8b", "h100_sxm", **{**L3_8B, "recompute": "full"})
    assert sel.hfu / sel.mfu - 1 == pytest.approx((full.hfu / full.mfu - 1) / 2, rel=1e-12)


def test_remote_nodes_per_token_closed_form_and_limits():
    # 8 experts over 2 nodes, top-2: the other node is reached unless both experts are local,
    # 1 - C(4,2)/C(8,2) = 1 - 6/28 (exact).
    assert terms.remote_nodes_per_token(8, 2, 2) == pytest.approx(1 - 6 / 28, rel=1e-12)
    assert terms.remote_nodes_per_token(128, 8, 1) == 0.0
    # top-k large enough to reach every node almost surely: n - 1 remote nodes
    assert terms.remote_nodes_per_token(128, 64, 4) == pytest.approx(3.0, abs=1e-6)
    with pytest.raises(ValueError, match="top_k"):
        terms.remote_nodes_per_token(8, 9, 2)


def test_deepep_cuts_cross_node_expert_traffic_but_not_inside_a_node():
    run = predict.training_runs()["mcore_qwen3_235b_row1"]  # EP 32 over 4 nodes, DeepEP
    assert run.moe_dispatcher == "deepep" and run.ep == 32
    kw = dict(n_chips=run.n_chips, tp=run.tp, pp=run.pp, ep=run.ep, seq_len=run.seq_len,
              global_batch_tokens=run.global_batch_tokens, interleave=run.interleave,
              recompute=run.recompute, check_memory=False)
    a2a = predict.train_step(run.model, "h100_sxm", **kw, moe_dispatcher="alltoall")
    dee = predict.train_step(run.model, "h100_sxm", **kw, moe_dispatcher="deepep")
    # NCCL sends every remote copy over the network, 8 x 31/32 per token; DeepEP one per
    # remote node reached, 2.72 for 8 of 128 experts over 4 nodes. Less the per-hop latency
    # both pay, the term falls by that ratio (exact up to float rounding).
    m, layers = 2048 // (run.dp * run.micro_batch_size), specs.model_spec(run.model).n_layers
    lat = m * layers / run.pp * 4 * (run.ep - 1) * predict.LINK_LATENCY_S
    ratio = (a2a.parts["ep_all_to_all"] - lat) / (dee.parts["ep_all_to_all"] - lat)
    assert ratio == pytest.approx(8 * 31 / 32 / terms.remote_nodes_per_token(128, 8, 4),
                                  rel=1e-9)
    kw8 = {**kw, "ep": 8}
    assert (predict.train_step(run.model, "h100_sxm", **kw8, moe_dispatcher="deepep").parts
            == predict.train_step(run.model, "h100_sxm", **kw8).parts)


def test_torchtitan_h100s_are_the_500_w_hbm2e_parts_its_page_describes():
    acc = predict.accelerator_spec("h100_sxm_hbm2e_500w")
    sxm = specs.accelerator("h100_sxm")
    nvl_dense_bf16 = 1671e12 / 2  # H100 datasheet, NVL column: 1,671 TFLOPS with sparsity
    # "the actual peak TFLOPs number is between SXM and NVL" (torchtitan, footnote 2)
    assert nvl_dense_bf16 < acc.peak_bf16_flop_per_s < sxm.peak_bf16_flop_per_s
    assert "peak_bf16_flop_per_s" in acc.estimated
    assert acc.hbm_bytes_per_s == 2.4e12 and acc.tdp_w == 500.0  # '2.4 TB/sec', '500W'
    assert "h100_sxm_hbm2e_500w" not in specs.accelerators()  # not a product in the tables
    runs = predict.training_runs().values()
    h100_titan = [r for r in runs if r.source_group == "torchtitan" and "h100" in r.accelerator]
    assert h100_titan and all(r.accelerator == acc.key for r in h100_titan)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"selective_policy": "every"}, "selective_policy='every' is not known"),
    ({"moe_dispatcher": "nvshmem"}, "moe_dispatcher='nvshmem' is not known"),
])
def test_new_options_name_the_bad_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        predict.train_step("llama3_8b", "h100_sxm", **L3_8B, **kwargs)


def test_unknown_chip_key_lists_both_files():
    with pytest.raises(KeyError, match="h100_sxm_hbm2e_500w"):
        predict.accelerator_spec("h100_nope")
    assert math.isclose(predict.accelerator_spec("h100_sxm").tdp_w, 700.0)


def test_every_torchtitan_layout_fits_with_op_level_checkpointing_memory():
    # Issue 27: a layout a framework published running must fit. torchtitan's rows keep what
    # its op-level policy saves (memory.op_sac_bytes_per_token); its largest published peak,
    # 84.9 GiB (Table 6), is under the 96 GB part's capacity.
    runs = [r for r in predict.training_runs().values() if r.source_group == "torchtitan"]
    assert len(runs) == 26
    assert all(predict.predict_run(r).fits for r in runs)
    m = specs.model("llama3_8b")
    kept = predict.memory_parts(m, tp=1, pp=1, cp=1, dp=8, ep=1, seq_len=8192,
                                micro_batch_size=2, recompute="selective", zero_stage=3,
                                dtype="bf16", fsdp_weight_gathers=2, sequence_parallel=True,
                                flash_attention=True, activation_microbatches=1,
                                weight_copies=1, allocator_overhead=0.0,
                                selective_policy="op")["activations"]
    # 63,616 B per token per layer (the doctest's sum), 32 layers, 16,384 tokens: exact
    assert kept == 63616.0 * 32 * 16384


def test_eager_pytorch_moves_the_bytes_of_each_elementwise_op():
    # torchtitan's eager RMSNorm is six kernels (36 B an element against a fused 4), rotary
    # three (20 B against 4), SwiGLU's silu and multiply two (10 B against 6): the memory-bound
    # term grows by exactly those bytes x 3 passes (forward and backward) over HBM.
    m, acc = specs.model("llama3_8b"), specs.accelerator("h100_sxm")
    eff = predict.default_efficiencies()
    kw = {**L3_8B, "recompute": "none"}
    fused = predict.train_step("llama3_8b", "h100_sxm", **kw)
    eager = predict.train_step("llama3_8b", "h100_sxm", **kw, fused_elementwise=False)
    per_token = m.n_layers * ((72 - 8) * m.d_model + (10 - 6) * m.d_ff
                              + (20 - 4) * (m.n_heads + m.n_kv_heads) * m.d_head)
    tokens_chip = kw["global_batch_tokens"] / kw["n_chips"]
    extra = 3 * per_token * tokens_chip / (acc.hbm_bytes_per_s * eff.hbm)
    grown = eager.parts["memory_bound"] - fused.parts["memory_bound"]
    assert grown == pytest.approx(extra, rel=1e-9)
    assert {k: v for k, v in eager.parts.items() if k != "memory_bound"} == {
        k: v for k, v in fused.parts.items() if k != "memory_bound"}


def test_a_tensor_parallel_ring_on_a_torus_has_one_axis_of_links():
    # Austin et al. 2025 ("How to Scale Your Model"): a collective along one axis of v5e's 2D
    # torus uses 2 of the chip's 4 ICI links, so TP's bytes (not its per-hop latency) take twice
    # as long as over every link; an H100 on NVSwitch rings over all of its links.
    kw = dict(n_chips=256, tp=16, seq_len=2048, global_batch_tokens=256 * 2048,
              micro_batch_size=16, zero_stage=3, check_memory=False)
    e = predict.default_efficiencies()
    on_axis = predict.train_step("maxtext_128b", "tpu_v5e", **kw, efficiencies=e)
    every_link = predict.train_step("maxtext_128b", "tpu_v5e", **kw,
                                    efficiencies=dataclasses.replace(e, chip_axis_links=()))
    n_layers = specs.model_spec("maxtext_128b").n_layers
    lat = n_layers * 8 * (16 - 1) * terms.SCALE_UP_LATENCY_S  # one micro-batch, 8 collectives
    got = (on_axis.parts["tp_collectives"] - lat) / (every_link.parts["tp_collectives"] - lat)
    assert got == pytest.approx(2.0, rel=1e-9)  # float rounding only
    assert e.axis_link_fraction("tpu_v5p") == pytest.approx(1 / 3, abs=1e-4)  # 2 of 6 links
    assert e.axis_link_fraction("h100_sxm") == 1.0


def test_flash_attention_charges_its_backwards_recomputed_scores_at_the_published_rate():
    # Llama 3 8B at 8K on one H100, no recomputation: attention time is the causal forward FLOP
    # 2 L H d s per token, times 3.5 (FlashAttention-2's backward is 2.5 forwards: 5 matmuls
    # against 2), at 308 TFLOP/s (Dao 2023, Fig. 7d, 8K). Closed form; 1e-12 is float rounding.
    m = specs.model("llama3_8b")
    kw = dict(L3_8B, recompute="none")
    s = predict.train_step("llama3_8b", "h100_sxm", **kw)
    flop = 2 * m.n_layers * m.n_heads * m.d_head * 8192 * 3.5 * kw["global_batch_tokens"] / 8
    assert s.parts["attention"] == pytest.approx(flop / 308e12, rel=1e-12)
    # full recomputation runs the forward once more; without a flash kernel the scores are
    # kept (3 passes) and the products run at the large-GEMM fraction
    full = predict.train_step("llama3_8b", "h100_sxm", **dict(kw, recompute="full"))
    assert full.parts["attention"] / s.parts["attention"] == pytest.approx(4.5 / 3.5, rel=1e-12)
    eager = predict.train_step("llama3_8b", "h100_sxm", **kw, flash_attention=False)
    peak = specs.accelerator("h100_sxm").peak_bf16_flop_per_s
    assert eager.parts["attention"] == pytest.approx(
        flop / 3.5 * 3 / (peak * predict.default_efficiencies().gemm_bf16), rel=1e-12)


def test_the_busiest_pipeline_rank_sets_the_pace():
    # Closed forms of layout.stage_imbalance (float rounding only):
    # 94 layers + embedding + loss as 96 slots over 32 x 3 chunks: rank 31 holds two one-layer
    # chunks and the loss chunk (head = h layers), mean rank (94 + h) / 32
    h = 2.4
    got = predict.layout.stage_imbalance(layer_cost=1.0, head_cost=h, n_layers=94, pp=32,
                                         interleave=3, split="account_embedding_loss")
    assert got == pytest.approx((2 + h) * 32 / (94 + h), rel=1e-12)
    # "even": 32 layers over 4 ranks, the head added to the last: (8 + h) / ((32 + h) / 4)
    got = predict.layout.stage_imbalance(layer_cost=1.0, head_cost=h, n_layers=32, pp=4,
                                         interleave=1, split="even")
    assert got == pytest.approx((8 + h) * 4 / (32 + h), rel=1e-12)
    assert predict.layout.stage_imbalance(layer_cost=1.0, head_cost=h, n_layers=32, pp=1,
                                          interleave=1, split="even") == 1.0
    with pytest.raises(ValueError, match="pipeline_split='odd' is not known"):
        predict.train_step("llama3_8b", "h100_sxm", **L3_8B, pipeline_split="odd")
    # in train_step the wait is (f - 1) x compute, inside the bubble part; without a pipeline
    # nothing changes, and counting the head as a slot (Llama 3's split) evens Llama 3 8B's
    # 32 layers + head over 4 stages of 8 slots: 34 slots do not divide, so it still waits
    kw = dict(L3_8B, n_chips=32, pp=4, global_batch_tokens=64 * 8192)
    even = predict.train_step("llama3_8b", "h100_sxm", **kw)
    acct = predict.train_step("llama3_8b", "h100_sxm", **kw,
                              pipeline_split="account_embedding_loss")
    assert acct.step_time_s < even.step_time_s
    assert even.parts["gemm"] == acct.parts["gemm"]


def test_head_layers_equivalent_from_llama3_70bs_published_total():
    # Llama 3 70B: 70,553,706,496 parameters (the checkpoint's total), V = 128,256, d = 8,192,
    # 80 layers, untied: the head is V d / ((N - 2 V d) / 80) = 1.2279 layers of weights.
    m = specs.model("llama3_70b")
    v_d = 128_256 * 8_192
    expected = v_d / ((70_553_706_496 - 2 * v_d) / 80)
    assert predict.layout.head_layers_equivalent(m) == pytest.approx(expected, rel=1e-9)


def test_weight_gradient_into_fp32_main_grads_is_memory_bound_for_a_512_token_expert():
    # Qwen3-235B's expert up-projection (3072 x 4096) on 512 tokens a micro-batch, row 5's layout
    # (256 micro-batches): the wgrad GEMM adds its output into FP32 main grads, 4 B on the first
    # micro-batch and 8 B after. Intensity 2mnk / (2(mn + mk) + (8 - 4/256) nk) = 119.5 FLOP/B
    # against the H100's ridge 989.4e12 x 0.61 / (3.35e12 x 0.85) = 212.0 (the data's fractions);
    # the forward (396 FLOP/B) is compute-bound, so the wgrad runs at 0.564 of the forward's rate.
    c = validation.run_context("mcore_qwen3_235b_row5", efficiencies=predict.default_efficiencies())
    m, n, k = 512, 3072, 4096
    i_w = 2 * m * n * k / (2 * (m * n + m * k) + (8 - 4 / 256) * n * k)
    ridge = 989.4e12 * 0.61 / (3.35e12 * 0.85)
    assert c.m == 256
    assert terms.wgrad_roofline_factor(c, m, n, k, "bf16") == pytest.approx(i_w / ridge, rel=1e-9)
    assert i_w / ridge == pytest.approx(0.564, abs=5e-4)
    # 4096 tokens an expert (rows 1 and 3) or one micro-batch (nothing accumulates): no change.
    assert terms.wgrad_roofline_factor(c, 4096, n, k, "bf16") == 1.0
    assert terms.wgrad_roofline_factor(dataclasses.replace(c, m=1), m, n, k, "bf16") == 1.0


def test_an_moe_layer_with_expert_tp_1_pays_attentions_tp_collectives_only():
    # Row 5 (Qwen3-235B, TP 4 with sequence parallelism, ETP 1, PP 8, 256 micro-batches of 4,096
    # tokens, no recompute): Megatron-LM at 1e057005 gathers an MoE layer's tokens on the
    # expert-TP group only (moe/token_dispatcher.py 57-58, 525-535, 622-631), so its 94 layers
    # pay attention's all-gather/reduce-scatter pair, forward and backward: half of Megatron's
    # 4 x 2(t-1)/t x tokens x d x 2 B per layer, on NVLink at 450e9 x 0.8 B/s, and half of the
    # 8 collectives' (t-1) x 3 us latency.
    c = validation.run_context("mcore_qwen3_235b_row5", efficiencies=predict.default_efficiencies())
    per_layer = 4 * 2 * 3 / 4 * 4096 * 4096 * 2 / (450e9 * 0.8) + 8 * 3 * 3e-6
    assert terms.tp_time_s(c) == pytest.approx(256 * 94 / 2 / 8 * per_layer, rel=1e-12)
    assert terms.tp_time_s(c) == pytest.approx(0.9494, abs=5e-5)
    # The same layers dense pay all four; a shared expert (a TP-split MLP, moe/shared_experts.py
    # 26, 94-101) brings back the MLP's pair, whose forward the "moe" recompute runs again.
    dense = dataclasses.replace(c, mdl=dataclasses.replace(c.mdl, moe=None))
    assert terms.tp_time_s(dense) == pytest.approx(2 * terms.tp_time_s(c), rel=1e-12)
    assert c.mdl.moe is not None
    shared = dataclasses.replace(c.mdl, moe=dataclasses.replace(c.mdl.moe, n_shared_experts=1))
    assert terms.tp_time_s(dataclasses.replace(c, mdl=shared)) == pytest.approx(
        terms.tp_time_s(dense), rel=1e-12)
    moe_rec = dataclasses.replace(c, mdl=shared, recompute="selective", selective_policy="moe")
    assert terms.tp_time_s(moe_rec) == pytest.approx(1.25 * terms.tp_time_s(dense), rel=1e-12)
