"""The inverse question of the serving model: the cheapest deployment that meets a target.

For every chip (with a price), weight and KV precision, and replica layout (tp, ep, pp) that
the model can shard, one replica is timed at the largest batch whose time per output token
meets ``tpot_p90_s`` (the most that fit when there is no target); the load R (output
tokens/s) then needs ceil(R / r) replicas of r tokens/s each. A deployment is kept when its
time to first token meets ``ttft_p90_s``, and the list is ranked by its cost per hour at the
dated price of ``data/prices.toml`` (``cost.chip_hour_price``), cheapest first.

The screen uses the steady-state model (``predict.serve``): TPOT there is the mean gap
between a sequence's tokens and TTFT that of a request that finds a free slot. The cheapest
``SIM_CANDIDATES`` rows that pass it are then run through the scheduler simulation
(``predict.simulate_serving``: one replica, Poisson arrivals at its share of the load,
``SIM_REQUESTS`` requests, seeded), and a row is kept only when the simulated p90 TPOT and
p90 TTFT meet the targets; a row that misses gets one more replica at a time (up to
``SIM_MAX_EXTRA`` times its count) before it is dropped. ``simulate=False`` keeps the
steady-state screen alone (the means, not percentiles).
``_replica`` is the one place the planner calls the serving model.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .. import economics, specs, units
from ..specs import Accelerator, Model
from . import serve_model, simulate
from .cost import PRICE_TABLE, chip_hour_price, serving_cost
from .plan import tp_degrees
from .train import LayoutDoesNotFit, _accelerator, _model


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServingPlan:
    """One deployment meeting the targets: its chips, layout, precisions, latency and cost."""

    accelerator: str
    n_chips: int
    n_replicas: int
    tp: int
    ep: int
    pp: int
    weight_dtype: str
    kv_dtype: str
    batch_per_replica: int  # the batch cap the latency target sets
    output_tokens_per_s_per_replica: float
    tpot_s: float
    ttft_s: float
    memory_per_chip_bytes: float
    hbm_bytes: float
    usd_per_hour: float
    usd_per_m_output_tokens: float  # at the planned load
    usd_per_chip_hour: float
    price_as_of: str
    tpot_p90_s: float | None = None  # simulated (None with simulate=False)
    ttft_p90_s: float | None = None


SIM_CANDIDATES = 8
"""Rows (cheapest first) the simulation checks; the rest of the screen is not returned."""

SIM_REQUESTS = 400
"""Requests simulated per check: enough for a p90 of a steady queue at these loads, few
enough that a plan takes seconds on 2 cores."""

SIM_MAX_EXTRA = 1.5
"""A row that misses its p90 targets is given replicas up to this factor before it is
dropped (queueing falls fast below full utilisation)."""

SIM_SEED = 2026


_SIMULATED: dict[str, dict] = {}  # memo: the same candidate at the same load is simulated once


def _simulated(mdl: Model, row: ServingPlan, *, i: int, o: int, rate_per_s: float) -> dict:
    """p90 TPOT and TTFT of one replica of ``row`` at its share of ``rate_per_s`` (the simulation
    is seeded, so a repeated check is read from a memo instead of run again)."""
    key = repr((mdl, row, i, o, rate_per_s))
    if key not in _SIMULATED:
        _SIMULATED[key] = _simulate_row(mdl, row, i=i, o=o, rate_per_s=rate_per_s)
    return dict(_SIMULATED[key])


def _simulate_row(mdl: Model, row: ServingPlan, *, i: int, o: int, rate_per_s: float) -> dict:
    g = row.tp * row.ep * row.pp
    sim = simulate.simulate_serving(
        mdl,
        row.accelerator,
        n_chips=g,
        tp=row.tp,
        ep=row.ep,
        pp=row.pp,
        input_tokens=simulate.LengthDistribution(mean=i),
        output_tokens=simulate.LengthDistribution(mean=o),
        n_requests=SIM_REQUESTS,
        rng=np.random.default_rng(SIM_SEED),
        arrival_rate_per_s=rate_per_s / row.n_replicas,
        scheduler=simulate.Scheduler(max_num_seqs=row.batch_per_replica),
        weight_dtype=row.weight_dtype,
        kv_dtype=row.kv_dtype,
    )
    return {"tpot_p90_s": sim.percentile("tpot_s", 90), "ttft_p90_s": sim.percentile("ttft_s", 90)}


def _with_replicas(row: ServingPlan, n_rep: int, *, load: float, i: int, o: int) -> ServingPlan:
    g = row.tp * row.ep * row.pp
    cost = serving_cost(
        row.accelerator, n_chips=n_rep * g, output_tokens_per_s=load,
        input_tokens_per_s=load * i / o,
    )  # fmt: skip
    return dataclasses.replace(
        row,
        n_chips=n_rep * g,
        n_replicas=n_rep,
        usd_per_hour=float(cost["usd_per_hour"]),
        usd_per_m_output_tokens=float(cost["usd_per_m_output_tokens"]),
    )


def priced_accelerators() -> list[str]:
    """The accelerator keys with a rental price in ``data/prices.toml``."""
    known = specs.accelerators()
    keys = [k.split(".", 1)[1] for k in economics.prices() if k.startswith(PRICE_TABLE + ".")]
    return [k for k in keys if k in known]


def _replica(
    model: Model, acc: Accelerator, *, tpot_s: float | None, **deployment
) -> serve_model.Serve | None:
    """One replica at the largest batch meeting ``tpot_s`` (None: the most that fit), or None
    when even batch 1 misses it. The only call into the serving model (see the module
    docstring: the simulator's p90 replaces the mean here once merged)."""
    if tpot_s is None:
        return serve_model.serve(model, acc, batch_size=None, **deployment)
    return serve_model.largest_batch_within_tpot(model, acc, tpot_s=tpot_s, **deployment)


def plan_serving(
    model: Model | str,
    *,
    accelerators: Sequence[Accelerator | str] | None = None,
    request_rate_per_s: float | None = None,
    output_tokens_per_s: float | None = None,
    input_tokens: int,
    output_tokens: int,
    tpot_p90_s: float | None = None,
    ttft_p90_s: float | None = None,
    weight_dtypes: Sequence[str] = ("bf16", "fp8"),
    kv_dtypes: Sequence[str] = ("bf16", "fp8"),
    pp_degrees: Sequence[int] = (1,),
    top: int | None = None,
    simulate_check: bool = True,
) -> list[ServingPlan]:
    """Deployments meeting the load and latency targets, cheapest (USD per hour) first.

    The load is ``request_rate_per_s`` requests of ``input_tokens`` in and ``output_tokens``
    out (R = rate x output_tokens), or ``output_tokens_per_s`` directly. ``accelerators``
    defaults to every priced chip; a chip without a native peak at a weight dtype is skipped
    at that dtype. TP ranges over ``plan.tp_degrees`` within the scale-up domain, EP (MoE)
    over the experts' divisors with tp x ep in the domain, PP over ``pp_degrees``. Method and
    the meaning of the p90 targets today: module docstring.

    >>> best = plan_serving("llama3_70b", accelerators=["h100_sxm"], request_rate_per_s=100,
    ...                     input_tokens=2000, output_tokens=500, tpot_p90_s=0.05)[0]
    >>> best.n_chips, best.tp, best.weight_dtype, round(best.tpot_p90_s * 1e3)  # ms
    (50, 1, 'fp8', 47)
    """
    mdl = _model(model)
    i = _whole("input_tokens", input_tokens)
    o = _whole("output_tokens", output_tokens)
    if i + o > mdl.max_context_tokens:
        raise ValueError(
            f"input_tokens + output_tokens = {i + o:,} exceed {mdl.key}'s context of "
            f"{mdl.max_context_tokens:,} tokens"
        )
    if (request_rate_per_s is None) == (output_tokens_per_s is None):
        raise ValueError("give exactly one of request_rate_per_s and output_tokens_per_s")
    if request_rate_per_s is not None:
        load = units.check_positive("request_rate_per_s", request_rate_per_s) * o
    else:
        load = units.check_positive("output_tokens_per_s", float(output_tokens_per_s or 0.0))
    for name, v in (("tpot_p90_s", tpot_p90_s), ("ttft_p90_s", ttft_p90_s)):
        if v is not None:
            units.check_positive(name, v)
    accs = [_accelerator(a) for a in (accelerators or priced_accelerators())]
    if not accs:
        raise ValueError("accelerators: give at least one chip")
    experts = mdl.moe.n_experts if mdl.moe is not None else 1
    rows: list[ServingPlan] = []
    for acc in accs:
        price = chip_hour_price(acc)  # KeyError naming the priced chips
        domain = acc.scale_up_domain_size
        for wd in weight_dtypes:
            try:
                acc.peak_flop_per_s(wd if wd in ("bf16", "fp8", "fp4") else "bf16")
            except ValueError:
                continue  # no native math at this precision on this chip
            for kd in kv_dtypes:
                for tp in tp_degrees(mdl, max_tp=domain):
                    for ep in (e for e in range(1, experts + 1) if experts % e == 0):
                        if tp * ep > domain:
                            continue
                        for pp in pp_degrees:
                            row = _plan_row(
                                mdl, acc, price, tp=tp, ep=ep, pp=pp, wd=wd, kd=kd, i=i, o=o,
                                load=load, tpot=tpot_p90_s,
                            )  # fmt: skip
                            if row is not None and (ttft_p90_s is None or row.ttft_s <= ttft_p90_s):
                                rows.append(row)
    rows.sort(key=lambda r: (r.usd_per_hour, r.tpot_s))
    if simulate_check:
        checked = []
        for row in rows[:SIM_CANDIDATES]:
            base = row.n_replicas
            while row.n_replicas <= SIM_MAX_EXTRA * base:
                p90 = _simulated(mdl, row, i=i, o=o, rate_per_s=load / o)
                if (tpot_p90_s is None or p90["tpot_p90_s"] <= tpot_p90_s) and (
                    ttft_p90_s is None or p90["ttft_p90_s"] <= ttft_p90_s
                ):
                    checked.append(dataclasses.replace(row, **p90))
                    break
                row = _with_replicas(row, row.n_replicas + max(1, base // 8), load=load, i=i, o=o)
        rows = sorted(checked, key=lambda r: (r.usd_per_hour, r.tpot_s))
    return rows if top is None else rows[:top]


def _plan_row(
    mdl: Model,
    acc: Accelerator,
    price: economics.Price,
    *,
    tp: int,
    ep: int,
    pp: int,
    wd: str,
    kd: str,
    i: int,
    o: int,
    load: float,
    tpot: float | None,
) -> ServingPlan | None:
    g = tp * ep * pp
    try:
        s = _replica(
            mdl,
            acc,
            tpot_s=tpot,
            n_chips=g,
            tp=tp,
            ep=ep,
            pp=pp,
            input_tokens=i,
            output_tokens=o,
            weight_dtype=wd,
            kv_dtype=kd,
        )
    except LayoutDoesNotFit:
        return None
    if s is None:
        return None
    n_rep = math.ceil(load / s.output_tokens_per_s)
    cost = serving_cost(  # the deployment serving the load (its last replica part-full)
        acc, n_chips=n_rep * g, output_tokens_per_s=load, input_tokens_per_s=load * i / o
    )
    return ServingPlan(
        accelerator=acc.key,
        n_chips=n_rep * g,
        n_replicas=n_rep,
        tp=tp,
        ep=ep,
        pp=pp,
        weight_dtype=wd,
        kv_dtype=kd,
        batch_per_replica=s.batch_size,
        output_tokens_per_s_per_replica=s.output_tokens_per_s,
        tpot_s=s.tpot_s,
        ttft_s=s.ttft_s,
        memory_per_chip_bytes=s.memory_per_chip_bytes,
        hbm_bytes=s.hbm_bytes,
        usd_per_hour=float(cost["usd_per_hour"]),
        usd_per_m_output_tokens=float(cost["usd_per_m_output_tokens"]),
        usd_per_chip_hour=price.value,
        price_as_of=price.as_of.isoformat(),
    )


def _whole(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return v
