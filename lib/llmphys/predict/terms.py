"""The named terms of a training step's time, each its own function of one layout.

``train_step`` (``predict/train.py``) adds them; the terms and their mechanisms:

    gemm            every linear layer's forward, two backward GEMMs (and what the
                    recomputation policy runs again, SELECTIVE_POLICIES), each at
                    ``efficiency.gemm_efficiency`` of its own (m, n, k), the weight gradient
                    on its own roofline (``wgrad_roofline_factor``): tile quantization and the
                    roofline make short micro-batches and narrow TP shards cost what they
                    cost. FP8 runs put only the layers' linears (what a Transformer Engine
                    recipe runs in FP8) at the FP8 rate; the output head stays BF16.
    attention       the causal score and value products in a flash kernel (its backward
                    recomputing the scores) at the kernel's published rate for its key length
                    (``Efficiencies.attention_fraction`` of the BF16 peak, in FP8 runs too)
    memory_bound    non-GEMM work as bytes against achieved HBM bandwidth, fused or eager:
                    its own module, ``predict/elementwise.py``
    tp_collectives  Megatron's all-reduces (or all-gather + reduce-scatter) of attention and MLPs
    cp_attention    context parallelism's K/V exchange, less the attention it hides behind;
                    for PyTorch's all-gather ring also its eager FP32 merges (``ring``)
    ep_all_to_all   expert dispatch and combine, exposed (NCCL's or DeepEP's), for the
                    busiest expert-parallel rank (``expert_load``), as are the expert GEMMs
    pipeline_p2p    the activation to the next stage and its gradient back
    pipeline_bubble the schedule's idle fraction f of the busy time: f/(1-f) x busy, plus
                    the wait for the busiest rank (``train.stage_imbalance_time_s``)
    dp_fsdp         gradient reduce-scatter / all-reduce and ZeRO-3 gathers over DP x CP,
                    exposed as the framework issues them: its own module, ``predict/dp.py``
    optimizer       Adam's memory-bound update of this chip's shard of the state

FP8 recipe (``fp8_recipe``): "delayed" (Transformer Engine's DelayedScaling: amax history,
the scale computed in the cast kernel), "tensorwise" (current per-tensor scaling, torchao's
default: one extra read for the amax), "blockwise" / "mxfp8" (per-block scales in the cast
kernel, DeepSeek-V3's 1x128 / 128x128 and Blackwell's 1x32). Every recipe casts each FP8 GEMM's
activation input and output gradient, writing a row-wise and a column-wise (transposed) copy.

Every constant below carries its source; none is fitted (``efficiency.Efficiencies`` holds the
achieved fractions, passed in).

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools
import math

from .. import accounting, comms, parallelism
from ..moe import remote_nodes_per_token  # re-exported: the EP term and its tests use it here
from ..specs import Accelerator, Model
from . import ring
from .efficiency import Efficiencies, default_efficiencies, gemm_efficiency
from .expert_load import max_rank_load_factor, padded_rows_factor
from .memory import local_params

# ---------------------------------------------------------------- constants with sources
GEMM_EFFICIENCY = default_efficiencies().gemm_bf16
"""The default large-GEMM fraction of the BF16 dense peak (data/training_efficiency.toml)."""

ATTENTION_EFFICIENCY = default_efficiencies().attention
"""Fraction of the dense peak a fused (flash) attention kernel sustains (Dao 2023), for chips
without a published curve (``Efficiencies.attention_fraction``)."""

FLASH_FWD_BWD_PASSES = 3.5
"""Forward + backward FLOP of a flash-attention kernel, in forwards: the backward runs 5
matmuls against the forward's 2, recomputing the scores, and FlashAttention-2's published
TFLOP/s count it so (Dao 2023, arXiv:2307.08691, sec. 4.1; Dao-AILab/flash-attention
benchmarks/benchmark_flash_attention.py, ``flops``: 'bwd' is 2.5 f, 'fwd_bwd' 3.5 f)."""

COLLECTIVE_EFFICIENCY = default_efficiencies().collective
"""Bus bandwidth NCCL's ring collectives reach, as a fraction of the link's per-direction rate."""

LINK_LATENCY_S = 10e-6
"""Per-hop latency alpha of a collective over the scale-out network; Llama 3's network has
'latency up to tens of microseconds' on its multi-hop paths (Dubey et al. 2024, sec. 3.3.3)."""

SCALE_UP_LATENCY_S = 3e-6
"""Per-hop latency inside a scale-up domain (NVLink/NVSwitch, ICI): a few microseconds."""

WGRAD_ACCUMULATE_BYTES = 8.0
"""Bytes per weight element a weight-gradient GEMM adds into FP32 main grads (read, write):
Megatron-LM passes fuse_wgrad_accumulation=gradient_accumulation_fusion (default on) to TE's
linears (megatron/core/extensions/transformer_engine.py at 1e057005, line 948), whose wgrad GEMM
writes out=main_grad, accumulate=True after the first micro-batch (TE grouped_linear.py at
0069563f); --bf16 makes main grads FP32 (megatron/training/arguments.py, lines 620-633)."""

BACKWARD_SHARE = 2.0 / 3.0
"""Share of a micro-batch's compute in its backward pass (4 of 6 FLOP per weight): the window
in which bucketed gradient reduction overlaps computation, for the last micro-batch only."""


@functools.lru_cache(maxsize=256)
def _param_counts(mdl: Model) -> tuple[float, float]:
    """(total, active) parameters, cached: the planner calls train_step thousands of times."""
    return accounting.n_params(mdl), accounting.n_active_params(mdl)


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
    selective_policy: str = "attention"
    moe_dispatcher: str = "alltoall"
    fused_elementwise: bool = True
    pipeline_split: str = "even"
    cp_rotate: str = "p2p"
    kv_repeat: bool = False
    attention_kernel: str = "flash2"
    zero3_collectives: str = "per_layer"  # dp.ZERO3_COLLECTIVES
    state_layout: str = "megatron"  # memory.STATE_LAYOUTS
    state_replicas: int = 1  # data-parallel replicas holding the same state shard

    @property
    def passes(self) -> float:  # forward, backward = 2 forwards, recomputed forward
        return 3.0 + self.layer_recompute

    @property
    def layer_recompute(self) -> float:
        """Share of the layers recomputed whole: 1 under full recomputation, 1/2 under
        torchtitan's "layer" policy (every second block checkpointed), else 0."""
        if self.recompute == "full":
            return 1.0
        return 0.5 if self.recompute == "selective" and self.selective_policy == "layer" else 0.0

    @property
    def moe_recompute(self) -> bool:
        """Megatron's "moe" recompute module: the MoE layers' forward runs twice."""
        return self.recompute == "selective" and self.selective_policy == "moe"

    @property
    def op_sac(self) -> bool:
        """torchtitan's op-level selective checkpointing (SELECTIVE_POLICIES)."""
        return self.recompute == "selective" and self.selective_policy == "op"

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
    return local_params(mdl, tp=tp, pp=pp, ep=ep, n_params=_param_counts(mdl)[0])


def _gemm_shapes(c: _Ctx) -> list[tuple[float, float, float, float, bool, float]]:
    """(forward FLOP per token, m, n, k, runs in FP8?, share recomputed) of each GEMM of the
    model; m, n, k as one rank runs it (n and k are the TP shards, m the tokens of one
    micro-batch or expert). The last is the share of its forward run again in the backward."""
    mdl, t, mb = c.mdl, c.tp, c.tokens_mb
    d, h_dim = mdl.d_model, mdl.n_heads * mdl.d_head
    fp8 = c.dtype == "fp8"
    g = 2.0 if mdl.mlp in accounting.GATED_MLPS else 1.0
    n_l = float(mdl.n_layers)
    out: list[tuple[float, float, float, float, bool, float]] = []
    rec = c.layer_recompute
    if mdl.attention == "mla":
        p = accounting.attention_params_per_layer(mdl)
        out.append((2.0 * n_l * p, mb, p / d / t, d, fp8, rec))  # the projections as one GEMM
    else:
        qkv = (mdl.n_heads + 2 * mdl.n_kv_heads) * mdl.d_head
        k_share = mdl.n_kv_heads * mdl.d_head / qkv if c.op_sac else 0.0  # wk of wq, wk, wv
        out += [(2.0 * n_l * qkv * d, mb, qkv / t, d, fp8, rec + k_share)]
        out += [(2.0 * n_l * h_dim * d, mb, d, h_dim / t, fp8, 1.0 if c.op_sac else rec)]

    def mlp(layers: float, width: float, m: float, shard: float) -> None:
        up = rec + ((g - 1.0) / g if c.op_sac else 0.0)  # w3 of w1, w3 (gated); w2 is 7th
        out.append((2.0 * layers * g * width * d, m, g * width / shard, d, fp8, up))
        out.append((2.0 * layers * width * d, m, d, width / shard, fp8, rec))

    if mdl.moe is None:
        mlp(n_l, mdl.d_ff, mb, t)
    else:
        moe = mdl.moe
        nm = float(accounting.n_moe_layers(mdl))
        nd = n_l - nm
        if nd:
            mlp(nd, mdl.d_ff, mb, t)
        load, pad = expert_gemm_factors(c)
        rec = 1.0 if c.moe_recompute else rec
        k = moe.n_experts_per_token  # the busiest rank's rows, each expert's last tile run full
        mlp(nm * k * load * pad, moe.d_ff_expert, expert_gemm_rows(c, pad), 1.0)
        if moe.n_shared_experts:
            mlp(nm, moe.d_ff_expert * moe.n_shared_experts, mb, t)
    head_rec = 1.0 if c.recompute == "full" else 0.0  # as Megatron's full recompute charges it
    out.append((2.0 * mdl.vocab_size * d, mb, mdl.vocab_size / t, d, False, head_rec))  # BF16
    return out


def expert_gemm_factors(c: _Ctx) -> tuple[float, float]:
    """(busiest EP rank's load over the mean, rows computed per routed row) of the expert
    GEMMs, the ep ranks' tokens (each routes its sequence-parallel share) routed uniformly:
    ``expert_load.max_rank_load_factor`` and ``expert_load.padded_rows_factor``."""
    moe = c.mdl.moe
    if moe is None:
        return 1.0, 1.0
    k, e = moe.n_experts_per_token, moe.n_experts
    group = c.tokens_mb / c.tp * c.ep  # tokens one EP group routes per micro-batch
    load = max_rank_load_factor(group, k, e, c.ep) if c.ep > 1 and e % c.ep == 0 else 1.0
    q = k / e
    pad = padded_rows_factor(group * q, math.sqrt(group * q * (1.0 - q)), c.eff.gemm_tile)
    return load, pad


def gemm_time_s(c: _Ctx) -> float:
    """Seconds of every linear layer's GEMMs on this chip (module docstring)."""
    total = 0.0
    for flop_token, m, n, k, fp8, rec in _gemm_shapes(c):
        dt = "fp8" if fp8 else "bf16"
        eta = gemm_efficiency(m, n, k, acc=c.acc, dtype=dt, eff=c.eff)
        passes = 2.0 + rec + 1.0 / wgrad_roofline_factor(c, m, n, k, dt)
        total += flop_token * passes * c.tokens_chip / (c.acc.peak_flop_per_s(dt) * eta)
    return total


def expert_gemm_rows(c: _Ctx, pad: float) -> float:
    """One local expert's GEMM rows a micro-batch; the last tile run full if ``pad`` > 1."""
    assert c.mdl.moe is not None
    m_e = max(1.0, c.tokens_mb / c.tp * c.mdl.moe.n_experts_per_token * c.ep / c.mdl.moe.n_experts)
    return c.eff.gemm_tile * math.ceil(m_e / c.eff.gemm_tile) if pad > 1.0 else m_e


def wgrad_roofline_factor(c: _Ctx, m: float, n: float, k: float, dtype: str) -> float:
    """The weight-gradient GEMM's roofline bound over the forward's (<= 1): it writes n x k FP32
    (4 B the first micro-batch, WGRAD_ACCUMULATE_BYTES after), so few rows per weight fall short."""
    w = 1.0 if dtype == "fp8" else 2.0
    out = WGRAD_ACCUMULATE_BYTES - (WGRAD_ACCUMULATE_BYTES - 4.0) / c.m
    i_fwd = 2.0 * m * n * k / (w * (m * k + k * n) + 2.0 * m * n)
    i_w = 2.0 * m * n * k / (w * (m * n + m * k) + out * n * k)
    ridge = c.acc.peak_flop_per_s(dtype) * c.eff.gemm_fraction(c.acc.key, dtype) / c.hbm_bw
    return min(1.0, i_w / ridge) / min(1.0, i_fwd / ridge)


def attention_flop_per_token(c: _Ctx) -> float:
    """Causal score and value FLOP per token executed, all layers, forward only."""
    return 2.0 * c.mdl.n_layers * c.mdl.n_heads * c.mdl.d_head * c.seq_len


def attention_time_s(c: _Ctx) -> float:
    """Seconds of attention's score and value products.

    A flash kernel's backward recomputes the scores: 5 matmuls against the forward's 2, so
    forward + backward execute FLASH_FWD_BWD_PASSES forwards (a recomputed layer adds one), at
    the kernel's published forward + backward rate for its key length (the local s / cp under
    ring attention), causal mask, for the run's kernel (FlashAttention-2, or cuDNN's as
    Transformer Engine picks on Hopper): ``Efficiencies.attention_fraction``. Without a flash kernel
    the scores are kept: 3 passes at the large-GEMM fraction."""
    f = attention_flop_per_token(c) * c.tokens_chip
    if not c.flash_attention:
        return f * c.passes / (c.acc.peak_flop_per_s("bf16") * c.eff.gemm_bf16)
    eta = c.eff.attention_fraction(
        c.acc.key, c.seq_len / c.cp, causal=True, kernel=c.attention_kernel
    )
    passes = FLASH_FWD_BWD_PASSES + c.layer_recompute
    return f * passes / (c.acc.peak_flop_per_s("bf16") * eta)


def tp_time_s(c: _Ctx) -> float:
    """Megatron's 4 all-reduce-equivalents per layer (6 with full recompute), exposed; an MoE
    layer has attention's 2 only, its experts unsplit (expert TP 1, as the GEMM and EP terms
    take it): the router and the EP all-to-all take its sequence-sharded input, gathering on the
    expert-TP group alone (Megatron-LM 1e057005 moe/: moe_layer.py 172-192, token_dispatcher.py
    57-58, 525-535, 622-631). A shared expert is a TP-split MLP with its own gather and scatter
    (shared_experts.py 94-101), rerun by the "moe" recompute (--moe-shared-expert-overlap, off
    by default, not modelled). On a torus TP is one ring along one axis, on its links only."""
    if c.tp == 1:
        return 0.0
    if c.tp <= c.acc.scale_up_domain_size:
        link = c.up_bw * c.eff.axis_link_fraction(c.acc.key)
    else:
        link = c.out_bw
    per_layer = parallelism.tp_bytes_per_layer(
        tokens=c.tokens_mb, d_model=c.mdl.d_model, tp=c.tp, bytes_per_element=2.0
    )
    scale = 1.0 + 0.5 * c.layer_recompute
    moe, n_moe = c.mdl.moe, accounting.n_moe_layers(c.mdl)
    shared = 0.0 if moe is None or not moe.n_shared_experts else 1.5 if c.moe_recompute else 1.0
    layers = (c.mdl.n_layers - n_moe * (1.0 - shared) / 2.0) / c.pp  # in dense-layer units
    lat = 8 * scale * (c.tp - 1) * SCALE_UP_LATENCY_S
    return c.m * layers * (per_layer * scale / link + lat)


def cp_time_s(c: _Ctx) -> float:
    """Context parallelism's K/V exchange per layer, less the attention it hides behind.

    ``cp_rotate`` (``ring.CP_ROTATIONS``): "p2p" sends each block while the previous one
    computes, so only the excess over the whole ring's attention shows; "allgather" is
    PyTorch's ring (``predict/ring.py``): one all-gather hidden behind the first block only,
    the FP32 dK/dV permute after every backward block, and the eager FP32 merges of the
    partial outputs, all rerun with the forward under full recomputation. ``kv_repeat``: K and
    V travel repeated to the query heads (attention code that expands GQA before the kernel)."""
    if c.cp == 1:
        return 0.0
    mdl = c.mdl
    kv_heads = mdl.n_heads if c.kv_repeat else mdl.n_kv_heads
    link = c.up_bw if c.tp * c.cp <= c.acc.scale_up_domain_size else c.out_bw
    layers = mdl.n_layers / c.pp
    if c.cp_rotate == "p2p":
        kv = comms.ring_attention_bytes(
            seq_len=c.seq_len, micro_batch=c.micro_batch_size, n_kv_heads=kv_heads,
            d_head=mdl.d_head, cp=c.cp, bytes_per_element=2.0,
        ) / c.tp  # fmt: skip
        t_kv = c.m * layers * kv / link
        lat = c.m * layers * 3 * (c.cp - 1) * LINK_LATENCY_S
        return max(0.0, t_kv - attention_time_s(c)) + lat
    n_fwd = 1.0 + c.layer_recompute
    lat = ((c.cp - 1) * (n_fwd + 1.0) + c.cp) * LINK_LATENCY_S
    return c.m * layers * (ring_budget(c).total_s + lat)


def ring_budget(c: _Ctx) -> ring.RingBudget:
    """PyTorch's all-gather ring on this layout, one layer and micro-batch (``ring``)."""
    mdl = c.mdl
    layers = mdl.n_layers / c.pp
    passes = FLASH_FWD_BWD_PASSES + c.layer_recompute if c.flash_attention else c.passes
    link = c.up_bw if c.tp * c.cp <= c.acc.scale_up_domain_size else c.out_bw
    return ring.allgather_ring_budget(
        n_tokens=c.tokens_mb, n_q_heads=mdl.n_heads / c.tp,
        n_kv_heads=(mdl.n_heads if c.kv_repeat else mdl.n_kv_heads) / c.tp, d_head=mdl.d_head,
        cp=c.cp, n_forward=1.0 + c.layer_recompute,
        block_fwd_s=attention_time_s(c) / (passes * c.m * layers * c.cp),
        link_bytes_per_s=link, hbm_bytes_per_s=c.hbm_bw,
    )  # fmt: skip


def ep_time_s(c: _Ctx) -> float:
    """Expert dispatch and combine all-to-alls, exposed.

    Inside one scale-up domain every copy crosses NVLink. An EP group spanning nodes sends
    every remote copy over the scale-out network with NCCL's all-to-all; DeepEP's
    node-deduplicated kernels ("deepep") send a token once to each remote node holding one of
    its experts and forward it over NVLink there (``remote_nodes_per_token``). The busiest
    rank receives the most (``expert_gemm_factors``); Megatron's "moe" recompute module runs
    the forward's two all-to-alls a third time."""
    if c.ep == 1 or c.mdl.moe is None:
        return 0.0
    moe = c.mdl.moe
    n_moe = accounting.n_moe_layers(c.mdl)
    width = 1.0 if c.dtype == "fp8" and c.fp8_recipe == "blockwise" else 2.0
    per_layer = parallelism.ep_bytes_per_layer(
        tokens=c.tokens_mb, d_model=c.mdl.d_model, ep=c.ep, top_k=moe.n_experts_per_token,
        bytes_per_element=width,
    ) / c.tp  # fmt: skip
    domain = c.acc.scale_up_domain_size
    if c.ep <= domain:
        t = per_layer / c.up_bw
    elif c.moe_dispatcher == "deepep":
        nodes = remote_nodes_per_token(moe.n_experts, moe.n_experts_per_token, c.ep // domain)
        inter = 4.0 * c.tokens_mb / c.tp * c.mdl.d_model * width * nodes
        t = max(inter / c.out_bw, per_layer / c.up_bw)  # RDMA and NVLink forwarding overlap
    else:
        t = per_layer / c.out_bw
    passes = 6.0 if c.moe_recompute else 4.0  # dispatch + combine, forward and backward
    t *= expert_gemm_factors(c)[0] * passes / 4.0  # the busiest rank receives the most
    return c.m * (n_moe / c.pp) * (t + passes * (c.ep - 1) * LINK_LATENCY_S)


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
