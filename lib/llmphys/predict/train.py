"""Predicted step time and MFU of a training layout, as a sum of named terms.

One step of a (TP, PP, CP, DP/FSDP, EP)-parallel run on n chips is timed on one chip's
critical path: ``train_step`` adds the terms of ``predict/terms.py`` (GEMMs by shape,
attention, memory-bound work, TP/SP collectives, CP, EP, pipeline sends and bubble, DP/FSDP
traffic, the optimizer), each its own function; ``predict/validation.py`` holds the
leave-one-source-out check.

FP8 recipes (``fp8_recipe``) are described once, in ``predict/terms.py``: every recipe runs the
layers' linear GEMMs in FP8 and keeps attention, norms, the output head and the optimizer at
their own widths.

MFU: model FLOP per token over chips x dense peak at ``dtype`` x step time, attention counted
as ``attention_flops`` says ("causal": 6N + 6 L H Q T, what a causal kernel executes; "full":
PaLM's 6N + 12 L H Q T). The result carries both. HFU adds the recomputed forward pass.
Efficiencies are a frozen value (``efficiency.Efficiencies``) passed in; defaults from data.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools

from .. import parallelism, specs, units
from ..specs import Accelerator, Model
from . import chips
from . import memory as memory_mod
from .dp import check_zero3_collectives, dp_time_s, optimizer_time_s
from .efficiency import (  # golden_section_min re-exported: serving_data reads it from here
    ATTENTION_KERNELS,
    Efficiencies,
    default_efficiencies,
    gemm_efficiency,
    golden_section_min,
)
from .elementwise import memory_bound_time_s
from .layout import PIPELINE_SPLITS, check_options, layout, stage_imbalance
from .ring import CP_ROTATIONS
from .runs import TrainingRun, training_runs
from .terms import (  # the constants re-exported: serve_model reads them from here
    ATTENTION_EFFICIENCY,
    COLLECTIVE_EFFICIENCY,
    LINK_LATENCY_S,
    _Ctx,
    _gemm_shapes,
    _param_counts,
    attention_time_s,
    bubble_time_s,
    cp_time_s,
    ep_time_s,
    gemm_time_s,
    p2p_time_s,
    tp_time_s,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainStep:
    """One predicted training step: its time, utilisation, memory and time budget."""

    step_time_s: float
    mfu: float  # model FLOP under ``attention_flops`` over chips x dense peak x step time
    hfu: float  # FLOP the chips execute (recomputation included) over the same
    tokens_per_s: float
    memory_per_chip_bytes: float
    hbm_bytes: float
    dp: int
    n_microbatches: int
    parts: dict[str, float]  # seconds on one chip's critical path, summing to step_time_s
    memory_parts: dict[str, float]  # bytes per chip by kind, summing to memory_per_chip_bytes
    mfu_causal: float = 0.0  # 6N + 6 L H Q T counted
    mfu_full: float = 0.0  # 6N + 12 L H Q T counted (PaLM)
    attention_flops: str = "causal"

    @property
    def fits(self) -> bool:
        """Whether the layout's memory fits in one chip's HBM."""
        return self.memory_per_chip_bytes <= self.hbm_bytes


class LayoutDoesNotFit(ValueError):
    """A layout whose per-chip memory exceeds the chip's HBM; the message gives the bytes."""


@functools.lru_cache(maxsize=256)
def _model_by_key(key: str) -> Model:
    return specs.model_spec(key)


@functools.lru_cache(maxsize=64)
def _accelerator_by_key(key: str) -> Accelerator:
    return chips.accelerator_spec(key)


def _model(value: Model | str) -> Model:
    if isinstance(value, str):
        return _model_by_key(value)
    if not isinstance(value, Model):
        raise TypeError(f"model must be a Model or a registry key, got {type(value).__name__}")
    return value


def _accelerator(value: Accelerator | str) -> Accelerator:
    if isinstance(value, str):
        return _accelerator_by_key(value)
    if not isinstance(value, Accelerator):
        raise TypeError(
            f"accelerator must be an Accelerator or a registry key, got {type(value).__name__}"
        )
    return value


def train_step(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    seq_len: int,
    global_batch_tokens: float,
    micro_batch_size: int = 1,
    interleave: int = 1,
    recompute: str = "none",
    zero_stage: int = 1,
    dtype: str = "bf16",
    schedule: str | None = None,
    grad_bytes: float = 2.0,
    fsdp_weight_gathers: int = 2,
    flash_attention: bool = True,
    check_memory: bool = True,
    sequence_parallel: bool = True,
    attention_flops: str = "causal",
    fp8_recipe: str = "delayed",
    selective_policy: str = "attention",
    moe_dispatcher: str = "alltoall",
    fused_elementwise: bool = True,
    pipeline_split: str = "even",
    cp_rotate: str = "p2p",
    kv_repeat: bool = False,
    attention_kernel: str = "flash2",
    zero3_collectives: str = "per_layer",
    state_layout: str = "megatron",
    state_replicas: int = 1,
    efficiencies: Efficiencies | None = None,
) -> TrainStep:
    """Predicted time (s), MFU and memory of one training step of ``model`` on ``n_chips``.

    DP = n_chips / (tp pp cp); each DP rank runs m = B / (s dp b) micro-batches. ``schedule``
    defaults to "interleaved" when interleave > 1, else "1f1b". ``grad_bytes`` is the width of
    the gradients the data-parallel group reduces; ``fsdp_weight_gathers`` how often ZeRO-3
    gathers the weights per step. ``selective_policy`` says what ``recompute="selective"``
    recomputes (``policies.SELECTIVE_POLICIES``: Megatron's, torchtitan's and JAX's),
    ``moe_dispatcher`` how expert parallelism moves tokens (``policies.MOE_DISPATCHERS``);
    ``fused_elementwise=False`` is eager PyTorch, each elementwise op its own kernel
    (``elementwise``); ``pipeline_split`` how layers and the head fill the pipeline's chunks
    (``layout.PIPELINE_SPLITS``): the busiest rank sets the pace. ``cp_rotate`` how ring
    attention moves K/V ("p2p" or PyTorch's "allgather", ``ring.CP_ROTATIONS``);
    ``kv_repeat`` that K/V are repeated to the query heads before attention;
    ``attention_kernel`` which flash kernel runs attention (``efficiency.ATTENTION_KERNELS``);
    ``zero3_collectives`` how the framework issues ZeRO-3's gathers and reduce-scatters
    (``dp.ZERO3_COLLECTIVES``): "per_layer" (FSDP2: one per block, prefetched behind compute) or
    "per_tensor" (DeepSpeed ZeRO-3 of 2021: one per parameter tensor, nothing overlapped).
    ``state_layout`` the bytes per parameter of weights, gradients and optimizer
    (``memory.STATE_LAYOUTS``: "megatron" or JAX's "fp32_params"); ``state_replicas`` how many
    data-parallel replicas hold the same state shard (HSDP; MaxText's slices over DCN).
    Raises ``LayoutDoesNotFit`` when the layout overflows HBM
    (``check_memory=False`` times it anyway). Terms: ``predict/terms.py``.

    Llama 3 8B on one 8-GPU H100 server in BF16 at 8K context, FSDP:

    >>> s = train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=8192,
    ...                global_batch_tokens=128 * 8192, zero_stage=3)
    >>> round(s.mfu, 2), round(s.mfu_full, 2), s.fits
    (0.52, 0.58, True)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    eff = efficiencies or default_efficiencies()
    check_options(
        recompute, zero_stage, attention_flops, dtype, fp8_recipe, selective_policy, moe_dispatcher
    )
    if attention_kernel not in ATTENTION_KERNELS:
        raise ValueError(
            f"attention_kernel={attention_kernel!r} is not known; "
            f"allowed: {', '.join(ATTENTION_KERNELS)}"
        )
    if pipeline_split not in PIPELINE_SPLITS:
        raise ValueError(
            f"pipeline_split={pipeline_split!r} is not known; allowed: {', '.join(PIPELINE_SPLITS)}"
        )
    if cp_rotate not in CP_ROTATIONS:
        raise ValueError(
            f"cp_rotate={cp_rotate!r} is not known; allowed: {', '.join(CP_ROTATIONS)}"
        )
    check_zero3_collectives(zero3_collectives)
    units.check_positive("global_batch_tokens", global_batch_tokens)
    dp, m = layout(
        n_chips, tp, pp, cp, ep, seq_len, global_batch_tokens, micro_batch_size, interleave, mdl
    )
    schedule = schedule or ("interleaved" if interleave > 1 else "1f1b")
    c = _Ctx(
        mdl, acc, eff, tp, pp, cp, ep, dp, m, seq_len, micro_batch_size, interleave, recompute,
        zero_stage, dtype, grad_bytes, fsdp_weight_gathers, flash_attention, sequence_parallel,
        fp8_recipe, global_batch_tokens / n_chips, micro_batch_size * seq_len / cp,
        selective_policy, moe_dispatcher, fused_elementwise, pipeline_split, cp_rotate, kv_repeat,
        attention_kernel, zero3_collectives, state_layout, state_replicas,
    )  # fmt: skip
    sched = parallelism.pipeline_schedule(
        schedule, n_stages=pp, n_microbatches=m, n_chunks=interleave
    )
    parts = {
        "gemm": gemm_time_s(c),
        "attention": attention_time_s(c),
        "memory_bound": memory_bound_time_s(c),
        "tp_collectives": tp_time_s(c),
        "cp_attention": cp_time_s(c),
        "ep_all_to_all": ep_time_s(c),
        "pipeline_p2p": p2p_time_s(c),
    }
    compute = parts["gemm"] + parts["attention"] + parts["memory_bound"]
    wait = stage_imbalance_time_s(c, compute)  # ranks idle for the busiest stage: a bubble too
    parts["pipeline_bubble"] = bubble_time_s(sum(parts.values()) + wait, sched) + wait
    parts["dp_fsdp"] = dp_time_s(c, parts["gemm"] + parts["attention"])
    parts["optimizer"] = optimizer_time_s(c)
    step = sum(parts.values())

    memory_parts = _memory_parts(c, sched, check_memory)
    return _result(c, step, parts, memory_parts, attention_flops, global_batch_tokens / step)


def stage_imbalance_time_s(c: _Ctx, compute_s: float) -> float:
    """The time the other pipeline ranks wait for the busiest one, (f - 1) x the compute,
    f = ``layout.stage_imbalance`` of a layer's compute against the output head's GEMMs, split
    as ``pipeline_split`` says (the head's cross-entropy counted with the layers)."""
    if c.pp == 1:
        return 0.0
    *_, (flop_token, m, n, k, _, rec) = _gemm_shapes(c)
    eta = gemm_efficiency(m, n, k, acc=c.acc, dtype="bf16", eff=c.eff)
    head_s = flop_token * (3.0 + rec) * c.tokens_chip / (c.acc.peak_flop_per_s("bf16") * eta)
    layer_s = (compute_s - head_s) / (c.mdl.n_layers / c.pp)  # one layer, all micro-batches
    f = stage_imbalance(
        layer_cost=layer_s, head_cost=head_s * c.pp, n_layers=c.mdl.n_layers, pp=c.pp,
        interleave=c.interleave, split=c.pipeline_split,
    )  # fmt: skip
    return (f - 1.0) * compute_s


def _memory_parts(c: _Ctx, sched: dict[str, float], check_memory: bool) -> dict[str, float]:
    """Bytes per chip by kind (``memory.memory_parts``); LayoutDoesNotFit when over HBM."""
    mdl, acc = c.mdl, c.acc
    memory_parts = memory_mod.memory_parts(
        mdl, tp=c.tp, pp=c.pp, cp=c.cp, dp=c.dp, ep=c.ep, seq_len=c.seq_len,
        micro_batch_size=c.micro_batch_size, recompute=c.recompute, zero_stage=c.zero_stage,
        dtype=c.dtype, fsdp_weight_gathers=c.fsdp_weight_gathers,
        sequence_parallel=c.sequence_parallel, flash_attention=c.flash_attention,
        activation_microbatches=sched["activation_microbatches"],
        weight_copies=sched["weight_copies"], allocator_overhead=c.eff.allocator_overhead,
        n_params=_param_counts(mdl)[0], selective_policy=c.selective_policy,
        state_layout=c.state_layout, state_replicas=c.state_replicas,
    )  # fmt: skip
    memory = sum(memory_parts.values())
    if check_memory and memory > acc.hbm_bytes:
        raise LayoutDoesNotFit(
            f"{mdl.key} on {acc.key} with tp={c.tp}, pp={c.pp}, cp={c.cp}, dp={c.dp}, "
            f"recompute={c.recompute!r}, zero_stage={c.zero_stage} needs "
            f"{units.fmt_bytes(memory)} per chip ("
            + ", ".join(f"{units.fmt_bytes(v)} {k}" for k, v in memory_parts.items() if v)
            + f"); the chip has {units.fmt_bytes(acc.hbm_bytes)}"
        )
    return memory_parts


def _result(
    c: _Ctx,
    step: float,
    parts: dict[str, float],
    memory_parts: dict[str, float],
    attention_flops: str,
    tokens_per_s: float,
) -> TrainStep:
    """The step's MFU under both attention counts, HFU, and its budgets."""
    mdl = c.mdl
    peak = c.acc.peak_flop_per_s(c.dtype)
    chip_tokens_per_s = c.tokens_chip / step
    attn = 6.0 * mdl.n_layers * mdl.n_heads * mdl.d_head * c.seq_len  # 6 L H Q T
    f_causal = 6.0 * _param_counts(mdl)[1] + attn  # as runs.model_flop_per_token
    f_full = f_causal + attn
    mfu_c = chip_tokens_per_s * f_causal / peak
    mfu_f = chip_tokens_per_s * f_full / peak
    f_sel = f_causal if attention_flops == "causal" else f_full
    extra = f_sel / 3.0 * c.layer_recompute  # a recomputed forward: a third of the FLOP
    if c.op_sac:
        extra = sum(f * rec for f, *_, rec in _gemm_shapes(c))
    return TrainStep(
        step_time_s=step,
        mfu=mfu_c if attention_flops == "causal" else mfu_f,
        hfu=chip_tokens_per_s * (f_sel + extra) / peak,
        tokens_per_s=tokens_per_s,
        memory_per_chip_bytes=sum(memory_parts.values()),
        hbm_bytes=c.acc.hbm_bytes,
        dp=c.dp,
        n_microbatches=c.m,
        parts=parts,
        memory_parts=memory_parts,
        mfu_causal=mfu_c,
        mfu_full=mfu_f,
        attention_flops=attention_flops,
    )


# ------------------------------------------------------------------ published runs
def predict_run(
    run: TrainingRun | str,
    *,
    efficiencies: Efficiencies | None = None,
    attention_flops: str = "causal",
    model: Model | None = None,
) -> TrainStep:
    """``train_step`` on a published run's layout, on ``model`` (a what-if shape) if given."""
    r = training_runs()[run] if isinstance(run, str) else run
    return train_step(
        r.model if model is None else model,
        r.accelerator,
        n_chips=r.n_chips,
        tp=r.tp,
        pp=r.pp,
        cp=r.cp,
        ep=r.ep,
        seq_len=r.seq_len,
        global_batch_tokens=r.global_batch_tokens,
        micro_batch_size=r.micro_batch_size,
        interleave=r.interleave,
        recompute=r.recompute,
        zero_stage=r.zero_stage,
        dtype=r.dtype,
        schedule=r.schedule,
        grad_bytes=r.grad_bytes,
        fsdp_weight_gathers=r.fsdp_weight_gathers,
        flash_attention=r.flash_attention,
        sequence_parallel=r.sequence_parallel,
        fp8_recipe=r.fp8_recipe or "delayed",
        selective_policy=r.selective_policy,
        moe_dispatcher=r.moe_dispatcher,
        fused_elementwise=r.fused_elementwise,
        pipeline_split=r.pipeline_split,
        cp_rotate=r.cp_rotate,
        kv_repeat=r.kv_repeat,
        attention_kernel=r.attention_kernel,
        zero3_collectives=r.zero3_collectives,
        state_layout=r.state_layout,
        state_replicas=r.state_replicas,
        attention_flops=attention_flops,
        efficiencies=efficiencies,
        check_memory=False,
    )


def format_budget(step: TrainStep) -> str:
    """The step budget as text: seconds and share of each part, MFU, HFU and memory."""
    lines = [
        f"{name:<16} {t:8.3f} s  {t / step.step_time_s:6.1%}"
        for name, t in step.parts.items()
        if t > 0
    ]
    fits = "fits" if step.fits else "DOES NOT FIT"
    lines += [
        f"{'step':<16} {step.step_time_s:8.3f} s",
        (
            f"MFU {step.mfu:.1%} ({step.attention_flops} attention; "
            f"{step.mfu_causal:.1%} causal, {step.mfu_full:.1%} full), HFU {step.hfu:.1%}, "
            f"{step.tokens_per_s / 1e6:.2f}M tokens/s, dp {step.dp}, "
            f"{step.n_microbatches} micro-batches per rank"
        ),
        (
            f"memory {step.memory_per_chip_bytes / units.GB:.1f} GB per chip of "
            f"{step.hbm_bytes / units.GB:.0f} GB ({fits})"
        ),
    ]
    return "\n".join(lines)


__all__ = [
    "ATTENTION_EFFICIENCY",
    "COLLECTIVE_EFFICIENCY",
    "LINK_LATENCY_S",
    "LayoutDoesNotFit",
    "TrainStep",
    "TrainingRun",
    "format_budget",
    "golden_section_min",
    "predict_run",
    "train_step",
]
