"""Leave-one-source-out validation of ``train_step`` on ``data/training_runs.toml``.

For each independent source S the fitted constant (``efficiency.fit_efficiencies``) is refitted
on every run not from S and S's runs are predicted; ``loso_residuals`` returns those
out-of-source errors and ``error_bars`` the issue's bars over them (median and worst |error|,
median signed error, share within 20%).

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from typing import Any

from .. import accounting, comms, specs
from . import chips
from .chips import accelerator_spec
from .dp import megatron_tensors_per_layer
from .efficiency import Efficiencies, default_efficiencies, fit_efficiencies
from .layout import layout
from .ring import RingBudget
from .runs import TrainingRun, measured_mfu, measured_step_s, training_runs
from .terms import (
    LINK_LATENCY_S,
    SCALE_UP_LATENCY_S,
    _Ctx,
    _local_params,
    expert_gemm_factors,
    ring_budget,
)
from .train import TrainStep, predict_run


@functools.lru_cache(maxsize=1024)
def _measured_causal_mfu(run: TrainingRun) -> float:
    return measured_mfu(run)


def _log_error(run: TrainingRun, eff: Efficiencies) -> float:
    return math.log(predict_run(run, efficiencies=eff).mfu / _measured_causal_mfu(run))


def source_groups() -> list[str]:
    """The independent sources of ``data/training_runs.toml``, in file order."""
    return list(dict.fromkeys(r.source_group for r in training_runs().values()))


def fitted_efficiencies(exclude: str | None = None) -> Efficiencies:
    """The two global constants refitted on every run not from source ``exclude``."""
    return _fitted(exclude)


@functools.cache
def _fitted(exclude: str | None) -> Efficiencies:
    runs = [r for r in training_runs().values() if r.source_group != exclude]
    return fit_efficiencies(_log_error, runs)


def _row(key: str, run: TrainingRun, step: TrainStep, held_out: bool) -> dict[str, Any]:
    meas = measured_mfu(run)
    return {
        "run": key,
        "source": run.source_group,
        "model": run.model,
        "n_params": accounting.n_params(specs.model_spec(run.model)),
        "accelerator": run.accelerator,
        "dtype": run.dtype,
        "n_chips": run.n_chips,
        "seq_len": run.seq_len,
        "fits": step.fits,
        "memory_per_chip_bytes": step.memory_per_chip_bytes,
        "measured_mfu": meas,
        "predicted_mfu": step.mfu,
        "rel_error": (step.mfu - meas) / meas,
        "calibration": not held_out,
    }


def residuals(efficiencies: Efficiencies | None = None) -> list[dict[str, Any]]:
    """One row per run under one set of efficiencies (the defaults: fitted on all runs),
    causal MFU measured and predicted and their relative error. In-sample: see
    ``loso_residuals`` for the out-of-source errors."""
    rows = []
    for key, run in training_runs().items():
        rows.append(_row(key, run, predict_run(run, efficiencies=efficiencies), held_out=True))
    return rows


@functools.cache
def _loso() -> tuple[dict[str, Any], ...]:
    rows = []
    for group in source_groups():
        eff = fitted_efficiencies(exclude=group)
        for key, run in training_runs().items():
            if run.source_group == group:
                rows.append(_row(key, run, predict_run(run, efficiencies=eff), held_out=True))
    return tuple(rows)


def loso_residuals() -> list[dict[str, Any]]:
    """Leave-one-source-out: for each source S, the constants are refitted without S and S's
    runs predicted. One row per run, as ``residuals``."""
    return [dict(r) for r in _loso()]


def held_out_rows(group: str, *, base: Efficiencies) -> list[dict[str, Any]]:
    """Source ``group``'s runs predicted with ``base``'s fitted constant refitted on every other
    source: ``loso_residuals``'s rows for that source under other sourced constants (the
    chapter's with-and-without comparisons of one mechanism).

    >>> rows = held_out_rows("palm", base=fitted_efficiencies())
    >>> [r["run"] for r in rows]
    ['palm_540b']
    """
    if group not in source_groups():
        raise ValueError(f"group: {group!r} is not a source; known: {', '.join(source_groups())}")
    runs = [r for r in training_runs().values() if r.source_group != group]
    eff = fit_efficiencies(_log_error, runs, base=base)
    return [
        _row(key, run, predict_run(run, efficiencies=eff), held_out=True)
        for key, run in training_runs().items()
        if run.source_group == group
    ]


def refit_on_all(base: Efficiencies) -> Efficiencies:
    """``base`` with its fitted constant refitted on every run (``fitted_efficiencies`` for
    other sourced constants)."""
    return fit_efficiencies(_log_error, list(training_runs().values()), base=base)


def implied_attention_fraction(run: TrainingRun | str, *, efficiencies: Efficiencies) -> float:
    """The flash-attention fraction of the BF16 peak at which ``run``'s measured step time is
    matched, every other term charged as ``train_step`` charges it (a diagnostic of a miss):

        eta' = eta t_attn / (t_measured - (t_step - t_attn)),  t_measured = B / R_measured.

    torchtitan's 8B FP8 row at 32K tokens, where attention is half the predicted step, implies
    27% of the peak against the 33% FlashAttention-2 publishes for its longest (16K) causal
    sequences:

    >>> round(implied_attention_fraction("torchtitan_8b_cp1_32k",
    ...                                  efficiencies=fitted_efficiencies("torchtitan")), 2)
    0.27
    """
    r = training_runs()[run] if isinstance(run, str) else run
    step = predict_run(r, efficiencies=efficiencies)
    t_attn = step.parts["attention"]
    t_measured = measured_step_s(r)
    room = t_measured - (step.step_time_s - t_attn)
    if t_attn <= 0 or room <= 0:
        raise ValueError(
            f"run {r.key!r}: its other terms alone take {step.step_time_s - t_attn:.3g} s of the "
            f"measured {t_measured:.3g} s, so no attention rate matches it"
        )
    eta = efficiencies.attention_fraction(
        r.accelerator, r.seq_len / r.cp, kernel=r.attention_kernel
    )
    return eta * t_attn / room


def run_context(run: TrainingRun | str, *, efficiencies: Efficiencies | None = None) -> _Ctx:
    """The step context ``train_step`` builds for a published run (every field of the run,
    by name), for the diagnostics that look inside one term."""
    r = training_runs()[run] if isinstance(run, str) else run
    mdl, acc = specs.model_spec(r.model), accelerator_spec(r.accelerator)
    dp, m = layout(r.n_chips, r.tp, r.pp, r.cp, r.ep, r.seq_len, r.global_batch_tokens,
                   r.micro_batch_size, r.interleave, mdl)  # fmt: skip
    return _Ctx(
        mdl=mdl, acc=acc, eff=efficiencies or default_efficiencies(), tp=r.tp, pp=r.pp,
        cp=r.cp, ep=r.ep, dp=dp, m=m, seq_len=r.seq_len, micro_batch_size=r.micro_batch_size,
        interleave=r.interleave, recompute=r.recompute, zero_stage=r.zero_stage, dtype=r.dtype,
        grad_bytes=r.grad_bytes, fsdp_weight_gathers=r.fsdp_weight_gathers,
        flash_attention=r.flash_attention, sequence_parallel=r.sequence_parallel,
        fp8_recipe=r.fp8_recipe or "delayed", tokens_chip=r.global_batch_tokens / r.n_chips,
        tokens_mb=r.micro_batch_size * r.seq_len / r.cp, selective_policy=r.selective_policy,
        moe_dispatcher=r.moe_dispatcher, fused_elementwise=r.fused_elementwise,
        pipeline_split=r.pipeline_split, cp_rotate=r.cp_rotate, kv_repeat=r.kv_repeat,
        attention_kernel=r.attention_kernel, zero3_collectives=r.zero3_collectives,
        state_layout=r.state_layout, state_replicas=r.state_replicas,
    )  # fmt: skip


def run_ring_budget(
    run: TrainingRun | str, *, efficiencies: Efficiencies | None = None
) -> RingBudget:
    """PyTorch's all-gather ring of a published CP run, one layer and micro-batch on one rank
    (``terms.ring_budget``; its ``cp_attention`` term is m x layers per stage x this, plus
    latency). torchtitan's Llama 3.1 405B at 256K, CP 8 over the NICs, K/V repeated to the
    query heads, gathers 1.9 GB per layer:

    >>> round(run_ring_budget("torchtitan_405b_cp8_256k").gather_bytes / 1e9, 1)
    1.9
    """
    r = training_runs()[run] if isinstance(run, str) else run
    if r.cp < 2 or r.cp_rotate != "allgather":
        raise ValueError(f"run {r.key!r}: not an all-gather ring (cp={r.cp}, {r.cp_rotate!r})")
    return ring_budget(run_context(r, efficiencies=efficiencies))


def run_expert_gemm_factors(
    run: TrainingRun | str, *, efficiencies: Efficiencies | None = None
) -> tuple[float, float]:
    """(busiest EP rank's load over the mean, rows computed per routed row) that the expert
    GEMM term charges a published MoE run (``terms.expert_gemm_factors``). The Megatron zoo's
    row 5 (EP 8, TP 4, 4,096-token sequences):

    >>> load, pad = run_expert_gemm_factors("mcore_qwen3_235b_row5")
    >>> round(load, 3), round(pad, 3)
    (1.014, 1.125)
    """
    return expert_gemm_factors(run_context(run, efficiencies=efficiencies))


def dp_traffic(run: TrainingRun | str) -> dict[str, float]:
    """What ``run``'s data-parallel traffic asks of the network, against its measured step.

    ``ring_bytes``: what each chip sends in the step's DP x CP ring collectives, 2(p-1)/p x the
    buffer (``comms.zero_dp_bytes_per_param``); ``step_s``: the measured step, B / R_measured;
    ``needed_bytes_per_s``: their ratio, the least bus rate at which the traffic fits in the step
    even if every byte hides behind compute; ``nic_bytes_per_s``: one chip's NIC;
    ``node_ring_bytes_per_s``: NCCL's ring over the group's chips in one node, each on its own
    NIC (``comms.multi_nic_ring_bytes_per_s``); ``dcn_gradient_s``: a hierarchical reduction's
    cross-domain phase, each chip's gradient shard all-reduced over the per-chip NIC at the
    default collective efficiency (0 when the group fits in one scale-up domain).
    torchtitan's Llama 2 70B on 64 A100 needs more than one 25 GB/s NIC:

    >>> t = dp_traffic("torchtitan_a100_llama2_70b_sel_op")
    >>> round(t["needed_bytes_per_s"] / 1e9), round(t["node_ring_bytes_per_s"] / 1e9)
    (47, 200)
    """
    r = training_runs()[run] if isinstance(run, str) else run
    acc = chips.accelerator_spec(r.accelerator)
    mdl = specs.model_spec(r.model)
    group = r.dp * r.cp
    per_param = comms.zero_dp_bytes_per_param(
        r.zero_stage,
        grad_bytes=r.grad_bytes,
        weight_bytes=1.0 if r.dtype == "fp8" and r.zero_stage == 3 else 2.0,
        n_weight_gathers=r.fsdp_weight_gathers,
    )
    n_local = _local_params(mdl, r.tp, r.pp, r.ep)
    ring = 2 * (group - 1) / group * per_param / 2 * n_local
    step_s = measured_step_s(r)
    inner = max(1, min(group, acc.scale_up_domain_size // (r.tp * r.pp)))
    nic = acc.scale_out_bytes_per_s_per_direction
    node = comms.multi_nic_ring_bytes_per_s(
        inner, nic_bytes_per_s=nic, nvlink_bytes_per_s=acc.scale_up_bytes_per_s_per_direction
    )
    domains = group // inner if group % inner == 0 else 1
    dcn_s = 0.0
    if domains > 1:
        dcn_s = comms.ring_all_reduce_time_s(
            r.grad_bytes * n_local / inner,
            domains,
            link_bytes_per_s=nic * default_efficiencies().collective,
        )
    return {
        "dcn_gradient_s": dcn_s,
        "ring_bytes": ring,
        "step_s": step_s,
        "needed_bytes_per_s": ring / step_s,
        "nic_bytes_per_s": nic,
        "node_ring_bytes_per_s": node,
    }


def zero3_collective_gap(run: TrainingRun | str) -> dict[str, float]:
    """``run``'s measured step against its out-of-source prediction with its own ZeRO-3
    collectives and with FSDP2's per-layer ones (``dp.ZERO3_COLLECTIVES``), in seconds.

    ``n_collectives``: the ring collectives of its ZeRO-3 per step as recorded; ``step_latency_s``
    the latency of one (``comms.ring_step_latency_s``, NCCL's steps); ``implied_per_rank_s``:
    the gap between the measured step and the per-layer prediction, spread over every
    collective's p - 1 ring steps, the cost per rank and collective the data would need if
    latency-like costs made all of it (NCCL's own model charges ``step_latency_s`` / (p - 1)).

    >>> g = zero3_collective_gap("zero3_175b_1536")
    >>> int(g["n_collectives"]), round(g["step_latency_s"] * 1e3, 2)
    (3456, 5.94)
    """
    r = training_runs()[run] if isinstance(run, str) else run
    eff = fitted_efficiencies(exclude=r.source_group)
    own = predict_run(r, efficiencies=eff).step_time_s
    layer = predict_run(dataclasses.replace(r, zero3_collectives="per_layer"), efficiencies=eff)
    group = r.dp * r.cp
    acc = chips.accelerator_spec(r.accelerator)
    inner = max(1, min(group, acc.scale_up_domain_size // (r.tp * r.pp)))
    lat = comms.ring_step_latency_s(
        group, group // inner, intra_step_s=SCALE_UP_LATENCY_S, inter_step_s=LINK_LATENCY_S
    )
    mdl = specs.model_spec(r.model)
    units_per_layer = megatron_tensors_per_layer(mdl) if r.zero3_collectives == "per_tensor" else 1
    n = (r.fsdp_weight_gathers + 1) * mdl.n_layers / r.pp * units_per_layer
    measured = measured_step_s(r)
    return {
        "n_collectives": n,
        "step_latency_s": lat,
        "measured_step_s": measured,
        "own_step_s": own,
        "per_layer_step_s": layer.step_time_s,
        "implied_per_rank_s": (measured - layer.step_time_s) / (n * (group - 1)),
    }


def error_bars(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median and worst |error|, median signed error, share within 20%, over ``rows``."""
    if not rows:
        raise ValueError("rows: empty")
    e = [r["rel_error"] for r in rows]
    a = [abs(x) for x in e]
    return {
        "n_runs": len(e),
        "median": statistics.median(a),
        "worst": max(a),
        "median_signed": statistics.median(e),
        "within_20": sum(x <= 0.2 for x in a) / len(a),
    }


ISSUE_BARS: dict[str, tuple[str, float]] = {
    "median": ("<=", 0.12),
    "worst": ("<=", 0.30),
    "median_signed": ("abs<=", 0.05),
    "within_20": (">=", 0.80),
}
"""Issue 27's bars on the out-of-source errors (``error_bars``' keys): median |error| <= 12%,
worst <= 30%, |median signed error| <= 5%, at least 80% of runs within 20%."""


def bar_verdicts(
    bars: dict[str, float], limits: dict[str, tuple[str, float]] | None = None
) -> dict[str, bool]:
    """Whether ``bars`` (from ``error_bars``) meets each of ``limits`` (rule "<=", ">=" or
    "abs<=", and the limit), issue 27's ``ISSUE_BARS`` by default; issue 28's serving bars are
    ``serving_data.SERVING_BARS``.

    >>> bar_verdicts({"median": 0.1, "worst": 0.5, "median_signed": -0.06, "within_20": 0.8})
    {'median': True, 'worst': False, 'median_signed': False, 'within_20': True}
    """
    limits = ISSUE_BARS if limits is None else limits
    out = {}
    for key, (rule, limit) in limits.items():
        if rule not in ("<=", ">=", "abs<="):
            raise ValueError(f"limits[{key!r}]: rule {rule!r}; allowed: '<=', '>=', 'abs<='")
        if key not in bars:
            raise ValueError(f"bars: missing {key!r}; the limits name {sorted(limits)}")
        x = bars[key]
        out[key] = (
            abs(x) <= limit if rule == "abs<=" else (x <= limit if rule == "<=" else x >= limit)
        )
    return out


def held_out_errors(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median and worst |rel_error| over the rows not marked ``calibration`` (residual tables of
    this module and of ``deploy``)."""
    errs = [abs(r["rel_error"]) for r in rows if not r["calibration"]]
    if not errs:
        raise ValueError("rows: no held-out row (every row is a calibration run)")
    return {"n_runs": len(errs), "median": statistics.median(errs), "worst": max(errs)}


def held_out_summary() -> dict[str, float]:
    """Median and worst out-of-source |predicted - measured| / measured MFU (LOSO)."""
    return held_out_errors(loso_residuals())


def calibrate_gemm_efficiency() -> float:
    """The large-GEMM BF16 fraction refitted on every run (``fitted_efficiencies``)."""
    return fitted_efficiencies().gemm_bf16
