"""How unevenly randomly routed tokens load expert-parallel ranks and their expert GEMMs.

Dropless expert parallelism waits for its busiest rank: the combine all-to-all cannot finish
before the rank that received the most tokens has run its experts. Two general effects of
routing counts that vary from micro-batch to micro-batch, both present even when the router
is perfectly balanced on average (Megatron-Core's ``--moe-router-force-load-balancing``
replaces the router's logits with Gaussian noise, 'used to generate random logits of router
for load-balanced benchmark': NVIDIA/Megatron-LM, megatron/core/transformer/moe/moe_utils.py,
``RandomSTE``), are computed here:

* the busiest of n EP ranks: balls into bins with top-k, the expected maximum of n nearly
  normal loads (``max_rank_load_factor``);
* a grouped GEMM tiles each expert's rows on their own, and a partial last tile costs a
  whole one (``padded_rows_factor``).

A learned router adds its own, systematic skew on top; nothing here models that.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist


def expected_max_standard_normal(n: int) -> float:
    """Expected largest of n independent standard normals, by Blom's approximation
    Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958, 'Statistical Estimates and Transformed
    Beta-Variables'; within 5% of the exact value at n = 2, 1% at n = 8; 0 for n = 1).

    >>> round(expected_max_standard_normal(2), 3)  # exact: 1 / sqrt(pi) = 0.564
    0.589
    >>> round(expected_max_standard_normal(8), 3)  # exact: 1.424
    1.434
    """
    if n < 1:
        raise ValueError(f"n must be a positive count, got {n!r}")
    if n == 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


@functools.lru_cache(maxsize=1024)  # pure; the planner asks for the same few groups often
def max_rank_load_factor(n_tokens: float, top_k: int, n_experts: int, n_ranks: int) -> float:
    """Expected busiest-rank load over the mean, n_tokens routed uniformly at random to top_k
    distinct of n_experts experts spread evenly over n_ranks ranks: 1 + z_n sigma / mu.

    A token's copies on one rank (E / n of its E experts) are hypergeometric: mean k / n,
    variance k (1/n)(1 - 1/n)(E - k)/(E - 1). Over T tokens the load has mu = T k / n and
    sigma^2 = T times that variance; z_n = ``expected_max_standard_normal(n)``. The ranks'
    loads are slightly anti-correlated (they sum to T k), so this slightly overstates.
    8,192 tokens, top-8 of 128 experts on 8 ranks: mean 8,192 copies a rank, sigma 82:

    >>> round(max_rank_load_factor(8192, 8, 128, 8), 4)
    1.0144
    """
    for name, v in (("n_tokens", n_tokens), ("top_k", top_k), ("n_ranks", n_ranks)):
        if not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")
    if not top_k <= n_experts or n_experts % n_ranks:
        raise ValueError(
            f"need top_k <= n_experts and n_ranks dividing n_experts, got top_k={top_k}, "
            f"n_experts={n_experts}, n_ranks={n_ranks}"
        )
    if n_ranks == 1:
        return 1.0
    p = 1.0 / n_ranks
    var = top_k * p * (1.0 - p) * (n_experts - top_k) / max(1, n_experts - 1)
    mu = n_tokens * top_k * p
    return 1.0 + expected_max_standard_normal(n_ranks) * math.sqrt(n_tokens * var) / mu


@functools.lru_cache(maxsize=1024)
def padded_rows_factor(rows: float, sd_rows: float, tile: int) -> float:
    """Rows a grouped GEMM computes per row routed to one expert, E[tile ceil(X / tile)] / rows,
    X the expert's rows, nearly normal with mean ``rows`` and standard deviation ``sd_rows``.

    Each expert's rows are cut into tiles of ``tile`` on their own and a partial last tile
    costs a whole one: E[ceil(X / tile)] = sum over j >= 0 of P(X > j tile). Once the count
    varies by a tile or more this is half a tile per expert. At or below one tile the whole
    tile is computed, as ``efficiency.gemm_efficiency``'s tile quantization already charges,
    so this returns 1 there. 512 rows in 128-row tiles, sigma 22 (uniform top-8 of 128
    routing of 8,192 tokens: half the micro-batches spill into a fifth tile), and 1,000 rows:

    >>> round(padded_rows_factor(512, 22, 128), 3), round(padded_rows_factor(1000, 31, 128), 3)
    (1.125, 1.052)
    """
    if not rows > 0 or sd_rows < 0 or tile < 1:
        raise ValueError(
            f"need rows > 0, sd_rows >= 0 and tile >= 1, got {rows!r}, {sd_rows!r}, {tile!r}"
        )
    if rows <= tile:
        return 1.0
    if sd_rows == 0:
        return tile * math.ceil(rows / tile) / rows
    dist = NormalDist(rows, sd_rows)
    sure = max(0, math.floor((rows - 6.0 * sd_rows) / tile))  # P(X > j tile) = 1 below these
    top = math.ceil((rows + 6.0 * sd_rows) / tile)
    tiles = sure + sum(1.0 - dist.cdf(j * tile) for j in range(sure, top + 1))
    return tile * tiles / rows
