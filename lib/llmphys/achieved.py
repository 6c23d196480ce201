"""What real kernels achieve against a datasheet ceiling: published measurements and fractions.

A roofline ceiling (``roofline.attainable_flop_per_s``) is an upper bound: the dense peak of
the matrix units and the HBM bandwidth on the datasheet. Production kernels reach a fraction
of it. ``data/achieved_rates.toml`` holds the best published figures we could read in their
primary sources; this module divides each by the registry ceiling it is measured against.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools

from . import specs

HBM = "hbm"
"""``dtype`` of a measurement whose ceiling is the HBM bandwidth rather than a FLOP/s peak."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class AchievedRate:
    """One published measurement of a kernel, as ``data/achieved_rates.toml`` states it."""

    key: str
    kernel: str
    chip: str
    ceiling_chip: str
    dtype: str
    measured: float  # FLOP/s, or bytes/s where dtype == "hbm"
    ceiling_assumed: bool
    quote: str
    source: str
    notes: str
    as_of: datetime.date


@functools.cache
def measurements() -> dict[str, AchievedRate]:
    """The published measurements, keyed as in ``data/achieved_rates.toml``.

    >>> m = measurements()["fa3_fp16_forward"]
    >>> m.chip, m.measured / 1e12
    ('NVIDIA H100 SXM5', 740.0)
    """
    out = specs.load_registry("achieved_rates.toml", AchievedRate)
    for m in out.values():
        specs.accelerator(m.ceiling_chip)  # a KeyError naming the known chips if unknown
        if not m.measured > 0:
            raise ValueError(f"achieved_rates.toml[{m.key}].measured: must be > 0")
    return out


def ceiling(m: AchievedRate) -> float:
    """The datasheet ceiling ``m`` is measured against: FLOP/s, or bytes/s if ``dtype == "hbm"``."""
    acc = specs.accelerator(m.ceiling_chip)
    return acc.hbm_bytes_per_s if m.dtype == HBM else acc.peak_flop_per_s(m.dtype)


def fraction_of_ceiling(m: AchievedRate) -> float:
    """Measured rate over its datasheet ceiling (dimensionless): how much of the bound is used.

    >>> round(fraction_of_ceiling(measurements()["fa3_fp16_forward"]), 2)
    0.75
    """
    if not isinstance(m, AchievedRate):
        raise ValueError(f"m: expected an AchievedRate, got {type(m).__name__}")
    return m.measured / ceiling(m)
