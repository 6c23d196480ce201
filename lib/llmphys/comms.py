"""The alpha-beta cost of collectives, and what data parallelism's all-reduce costs a step.

Sending n bytes over one link takes alpha + n / beta: a latency alpha (s) plus the bytes
over the per-direction bandwidth beta (bytes/s). On a ring of p ranks (Patarasuk and Yuan
2009, J. Parallel Distrib. Comput. 69(2); Thakur, Rabenseifner and Gropp 2005, IJHPCA
19(1)) each rank sends p - 1 chunks of n / p bytes for a reduce-scatter and as
many for an all-gather; an all-reduce is one of each:

    reduce-scatter, all-gather:  (p - 1) alpha + (p - 1)/p * n / beta
    all-reduce:                 2(p - 1) alpha + 2(p - 1)/p * n / beta
    all-to-all (pairwise):       (p - 1) alpha + (p - 1)/p * n / beta

with n the full buffer each rank holds. The bandwidth term of the ring all-reduce is
optimal (no algorithm sends less than 2(p - 1)/p n per rank), and it barely grows with p.

A data-parallel step on N GPUs of peak P at utilisation u computes for
t = 6 N_params B / (N P u) seconds (B tokens per step), while each GPU all-reduces the
gradients, b N_params bytes. Their ratio grows linearly in N: the model size cancels.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import mfu, units


def _check(n_bytes: float, n_ranks: int, link_bytes_per_s: float, latency_s: float) -> None:
    units.check_positive("n_bytes", n_bytes)
    units.check_positive("link_bytes_per_s", link_bytes_per_s)
    if int(n_ranks) != n_ranks or n_ranks < 1:
        raise ValueError(f"n_ranks must be a positive integer, got {n_ranks!r}")
    if latency_s < 0:
        raise ValueError(f"latency_s must be >= 0, got {latency_s!r}")


def ring_all_reduce_time_s(
    n_bytes: float, n_ranks: int, *, link_bytes_per_s: float, latency_s: float = 0.0
) -> float:
    """Seconds for a ring all-reduce of ``n_bytes``: 2(p-1) alpha + 2(p-1)/p n / beta.

    Patarasuk and Yuan 2009. Example: 140 GB of BF16 gradients (70B parameters) on
    512 GPUs over 400 Gb/s links (50 GB/s each way):

    >>> round(ring_all_reduce_time_s(140e9, 512, link_bytes_per_s=50e9), 2)
    5.59
    """
    _check(n_bytes, n_ranks, link_bytes_per_s, latency_s)
    p = n_ranks
    return 2 * (p - 1) * latency_s + 2 * (p - 1) / p * n_bytes / link_bytes_per_s


def ring_reduce_scatter_time_s(
    n_bytes: float, n_ranks: int, *, link_bytes_per_s: float, latency_s: float = 0.0
) -> float:
    """Seconds for a ring reduce-scatter (or all-gather) of an ``n_bytes`` buffer.

    (p-1) alpha + (p-1)/p n / beta: half an all-reduce (Thakur et al. 2005).

    >>> round(ring_reduce_scatter_time_s(8e9, 8, link_bytes_per_s=1e9), 3)
    7.0
    """
    _check(n_bytes, n_ranks, link_bytes_per_s, latency_s)
    p = n_ranks
    return (p - 1) * latency_s + (p - 1) / p * n_bytes / link_bytes_per_s


ring_all_gather_time_s = ring_reduce_scatter_time_s


def all_to_all_time_s(
    n_bytes: float,
    n_ranks: float,
    *,
    link_bytes_per_s: float,
    latency_s: float = 0.0,
    one_shot: bool = False,
) -> float:
    """Seconds for an all-to-all in which each rank holds ``n_bytes`` for all ranks.

    Each rank keeps n/p and sends n/p to each of the p-1 others, so (p-1)/p n leave over its
    link: (p-1) alpha + (p-1)/p n/beta for a pairwise schedule (Thakur et al. 2005). A one-shot
    kernel (NCCL's and DeepEP's, which issue every send at once) pays alpha once:
    alpha + (p-1)/p n/beta. ``n_ranks`` may be fractional when whole groups of chips exchange
    (p = chips / chips per group). Assumes a non-blocking switch (full bisection), as within
    an NVLink domain. The one all-to-all formula of the book: ``moe``, ``scale_up`` and
    ``predict.serve`` call it.

    >>> round(all_to_all_time_s(1e9, 4, link_bytes_per_s=1e9), 3)
    0.75
    >>> round(all_to_all_time_s(1e6, 8, link_bytes_per_s=1e9, latency_s=1e-5, one_shot=True) * 1e6)
    885
    """
    if not n_bytes >= 0:
        raise ValueError(f"n_bytes must be >= 0, got {n_bytes!r}")
    units.check_positive("link_bytes_per_s", link_bytes_per_s)
    if not n_ranks >= 1:
        raise ValueError(f"n_ranks must be >= 1, got {n_ranks!r}")
    if latency_s < 0:
        raise ValueError(f"latency_s must be >= 0, got {latency_s!r}")
    p = float(n_ranks)
    if p == 1.0:
        return 0.0
    alpha = latency_s if one_shot else (p - 1) * latency_s
    return alpha + (p - 1) / p * n_bytes / link_bytes_per_s


def hierarchical_all_reduce_time_s(
    n_bytes: float,
    *,
    n_nodes: int,
    gpus_per_node: int,
    intra_bytes_per_s: float,
    inter_bytes_per_s: float,
    intra_latency_s: float = 0.0,
    inter_latency_s: float = 0.0,
) -> float:
    """Seconds for an all-reduce done as reduce-scatter in the node, all-reduce across, all-gather.

    After the in-node reduce-scatter each GPU owns n/g bytes and all-reduces only that over
    its own NIC, in parallel with its g-1 node mates (one NIC per GPU, "rail" networks).

    >>> t = hierarchical_all_reduce_time_s(140e9, n_nodes=64, gpus_per_node=8,
    ...                                    intra_bytes_per_s=450e9, inter_bytes_per_s=50e9)
    >>> round(t, 2)
    1.23
    """
    units.check_positive("gpus_per_node", gpus_per_node)
    intra = 2 * ring_reduce_scatter_time_s(
        n_bytes, gpus_per_node, latency_s=intra_latency_s, link_bytes_per_s=intra_bytes_per_s
    )
    if n_nodes == 1:
        return intra
    inter = ring_all_reduce_time_s(
        n_bytes / gpus_per_node,
        n_nodes,
        latency_s=inter_latency_s,
        link_bytes_per_s=inter_bytes_per_s,
    )
    return intra + inter


def ring_step_latency_s(
    n_ranks: int, n_domains: int, *, intra_step_s: float, inter_step_s: float
) -> float:
    """Latency of one ring all-gather or reduce-scatter over ``n_ranks`` in ``n_domains``
    scale-up domains (nodes): p - 1 steps, s - 1 of them across the network.

        latency = (p - s) x intra_step_s + (s - 1) x inter_step_s

    NCCL's own cost model charges a ring so, "(nsteps-nInterSteps)*intraLat +
    nInterSteps*interLat" with nsteps = nRanks - 1 and nInterSteps = nNodes - 1 for AllGather
    and ReduceScatter (src/graph/tuning.cc, NCCL v2.9.9, 2021; 3.4 us per NVLink step and 9.6 us
    per network step for its Simple protocol). An all-reduce is two such passes.
    1,536 GPUs in 192 eight-GPU nodes, 3 us and 10 us steps:

    >>> round(ring_step_latency_s(1536, 192, intra_step_s=3e-6, inter_step_s=10e-6) * 1e3, 3)
    5.942
    """
    units.check_positive("n_ranks", n_ranks)
    units.check_positive("n_domains", n_domains)
    if n_ranks % n_domains:
        raise ValueError(
            f"n_domains={n_domains} must divide n_ranks={n_ranks}: every domain holds as many"
        )
    if intra_step_s < 0 or inter_step_s < 0:
        raise ValueError("intra_step_s and inter_step_s must be >= 0 seconds")
    return (n_ranks - n_domains) * intra_step_s + (n_domains - 1) * inter_step_s


def multi_nic_ring_bytes_per_s(
    gpus_per_node: int, *, nic_bytes_per_s: float, nvlink_bytes_per_s: float
) -> float:
    """Bus bandwidth of NCCL's ring collectives across nodes with one NIC per GPU.

    ``nic_bytes_per_s`` is each GPU's share of its node's NICs (one 200 Gb/s NIC per GPU on a
    DGX A100: 25 GB/s), ``nvlink_bytes_per_s`` its scale-up rate, both per direction.

    NCCL runs one ring per channel and maps each channel's ring onto a different NIC. A ring
    that visits a node's g GPUs in a row crosses the network once per node, so each channel
    puts 1/g of the data through its NIC while the other g - 1 hops ride the scale-up links:
    the rate the 2(p-1)/p n formula sees is g x the NIC rate, capped by the scale-up links,
    which carry (g - 1)/g of the data on every GPU:

        busbw = min(g x nic, g / (g - 1) x nvlink)

    Sources: NCCL's maintainer, "Ring Allreduce requires data to go through each GPU and
    enter/exit the node once" (NVIDIA/nccl issue #687, 2022); "On an Nvidia DGX-A100 system we
    have 8x200Gbit/s IB cards and we measure 192GB/s AllReduce BusBW" (NVIDIA/nccl issue
    #812, 2023), 96% of the 200 GB/s of eight 25 GB/s NICs; the busbw definition in
    NVIDIA/nccl-tests doc/PERFORMANCE.md; NCCL's channels and rings are analysed in Hu et al.
    2025, 'Demystifying NCCL' (arXiv:2507.04786).

    >>> multi_nic_ring_bytes_per_s(8, nic_bytes_per_s=25e9, nvlink_bytes_per_s=300e9) / 1e9
    200.0
    >>> multi_nic_ring_bytes_per_s(1, nic_bytes_per_s=25e9, nvlink_bytes_per_s=300e9) / 1e9
    25.0
    """
    units.check_positive("gpus_per_node", gpus_per_node)
    units.check_positive("nic_bytes_per_s", nic_bytes_per_s)
    units.check_positive("nvlink_bytes_per_s", nvlink_bytes_per_s)
    if gpus_per_node == 1:
        return nic_bytes_per_s
    g = gpus_per_node
    return min(g * nic_bytes_per_s, g / (g - 1) * nvlink_bytes_per_s)


def dp_compute_time_s(
    *,
    n_params: float,
    tokens_per_step: float,
    n_gpus: float | np.ndarray,
    peak_flop_per_s: float,
    mfu: float,
) -> float | np.ndarray:
    """Seconds of compute per data-parallel step: 6 N_params B / (N_gpus P u).

    >>> round(dp_compute_time_s(n_params=70e9, tokens_per_step=4e6, n_gpus=512,
    ...                         peak_flop_per_s=989.4e12, mfu=0.4), 2)
    8.29
    """
    for name, v in (
        ("n_params", n_params),
        ("tokens_per_step", tokens_per_step),
        ("peak_flop_per_s", peak_flop_per_s),
    ):
        units.check_positive(name, v)
    units.check_fraction("mfu", mfu)
    if np.any(np.asarray(n_gpus) < 1):
        raise ValueError(f"n_gpus must be >= 1, got {n_gpus!r}")
    return 6.0 * n_params * tokens_per_step / (n_gpus * peak_flop_per_s * mfu)


def dp_comm_share(
    n_gpus: float | np.ndarray,
    *,
    n_params: float,
    tokens_per_step: float,
    peak_flop_per_s: float,
    mfu: float,
    link_bytes_per_s: float,
    bytes_per_grad: float = 2.0,
    latency_s: float = 0.0,
    overlap: float = 0.0,
    intra_node_bytes_per_s: float | None = None,
    gpus_per_node: int = 8,
) -> float | np.ndarray:
    """Fraction of a data-parallel step spent in the exposed gradient all-reduce, c / (c + t).

    c is a flat ring all-reduce of ``bytes_per_grad`` x ``n_params`` bytes over
    ``link_bytes_per_s`` or, when ``intra_node_bytes_per_s`` is given, the hierarchical
    all-reduce (nodes of ``gpus_per_node``); less the part hidden under ``overlap`` x t of
    compute (the backward pass is 2/3 of t).

    >>> s = dp_comm_share(np.array([64, 512, 16384]), n_params=70e9, tokens_per_step=4e6,
    ...                   peak_flop_per_s=989.4e12, mfu=0.45, link_bytes_per_s=50e9)
    >>> np.round(100 * s).tolist()
    [9.0, 43.0, 96.0]
    """
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"overlap must lie in [0, 1], got {overlap!r}")
    n = np.asarray(n_gpus, dtype=float)
    t = dp_compute_time_s(
        n_params=n_params,
        tokens_per_step=tokens_per_step,
        n_gpus=n,
        peak_flop_per_s=peak_flop_per_s,
        mfu=mfu,
    )

    def comm_s(p: float) -> float:
        n_bytes = bytes_per_grad * n_params
        if intra_node_bytes_per_s is None:
            return ring_all_reduce_time_s(
                n_bytes, int(p), link_bytes_per_s=link_bytes_per_s, latency_s=latency_s
            )
        if p <= gpus_per_node:  # one node: NVLink only
            return ring_all_reduce_time_s(n_bytes, int(p), link_bytes_per_s=intra_node_bytes_per_s)
        return hierarchical_all_reduce_time_s(
            n_bytes,
            n_nodes=int(p // gpus_per_node),
            gpus_per_node=gpus_per_node,
            intra_bytes_per_s=intra_node_bytes_per_s,
            inter_bytes_per_s=link_bytes_per_s,
            inter_latency_s=latency_s,
        )

    c = np.vectorize(comm_s)(n)
    exposed = np.maximum(c - overlap * t, 0.0)
    share = exposed / (exposed + t)
    return float(share) if share.ndim == 0 else share


def implied_mfu(
    share: float,
    n_gpus: int,
    *,
    n_params: float,
    tokens_per_step: float,
    peak_flop_per_s: float,
    link_bytes_per_s: float,
    bytes_per_grad: float = 2.0,
) -> float:
    """The utilisation u at which a flat ring all-reduce takes ``share`` of a DP step.

    Inverts c / (c + t) = f: the compute time is t = c (1 - f) / f, and u is the one MFU
    ratio (:func:`llmphys.mfu.utilisation`) of the step's 6 N B model FLOP over N_gpus t
    chip-seconds at peak P, so u = f/(1-f) 6 N B / (N_gpus P c).

    >>> round(implied_mfu(0.43, 512, n_params=70e9, tokens_per_step=4e6,
    ...                   peak_flop_per_s=989.4e12, link_bytes_per_s=50e9), 3)
    0.448
    """
    f = units.check_fraction("share", share)
    if f == 1.0:
        raise ValueError(f"share must lie strictly between 0 and 1, got {share!r}")
    c = ring_all_reduce_time_s(bytes_per_grad * n_params, n_gpus, link_bytes_per_s=link_bytes_per_s)
    compute_s = c * (1 - f) / f
    return mfu.utilisation(
        6.0 * n_params * tokens_per_step, chip_s=n_gpus * compute_s, peak_flop_per_s=peak_flop_per_s
    )


def zero_dp_bytes_per_param(
    zero_stage: int,
    *,
    grad_bytes: float = 2.0,
    weight_bytes: float = 2.0,
    n_weight_gathers: int = 2,
) -> float:
    """Bytes per parameter each data-parallel rank sends per step, before the (p-1)/p factor.

    Stages 0-2: one all-reduce of the gradients, 2 x grad_bytes (stages 1-2 do it as a
    reduce-scatter of gradients plus an all-gather of the updated weights: the same bytes when
    gradients and weights have one width). Stage 3 (FSDP) also all-gathers the weights before
    the forward and again before the backward pass: grad_bytes + n_weight_gathers x
    weight_bytes, 1.5x an all-reduce in BF16 (Rajbhandari et al. 2020, arXiv:1910.02054,
    sec. 7.2.2). Llama 3 keeps the gathered weights through the backward pass and
    reduce-scatters FP32 gradients: 4 + 1 x 2 bytes.

    >>> zero_dp_bytes_per_param(0), zero_dp_bytes_per_param(3)  # all-reduce vs ZeRO-3, BF16
    (4.0, 6.0)
    >>> zero_dp_bytes_per_param(3, grad_bytes=4.0, n_weight_gathers=1)  # Llama 3's FSDP
    6.0
    """
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    units.check_positive("grad_bytes", grad_bytes)
    units.check_positive("weight_bytes", weight_bytes)
    if zero_stage < 3:
        return 2.0 * grad_bytes if grad_bytes == weight_bytes else grad_bytes + weight_bytes
    if n_weight_gathers not in (1, 2):
        raise ValueError(f"n_weight_gathers must be 1 or 2, got {n_weight_gathers!r}")
    return grad_bytes + n_weight_gathers * weight_bytes


def ring_attention_bytes(
    *,
    seq_len: int,
    micro_batch: int,
    n_kv_heads: int,
    d_head: int,
    cp: int,
    bytes_per_element: float = 2.0,
) -> float:
    """Bytes one rank sends per layer and micro-batch under context parallelism (ring attention).

    Each of the cp ranks holds s/cp tokens and passes its K and V blocks around the ring (or
    all-gathers them, the same bytes): 2 (K, V) x (cp-1)/cp x s b g c x bytes forward; the
    backward pass moves K and V again and their gradients back, twice that
    (Liu et al. 2023, arXiv:2310.01889; Dubey et al. 2024, sec. 3.3.2).

    >>> round(ring_attention_bytes(seq_len=131_072, micro_batch=1, n_kv_heads=8, d_head=128,
    ...                            cp=16) / 1e9, 3)  # GB, Llama 3 405B at 128K context
    1.51
    """
    for name, v in (
        ("seq_len", seq_len),
        ("micro_batch", micro_batch),
        ("n_kv_heads", n_kv_heads),
        ("d_head", d_head),
        ("cp", cp),
    ):
        units.check_positive(name, v)
    forward = 2.0 * (cp - 1) / cp * seq_len * micro_batch * n_kv_heads * d_head * bytes_per_element
    return 3.0 * forward
