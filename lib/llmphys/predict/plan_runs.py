"""The planner's other inverse questions, on top of ``predict.plan``: how many chips reach a
token rate (``fewest_chips``), and where each published run of ``data/training_runs.toml`` ranks
among the planner's layouts (``published_rank``). Split from ``predict.plan``.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from .. import units
from ..specs import Accelerator, Model
from .plan import (
    MAX_CP,
    MAX_INTERLEAVE,
    MAX_MICRO_BATCH,
    Layout,
    TrainingPlan,
    _pipeline_ok,
    _powers_of_two,
    legal_layouts,
    plan_training,
    tp_degrees,
)
from .train import (
    TrainingRun,
    _accelerator,
    _model,
    predict_run,
    training_runs,
)


def chip_counts(accelerator: Accelerator | str, *, max_chips: int) -> list[int]:
    """The chip counts ``fewest_chips`` scans: d x 2^j and d x 3 x 2^j up to ``max_chips``,
    d the chip's scale-up domain (whole nodes), in ascending order.

    >>> chip_counts("h100_sxm", max_chips=100)
    [8, 16, 24, 32, 48, 64, 96]
    """
    d = _accelerator(accelerator).scale_up_domain_size
    out = {d * m * 2**j for m in (1, 3) for j in range(40) if d * m * 2**j <= max_chips}
    return sorted(out)


def fewest_chips(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    tokens_per_s: float,
    seq_len: int,
    global_batch_tokens: float,
    max_chips: int = 65_536,
    **constraints,
) -> TrainingPlan:
    """The fastest layout on the fewest chips (of ``chip_counts``) that trains at >=
    ``tokens_per_s``; ``constraints`` are ``plan_training``'s other keywords.

    Raises ``ValueError`` when no count up to ``max_chips`` reaches the rate.

    >>> p = fewest_chips("llama3_8b", "h100_sxm", tokens_per_s=1e6, seq_len=8192,
    ...                  global_batch_tokens=2**22)
    >>> p.layout.n_chips, p.tokens_per_s >= 1e6
    (128, True)
    """
    units.check_positive("tokens_per_s", tokens_per_s)
    best_seen = 0.0
    for n in chip_counts(accelerator, max_chips=max_chips):
        try:
            plans = plan_training(
                model,
                accelerator,
                n_chips=n,
                seq_len=seq_len,
                global_batch_tokens=global_batch_tokens,
                top=1,
                **constraints,
            )
        except ValueError:  # LayoutDoesNotFit too: no layout at this count
            continue
        best_seen = max(best_seen, plans[0].tokens_per_s)
        if plans[0].tokens_per_s >= tokens_per_s:
            return plans[0]
    raise ValueError(
        f"tokens_per_s={tokens_per_s:g}: no chip count up to max_chips={max_chips:,} reaches "
        f"it with global_batch_tokens={global_batch_tokens:g}; the fastest found runs "
        f"{best_seen:.4g} tokens/s (a larger batch feeds more replicas)"
    )


def _published_layout(run: TrainingRun) -> Layout:
    return Layout(
        n_chips=run.n_chips,
        tp=run.tp,
        pp=run.pp,
        cp=run.cp,
        ep=run.ep,
        dp=run.dp,
        zero_stage=run.zero_stage,
        recompute=run.recompute,
        micro_batch_size=run.micro_batch_size,
        interleave=run.interleave,
    )


def outside_grid_reason(run: TrainingRun | str) -> str | None:
    """Which stated pruning rule (module docstring) keeps a published layout out of the grid,
    or None when the grid holds it."""
    r = training_runs()[run] if isinstance(run, str) else run
    mdl, acc = _model(r.model), _accelerator(r.accelerator)
    max_tp = max(acc.scale_up_domain_size, r.tp)
    if r.tp not in tp_degrees(mdl, max_tp=min(max_tp, r.n_chips)):
        return f"tp={r.tp} does not divide the heads"
    if r.cp not in _powers_of_two(MAX_CP):
        return f"cp={r.cp} is not a power of two up to {MAX_CP}"
    if r.micro_batch_size > MAX_MICRO_BATCH:
        return f"micro-batch {r.micro_batch_size} is over {MAX_MICRO_BATCH}"
    if r.interleave > MAX_INTERLEAVE:
        return f"interleave {r.interleave} is over {MAX_INTERLEAVE}"
    if not _pipeline_ok(mdl.n_layers, r.pp * r.interleave):
        return (
            f"pp x v = {r.pp * r.interleave} chunks divide neither {mdl.n_layers} layers "
            f"nor {mdl.n_layers + 2}: uneven stages"
        )
    return None


def published_rank(run: TrainingRun | str) -> dict:
    """Where a published run's layout ranks among the planner's, on the run's own problem.

    The planner searches the run's chips, sequence, batch, matmul dtype, gradient width,
    weight gathers, attention kernel and state layout (JAX's FP32 state, replicated across
    slices, for MaxText's runs), over every ZeRO stage (0-3), with TP up to the
    run's own degree or the scale-up domain, whichever is larger. ``in_grid``: the
    published layout is one of the legal layouts; ``rank``: 1 + the fitting layouts
    predicted faster than the published one (timed under its own schedule); ``fits``:
    whether the step model says the published layout fits in HBM.
    """
    r = training_runs()[run] if isinstance(run, str) else run
    mdl, acc = _model(r.model), _accelerator(r.accelerator)
    max_tp = max(acc.scale_up_domain_size, r.tp)
    mine = _published_layout(r)
    grid_kw = {
        "n_chips": r.n_chips,
        "seq_len": r.seq_len,
        "global_batch_tokens": r.global_batch_tokens,
        "max_tp": max_tp,
        "zero_stages": (0, 1, 2, 3),
    }
    one_stage = {**grid_kw, "zero_stages": (mine.zero_stage,), "recomputes": (mine.recompute,)}
    in_grid = any(lay == mine for lay in legal_layouts(mdl, **one_stage))  # type: ignore[arg-type]
    published = predict_run(r)
    try:
        plans = plan_training(
            mdl,
            acc,
            n_chips=r.n_chips,
            seq_len=r.seq_len,
            global_batch_tokens=r.global_batch_tokens,
            dtype=r.dtype,
            max_tp=max_tp,
            zero_stages=(0, 1, 2, 3),
            grad_bytes=r.grad_bytes,
            fsdp_weight_gathers=r.fsdp_weight_gathers,
            zero3_collectives=r.zero3_collectives,
            flash_attention=r.flash_attention,
            state_layout=r.state_layout,
            state_replicas=r.state_replicas,
        )
    except ValueError:
        plans = []
    faster = sum(1 for p in plans if p.step_time_s < published.step_time_s)
    return {
        "run": r.key,
        "in_grid": in_grid,
        "outside_grid_reason": outside_grid_reason(r),
        "fits": published.fits,
        "rank": faster + 1,
        "n_layouts": len(plans),
        "published": mine,
        "published_step_time_s": published.step_time_s,
        "published_mfu": published.mfu,
        "best": plans[0] if plans else None,
    }
