"""Context parallelism's ring attention as PyTorch runs it: what stays exposed, and what it adds.

``terms.cp_time_s`` charges one of two ways of passing K and V around the CP group
(``CP_ROTATIONS``):

    p2p        each ring step sends the K/V block to the next rank while the current block
               computes (Megatron/Transformer Engine's ring; Liu et al. 2023,
               arXiv:2310.01889): exposed only if one block's transfer outlasts one block's
               attention.
    allgather  PyTorch's ``context_parallel`` (torch.distributed.tensor.experimental,
               ``_templated_ring_attention``; the default ``_RotateMethod.ALL_GATHER``):
               torchtitan 9dec370 ran torch 1963fc8 (2024-12-23); two versions of the file,
               of late 2024 and of 2025, agree on every point below.

What the PyTorch source does, step by step (``_attention.py``):

* Load balance. ``_cp_options.enable_load_balance`` defaults to True: the sequence is cut
  into 2 cp chunks and rank r holds chunks r and 2cp-1-r (``_RoundRobinLoadBalancer``,
  ROUND_ROBIN_CYCLE = 2). Step 0 is the local causal block; at every later step a rank
  computes either all its queries against the first half of the arriving K/V, or its second
  half of queries against all of it: every rank does the same s^2 / (2 cp^2) query-key pairs
  at every step, so the causal FLOP are balanced and no rank waits (``terms.attention_time_s``
  already charges s / cp per rank).
* Rotation. One ``all_gather_tensor`` of every rank's K and V is issued before step 0 and
  waited for at step 1: it hides behind the first of cp equal blocks only. The backward
  gathers K/V again, and after every block passes the FP32 dK, dV accumulated so far to the
  next rank (``_AllToAllRotater``, a permute); each hides behind the next block, the last one
  behind nothing.
* Merge. Each block's output is cast to FP32 and folded into the running output by eager
  elementwise ops (``_SDPAMerger``: out - sigmoid(lse_b - lse) (out - out_b)); a block that
  covers half the queries rewrites the whole FP32 output (``_partial_update``'s cat), and K, V
  are concatenated into the send buffer every step. The backward accumulates dQ, dK, dV in
  FP32 the same way (``RING_MERGE_BYTES``).
* Full activation checkpointing reruns the forward ring, its all-gather and merges included.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses

CP_ROTATIONS = ("p2p", "allgather")
"""How K and V travel around the CP group (module docstring)."""

RING_MERGE_BYTES = {"fwd_out": 32.5, "fwd_kv": 8.0, "bwd_out": 11.5, "bwd_kv": 47.0}
"""HBM bytes per element, per ring step after the first, of PyTorch's eager merge on one rank;
``out`` counts the elements of the rank's attention output (tokens x query heads x d_head),
``kv`` those of its K (tokens x K/V heads x d_head), from ``_attention.py`` (late 2024):

* forward, a step over all queries: the block output's cast to FP32 (2 + 4), ``out - out_b``
  (4 + 4 + 4), the product with sigmoid(lse_b - lse) (4 + 4) and the subtraction from out
  (4 + 4 + 4): 38 per output element; a step over half the queries: 19 per element plus the
  cat of the whole FP32 output (8). Load-balanced ranks do each half the time: 32.5.
  K and V concatenated into the send buffer: 2 x (2 + 2) = 8 per K element.
* backward: dQ accumulated in FP32 (read 4 + 2, write 4: 10) or, for half the queries, in a
  chunk then a cat (5 + 8 = 13): 11.5 on average; dK and dV the same (20 or 26: 23), their
  FP32 cat into the send buffer (2 x 8 = 16) and K, V's cat (8): 47 per K element.

The flash kernel's own passes are in its published rate, not here."""

BACKWARD_BLOCK_FORWARDS = 2.5
"""A flash block's backward in forwards (5 matmuls against 2; ``terms.FLASH_FWD_BWD_PASSES``
less the forward)."""


def ring_merge_bytes(
    *, n_tokens: float, n_q_heads: float, n_kv_heads: float, d_head: int, cp: int, n_forward: float
) -> float:
    """HBM bytes of PyTorch's eager ring merges on one rank, one layer, one micro-batch.

    (cp - 1) steps x [n_forward (32.5 E + 8 E_kv) + 11.5 E + 47 E_kv], E = n_tokens n_q_heads
    d_head, E_kv = n_tokens n_kv_heads d_head (``RING_MERGE_BYTES``); ``n_forward`` counts the
    forward rings (2 under full recomputation). A rank of 32K tokens, 32 query heads of 128 and
    K/V repeated to them, on CP 8 under full recomputation: 131 GB per layer and micro-batch,
    about 64 ms at 2 TB/s.

    >>> round(ring_merge_bytes(n_tokens=32768, n_q_heads=32, n_kv_heads=32, d_head=128, cp=8,
    ...                        n_forward=2) / 1e9, 1)
    131.1
    """
    for name, v in (("n_tokens", n_tokens), ("n_q_heads", n_q_heads), ("n_kv_heads", n_kv_heads),
                    ("d_head", d_head), ("cp", cp)):  # fmt: skip
        if not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")
    if n_forward < 1:
        raise ValueError(f"n_forward must be at least 1, got {n_forward!r}")
    e_out = n_tokens * n_q_heads * d_head
    e_kv = n_tokens * n_kv_heads * d_head
    b = RING_MERGE_BYTES
    fwd = b["fwd_out"] * e_out + b["fwd_kv"] * e_kv
    bwd = b["bwd_out"] * e_out + b["bwd_kv"] * e_kv
    return (cp - 1) * (n_forward * fwd + bwd)


def allgather_exposed_s(
    *, gather_s: float, dkv_s: float, block_fwd_s: float, cp: int, n_forward: float
) -> float:
    """Seconds of PyTorch's all-gather ring left exposed, one layer, one micro-batch.

    n_forward max(0, t_ag - t_b) + max(0, t_ag - 2.5 t_b) + (cp - 1) max(0, t_dkv - 2.5 t_b)
    + t_dkv: every forward ring (``n_forward``) and the backward gather K/V once behind their
    first block t_b only; the FP32 dK, dV permute t_dkv of each backward block hides behind the
    next block, the last behind nothing (module docstring).

    >>> round(allgather_exposed_s(gather_s=0.047, dkv_s=0.013, block_fwd_s=0.015, cp=8,
    ...                           n_forward=2), 4)
    0.0865
    """
    for name, v in (("gather_s", gather_s), ("dkv_s", dkv_s), ("block_fwd_s", block_fwd_s)):
        if v < 0:
            raise ValueError(f"{name} must be non-negative, got {v!r}")
    if cp < 2:
        raise ValueError(f"cp must be at least 2 for a ring, got {cp!r}")
    bwd_block = BACKWARD_BLOCK_FORWARDS * block_fwd_s
    t = n_forward * max(0.0, gather_s - block_fwd_s) + max(0.0, gather_s - bwd_block)
    return t + (cp - 1) * max(0.0, dkv_s - bwd_block) + dkv_s


@dataclasses.dataclass(frozen=True)
class RingBudget:
    """One layer and micro-batch of PyTorch's all-gather ring on one rank."""

    gather_bytes: float  # K/V received by the all-gather
    gather_s: float
    block_fwd_s: float  # one ring step's forward attention
    exposed_s: float  # ``allgather_exposed_s``
    merge_bytes: float  # ``ring_merge_bytes``
    merge_s: float

    @property
    def total_s(self) -> float:
        return self.exposed_s + self.merge_s


def allgather_ring_budget(
    *, n_tokens: float, n_q_heads: float, n_kv_heads: float, d_head: int, cp: int,
    n_forward: float, block_fwd_s: float, link_bytes_per_s: float, hbm_bytes_per_s: float,
) -> RingBudget:  # fmt: skip
    """The all-gather ring's bytes and seconds on one rank, one layer, one micro-batch.

    The rank's ``n_tokens`` x ``n_kv_heads`` x ``d_head`` K and V (16-bit) gathered from the
    cp - 1 others over ``link_bytes_per_s``; the FP32 dK, dV permute of the same elements;
    ``allgather_exposed_s`` and ``ring_merge_bytes`` over ``hbm_bytes_per_s`` (both achieved).
    A rank of 32K tokens with 16 heads of 128 (K/V repeated to them) on CP 8, across 50 GB/s
    NICs at 80%: 1.9 GB gathered per layer in 47 ms.

    >>> b = allgather_ring_budget(n_tokens=32768, n_q_heads=16, n_kv_heads=16, d_head=128, cp=8,
    ...                           n_forward=2, block_fwd_s=0.015, link_bytes_per_s=40e9,
    ...                           hbm_bytes_per_s=2.04e12)
    >>> round(b.gather_bytes / 1e9, 2), round(b.gather_s * 1e3)
    (1.88, 47)
    """
    if not link_bytes_per_s > 0 or not hbm_bytes_per_s > 0:
        raise ValueError("link_bytes_per_s and hbm_bytes_per_s must be positive")
    kv = n_tokens * 2.0 * n_kv_heads * d_head  # K and V elements of one rank
    gather = (cp - 1) * kv * 2.0
    exposed = allgather_exposed_s(
        gather_s=gather / link_bytes_per_s, dkv_s=kv * 4.0 / link_bytes_per_s,
        block_fwd_s=block_fwd_s, cp=cp, n_forward=n_forward,
    )  # fmt: skip
    merge = ring_merge_bytes(
        n_tokens=n_tokens, n_q_heads=n_q_heads, n_kv_heads=n_kv_heads, d_head=d_head, cp=cp,
        n_forward=n_forward,
    )  # fmt: skip
    return RingBudget(
        gather_bytes=gather, gather_s=gather / link_bytes_per_s, block_fwd_s=block_fwd_s,
        exposed_s=exposed, merge_bytes=merge, merge_s=merge / hbm_bytes_per_s,
    )  # fmt: skip
