"""The data-parallel term of a training step: gradient and ZeRO-3 traffic over DP x CP, exposed.

``dp_time_s`` is the ``dp_fsdp`` term ``train_step`` adds. What it charges:

Rate. A DP group inside one scale-up domain rings over its links. NCCL's rings across nodes map
each channel onto its own NIC, so a ring over g GPUs per node runs near g NICs' rate
(``comms.multi_nic_ring_bytes_per_s``; NVIDIA measures 192 GB/s all-reduce bus bandwidth on a
DGX A100's eight 25 GB/s NICs, NVIDIA/nccl issues #687 and #812). Google's software reduces
hierarchically, phase after phase (``HIERARCHICAL_DP_VENDORS``).

Latency. NCCL runs ZeRO-3's all-gathers and reduce-scatters as rings only: its cost model
skips every other algorithm for them ("if (coll != ncclFuncAllReduce && a != NCCL_ALGO_RING)
continue;", src/graph/tuning.cc, NCCL v2.9.9, 2021); tree "doesn't apply to
allgather/reducescatter", and PAT, from NCCL 2.23, supports "one GPU per node" only (NCCL's
maintainer, NVIDIA/nccl issue #1473, 2024). A ring over p ranks in s domains takes p - 1 steps,
s - 1 of them across the network, as the same cost model charges them:
(p - s) x SCALE_UP_LATENCY_S + (s - 1) x LINK_LATENCY_S per collective
(``comms.ring_step_latency_s``; NCCL's table gives 3.4 us per NVLink and 9.6 us per network
step for the Simple protocol, near the two constants).

Overlap, by how the framework issues its ZeRO-3 collectives (``ZERO3_COLLECTIVES``):

    per_layer   PyTorch FSDP2 as torchtitan applies it (``fully_shard`` per transformer
                block, the rest in the root group): one all-gather per block and pass, one
                reduce-scatter per block, each prefetched on its own stream while the
                neighbouring block computes. Exposed: the root group's and the first block's
                all-gather before the forward ("The 1st all-gather will not be able to
                overlap with anything", PyTorch's FSDP notes), the first block's and the root's
                reduce-scatter after the backward, and whatever traffic of a pass outlasts
                that pass's compute. The last block and the root are not resharded after the
                forward (torchtitan parallelize_llama.py at 0413364 and 9dec370; "The root
                FSDP state has its value specially set to ``False``", ``fully_shard``'s
                docstring), so the backward starts without a gather.
    per_tensor  DeepSpeed ZeRO-3 of 2021 (v0.3.13-v0.4.0): one collective per parameter
                TENSOR, each all-gather after ``torch.cuda.synchronize()``
                (deepspeed/runtime/zero/partition_parameters.py, ``_allgather_param``; the
                fetch then synchronizes again, stage3.py ``fetch_sub_module``), one
                reduce-scatter per gradient tensor (``_reduce_scatter_gradient``): a
                device-wide synchronize waits for every stream, so nothing overlaps.
                (n_weight_gathers + 1) x layers x ``megatron_tensors_per_layer`` collectives.

ZeRO stages 0-2 reduce gradients (bucketed) during the last micro-batch's backward only.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import accounting, comms
from ..specs import Model
from .memory import param_shares
from .terms import BACKWARD_SHARE, LINK_LATENCY_S, SCALE_UP_LATENCY_S, _Ctx, _param_counts

ADAM_BYTES_PER_PARAM = 32.0
"""Bytes the fused Adam update reads and writes per parameter it owns: FP32 master weight,
two moments and the gradient read (16 B) and the first three plus a BF16 copy written
(14 B), rounded up (Rajbhandari et al. 2020, sec. 3.1 for the state)."""

HIERARCHICAL_DP_VENDORS = ("Google",)
"""Vendors whose software reduces gradients hierarchically across scale-up domains, phase after
phase: reduce-scatter over ICI, all-reduce of each chip's shard over the data-center network
(DCN), all-gather (PaLM, Chowdhery et al. 2022, sec. 4). Only gradients cross the DCN: MaxText
shards weights (FSDP) inside a slice and replicates them across slices, so the ZeRO-3 gathers
stay on ICI. Every other vendor's DP group that spans nodes rings over NCCL's channels, one NIC
each (``comms.multi_nic_ring_bytes_per_s``)."""

ZERO3_COLLECTIVES = ("per_layer", "per_tensor")
"""How a framework issues ZeRO-3's all-gathers and reduce-scatters (module docstring):
"per_layer", one per transformer block, prefetched so it overlaps compute (PyTorch FSDP2,
torchtitan; the default); "per_tensor", one per parameter tensor after a device-wide
synchronize, so nothing overlaps (DeepSpeed ZeRO-3 v0.3.13-v0.4.0, what Narayanan et al. 2021
ran; DeepSpeed PR #1188, 2021, on its fetch path: 'the async version is not async at all')."""


def check_zero3_collectives(zero3_collectives: str) -> None:
    """ValueError naming ``zero3_collectives`` and the allowed values when it is not one."""
    if zero3_collectives not in ZERO3_COLLECTIVES:
        raise ValueError(
            f"zero3_collectives={zero3_collectives!r} is not known; "
            f"allowed: {', '.join(ZERO3_COLLECTIVES)}"
        )


def megatron_tensors_per_layer(mdl: Model) -> int:
    """Parameter tensors in one layer as Megatron-LM lays it out: four linears (fused QKV, the
    attention output, the two MLP projections, a gated MLP's gate fused into the first), each a
    weight plus a bias where the model has biases, and the norms, a gain plus a bias each for
    LayerNorm (megatron/model/transformer.py and mpu/layers.py, commit e270f68, April 2021:
    input_layernorm, query_key_value, dense, post_attention_layernorm, dense_h_to_4h,
    dense_4h_to_h; ``bias=True`` by default). GPT-3's layer: 12 tensors.

    >>> from llmphys import specs
    >>> megatron_tensors_per_layer(specs.model_spec("gpt3_175b"))
    12
    """
    linears = 1 + int(mdl.qkv_bias) + 3 * (1 + int(mdl.linear_bias))
    norms = mdl.n_norms_per_layer * (2 if mdl.norm == "layernorm" else 1)
    return linears + norms


def _domains(c: _Ctx) -> tuple[int, int]:
    """(the DP x CP group, how many of its chips share one scale-up domain)."""
    group = c.dp * c.cp
    room = max(1, c.acc.scale_up_domain_size // (c.tp * c.pp))
    inner = max(d for d in range(1, min(group, room) + 1) if group % d == 0)
    return group, inner


def _ring(c: _Ctx) -> tuple[float, float]:
    """(bus rate in bytes/s, latency of one ring collective in s) of the DP x CP group."""
    group, inner = _domains(c)
    if inner == group:
        rate = c.up_bw
    else:
        rate = comms.multi_nic_ring_bytes_per_s(
            inner, nic_bytes_per_s=c.out_bw, nvlink_bytes_per_s=c.up_bw
        )
    lat = comms.ring_step_latency_s(
        group, group // inner, intra_step_s=SCALE_UP_LATENCY_S, inter_step_s=LINK_LATENCY_S
    )
    return rate, lat


def dp_time_s(c: _Ctx, compute_s: float) -> float:
    """Exposed seconds of DP x CP traffic; ``compute_s`` is the step's GEMM and attention time.

    Stages 0-2 (and hierarchical reductions): the traffic less the last micro-batch's backward.
    ZeRO-3 "per_tensor": all of it; "per_layer": ``fsdp_exposed_time_s``; both plus the
    gathered weights' copy-out (``copy_out_time_s``)."""
    group = c.dp * c.cp
    if group == 1:
        return 0.0
    if c.zero_stage < 3 or c.acc.vendor in HIERARCHICAL_DP_VENDORS:
        # gradients accumulate over the micro-batches: only the last one's backward hides them
        return max(0.0, dp_collective_time_s(c) - BACKWARD_SHARE * compute_s / c.m)
    if c.zero3_collectives == "per_tensor":
        return dp_collective_time_s(c) + copy_out_time_s(c)
    return fsdp_exposed_time_s(c, compute_s) + copy_out_time_s(c)


def copy_out_time_s(c: _Ctx) -> float:
    """ZeRO-3's copy of each gathered buffer into the parameters, on the compute stream: a read
    and a write of w x N_local bytes per weight gather, at achieved HBM bandwidth. FSDP2 copies
    out in ``wait_for_unshard`` ("to overlap the current copy-out with the next all-gather",
    torch/distributed/_composable/fsdp/_fsdp_param_group.py); DeepSpeed's 2021 gathers, into a
    list of one tensor per rank, paid it inside ``torch.distributed.all_gather`` ("Known issue:
    the `torch.distributed.all_gather` will do implicit memcpy at the end of each
    `ncclAllgather`", DeepSpeed PR #1188)."""
    return c.fsdp_weight_gathers * 2.0 * _weight_bytes(c) * c.n_local / c.hbm_bw


def dp_collective_time_s(c: _Ctx) -> float:
    """Seconds of DP x CP traffic per step before any overlap (``dp_time_s`` hides part of it)."""
    group, inner = _domains(c)
    if group == 1:
        return 0.0
    per_param = comms.zero_dp_bytes_per_param(
        c.zero_stage,
        grad_bytes=c.grad_bytes,
        weight_bytes=_weight_bytes(c),
        n_weight_gathers=c.fsdp_weight_gathers,
    )
    n_bytes = per_param / 2 * c.n_local  # a buffer whose all-reduce sends per_param bytes
    if c.acc.vendor in HIERARCHICAL_DP_VENDORS and inner < group:  # ICI, then DCN gradients
        t = comms.hierarchical_all_reduce_time_s(
            n_bytes,
            n_nodes=1,
            gpus_per_node=inner,
            intra_bytes_per_s=c.up_bw,
            intra_latency_s=SCALE_UP_LATENCY_S,
            inter_bytes_per_s=c.out_bw,
        )
        return t + dcn_gradient_time_s(c)
    rate, lat = _ring(c)
    # the experts' gradients reduce over their own data-parallel group (memory.param_shares)
    e_bytes = per_param / 2 * _shares(c)[2]
    edp = c.tp * c.dp * c.cp // c.ep
    t = 2 * (group - 1) / group * (n_bytes - e_bytes) / rate + 2 * (edp - 1) / edp * e_bytes / rate
    return t + n_collectives(c) * lat


def n_collectives(c: _Ctx) -> float:
    """Ring collectives per step: an all-reduce (two ring passes) for stages 0-2; under ZeRO-3,
    (n_weight_gathers + 1) per layer and collective unit, units per layer being 1 ("per_layer")
    or ``megatron_tensors_per_layer`` ("per_tensor"), plus the root group's under "per_layer"."""
    if c.zero_stage < 3:
        return 2.0
    layers = c.mdl.n_layers / c.pp
    if c.zero3_collectives == "per_tensor":
        return (c.fsdp_weight_gathers + 1) * layers * megatron_tensors_per_layer(c.mdl)
    return (c.fsdp_weight_gathers + 1) * layers + 2.0


def _weight_bytes(c: _Ctx) -> float:
    return 1.0 if c.dtype == "fp8" and c.zero_stage == 3 else 2.0


def root_params(c: _Ctx) -> float:
    """Parameters per chip outside the transformer blocks (embeddings, an untied output head):
    FSDP2's root group, gathered once per step."""
    outside = accounting.embedding_params(c.mdl) + accounting.output_head_params(c.mdl)
    return min(c.n_local, outside / (c.tp * c.pp))


def fsdp_exposed_time_s(c: _Ctx, compute_s: float) -> float:
    """Exposed seconds of FSDP2's per-block collectives (module docstring, "per_layer").

    With P the block parameters per chip in L blocks, R the root's, f = (p-1)/p, the rate and
    the step latency a from ``_ring``, w and g the weight and gradient widths, n the weight
    gathers per step: the root's gather and reduce-scatter, f R (w + g) / rate + 2a, and the
    first block's, f (P/L) w / rate + a and f (P/L) g / rate + a, are exposed; the rest of each
    pass, forward = f w P / rate + L a and backward = (n - 1) forward + f g P / rate + L a less
    the first block's, hides behind that pass's compute (1/3 and 2/3 of one micro-batch's,
    BACKWARD_SHARE): only what outlasts it is exposed.
    """
    group = c.dp * c.cp
    rate, lat = _ring(c)
    f = (group - 1) / group
    w, g = _weight_bytes(c), c.grad_bytes
    root = root_params(c)
    blocks = c.n_local - root
    layers = c.mdl.n_layers / c.pp
    first = blocks / layers
    gather = f * w * blocks / rate + layers * lat
    forward = gather
    backward = (c.fsdp_weight_gathers - 1) * gather + f * g * blocks / rate + layers * lat
    edge_gather = f * w * first / rate + lat
    edge_rs = f * g * first / rate + lat
    root_s = f * (w + g) * root / rate + 2 * lat
    per_mb = compute_s / c.m
    fwd_hidden = max(0.0, forward - edge_gather - (1.0 - BACKWARD_SHARE) * per_mb)
    bwd_hidden = max(0.0, backward - edge_rs - BACKWARD_SHARE * per_mb)
    return root_s + edge_gather + edge_rs + fwd_hidden + bwd_hidden


def dcn_gradient_time_s(c: _Ctx) -> float:
    """All-reduce of each chip's gradient shard across scale-up domains (slices, pods): after the
    in-slice reduce-scatter a chip holds grad_bytes x N_local / g bytes (g the DP x CP group's
    chips in one domain) and all-reduces them with its peers in the other domains, all g at
    once on their own NICs: 2(s-1)/s x that / the per-chip DCN rate, s the number of domains."""
    group, inner = _domains(c)
    if inner == group:
        return 0.0
    shard = c.grad_bytes * c.n_local / inner
    return comms.ring_all_reduce_time_s(
        shard, group // inner, link_bytes_per_s=c.out_bw, latency_s=LINK_LATENCY_S
    )


def optimizer_time_s(c: _Ctx) -> float:
    """Adam's memory-bound update of the state this chip owns (``memory.param_shares``: dense
    state sharded over DP x CP, the experts' over their own data-parallel group)."""
    owned = _shares(c)[1] if c.zero_stage >= 1 else c.n_local
    return ADAM_BYTES_PER_PARAM * owned / c.hbm_bw


def _shares(c: _Ctx) -> tuple[float, float, float]:
    return param_shares(
        c.mdl,
        tp=c.tp,
        pp=c.pp,
        dp=c.dp,
        cp=c.cp,
        ep=c.ep,
        state_replicas=c.state_replicas,
        n_params=_param_counts(c.mdl)[0],
    )
