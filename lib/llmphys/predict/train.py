"""Predicted step time and MFU of a training layout, as a sum of named terms.

One step of a (TP, PP, CP, DP/FSDP, EP)-parallel run on n chips is timed on one chip's
critical path, each term its own function below:

    gemm            every linear layer's forward, two backward GEMMs (and the recomputed
                    forward), each at ``efficiency.gemm_efficiency`` of its own (m, n, k):
                    tile quantization and the roofline make short micro-batches and narrow
                    TP shards cost what they cost. FP8 runs put only the GEMMs a Transformer
                    Engine recipe runs in FP8 (the layers' linears) at the FP8 rate; the
                    output head stays BF16.
    attention       the causal score and value products in a flash kernel at
                    ``Efficiencies.attention`` of the BF16 peak (in FP8 runs too)
    memory_bound    non-GEMM work as bytes against achieved HBM bandwidth: norms, residual
                    adds, dropout (GPT-2-era models), the MLP activation, rotary, the
                    materialised softmax (without flash), cross-entropy over the vocabulary,
                    and FP8's casts, transposes and amax passes. Without sequence parallelism
                    every TP rank repeats the norms, residuals and dropout on the full sequence.
    tp_collectives  Megatron's all-reduces (or reduce-scatter + all-gather) per layer
    cp_attention    context parallelism's K/V exchange, less the attention it hides behind
    ep_all_to_all   expert dispatch and combine, exposed
    pipeline_p2p    the activation to the next stage and its gradient back
    pipeline_bubble the schedule's idle fraction f of the busy time: f/(1-f) x busy
    dp_fsdp         gradient reduce-scatter / all-reduce and ZeRO-3 gathers over DP x CP,
                    less the last micro-batch's backward they hide behind
    optimizer       Adam's memory-bound update of this chip's shard of the state

FP8 recipe (``fp8_recipe``): "delayed" (Transformer Engine's DelayedScaling: amax history,
the scale computed in the cast kernel), "tensorwise" (current per-tensor scaling, torchao's
default: one extra read for the amax), "blockwise" / "mxfp8" (per-block scales in the cast
kernel, DeepSeek-V3's 1x128 / 128x128 and Blackwell's 1x32). Every recipe casts each FP8 GEMM's
activation input and output gradient, writing a row-wise and a column-wise (transposed) copy.

MFU: model FLOP per token over chips x dense peak at ``dtype`` x step time, attention counted
as ``attention_flops`` says ("causal": 6N + 6 L H Q T, what a causal kernel executes; "full":
PaLM's 6N + 12 L H Q T). The result carries both. HFU adds the recomputed forward pass.
Efficiencies are a frozen value (``efficiency.Efficiencies``) passed in; defaults from data.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from typing import Any

from .. import accounting, comms, parallelism, specs, units
from ..specs import Accelerator, Model
from . import memory as memory_mod
from .efficiency import (
    BYTES_PER_ELEMENT,
    Efficiencies,
    default_efficiencies,
    fit_efficiencies,
    gemm_efficiency,
    golden_section_min,
)
from .runs import (
    ATTENTION_FLOPS,
    FLOP_COUNTS,
    FP8_RECIPES,
    MEASURED_UNITS,
    TrainingRun,
    measured_mfu,
    measured_tokens_per_s,
    source_flop_per_token,
    training_runs,
)

# ---------------------------------------------------------------- constants with sources
GEMM_EFFICIENCY = default_efficiencies().gemm_bf16
"""The default large-GEMM fraction of the BF16 dense peak (data/training_efficiency.toml)."""

ATTENTION_EFFICIENCY = default_efficiencies().attention
"""Fraction of the dense peak a fused (flash) attention kernel sustains (Dao 2023)."""

COLLECTIVE_EFFICIENCY = default_efficiencies().collective
"""Bus bandwidth NCCL's ring collectives reach, as a fraction of the link's per-direction rate."""

LINK_LATENCY_S = 10e-6
"""Per-hop latency alpha of a collective over the scale-out network; Llama 3's network has
'latency up to tens of microseconds' on its multi-hop paths (Dubey et al. 2024, sec. 3.3.3)."""

SCALE_UP_LATENCY_S = 3e-6
"""Per-hop latency inside a scale-up domain (NVLink/NVSwitch, ICI): a few microseconds."""

CALIBRATION_RUNS: tuple[str, ...] = ()
"""No run is singled out any more: the two fitted constants are fitted on all runs, and the
validation is leave-one-source-out (``loso_residuals``)."""

ADAM_BYTES_PER_PARAM = 32.0
"""Bytes the fused Adam update reads and writes per parameter it owns: FP32 master weight,
two moments and the gradient read (16 B) and the first three plus a BF16 copy written
(14 B), rounded up (Rajbhandari et al. 2020, sec. 3.1 for the state)."""

HIERARCHICAL_DP_VENDORS = ("Google",)
"""Vendors whose software reduces gradients hierarchically across scale-up domains (PaLM,
Chowdhery et al. 2022, sec. 4); NCCL's multi-node rings run at the per-GPU NIC rate."""

BACKWARD_SHARE = 2.0 / 3.0
"""Share of a micro-batch's compute in its backward pass (4 of 6 FLOP per weight): the window
in which bucketed gradient reduction overlaps computation, for the last micro-batch only."""

NORM_BYTES_PER_H = 8.0
"""Forward HBM bytes per token and unit of d_model of a layer's two norms: each reads and
writes d_model 16-bit values (2 x (2 + 2)). Repeated by every TP rank without SP."""

RESIDUAL_BYTES_PER_H = 12.0
"""Two residual adds per layer, each reading two 16-bit streams and writing one (2 x 6)."""

DROPOUT_BYTES_PER_H = 10.0
"""Two bias-dropout-adds' extra traffic per layer in GPT-2-era blocks: a 16-bit read and
write and a 1-byte mask each (2 x 5; Narayanan et al. 2021, sec. 4.2)."""

SOFTMAX_BYTES_PER_SCORE = 9.0
"""HBM bytes per attention score a forward pass moves when the score matrix is materialised
(no flash kernel): scale-mask-softmax 4, dropout 5 (Narayanan et al. 2021, sec. 4.2)."""

CROSS_ENTROPY_BYTES_PER_LOGIT = 16.0
"""Bytes per vocabulary logit per token: write the 16-bit logits (2), the FP32 softmax reads
them and writes probabilities (2 + 4), the backward reads those and writes a 16-bit gradient
(4 + 2), and the head's dgrad reads it (2)."""

FP8_CAST_BYTES = {"delayed": 4.0, "tensorwise": 6.0, "blockwise": 4.0, "mxfp8": 4.0}
"""Bytes per element an FP8 cast moves: read 16-bit (2), write the row-wise and the transposed
FP8 copy (1 + 1); current per-tensor scaling reads the input once more for its amax (+2)."""

MEMORY_BOUND_PASSES = 3.0
"""Forward plus backward of the elementwise work, the backward moving twice the forward's bytes."""


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
def _param_counts(mdl: Model) -> tuple[float, float]:
    """(total, active) parameters, cached: the planner calls train_step thousands of times."""
    return accounting.n_params(mdl), accounting.n_active_params(mdl)


@functools.lru_cache(maxsize=256)
def _model_by_key(key: str) -> Model:
    return specs.model_spec(key)


@functools.lru_cache(maxsize=64)
def _accelerator_by_key(key: str) -> Accelerator:
    return specs.accelerator(key)


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


@dataclasses.dataclass(frozen=True)
class _Ctx:
    """One layout's numbers, shared by the terms."""

    mdl: Model
    acc: Accelerator
    eff: Efficiencies
    tp: int
    pp: int
    cp: int
    ep: int
    dp: int
    m: int  # micro-batches per DP rank
    seq_len: int
    micro_batch_size: int
    interleave: int
    recompute: str
    zero_stage: int
    dtype: str
    grad_bytes: float
    fsdp_weight_gathers: int
    flash_attention: bool
    sequence_parallel: bool
    fp8_recipe: str
    tokens_chip: float  # tokens per chip per step
    tokens_mb: float  # tokens per micro-batch on one CP rank

    @property
    def passes(self) -> float:  # forward, backward = 2 forwards, recomputed forward
        return 3.0 + (1.0 if self.recompute == "full" else 0.0)

    @property
    def up_bw(self) -> float:
        return self.acc.scale_up_bytes_per_s_per_direction * self.eff.collective

    @property
    def out_bw(self) -> float:
        return self.acc.scale_out_bytes_per_s_per_direction * self.eff.collective

    @property
    def hbm_bw(self) -> float:
        return self.acc.hbm_bytes_per_s * self.eff.hbm

    @property
    def n_local(self) -> float:
        return _local_params(self.mdl, self.tp, self.pp, self.ep)


def _local_params(mdl: Model, tp: int, pp: int, ep: int) -> float:
    n = _param_counts(mdl)[0] / (tp * pp)
    if mdl.moe is not None and ep > 1:
        moe = mdl.moe
        expert = 3.0 * mdl.d_model * moe.d_ff_expert * moe.n_experts
        expert *= (mdl.n_layers - moe.n_dense_layers) / pp
        n += expert / ep - expert / tp
    return n


def _gemm_shapes(c: _Ctx) -> list[tuple[float, float, float, float, bool]]:
    """(forward FLOP per token, m, n, k, runs in FP8?) of each GEMM of the model; m, n, k as
    one rank runs it (n and k are the TP shards, m the tokens of one micro-batch or expert)."""
    mdl, t, mb = c.mdl, c.tp, c.tokens_mb
    d, h_dim = mdl.d_model, mdl.n_heads * mdl.d_head
    fp8 = c.dtype == "fp8"
    g = 2.0 if mdl.mlp in accounting.GATED_MLPS else 1.0
    n_l = float(mdl.n_layers)
    out: list[tuple[float, float, float, float, bool]] = []
    if mdl.attention == "mla":
        p = accounting.attention_params_per_layer(mdl)
        out.append((2.0 * n_l * p, mb, p / d / t, d, fp8))  # the projections as one GEMM
    else:
        qkv = (mdl.n_heads + 2 * mdl.n_kv_heads) * mdl.d_head
        out += [(2.0 * n_l * qkv * d, mb, qkv / t, d, fp8)]
        out += [(2.0 * n_l * h_dim * d, mb, d, h_dim / t, fp8)]

    def mlp(layers: float, width: float, m: float, shard: float) -> None:
        out.append((2.0 * layers * g * width * d, m, g * width / shard, d, fp8))
        out.append((2.0 * layers * width * d, m, d, width / shard, fp8))

    if mdl.moe is None:
        mlp(n_l, mdl.d_ff, mb, t)
    else:
        moe = mdl.moe
        nd, nm = float(moe.n_dense_layers), n_l - moe.n_dense_layers
        if nd:
            mlp(nd, mdl.d_ff, mb, t)
        k = moe.n_experts_per_token
        m_e = max(1.0, mb / t * k * c.ep / moe.n_experts)  # tokens per local expert
        mlp(nm * k, moe.d_ff_expert, m_e, 1.0)
        if moe.n_shared_experts:
            mlp(nm, moe.d_ff_expert * moe.n_shared_experts, mb, t)
    out.append((2.0 * mdl.vocab_size * d, mb, mdl.vocab_size / t, d, False))  # head: BF16
    return out


def gemm_time_s(c: _Ctx) -> float:
    """Seconds of every linear layer's GEMMs on this chip (module docstring)."""
    total = 0.0
    for flop_token, m, n, k, fp8 in _gemm_shapes(c):
        dt = "fp8" if fp8 else "bf16"
        eta = gemm_efficiency(m, n, k, acc=c.acc, dtype=dt, eff=c.eff)
        total += flop_token * c.passes * c.tokens_chip / (c.acc.peak_flop_per_s(dt) * eta)
    return total


def attention_flop_per_token(c: _Ctx) -> float:
    """Causal score and value FLOP per token executed, all layers, forward only."""
    return 2.0 * c.mdl.n_layers * c.mdl.n_heads * c.mdl.d_head * c.seq_len


def attention_time_s(c: _Ctx) -> float:
    """Seconds of attention's score and value products (flash: at Efficiencies.attention)."""
    flop = attention_flop_per_token(c) * c.passes * c.tokens_chip
    eta = c.eff.attention_fraction(c.acc.key) if c.flash_attention else c.eff.gemm_bf16
    return flop / (c.acc.peak_flop_per_s("bf16") * eta)


def memory_bound_bytes_per_token(c: _Ctx) -> dict[str, float]:
    """Forward-pass HBM bytes per token of the non-GEMM work, by kind, all layers, counted
    at full width (the chip does tokens_chip of them); norms x tp without SP."""
    mdl, d = c.mdl, c.mdl.d_model
    n_l = mdl.n_layers
    rep = 1.0 if c.sequence_parallel else float(c.tp)
    ff = memory_mod._active_ff(mdl)
    act = (3.0 if mdl.mlp in accounting.GATED_MLPS else 2.0) * ff * 2.0
    rope = 0.0
    if mdl.position == "rope":  # read and write q and k
        rope = 2.0 * 2.0 * (mdl.n_heads + mdl.n_kv_heads) * mdl.d_head
    parts = {
        "norms": NORM_BYTES_PER_H * d * n_l * rep,
        "residual": RESIDUAL_BYTES_PER_H * d * n_l * rep,
        "dropout": (DROPOUT_BYTES_PER_H * d * n_l * rep) if memory_mod._dropout(mdl) else 0.0,
        "activation": act * n_l,
        "rotary": rope * n_l,
        "softmax": 0.0
        if c.flash_attention
        else SOFTMAX_BYTES_PER_SCORE * mdl.n_heads * c.seq_len / 2 * n_l,
        "fp8_casts": 0.0,
    }
    if c.dtype == "fp8":
        h_dim = mdl.n_heads * mdl.d_head
        qkv = (mdl.n_heads + 2 * mdl.n_kv_heads) * mdl.d_head
        g = 2.0 if mdl.mlp in accounting.GATED_MLPS else 1.0
        inputs = 2.0 * d + h_dim + ff  # activation inputs of qkv, o, up, down
        grads = qkv + d + g * ff + d  # output gradients of the same four
        parts["fp8_casts"] = FP8_CAST_BYTES[c.fp8_recipe or "delayed"] * (inputs + grads / 2) * n_l
    return parts


def memory_bound_time_s(c: _Ctx) -> float:
    """Seconds of non-GEMM work: forward bytes x passes, cross-entropy and FP8 weight casts.

    Gradient accumulation is not here: Megatron-Core fuses it into the weight-gradient GEMM's
    epilogue (gradient_accumulation_fusion), whose extra FP32 read and write stay under a
    compute-bound GEMM's time on the roofline."""
    per_token = sum(memory_bound_bytes_per_token(c).values())
    factor = MEMORY_BOUND_PASSES + (1.0 if c.recompute == "full" else 0.0)
    ce = CROSS_ENTROPY_BYTES_PER_LOGIT * c.mdl.vocab_size
    byts = (per_token * factor + ce) * c.tokens_chip
    if c.dtype == "fp8":  # weights cast once per step (cached over micro-batches)
        byts += FP8_CAST_BYTES[c.fp8_recipe or "delayed"] * c.n_local
    return byts / c.hbm_bw


def tp_time_s(c: _Ctx) -> float:
    """Megatron's 4 all-reduce-equivalents per layer (6 with full recompute), exposed."""
    if c.tp == 1:
        return 0.0
    link = c.up_bw if c.tp <= c.acc.scale_up_domain_size else c.out_bw
    per_layer = parallelism.tp_bytes_per_layer(
        tokens=c.tokens_mb, d_model=c.mdl.d_model, tp=c.tp, bytes_per_element=2.0
    )
    scale = 1.5 if c.recompute == "full" else 1.0
    n_coll = 8 * scale
    layers = c.mdl.n_layers / c.pp
    lat = n_coll * (c.tp - 1) * SCALE_UP_LATENCY_S
    return c.m * layers * (per_layer * scale / link + lat)


def cp_time_s(c: _Ctx) -> float:
    """Context parallelism's K/V exchange per layer, less the attention it hides behind."""
    if c.cp == 1:
        return 0.0
    mdl = c.mdl
    kv = (
        comms.ring_attention_bytes(
            seq_len=c.seq_len,
            micro_batch=c.micro_batch_size,
            n_kv_heads=mdl.n_kv_heads,
            d_head=mdl.d_head,
            cp=c.cp,
            bytes_per_element=2.0,
        )
        / c.tp
    )
    link = c.up_bw if c.tp * c.cp <= c.acc.scale_up_domain_size else c.out_bw
    layers = mdl.n_layers / c.pp
    t_kv = c.m * layers * kv / link
    lat = c.m * layers * 3 * (c.cp - 1) * LINK_LATENCY_S
    return max(0.0, t_kv - attention_time_s(c)) + lat


def ep_time_s(c: _Ctx) -> float:
    """Expert dispatch and combine all-to-alls, exposed."""
    if c.ep == 1 or c.mdl.moe is None:
        return 0.0
    moe = c.mdl.moe
    n_moe = c.mdl.n_layers - moe.n_dense_layers
    per_layer = (
        parallelism.ep_bytes_per_layer(
            tokens=c.tokens_mb,
            d_model=c.mdl.d_model,
            ep=c.ep,
            top_k=moe.n_experts_per_token,
            bytes_per_element=1.0 if c.dtype == "fp8" and c.fp8_recipe == "blockwise" else 2.0,
        )
        / c.tp
    )
    link = c.up_bw if c.ep <= c.acc.scale_up_domain_size else c.out_bw
    return c.m * (n_moe / c.pp) * (per_layer / link + 4 * (c.ep - 1) * LINK_LATENCY_S)


def p2p_time_s(c: _Ctx) -> float:
    """The activation sent to the next stage and its gradient back, every micro-batch chunk."""
    if c.pp == 1:
        return 0.0
    act = c.tokens_mb * c.mdl.d_model * 2.0 / c.tp
    return c.m * c.interleave * 2 * (act / c.out_bw + LINK_LATENCY_S)


def bubble_time_s(busy_s: float, schedule: dict[str, float]) -> float:
    """The schedule's idle fraction f of the step, as f / (1 - f) x the busy time."""
    f = schedule["bubble_fraction"]
    return f / (1.0 - f) * busy_s


def dp_time_s(c: _Ctx, compute_s: float) -> float:
    """Gradient (and ZeRO-3 weight) traffic over DP x CP, less the last micro-batch's backward."""
    group = c.dp * c.cp
    if group == 1:
        return 0.0
    per_param = comms.zero_dp_bytes_per_param(
        c.zero_stage,
        grad_bytes=c.grad_bytes,
        weight_bytes=1.0 if c.dtype == "fp8" and c.zero_stage == 3 else 2.0,
        n_weight_gathers=c.fsdp_weight_gathers,
    )
    n_bytes = per_param / 2 * c.n_local  # a buffer whose all-reduce sends per_param bytes
    acc = c.acc
    room = max(1, acc.scale_up_domain_size // (c.tp * c.pp))
    inner = max(d for d in range(1, min(group, room) + 1) if group % d == 0)
    if inner == group:
        t = comms.ring_all_reduce_time_s(
            n_bytes, group, link_bytes_per_s=c.up_bw, latency_s=SCALE_UP_LATENCY_S
        )
    elif acc.vendor in HIERARCHICAL_DP_VENDORS:
        t = comms.hierarchical_all_reduce_time_s(
            n_bytes,
            n_nodes=group // inner,
            gpus_per_node=inner,
            intra_bytes_per_s=c.up_bw,
            inter_bytes_per_s=c.out_bw,
            intra_latency_s=SCALE_UP_LATENCY_S,
            inter_latency_s=LINK_LATENCY_S,
        )
    else:
        t = comms.ring_all_reduce_time_s(
            n_bytes, group, link_bytes_per_s=c.out_bw, latency_s=LINK_LATENCY_S
        )
    # gradients accumulate over the micro-batches, so only the last one's backward can hide the
    # reduction (and, under ZeRO-3, the first one's forward the weight gathers, of similar size)
    window = BACKWARD_SHARE * compute_s / c.m
    return max(0.0, t - window)


def optimizer_time_s(c: _Ctx) -> float:
    """Adam's memory-bound update of the state this chip owns (sharded over DP x CP)."""
    owned = c.n_local / (c.dp * c.cp if c.zero_stage >= 1 else 1)
    return ADAM_BYTES_PER_PARAM * owned / c.hbm_bw


def _layout(
    n_chips: int,
    tp: int,
    pp: int,
    cp: int,
    ep: int,
    seq_len: int,
    global_batch_tokens: float,
    micro_batch_size: int,
    interleave: int,
    model: Model,
) -> tuple[int, int]:
    for name, v in (
        ("n_chips", n_chips),
        ("tp", tp),
        ("pp", pp),
        ("cp", cp),
        ("ep", ep),
        ("seq_len", seq_len),
        ("micro_batch_size", micro_batch_size),
        ("interleave", interleave),
    ):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if n_chips % (tp * pp * cp):
        raise ValueError(
            f"n_chips={n_chips} is not divisible by tp*pp*cp = {tp}*{pp}*{cp} "
            f"= {tp * pp * cp}; the data-parallel degree must be an integer"
        )
    dp = n_chips // (tp * pp * cp)
    if (dp * cp * tp) % ep:
        raise ValueError(
            f"ep={ep} must divide dp*cp*tp = {dp * cp * tp} "
            f"(= n_chips / pp); experts shard inside the folded expert group"
        )
    if ep > 1 and model.moe is None:
        raise ValueError(f"ep={ep} needs a mixture-of-experts model; {model.key} is dense")
    if seq_len % cp:
        raise ValueError(f"seq_len={seq_len} is not divisible by cp={cp}")
    n_seqs = global_batch_tokens / seq_len
    if n_seqs != int(n_seqs):
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} is not a whole number "
            f"of {seq_len}-token sequences"
        )
    per_rank = int(n_seqs) / dp
    if per_rank < 1:
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} over dp={dp} replicas is "
            f"{global_batch_tokens / dp:g} tokens each, less than one "
            f"{seq_len}-token sequence: the batch cannot feed this many replicas"
        )
    if per_rank != int(per_rank) or int(per_rank) % micro_batch_size:
        raise ValueError(
            f"{int(n_seqs)} sequences over dp={dp} ranks in micro-batches of "
            f"{micro_batch_size} do not divide: each rank needs a whole number "
            f"of micro-batches"
        )
    if model.n_layers + 2 < pp * interleave:  # the embedding and the head may be chunks
        raise ValueError(
            f"pp*interleave = {pp}*{interleave} exceeds the model's "
            f"{model.n_layers} layers plus embedding and head"
        )
    return dp, int(per_rank) // micro_batch_size


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
    efficiencies: Efficiencies | None = None,
) -> TrainStep:
    """Predicted time (s), MFU and memory of one training step of ``model`` on ``n_chips``.

    DP = n_chips / (tp pp cp); each DP rank runs m = B / (s dp b) micro-batches. ``schedule``
    defaults to "interleaved" when interleave > 1, else "1f1b". ``grad_bytes`` is the width of
    the gradients the data-parallel group reduces; ``fsdp_weight_gathers`` how often ZeRO-3
    gathers the weights per step. Raises ``LayoutDoesNotFit`` when the layout overflows HBM
    (``check_memory=False`` times it anyway). Terms: module docstring.

    Llama 3 8B on one 8-GPU H100 server in BF16 at 8K context, FSDP:

    >>> s = train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=8192,
    ...                global_batch_tokens=128 * 8192, zero_stage=3)
    >>> round(s.mfu, 2), round(s.mfu_full, 2), s.fits
    (0.62, 0.69, True)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    eff = efficiencies or default_efficiencies()
    if recompute not in parallelism.RECOMPUTE:
        raise ValueError(
            f"recompute={recompute!r} is not known; allowed: {', '.join(parallelism.RECOMPUTE)}"
        )
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    if attention_flops not in ATTENTION_FLOPS:
        raise ValueError(
            f"attention_flops={attention_flops!r} is not known; "
            f"allowed: {', '.join(ATTENTION_FLOPS)}"
        )
    if dtype not in ("bf16", "fp16", "fp8"):
        raise ValueError(f"dtype={dtype!r} is not known; allowed: bf16, fp16, fp8")
    if fp8_recipe not in FP8_RECIPES:
        raise ValueError(f"fp8_recipe={fp8_recipe!r} is not known; allowed: {FP8_RECIPES[1:]}")
    units.check_positive("global_batch_tokens", global_batch_tokens)
    dp, m = _layout(
        n_chips, tp, pp, cp, ep, seq_len, global_batch_tokens, micro_batch_size, interleave, mdl
    )
    schedule = schedule or ("interleaved" if interleave > 1 else "1f1b")
    c = _Ctx(
        mdl, acc, eff, tp, pp, cp, ep, dp, m, seq_len, micro_batch_size, interleave, recompute,
        zero_stage, dtype, grad_bytes, fsdp_weight_gathers, flash_attention, sequence_parallel,
        fp8_recipe, global_batch_tokens / n_chips, micro_batch_size * seq_len / cp,
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
    parts["pipeline_bubble"] = bubble_time_s(sum(parts.values()), sched)
    parts["dp_fsdp"] = dp_time_s(c, parts["gemm"] + parts["attention"])
    parts["optimizer"] = optimizer_time_s(c)
    step = sum(parts.values())

    memory_parts = memory_mod.memory_parts(
        mdl, tp=tp, pp=pp, cp=cp, dp=dp, ep=ep, seq_len=seq_len,
        micro_batch_size=micro_batch_size, recompute=recompute, zero_stage=zero_stage,
        dtype=dtype, fsdp_weight_gathers=fsdp_weight_gathers,
        sequence_parallel=sequence_parallel, flash_attention=flash_attention,
        activation_microbatches=sched["activation_microbatches"],
        weight_copies=sched["weight_copies"], allocator_overhead=eff.allocator_overhead,
        n_params=_param_counts(mdl)[0],
    )  # fmt: skip
    memory = sum(memory_parts.values())
    if check_memory and memory > acc.hbm_bytes:
        raise LayoutDoesNotFit(
            f"{mdl.key} on {acc.key} with tp={tp}, pp={pp}, cp={cp}, dp={dp}, "
            f"recompute={recompute!r}, zero_stage={zero_stage} needs "
            f"{units.fmt_bytes(memory)} per chip ("
            + ", ".join(f"{units.fmt_bytes(v)} {k}" for k, v in memory_parts.items() if v)
            + f"); the chip has {units.fmt_bytes(acc.hbm_bytes)}"
        )
    tokens_per_s = global_batch_tokens / step
    peak = acc.peak_flop_per_s(dtype)
    attn = 6.0 * mdl.n_layers * mdl.n_heads * mdl.d_head * seq_len  # 6 L H Q T
    f_causal = 6.0 * _param_counts(mdl)[1] + attn  # as runs.model_flop_per_token
    f_full = f_causal + attn
    mfu_c = tokens_per_s * f_causal / (n_chips * peak)
    mfu_f = tokens_per_s * f_full / (n_chips * peak)
    extra = {"none": 0.0, "selective": 0.0, "full": 1.0 / 3.0}[recompute]
    f_sel = f_causal if attention_flops == "causal" else f_full
    return TrainStep(
        step_time_s=step,
        mfu=mfu_c if attention_flops == "causal" else mfu_f,
        hfu=tokens_per_s * f_sel * (1.0 + extra) / (n_chips * peak),
        tokens_per_s=tokens_per_s,
        memory_per_chip_bytes=memory,
        hbm_bytes=acc.hbm_bytes,
        dp=dp,
        n_microbatches=m,
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
) -> TrainStep:
    """``train_step`` on a published run's layout, nothing else taken from the run."""
    r = training_runs()[run] if isinstance(run, str) else run
    return train_step(
        r.model,
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
        attention_flops=attention_flops,
        efficiencies=efficiencies,
        check_memory=False,
    )


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


# ------------------------------------------------------------------ when communication hides
def hiding_thresholds(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    tp: int = 8,
    cp: int = 16,
    ep: int = 64,
    dp_bytes_per_param: float = 4.0,
    dtype: str = "bf16",
    n_microbatches: int = 1,
) -> dict[str, dict[str, float | str | None]]:
    """Per parallelism dimension: the quantity whose size makes its traffic cost less than the
    compute it can hide behind, the threshold on this chip, and the model's value.

    With achieved compute R = P x GEMM_EFFICIENCY and link rate beta x COLLECTIVE_EFFICIENCY,
    and, as ``train_step`` charges it, DP traffic hidden only behind the last micro-batch's
    backward (2/3 of its compute; ``n_microbatches`` of them per step):

    DP/FSDP  tokens per data-parallel replica B/d >= k R m / (4 beta_out), k bytes per parameter
             sent (4 for a BF16 all-reduce, 6 for ZeRO-3 or Llama 3's FSDP)
    TP       d_model >= 16 (t-1) R / (72 beta) = 2 (t-1) R / (9 beta), on the link TP uses
    PP       layers per stage x d_model >= R / (18 beta_out); pipeline sends are not hidden
             by ``train_step`` (this is the size at which they cost under half the compute)
    EP       d_ff of an expert >= 8 (e-1)/e x R / (18 beta) (dispatch and combine of top-k
             copies against their SwiGLU FLOP), beta the link the expert group spans
    CP       seq_len >= 2 (cp-1) (g/H) R_attn / beta (K/V exchange against causal attention)

    >>> t = hiding_thresholds("llama31_405b", "h100_sxm", tp=8)
    >>> round(t["TP"]["threshold"]), int(t["TP"]["value"])
    (3078, 16384)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    eff = default_efficiencies()
    r = acc.peak_flop_per_s(dtype) * eff.gemm_fraction(acc.key, dtype)
    r_attn = acc.peak_flop_per_s("bf16") * eff.attention
    up = acc.scale_up_bytes_per_s_per_direction * eff.collective
    out = acc.scale_out_bytes_per_s_per_direction * eff.collective
    domain = acc.scale_up_domain_size
    ep_link = up if tp * ep <= domain else out
    cp_link = up if tp * cp <= domain else out
    rows = {
        "DP/FSDP": (
            "tokens per data-parallel replica",
            dp_bytes_per_param * r * n_microbatches / (4 * out),
            None,
        ),
        "TP": (
            "d_model",
            2 * (tp - 1) * r / (9 * (up if tp <= domain else out)),
            float(mdl.d_model),
        ),
        "PP": ("layers per stage x d_model", r / (18 * out), None),
        "EP": (
            "d_ff of one expert",
            8 * (ep - 1) / ep * r / (18 * ep_link),
            float(mdl.moe.d_ff_expert) if mdl.moe is not None else None,
        ),
        "CP": ("seq_len", 2 * (cp - 1) * mdl.n_kv_heads / mdl.n_heads * r_attn / cp_link, None),
    }
    return {k: {"quantity": q, "threshold": th, "value": v} for k, (q, th, v) in rows.items()}


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
    "ADAM_BYTES_PER_PARAM",
    "ATTENTION_EFFICIENCY",
    "BACKWARD_SHARE",
    "BYTES_PER_ELEMENT",
    "CALIBRATION_RUNS",
    "COLLECTIVE_EFFICIENCY",
    "FLOP_COUNTS",
    "GEMM_EFFICIENCY",
    "HIERARCHICAL_DP_VENDORS",
    "LINK_LATENCY_S",
    "MEASURED_UNITS",
    "SCALE_UP_LATENCY_S",
    "SOFTMAX_BYTES_PER_SCORE",
    "LayoutDoesNotFit",
    "TrainStep",
    "TrainingRun",
    "golden_section_min",
    "measured_tokens_per_s",
    "source_flop_per_token",
]
