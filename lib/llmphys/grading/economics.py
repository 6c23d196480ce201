"""Checks for the Implement exercises of chapter 6, economics (see ``llmphys.grading``).

- :func:`check_owned_gpu_hour_usd` (exercise ``econ-ex-owned-hour``): the cost of one used hour
  of an owned GPU, capital as an annuity plus electricity, against
  :func:`llmphys.economics.usd_per_gpu_hour_owned`;
- :func:`check_usd_per_million_output_tokens` (exercise ``econ-ex-cost-per-mtok``): the cost of
  a million output tokens from a GPU-hour price, a token rate and a utilisation, against
  :func:`llmphys.economics.usd_per_million_tokens`;
- :func:`check_batch1_decode_floor_s` (exercise ``econ-ex-decode-floor``): the time a batch-1
  decode step needs to stream its weights, against :func:`llmphys.inference.weight_bytes_read`
  over the chips' HBM bandwidth.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmphys import accounting, economics, inference, specs, units
from llmphys.grading._core import Case, Feedback, Mistake, check_function

__all__ = [
    "check_batch1_decode_floor_s",
    "check_owned_gpu_hour_usd",
    "check_usd_per_million_output_tokens",
]

OWNED_HOUR_ARGS = (
    "capex_usd",
    "life_years",
    "cost_of_capital_per_year",
    "utilization",
    "power_w",
    "pue",
    "usd_per_kwh",
)
"""The positional arguments of the student's ``owned_gpu_hour_usd``, in order."""

COST_PER_MTOK_ARGS = ("usd_per_gpu_hour", "tokens_per_s_per_gpu", "utilization")
"""The positional arguments of the student's ``usd_per_million_output_tokens``, in order."""


def _case(names: tuple[str, ...], values: tuple[float, ...]) -> Case:
    label = ", ".join(f"{n}={v:g}" for n, v in zip(names, values, strict=True))
    return Case(args=values, label=label)


# -- econ-ex-owned-hour -------------------------------------------------------------------------


def _owned_reference(capex, life, rate, util, power_w, pue, usd_per_kwh) -> float:
    return economics.usd_per_gpu_hour_owned(
        capex_usd=capex,
        life_years=life,
        cost_of_capital_per_year=rate,
        utilization=util,
        power_w=power_w,
        pue=pue,
        usd_per_kwh=usd_per_kwh,
    )["total"]


def _annuity(rate: float, life: float) -> float:
    return rate / (1 - (1 + rate) ** -life) if rate > 0 else 1 / life


def _energy(power_w: float, pue: float, usd_per_kwh: float) -> float:
    return power_w / units.KILO * pue * usd_per_kwh


_H = economics.HOURS_PER_YEAR

OWNED_HOUR_MISTAKES = (
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: c / L / (_H * u) + _energy(p, q, e),
        message="this is straight-line depreciation, capex / life, which ignores the cost of "
        "capital: charge capex * CRF per year, CRF = r / (1 - (1 + r)^-L), the annuity that "
        "repays the capex with interest",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: c * (1 / L + r) / (_H * u) + _energy(p, q, e),
        message="you charged interest on the whole capex every year, but the balance falls as "
        "it is repaid: use the annuity factor CRF = r / (1 - (1 + r)^-L)",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: c * _annuity(r, L) / _H + _energy(p, q, e),
        message="the capital is paid for every hour of the year, used or not: divide the "
        "capital charge by the utilisation to get the cost per used hour",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: (c * _annuity(r, L) / _H + _energy(p, q, e)) / u,
        message="electricity is drawn only while the GPU works, so the energy per used hour "
        "does not depend on the utilisation: divide only the capital charge by it",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: c * _annuity(r, L) / (_H * u) + p / 1e3 * e,
        message="the energy leaves out the PUE: the facility (cooling, power conversion) draws "
        "PUE times the IT power",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: c * _annuity(r, L) / (_H * u) + p * q * e,
        message="power_w is in watts and the electricity price per kWh: divide the power by "
        "1000 before multiplying by the price",
    ),
    Mistake(
        implementation=lambda c, L, r, u, p, q, e: (
            c * _annuity(r, L) / (8760 * u) + _energy(p, q, e)
        ),
        message="a year of 365 * 24 = 8760 hours: the exercise (and the book) uses the Julian "
        "year of 365.25 days, 8766 hours",
    ),
)
"""Typical wrong implementations of ``econ-ex-owned-hour``, with the hint each deserves."""


def _owned_hour_cases() -> list[Case]:
    rng = np.random.default_rng(606)
    cases = []
    for _ in range(8):
        values = (
            float(round(rng.uniform(15e3, 50e3), -2)),
            float(rng.choice([3, 4, 5, 6])),
            float(round(rng.uniform(0.03, 0.15), 3)),
            float(round(rng.uniform(0.3, 0.95), 2)),
            float(round(rng.uniform(700, 1800), 0)),
            float(round(rng.uniform(1.1, 1.6), 2)),
            float(round(rng.uniform(0.04, 0.2), 3)),
        )
        cases.append(_case(OWNED_HOUR_ARGS, values))
    # edge cases: no cost of capital (annuity = straight line), full use, a one-year life
    cases.append(_case(OWNED_HOUR_ARGS, (30000.0, 5.0, 0.0, 0.8, 1275.0, 1.3, 0.081)))
    cases.append(_case(OWNED_HOUR_ARGS, (30000.0, 5.0, 0.08, 1.0, 1275.0, 1.3, 0.081)))
    cases.append(_case(OWNED_HOUR_ARGS, (30000.0, 1.0, 0.08, 0.8, 1275.0, 1.3, 0.081)))
    return cases


def check_owned_gpu_hour_usd(fn: Any) -> Feedback:
    """Check ``fn(capex_usd, life_years, cost_of_capital_per_year, utilization, power_w, pue,
    usd_per_kwh)``, USD per used GPU-hour, for exercise ``econ-ex-owned-hour``.

    Reference: :func:`llmphys.economics.usd_per_gpu_hour_owned` (its ``total``),
    capex * CRF(r, L) / (8766 h * u) + P / 1000 * PUE * price per kWh.

    >>> def owned(capex, life, r, u, p, pue, kwh):
    ...     crf = r / (1 - (1 + r) ** -life) if r else 1 / life
    ...     return capex * crf / (8766 * u) + p / 1000 * pue * kwh
    >>> check_owned_gpu_hour_usd(owned).passed
    True
    """
    return check_function(
        fn,
        exercise="econ-ex-owned-hour",
        reference=_owned_reference,
        cases=_owned_hour_cases(),
        mistakes=OWNED_HOUR_MISTAKES,
    )


# -- econ-ex-cost-per-mtok ----------------------------------------------------------------------


def _mtok_reference(usd_per_gpu_hour, tokens_per_s_per_gpu, utilization) -> float:
    return economics.usd_per_million_tokens(
        usd_per_chip_hour=usd_per_gpu_hour,
        n_chips=1,
        tokens_per_s=tokens_per_s_per_gpu,
        utilization=utilization,
    )


COST_PER_MTOK_MISTAKES = (
    Mistake(
        implementation=lambda p, r, u: p / units.HOUR / (u * r) * units.KILO,
        message="this is the price of a thousand tokens: a million is 10^6",
    ),
    Mistake(
        implementation=lambda p, r, u: p / units.HOUR / r * units.MEGA,
        message="idle hours are paid for too: the tokens an hour buys are the rate times the "
        "utilisation, so divide by the utilisation",
    ),
    Mistake(
        implementation=lambda p, r, u: p * u / units.HOUR / r * units.MEGA,
        message="the utilisation multiplies the price here: fewer serving hours make each "
        "token dearer, so divide by it",
    ),
    Mistake(
        implementation=lambda p, r, u: p / (u * r) * units.MEGA,
        message="the price is per hour and the rate per second: divide the hourly price by "
        "3600 s (or multiply the rate by 3600) before dividing one by the other",
    ),
    Mistake(
        implementation=lambda p, r, u: p * units.HOUR / (u * r) * units.MEGA,
        message="off by 3600^2: the hourly price was multiplied by 3600 where it should be "
        "divided (an hour holds 3600 s of tokens)",
    ),
    Mistake(
        implementation=lambda p, r, u: p / 60 / (u * r) * units.MEGA,
        message="an hour is 3600 seconds, not 60",
    ),
)
"""Typical wrong implementations of ``econ-ex-cost-per-mtok``, with the hint each deserves."""


def _mtok_cases() -> list[Case]:
    rng = np.random.default_rng(6060)
    cases = []
    for _ in range(8):
        values = (
            float(round(rng.uniform(1.0, 6.0), 2)),
            float(round(10 ** rng.uniform(1.0, 4.5), 0)),
            float(round(rng.uniform(0.2, 0.95), 2)),
        )
        cases.append(_case(COST_PER_MTOK_ARGS, values))
    # edge cases: full use, one user at batch 1 (tens of tokens/s), a large batch on a new chip
    cases.append(_case(COST_PER_MTOK_ARGS, (2.95, 1500.0, 1.0)))
    cases.append(_case(COST_PER_MTOK_ARGS, (2.95, 40.0, 0.6)))
    cases.append(_case(COST_PER_MTOK_ARGS, (5.5, 25000.0, 0.7)))
    return cases


def check_usd_per_million_output_tokens(fn: Any) -> Feedback:
    """Check ``fn(usd_per_gpu_hour, tokens_per_s_per_gpu, utilization)``, USD per 10^6 output
    tokens, for exercise ``econ-ex-cost-per-mtok``.

    Reference: :func:`llmphys.economics.usd_per_million_tokens` on one GPU,
    price / 3600 s / (u * tokens/s) * 10^6.

    >>> check_usd_per_million_output_tokens(lambda p, r, u: p / 3600 / (u * r) * 1e6).passed
    True
    """
    return check_function(
        fn,
        exercise="econ-ex-cost-per-mtok",
        reference=_mtok_reference,
        cases=_mtok_cases(),
        mistakes=COST_PER_MTOK_MISTAKES,
    )


# -- econ-ex-decode-floor -----------------------------------------------------------------------


def _floor_reference(model, acc, n_chips, bytes_per_param) -> float:
    streamed = inference.weight_bytes_read(
        model, batch_size=1, weight_bytes_per_param=bytes_per_param
    )
    return float(streamed) / (n_chips * acc.hbm_bytes_per_s)


def _streamed(model) -> float:
    r = inference.streamed_params(model, batch_size=1)  # the one count of streamed weights
    return float(r["dense"] + r["experts"])


DECODE_FLOOR_MISTAKES = (
    Mistake(
        implementation=lambda m, a, n, b: (
            (accounting.n_active_params(m) - accounting.embedding_params(m))
            * b
            / (n * a.hbm_bytes_per_s)
        ),
        message="a table tied to the output head is dropped with the input embedding: the "
        "lookup reads one row, but the output head multiplies by the whole table every step, "
        "so a tied table is streamed once",
    ),
    Mistake(
        implementation=lambda m, a, n, b: accounting.n_params(m) * b / (n * a.hbm_bytes_per_s),
        message="every parameter is counted: at batch 1 a token reads only the experts its "
        "router picks (the active parameters), and the input embedding table is looked up, "
        "not streamed",
    ),
    Mistake(
        implementation=lambda m, a, n, b: (
            (accounting.n_params(m) - accounting.embedding_params(m)) * b / (n * a.hbm_bytes_per_s)
        ),
        message="the total parameters of a mixture of experts are counted: at batch 1 a token "
        "reads only the experts its router picks, so count the active parameters",
    ),
    Mistake(
        implementation=lambda m, a, n, b: (
            accounting.n_active_params(m) * b / (n * a.hbm_bytes_per_s)
        ),
        message="the input embedding table is counted: a token looks up one row of it rather "
        "than streaming it, so leave it out",
    ),
    Mistake(
        implementation=lambda m, a, n, b: 2 * _streamed(m) / (n * a.peak_bf16_flop_per_s),
        message="this is the time to multiply the weights (2 FLOP per parameter over the "
        "peak), not to read them: at batch 1 the step waits on bytes over HBM bandwidth",
    ),
    Mistake(
        implementation=lambda m, a, n, b: _streamed(m) * b / a.hbm_bytes_per_s,
        message="the weights are spread over n_chips chips that read their shares at the same "
        "time: divide by n_chips",
    ),
)
"""Typical wrong implementations of ``econ-ex-decode-floor``, with the hint each deserves."""


def _floor_case(model_key: str, acc_key: str, n_chips: int, bytes_per_param: float) -> Case:
    return Case(
        args=(specs.model(model_key), specs.accelerator(acc_key), n_chips, bytes_per_param),
        label=f"{model_key}, {acc_key}, n_chips={n_chips}, bytes_per_param={bytes_per_param:g}",
    )


def _floor_cases() -> list[Case]:
    rng = np.random.default_rng(6061)
    models, chips = sorted(specs.models()), sorted(specs.accelerators())
    cases = [
        _floor_case(
            str(rng.choice(models)),
            str(rng.choice(chips)),
            int(rng.choice([1, 2, 4, 8, 16, 72])),
            float(rng.choice([2.0, 1.0, 0.5])),
        )
        for _ in range(8)
    ]
    # edge cases: one chip, a rack of 72 for a large MoE, 4-bit weights on one GPU
    cases.append(_floor_case("llama3_70b", "h100_sxm", 1, 2.0))
    cases.append(_floor_case("deepseek_v3", "gb200", 72, 1.0))
    cases.append(_floor_case("mixtral_8x7b", "h200", 1, 0.5))
    return cases


def check_batch1_decode_floor_s(fn: Any) -> Feedback:
    """Check ``fn(model, acc, n_chips, bytes_per_param)``, seconds, for ``econ-ex-decode-floor``.

    Reference: the weights one batch-1 decode step streams
    (:func:`llmphys.inference.weight_bytes_read`: active parameters less the input embeddings,
    a table tied to the output head counted once as the head, times bytes per parameter) over
    the n chips' HBM bandwidth.

    >>> from llmphys import accounting
    >>> def floor(model, acc, n_chips, b):
    ...     n = accounting.n_active_params(model) - accounting.embedding_params(model)
    ...     n += model.vocab_size * model.d_model if model.tied_embeddings else 0
    ...     return n * b / (n_chips * acc.hbm_bytes_per_s)
    >>> check_batch1_decode_floor_s(floor).passed
    True
    """
    return check_function(
        fn,
        exercise="econ-ex-decode-floor",
        reference=_floor_reference,
        cases=_floor_cases(),
        mistakes=DECODE_FLOOR_MISTAKES,
    )
