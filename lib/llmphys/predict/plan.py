"""The inverse question of the training model: which layout, and how many chips.

``plan_training`` lists the layouts a framework can run for a model on n chips, times each
with ``train_step``, keeps those whose memory fits and ranks them by predicted step time.
A layout is *legal* when

    tp           divides the query heads, and divides the KV heads or is a multiple of them
                 (each KV head then replicated tp/g times: vLLM's rule, PaLM's multi-query)
    pp x v       (v the interleave) divides the layers L, or L + 2: the embedding and the
                 head as chunks of their own (Llama 3's 126 layers run as 16 x 8 chunks)
    cp           divides the sequence length
    ep           divides the routed experts and dp x cp x tp, the ranks of one pipeline
                 stage (Megatron-core's folded expert group; dense: ep = 1)
    dp           = n / (tp pp cp), a whole number, and the step's sequences split into
                 dp ranks of whole micro-batches

The search is exhaustive over that grid after these stated pruning rules:

    tp <= the chip's scale-up domain (``max_tp``): beyond it TP's all-reduces leave NVLink
    cp: powers of two up to ``MAX_CP``; micro-batch: the divisors of a rank's sequences up
        to ``MAX_MICRO_BATCH``
    pp x v: balanced stages only (the divisibility rule above); a framework's uneven first
        and last stages are outside the grid
    interleave <= ``MAX_INTERLEAVE``, and only when pp > 1
    recomputation: for one layout and ZeRO stage only the least recomputation that fits is
        kept; more recomputation only adds FLOP to the step model, never removes traffic,
        so it is never faster
    ZeRO stages: ``zero_stages`` (default 1-3; stage 0 moves the same bytes as stage 1 and
        holds more, and the step model charges it a larger optimizer update)

``fewest_chips`` answers "the smallest n that trains this model at >= X tokens/s" by scanning
n over the scale-up domain's multiples d x 2^j and d x 3 x 2^j in ascending order.
``published_rank`` places each run of ``data/training_runs.toml`` among the planner's layouts.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence

from .. import parallelism, units
from ..specs import Accelerator, Model
from .dp import check_zero3_collectives
from .layout import check_options
from .memory import STATE_LAYOUTS
from .train import (
    LayoutDoesNotFit,
    TrainStep,
    _accelerator,
    _model,
    train_step,
)

MAX_CP = 32
"""Largest context-parallel degree searched (Llama 3's 128K-token phase used 16; Dubey et al.
2024, arXiv:2407.21783, sec. 3.3.2)."""

MAX_MICRO_BATCH = 32
"""Largest micro-batch (sequences) searched; the published runs use 1 to 28 (MaxText's 28 on
TPU v5p)."""

MAX_INTERLEAVE = 8
"""Largest number of model chunks per pipeline stage searched (Llama 3's 405B: 8)."""

N_TERMS = 3
"""How many of the step budget's largest terms each ranked layout carries."""

ZERO_STAGES = (1, 2, 3)
"""ZeRO stages searched by default (see the module docstring for why stage 0 is left out)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Layout:
    """One training layout: the degrees of each parallelism and the per-rank choices."""

    n_chips: int
    tp: int
    pp: int
    cp: int
    ep: int
    dp: int
    zero_stage: int
    recompute: str
    micro_batch_size: int
    interleave: int

    def kwargs(self) -> dict[str, int | str]:
        """The layout as ``train_step`` keywords."""
        return {
            "n_chips": self.n_chips,
            "tp": self.tp,
            "pp": self.pp,
            "cp": self.cp,
            "ep": self.ep,
            "zero_stage": self.zero_stage,
            "recompute": self.recompute,
            "micro_batch_size": self.micro_batch_size,
            "interleave": self.interleave,
        }

    def label(self) -> str:
        """The layout in one line, in the CLI's words.

        >>> Layout(n_chips=64, tp=8, pp=2, cp=1, ep=1, dp=4, zero_stage=1, recompute="none",
        ...        micro_batch_size=1, interleave=1).label()
        'tp 8 pp 2 cp 1 ep 1 dp 4, ZeRO 1, recompute none, micro-batch 1, interleave 1'
        """
        return (
            f"tp {self.tp} pp {self.pp} cp {self.cp} ep {self.ep} dp {self.dp}, "
            f"ZeRO {self.zero_stage}, recompute {self.recompute}, "
            f"micro-batch {self.micro_batch_size}, interleave {self.interleave}"
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingPlan:
    """A ranked layout: its predicted step, its memory headroom and its largest terms."""

    layout: Layout
    step: TrainStep
    headroom_bytes: float  # usable HBM (after the margin) minus the layout's bytes per chip
    largest_terms: tuple[tuple[str, float], ...]  # (part, seconds), largest first

    @property
    def step_time_s(self) -> float:
        return self.step.step_time_s

    @property
    def tokens_per_s(self) -> float:
        return self.step.tokens_per_s

    @property
    def mfu(self) -> float:
        return self.step.mfu


def tp_degrees(model: Model, *, max_tp: int) -> list[int]:
    """The tensor-parallel degrees up to ``max_tp`` that can shard ``model``'s attention.

    >>> tp_degrees(_model("llama3_8b"), max_tp=64)  # 32 query, 8 KV heads
    [1, 2, 4, 8, 16, 32]
    """
    h, g = model.n_heads, model.n_kv_heads
    return [t for t in range(1, max_tp + 1) if h % t == 0 and (g % t == 0 or t % g == 0)]


def _pipeline_ok(n_layers: int, chunks: int) -> bool:
    return n_layers % chunks == 0 or (n_layers + 2) % chunks == 0


def _powers_of_two(limit: int) -> list[int]:
    return [2**k for k in range(int(math.log2(limit)) + 1)]


def _check_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def legal_layouts(
    model: Model | str,
    *,
    n_chips: int,
    seq_len: int,
    global_batch_tokens: float,
    max_tp: int,
    zero_stages: Sequence[int] = ZERO_STAGES,
    recomputes: Sequence[str] = parallelism.RECOMPUTE,
) -> Iterator[Layout]:
    """Every legal layout of the pruned grid (module docstring), untimed, in grid order."""
    mdl = _model(model)
    _check_int("n_chips", n_chips)
    _check_int("seq_len", seq_len)
    _check_int("max_tp", max_tp)
    units.check_positive("global_batch_tokens", global_batch_tokens)
    n_seqs = global_batch_tokens / seq_len
    if n_seqs != int(n_seqs):
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} is not a whole number of "
            f"{seq_len}-token sequences"
        )
    n_seqs = int(n_seqs)
    experts = mdl.moe.n_experts if mdl.moe is not None else 1
    for tp in tp_degrees(mdl, max_tp=min(max_tp, n_chips)):
        for cp in _powers_of_two(MAX_CP):
            if seq_len % cp or n_chips % (tp * cp):
                continue
            rest = n_chips // (tp * cp)
            for pp in (p for p in range(1, min(rest, mdl.n_layers + 2) + 1) if rest % p == 0):
                dp = rest // pp
                if n_seqs % dp:
                    continue
                per_rank = n_seqs // dp
                for v in range(1, (MAX_INTERLEAVE if pp > 1 else 1) + 1):
                    if not _pipeline_ok(mdl.n_layers, pp * v):
                        continue
                    eps = [
                        e
                        for e in range(1, experts + 1)
                        if experts % e == 0 and (dp * cp * tp) % e == 0
                    ]
                    for ep in eps:
                        for mb in range(1, min(MAX_MICRO_BATCH, per_rank) + 1):
                            if per_rank % mb:
                                continue
                            for z in zero_stages:
                                for r in recomputes:
                                    yield Layout(
                                        n_chips=n_chips,
                                        tp=tp,
                                        pp=pp,
                                        cp=cp,
                                        ep=ep,
                                        dp=dp,
                                        zero_stage=z,
                                        recompute=r,
                                        micro_batch_size=mb,
                                        interleave=v,
                                    )


def _largest(parts: dict[str, float]) -> tuple[tuple[str, float], ...]:
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    return tuple((k, t) for k, t in ranked[:N_TERMS] if t > 0)


def plan_training(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    seq_len: int,
    global_batch_tokens: float,
    dtype: str = "bf16",
    memory_margin: float = 0.0,
    max_tp: int | None = None,
    zero_stages: Sequence[int] = ZERO_STAGES,
    recomputes: Sequence[str] = parallelism.RECOMPUTE,
    grad_bytes: float = 2.0,
    fsdp_weight_gathers: int = 2,
    zero3_collectives: str = "per_layer",
    flash_attention: bool = True,
    sequence_parallel: bool = True,
    selective_policy: str = "attention",
    moe_dispatcher: str = "alltoall",
    fused_elementwise: bool = True,
    fp8_recipe: str = "delayed",
    state_layout: str = "megatron",
    state_replicas: int = 1,
    top: int | None = None,
) -> list[TrainingPlan]:
    """The layouts that fit, fastest predicted step (s) first; ties: more headroom first.

    Grid, legality and pruning: module docstring. ``memory_margin`` is the fraction of HBM
    held back (fragmentation, framework buffers); ``max_tp`` defaults to the chip's scale-up
    domain. Each row carries the step (``TrainStep``), the headroom in bytes and the step
    budget's ``N_TERMS`` largest terms. ``sequence_parallel`` to ``state_replicas`` are
    ``train_step``'s, the same for every layout: ``state_layout="fp32_params"`` plans a JAX
    framework's memory (MaxText), and ``state_replicas`` > 1 its state replicated across
    slices, so only layouts whose dp x cp it divides are kept. Raises ``LayoutDoesNotFit``
    naming the smallest layout's bytes over when no legal layout fits, ``ValueError`` when
    none is legal.

    >>> best = plan_training("llama3_70b", "h100_sxm", n_chips=64, seq_len=8192,
    ...                      global_batch_tokens=4 * 2**20)[0]
    >>> best.layout.tp, best.layout.pp, round(best.mfu, 2)
    (1, 1, 0.53)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    if not 0.0 <= memory_margin < 1.0:
        raise ValueError(f"memory_margin must be a fraction in [0, 1), got {memory_margin!r}")
    # checked once here: the loop below skips a layout train_step refuses
    check_options("none", 1, "causal", dtype, fp8_recipe, selective_policy, moe_dispatcher)
    check_zero3_collectives(zero3_collectives)
    if state_layout not in STATE_LAYOUTS:
        raise ValueError(
            f"state_layout={state_layout!r} is not known; allowed: {', '.join(STATE_LAYOUTS)}"
        )
    _check_int("state_replicas", state_replicas)
    for r in recomputes:
        if r not in parallelism.RECOMPUTE:
            raise ValueError(f"recomputes: {r!r} is not one of {parallelism.RECOMPUTE}")
    if max_tp is None:
        max_tp = acc.scale_up_domain_size
    usable = acc.hbm_bytes * (1.0 - memory_margin)
    order = {r: i for i, r in enumerate(parallelism.RECOMPUTE)}
    recomputes = sorted(recomputes, key=order.__getitem__)
    rows: list[TrainingPlan] = []
    n_legal, least = 0, math.inf
    fitted: set[tuple] = set()  # (layout without recompute): a lighter recompute already fits
    for lay in legal_layouts(
        mdl,
        n_chips=n_chips,
        seq_len=seq_len,
        global_batch_tokens=global_batch_tokens,
        max_tp=max_tp,
        zero_stages=zero_stages,
        recomputes=recomputes,
    ):
        # the layout without its recompute, as a plain tuple (dataclasses.astuple deep-copies
        # and took a fifth of a search)
        base = (lay.n_chips, lay.tp, lay.pp, lay.cp, lay.ep, lay.dp, lay.zero_stage,
                lay.micro_batch_size, lay.interleave)  # fmt: skip
        if base in fitted:
            continue
        try:
            s = train_step(
                mdl,
                acc,
                seq_len=seq_len,
                global_batch_tokens=global_batch_tokens,
                dtype=dtype,
                grad_bytes=grad_bytes,
                fsdp_weight_gathers=fsdp_weight_gathers,
                zero3_collectives=zero3_collectives,
                flash_attention=flash_attention,
                sequence_parallel=sequence_parallel,
                selective_policy=selective_policy,
                moe_dispatcher=moe_dispatcher,
                fused_elementwise=fused_elementwise,
                fp8_recipe=fp8_recipe,
                state_layout=state_layout,
                state_replicas=state_replicas,
                check_memory=False,
                **lay.kwargs(),  # type: ignore[arg-type]
            )
        except LayoutDoesNotFit:
            continue
        except ValueError:
            continue  # a layout the step model refuses (e.g. a schedule's micro-batch rule)
        n_legal += 1
        least = min(least, s.memory_per_chip_bytes)
        if s.memory_per_chip_bytes > usable:
            continue
        fitted.add(base)
        rows.append(
            TrainingPlan(
                layout=lay,
                step=s,
                headroom_bytes=usable - s.memory_per_chip_bytes,
                largest_terms=_largest(s.parts),
            )
        )
    if not rows:
        if n_legal == 0:
            raise ValueError(
                f"no legal layout of {mdl.key} on n_chips={n_chips} with seq_len={seq_len} and "
                f"global_batch_tokens={global_batch_tokens:g}: the batch's "
                f"{global_batch_tokens / seq_len:g} sequences must split over the data-parallel "
                f"ranks, and tp must divide the {mdl.n_heads} query heads"
                + (
                    ""
                    if state_replicas == 1
                    else f"; state_replicas={state_replicas} must divide dp x cp"
                )
            )
        raise LayoutDoesNotFit(
            f"no layout of {mdl.key} fits on {n_chips:,} {acc.key}: the smallest of "
            f"{n_legal:,} legal layouts needs {units.fmt_bytes(least)} per chip, "
            f"{units.fmt_bytes(least - usable)} over the {units.fmt_bytes(usable)} usable"
        )
    rows.sort(key=lambda p: (p.step_time_s, -p.headroom_bytes))
    return rows if top is None else rows[:top]
