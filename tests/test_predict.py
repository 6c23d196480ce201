"""The step-time model: its terms against closed forms, its errors, and its published runs.

Tolerances: closed forms (bubble, bytes, FLOP counts) are exact up to float rounding (1e-9).
Published anchors are compared at the precision the paper prints (a rounded percent: 0.5
points). The benchmark test prints the leave-one-source-out table and issue 27's bars (median
|error| <= 12%, worst <= 30%, |median signed error| <= 5%, >= 80% within 20%); it asserts the
bars the model meets and prints the others (see the issue's closing note).
"""

import ast
import dataclasses
import re
import shutil
import timeit
import tomllib
from pathlib import Path

import pytest

from llmphys import comms, parallelism, predict, specs, tables

LIB = Path(__file__).resolve().parents[1] / "lib" / "llmphys"

LLAMA = dict(n_chips=16_384, tp=8, pp=16, seq_len=8192, global_batch_tokens=16 * 2**20,
             interleave=8, zero_stage=3, grad_bytes=4.0, fsdp_weight_gathers=1,
             pipeline_split="account_embedding_loss",  # Dubey et al. 2024, sec. 3.3.2
             check_memory=False)


def test_benchmark_leave_one_source_out(capsys):
    rows = predict.loso_residuals()
    assert sorted(r["run"] for r in rows) == sorted(predict.training_runs())  # none left out
    table = tables.markdown_table(
        ["run", "source", "chip", "dtype", "chips", "measured MFU", "predicted", "error", "fits"],
        [[r["run"], r["source"], r["accelerator"], r["dtype"], f"{r['n_chips']:,}",
          f"{r['measured_mfu']:.3f}", f"{r['predicted_mfu']:.3f}", f"{r['rel_error']:+.1%}",
          "yes" if r["fits"] else "NO"] for r in rows])
    by_source = tables.markdown_table(
        ["source", "runs", "median |err|", "worst", "median signed", "within 20%"],
        [[s, b["n_runs"], f"{b['median']:.1%}", f"{b['worst']:.1%}", f"{b['median_signed']:+.1%}",
          f"{b['within_20']:.0%}"]
         for s in predict.source_groups()
         for b in [predict.error_bars([r for r in rows if r["source"] == s])]])
    bars = predict.error_bars(rows)
    verdict = predict.bar_verdicts(bars)  # issue 27's bars, predict.ISSUE_BARS
    t = timeit.timeit(lambda: predict.train_step("llama31_405b", "h100_sxm", **LLAMA),
                      number=200) / 200
    with capsys.disabled():
        print("\n" + table + "\n\n" + by_source)
        print(f"out of source: {bars['n_runs']} runs, median |error| {bars['median']:.1%}, "
              f"worst {bars['worst']:.1%}, median signed {bars['median_signed']:+.1%}, "
              f"{bars['within_20']:.0%} within 20%")
        print("bars: " + "; ".join(f"{k} {r} {x:.0%}: {'met' if verdict[k] else 'NOT met'}"
                                   for k, (r, x) in predict.ISSUE_BARS.items()))
        print(f"train_step {t * 1e3:.3f} ms per call (target < 1 ms)")
    assert bars["n_runs"] >= 40
    assert len(predict.source_groups()) >= 8
    assert verdict["median"]  # issue 27's bar, met (9.3%)
    assert verdict["within_20"]  # issue 27's bar, met (72 of 87 runs)
    assert verdict["median_signed"]  # issue 27's bar, met (+1.8%) since MaxText's rederivation
    # Regression floors, with no slack beyond the printed digit, so a change that makes the
    # out-of-source errors worse fails here: the median at 9.2% (10.2% before the DP term
    # followed NCCL's multi-NIC rings and FSDP2's prefetch), the share within 20% at 73 of 87
    # (71 before PyTorch's all-gather ring attention was charged), and two bars NOT met at the
    # level measured when they last changed: worst <= 30% (76.2%, mcore_qwen3_235b_row5, down
    # from 87.3% through the MoE rows' recompute, load, permutation and cuDNN attention and the
    # refit) and |median signed| <= 5% (+5.4%: +4.4% while torchtitan's eight A100 FSDP rows sat
    # at -15% to -52% under a one-NIC ring; out of source they now lie between -8% and +7%, and
    # the median lands among MaxText's TPU rows, which the fitted GPU constant does not touch).
    # Median 9.2% -> 9.3% and signed +5.4% -> +1.8% when the 32 MaxText rows were rederived from
    # the table's own commit 76bd53b0f (its scripts' batches, TP and remat; its base.yml block).
    # Worst 76.2% -> 74.4% (still mcore_qwen3_235b_row5) when the zoo's rows reduce FP32
    # gradients, as Megatron-LM does under --bf16 without --grad-reduce-in-bf16; 74.4% -> 61.1%
    # and signed +1.8% -> +2.5% when the weight-gradient GEMM got its own roofline (FP32
    # main-grad accumulation; row 5's experts see 512 tokens a micro-batch, the only row below
    # the ridge): the refitted GPU constant moves every other GPU row by under one point.
    # Worst 61.1% -> 70.1% (row 5), signed +2.5% -> +1.8% and within 20% 73 -> 72 of 87
    # (mcore_qwen3_235b_32k, +18.0% -> +21.8%) when an MoE layer paid attention's TP
    # collectives only (expert TP 1: Megatron-LM's dispatcher gathers on the expert-TP group),
    # a correction that makes every zoo row faster; the folds' refits move other GPU rows < 1 pt.
    # Worst 70.1% -> 70.7% (row 5) when the experts' gradients reduce over their own
    # data-parallel group (memory.param_shares): one copy of each expert in rows 1-2, four in
    # row 5, so less DP traffic; other rows move by <= 0.1 point through the refits.
    assert bars["median"] <= 0.094
    assert bars["within_20"] >= 0.827
    assert bars["worst"] <= 0.708
    assert abs(bars["median_signed"]) <= 0.019


# The modules that hold the prediction models' constants: every file of the predict package
# (whatever it is split into), the deployment model included.
MODEL_FILES = sorted((LIB / "predict").glob("*.py"))
SOURCE_MARK = re.compile(r"\b(19|20)\d\d\b|arXiv|[Ff]itted|default of|``calibrate_\w+``")
TUNING_WORDS = re.compile(r"eff|eta|fudge|tun|calib|factor", re.IGNORECASE)
# The argument names of the one frozen value of every constant (Efficiencies, ServeConstants),
# which issue 26 asks the models to take instead of reading module state; a float knob is none.
FROZEN_VALUES = {"eff", "efficiencies", "constants"}


def _efficiency_constants():
    """(file, name, value node, docstring or None) of every module-level efficiency constant
    typed in code: an upper-case name with EFFICIENCY in it bound to a literal. (Names bound to
    ``default_efficiencies()`` read data/training_efficiency.toml, checked separately.)"""
    found = []
    for path in MODEL_FILES:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for i, node in enumerate(body):
            if not (isinstance(node, ast.Assign | ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (isinstance(t, ast.Name) and t.id.isupper() and "EFFICIENCY" in t.id
                        and not isinstance(node.value, ast.Call | ast.Attribute)):
                    nxt = body[i + 1] if i + 1 < len(body) else None
                    doc = (nxt.value.value if isinstance(nxt, ast.Expr)
                           and isinstance(nxt.value, ast.Constant)
                           and isinstance(nxt.value.value, str) else None)
                    found.append((path, t.id, node.value, doc))
    return found


def test_no_constant_is_tuned_per_run():
    constants = _efficiency_constants()
    names = [name for _, name, _, _ in constants]
    assert {"HBM_EFFICIENCY"} <= set(names)
    # 0. The training model's efficiencies are data: every number in
    #    data/training_efficiency.toml has a source string beside it, and the frozen value
    #    train_step takes is built from that file alone.
    raw = tomllib.loads((specs.data_dir() / "training_efficiency.toml").read_text())
    for table, entries in raw.items():
        for key, value in entries.items():
            if isinstance(value, dict):  # a published table: its numbers and one source
                nums = [v for k, v in value.items() if k.endswith("_per_s") or k == "seq_len"]
                assert nums and all(isinstance(x, float | int) for v in nums for x in v), key
                assert len(value.get("source", "")) >= 40, (table, key)
            elif not key.endswith("_source"):
                src = entries.get(key + "_source") or entries.get(f"{key}_source")
                assert isinstance(value, float | int) and src and len(src) >= 40, (table, key)
    assert dataclasses.is_dataclass(predict.default_efficiencies())
    assert type(predict.default_efficiencies()).__dataclass_params__.frozen
    # 1. Each is one named module-level literal, defined once, with a docstring naming its
    #    source (a paper or year, a vendor default, or the calibration function it is fitted
    #    by), and a fraction in (0, 1].
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for path, name, value, doc in constants:
        where = f"{path.name}:{name}"
        literal = ast.literal_eval(value)  # a number or a table of numbers, not an expression
        numbers = literal.values() if isinstance(literal, dict) else [literal]
        assert all(isinstance(x, float | int) and 0 < x <= 1 for x in numbers), where
        assert doc and len(doc) >= 60 and SOURCE_MARK.search(doc), f"{where}: no source"
        for fn in re.findall(r"``(calibrate_\w+)``", doc):
            assert f"def {fn}(" in path.read_text(encoding="utf-8"), f"{where}: no {fn}"
    # 2. Nothing but a calibration function rebinds one (it sets and restores it while fitting),
    # 3. and no public function takes an efficiency or tuning knob as an argument.
    for path in MODEL_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        top += [m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body
                if isinstance(m, ast.FunctionDef)]
        for fn in top:
            for g in (n for n in ast.walk(fn) if isinstance(n, ast.Global)):
                assert fn.name.startswith("calibrate") or not set(g.names) & set(names), (
                    f"{path.name}:{fn.name} rebinds {g.names}")
            if not fn.name.startswith(("_", "calibrate")):
                args = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
                knobs = [a for a in args if TUNING_WORDS.search(a) and a not in FROZEN_VALUES]
                assert not knobs, (path.name, fn.name, knobs)
    # 4. A run row carries layout and measurement only: no field of a run's type is a knob.
    for row_type in (predict.TrainingRun, predict.ServingRun):
        fields = [f.name for f in dataclasses.fields(row_type)]
        assert not [f for f in fields if TUNING_WORDS.search(f)
                    or f.upper() in names], (row_type.__name__, fields)


@pytest.mark.parametrize(("loader", "file"), [(predict.training_runs, "training_runs.toml"),
                                              (predict.serving_runs, "serving_runs.toml")])
def test_a_run_row_that_sets_an_efficiency_is_rejected(loader, file, tmp_path, monkeypatch):
    # The loaders refuse a field they do not know, so a row cannot carry its own constant.
    data = specs.data_dir()
    shutil.copytree(data, tmp_path / "data")
    path = tmp_path / "data" / file
    text = path.read_text(encoding="utf-8")
    first = re.search(r"^\[[^\]\n]+\]\n", text, re.M)
    path.write_text(text[:first.end()] + "gemm_efficiency = 0.9\n" + text[first.end():],
                    encoding="utf-8")
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(tmp_path / "data"))
    loader.cache_clear()
    try:
        with pytest.raises((KeyError, ValueError, TypeError), match="gemm_efficiency"):
            loader()
    finally:
        loader.cache_clear()


def test_no_constant_is_tuned_per_run_and_fitting_changes_no_module_state():
    # Efficiencies are a frozen value passed in; TrainingRun has no efficiency field.
    fields = {f for f in predict.TrainingRun.__dataclass_fields__}
    assert not {f for f in fields if "eff" in f or "eta" in f}
    before = predict.default_efficiencies()
    refit = predict.fitted_efficiencies(exclude="maxtext")
    assert predict.default_efficiencies() == before and before.gemm_bf16 == predict.GEMM_EFFICIENCY
    with pytest.raises(dataclasses.FrozenInstanceError):
        refit.gemm_bf16 = 0.5
    s = predict.train_step("llama31_405b", "h100_sxm", **LLAMA)
    assert s == predict.train_step("llama31_405b", "h100_sxm", **LLAMA, efficiencies=before)


def test_the_stored_constant_is_the_fit_on_every_run():
    assert pytest.approx(predict.calibrate_gemm_efficiency(), abs=0.005) == predict.GEMM_EFFICIENCY


def test_parts_sum_to_the_step_and_both_mfu_conventions_are_carried():
    s = predict.train_step("llama31_405b", "h100_sxm", **LLAMA)
    assert sum(s.parts.values()) == pytest.approx(s.step_time_s, rel=1e-12)
    assert list(s.parts)[:3] == ["gemm", "attention", "memory_bound"]
    m, peak = specs.model("llama31_405b"), specs.accelerator("h100_sxm").peak_bf16_flop_per_s
    for conv, value in (("causal", s.mfu_causal), ("full", s.mfu_full)):
        f = predict.model_flop_per_token(m, seq_len=8192, attention_flops=conv)
        assert value == pytest.approx(s.tokens_per_s * f / (16_384 * peak), rel=1e-12)
    assert s.mfu == s.mfu_causal and s.attention_flops == "causal"
    full = predict.train_step("llama31_405b", "h100_sxm", **LLAMA, attention_flops="full")
    assert full.mfu == full.mfu_full == pytest.approx(s.mfu_full, rel=1e-12)
    assert s.tokens_per_s == pytest.approx(16 * 2**20 / s.step_time_s, rel=1e-12)
    with pytest.raises(ValueError, match="attention_flops='half' is not known"):
        predict.train_step("llama31_405b", "h100_sxm", **LLAMA, attention_flops="half")


def test_llama3_8b_on_one_h100_server(capsys):
    # Issue 27 asks for 40-55% causal MFU with the defaults (FSDP over 8 GPUs, 8K, BF16).
    s = predict.train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=8192,
                           global_batch_tokens=128 * 8192, zero_stage=3)
    with capsys.disabled():
        print(f"\nLlama 3 8B, 8 H100, BF16, 8K: causal MFU {s.mfu:.1%} (issue's range 40-55%)")
    assert s.fits
    # Issue 27's range is 40-55%: met (54.9%, 0.1 point inside; 55.4% before attention was
    # charged at FlashAttention-2's published forward + backward rate at 8K, causal, with the
    # backward's recomputed scores, 53.8% with it; the pipeline-stage balance then raised the
    # refit GEMM fraction 0.64 -> 0.66, which this unpipelined layout feels in full).
    # torchtitan measures this layout (on 500 W parts, torch.compile,
    # op-level checkpointing) at 37% of the 700 W part's peak.
    assert 0.40 <= s.mfu <= 0.55


def test_llama3_405b_budget_lands_near_the_published_41_percent():
    # Dubey et al. 2024, table 4: 41% BF16 MFU (400 TFLOP/s per GPU) on 16,384 H100s.
    s = predict.train_step("llama31_405b", "h100_sxm", **LLAMA)
    measured = predict.measured_mfu(predict.training_runs()["llama3_405b_16k"])
    assert abs(s.mfu - measured) / measured < 0.25
    # the interleaved bubble with one layer per chunk, (p-1)/(v m + p-1) = 15/143, plus what
    # the other ranks wait for the last one, whose head and loss (0.66 of a 405B layer's GEMMs)
    # come on top of 7 layers: f = 8 / ((126 + 0.66) / 16) = 1.011, so under 2% more
    bubble = s.parts["pipeline_bubble"] / s.step_time_s
    assert 0.05 < bubble < 15 / 143 + 0.02


def test_sequence_parallelism_off_repeats_the_norms_on_every_tp_rank():
    # Narayanan et al. 2021 ran without SP: each of the 8 TP ranks moves the full-sequence
    # LayerNorm, residual and dropout bytes, 8x what SP leaves it.
    kw = dict(n_chips=64, tp=8, pp=8, seq_len=2048, global_batch_tokens=64 * 2048)
    on = predict.train_step("gpt3_175b", "a100_sxm", **kw)
    off = predict.train_step("gpt3_175b", "a100_sxm", **kw, sequence_parallel=False)
    assert off.parts["memory_bound"] > on.parts["memory_bound"]
    assert off.parts["gemm"] == on.parts["gemm"]


def test_full_recompute_costs_a_third_more_hardware_flop():
    # HFU/MFU = (8N + ...)/(6N + ...) -> 4/3 when attention is small (2K context).
    s = predict.train_step("gpt3_175b", "a100_sxm", n_chips=64, tp=8, pp=8, seq_len=2048,
                           global_batch_tokens=64 * 2048, recompute="full")
    assert s.hfu / s.mfu == pytest.approx(4 / 3, rel=0.02)
    none = predict.train_step("gpt3_175b", "a100_sxm", n_chips=64, tp=8, pp=8, seq_len=2048,
                              global_batch_tokens=64 * 2048, recompute="selective")
    assert none.step_time_s < s.step_time_s


def test_specs_and_registry_keys_give_the_same_step():
    a = predict.train_step("llama31_405b", "h100_sxm", **LLAMA)
    b = predict.train_step(specs.model("llama31_405b"), specs.accelerator("h100_sxm"), **LLAMA)
    assert a == b


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_chips=1000, tp=8, pp=16), "n_chips=1000 is not divisible by tp*pp*cp"),
    (dict(n_chips=128, tp=8, recompute="some"), "recompute='some' is not known"),
    (dict(n_chips=128, tp=8, zero_stage=4), "zero_stage must be 0, 1, 2 or 3"),
    (dict(n_chips=128, tp=8, ep=2), "needs a mixture-of-experts model"),
    (dict(n_chips=128, tp=8, global_batch_tokens=1000.0), "whole number"),
    (dict(n_chips=128, tp=8, micro_batch_size=3), "do not divide"),
    (dict(n_chips=128, tp=0), "tp must be a positive integer"),
])
def test_bad_layouts_name_the_numbers(kwargs, message):
    base = dict(seq_len=8192, global_batch_tokens=16 * 2**20)
    with pytest.raises(ValueError, match=message.replace("*", r"\*").replace("(", r"\(")):
        predict.train_step("llama3_70b", "h100_sxm", **(base | kwargs))


def test_a_layout_that_does_not_fit_is_reported_with_its_bytes():
    # 70B on 8 GPUs without ZeRO: 2 + 4 + 12 bytes x 70.55e9 / 8 = 159 GB of state per GPU.
    # 85.5 GB: the H100's usable HBM
    with pytest.raises(predict.LayoutDoesNotFit, match=r"needs .* GB per chip .* has 85.5 GB"):
        predict.train_step("llama3_70b", "h100_sxm", n_chips=8, tp=8, seq_len=8192,
                           global_batch_tokens=8 * 8192, zero_stage=0)
    s = predict.train_step("llama3_70b", "h100_sxm", n_chips=8, tp=8, seq_len=8192,
                           global_batch_tokens=8 * 8192, zero_stage=0, check_memory=False)
    state = sum(s.memory_parts[k] for k in ("weights", "gradients", "optimizer"))
    assert not s.fits and state == pytest.approx(18 * 70.55e9 / 8, rel=0.01)


def test_a_published_405b_layout_on_128_b200_fits():
    # Issue 27: Llama 3.1 405B, 128 B200, TP 4, PP 8, CP 2, DP 2, no recomputation, BF16.
    s = predict.train_step("llama31_405b", "b200", n_chips=128, tp=4, pp=8, cp=2, seq_len=8192,
                           global_batch_tokens=64 * 8192)
    assert s.fits and s.dp == 2
    # the optimizer is sharded over DP x CP = 4: 12 B x 12.68e9 / 4
    assert s.memory_parts["optimizer"] == pytest.approx(12 * 405.85e9 / 32 / 4, rel=0.01)


def test_unknown_keys_are_named():
    with pytest.raises(KeyError, match="unknown accelerator 'h900'"):
        predict.train_step("llama3_70b", "h900", n_chips=8, seq_len=8192,
                           global_batch_tokens=8 * 8192)
    with pytest.raises(TypeError, match="model must be a Model or a registry key"):
        predict.train_step(3, "h100_sxm", n_chips=8, seq_len=8192,
                           global_batch_tokens=8 * 8192)


# ------------------------------------------------------------------ normalisation to PaLM's MFU

def test_palm_throughput_reproduces_its_published_mfu():
    # Chowdhery et al. 2022, app. B: 238.3K tokens/s on 6144 TPU v4 = 46.2% MFU.
    run = predict.training_runs()["palm_540b"]
    assert predict.measured_mfu(run, attention_flops="full") == pytest.approx(0.462, abs=0.0005)


def test_megatron_eq3_throughput_converts_with_the_ratio_of_the_two_counts():
    # 163 TFLOP/s under eq. 3 (recomputation counted): MFU = 163/312 x (PaLM count / eq. 3).
    run = predict.training_runs()["megatron_1t"]
    ratio = (predict.model_flop_per_token(specs.model_spec("megatron_1t"), seq_len=2048)
             / predict.source_flop_per_token(run))
    assert predict.measured_mfu(run, attention_flops="full") == pytest.approx(163 / 312 * ratio,
                                                                              rel=1e-12)
    assert 0.72 < ratio < 0.76  # about 3/4: eq. 3 counts four forward passes, MFU three


def test_step_time_and_per_chip_tokens_convert_without_a_flop_count():
    # Qwen3-235B row 1: GBS 2048 x 4096 tokens in 19.7 s; torchtitan: tokens/s per GPU x GPUs.
    runs = predict.training_runs()
    assert predict.measured_tokens_per_s(runs["mcore_qwen3_235b_row1"]) == pytest.approx(
        2048 * 4096 / 19.7, rel=1e-12)
    assert predict.measured_tokens_per_s(runs["torchtitan_8b_8gpu_fp8"]) == 8532 * 8
    # and its printed 245 TFLOPS matches the causal count within 4% (the file's claim)
    r = runs["mcore_qwen3_235b_row1"]
    f = predict.model_flop_per_token(specs.model_spec(r.model), seq_len=4096,
                                     attention_flops="causal")
    assert predict.measured_tokens_per_s(r) * f / 256 / 1e12 == pytest.approx(245, rel=0.04)


def test_torchtitan_a100_mfu_reproduces_its_printed_full_attention_mfu():
    for key, r in predict.training_runs().items():
        if key.startswith("torchtitan_a100"):
            assert predict.measured_mfu(r, attention_flops="full") == pytest.approx(
                r.published_mfu, abs=0.012), key


def test_korthikanti_mfu_agrees_with_palm_count_to_a_percent():
    # Their 72 B s l h^2 (...) and PaLM's 6N + 12LHQT count the same matmuls; they differ
    # only in the vocabulary padding and the small terms, under 1%.
    for key in ("korthikanti_22b", "korthikanti_175b", "korthikanti_530b", "korthikanti_1t"):
        run = predict.training_runs()[key]
        assert predict.measured_mfu(run, attention_flops="full") == pytest.approx(
            run.measured_value, rel=0.01), key


def test_llama3_published_mfu_is_its_tflops_over_the_bf16_peak():
    # Printed to a whole percent; the 16K row's 400/989.4 = 40.4% is printed as 41%, so the
    # tolerance is that row's 0.6 points (the chapter's MFU section notes the same).
    peak = specs.accelerator("h100_sxm").peak_bf16_flop_per_s
    for key in ("llama3_405b_8k", "llama3_405b_16k", "llama3_405b_128k"):
        r = predict.training_runs()[key]
        assert r.measured_value * 1e12 / peak == pytest.approx(r.published_mfu, abs=0.006)


# ------------------------------------------------------------------ the terms it is built from

def test_issue_15_data_parallel_shares_of_llama3():
    # BF16 all-reduce 3.8% (chapter); FP32 gradients ~7.4%; FP32 reduce-scatter + BF16
    # all-gather (FSDP) 5.65% (issue 15 says "about 5.6%"): flat ring over dp = 128 on 50 GB/s,
    # 40% MFU step of 6.30 s.
    n = 405.85e9 / (8 * 16)
    t = comms.dp_compute_time_s(n_params=405.85e9, tokens_per_step=16 * 2**20, n_gpus=16_384,
                                peak_flop_per_s=989.4e12, mfu=0.4)
    shares = []
    for per_param in (comms.zero_dp_bytes_per_param(0),
                      comms.zero_dp_bytes_per_param(0, grad_bytes=4.0, weight_bytes=4.0),
                      comms.zero_dp_bytes_per_param(3, grad_bytes=4.0, n_weight_gathers=1)):
        c = comms.ring_all_reduce_time_s(per_param / 2 * n, 128, link_bytes_per_s=50e9)
        shares.append(c / (c + t))
    assert [round(100 * s, 2) for s in shares] == [3.84, 7.40, 5.65]


def test_zero3_moves_one_and_a_half_all_reduces():
    assert comms.zero_dp_bytes_per_param(3) == 1.5 * comms.zero_dp_bytes_per_param(0)


def test_ring_attention_bytes_closed_form():
    # 3 x 2 (K, V) x (cp-1)/cp x s b g c x 2 bytes
    got = comms.ring_attention_bytes(seq_len=4096, micro_batch=2, n_kv_heads=8, d_head=128, cp=4)
    assert got == pytest.approx(3 * 2 * 0.75 * 4096 * 2 * 8 * 128 * 2, rel=1e-12)
    assert comms.ring_attention_bytes(seq_len=4096, micro_batch=1, n_kv_heads=8, d_head=128,
                                      cp=1) == 0.0


@pytest.mark.parametrize("p, m", [(4, 8), (16, 16), (8, 64)])
def test_schedules_against_their_closed_forms(p, m):
    g = parallelism.pipeline_schedule("gpipe", n_stages=p, n_microbatches=m)
    f = parallelism.pipeline_schedule("1f1b", n_stages=p, n_microbatches=m)
    i = parallelism.pipeline_schedule("interleaved", n_stages=p, n_microbatches=m, n_chunks=4)
    z = parallelism.pipeline_schedule("zero_bubble", n_stages=p, n_microbatches=m)
    d = parallelism.pipeline_schedule("dualpipe", n_stages=p, n_microbatches=m)
    assert g["bubble_fraction"] == pytest.approx(parallelism.pipeline_bubble_fraction(p, m))
    assert f["bubble_fraction"] == g["bubble_fraction"]
    assert i["bubble_fraction"] == pytest.approx(
        parallelism.pipeline_bubble_fraction(p, m, n_chunks=4))
    # ZB-H1 idles (p-1) units against 1F1B's 3(p-1) (Qi et al. 2024, sec. 3.1)
    assert z["bubble_fraction"] == pytest.approx((p - 1) / (3 * m + p - 1))
    assert d["bubble_fraction"] < z["bubble_fraction"] < f["bubble_fraction"]
    # DualPipe idles (p/2-1)(F&B + B - 3W) with B the full backward (DeepSeek-V3, table 2):
    # F&B = 3, B = 2, W = 1 units, so p - 2
    assert d["bubble_fraction"] == pytest.approx((p - 2) / (3 * m + p - 2))
    # memory: GPipe all m, 1F1B p, DualPipe p+1 with two weight copies
    assert g["activation_microbatches"] == m and f["activation_microbatches"] == min(m, p)
    assert d["activation_microbatches"] == p + 1 and d["weight_copies"] == 2.0
    assert i["activation_microbatches"] == pytest.approx(min(m, p) * (1 + (p - 1) / (4 * p)))


def test_schedule_errors_name_the_argument():
    with pytest.raises(ValueError, match="schedule='pipedream' is not known"):
        parallelism.pipeline_schedule("pipedream", n_stages=4, n_microbatches=8)
    with pytest.raises(ValueError, match="needs schedule='interleaved'"):
        parallelism.pipeline_schedule("1f1b", n_stages=4, n_microbatches=8, n_chunks=2)
    with pytest.raises(ValueError, match="even n_stages"):
        parallelism.pipeline_schedule("dualpipe", n_stages=5, n_microbatches=8)


def test_pure_data_parallel_series_case_has_244_tokens_per_gpu():
    # 4M tokens over 16,384 GPUs: less than one 2,048-token sequence each.
    assert parallelism.tokens_per_chip(4e6, n_chips=16_384) == pytest.approx(244.14, abs=0.01)
    with pytest.raises(ValueError, match="256 tokens each, less than one 2048-token sequence"):
        predict.train_step("llama3_70b", "h100_sxm", n_chips=16_384, seq_len=2048,
                           global_batch_tokens=4 * 2**20, zero_stage=3)


def test_held_out_rows_of_a_source_are_its_leave_one_source_out_rows():
    # With the default constants as base, one source's held-out rows are exactly the rows
    # loso_residuals gives it (the same refit on the other sources; float identity).
    loso = {r["run"]: r["rel_error"] for r in predict.loso_residuals()}
    for group in ("palm", "maxtext"):
        rows = predict.validation.held_out_rows(group, base=predict.default_efficiencies())
        assert rows and all(r["rel_error"] == loso[r["run"]] for r in rows)
    with pytest.raises(ValueError, match="group: 'nobody' is not a source"):
        predict.validation.held_out_rows("nobody", base=predict.default_efficiencies())


def test_the_implied_attention_fraction_reproduces_the_measured_step():
    # Charging attention at the implied fraction, every other term unchanged, gives back the
    # published tokens/s of torchtitan's 256K row (closed form; 1e-9 is float rounding).
    run = predict.training_runs()["torchtitan_8b_cp8_256k"]
    eff = predict.fitted_efficiencies("torchtitan")
    eta = predict.validation.implied_attention_fraction(run, efficiencies=eff)
    at = dataclasses.replace(eff, chip_attention=((run.accelerator, eta),))
    got = predict.predict_run(run, efficiencies=at).tokens_per_s
    assert got == pytest.approx(predict.measured_tokens_per_s(run), rel=1e-9)
    assert eta < eff.attention_fraction(run.accelerator)  # the run is over-predicted


def test_megatron_moe_recompute_runs_the_all_to_alls_and_expert_forward_again():
    # Megatron-Core's "moe" recompute module re-runs each MoE layer's forward in the backward:
    # the EP all-to-all term is 6 of 4 passes (exactly 1.5x), the GEMMs grow, memory shrinks
    kw = dict(n_chips=256, tp=4, pp=8, ep=8, interleave=4, seq_len=16384,
              global_batch_tokens=4194304.0, recompute="selective", moe_dispatcher="deepep",
              check_memory=False)  # fmt: skip
    attn = predict.train_step("qwen3_235b_a22b", "h100_sxm", selective_policy="attention", **kw)
    moe = predict.train_step("qwen3_235b_a22b", "h100_sxm", selective_policy="moe", **kw)
    assert moe.parts["ep_all_to_all"] == pytest.approx(1.5 * attn.parts["ep_all_to_all"], rel=1e-9)
    assert moe.parts["gemm"] > attn.parts["gemm"]
    assert moe.memory_parts["activations"] < attn.memory_parts["activations"]


def test_moe_token_permutation_moves_four_bytes_per_routed_copy_and_unit_of_width():
    # (4k + 4) h bytes a token per MoE layer: Qwen3-235B, top-8, h = 4,096, 94 MoE layers
    from llmphys.predict import elementwise, terms, train

    mdl = train._model("qwen3_235b_a22b")
    c = terms._Ctx(mdl=mdl, acc=specs.accelerator("h100_sxm"),
                   eff=predict.default_efficiencies(), tp=1, pp=1, cp=1, ep=8, dp=8, m=1,
                   seq_len=4096, micro_batch_size=1, interleave=1, recompute="none",
                   zero_stage=1, dtype="bf16", grad_bytes=2.0, fsdp_weight_gathers=2,
                   flash_attention=True, sequence_parallel=True, fp8_recipe="",
                   tokens_chip=4096.0, tokens_mb=4096.0)  # fmt: skip
    got = elementwise.memory_bound_bytes_per_token(c)["moe_permute"]
    assert got == (4 * 8 + 4) * 4096 * 94  # exact: a count of bytes


def test_torchtitan_fsdp_on_a100_needs_more_than_one_nic_while_deepspeed_zero3_did_not():
    # the bound comes from the data alone: the FSDP ring bytes per GPU over the measured step.
    # torchtitan's 70B: ~543 GB (8 B/param of 68.98B: FP32 gradients, 2(p-1)/p) in 11.5 s,
    # above a 25 GB/s NIC; DeepSpeed ZeRO-3 175B at 1,536 GPUs: ~1.05 TB in 66.7 s, below it
    # (1% tolerance: rounding)
    v = predict.validation
    tt = v.dp_traffic("torchtitan_a100_llama2_70b_sel_op")
    ds = v.dp_traffic("zero3_175b_1536")
    assert tt["needed_bytes_per_s"] > 1.4 * tt["nic_bytes_per_s"]
    assert ds["needed_bytes_per_s"] < 0.65 * ds["nic_bytes_per_s"]
    assert ds["ring_bytes"] == pytest.approx(6 * 174.6e9 * 1535 / 1536, rel=0.01)


def test_the_dcn_gradient_all_reduce_saturates_with_slice_count():
    # 2(s-1)/s: the per-chip DCN time at 32 slices is at most 2x the 2-slice time (closed form,
    # 31/16 = 1.94), while MaxText's measured v5e step grows tenfold more between them
    v = predict.validation
    x2 = v.dp_traffic("maxtext_v5e_128b_x2")
    x32 = v.dp_traffic("maxtext_v5e_128b_x32")
    x1 = v.dp_traffic("maxtext_v5e_128b_x1")
    assert x1["dcn_gradient_s"] == 0.0
    assert x32["dcn_gradient_s"] / x2["dcn_gradient_s"] == pytest.approx(31 / 16, rel=0.01)
    assert x32["step_s"] - x1["step_s"] > 3 * x32["dcn_gradient_s"]
