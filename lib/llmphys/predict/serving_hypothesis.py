"""Chapter 6's step-overhead hypothesis tested on a source added after it was stated: the median
TPOT of low-load rows predicted with one overhead a step (the model) and with one a layer.

The rule was fixed before the new rows' errors were computed: the batch a replica holds by
Little's law, the steady state of ``serve`` at that batch, the per-layer value fitted on the two
step-overhead calibration rows (``overhead_by_source``), and the verdict in
:func:`overhead_hypothesis_summary`.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import importlib
import statistics
from typing import Any

from .serving_data import predict_serve, residuals, serving_runs
from .serving_studies import overhead_by_source

_serve = importlib.import_module(".serve_model", __package__)


HYPOTHESIS_TEST_SOURCE = "sglang_vllm060_benchmark"
"""The source added after chapter 6 stated the per-layer overhead hypothesis, to test it: SGLang's
v0.3.0-against-vLLM-v0.6.0 online tables (Llama 3.1 8B, 32 layers; Llama 3.1 70B, 80 layers)."""


def overhead_hypothesis_test(source: str = HYPOTHESIS_TEST_SOURCE) -> list[dict[str, Any]]:
    """Median TPOT of a new source's low-load rows, (a) one overhead a step, (b) one a layer.

    For each Poisson-rate row of ``source``: the batch a replica holds, B = round(rate x median
    end-to-end latency / replicas) (Little's law, the published median standing in for the
    unpublished mean), and the steady-state TPOT of ``serve`` at B (a) with the stored constants
    (``SERVE_CONSTANTS``, one ``step_overhead_s`` a step) and (b) with the overhead replaced by
    L x p, L the model's layers and p the mean of :func:`overhead_by_source`'s two
    ``overhead_per_layer_s`` (fitted on the calibration rows, not on ``source``). At one batch
    t_b = t_a - step_overhead_s + L p. Relative errors against the published median TPOT; the
    simulator's median TPOT (the leave-one-source-out residual, constants fitted without the
    source) beside them. Seconds.

    >>> r = overhead_hypothesis_test()[0]  # Llama 3.1 8B on an A100, SGLang, 4 requests/s
    >>> r["n_layers"], r["batch"], round(r["measured_tpot_s"] * 1e3, 2)
    (32, 6, 13.17)
    >>> round(r["tpot_a_s"] * 1e3, 1), round(r["tpot_b_s"] * 1e3, 1)
    (11.3, 10.5)
    """
    per_layer = statistics.mean(r["overhead_per_layer_s"] for r in overhead_by_source())
    k = _serve.CONSTANTS
    sim = {r["run"]: r for r in residuals()}
    out = []
    for key, r in serving_runs().items():
        if r.source_key != source:
            continue
        if r.request_rate_per_s is None or r.measured_e2e_p50_s is None:
            raise ValueError(f"source={source!r}: {key} is not a Poisson-rate row with its E2E")
        tpot = r.measured_tpot_p50_s
        assert tpot is not None, f"{key}: a row of the test publishes its median TPOT"
        mdl = _serve.resolve_model(r.model)
        replicas = r.n_chips // _serve.make_layout(mdl, tp=r.tp, ep=r.ep, pp=r.pp).chips
        batch = max(1, round(r.request_rate_per_s * r.measured_e2e_p50_s / replicas))
        steady = dataclasses.replace(r, arrival="concurrency", concurrency=batch)
        layers = mdl.n_layers
        t_a = predict_serve(steady, k).tpot_s
        per_layer_k = dataclasses.replace(k, step_overhead_s=layers * per_layer)
        t_b = predict_serve(steady, per_layer_k).tpot_s
        out.append(
            {
                "run": key,
                "engine": r.engine_family,
                "model": r.model,
                "n_layers": layers,
                "batch": batch,
                "overhead_a_s": k.step_overhead_s,
                "overhead_b_s": layers * per_layer,
                "measured_tpot_s": tpot,
                "tpot_a_s": t_a,
                "tpot_b_s": t_b,
                "error_a": t_a / tpot - 1.0,
                "error_b": t_b / tpot - 1.0,
                "simulated_tpot_s": sim[key]["predicted_latency"]["tpot_p50"],
            }
        )
    if not out:
        raise ValueError(f"source={source!r}: no rows")
    return out


def overhead_hypothesis_summary(rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The verdict rule fixed before the test: the per-layer form is supported when (1) the median
    |error| over the rows is smaller under it than under one overhead a step and (2) the gap between
    the median signed errors of the deepest and the shallowest model's rows is smaller under it.

    Returns the two layer counts, both medians, both gaps (deepest minus shallowest, signed), the
    shallow and deep rows' median signed errors under each form, the per-layer value and the two
    tests' outcomes.

    >>> s = overhead_hypothesis_summary()
    >>> round(100 * s["median_abs_a"]), round(100 * s["median_abs_b"]), s["supported"]
    (33, 29, True)
    """
    rows = overhead_hypothesis_test() if rows is None else rows
    if not rows:
        raise ValueError("rows: empty")
    lo, hi = min(r["n_layers"] for r in rows), max(r["n_layers"] for r in rows)
    if lo == hi:
        raise ValueError(f"rows: one layer count ({lo}); the test needs two")

    def med(form: str, layers: int | None = None, absolute: bool = False) -> float:
        xs = [r[f"error_{form}"] for r in rows if layers in (None, r["n_layers"])]
        return statistics.median(abs(x) for x in xs) if absolute else statistics.median(xs)

    out: dict[str, Any] = {
        "per_layer_s": rows[0]["overhead_b_s"] / rows[0]["n_layers"],
        "shallow_layers": lo,
        "deep_layers": hi,
    }
    for form in ("a", "b"):
        out[f"median_abs_{form}"] = med(form, absolute=True)
        out[f"shallow_signed_{form}"] = med(form, lo)
        out[f"deep_signed_{form}"] = med(form, hi)
        out[f"gap_{form}"] = out[f"deep_signed_{form}"] - out[f"shallow_signed_{form}"]
    out["smaller_error"] = out["median_abs_b"] < out["median_abs_a"]
    out["smaller_gap"] = abs(out["gap_b"]) < abs(out["gap_a"])
    out["supported"] = out["smaller_error"] and out["smaller_gap"]
    return out
