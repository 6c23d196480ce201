"""Prices registry and the cost of owning and running accelerators."""

import datetime
import math

import numpy as np
import pytest
import test_data

from llmphys import economics, specs, training, units

PRICES = economics.prices()
ENTRY = dict(value=1.0, unit="USD", kind="published", source="a doc",
             as_of=datetime.date(2025, 1, 1), note="")


@pytest.mark.parametrize("key", PRICES)
def test_every_price_has_provenance_and_a_consistent_range(key):
    p = PRICES[key]
    assert len(p.source) > 15 and p.kind in economics.KINDS
    assert datetime.date(2019, 1, 1) <= p.as_of <= test_data.TODAY
    lo, hi = p.range
    assert lo <= p.value <= hi
    if p.kind == "assumption":
        assert "ssumption" in p.source or "ssumption" in p.note


def test_loader_rejects_unknown_and_missing_fields():
    with pytest.raises(ValueError, match=r"unknown field.*colour"):
        economics._walk({"g": {"x": {**ENTRY, "colour": "red"}}}, (), {})
    with pytest.raises(ValueError, match=r"missing required.*source"):
        economics._walk({"g": {"x": {k: v for k, v in ENTRY.items() if k != "source"}}}, (), {})
    with pytest.raises(ValueError, match="kind"):
        economics._walk({"x": {**ENTRY, "kind": "rumour"}}, (), {})
    with pytest.raises(ValueError, match="outside"):
        economics._walk({"x": {**ENTRY, "low": 2.0}}, (), {})
    with pytest.raises(KeyError, match="known"):
        economics.price("gpu_hour_usd.nonexistent")


@pytest.mark.parametrize("provider", ["deepseek_v3", "claude_sonnet_4", "gpt_4o"])
def test_api_prices_order_cached_below_input_below_output(provider):
    def g(part):
        return PRICES[f"api_usd_per_mtok.{provider}.{part}"].value

    assert g("cached_input") < g("input") < g("output")


def test_deepseek_v3_reported_cost_is_gpu_hours_times_two_dollars():
    # DeepSeek-V3 report, Table 1: 2,788K H800 GPU-hours, $5.576M at $2/GPU-hour.
    hours = PRICES["training_gpu_hours.deepseek_v3_total"].value
    assert hours * PRICES["gpu_hour_usd.h800_deepseek"].value == pytest.approx(5.576e6, rel=1e-6)
    assert PRICES["training_gpu_hours.deepseek_v3_pretraining"].value == pytest.approx(14.8 * 180e3)


def test_llama_405b_mfu_from_gpu_hours_is_below_its_reported_running_mfu():
    # 3.8e25 FLOP over 30.84M H100-hours is ~35% of the BF16 peak; the paper reports 38-43%
    # while running. GPU-hours include restarts and stalls, so the implied figure is lower.
    h100 = specs.accelerator("h100_sxm")
    mfu = training.model_flop_utilization(
        3.8e25, time_s=PRICES["training_gpu_hours.llama31_405b"].value * units.HOUR, n_chips=1,
        peak_flop_per_s=h100.peak_bf16_flop_per_s)
    lo, _ = PRICES["reported_mfu.llama31_405b"].range
    assert 0.30 < mfu < lo


def test_capital_recovery_factor_repays_the_capex():
    # Discounting L payments of CRF at rate r returns exactly the capex.
    r, life = 0.08, 5
    crf = economics.capital_recovery_factor(rate_per_year=r, life_years=life)
    assert sum(crf / (1 + r) ** t for t in range(1, life + 1)) == pytest.approx(1.0, rel=1e-12)
    assert economics.capital_recovery_factor(rate_per_year=0.0, life_years=4) == 0.25


def test_owned_gpu_hour_splits_into_capital_and_energy():
    parts = economics.usd_per_gpu_hour_owned(capex_usd=40e3, life_years=5, utilization=1.0,
                                             power_w=1000, pue=1.5, usd_per_kwh=0.1)
    assert parts["capital"] == pytest.approx(40e3 / 5 / 8766)
    assert parts["energy"] == pytest.approx(0.15)
    assert parts["total"] == pytest.approx(parts["capital"] + parts["energy"])


def test_depreciation_exceeds_electricity_across_the_recorded_ranges():
    # The series' claim, checked at the corners of the ranges in prices.toml.
    cap, pw, kwh, pue = (PRICES[k] for k in ("capex_usd_per_gpu.h100_sxm",
                                             "system_power_w_per_gpu.h100_sxm",
                                             "electricity_usd_per_kwh.us_industrial",
                                             "pue.ai_datacentre"))
    worst = economics.usd_per_gpu_hour_owned(capex_usd=cap.range[0], life_years=6, utilization=1.0,
                                             power_w=pw.value, pue=pue.range[1],
                                             usd_per_kwh=kwh.range[1])
    assert worst["capital"] > worst["energy"]


def test_earning_power_halves_every_doubling_time_and_life_is_where_it_meets_opex():
    assert economics.earning_power_fraction(2.5, doubling_years=2.5) == pytest.approx(0.5)
    life = economics.economic_life_years(usd_per_hour_new=3.0, opex_usd_per_hour=0.3,
                                         doubling_years=2.5)
    assert 3.0 * economics.earning_power_fraction(life, doubling_years=2.5) == pytest.approx(0.3)
    assert economics.economic_life_years(usd_per_hour_new=0.2, opex_usd_per_hour=0.3,
                                         doubling_years=2.5) == 0.0


@pytest.mark.parametrize("rate", [0.0, 0.1])
def test_remaining_value_matches_numerical_integration(rate):
    o, d = 0.1, 2.5
    life = d * math.log2(1 / o)

    def v(a):  # independent: trapezoid rule on a fine grid
        t = np.linspace(a, life, 200_001)
        return np.trapezoid((2 ** (-t / d) - o) * np.exp(-rate * (t - a)), t)

    for age in (0.0, 1.0, 2.0, 5.0):
        got = economics.remaining_value_fraction(age, opex_fraction=o, doubling_years=d,
                                                 discount_rate_per_year=rate)
        assert got == pytest.approx(v(age) / v(0.0), rel=1e-6)
    assert economics.remaining_value_fraction(life, opex_fraction=o, doubling_years=d) == (
        pytest.approx(0.0, abs=1e-12))


def test_usd_per_million_tokens_arithmetic():
    assert economics.usd_per_million_tokens(usd_per_chip_hour=3.6, n_chips=1,
                                            tokens_per_s=1.0) == pytest.approx(1e3)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="utilization"):
        economics.usd_per_gpu_hour_owned(capex_usd=1, life_years=1, utilization=0, power_w=1,
                                         pue=1.2, usd_per_kwh=0.1)
    with pytest.raises(ValueError, match="pue"):
        economics.usd_per_gpu_hour_owned(capex_usd=1, life_years=1, utilization=1, power_w=1,
                                         pue=0.9, usd_per_kwh=0.1)
    with pytest.raises(ValueError, match="opex_fraction"):
        economics.remaining_value_fraction(1.0, opex_fraction=0, doubling_years=2)
