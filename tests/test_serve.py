"""The serving model (llmphys.predict.serve) against closed forms, limits and the CLI."""

import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llmphys import accounting, comms, inference, kv_cache, predict, specs

# the module; predict.serve is the function
S = importlib.import_module("llmphys.predict.serve_model")

ROOT = Path(__file__).resolve().parents[1]


def test_batch_one_tpot_is_weights_over_bandwidth_plus_all_reduce_latency_plus_overhead():
    # closed form at B = 1, no prompt share (decode_only): N_dense b / (tp W eta_W)
    # + 2 L (ring bytes / link + one registry latency) + the fitted overhead
    m, acc = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    s = predict.serve(m, acc, n_chips=8, tp=8, batch_size=1, input_tokens=1000,
                      output_tokens=1000, decode_only=True)
    dense = accounting.n_params(m) - accounting.embedding_params(m)  # the output head is read
    assert s.parts["weights"] == pytest.approx(
        dense * 2.0 / (8 * acc.hbm_bytes_per_s * S.HBM_EFFICIENCY), rel=1e-12)
    latency = 2 * m.n_layers * predict.small_collective_latency_s()
    assert latency < s.parts["tp_collectives"] < 1.1 * latency  # latency is most of it
    assert s.parts["overhead"] == S.CONSTANTS.step_overhead_s
    assert s.tpot_s == pytest.approx(sum(s.parts.values()))


def test_the_one_registry_latency_is_the_prices_entry_of_ten_microseconds():
    # issue 32 item 25: one value for a small NVLink collective, used by serve and chapter 6
    assert predict.small_collective_latency_s() == 10e-6


def test_weight_reads_of_a_moe_step_follow_the_expected_experts_touched():
    m = specs.model("deepseek_v3")
    e = accounting.mlp_params(m, m.moe.d_ff_expert)
    for t in (1, 8, 64, 4096):
        r = predict.weight_read_bytes(m, n_tokens=t, weight_bytes=1.0)
        touched = 256 * (1 - (1 - 8 / 256) ** t)  # E (1 - (1 - k/E)^T)
        assert r["experts"] == pytest.approx(58 * touched * e, rel=1e-12)
    # one token reads 8 experts a layer; a large step reads all 256
    assert predict.weight_read_bytes(m, n_tokens=1, weight_bytes=1.0)["experts"] == \
        pytest.approx(58 * 8 * e, rel=1e-12)
    assert predict.weight_read_bytes(m, n_tokens=1e5, weight_bytes=1.0)["experts"] == \
        pytest.approx(58 * 256 * e, rel=1e-9)


def test_expert_load_imbalance_limits_and_the_balls_into_bins_bound():
    f = predict.expert_load_imbalance
    assert f(n_tokens=1000, k=8, ep=1) == 1.0
    # more tokens per rank: the busiest rank approaches the mean
    assert f(n_tokens=1e6, k=8, ep=64) < f(n_tokens=1e3, k=8, ep=64)
    # against a sampled maximum: uniform top-8 routing of 256 tokens over 72 ranks of
    # 256/72 experts each (ranks as bins, each assignment uniform), 2,000 draws
    import numpy as np
    rng = np.random.default_rng(0)
    loads = rng.multinomial(256 * 8, [1 / 72] * 72, size=2000)
    sampled = (loads.max(axis=1) / loads.mean(axis=1)).mean()
    assert f(n_tokens=256, k=8, ep=72) == pytest.approx(sampled, rel=0.15)  # an estimate


def test_a_one_shot_all_to_all_pays_one_latency_and_the_bytes_that_leave_each_rank():
    a2a = comms.all_to_all_time_s
    assert a2a(8e6, 8, link_bytes_per_s=1e9, latency_s=1e-5, one_shot=True) == \
        pytest.approx(7 / 8 * 8e-3 + 1e-5, rel=1e-12)
    # a pairwise schedule pays p - 1 latencies for the same bytes
    assert a2a(8e6, 8, link_bytes_per_s=1e9, latency_s=1e-5) == \
        pytest.approx(7 / 8 * 8e-3 + 7e-5, rel=1e-12)
    assert a2a(8e6, 1, link_bytes_per_s=1e9, latency_s=1e-5, one_shot=True) == 0.0


def test_ep_dispatch_and_combine_are_two_all_to_alls_per_moe_layer():
    # DeepSeek-V3 on 8 H100s, EP8 (attention data-parallel): each rank holds T/8 tokens and sends
    # k = 8 copies, FP8 for the dispatch and BF16 for the combine
    m, acc = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    s = predict.serve(m, acc, n_chips=8, ep=8, batch_size=512, input_tokens=100,
                      output_tokens=1, weight_dtype="fp8", kv_dtype="fp8", decode_only=True,
                      check_memory=False)
    el = 512 / 8 * 8 * m.d_model
    link = acc.scale_up_bytes_per_s_per_direction * S.CONSTANTS.link_efficiency
    lat = predict.small_collective_latency_s()
    one = sum(comms.all_to_all_time_s(el * b, 8, link_bytes_per_s=link, latency_s=lat,
                                      one_shot=True) for b in (1.0, 2.0))
    assert s.parts["ep_collectives"] == pytest.approx((61 - 3) * one, rel=1e-12)


def test_attention_data_parallel_reads_the_dense_weights_once_per_chip():
    # EP8 with data-parallel attention: each chip reads the whole attention; TP8 splits it
    kw = dict(n_chips=8, batch_size=8, input_tokens=100, output_tokens=1, weight_dtype="fp8",
              kv_dtype="fp8", decode_only=True, check_memory=False)
    dp = predict.serve("deepseek_v3", "h100_sxm", ep=8, **kw)
    tp = predict.serve("deepseek_v3", "h100_sxm", tp=8, ep=8, **kw)
    cost = predict.step_cost("deepseek_v3", "h100_sxm", layout=S.make_layout(
        specs.model("deepseek_v3"), ep=8), weight_dtype="fp8")
    assert cost.kv_replication == 1.0
    tp_cost = predict.step_cost("deepseek_v3", "h100_sxm", layout=S.make_layout(
        specs.model("deepseek_v3"), tp=8, ep=8), weight_dtype="fp8")
    assert tp_cost.kv_replication == 8.0  # MLA's one latent is copied on every TP rank
    assert dp.parts["weights"] > tp.parts["weights"]


def test_speculative_tokens_per_step_limits():
    f = predict.expected_tokens_per_step
    assert f(draft_tokens=0, acceptance_rate=0.5) == 1.0
    assert f(draft_tokens=4, acceptance_rate=1.0) == 5.0
    assert f(draft_tokens=4, acceptance_rate=0.0) == 1.0
    # Leviathan et al. 2023 eq. 1 at a = 0.8, k = 4: (1 - 0.8^5) / 0.2 = 3.3616
    assert f(draft_tokens=4, acceptance_rate=0.8) == pytest.approx(3.3616, rel=1e-12)


def test_speculation_pays_at_batch_one_and_not_at_a_compute_bound_batch():
    # FP8 weights and math: the domain the GEMM efficiency was fitted on (issue 28)
    kw = {"n_chips": 8, "tp": 8, "input_tokens": 1000, "output_tokens": 1000, "draft_tokens": 4,
          "acceptance_rate": 0.7, "draft_model": "llama3_8b", "weight_dtype": "fp8",
          "kv_dtype": "fp8"}
    plain = dict(kw, draft_tokens=0, acceptance_rate=0.0, draft_model=None)
    one = predict.serve("llama3_70b", "h100_sxm", batch_size=1, **kw)
    one0 = predict.serve("llama3_70b", "h100_sxm", batch_size=1, **plain)
    big = predict.serve("llama3_70b", "h100_sxm", batch_size=1024, **kw)
    big0 = predict.serve("llama3_70b", "h100_sxm", batch_size=1024, **plain)
    assert one.tpot_s < one0.tpot_s  # memory-bound: verifying 5 tokens costs about 1 step
    assert big.output_tokens_per_s < big0.output_tokens_per_s  # compute-bound: it costs 5


def test_fp8_kv_doubles_the_max_throughput_batch_of_a_gqa_model():
    kw = {"n_chips": 1, "batch_size": None, "input_tokens": 2048, "output_tokens": 2048,
          "weight_dtype": "fp8"}
    b16 = predict.serve("llama3_8b", "h100_sxm", kv_dtype="bf16", **kw).batch_size
    b8 = predict.serve("llama3_8b", "h100_sxm", kv_dtype="fp8", **kw).batch_size
    assert b8 == pytest.approx(2 * b16, abs=2)  # KV bytes halve; the free memory is the same


def test_the_step_token_budget_caps_the_fed_batch_of_a_prompt_heavy_workload():
    # 2,048 in, 128 out: each decode brings 16 prompt tokens, so 8,192 tokens feed 8192/17
    s = predict.serve("llama3_8b", "h100_sxm", n_chips=1, batch_size=None, input_tokens=2048,
                      output_tokens=128, weight_dtype="fp8", kv_dtype="fp8")
    assert s.output_tokens_per_s == pytest.approx(8192 / 17 / s.step_s, rel=1e-12)


def test_chunked_prefill_trades_ttft_for_a_smooth_tpot():
    kw = {"n_chips": 8, "tp": 8, "batch_size": 64, "input_tokens": 8000, "output_tokens": 500}
    off = predict.serve("llama3_70b", "h100_sxm", chunked_prefill=False, **kw)
    small = predict.serve("llama3_70b", "h100_sxm", chunk_tokens=1000, **kw)
    big = predict.serve("llama3_70b", "h100_sxm", chunk_tokens=8192, **kw)
    assert off.parts["prefill_stall"] > 0 and "prefill_stall" not in big.parts
    assert off.tpot_worst_s > 3 * small.tpot_worst_s
    assert big.tpot_worst_s == pytest.approx(off.tpot_worst_s, rel=0.1)
    assert small.ttft_s > big.ttft_s


def test_disaggregated_prefill_pool_caps_only_a_prefill_heavy_workload():
    def rate(prefill_chips, i, o):
        return predict.serve("llama3_70b", "h100_sxm", n_chips=8 + prefill_chips, tp=8,
                             batch_size=None, input_tokens=i, output_tokens=o,
                             weight_dtype="fp8", kv_dtype="fp8",
                             prefill_chips=prefill_chips).output_tokens_per_s
    assert rate(16, 8000, 200) > 1.5 * rate(8, 8000, 200)
    assert rate(16, 100, 4000) == rate(8, 100, 4000)


def test_deepseek_v3_routed_experts_need_32_times_the_whole_model_balance_batch():
    b = inference.balance_batch_by_operator(specs.model("deepseek_v3"),
                                            specs.accelerator("h100_sxm"))
    ridge = 989.4e12 / 3.35e12  # H100 SXM BF16 dense peak over HBM bandwidth (datasheet)
    assert b["attention"] == pytest.approx(ridge)
    assert round(b["routed_experts"]) == 9451  # ridge x 256 / 8


def test_a_deployment_that_does_not_fit_says_so_with_the_bytes():
    with pytest.raises(predict.LayoutDoesNotFit, match=r"GB of bf16 weights per chip"):
        predict.serve("llama31_405b", "h100_sxm", n_chips=1, batch_size=1, input_tokens=10,
                      output_tokens=10)
    with pytest.raises(predict.LayoutDoesNotFit, match=r"KV cache\); the chip has"):
        predict.serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=4096,
                      input_tokens=8000, output_tokens=8000)
    s = predict.serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=4096,
                      input_tokens=8000, output_tokens=8000, check_memory=False)
    assert not s.fits and s.memory_per_chip_bytes > s.hbm_bytes


@pytest.mark.parametrize("kw, match", [
    ({"tp": 0}, "tp must be an integer"),
    ({"n_chips": 12, "tp": 8}, "multiple of max\\(tp, ep\\)\\*pp"),
    ({"ep": 2, "n_chips": 2}, "needs a mixture-of-experts"),
    ({"acceptance_rate": 1.5, "draft_tokens": 2}, "acceptance_rate must lie"),
    ({"weight_dtype": "fp7"}, "dtype='fp7' is not known"),
    ({"batch_size": 0}, "batch_size must be an integer"),
    ({"input_tokens": -1}, "input_tokens must be an integer"),
])
def test_bad_input_is_named(kw, match):
    args = {"n_chips": 8, "tp": 8, "batch_size": 8, "input_tokens": 100, "output_tokens": 100}
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        predict.serve("llama3_70b", "h100_sxm", **args)


def test_kv_bytes_in_memory_are_the_cache_of_the_batch_at_mean_length():
    m = specs.model("llama3_8b")
    s = predict.serve(m, "h100_sxm", n_chips=1, batch_size=100, input_tokens=1000,
                      output_tokens=1000, kv_dtype="fp8")
    assert s.memory_parts["kv_cache"] == pytest.approx(kv_cache.kv_cache_bytes(
        m, n_tokens=1500, batch_size=100, bytes_per_element=1.0), rel=1e-12)
    assert s.memory_parts["weights"] == inference.weight_bytes_stored(m)


def test_engine_reserve_is_one_layers_largest_tensors_plus_fp32_last_token_logits():
    # closed form: T (2 d_model + 2 d_ff / tp) BF16 bytes + min(seqs, T) vocab FP32 bytes
    m = specs.model("llama3_70b")
    r = S.engine_reserved_bytes(m, tp=2, chips=2, n_tokens=8192, n_sequences=2048)
    act = 8192 * (2 * 8192 + 2 * 28672 / 2) * 2
    logits = 2048 * 128256 * 4
    assert r == pytest.approx(act + logits, rel=1e-12)  # 0.74 GB + 1.05 GB
    # a step of fewer tokens than sequences has at most one last token per token
    assert S.engine_reserved_bytes(m, tp=2, chips=2, n_tokens=512, n_sequences=2048) == (
        pytest.approx(512 * (2 * 8192 + 28672) * 2 + 512 * 128256 * 4, rel=1e-12))
    # a MoE layer's routed rows (k d_ff_expert a token) spread over the chips that hold experts
    q = specs.model("deepseek_v3")
    assert q.moe is not None
    moe = S.engine_reserved_bytes(q, tp=1, chips=8, n_tokens=8192, n_sequences=1)
    mlp = max(2 * q.d_ff, 2 * q.moe.n_experts_per_token * q.moe.d_ff_expert / 8)
    assert moe == pytest.approx(8192 * (2 * q.d_model + mlp) * 2 + q.vocab_size * 4, rel=1e-12)


def test_the_engine_reserve_comes_out_of_the_cache_as_each_engine_rule_says():
    # free: f (HBM - W - R); total: f HBM - W - R; static (SGLang): f HBM - W, R ignored
    hbm, w, r = 80e9, 35e9, 2e9
    assert S.kv_budget_bytes(hbm, w, rule=("free", 0.9), reserved_bytes=r) == pytest.approx(
        0.9 * (hbm - w - r), rel=1e-12)
    assert S.kv_budget_bytes(hbm, w, rule=("total", 0.9), reserved_bytes=r) == pytest.approx(
        0.9 * hbm - w - r, rel=1e-12)
    assert S.kv_budget_bytes(hbm, w, rule=("static", 0.88), reserved_bytes=r) == pytest.approx(
        0.88 * hbm - w, rel=1e-12)
    with pytest.raises(ValueError, match="rule"):
        S.kv_budget_bytes(hbm, w, rule=("most", 0.9))


def test_max_throughput_batch_is_the_cache_left_after_weights_and_the_reserve():
    # Llama 3 8B FP8 on one H100, 1,000 in and 1,000 out: B = floor(0.9 (HBM - W - R) / kv(1,500))
    m, h = specs.model("llama3_8b"), specs.accelerator("h100_sxm")
    s = predict.serve(m, h, n_chips=1, batch_size=None, input_tokens=1000, output_tokens=1000,
                      weight_dtype="fp8", kv_dtype="fp8")
    w = inference.weight_bytes_stored(m, weight_dtype="fp8")
    r = S.engine_reserved_bytes(m, tp=1, chips=1, n_tokens=8192, n_sequences=2048)
    one = kv_cache.kv_cache_bytes(m, n_tokens=1500, batch_size=1, bytes_per_element=1.0)
    assert s.batch_size == int(0.9 * (h.hbm_bytes - w - r) // one)


def test_serving_only_models_recount_to_their_cards():
    # Qwen3 model cards: 8.2B (6.95B without embeddings); 235B total, 22B active
    q8, q235 = S.resolve_model("qwen3_8b"), S.resolve_model("qwen3_235b_a22b")
    assert accounting.n_params(q8) == pytest.approx(8.2e9, rel=0.01)
    assert accounting.n_params(q8) - 2 * 151936 * 4096 == pytest.approx(6.95e9, rel=0.01)
    assert accounting.n_params(q235) == pytest.approx(235e9, rel=0.01)
    assert accounting.n_active_params(q235) == pytest.approx(22e9, rel=0.03)
    h800 = S.resolve_accelerator("h800")
    assert h800.scale_up_bytes_per_s_per_direction == 200e9  # 400 GB/s NVLink, both ways
    assert h800.hbm_bytes == specs.accelerator("h100_sxm").hbm_bytes
    assert "qwen3_8b" not in specs.models() and "h800" not in specs.accelerators()


def test_every_call_predicts_and_the_call_time_is_reported_benchmark():
    # Benchmark-style: prints the time per call (the target is under 10 ms) and asserts nothing
    # about the clock, which depends on the machine and its load; it asserts that every call
    # yields a positive, finite throughput.
    t0 = time.perf_counter()
    rates = [
        predict.serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=b,
                      input_tokens=1000, output_tokens=1000).output_tokens_per_s
        for b in range(1, 101)
    ]
    print(f"\nserve(): {(time.perf_counter() - t0) * 10:.2f} ms a call (target < 10 ms)")
    assert all(0 < r < float("inf") for r in rates)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "llmphys", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False,
                          env={"PYTHONPATH": str(ROOT / "lib"), "PATH": "/usr/bin:/bin"})


def test_cli_serve_json_agrees_with_the_library():
    out = _cli("serve", "llama3_8b", "h100_sxm", "--chips", "1", "--input", "1000",
               "--output", "1000", "--weights", "fp8", "--kv", "fp8", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    s = predict.serve("llama3_8b", "h100_sxm", n_chips=1, batch_size=None, input_tokens=1000,
                      output_tokens=1000, weight_dtype="fp8", kv_dtype="fp8")
    assert r["output_tokens_per_s"] == pytest.approx(s.output_tokens_per_s, rel=1e-12)
    assert r["batch_size"] == s.batch_size


def test_cli_train_json_agrees_with_the_library():
    out = _cli("train", "llama3_8b", "h100_sxm", "--chips", "8", "--seq-len", "8192",
               "--batch-tokens", "65536", "--zero-stage", "3", "--json")  # ZeRO 0 does not fit
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    s = predict.train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=8192,
                           global_batch_tokens=65536, zero_stage=3)
    assert r["mfu"] == pytest.approx(s.mfu, rel=1e-12) and r["dp"] == 8


@pytest.mark.parametrize("args, word", [
    (("serve", "llama3_70b", "h100_sxm", "--chips", "7", "--tp", "8", "--input", "10",
      "--output", "10"), "multiple of max(tp, ep)*pp"),
    (("serve", "llama3_70b", "h100_sxm", "--chips", "8", "--input", "0", "--output", "10"),
     "--input"),
    (("train", "llama3_8b", "h100_sxm", "--chips", "8", "--tp", "3", "--seq-len", "8192",
      "--batch-tokens", "65536"), "divisible"),
    (("serve", "nope", "h100_sxm", "--chips", "1", "--input", "1", "--output", "1"),
     "neither a registry model"),
])
def test_cli_bad_input_exits_2_naming_the_argument(args, word):
    out = _cli(*args)
    assert out.returncode == 2
    assert word in out.stderr.replace("\n", " ").replace("  ", " ")


LATENCY_KW = dict(n_chips=8, tp=8, input_tokens=2000, output_tokens=500, weight_dtype="fp8",
                  kv_dtype="fp8")


def test_largest_batch_within_tpot_is_the_edge_of_the_target():
    s = predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=0.05, **LATENCY_KW)
    assert s.tpot_s <= 0.05
    more = predict.serve("llama3_70b", "h100_sxm", batch_size=s.batch_size + 1, **LATENCY_KW)
    assert more.tpot_s > 0.05
    kw = dict(LATENCY_KW, tp=4)
    s2 = predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=0.05, **kw)
    assert s2.n_replicas == 2 and s2.batch_size % 2 == 0 and s2.tpot_s <= 0.05
    assert predict.serve("llama3_70b", "h100_sxm", batch_size=s2.batch_size + 2,
                         **kw).tpot_s > 0.05


def test_largest_batch_within_tpot_limits():
    loose = predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=10.0,
                                              **LATENCY_KW)
    full = predict.serve("llama3_70b", "h100_sxm", batch_size=None, **LATENCY_KW)
    assert loose.batch_size == full.batch_size
    assert predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=1e-4,
                                             **LATENCY_KW) is None
    with pytest.raises(ValueError, match="tpot_s"):
        predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=0, **LATENCY_KW)
    with pytest.raises(ValueError, match="batch_size"):
        predict.largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=0.05, batch_size=8,
                                          **LATENCY_KW)


def test_tensor_parallel_attention_sends_no_expert_all_to_all():
    # TP8 attention with EP8 on the same 8 GPUs: every rank already holds every token after the
    # attention all-reduce, so the experts need no dispatch and their partial sums ride the
    # layer's second all-reduce. Two attention groups (TP4, EP8) exchange half of each rank's
    # k copies, one group's worth: (g - 1)/g with g = 2, at one latency per all-to-all.
    m, acc = specs.model("deepseek_v3"), specs.accelerator("h200")
    kw = dict(n_chips=8, batch_size=512, input_tokens=100, output_tokens=1, weight_dtype="fp8",
              kv_dtype="fp8", decode_only=True, check_memory=False)
    tp8 = predict.serve(m, acc, tp=8, ep=8, **kw)
    assert tp8.parts["ep_collectives"] == 0.0 and tp8.parts["tp_collectives"] > 0
    tp4 = predict.serve(m, acc, tp=4, ep=8, **kw)
    el = 512 / 8 * 8 * m.d_model
    link = acc.scale_up_bytes_per_s_per_direction * S.CONSTANTS.link_efficiency
    lat = predict.small_collective_latency_s()
    one = sum(0.5 * el * b / link + lat for b in (1.0, 2.0))
    assert tp4.parts["ep_collectives"] == pytest.approx(58 * one, rel=1e-12)


def test_routed_experts_pay_their_weight_stream_plus_their_flop_time():
    # A grouped GEMM of a few rows an expert does not hide its weight stream behind its math
    # (DeepGEMM's masked-layout rows sit near bytes time + FLOP time): the experts' part of a
    # step is the sum, so the experts' FLOP time shows even where their bytes dominate. Qwen3-235B
    # on one H100 (TP1, so nothing is split), 512 decode tokens, no cache, FP8: every expert of
    # every layer touched, 512 x 8 token-expert pairs, no EP imbalance; the dense part at its own
    # max. Exact to float rounding (the closed form is the step's).
    m, acc = S.resolve_model("qwen3_235b_a22b"), specs.accelerator("h100_sxm")
    cost = S.step_cost(m, acc, layout=S.make_layout(m), weight_dtype="fp8", kv_dtype="fp8")
    c, t = S.CONSTANTS, 512
    parts = cost.parts(t, 0.0, 0.0, 0.0)
    e = accounting.mlp_params(m, m.moe.d_ff_expert)
    bw = acc.hbm_bytes_per_s * c.hbm_efficiency
    peak = acc.peak_flop_per_s("fp8")
    touched = 128 * (1 - (1 - 8 / 128) ** t)
    exp_bytes_s = 94 * touched * e * 1.0 / bw
    exp_flop_s = 2 * 94 * 8 * e * t / (peak * c.expert_gemm_efficiency)
    assert exp_bytes_s > exp_flop_s > 0  # bytes dominate: a max() would drop the FLOP time
    n_dense = S.dense_params(m)
    dense_s = max(n_dense / bw, 2 * n_dense * t / (peak * c.gemm_efficiency))
    assert parts["weights"] + parts["compute"] == pytest.approx(
        dense_s + exp_bytes_s + exp_flop_s, rel=1e-9)


def test_two_micro_batches_stream_every_weight_twice_a_step():
    # An engine that overlaps its EP all-to-all with a second micro-batch (DeepSeek's decode
    # pipeline, SGLang's two-batch overlap) runs every layer's GEMMs once per micro-batch, so
    # each weight leaves HBM twice a step: the dense part's bytes double, and the experts' bytes
    # are twice those touched by half the tokens. The FLOP are the same tokens either way.
    # DeepSeek-V3 on 8 H800s with DP attention and EP8, 16 decode tokens (both micro-batches
    # weight-bound), no cache. Exact to float rounding: the closed form is the step's.
    m, acc = specs.model("deepseek_v3"), S.resolve_accelerator("h800")
    one, two = (S.step_cost(m, acc, layout=S.make_layout(m, ep=8, overlap=o), weight_dtype="fp8")
                for o in (False, True))
    t = 16
    p1, p2 = one.parts(t, 0.0, 0.0, 0.0), two.parts(t, 0.0, 0.0, 0.0)
    bw = acc.hbm_bytes_per_s * S.CONSTANTS.hbm_efficiency
    e, n_moe = accounting.mlp_params(m, m.moe.d_ff_expert), accounting.n_moe_layers(m)

    def experts_s(tokens: float, n_mb: int) -> float:
        return n_mb * n_moe * 256 * (1 - (1 - 8 / 256) ** tokens) * e / (8 * bw)

    dense_s = S.dense_params(m) / bw
    assert p1["weights"] == pytest.approx(dense_s + experts_s(t, 1), rel=1e-9)
    assert p2["weights"] == pytest.approx(2 * dense_s + experts_s(t / 2, 2), rel=1e-9)
    assert p2["compute"] == pytest.approx(p1["compute"], rel=1e-12)


@pytest.mark.parametrize("ep, published_us", [(128, 192 + 369), (256, 194 + 360)])
def test_ep_all_to_all_matches_deepeps_published_low_latency_kernels(ep, published_us):
    # DeepEP's README (deepseek-ai/DeepEP, 'Low-latency kernels with pure RDMA'): H800 with a
    # 50 GB/s CX7 NIC each, 128 tokens a rank, 7168 hidden, top-8, FP8 dispatch and BF16
    # combine: 192 us + 369 us at EP128, 194 us + 360 us at EP256. The model's dispatch plus
    # combine of one MoE layer (one-shot all-to-alls over the scale-out link at the sourced link
    # efficiency, one latency each) at DP attention, 128 tokens a rank. Tolerance 5%: the
    # README rounds to the microsecond and its bandwidths vary by rank count (39-40 GB/s).
    m = specs.model("deepseek_v3")
    cost = S.step_cost(m, S.resolve_accelerator("h800"), layout=S.make_layout(m, ep=ep),
                       weight_dtype="fp8", kv_dtype="bf16")
    _, ep_s = cost.collectives_s(128.0 * ep)
    assert ep_s / accounting.n_moe_layers(m) * 1e6 == pytest.approx(published_us, rel=0.05)
