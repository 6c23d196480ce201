"""Growth rates fitted from the registry, against closed forms and the published rates."""

import math

import pytest

from llmphys import specs, trends


def test_fit_recovers_an_exact_exponential():
    years = [2016, 2018, 2020, 2021]
    values = [5.0 * 1.7 ** ((y - 2016) / 2) for y in years]
    assert trends.growth_per_period(years, values) == pytest.approx(1.7, rel=1e-12)


def test_two_chip_fit_is_the_geometric_rate_between_them():
    # With two points the least-squares line passes through both: (W_b200 / W_a100)^(2/4).
    pair = [specs.accelerator("a100_sxm"), specs.accelerator("b200")]
    expected = (8.0e12 / 2.039e12) ** (2 / 4)
    assert trends.registry_growth(pair, "hbm_bandwidth") == pytest.approx(expected, rel=1e-12)


def test_gholami_rates_are_the_published_ones():
    # Gholami et al. 2024, abstract: 3.0x, 1.6x and 1.4x every two years.
    assert trends.GHOLAMI_2024_GROWTH_PER_2Y == {"compute": 3.0, "hbm_bandwidth": 1.6,
                                                 "interconnect": 1.4}


def test_headline_compute_outgrows_hbm_bandwidth_across_the_registry():
    accs = list(specs.accelerators().values())
    assert trends.registry_growth(accs, "peak_headline") > trends.registry_growth(
        accs, "hbm_bandwidth") > trends.registry_growth(accs, "scale_out")


def test_hbm_stack_bandwidths_match_the_jedec_headlines():
    # JESD238 HBM3: 819 GB/s per stack; JESD270-4 HBM4: "2 TB/s" (2.048 exactly).
    assert trends.hbm_stack_bytes_per_s("HBM3") == pytest.approx(819.2e9)
    assert trends.hbm_stack_bytes_per_s("HBM4") == pytest.approx(2.048e12)
    assert trends.hbm_stack_bytes_per_s("HBM2") == pytest.approx(256e9)


def test_years_to_grow_inverts_the_growth_rate():
    assert trends.years_to_grow(3.0**5, 3.0) == pytest.approx(10.0)
    assert trends.years_to_grow(2.0, 1.4) == pytest.approx(2 * math.log(2) / math.log(1.4))


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="metric"):
        trends.registry_growth(list(specs.accelerators().values()), "transistors")
    with pytest.raises(ValueError, match="years"):
        trends.growth_per_period([2020, 2020], [1.0, 2.0])
    with pytest.raises(ValueError, match="generation"):
        trends.hbm_stack_bytes_per_s("HBM9")
    with pytest.raises(ValueError, match="growth_per_2y"):
        trends.years_to_grow(2.0, 1.0)
