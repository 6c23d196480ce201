"""Published serving runs (data/serving_runs.toml), the serving model's calibration and its
leave-one-source-out errors."""

import dataclasses
import importlib

import pytest

from llmphys import predict
from llmphys.predict import serving_rows

R = importlib.import_module("llmphys.predict.serving_data")


def test_the_runs_cover_four_sources_with_ten_latency_rows_and_every_hopper_fp8_cell():
    runs = predict.serving_runs()
    sources = {r.source_key for r in runs.values()}
    assert len(sources) >= 4
    assert sum(1 for r in runs.values() if r.measured_latency()) >= 10
    trt = [r for r in runs.values() if r.source_key == "trtllm_v1_perf_overview"]
    # 8 columns x 10 lengths, less the 3 empty Qwen3-235B H100 cells
    assert len(trt) == 77 and all(r.weight_dtype == "fp8" for r in trt)
    assert sum(r.is_moe for r in runs.values()) >= 20


def test_every_row_quotes_its_figures_and_names_what_is_unstated():
    for key, r in predict.serving_runs().items():
        assert r.unstated and r.source and r.table and r.quote, key
        if r.source_key in ("trtllm_v1_perf_overview",):
            assert f"{r.measured_output_tokens_per_s:,.0f}" in r.quote, key
        if r.source_key == "gpustack_performance_lab":
            assert f"{r.measured_output_tokens_per_s}" in r.quote, key
            assert f"{r.measured_ttft_p50_s * 1e3:.2f}".rstrip("0").rstrip(".") in r.quote, key
        R._serve.resolve_model(r.model), R._serve.resolve_accelerator(r.accelerator)


def test_no_row_comes_from_a_reserved_source():
    # issue 28 reserves TensorRT-LLM's v0.17 and v0.6.1 performance pages and its H200 launch
    # blog for an independent check; every TensorRT-LLM row is the v1.0 page at one commit
    for r in predict.serving_runs().values():
        assert "v0.17" not in r.source and "v0.6.1" not in r.source, r.key
        assert "blog" not in r.source.lower() or r.source_key == "lmsys_sglang_large_ep", r.key
        if r.source_key == "trtllm_v1_perf_overview":
            assert "00f37686aa854010d68bcbd0f4ab000221541ca6" in r.source


def test_the_stored_constants_are_the_calibration_subsets_fit():
    c = predict.calibrate_serving()
    k = predict.SERVE_CONSTANTS
    assert round(c.gemm_efficiency, 2) == k.gemm_efficiency
    assert round(c.expert_gemm_efficiency, 2) == k.expert_gemm_efficiency
    assert round(c.step_overhead_s, 4) == k.step_overhead_s
    # an engine's whole MoE layer runs below the best published grouped GEMM (DeepGEMM, 0.6)
    terms = importlib.import_module("llmphys.predict.serve_terms")
    assert k.expert_gemm_efficiency < terms.EXPERT_GEMM_CEILING
    assert len(predict.serving_calibration_runs()) == 7


def test_every_constant_is_pinned_by_two_sources_so_every_fold_refits_it():
    # a constant pinned by one source's rows alone would keep, in that source's fold, a value
    # fitted on that source: its errors would not be out of source. Each of the three fitted
    # constants is named by calibration rows of at least two sources, so no fold falls back
    from llmphys.predict import serving_rows
    runs = predict.serving_runs()
    calib = [runs[k] for k in predict.serving_calibration_runs()]
    for name in serving_rows.FITTED_CONSTANTS:
        assert len({r.source_key for r in calib if r.fit_constant == name}) >= 2, name
    for src in {r.source_key for r in runs.values()}:
        assert R.fold_fallbacks(src) == (), src
    # and a fold's constants differ from the all-rows fit where the source left out calibrates:
    # leaving TensorRT-LLM out, the experts' GEMM rate comes from DeepSeek's decode pool alone
    assert R.calibrate("trtllm_v1_perf_overview").expert_gemm_efficiency < 0.5 * R.calibrate(
        "deepseek_day6").expert_gemm_efficiency


def test_a_calibration_row_must_name_the_constant_it_pins():
    import dataclasses

    from llmphys.predict import serving_rows
    row = predict.serving_runs()["trtllm_llama31_8b_h100_tp1_1000_1000"]
    assert row.fit_row and row.fit_constant == "gemm_efficiency"
    serving_rows.check_row(row, "t")  # as stored: accepted
    for bad in (dataclasses.replace(row, fit_constant="hbm_efficiency"),  # sourced, not fitted
                dataclasses.replace(row, fit_constant=""),  # a calibration row naming none
                dataclasses.replace(row, fit_row=False)):  # a named constant on a plain row
        with pytest.raises(ValueError, match="fit_constant"):
            serving_rows.check_row(bad, "t")


def test_trtllm_bench_sizes_its_engine_as_its_tuning_code_does():
    # tensorrt_llm/bench/build/tuning.py: 0.95 of (HBM - weights) over I + O tokens a request,
    # 2 L max(tp, h_kv) d_h KV elements a token, rounded up; Llama 3 8B FP8 on one H100 (80 GiB
    # = 85.9 GB): 0.95 (85.9 - 8.0) GB / (65,536 B x 2,176) = 519 requests -> 640, and
    # 519 x (1 + 2048/128) = 8,823 tokens -> 9,216 (rounded up to a multiple of 1,024)
    from llmphys import specs
    lim = R._serve.bench_engine_limits(
        specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=1,
        weight_bytes=1.0, kv_bytes=1.0, input_tokens=2048, output_tokens=128)
    assert lim == (640, 9216)
    # the caps: at most 4,096 sequences and 32,768 tokens a step
    big = R._serve.bench_engine_limits(
        specs.model("llama3_8b"), specs.accelerator("h200"), n_chips=8,
        weight_bytes=1.0, kv_bytes=1.0, input_tokens=2048, output_tokens=128)
    assert big == (4096, 32768)


def test_trtllm_reserves_whole_sequences_so_its_batch_is_the_cache_over_i_plus_o():
    # GUARANTEED_NO_EVICT (TensorRT-LLM's default capacity policy) admits a request only when its
    # whole I + O fits: at 128 in / 4,096 out the batch is about (128 + 2,048) / (128 + 4,096)
    # = 0.52 of the on-demand engine's (within 1 % for rounding to whole sequences)
    kw = dict(n_chips=1, batch_size=None, input_tokens=128, output_tokens=4096,
              weight_dtype="fp8", kv_dtype="fp8", max_batch=100_000)
    lazy = predict.serve("llama3_8b", "h100_sxm", **kw)
    full = predict.serve("llama3_8b", "h100_sxm", kv_reserve_full=True, **kw)
    assert abs(full.batch_size / lazy.batch_size - 2176 / 4224) < 0.01


def test_405b_rows_cache_in_bf16_as_their_checkpoint_declares_so_the_h100_batch_halves():
    # nvidia/Llama-3.1-405B-Instruct-FP8's hf_quant_config.json sets kv_cache_quant_algo null: FP8
    # weights, BF16 cache. Every 405B row of the TensorRT-LLM page says so; on the H100's 128 in /
    # 4,096 out row the cache sets the batch, so a BF16 cache holds about half the sequences an FP8
    # one would (within 2 % for rounding to whole sequences; trtllm-bench's sizing moves with it)
    import dataclasses
    runs = [r for r in predict.serving_runs().values() if r.model == "llama31_405b"]
    assert len(runs) == 20 and all(r.kv_dtype == "bf16" and r.weight_dtype == "fp8" for r in runs)
    row = predict.serving_runs()["trtllm_llama31_405b_h100_tp8_128_4096"]
    bf16 = R.predict_serve(row)
    fp8 = R.predict_serve(dataclasses.replace(row, kv_dtype="fp8"))
    assert abs(bf16.batch_size / fp8.batch_size - 0.5) < 0.02


def test_leave_one_source_out_errors_benchmark():
    # issue 28's bars: throughput median <= 15 %, worst <= 40 %, |median signed| <= 5 %;
    # latency median <= 25 %, worst <= 50 %; MoE rows median <= 20 %. Printed in full; the
    # bars this model meets are asserted, the others are reported (chapter 6 shows them).
    rows = predict.serving_residuals()
    print(f"\n{'run':<46}{'measured':>10}{'predicted':>11}{'error':>8}  latency errors")
    for r in rows:
        lat = ", ".join(f"{k} {v:+.0%}" for k, v in r["latency_errors"].items())
        tag = " (calibration)" if r["calibration"] else ""
        if r["rel_error"] is None:  # a Poisson-rate row: latency only, no published throughput
            print(f"{r['run']:<46}{'-':>10}{r['predicted']:>11,.0f}{'-':>8}  {lat}{tag}")
            continue
        print(f"{r['run']:<46}{r['measured']:>10,.0f}{r['predicted']:>11,.0f}"
              f"{r['rel_error']:>+8.0%}  {lat}{tag}")
    print(predict.format_loso_table())
    for src in sorted({r["source"] for r in rows}):
        print(f"fold {src}: constants kept from the all-rows fit: {R.fold_fallbacks(src)}")
    s = predict.loso_summary()["all"]
    verdict = predict.bar_verdicts(s, predict.SERVING_BARS)
    print("bars: " + "; ".join(f"{k} {r} {x:.0%}: {'met' if verdict[k] else 'NOT met'}"
                               for k, (r, x) in predict.SERVING_BARS.items()))
    assert s["n_rows"] == len(predict.serving_runs())
    # the bars this model meets, at the values
    assert abs(s["median_signed"]) <= 0.05  # -3.1 %
    assert s["median"] <= 0.15  # 10.5 %
    assert s["moe_median"] <= 0.20  # 24 MoE rows, 16.0 %
    # the bars it misses, held at today's level so a change that makes them worse fails: these
    # are regression floors, not the bars (worst <= 40 %, latency median <= 25 %, latency
    # worst <= 50 %); chapter 6 says why each is missed.
    # History of the floors. Until every fitted constant was pinned by two sources, TensorRT-LLM's
    # fold kept both GEMM rates and GPUStack's fold the step overhead from the all-rows fit, which
    # includes their own rows: 80 of the 96 rows were predicted partly in sample, and the bars then
    # read median 11.9 %, worst 90.2 %, MoE median 22.9 %, latency median 21.8 %, latency worst
    # 86.3 %. Strictly out of source (NIM's saturated and single-user rows and DeepSeek's decode
    # pool join the calibration rows): median 10.5 %, worst 51.7 % (GPUStack's Qwen3-235B FP8
    # TP8+EP burst on vLLM, +90 % before), MoE median 16.0 %, latency median 36.8 %, latency worst
    # 81.9 % (GPUStack's vLLM Qwen3-8B TTFT at four users). The latency median broke because the
    # step overhead, fitted on NIM's one-user TPOT alone when GPUStack is left out, is 5.5 ms
    # against 2.2 ms on vLLM's four users alone: one constant cannot carry both engines, and
    # GPUStack's Qwen3-8B TPOTs come out 34-44 % long. The search bound on the overhead was widened
    # from 5 to 20 ms so that the fold's fit is not clipped (at 5 ms: latency median 32.5 %).
    # A new source, SGLang's v0.3.0-against-vLLM-v0.6.0 tables (8 rows, 16 latency figures, no
    # throughput), moved both latency floors: median 36.8 -> 28.2 %, worst 81.9 -> 84.7 % (vLLM
    # v0.6.0's 70B TTFT at 8 requests/s, its 10-step scheduling rounds unmodelled).
    # The simulator's multi-step rounds (Scheduler.steps_per_round, the four vLLM v0.6.0 rows'
    # --num-scheduler-steps 10; no constant refitted) took those TTFTs from -73..-85 % to
    # -13..-47 %: latency median 28.2 -> 25.2 %, worst 84.7 -> 81.9 % (GPUStack's vLLM Qwen3-8B
    # TTFT at four users again).
    # vLLM v0.11.0's serial per-request chat-template parse (serving_rows.VLLM_0110_CHAT_INTAKE_S,
    # Scheduler.request_intake_s; the five GPUStack vLLM rows only, nothing refitted): worst
    # 51.7 -> 45.0 % (the same FP8 TP8+EP burst), latency worst 81.9 -> 69.9 % (that burst's
    # TPOT; the Qwen3-8B TTFT at four users goes -82 -> -65 %), latency median 25.2 % unchanged.
    assert s["worst"] <= 0.451
    assert s["latency_median"] <= 0.252
    assert s["latency_worst"] <= 0.700


def test_gpustacks_bursts_take_the_same_full_batch_step_whatever_their_chips_and_bytes():
    # The peak one-second output over the peak concurrency is the step with every request in
    # flight: 984 / 9,788 tok/s for the FP8 TP8+EP run. Across TP4 and TP8, FP8 and BF16, vLLM and
    # SGLang the five lie within 25 % of each other (0.10 to 0.12 s), while the model's step for
    # the FP8 TP8+EP run, half the bytes a chip of the BF16 TP8 run reads, is over 30 % shorter.
    from llmphys.predict import serving_studies as ss
    d = {r["run"]: r for r in ss.burst_diagnostics()}
    assert len(d) == 5
    ep = d["gpustack_qwen3_235b_h100_vllm_fp8_tp8_ep"]
    assert ep["implied_step_s"] == pytest.approx(984 / 9788, rel=1e-9)
    steps = [r["implied_step_s"] for r in d.values()]
    assert max(steps) / min(steps) < 1.25
    bf16 = d["gpustack_qwen3_235b_h100_vllm_bf16_tp8"]
    assert bf16["model_step_s"] / ep["model_step_s"] > 1.3


def test_a_rate_row_names_its_rate_and_only_a_rate_row_may_omit_its_throughput():
    import dataclasses

    from llmphys.predict import serving_rows
    row = predict.serving_runs()["sglang060_llama31_70b_h100_sglang_rps4"]
    serving_rows.check_row(row, "t")  # as stored: accepted
    with pytest.raises(ValueError, match="request_rate_per_s"):
        serving_rows.check_row(dataclasses.replace(row, request_rate_per_s=None), "t")
    closed = predict.serving_runs()["gpustack_qwen3_8b_h100_sglang_bf16_c4"]
    with pytest.raises(ValueError, match="measured_output_tokens_per_s"):
        serving_rows.check_row(dataclasses.replace(closed, measured_output_tokens_per_s=None), "t")
    with pytest.raises(ValueError, match="steady batch"):  # Poisson arrivals: simulated only
        R.predict_serve(row)


def test_sglang_rows_size_their_cache_as_their_version_does():
    # mem_fraction_static, SGLang's (weights + KV pool) / GPU memory, at each row's version:
    # v0.5.x on an 80 GB H100 (81,559 MiB) reserves 512 + 1.5 x 8,192 + 2 x cuda_graph_max_bs
    # (256 below TP 4, else 512) + 1,024 tp/8 MiB; v0.3.0 takes it from the TP size alone
    h100 = 81559
    assert R.sglang_mem_fraction("SGLang v0.5.5.post1", tp=8, gpu_mib=h100) == 0.818
    assert R.sglang_mem_fraction("SGLang v0.5.3.post3", tp=1, gpu_mib=h100) == 0.835
    assert R.sglang_mem_fraction("SGLang v0.3.0", tp=4, gpu_mib=h100) == 0.85
    assert R.sglang_mem_fraction("SGLang v0.3.0", tp=1, gpu_mib=81920) == 0.88
    assert R.sglang_mem_fraction("SGLang v0.4.0", tp=1, gpu_mib=h100) is None  # not read
    rules = {k: R._kv_rule(r) for k, r in R.serving_runs().items() if r.engine_family == "sglang"}
    assert rules["gpustack_qwen3_235b_h100_sglang_bf16_tp8"] == ("static", 0.818)
    assert rules["sglang060_llama31_70b_h100_sglang_rps8"] == ("static", 0.85)
    assert rules["sglang_deepseek_v3_h100_decode_ep72"] == ("static", 0.88)  # no version named


def test_only_vllm_0110s_chat_rows_pay_its_per_request_template_parse():
    # v0.11.0 alone parses the chat template on every request (v0.11.1 caches it), and only a
    # chat endpoint renders one: GPUStack's five vLLM rows, not its SGLang or TensorRT-LLM rows,
    # not vLLM v0.6.0's (SGLang's benchmark tables)
    paying = sorted(k for k, r in predict.serving_runs().items() if r.request_intake_s)
    assert paying == sorted(k for k, r in predict.serving_runs().items()
                            if r.source_key == "gpustack_performance_lab" and "vllm" in k)
    assert len(paying) == 5
    r = predict.serving_runs()[paying[0]]
    assert r.request_intake_s == pytest.approx(7e-3)  # vLLM PR 20065: 6-8 s per 1,000 requests
    bad = dataclasses.replace(r, api="grpc")
    with pytest.raises(ValueError, match=r"\.api: 'grpc' is not one of"):
        serving_rows.check_row(bad, "row")


def test_the_template_parse_lengthens_every_ttft_it_is_charged_to():
    # intake_study: the five vLLM v0.11.0 chat rows with and without the 7 ms serial parse; the
    # uncharged errors are the model's before the parse was charged (the LOSO table of that
    # commit: the four-user Qwen3-8B TTFT at -81.9 %), and a 984-request burst takes 6.9 s to
    # reach the engine (984 x 7 ms)
    d = predict.intake_study()
    assert d["burst_intake_s"] == pytest.approx(984 * 7e-3)
    rows = {r["run"]: r for r in d["rows"]}
    assert len(rows) == 5
    assert all(r["ttft_error"] > r["ttft_error_uncharged"] for r in rows.values())
    c4 = rows["gpustack_qwen3_8b_h100_vllm_bf16_c4"]
    assert c4["ttft_error_uncharged"] == pytest.approx(-0.819, abs=5e-4)
    # at four users nothing queues at the server: the parse adds its 7 ms, and the request then
    # waits for the next step boundary, at most one (simulated) decode step more
    key = "gpustack_qwen3_8b_h100_vllm_bf16_c4"
    meas = predict.serving_runs()[key].measured_ttft_p50_s
    added = (c4["ttft_error"] - c4["ttft_error_uncharged"]) * meas
    step = next(r for r in predict.serving_residuals() if r["run"] == key)["predicted_latency"]
    c = serving_rows.VLLM_0110_CHAT_INTAKE_S
    assert c - 1e-9 <= added <= c + step["tpot_p50"]
