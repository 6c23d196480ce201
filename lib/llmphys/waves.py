"""Tile and wave quantisation of a GEMM on a GPU: why width 4,000 costs as much as 4,096.

A tiled GEMM kernel splits the m x n output into tiles of tile_m x tile_n, each computed by one
thread block on one streaming multiprocessor (SM); a tile on the edge is computed whole even
where it overhangs the matrix. With S SMs each running one block at a time, the tiles run in
waves of S, and the last wave may leave most SMs idle:

    tiles = ceil(m / tile_m) ceil(n / tile_n),     waves = ceil(tiles / S),
    efficiency = m n / (waves S tile_m tile_n)
               = [m n / (tiles tile_m tile_n)]  x  [tiles / (waves S)]
                   tile quantisation              wave quantisation

The time is proportional to the waves (each wave costs the same, set by the tile and k), so
FLOP/s per useful FLOP falls by the efficiency. This is the first-order model of NVIDIA's
"Matrix Multiplication Background User's Guide" (DU-09799-001_v001, February 2023, ch. 3,
"Dimension Quantization Effects", secs. 3.1 and 3.2); real kernels soften it (stream-K and split-k
decompositions, two blocks per SM, a last wave of smaller tiles).

Home: chapters/hardware_tour.ipynb, section "Tensor-core tiles and wave quantisation".
"""

from __future__ import annotations

import math

import numpy as np

from . import units


def _check_int(name: str, value: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def gemm_tiles(m: int, n: int, *, tile_m: int, tile_n: int) -> int:
    """Output tiles of an m x n GEMM: ceil(m / tile_m) x ceil(n / tile_n).

    >>> [gemm_tiles(w, w, tile_m=128, tile_n=128) for w in (4096, 4000)]  # 31.25 -> 32 per side
    [1024, 1024]
    """
    m, n = _check_int("m", m), _check_int("n", n)
    tile_m, tile_n = _check_int("tile_m", tile_m), _check_int("tile_n", tile_n)
    return math.ceil(m / tile_m) * math.ceil(n / tile_n)


def gemm_waves(m: int, n: int, *, tile_m: int, tile_n: int, n_sms: int) -> int:
    """Waves of one block per SM: ceil(tiles / n_sms).

    >>> gemm_waves(4096, 4096, tile_m=128, tile_n=128, n_sms=132)  # 1,024 tiles / 132 = 7.76
    8
    """
    units.check_positive("n_sms", _check_int("n_sms", n_sms))
    return math.ceil(gemm_tiles(m, n, tile_m=tile_m, tile_n=tile_n) / n_sms)


def quantisation_efficiency(
    m: int, n: int, *, tile_m: int, tile_n: int, n_sms: int
) -> dict[str, float]:
    """Useful share of the SM-tile slots a GEMM occupies: ``tile``, ``wave`` and their product
    ``total`` (dimensionless, at most 1), with ``tiles`` and ``waves``.

    >>> e = quantisation_efficiency(4000, 4000, tile_m=128, tile_n=128, n_sms=132)
    >>> round(e["tile"], 4), round(e["wave"], 4), round(e["total"], 4)
    (0.9537, 0.9697, 0.9248)
    """
    tiles = gemm_tiles(m, n, tile_m=tile_m, tile_n=tile_n)
    waves = gemm_waves(m, n, tile_m=tile_m, tile_n=tile_n, n_sms=n_sms)
    tile = m * n / (tiles * tile_m * tile_n)
    wave = tiles / (waves * n_sms)
    return {
        "tiles": float(tiles),
        "waves": float(waves),
        "tile": tile,
        "wave": wave,
        "total": tile * wave,
    }


def efficiency_curve(
    m: int, widths: np.ndarray, *, tile_m: int, tile_n: int, n_sms: int
) -> np.ndarray:
    """``quantisation_efficiency(...)["total"]`` for each width n in ``widths``."""
    return np.array(
        [
            quantisation_efficiency(m, int(n), tile_m=tile_m, tile_n=tile_n, n_sms=n_sms)["total"]
            for n in np.asarray(widths)
        ]
    )
