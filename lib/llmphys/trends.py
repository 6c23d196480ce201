"""How fast compute, memory bandwidth and interconnect grow, fitted from the registry.

A quantity that grows exponentially with launch year t, x(t) = x0 g^(t / T), grows
by the factor g every T years. Fitting log x against t by least squares gives the
slope s = ln(g) / T, so the growth per two years is g = exp(2 s). Two exponentials
with different g diverge: the ridge point P / W grows by g_P / g_W per period.

Gholami et al. 2024 ("AI and Memory Wall", IEEE Micro 44(3), arXiv:2403.14123,
fig. 1) fit 20 years of server hardware and report 3.0x per two years for peak
FLOP/s, 1.6x for DRAM bandwidth and 1.4x for interconnect bandwidth. The series
the memory-wall chapter examines rounds these to "roughly tripling" and "about
1.5x". The registry spans only 2020-2024, so its fits are short-window estimates.

Per-stack HBM bandwidth is pin rate x interface width: a 1024-bit HBM3 stack at
6.4 Gb/s per pin moves 6.4e9 x 1024 / 8 = 819 GB/s.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import units
from .specs import Accelerator

# Growth per two years quoted by the literature and by the series (dimensionless factors).
GHOLAMI_2024_GROWTH_PER_2Y = {"compute": 3.0, "hbm_bandwidth": 1.6, "interconnect": 1.4}
SERIES_GROWTH_PER_2Y = {"compute": 3.0, "hbm_bandwidth": 1.5}

# What each metric reads from an Accelerator (SI units).
METRICS: dict[str, Callable[[Accelerator], float]] = {
    "peak_bf16": lambda a: a.peak_bf16_flop_per_s,
    "peak_headline": lambda a: a.peak_flop_per_s(a.matrix_dtypes[-1]),  # narrowest native dtype
    "hbm_bandwidth": lambda a: a.hbm_bytes_per_s,
    "hbm_capacity": lambda a: a.hbm_bytes,
    "scale_up": lambda a: a.scale_up_bytes_per_s_per_direction,
    "scale_out": lambda a: a.scale_out_bytes_per_s_per_direction,
}

# HBM generations: (pin rate in bit/s, interface width in bits, source). JEDEC figures are
# the standard's top speed bin; HBM3E has no JEDEC standard of its own (vendor figure).
HBM_GENERATIONS: dict[str, tuple[float, int, str]] = {
    "HBM2": (2.0e9, 1024, "JEDEC JESD235A (2016): 2 Gb/s per pin, 1024-bit"),
    "HBM2E": (3.6e9, 1024, "SK hynix HBM2E (2020) 3.6 Gb/s; JEDEC JESD235C allows 3.2 Gb/s"),
    "HBM3": (6.4e9, 1024, "JEDEC JESD238 (2022): 6.4 Gb/s per pin, 1024-bit"),
    "HBM3E": (9.6e9, 1024, "vendor announcements 2023-24 (9.2-9.8 Gb/s); reported"),
    "HBM4": (8.0e9, 2048, "JEDEC JESD270-4 (2025): 8 Gb/s per pin, 2048-bit"),
}


def growth_per_period(
    years: Sequence[float], values: Sequence[float], *, period_years: float = 2.0
) -> float:
    """Growth factor per ``period_years`` of an exponential fitted by least squares on log values.

    g = exp(T * s) with s the slope of ln(value) against year. Needs two distinct years.

    >>> round(growth_per_period([2020, 2022, 2024], [1.0, 3.0, 9.0]), 6)
    3.0
    """
    units.check_positive("period_years", period_years)
    t = np.asarray(years, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape or t.size < 2 or np.ptp(t) == 0:
        raise ValueError(
            f"years must hold at least two distinct years, matching values; "
            f"got years={list(t)}, values={list(v)}"
        )
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f"values must be positive and finite, got {list(v)}")
    slope = np.polyfit(t, np.log(v), 1)[0]
    return float(np.exp(period_years * slope))


def registry_growth(
    accs: Sequence[Accelerator], metric: str, *, period_years: float = 2.0
) -> float:
    """Growth per ``period_years`` of ``metric`` across ``accs``, fitted by launch year.

    Metrics: peak_bf16, peak_headline (narrowest native dtype), hbm_bandwidth,
    hbm_capacity, scale_up, scale_out (per-direction link bandwidth per chip).

    >>> from llmphys import specs
    >>> nv = [specs.accelerator(k) for k in ("a100_sxm", "h100_sxm", "b200")]
    >>> round(registry_growth(nv, "hbm_bandwidth"), 2)
    1.98
    """
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r} is not known; allowed: {', '.join(METRICS)}")
    return growth_per_period(
        [a.launch_year for a in accs], [METRICS[metric](a) for a in accs], period_years=period_years
    )


def registry_growth_all(metric: str, *, period_years: float = 2.0) -> float:
    """:func:`registry_growth` over every accelerator of the registry, in launch order.

    >>> registry_growth_all("peak_bf16") > registry_growth_all("hbm_bandwidth") > 1
    True
    """
    from . import specs

    accs = sorted(specs.accelerators().values(), key=lambda a: (a.launch_year, a.key))
    return registry_growth(accs, metric, period_years=period_years)


def hbm_stack_bytes_per_s(generation: str) -> float:
    """Peak bandwidth of one HBM stack in bytes/s: pin rate (bit/s) x width (bits) / 8.

    >>> hbm_stack_bytes_per_s("HBM3") / 1e9
    819.2
    """
    if generation not in HBM_GENERATIONS:
        raise ValueError(
            f"generation={generation!r} is not known; allowed: {', '.join(HBM_GENERATIONS)}"
        )
    pin_bits_per_s, width_bits, _source = HBM_GENERATIONS[generation]
    return pin_bits_per_s * width_bits / units.BITS_PER_BYTE


def years_to_grow(factor: float, growth_per_2y: float) -> float:
    """Years for a quantity growing ``growth_per_2y`` every two years to grow by ``factor``.

    2 ln(factor) / ln(g).

    >>> round(years_to_grow(9.0, 3.0), 6)
    4.0
    """
    units.check_positive("factor", factor)
    g = units.check_positive("growth_per_2y", growth_per_2y)
    if g == 1.0:
        raise ValueError("growth_per_2y must differ from 1 (no growth never reaches a factor)")
    return float(2.0 * np.log(factor) / np.log(g))
