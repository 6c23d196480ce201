"""Published serving measurements, the serving model's calibration and its out-of-sample errors.

``data/serving_runs.toml`` holds every row (its header states the selection rule and marks the
calibration rows, ``fit_row = true``). Three constants of :class:`predict.serve.ServeConstants`
are fitted, once, on those rows (:func:`calibration_runs`); everything else is sourced. Errors are
reported leave-one-source-out: for each source the constants are refitted on the calibration rows
of the other sources, and that source's rows are predicted with them (a constant no other source's
row pins down keeps its all-rows value, and :func:`fold_fallbacks` says so). Throughput rows are
timed by ``predict.serve`` in its steady state; rows whose source publishes latency percentiles
under a stated load are run through ``predict.simulate_serving``.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import re
import statistics
from typing import Any

import numpy as np

from .. import units
from . import train as _train

# the modules themselves: the package's names serve and simulate_serving are the functions
_serve = importlib.import_module(".serve_model", __package__)
_sim = importlib.import_module(".simulate", __package__)
from .serve_model import ServeConstants  # noqa: E402  (names for the annotations)
from .simulate import LengthDistribution, Simulation  # noqa: E402

SHAREGPT_SIGMA = 1.0
"""Log-space spread of the ShareGPT lengths the simulator draws (lognormal with the run's mean):
an assumption, neither fitted nor measured here; the sources give only total tokens."""

SHAREGPT_FILTER = _sim.LengthFilter(min_tokens=4, max_prompt_tokens=1024, max_total_tokens=2048)
"""The pairs vLLM's benchmark keeps from ShareGPT (``vllm bench serve --dataset-name sharegpt``,
vllm/benchmarks/datasets.py: ``is_valid_sequence`` drops a prompt or completion under 4 tokens, a
prompt over 1,024 and a pair over 2,048, and the sampler takes the next conversation): an output
may run to 2,048 less its prompt. The simulated lengths are rescaled to the run's published
totals (``LengthFilter.exact_means``)."""

SGLANG_NEW_TOKEN_RATIO = 0.7
"""SGLang's initial new_token_ratio, the share of a running request's remaining output its
PrefillAdder keeps free before it admits a prompt (SGLANG_INIT_NEW_TOKEN_RATIO 0.7 times
schedule_conservativeness 1.0: sgl-project/sglang v0.5.3.post3 and v0.5.5.post1,
python/sglang/srt/environ.py and managers/scheduler.py; v0.3.0, global_config.py
init_new_token_ratio 0.7, to which tp_worker.py resets it whenever the server is idle). v0.5's
ratio starts there at launch and only falls (``simulate_types.RATIO_DECAY``) or is reset by a
retraction: the few hundred decode steps of the benchmark's one test prompt before a run would
lower it by up to about 0.2, not simulated. Every SGLang row runs with it."""

SEED = 2026
"""Seed of the simulations behind the latency rows (one ``numpy.random.Generator`` per row)."""

from .serving_rows import (  # noqa: E402  (re-exported: the package reads them here)
    ServingRun,
    calibration_runs,
    serving_runs,
)


def _lengths(run: ServingRun) -> tuple[LengthDistribution, LengthDistribution]:
    if run.length_distribution == "fixed":
        return (
            LengthDistribution(mean=run.input_tokens),
            LengthDistribution(mean=run.output_tokens),
        )
    kw: dict[str, Any] = {"kind": "lognormal", "sigma": SHAREGPT_SIGMA}
    return (
        LengthDistribution(mean=run.input_tokens, **kw),
        LengthDistribution(mean=run.output_tokens, **kw),
    )


def _limits(run: ServingRun) -> tuple[int, int]:
    if "trtllm-bench throughput" in run.engine:  # the tool sizes the engine from the dataset
        return _serve.bench_engine_limits(
            _serve.resolve_model(run.model),
            _serve.resolve_accelerator(run.accelerator),
            n_chips=run.tp * run.pp,
            weight_bytes=units.bytes_per_element(run.weight_dtype),
            kv_bytes=units.bytes_per_element(run.kv_dtype),
            input_tokens=run.input_tokens,
            output_tokens=run.output_tokens,
        )
    return _serve.ENGINE_LIMITS.get(run.engine_family, (_serve.MAX_BATCH, _serve.CHUNK_TOKENS))


def sglang_mem_fraction(engine: str, *, tp: int, gpu_mib: float) -> float | None:
    """SGLang's default mem_fraction_static (weights plus KV pool over the GPU's memory) at the
    version ``engine`` names, or None for a version not read. v0.3.0 (python/sglang/srt/
    server_args.py, ServerArgs.__post_init__) takes it from the TP size alone; v0.5.3.post3 and
    v0.5.5.post1 (server_args.py, _handle_gpu_memory_settings) from the GPU: below 90 GiB and at
    60 GiB or more it runs chunked_prefill_size 8,192 and cuda_graph_max_bs 256 (512 at TP >= 4),
    and reserves 512 + 1.5 chunk + 2 max_bs + 1,024 tp/8 MiB, at least 10 GiB.

    >>> sglang_mem_fraction("SGLang v0.5.5.post1", tp=8, gpu_mib=81559)  # H100 80 GB
    0.818
    """
    v = re.match(r"sglang v(\d+)\.(\d+)\.(\d+)", engine.lower())
    ver = tuple(int(x) for x in v.groups()) if v else ()
    if ver == (0, 3, 0):
        return next(
            f for t, f in ((16, 0.79), (8, 0.83), (4, 0.85), (2, 0.87), (1, 0.88)) if tp >= t
        )
    gib, chunk = gpu_mib / 1024, _serve.ENGINE_LIMITS["sglang"][1]  # chunked_prefill_size
    if (0, 5, 3) <= ver <= (0, 5, 5) and 60 <= gib < 90:
        mib = 512 + 1.5 * chunk + 2 * (512 if tp >= 4 else 256) + tp / 8 * 1024
        return round(1 - max(mib / 1024, 10.0) / gib, 3)
    return None


def _kv_rule(run: ServingRun) -> tuple[str, float]:
    if run.engine_family == "sglang":
        hbm = _serve.resolve_accelerator(run.accelerator).hbm_bytes
        f = sglang_mem_fraction(run.engine, tp=run.tp, gpu_mib=hbm / 2**20)
        if f is not None:
            return ("static", f)
    return _serve.KV_MEMORY_RULES.get(run.engine_family, _serve.KV_MEMORY_RULES["trtllm"])


def predict_serve(run: ServingRun | str, constants: ServeConstants = _serve.CONSTANTS):
    """``serve`` on a published deployment's layout and workload (steady state)."""
    r = serving_runs()[run] if isinstance(run, str) else run
    if r.arrival == "rate":
        raise ValueError(f"{r.key}: a Poisson-rate row has no steady batch; simulate it")
    seqs, budget = _limits(r)
    decode_only = r.arrival == "decode_only"
    batch = r.concurrency if r.arrival in ("decode_only", "concurrency") else None
    return _serve.serve(
        r.model,
        r.accelerator,
        n_chips=r.n_chips,
        tp=r.tp,
        ep=r.ep,
        pp=r.pp,
        batch_size=batch,
        input_tokens=r.input_tokens,
        output_tokens=r.output_tokens,
        weight_dtype=r.weight_dtype,
        kv_dtype=r.kv_dtype,
        math_dtype=r.math_dtype,
        max_batch=seqs,
        chunk_tokens=budget,
        kv_memory_rule=_kv_rule(r),
        kv_reserve_full=_serve.KV_RESERVES_FULL_SEQUENCE.get(r.engine_family, False),
        decode_only=decode_only,
        two_batch_overlap=r.two_batch_overlap,
        constants=constants,
        check_memory=False,
    )


def predict_simulated(
    run: ServingRun | str, constants: ServeConstants = _serve.CONSTANTS
) -> Simulation:
    """``simulate_serving`` on a published run's workload (its requests, lengths and load)."""
    r = serving_runs()[run] if isinstance(run, str) else run
    seqs, budget = _limits(r)
    ins, outs = _lengths(r)
    return _sim.simulate_serving(
        r.model,
        r.accelerator,
        n_chips=r.n_chips,
        tp=r.tp,
        ep=r.ep,
        pp=r.pp,
        input_tokens=ins,
        output_tokens=outs,
        n_requests=(r.n_requests or max(100, 10 * r.concurrency)) + r.warmup_requests,
        n_warmup=r.warmup_requests,
        concurrency=r.concurrency if r.arrival == "concurrency" else None,
        arrival_rate_per_s=r.request_rate_per_s,
        scheduler=_sim.Scheduler(
            max_num_seqs=seqs,
            max_num_batched_tokens=budget,
            kv_memory_rule=_kv_rule(r),
            reserve_output=r.scheduler_policy == "guaranteed_no_evict",
            chunked_prefill=r.chunked_prefill,
            mixed_prefill=r.mixed_prefill,
            overlap=r.overlap_scheduler,
            steps_per_round=r.scheduler_steps,
            new_token_ratio=SGLANG_NEW_TOKEN_RATIO if r.engine_family == "sglang" else 0.0,
            request_intake_s=r.request_intake_s,
        ),
        weight_dtype=r.weight_dtype,
        kv_dtype=r.kv_dtype,
        math_dtype=r.math_dtype,
        two_batch_overlap=r.two_batch_overlap,
        constants=constants,
        rng=np.random.default_rng(SEED),
        length_filter=SHAREGPT_FILTER if r.length_distribution == "sharegpt" else None,
    )


def predict_figures(
    run: ServingRun | str, constants: ServeConstants = _serve.CONSTANTS
) -> dict[str, float]:
    """Predicted output tokens/s and every latency figure the row publishes (seconds)."""
    r = serving_runs()[run] if isinstance(run, str) else run
    if r.length_distribution == "sharegpt" or r.arrival in ("concurrency", "rate"):
        sim = predict_simulated(r, constants)
        out = {
            "output_tokens_per_s": sim.output_tokens_per_s,
            "ttft_p50": sim.percentile("ttft_s", 50),
            "ttft_mean": float(np.mean(sim.ttft_s)),
            "tpot_p50": sim.percentile("tpot_s", 50),
            "tpot_p99": sim.percentile("tpot_s", 99),
            "tpot_mean": float(np.mean(sim.tpot_s)),
        }
    else:
        s = predict_serve(r, constants)
        out = {
            "output_tokens_per_s": s.output_tokens_per_s,
            "tpot_mean": s.tpot_s,
            "tpot_p50": s.tpot_s,
            "ttft_p50": s.ttft_s,
            "ttft_mean": s.ttft_s,
            "tpot_p99": s.tpot_worst_s,
        }
    return out


def _calibration_loss(runs: list[ServingRun], c: ServeConstants) -> float:
    """Squared log error of the steady state (``predict_serve``) on the calibration rows: in TPOT
    (the published median, else the mean) for a row that pins the step overhead, in output
    tokens/s for a row that pins a GEMM rate."""
    loss = 0.0
    for r in runs:
        s = predict_serve(r, c)
        if r.fit_constant == "step_overhead_s":  # the step at the closed loop's batch
            meas = r.measured_tpot_p50_s or r.measured_tpot_mean_s
            assert meas is not None, f"{r.key}: a step-overhead calibration row needs its TPOT"
            loss += math.log(s.tpot_s / meas) ** 2
        else:
            assert r.measured_output_tokens_per_s, f"{r.key}: a GEMM-rate row needs its rate"
            loss += math.log(s.output_tokens_per_s / r.measured_output_tokens_per_s) ** 2
    return loss


def _identifies(run: ServingRun) -> set[str]:
    """The fitted constant a calibration row pins down (its ``fit_constant``): the dense GEMM
    rate (a dense model at max throughput), the expert GEMM rate (a MoE at max throughput or a
    saturated decode pool), the step overhead (a small closed loop)."""
    return {run.fit_constant}


_BOUNDS = {
    "gemm_efficiency": (0.2, 1.0),
    "expert_gemm_efficiency": (0.05, 1.0),
    "step_overhead_s": (0.0, 2e-2),
}


@functools.cache
def calibrate(exclude_source: str | None = None) -> ServeConstants:
    """The fitted constants on :func:`calibration_runs` (least squares in log throughput, log
    TPOT for the closed-loop row), leaving out ``exclude_source``'s rows.

    Coordinate descent, three rounds of golden-section searches within ``_BOUNDS``. A constant
    that no remaining row pins down (:func:`_identifies`) keeps its all-rows value, and
    :func:`fold_fallbacks` says so.
    """
    runs = [serving_runs()[k] for k in calibration_runs()]
    runs = [r for r in runs if r.source_key != exclude_source]
    if not runs:
        raise ValueError(f"exclude_source={exclude_source!r} leaves no calibration row")
    c = _serve.CONSTANTS if exclude_source is None else calibrate(None)
    free = set().union(*(_identifies(r) for r in runs))
    for _ in range(3):
        for name in _BOUNDS:
            if name not in free:
                continue
            lo, hi = _BOUNDS[name]
            base = c

            def loss(x: float, n: str = name, b: ServeConstants = base) -> float:
                return _calibration_loss(runs, dataclasses.replace(b, **{n: x}))

            best = _train.golden_section_min(loss, lo, hi, n_iter=40)
            c = dataclasses.replace(c, **{name: best})
    return c


def fold_fallbacks(source: str) -> tuple[str, ...]:
    """The fitted constants that leaving ``source`` out cannot refit (they keep the all-rows
    fit, so that fold is not out-of-source for them)."""
    runs = [serving_runs()[k] for k in calibration_runs()]
    free = set().union(*(_identifies(r) for r in runs if r.source_key != source))
    return tuple(n for n in _BOUNDS if n not in free)


@functools.cache
def residuals() -> tuple[dict[str, Any], ...]:
    """One row per published measurement: measured and leave-one-source-out predicted figures.

    ``rel_error`` is (predicted - measured) / measured throughput (None where the row publishes
    none: a Poisson-rate row's output rate is its arrival rate); ``latency_errors`` maps each
    published latency figure to its relative error. ``calibration`` marks :func:`calibration_runs`.
    """
    rows = []
    for key, run in serving_runs().items():
        c = calibrate(run.source_key)
        pred = predict_figures(run, c)
        meas = run.measured_output_tokens_per_s
        lat = {f: (pred[f] - v) / v for f, v in run.measured_latency().items()}
        rows.append(
            {
                "run": key,
                "source": run.source_key,
                "engine": run.engine_family,
                "model": run.model,
                "moe": run.is_moe,
                "accelerator": run.accelerator,
                "n_chips": run.n_chips,
                "input_tokens": run.input_tokens,
                "output_tokens": run.output_tokens,
                "measured": meas,
                "predicted": pred["output_tokens_per_s"],
                "rel_error": None if meas is None else (pred["output_tokens_per_s"] - meas) / meas,
                "latency_errors": lat,
                "predicted_latency": {f: pred[f] for f in lat},
                "measured_latency": run.measured_latency(),
                "calibration": run.fit_row,
            }
        )
    return tuple(rows)


SERVING_BARS: dict[str, tuple[str, float]] = {
    "median": ("<=", 0.15),
    "worst": ("<=", 0.40),
    "median_signed": ("abs<=", 0.05),
    "latency_median": ("<=", 0.25),
    "latency_worst": ("<=", 0.50),
    "moe_median": ("<=", 0.20),
}
"""Issue 28's bars on ``loso_summary()["all"]``: throughput median <= 15%, worst <= 40%,
|median signed| <= 5%; latency median <= 25%, worst <= 50%; MoE rows' median <= 20%
(``validation.bar_verdicts(summary, SERVING_BARS)``)."""


def loso_summary() -> dict[str, dict[str, float]]:
    """Leave-one-source-out error summary: throughput median, worst and median signed; latency
    median and worst; MoE rows' throughput median; and each source's throughput median."""
    rows = residuals()
    tput = [r["rel_error"] for r in rows if r["rel_error"] is not None]
    lat = [e for r in rows for e in r["latency_errors"].values()]
    moe = [abs(r["rel_error"]) for r in rows if r["moe"] and r["rel_error"] is not None]
    out = {
        "all": {
            "n_rows": len(rows),
            "n_throughput": len(tput),
            "median": statistics.median(map(abs, tput)),
            "worst": max(map(abs, tput)),
            "median_signed": statistics.median(tput),
            "n_latency": len(lat),
            "latency_median": statistics.median(map(abs, lat)),
            "latency_worst": max(map(abs, lat)),
            "moe_median": statistics.median(moe),
            "n_moe": len(moe),
        }
    }
    for src in sorted({r["source"] for r in rows}):
        n = sum(r["source"] == src for r in rows)
        e = [r["rel_error"] for r in rows if r["source"] == src and r["rel_error"] is not None]
        le = [x for r in rows if r["source"] == src for x in r["latency_errors"].values()]
        out[src] = {
            "n_rows": n,
            "n_throughput": len(e),
            "median": statistics.median(map(abs, e)) if e else math.nan,
            "worst": max(map(abs, e), default=math.nan),
            "median_signed": statistics.median(e) if e else math.nan,
            "n_latency": len(le),
            "latency_median": statistics.median(map(abs, le)) if le else math.nan,
        }
    return out
