"""Published achieved rates against their datasheet ceilings (data/achieved_rates.toml)."""

import dataclasses

import pytest

from llmphys import achieved


def test_flashattention3_fraction_matches_the_papers_own_75_percent():
    # Shah et al. 2024 abstract: "740 TFLOPs/s (75% utilization)"; 740 / 989.4 = 0.748.
    m = achieved.measurements()["fa3_fp16_forward"]
    assert achieved.fraction_of_ceiling(m) == pytest.approx(0.75, abs=0.005)


def test_flashmla_memory_bound_decode_reaches_about_nine_tenths_of_hbm():
    # FlashMLA README: 3000 GB/s against the HBM3's 3.35 TB/s.
    m = achieved.measurements()["flashmla_memory"]
    assert achieved.fraction_of_ceiling(m) == pytest.approx(3000 / 3350, rel=1e-9)


def test_every_published_rate_is_below_its_ceiling_and_quotes_its_number():
    for m in achieved.measurements().values():
        assert 0 < achieved.fraction_of_ceiling(m) < 1, m.key
        scale = 1e9 if m.dtype == achieved.HBM else 1e12
        assert f"{m.measured / scale:.0f}" in m.quote.replace(",", ""), m.key


def test_fraction_of_ceiling_rejects_what_is_not_a_measurement():
    with pytest.raises(ValueError, match="AchievedRate"):
        achieved.fraction_of_ceiling(0.75)


def test_unknown_ceiling_chip_is_named():
    m = achieved.measurements()["fa3_fp16_forward"]
    with pytest.raises(KeyError, match="unknown accelerator"):
        achieved.ceiling(dataclasses.replace(m, ceiling_chip="h900"))
