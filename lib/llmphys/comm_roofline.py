"""The communication roofline: FLOP per network byte against a link's bandwidth.

A parallel training step computes F FLOP on each GPU while each GPU sends Q bytes over a link
of per-direction bandwidth B. If the two overlap, the step cannot run faster than
max(F / P, Q / B), so the GPU attains at most

    min(P, B I_net),     I_net = F / Q  (FLOP per network byte),     ridge I*_net = P / B.

The same two-roof picture as the HBM roofline, with the network in place of the memory. A
scale-up link (NVLink) and a scale-out link (InfiniBand or Ethernet, per GPU) give two
ridges an order of magnitude apart. Where a collective sits on this axis follows from what it
moves (the ring formulas of ``comms``):

* tensor parallelism over t GPUs (Megatron-LM; Shoeybi et al. 2019, sec. 3): per token, each
  layer all-reduces a d-wide activation twice forward and twice backward, while the GPU
  computes 6 N_layer / t FLOP. Each all-reduce sends 2 (t-1)/t d b bytes per GPU, so

      I_TP = 6 N_layer / (8 (t - 1) d b)       (no tokens in it: batching does not help)

  Sequence parallelism turns each all-reduce into a reduce-scatter and an all-gather that send
  the same bytes (Korthikanti et al. 2022, sec. 4.2.2); full activation recomputation reruns
  the forward pass, its two all-reduces included, which this formula leaves out.

* data parallelism over p replicas: per step, each GPU all-reduces its gradients,
  2 (p-1)/p N b bytes, against 6 N T FLOP for the T tokens its replica processes:

      I_DP = 3 T p / ((p - 1) b)               (no model size in it: the parameters cancel)

Home: chapters/hardware_tour.ipynb, section "A communication roofline".
"""

from __future__ import annotations

from . import comms, units


def _ring_all_reduce_bytes_sent(n_bytes: float, n_ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``n_bytes``: 2 (p-1)/p n.

    ``comms`` owns the ring formula; at one byte per second and no latency its time in
    seconds is the bytes each rank puts on its link.
    """
    return comms.ring_all_reduce_time_s(n_bytes, n_ranks, link_bytes_per_s=1.0)


def network_ridge(peak_flop_per_s: float, link_bytes_per_s: float) -> float:
    """FLOP per network byte at which a link stops binding: P / B (B per direction).

    >>> round(network_ridge(989.4e12, 450e9))  # H100 SXM over NVLink 4, 450 GB/s each way
    2199
    """
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    units.check_positive("link_bytes_per_s", link_bytes_per_s)
    return peak_flop_per_s / link_bytes_per_s


def attainable_fraction(
    intensity: float, *, peak_flop_per_s: float, link_bytes_per_s: float
) -> float:
    """Share of the peak the link allows at ``intensity`` FLOP per network byte: min(1, B I / P).

    >>> attainable_fraction(1000.0, peak_flop_per_s=1e15, link_bytes_per_s=50e9)
    0.05
    """
    units.check_positive("intensity", intensity)
    return min(1.0, intensity / network_ridge(peak_flop_per_s, link_bytes_per_s))


def tp_layer_intensity(
    n_layer_params: float, d_model: int, *, tp: int, bytes_per_element: float
) -> float:
    """FLOP per network byte of a tensor-parallel layer in training: 6 N_l / (8 (t-1) d b).

    Forward and backward (6 N_l FLOP per token over t GPUs) against four ring all-reduces of a
    d-wide activation per token (two forward, two backward; Shoeybi et al. 2019).

    >>> round(tp_layer_intensity(12 * 8192**2, 8192, tp=8, bytes_per_element=2.0))
    5266
    """
    units.check_positive("n_layer_params", n_layer_params)
    units.check_positive("d_model", d_model)
    if int(tp) != tp or tp < 2:
        raise ValueError(f"tp must be an integer >= 2 (one GPU sends nothing), got {tp!r}")
    flop = 6.0 * n_layer_params / tp  # per token per GPU
    sent = 4 * _ring_all_reduce_bytes_sent(d_model * bytes_per_element, tp)
    return flop / sent


def dp_intensity(n_tokens_per_replica: float, *, dp: int, bytes_per_element: float) -> float:
    """FLOP per network byte of data parallelism's gradient all-reduce: 3 T p / ((p-1) b).

    6 N T FLOP per step per replica against a ring all-reduce of N b gradient bytes; N cancels,
    so one parameter stands for the model.

    >>> round(dp_intensity(8192, dp=64, bytes_per_element=2.0))  # one 8K sequence per replica
    12483
    """
    units.check_positive("n_tokens_per_replica", n_tokens_per_replica)
    if int(dp) != dp or dp < 2:
        raise ValueError(f"dp must be an integer >= 2 (one replica sends nothing), got {dp!r}")
    flop = 6.0 * n_tokens_per_replica  # per parameter
    sent = _ring_all_reduce_bytes_sent(bytes_per_element, dp)  # per parameter
    return flop / sent
