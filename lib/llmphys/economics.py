"""Prices, the cost of owning a GPU-hour, and how fast a GPU's earnings decay.

``data/prices.toml`` holds every dated price, rate and reported figure the
economics chapter uses, each with its source, date, kind (published, derived or
assumption) and, where we are unsure, a range. The loader returns frozen
``Price`` records and rejects unknown or missing fields.

Owning a GPU costs, per hour it is actually used (utilisation u),

    capital  = capex * CRF(r, L) / (8766 h * u),   CRF = r / (1 - (1 + r)^-L)  (1/L at r = 0)
    energy   = P_system * PUE * price_kWh          (power drawn while in use)

and its *earning power* falls as newer chips deliver more work per dollar: if
price-performance doubles every d years, an hour on a chip of age a is worth
2^(-a/d) of a new chip's hour. The chip is worth running while that exceeds its
operating cost, which gives an economic life d * log2(rent_new / opex).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math

from . import units
from .specs import build_spec, registry_table

KINDS = ("published", "derived", "assumption")
HOURS_PER_YEAR = units.YEAR / units.HOUR  # 8766 h, the Julian year used across the book


@dataclasses.dataclass(frozen=True, kw_only=True)
class Price:
    """One dated, sourced figure from data/prices.toml (a price, a rate or a reported count)."""

    key: str  # dotted path, e.g. "gpu_hour_usd.h100_sxm"
    value: float
    unit: str
    kind: str  # published | derived | assumption
    source: str
    as_of: datetime.date
    note: str
    low: float | None = None
    high: float | None = None

    @property
    def range(self) -> tuple[float, float]:
        """(low, high), or (value, value) where no range is recorded."""
        lo = self.value if self.low is None else self.low
        hi = self.value if self.high is None else self.high
        return lo, hi


def prices() -> dict[str, Price]:
    """Every entry of ``data/prices.toml``, keyed by its dotted path."""
    return dict(_load_prices())


def price(key: str) -> Price:
    """The entry ``key`` of data/prices.toml; KeyError lists the known keys.

    >>> price("gpu_hour_usd.h100_sxm").value
    2.95
    """
    table = _load_prices()
    try:
        return table[key]
    except (KeyError, TypeError):
        raise KeyError(f"unknown price {key!r}; known: {', '.join(sorted(table))}") from None


@functools.cache
def _load_prices() -> dict[str, Price]:
    raw = registry_table("prices.toml")
    out: dict[str, Price] = {}
    _walk(raw, (), out)
    return out


def _walk(table: dict, prefix: tuple[str, ...], out: dict) -> None:
    """A table with a ``value`` is one entry; any other table is a group of entries."""
    where = "prices.toml[" + ".".join(prefix) + "]"
    if "value" not in table:
        for name, sub in table.items():
            if not isinstance(sub, dict):
                raise ValueError(f"{where}: field {name!r} outside an entry (entries need 'value')")
            _walk(sub, (*prefix, name), out)
        return
    p = build_spec(Price, table, where, key=".".join(prefix))
    if p.kind not in KINDS:
        raise ValueError(f"{where}.kind: {p.kind!r} is not one of {KINDS}")
    lo, hi = p.range
    if not lo <= p.value <= hi:
        raise ValueError(f"{where}: value {p.value} lies outside [low, high] = [{lo}, {hi}]")
    out[p.key] = p


def capital_recovery_factor(*, rate_per_year: float, life_years: float) -> float:
    """Fraction of the capex to charge per year so that L payments repay it at rate r.

    CRF = r / (1 - (1 + r)^-L); straight-line 1/L at r = 0 (any finance text, e.g.
    Brealey, Myers and Allen, "Principles of Corporate Finance", ch. 2).

    >>> round(capital_recovery_factor(rate_per_year=0.08, life_years=5), 4)
    0.2505
    """
    units.check_positive("life_years", life_years)
    if rate_per_year < 0 or not math.isfinite(rate_per_year):
        raise ValueError(f"rate_per_year must be >= 0 and finite, got {rate_per_year!r}")
    if rate_per_year == 0:
        return 1.0 / life_years
    return rate_per_year / (1.0 - (1.0 + rate_per_year) ** -life_years)


def usd_per_gpu_hour_owned(
    *,
    capex_usd: float,
    life_years: float,
    utilization: float,
    power_w: float,
    pue: float,
    usd_per_kwh: float,
    cost_of_capital_per_year: float = 0.0,
) -> dict[str, float]:
    """USD per *used* GPU-hour of an owned GPU, by part: capital, energy, total.

    capital = capex * CRF / (8766 h * u); energy = P * PUE * price (drawn while used).

    >>> parts = usd_per_gpu_hour_owned(capex_usd=40e3, life_years=5, utilization=0.8,
    ...                                power_w=1275, pue=1.3, usd_per_kwh=0.081)
    >>> {k: round(v, 3) for k, v in parts.items()}
    {'capital': 1.141, 'energy': 0.134, 'total': 1.275}
    """
    units.check_positive("capex_usd", capex_usd)
    units.check_fraction("utilization", utilization)
    units.check_positive("power_w", power_w)
    units.check_positive("usd_per_kwh", usd_per_kwh)
    if pue < 1:
        raise ValueError(f"pue must be >= 1 (facility energy / IT energy), got {pue!r}")
    crf = capital_recovery_factor(rate_per_year=cost_of_capital_per_year, life_years=life_years)
    capital = capex_usd * crf / (HOURS_PER_YEAR * utilization)
    energy = power_w / units.KILO * pue * usd_per_kwh
    return {"capital": capital, "energy": energy, "total": capital + energy}


def usd_per_million_tokens(
    *, usd_per_chip_hour: float, n_chips: float, tokens_per_s: float, utilization: float = 1.0
) -> float:
    """USD per 1e6 tokens from the chips' hourly price and their joint token rate.

    n * price / 3600 / (u * tokens/s) * 1e6, where ``tokens_per_s`` is the rate while serving
    and ``utilization`` u the fraction of the paid hours spent serving (idle hours are paid too).

    >>> round(usd_per_million_tokens(usd_per_chip_hour=3.0, n_chips=8, tokens_per_s=4000), 3)
    1.667
    >>> round(usd_per_million_tokens(usd_per_chip_hour=3.0, n_chips=8, tokens_per_s=4000,
    ...                              utilization=0.5), 3)
    3.333
    """
    units.check_positive("usd_per_chip_hour", usd_per_chip_hour)
    units.check_positive("n_chips", n_chips)
    units.check_positive("tokens_per_s", tokens_per_s)
    units.check_fraction("utilization", utilization)
    return n_chips * usd_per_chip_hour / units.HOUR / (utilization * tokens_per_s) * units.MEGA


def earning_power_fraction(age_years: float, *, doubling_years: float) -> float:
    """What an hour of a chip of age ``age_years`` earns, relative to a new chip's hour.

    2^(-a/d): a buyer pays no more per unit of work than the newest chips charge, and
    their work per dollar doubles every d years (Hobbhahn and Besiroglu 2022, Epoch AI).

    >>> round(earning_power_fraction(2.0, doubling_years=2.5), 3)
    0.574
    """
    if age_years < 0 or not math.isfinite(age_years):
        raise ValueError(f"age_years must be >= 0 and finite, got {age_years!r}")
    units.check_positive("doubling_years", doubling_years)
    return 2.0 ** (-age_years / doubling_years)


def economic_life_years(
    *, usd_per_hour_new: float, opex_usd_per_hour: float, doubling_years: float
) -> float:
    """Years until a chip's earnings per hour fall to its operating cost: d * log2(rent/opex).

    >>> round(economic_life_years(usd_per_hour_new=2.95, opex_usd_per_hour=0.30,
    ...                           doubling_years=2.5), 1)
    8.2
    """
    rent = units.check_positive("usd_per_hour_new", usd_per_hour_new)
    opex = units.check_positive("opex_usd_per_hour", opex_usd_per_hour)
    units.check_positive("doubling_years", doubling_years)
    return doubling_years * math.log2(rent / opex) if rent > opex else 0.0


def remaining_value_fraction(
    age_years: float,
    *,
    opex_fraction: float,
    doubling_years: float,
    discount_rate_per_year: float = 0.0,
) -> float:
    """Economic value left at age a, as a fraction of the new chip's: V(a) / V(0).

    V(a) = integral from a to L of (2^(-t/d) - o) e^(-r (t - a)) dt, where o is the
    operating cost as a fraction of the new chip's hourly earnings and L = d log2(1/o)
    the economic life. Straight-line book value would be 1 - a / L_accounting.

    >>> round(remaining_value_fraction(2.0, opex_fraction=0.1, doubling_years=2.5), 3)
    0.447
    """
    o = units.check_fraction("opex_fraction", opex_fraction)
    d = units.check_positive("doubling_years", doubling_years)
    r = discount_rate_per_year
    if r < 0 or not math.isfinite(r):
        raise ValueError(f"discount_rate_per_year must be >= 0, got {r!r}")
    life = d * math.log2(1.0 / o)
    return _value_at(min(age_years, life), life, o, d, r) / _value_at(0.0, life, o, d, r)


def _value_at(a: float, life: float, o: float, d: float, r: float) -> float:
    lam = math.log(2.0) / d
    if r == 0:
        return (math.exp(-lam * a) - math.exp(-lam * life)) / lam - o * (life - a)
    k = lam + r
    return math.exp(r * a) * (
        (math.exp(-k * a) - math.exp(-k * life)) / k
        - o * (math.exp(-r * a) - math.exp(-r * life)) / r
    )
