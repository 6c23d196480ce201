"""Checks for the Implement exercises of chapter 4, the memory wall (see ``llmphys.grading``).

* :func:`check_zero_bytes_per_param` (exercise ``mw-ex-zero``): model-state bytes per parameter
  that one GPU holds under ZeRO stage 0 to 3 (Rajbhandari et al. 2020, fig. 1), against
  ``parallelism.zero_bytes_per_param``.
* :func:`check_ring_all_reduce_s` (exercise ``mw-ex-ring``): seconds of a ring all-reduce in
  the alpha-beta model, 2(p-1) alpha + 2(p-1)/p n / beta (Patarasuk and Yuan 2009), with the
  link speed given in bits per second, against ``comms.ring_all_reduce_time_s``.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from llmphys import comms, parallelism
from llmphys.grading._core import Case, Feedback, Mistake, check_function, common_factors

__all__ = ["check_ring_all_reduce_s", "check_zero_bytes_per_param"]

_W, _G, _K = 2.0, 2.0, 12.0  # BF16 weight, BF16 gradient, FP32 master weight + two moments


def _zero(stage: int, n_dp: int, *, w: float = _W, g: float = _G, k: float = _K) -> float:
    """ZeRO bytes per parameter with the per-parameter widths as arguments (for mistakes)."""
    return {0: w + g + k, 1: w + g + k / n_dp, 2: w + (g + k) / n_dp, 3: (w + g + k) / n_dp}[stage]


def _zero_cases() -> list[Case]:
    rng = np.random.default_rng(404)
    cases = [Case(args=(s, 64)) for s in range(4)]  # ZeRO's figure 1: 64 GPUs
    cases += [Case(args=(s, 1)) for s in (0, 3)]  # one rank: nothing to shard
    cases += [Case(args=(0, 1024)), Case(args=(3, 16_384))]
    for _ in range(8):
        cases.append(Case(args=(int(rng.integers(0, 4)), int(rng.integers(2, 2049)))))
    return cases


def check_zero_bytes_per_param(fn: Callable[[int, int], float]) -> Feedback:
    """Check ``fn(stage, n_dp) -> bytes`` per parameter on one GPU under ZeRO ``stage``.

    Mixed-precision Adam: BF16 weights and gradients (2 + 2 bytes) and 12 bytes of FP32 master
    weights and moments; stage 1 shards the 12, stage 2 also the gradients, stage 3 also the
    weights, over ``n_dp`` data-parallel ranks (Rajbhandari et al. 2020, arXiv:1910.02054).

    >>> check_zero_bytes_per_param(lambda stage, n_dp: 16.0 / n_dp).passed
    False
    >>> from llmphys import parallelism
    >>> check_zero_bytes_per_param(parallelism.zero_bytes_per_param).passed
    True
    """
    mistakes = [
        # first: at stage 1 alone it equals the next one, which also gets stage 2 wrong
        Mistake(
            implementation=lambda s, n: (_W + _K) / n + _G if s == 1 else _zero(s, n),
            message="stage 1 does not shard the weights: every rank keeps its BF16 copy for the "
            "forward pass and only the FP32 optimizer state is split",
        ),
        Mistake(
            implementation=lambda s, n: _zero(min(s + 1, 3), n),
            message="each stage here shards one thing too many: stage 1 shards only the "
            "optimizer state, stage 2 adds the gradients, and only stage 3 shards the weights",
        ),
        Mistake(
            implementation=lambda s, n: _zero(s, n, k=16.0),
            message="the FP32 optimizer state is 12 bytes per parameter (master weight and two "
            "Adam moments, 4 each), 16 bytes with the BF16 weight and gradient, not 16 on its own",
        ),
        Mistake(
            implementation=lambda s, n: _zero(s, n, k=8.0),
            message="did you forget the FP32 master copy of the weights? Adam's two moments are "
            "8 bytes, the optimizer state with the master weight 12",
        ),
        Mistake(
            implementation=lambda s, n: _zero(s, n, w=4.0, g=4.0),
            message="the weights and gradients the GPU computes with are BF16 (2 bytes each); "
            "FP32 lives only in the optimizer state",
        ),
    ]
    return check_function(
        fn,
        exercise="mw-ex-zero",
        reference=parallelism.zero_bytes_per_param,
        cases=_zero_cases(),
        mistakes=mistakes,
    )


def _ring_reference(
    n_bytes: float, n_ranks: int, link_bits_per_s: float, latency_s: float
) -> float:
    return comms.ring_all_reduce_time_s(
        n_bytes, n_ranks, link_bytes_per_s=link_bits_per_s / 8, latency_s=latency_s
    )


def _ring_cases() -> list[Case]:
    rng = np.random.default_rng(4040)
    cases = [
        Case(args=(140e9, 512, 400e9, 5e-6)),  # the chapter's 70B gradients over NDR InfiniBand
        Case(args=(1e6, 512, 400e9, 5e-6)),  # a latency-bound message
        Case(args=(8e9, 8, 3.6e12, 0.0)),  # no latency: bandwidth term alone
        Case(args=(4e9, 2, 200e9, 10e-6)),  # two ranks
        Case(args=(1e9, 1, 400e9, 5e-6)),  # one rank: nothing to send
    ]
    for _ in range(8):
        cases.append(
            Case(
                args=(
                    float(10 ** rng.uniform(5, 11)),
                    int(rng.integers(2, 4097)),
                    float(rng.choice([100e9, 200e9, 400e9, 800e9])),
                    float(rng.uniform(1e-6, 50e-6)),
                )
            )
        )
    return cases


def check_ring_all_reduce_s(fn: Callable[[float, int, float, float], float]) -> Feedback:
    """Check ``fn(n_bytes, n_ranks, link_bits_per_s, latency_s) -> seconds`` of a ring all-reduce.

    2(p-1) alpha + 2(p-1)/p n / beta with beta = link_bits_per_s / 8 bytes per second
    (Patarasuk and Yuan 2009; Thakur et al. 2005).

    >>> check_ring_all_reduce_s(lambda n, p, b, a: 2 * (p - 1) * (a + n / p / (b / 8))).passed
    True
    """
    mistakes = [
        Mistake(
            implementation=lambda n, p, b, a: (p - 1) * a + (p - 1) / p * n / (b / 8),
            message="this is half an all-reduce: a ring all-reduce is a reduce-scatter followed "
            "by an all-gather, and each sends (p-1)/p of the buffer in p-1 steps (factor 2)",
        ),
        Mistake(
            implementation=lambda n, p, b, a: 2 * p * a + 2 * n / (b / 8),
            message="a ring of p ranks takes p-1 steps per phase, not p: use p-1 in the latency "
            "term and (p-1)/p in the bandwidth term",
        ),
        Mistake(
            implementation=lambda n, p, b, a: 2 * (p - 1) * a + 2 * n / (b / 8),
            message="each rank sends 2(p-1)/p of the buffer, not twice all of it: 2n/beta is only "
            "the large-p limit (p-1 for p, again)",
        ),
        Mistake(
            implementation=lambda n, p, b, a: 2 * (p - 1) * a + 2 * (p - 1) / p * n / b,
            message="the link speed is in bits per second: divide it by 8 to get bytes per "
            "second before dividing bytes by it",
        ),
        Mistake(
            implementation=lambda n, p, b, a: a + 2 * (p - 1) / p * n / (b / 8),
            message="the latency is paid on every one of the 2(p-1) steps of the ring, not once",
        ),
    ]
    return check_function(
        fn,
        exercise="mw-ex-ring",
        reference=_ring_reference,
        cases=_ring_cases(),
        mistakes=mistakes,
        factors=common_factors(quantity="seconds"),
    )
