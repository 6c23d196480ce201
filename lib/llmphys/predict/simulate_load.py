"""Latency against load: one simulation per arrival rate, and the largest rate that keeps the
p90 time per output token under a target (the SLA-bound throughput), set beside the
max-throughput steady state of ``predict.serve``.

Home: chapters/06_economics.ipynb, section "Latency under load".
"""

from __future__ import annotations

import importlib

import numpy as np

from .. import units
from ..specs import Accelerator, Model
from .simulate import simulate_serving

_serve = importlib.import_module(".serve_model", __package__)


def sla_rate_per_s(*, rates_per_s: np.ndarray, tpot_p90_s: np.ndarray, target_s: float) -> float:
    """The largest request rate whose p90 TPOT stays at or under ``target_s``: linear
    interpolation between the last rate that meets it and the first that misses it."""
    rates, tp = np.asarray(rates_per_s, float), np.asarray(tpot_p90_s, float)
    ok = tp <= target_s
    if not ok[0]:
        return 0.0
    if ok.all():
        return float(rates[-1])
    j = int(np.argmin(ok))  # first miss
    r0, r1, t0, t1 = rates[j - 1], rates[j], tp[j - 1], tp[j]
    return float(r0 + (target_s - t0) * (r1 - r0) / (t1 - t0))


def load_sweep(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    rates_per_s: np.ndarray,
    n_requests: int,
    seed: int,
    tpot_target_s: float,
    **kwargs,
) -> dict[str, np.ndarray | float]:
    """TTFT and TPOT percentiles (s) against the request rate, the SLA rate and the max rate.

    One :func:`simulate_serving` run per rate (Poisson arrivals, ``kwargs`` its other arguments,
    each run seeded ``seed``). Returns arrays ``rates_per_s``, ``ttft_p50_s``, ``ttft_p90_s``,
    ``ttft_p99_s``, ``tpot_p50_s``, ``tpot_p90_s``, ``tpot_p99_s``, ``output_tokens_per_s``;
    ``sla_rate_per_s``, the largest rate whose p90 TPOT stays under ``tpot_target_s``
    (:func:`sla_rate_per_s`); and ``max_rate_per_s``, ``max_batch`` and ``max_tpot_s``, the rate
    ``serve`` sustains at the largest batch that fits (the max-throughput table's figure, in
    requests/s), that batch and its TPOT.
    """
    units.check_positive("tpot_target_s", tpot_target_s)
    rates = np.asarray(rates_per_s, dtype=float)
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "ttft_p50_s",
            "ttft_p90_s",
            "ttft_p99_s",
            "tpot_p50_s",
            "tpot_p90_s",
            "tpot_p99_s",
            "output_tokens_per_s",
        )
    }
    for r in rates:
        sim = simulate_serving(
            model,
            accelerator,
            arrival_rate_per_s=float(r),
            n_requests=n_requests,
            rng=np.random.default_rng(seed),
            **kwargs,
        )
        for q in (50, 90, 99):
            out[f"ttft_p{q}_s"].append(sim.percentile("ttft_s", q))
            out[f"tpot_p{q}_s"].append(sim.percentile("tpot_s", q))
        out["output_tokens_per_s"].append(sim.output_tokens_per_s)
    res: dict[str, np.ndarray | float] = {"rates_per_s": rates}
    res.update({k: np.asarray(v) for k, v in out.items()})
    res["sla_rate_per_s"] = sla_rate_per_s(
        rates_per_s=rates, tpot_p90_s=np.asarray(out["tpot_p90_s"]), target_s=tpot_target_s
    )
    ins, outs = kwargs["input_tokens"], kwargs["output_tokens"]
    top = _serve.serve(
        model,
        accelerator,
        n_chips=kwargs["n_chips"],
        tp=kwargs.get("tp", 1),
        ep=kwargs.get("ep", 1),
        batch_size=None,
        input_tokens=round(ins.mean),
        output_tokens=round(outs.mean),
        weight_dtype=kwargs.get("weight_dtype", "bf16"),
        kv_dtype=kwargs.get("kv_dtype", "bf16"),
        check_memory=False,
    )
    res["max_rate_per_s"] = top.output_tokens_per_s / round(outs.mean)
    res["max_batch"] = float(top.batch_size)
    res["max_tpot_s"] = top.tpot_s
    return res
