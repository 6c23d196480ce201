"""The memory hierarchy as a roofline, and how a GEMM's tile size sets its intensity.

Every level of a GPU's memory (registers, shared memory, L2, HBM) feeds the same multipliers at
its own bandwidth W_l, so each gives a roof of its own, min(P, W_l I_l), and a ridge
I*_l = P / W_l. A kernel runs at full peak only if, at EVERY level, it performs at least I*_l
FLOP per byte it moves through that level. The faster a level, the lower its ridge: the reuse
a kernel needs is largest at HBM and smallest at the registers.

Tiling is how a GEMM buys that reuse. C[M, N] = A[M, K] B[K, N] cut into output tiles of
b_M x b_N reads, for each tile, a b_M x K panel of A and a K x b_N panel of B. With no reuse
between tiles, the bytes that cross the level the panels stream from are

    Q = b (M K ceil(N / b_N) + K N ceil(M / b_M) + M N)     (the last term writes C once)

and, for M, N multiples of the tile and K large, the intensity tends to

    I = 2 M N K / Q  ->  2 / (b (1/b_M + 1/b_N)),   a square tile t: I = t / b.

So the tile edge, not the matrix size, sets the intensity against the level below the tile.
Ref: Williams, Waterman and Patterson, "Roofline", CACM 52(4), 2009 (one roof per level);
NVIDIA, "Matrix Multiplication Background User's Guide" (2023), sec. 2.2 on tiles.

Home: chapters/hardware_tour.ipynb, section "The memory hierarchy as a roofline".
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math

from . import specs, units

KINDS = ("vendor", "derived", "measured")
"""How a level's number was obtained: printed by the vendor, derived from vendor per-clock
widths and the clock, or read from a published microbenchmark."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Level:
    """One level of a chip's memory hierarchy, as ``data/memory_hierarchy.toml`` states it."""

    name: str
    capacity_bytes: float
    capacity_kind: str
    bytes_per_s: float
    bandwidth_kind: str
    quote: str
    derivation: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Hierarchy:
    """A chip's levels, fastest first, with the clock every derived bandwidth uses."""

    key: str
    chip: str
    clock_hz: float
    as_of: datetime.date
    source: str
    levels: tuple[Level, ...]


@functools.cache
def hierarchies() -> dict[str, Hierarchy]:
    """Every chip in ``data/memory_hierarchy.toml``, by key.

    >>> [lv.name for lv in hierarchies()["h100_sxm"].levels]
    ['registers', 'shared memory', 'L2', 'HBM']
    """
    out = specs.load_nested_registry(
        "memory_hierarchy.toml", Hierarchy, list_field="levels", item_cls=Level
    )
    for key, h in out.items():
        where = f"memory_hierarchy.toml[{key}]"
        levels = h.levels
        specs.accelerator(h.chip)  # a KeyError naming the known chips if unknown
        for i, lv in enumerate(levels):
            for field in ("capacity_kind", "bandwidth_kind"):
                if getattr(lv, field) not in KINDS:
                    raise ValueError(f"{where}.levels[{i}].{field}: must be one of {KINDS}")
            if not (lv.capacity_bytes > 0 and lv.bytes_per_s > 0):
                raise ValueError(f"{where}.levels[{i}]: capacity and bandwidth must be > 0")
        bw = [lv.bytes_per_s for lv in levels]
        if len(levels) < 2 or bw != sorted(bw, reverse=True):
            raise ValueError(f"{where}: needs two or more levels, fastest first")
    return out


def level_ridges(peak_flop_per_s: float, hierarchy: Hierarchy) -> dict[str, float]:
    """Ridge point of each level in FLOP/byte: I*_l = P / W_l, fastest level first.

    >>> r = level_ridges(989.4e12, hierarchies()["h100_sxm"])
    >>> {k: round(v) for k, v in r.items()}
    {'registers': 3, 'shared memory': 32, 'L2': 141, 'HBM': 295}
    """
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    return {lv.name: peak_flop_per_s / lv.bytes_per_s for lv in hierarchy.levels}


def _check_dims(**dims: float) -> None:
    for name, v in dims.items():
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


def tiled_gemm_hbm_bytes(
    m: int, n: int, k: int, *, tile_m: int, tile_n: int, bytes_per_element: float
) -> float:
    """Bytes a tiled GEMM moves from and to HBM when tiles share nothing (no L2 reuse).

    Each of the ceil(M/b_M) ceil(N/b_N) output tiles streams its b_M x K panel of A and its
    K x b_N panel of B, and C is written once: b (M K ceil(N/b_N) + K N ceil(M/b_M) + M N).

    >>> tiled_gemm_hbm_bytes(4096, 4096, 4096, tile_m=128, tile_n=128, bytes_per_element=2.0)
    2181038080.0
    """
    _check_dims(m=m, n=n, k=k, tile_m=tile_m, tile_n=tile_n)
    units.check_positive("bytes_per_element", bytes_per_element)
    a_reads = m * k * math.ceil(n / tile_n)  # A's row panel, once per column of tiles
    b_reads = k * n * math.ceil(m / tile_m)  # B's column panel, once per row of tiles
    return float(bytes_per_element * (a_reads + b_reads + m * n))


def tiled_gemm_intensity(
    m: int, n: int, k: int, *, tile_m: int, tile_n: int, bytes_per_element: float
) -> float:
    """HBM arithmetic intensity of a tiled GEMM in FLOP/byte: 2MNK / tiled_gemm_hbm_bytes.

    >>> round(tiled_gemm_intensity(8192, 8192, 8192, tile_m=128, tile_n=256,
    ...                            bytes_per_element=2.0), 1)
    84.5
    """
    q = tiled_gemm_hbm_bytes(
        m, n, k, tile_m=tile_m, tile_n=tile_n, bytes_per_element=bytes_per_element
    )
    return 2.0 * m * n * k / q


def tile_intensity_limit(tile_m: float, tile_n: float, *, bytes_per_element: float) -> float:
    """Large-GEMM limit of the tiled intensity in FLOP/byte: 2 / (b (1/b_M + 1/b_N)).

    The harmonic mean of the tile's sides, 2 / (1/b_M + 1/b_N), over b: a square tile t gives
    t / b.

    >>> tile_intensity_limit(128, 256, bytes_per_element=2.0)  # 2 / (2 (1/128 + 1/256))
    85.33333333333333
    """
    units.check_positive("tile_m", tile_m)
    units.check_positive("tile_n", tile_n)
    units.check_positive("bytes_per_element", bytes_per_element)
    return 2.0 / (bytes_per_element * (1.0 / tile_m + 1.0 / tile_n))


def square_tile_for_intensity(intensity: float, *, bytes_per_element: float) -> float:
    """Edge t of the square tile whose large-GEMM intensity t / b equals ``intensity``.

    >>> square_tile_for_intensity(295.3, bytes_per_element=2.0)  # the H100's BF16 HBM ridge
    590.6
    """
    units.check_positive("intensity", intensity)
    units.check_positive("bytes_per_element", bytes_per_element)
    return intensity * bytes_per_element
