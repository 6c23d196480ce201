"""Power and clock limits: why a GPU under dense matmuls runs below its boost clock.

CMOS switching power is P_dyn = a C V^2 f (activity a, switched capacitance C, supply voltage
V, clock f). A higher clock needs a higher voltage, roughly V proportional to f in the range
where a GPU boosts, so at fixed activity P_dyn grows like f^3; more generally like f^x with
x between 1 (fixed voltage) and about 3. Only the SMs' dynamic power follows that law. Add a
part P_s that does not scale with the SM clock (leakage, which rises with voltage and
temperature rather than with f; HBM and I/O power, set by the traffic; board conversion
losses) and

    P(f) = P_s + (P_ref - P_s) (f / f_ref)^x.

A board power cap P_cap (the TDP) then allows at most

    f_cap = f_ref ((P_cap - P_s) / (P_ref - P_s))^(1/x),

where P_ref is what the workload would draw at f_ref. Dense matmuls keep the most transistors
switching (the largest a), so they hit the cap first and run at the lowest clock. The dense
tensor peak is quoted at one clock f_peak and scales linearly with the clock, so the clock
alone caps the achievable share of the peak at f / f_peak. Because of the cube, the trade is
lopsided: cutting the dynamic power by a quarter costs under a tenth of the clock.

Ref: Weste and Harris, "CMOS VLSI Design", 4th ed., sec. 5.1 (dynamic power a C V^2 f);
NVIDIA H100 whitepaper (the clock behind the dense peak).

Home: chapters/hardware_tour.ipynb, section "Power and clock limits".
"""

from __future__ import annotations

import dataclasses
import datetime
import functools

from . import specs, units


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClockObservation:
    """One published report of the SM clock a chip held under sustained matmul load."""

    name: str
    chip_measured: str
    clock_hz: float
    quote: str
    source: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChipClocks:
    """A chip's clocks and power cap, as ``data/power_clocks.toml`` states them."""

    key: str
    chip: str
    power_cap_w: float
    peak_clock_hz: float
    max_clock_hz: float
    mamf_bf16_flop_per_s: float
    as_of: datetime.date
    source: str
    notes: str
    observations: tuple[ClockObservation, ...]


@functools.cache
def chip_clocks() -> dict[str, ChipClocks]:
    """Every chip in ``data/power_clocks.toml``, by key.

    >>> c = chip_clocks()["h100_sxm"]
    >>> c.peak_clock_hz / 1e6, c.max_clock_hz / 1e6, c.power_cap_w
    (1830.0, 1980.0, 700.0)
    """
    out = specs.load_nested_registry(
        "power_clocks.toml", ChipClocks, list_field="observations", item_cls=ClockObservation
    )
    for key, c in out.items():
        specs.accelerator(c.chip)  # a KeyError naming the known chips if unknown
        if not 0 < c.peak_clock_hz <= c.max_clock_hz:
            raise ValueError(f"power_clocks.toml[{key}]: need 0 < peak_clock_hz <= max_clock_hz")
    return out


def _check(exponent: float, static_w: float) -> None:
    if not 1.0 <= exponent <= 4.0:
        raise ValueError(f"exponent must be between 1 (fixed voltage) and 4, got {exponent!r}")
    if static_w < 0:
        raise ValueError(f"static_w must be >= 0 (W), got {static_w!r}")


def power_at_clock_w(
    clock_hz: float,
    *,
    ref_clock_hz: float,
    ref_power_w: float,
    static_w: float = 0.0,
    exponent: float = 3.0,
) -> float:
    """Board power in W at ``clock_hz``: P_s + (P_ref - P_s) (f / f_ref)^x.

    >>> power_at_clock_w(0.9e9, ref_clock_hz=1.8e9, ref_power_w=800.0)  # half the clock
    100.0
    """
    _check(exponent, static_w)
    units.check_positive("clock_hz", clock_hz)
    units.check_positive("ref_clock_hz", ref_clock_hz)
    if not ref_power_w > static_w:
        raise ValueError(f"ref_power_w must exceed static_w, got {ref_power_w!r} <= {static_w!r}")
    return static_w + (ref_power_w - static_w) * (clock_hz / ref_clock_hz) ** exponent


def clock_under_cap_hz(
    power_cap_w: float,
    *,
    demand_w: float,
    clock_hz: float,
    static_w: float = 0.0,
    exponent: float = 3.0,
) -> float:
    """Highest clock in Hz at which a load drawing ``demand_w`` at ``clock_hz`` fits the cap.

    f_ref ((P_cap - P_s) / (P_ref - P_s))^(1/x), and ``clock_hz`` itself if the load fits.

    >>> round(clock_under_cap_hz(700.0, demand_w=1400.0, clock_hz=1.98e9) / 1e6)  # half power
    1572
    """
    _check(exponent, static_w)
    units.check_positive("clock_hz", clock_hz)
    if not power_cap_w > static_w:
        raise ValueError(f"power_cap_w must exceed static_w, got {power_cap_w!r} <= {static_w!r}")
    if demand_w <= power_cap_w:
        return float(clock_hz)
    return clock_hz * ((power_cap_w - static_w) / (demand_w - static_w)) ** (1.0 / exponent)


def implied_demand_w(
    power_cap_w: float,
    *,
    sustained_clock_hz: float,
    clock_hz: float,
    static_w: float = 0.0,
    exponent: float = 3.0,
) -> float:
    """Power in W a load would draw at ``clock_hz`` if it holds ``sustained_clock_hz`` at the cap.

    The inverse of ``clock_under_cap_hz``: P_s + (P_cap - P_s) (f_ref / f_cap)^x.

    >>> round(implied_demand_w(700.0, sustained_clock_hz=1.575e9, clock_hz=1.98e9))
    1391
    """
    return power_at_clock_w(
        clock_hz,
        ref_clock_hz=sustained_clock_hz,
        ref_power_w=power_cap_w,
        static_w=static_w,
        exponent=exponent,
    )


def clock_share_of_peak(clock_hz: float, *, peak_clock_hz: float) -> float:
    """Most of the dense peak a chip can reach at ``clock_hz``: f / f_peak (may exceed 1).

    >>> round(clock_share_of_peak(1.5e9, peak_clock_hz=1.83e9), 3)
    0.82
    """
    units.check_positive("clock_hz", clock_hz)
    units.check_positive("peak_clock_hz", peak_clock_hz)
    return clock_hz / peak_clock_hz
