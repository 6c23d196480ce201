"""What chapter 6 reads from the serving validation: the leave-one-source-out table as text, the
subsets of the residuals its lessons come from, the step a max-throughput row implies, what a
burst benchmark prints beside its throughput, and DeepSeek-V3's decode pool worked through.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import statistics
from typing import Any

from .. import inference
from .serving_data import loso_summary, predict_serve, residuals, serving_runs

_serve = importlib.import_module(".serve_model", __package__)
_data = importlib.import_module(".serving_data", __package__)


def format_loso_table() -> str:
    """The leave-one-source-out summary as a text table (one line per source, then all rows)."""
    s = loso_summary()
    lines = [
        f"{'source':<26}{'rows':>5}{'median':>8}{'worst':>8}{'signed':>8}{'lat n':>6}{'lat med':>8}"
    ]

    def pct(x: float, sign: str = "") -> str:  # a source with no throughput row prints n/a
        return f"{'n/a':>8}" if math.isnan(x) else f"{x:>{sign}8.1%}"

    for k, v in s.items():
        lines.append(
            f"{k:<26}{v['n_rows']:>5}{pct(v['median'])}{pct(v['worst'])}"
            f"{pct(v['median_signed'], '+')}{v['n_latency']:>6}{pct(v['latency_median'])}"
        )
    a = s["all"]
    lines.append(
        f"MoE rows: {a['n_moe']}, throughput median {a['moe_median']:.1%}; latency worst "
        f"{a['latency_worst']:.1%}"
    )
    return "\n".join(lines)


DEEPSEEK_NODE_CHIPS = 8
"""GPUs per node in DeepSeek's and SGLang's figures (8-GPU H800 and H100 servers)."""


def deepseek_decode_study(run_key: str | None = None) -> dict[str, Any]:
    """DeepSeek-V3's expert-parallel decode pool worked through, against its published figures.

    For a decode-only row (by default the one ``data/serving_runs.toml`` marks
    ``worked_example = true``): the per-GPU batch, the tokens each routed expert sees per step
    (B k / E over the whole EP group), the per-operator balance batches of the chip
    (``inference.balance_batch_by_operator``), the step's parts (``serve``), the all-to-all time
    before overlap, and predicted against published per-node output tokens/s and TPOT, with the
    constants fitted without the row's source (``calibrate(source)``: the day-6 row calibrates
    the experts' GEMM rate, so the all-rows constants would predict it in sample).
    """
    if run_key is None:
        run_key = next(k for k, v in serving_runs().items() if v.worked_example)
    r = serving_runs()[run_key]
    m = _serve.resolve_model(r.model)
    acc = _serve.resolve_accelerator(r.accelerator)
    assert m.moe is not None, f"{run_key}: a MoE row"
    c = _data.calibrate(r.source_key)
    s = predict_serve(r, c)
    cost = _serve.step_cost(
        m,
        acc,
        layout=_serve.make_layout(m, tp=r.tp, ep=r.ep, overlap=r.two_batch_overlap),
        weight_dtype=r.weight_dtype,
        kv_dtype=r.kv_dtype,
        constants=c,
    )
    _, a2a_s = cost.collectives_s(float(r.concurrency))
    ctx = float(r.concurrency * r.input_tokens)
    one_batch = dataclasses.replace(cost.layout, two_batch_overlap=False)
    once = dataclasses.replace(cost, layout=one_batch)
    nodes = r.n_chips / DEEPSEEK_NODE_CHIPS
    return {
        "n_gpus": r.n_chips,
        "batch_per_gpu": r.concurrency / r.n_chips,
        "tokens_per_expert": r.concurrency * m.moe.n_experts_per_token / m.moe.n_experts,
        "balance_batch": inference.balance_batch_by_operator(m, acc, weight_dtype=r.weight_dtype),
        "parts_s": s.parts,
        "step_s": s.step_s,
        "all_to_all_s": a2a_s,
        "weights_s": cost.parts(float(r.concurrency), ctx, 0.0, 0.0)["weights"],
        "weights_one_batch_s": once.parts(float(r.concurrency), ctx, 0.0, 0.0)["weights"],
        "predicted_per_node": s.output_tokens_per_s / nodes,
        "measured_per_node": (r.measured_output_tokens_per_s or math.nan) / nodes,
        "predicted_tpot_s": s.tpot_s,
        "measured_tpot_s": r.measured_tpot_mean_s,
    }


def implied_step(run_key: str) -> dict[str, float]:
    """The step a published max-throughput row implies (seconds), at the model's own batch.

    Throughput is replicas x B e / t_step, so at the batch ``serve`` predicts (the engine's cache
    and limits; no fitted constant enters it) the measured rate implies t_implied = t_step x
    (predicted rate / measured rate) = replicas x B e / measured rate. Where two chips of one table
    imply the same step for batches that differ twofold, the step has a floor that neither the
    batch's bytes nor its FLOP set.

    >>> r = implied_step("trtllm_qwen3_235b_a22b_h100_tp8_128_2048")
    >>> r["batch"], round(r["predicted_step_s"] * 1e3), round(r["implied_step_s"] * 1e3)
    (953, 40, 48)
    """
    r = serving_runs()[run_key]
    if r.measured_output_tokens_per_s is None:
        raise ValueError(f"run_key={run_key!r}: the row publishes no throughput")
    s = predict_serve(r)
    return {
        "batch": s.batch_size,
        "predicted_step_s": s.step_s,
        "implied_step_s": s.step_s * s.output_tokens_per_s / r.measured_output_tokens_per_s,
    }


def moe_by_chip(source: str = "trtllm_v1_perf_overview") -> dict[str, float]:
    """Median signed leave-one-source-out error of ``source``'s MoE rows, by accelerator key."""
    rows = [r for r in residuals() if r["moe"] and r["source"] == source]
    return {
        acc: statistics.median(r["rel_error"] for r in rows if r["accelerator"] == acc)
        for acc in sorted({r["accelerator"] for r in rows})
    }


def miss_summary() -> dict[str, float]:
    """The subsets of :func:`residuals` chapter 6 reads its lessons from: the TensorRT-LLM dense
    rows' median |error|, the worst dense row, the MoE rows by source (by chip:
    :func:`moe_by_chip`), the latency figures at low load (closed loop) and under a burst, and
    NIM's concurrency sweep below and above the knee, as medians of signed relative errors; the
    MoE rows outside TensorRT-LLM's page (how many, how many over-predicted); the range of signed
    errors of its dense prompt-heavy rows (2,048 tokens in or more, 500 out or fewer)."""
    rows = residuals()
    dense_trt = [r for r in rows if r["source"] == "trtllm_v1_perf_overview" and not r["moe"]]
    scored = [r for r in rows if r["rel_error"] is not None]  # rows that publish a throughput
    worst = max((r for r in scored if not r["moe"]), key=lambda r: abs(r["rel_error"]))

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else math.nan

    low = [
        r
        for r in rows
        if serving_runs()[r["run"]].arrival == "concurrency" and "ttft_p50" in r["latency_errors"]
    ]
    nim = [r for r in scored if r["source"] == "nvidia_nim_benchmarking"]
    light = [r for r in nim if serving_runs()[r["run"]].concurrency <= 50]
    heavy = [r for r in nim if serving_runs()[r["run"]].concurrency > 50]
    burst = [r for r in rows if r["latency_errors"] and serving_runs()[r["run"]].arrival == "burst"]
    moe_other = [r for r in scored if r["moe"] and r["source"] != "trtllm_v1_perf_overview"]
    prompt_heavy = [  # thousands of prompt tokens, a few hundred out: prefill sets the step
        r["rel_error"] for r in dense_trt if r["input_tokens"] >= 2048 and r["output_tokens"] <= 500
    ]
    return {
        "trt_dense_median": med([abs(r["rel_error"]) for r in dense_trt]),
        "worst_dense_error": worst["rel_error"],
        "worst_dense_run": worst["run"],
        "trt_moe_median_signed": med(
            [r["rel_error"] for r in rows if r["moe"] and r["source"] == "trtllm_v1_perf_overview"]
        ),
        "gpustack_moe_median_signed": med(
            [r["rel_error"] for r in rows if r["moe"] and r["source"] == "gpustack_performance_lab"]
        ),
        "low_load_ttft_median_signed": med([r["latency_errors"]["ttft_p50"] for r in low]),
        "low_load_tpot_median_signed": med([r["latency_errors"]["tpot_p50"] for r in low]),
        "burst_ttft_median_signed": med([r["latency_errors"]["ttft_p50"] for r in burst]),
        "burst_tpot_median_signed": med([r["latency_errors"]["tpot_p50"] for r in burst]),
        "nim_light_tpot_median_signed": med([r["latency_errors"]["tpot_mean"] for r in light]),
        "nim_light_ttft_median_signed": med([r["latency_errors"]["ttft_mean"] for r in light]),
        "nim_heavy_tpot_median_signed": med([r["latency_errors"]["tpot_mean"] for r in heavy]),
        "nim_heavy_ttft_median_signed": med([r["latency_errors"]["ttft_mean"] for r in heavy]),
        "nim_throughput_median": med([abs(r["rel_error"]) for r in nim]),
        "moe_other_n": len(moe_other),
        "moe_other_over": sum(r["rel_error"] > 0 for r in moe_other),
        "prompt_heavy_min_signed": min(prompt_heavy, default=math.nan),
        "prompt_heavy_max_signed": max(prompt_heavy, default=math.nan),
    }


def multistep_rows() -> list[dict[str, Any]]:
    """The rows run with multi-step scheduling (``scheduler_steps`` > 1), each simulated with its
    rounds and with one step a round (constants fitted without the row's source): the signed
    relative errors of their TTFT and TPOT both ways, and the published median ITL over the
    median TPOT, about the round's steps when tokens reach the client once a round.

    >>> [round(r["itl_over_tpot"], 1) for r in multistep_rows()][:2]
    [9.1, 9.3]
    """
    out = []
    by_run = {r["run"]: r for r in residuals()}
    for key, r in serving_runs().items():
        if r.scheduler_steps == 1:
            continue
        one = _data.predict_simulated(
            dataclasses.replace(r, scheduler_steps=1), _data.calibrate(r.source_key)
        )
        off = {"ttft_p50": one.percentile("ttft_s", 50), "tpot_p50": one.percentile("tpot_s", 50)}
        meas = r.measured_latency()
        row = {"run": key, "steps": r.scheduler_steps}
        for f in ("ttft_p50", "tpot_p50"):
            row[f"{f}_error"] = by_run[key]["latency_errors"][f]
            row[f"{f}_error_one_step"] = off[f] / meas[f] - 1
        row["itl_over_tpot"] = (r.measured_itl_p50_s or math.nan) / meas["tpot_p50"]
        out.append(row)
    return out


def multistep_summary() -> dict[str, float]:
    """:func:`multistep_rows` in medians: signed TTFT and TPOT errors with the rounds and with one
    step a round, the range of the published ITL over TPOT, and, for comparison, the median signed
    TTFT error of the same sources' rows on engines without rounds (their other engine)."""
    rows = multistep_rows()
    srcs = {serving_runs()[r["run"]].source_key for r in rows}
    other = [
        r["latency_errors"]["ttft_p50"]
        for r in residuals()
        if r["source"] in srcs
        and serving_runs()[r["run"]].scheduler_steps == 1
        and "ttft_p50" in r["latency_errors"]
    ]
    out = {
        f"{f}{way}": statistics.median(r[f + way] for r in rows)
        for f in ("ttft_p50_error", "tpot_p50_error")
        for way in ("", "_one_step")
    }
    out["itl_over_tpot_min"] = min(r["itl_over_tpot"] for r in rows)
    out["itl_over_tpot_max"] = max(r["itl_over_tpot"] for r in rows)
    out["other_engine_ttft_p50_error"] = statistics.median(other)
    out["steps"] = rows[0]["steps"]
    return out


def burst_diagnostics() -> list[dict[str, Any]]:
    """What a burst benchmark prints beside its throughput, measured against the simulator.

    For every burst row that records vLLM's benchmark's duration, peak one-second output and peak
    concurrency (``data/serving_runs.toml``): those three, measured and simulated (constants fitted
    without the row's source); N / peak, the most a step can have taken if the N requests open in
    the peak second each received a chunk a step (an upper bound: the benchmark counts chunks, not
    tokens, and an open request may still be queued); the median gap between a request's chunks
    (``itl_p50_s``, the decode step itself, where the row prints it); and the step cost the model
    gives N decoding sequences with caches of I + O/2 tokens. Seconds, tokens (chunks)/s.
    """
    out = []
    for key, r in serving_runs().items():
        if r.arrival != "burst" or not r.measured_peak_output_tokens_per_s:
            continue
        c = _data.calibrate(r.source_key)
        sim = _data.predict_simulated(r, c)
        n = int(r.measured_peak_concurrency or 0)
        mdl, acc = _serve.resolve_model(r.model), _serve.resolve_accelerator(r.accelerator)
        cost = _serve.step_cost(
            mdl,
            acc,
            layout=_serve.make_layout(mdl, tp=r.tp, ep=r.ep, pp=r.pp),
            weight_dtype=r.weight_dtype,
            kv_dtype=r.kv_dtype,
            math_dtype=r.math_dtype,
            constants=c,
        )
        kv = n * (r.input_tokens + r.output_tokens / 2)
        out.append(
            {
                "run": key,
                "engine": r.engine_family,
                "duration_s": r.measured_duration_s,
                "sim_duration_s": sim.duration_s,
                "peak_tokens_per_s": r.measured_peak_output_tokens_per_s,
                "sim_peak_tokens_per_s": sim.peak_output_tokens_per_s,
                "peak_concurrency": n,
                "implied_step_s": n / r.measured_peak_output_tokens_per_s,
                "itl_p50_s": r.measured_itl_p50_s,
                "sim_ttft_p50_s": sim.percentile("ttft_s", 50),
                "ttft_p50_s": r.measured_ttft_p50_s,
                "model_step_s": cost.step_s(n, kv, 0, 0.0),
            }
        )
    return out


def intake_study() -> dict[str, Any]:
    """vLLM v0.11.0's serial chat-template parse (``ServingRun.request_intake_s``) on the rows
    that pay it: the seconds a request, the seconds the largest burst takes to reach the engine,
    and each row's median-TTFT error (constants fitted without its source) with the parse
    charged (as scored) and without it. Errors are predicted / measured - 1."""
    res = {r["run"]: r for r in residuals()}
    rows = [r for r in serving_runs().values() if r.request_intake_s]
    out: dict[str, Any] = {"intake_s": rows[0].request_intake_s, "rows": []}
    out["burst_intake_s"] = max((r.n_requests or 0) * r.request_intake_s for r in rows)
    for r in rows:
        bare = _data.predict_figures(dataclasses.replace(r, api=""), _data.calibrate(r.source_key))
        out["rows"].append(
            {
                "run": r.key,
                "arrival": r.arrival,
                "ttft_error": res[r.key]["latency_errors"]["ttft_p50"],
                "ttft_error_uncharged": bare["ttft_p50"] / r.measured_ttft_p50_s - 1,
            }
        )
    return out


def constant_by_source(name: str) -> dict[str, float]:
    """Each fitted constant is pinned by calibration rows of two sources: the value ``name``
    takes when fitted on one source's rows alone (``calibrate`` of the fold that leaves the other
    out), by source. ``ValueError`` unless ``name`` is pinned by exactly two sources.

    >>> {s: round(v, 2) for s, v in constant_by_source("expert_gemm_efficiency").items()}
    {'deepseek_day6': 0.13, 'trtllm_v1_perf_overview': 0.39}
    """
    rows = [serving_runs()[k] for k in _data.calibration_runs()]
    sources = sorted({r.source_key for r in rows if r.fit_constant == name})
    if len(sources) != 2:
        raise ValueError(f"name={name!r} is pinned by {sources}; two sources are needed")
    a, b = sources
    return {a: getattr(_data.calibrate(b), name), b: getattr(_data.calibrate(a), name)}


def overhead_by_source() -> list[dict[str, Any]]:
    """The step overhead each source's calibration row gives on its own, per step and per layer.

    For each of the two sources with a row that pins ``step_overhead_s``: the overhead fitted on
    that source alone (:func:`constant_by_source`), that row's model and its layer count, and the
    overhead over the layers (seconds).

    >>> [(r["source"], round(r["overhead_s"] * 1e3, 1)) for r in overhead_by_source()]
    [('gpustack_performance_lab', 2.5), ('nvidia_nim_benchmarking', 5.5)]
    """
    alone = constant_by_source("step_overhead_s")
    pins = [serving_runs()[k] for k in _data.calibration_runs()]
    out = []
    for src, t in alone.items():
        row = next(r for r in pins if r.fit_constant == "step_overhead_s" and r.source_key == src)
        layers = _serve.resolve_model(row.model).n_layers
        out.append(
            {
                "source": src,
                "run": row.key,
                "model": row.model,
                "n_layers": layers,
                "overhead_s": t,
                "overhead_per_layer_s": t / layers,
            }
        )
    return out
