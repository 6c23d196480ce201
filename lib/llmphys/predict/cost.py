"""What a predicted run or deployment costs, at a dated rental price from ``data/prices.toml``.

Serving: a deployment of n chips rented at p USD per chip-hour costs n p per hour, and emits
R_out output and R_in input tokens per second, so

    USD per million output tokens = n p / (3600 R_out) x 1e6    (all chip-hours on output)
    USD per million input tokens  = n p / (3600 R_in) x 1e6     (all chip-hours on input)
    USD per million tokens        = n p / (3600 (R_in + R_out)) x 1e6

The first two charge the whole bill to one kind of token, which is what a workload of that
mix costs per token of that kind; an API's two prices split the same bill by a rule the
provider does not publish, so compare the blended figure with (p_in I + p_out O) / (I + O).

Training: D tokens at R tokens per second on n chips take D / R seconds, n D / (3600 R)
chip-hours, and that times p in USD. Every result carries the price it assumes, its unit,
date (``as_of``) and source, so a reader sees the snapshot behind the dollars.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from typing import Any

from .. import economics, specs, units
from ..specs import Accelerator
from .train import _accelerator

PRICE_TABLE = "gpu_hour_usd"
"""The table of ``data/prices.toml`` holding the on-demand rental price per chip-hour, one
entry per accelerator registry key."""

TOKENS_PER_MILLION = 1e6


def chip_hour_price(accelerator: Accelerator | str) -> economics.Price:
    """The dated rental price (USD per chip-hour) of ``accelerator`` in ``data/prices.toml``.

    >>> p = chip_hour_price("h100_sxm")
    >>> p.value, p.as_of.isoformat()
    (2.95, '2026-05-20')
    """
    acc = _accelerator(accelerator)
    key = f"{PRICE_TABLE}.{acc.key}"
    chips = specs.accelerators()
    known = sorted(
        k.split(".", 1)[1]
        for k in economics.prices()
        if k.startswith(PRICE_TABLE + ".") and k.split(".", 1)[1] in chips
    )
    if key not in economics.prices():
        raise KeyError(
            f"accelerator={acc.key!r} has no rental price in prices.toml [{PRICE_TABLE}]; "
            f"priced chips: {', '.join(known)}"
        )
    return economics.price(key)


def _price_fields(price: economics.Price) -> dict[str, Any]:
    return {
        "usd_per_chip_hour": price.value,
        "price_key": price.key,
        "price_as_of": price.as_of,
        "price_source": price.source,
    }


def serving_cost(
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    output_tokens_per_s: float,
    input_tokens_per_s: float,
) -> dict[str, Any]:
    """USD per hour and per million output, input and all tokens of a deployment.

    Formulas: module docstring. Eight H100s emitting 10,000 output tokens/s at $2.95 an
    hour each cost 8 x 2.95 / 36,000 x 1e6 = $0.66 per million output tokens:

    >>> c = serving_cost("h100_sxm", n_chips=8, output_tokens_per_s=1e4, input_tokens_per_s=2e4)
    >>> round(c["usd_per_hour"], 1), round(c["usd_per_m_output_tokens"], 3)
    (23.6, 0.656)
    """
    units.check_positive("n_chips", n_chips)
    units.check_positive("output_tokens_per_s", output_tokens_per_s)
    units.check_positive("input_tokens_per_s", input_tokens_per_s)
    price = chip_hour_price(accelerator)
    usd_per_s = n_chips * price.value / units.HOUR
    per_m = TOKENS_PER_MILLION * usd_per_s
    return {
        "usd_per_hour": usd_per_s * units.HOUR,
        "usd_per_m_output_tokens": per_m / output_tokens_per_s,
        "usd_per_m_input_tokens": per_m / input_tokens_per_s,
        "usd_per_m_tokens": per_m / (output_tokens_per_s + input_tokens_per_s),
        **_price_fields(price),
    }


def training_cost(
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    tokens_per_s: float,
    n_tokens: float,
) -> dict[str, Any]:
    """Chip-hours, days and USD to train on ``n_tokens`` at ``tokens_per_s`` on ``n_chips``.

    Llama 3 405B's 15.6T tokens at 2.2M tokens/s on 16,384 H100s: 82 days, 32M chip-hours
    (``prices.toml`` training_gpu_hours.llama31_405b holds the model card's total, all phases):

    >>> c = training_cost("h100_sxm", n_chips=16_384, tokens_per_s=2.2e6, n_tokens=15.6e12)
    >>> round(c["days"]), round(c["chip_hours"] / 1e6, 1), round(c["usd"] / 1e6)
    (82, 32.3, 95)
    """
    units.check_positive("n_chips", n_chips)
    units.check_positive("tokens_per_s", tokens_per_s)
    units.check_positive("n_tokens", n_tokens)
    price = chip_hour_price(accelerator)
    wall_s = n_tokens / tokens_per_s
    chip_hours = n_chips * wall_s / units.HOUR
    return {
        "wall_clock_s": wall_s,
        "days": wall_s / units.DAY,
        "chip_hours": chip_hours,
        "usd": chip_hours * price.value,
        **_price_fields(price),
    }


def price_line(cost: dict) -> str:
    """The price a cost assumes, as one line: value, unit, date and the entry it came from.

    >>> price_line(training_cost("h100_sxm", n_chips=8, tokens_per_s=1e4, n_tokens=1e9))
    'at $2.95 per chip-hour (prices.toml gpu_hour_usd.h100_sxm, as of 2026-05-20)'
    """
    return (
        f"at ${cost['usd_per_chip_hour']:.2f} per chip-hour (prices.toml {cost['price_key']}, "
        f"as of {cost['price_as_of']})"
    )
