"""Power and clocks: the cube law's inverse, the registry's clocks against the dense peak, and
the published sustained clocks against the peak clock."""

import pytest

from llmphys import power_clock as pc
from llmphys import specs

C = pc.chip_clocks()["h100_sxm"]
H100 = specs.accelerator("h100_sxm")


def test_cap_matches_registry_tdp_and_peak_clock_reproduces_the_peak():
    assert C.power_cap_w == H100.tdp_w
    # 528 tensor cores x 1024 dense BF16 FLOP per clock (whitepaper), to its rounding: 1e-4
    assert 528 * 1024 * C.peak_clock_hz == pytest.approx(H100.peak_bf16_flop_per_s, rel=1e-4)


def test_every_published_sustained_clock_is_below_the_peak_clock():
    assert len(C.observations) >= 3
    assert all(o.clock_hz < C.peak_clock_hz < C.max_clock_hz for o in C.observations)


def test_mamf_is_about_80_percent_of_the_dense_peak():
    # Bekman's table prints 80.3% against 989.
    assert C.mamf_bf16_flop_per_s / H100.peak_bf16_flop_per_s == pytest.approx(0.803, abs=1e-3)


def test_cube_law_roundtrip_and_cube_root():
    f = pc.clock_under_cap_hz(700.0, demand_w=1000.0, clock_hz=1.98e9, static_w=100.0)
    assert f == pytest.approx(1.98e9 * (600 / 900) ** (1 / 3))
    back = pc.power_at_clock_w(f, ref_clock_hz=1.98e9, ref_power_w=1000.0, static_w=100.0)
    assert back == pytest.approx(700.0)
    d = pc.implied_demand_w(700.0, sustained_clock_hz=f, clock_hz=1.98e9, static_w=100.0)
    assert d == pytest.approx(1000.0)


def test_a_quarter_less_power_costs_under_a_tenth_of_the_clock():
    f = pc.clock_under_cap_hz(750.0, demand_w=1000.0, clock_hz=1.0e9)
    assert 0.9 < f / 1e9 < 0.91  # 0.75^(1/3) = 0.9086


def test_a_load_under_the_cap_keeps_its_clock_and_bad_input_is_named():
    assert pc.clock_under_cap_hz(700.0, demand_w=500.0, clock_hz=1.83e9) == 1.83e9
    with pytest.raises(ValueError, match="exponent"):
        pc.clock_under_cap_hz(700.0, demand_w=900.0, clock_hz=1e9, exponent=0.5)
    with pytest.raises(ValueError, match="power_cap_w"):
        pc.clock_under_cap_hz(50.0, demand_w=900.0, clock_hz=1e9, static_w=80.0)


def test_loader_rejects_a_peak_clock_above_the_maximum(tmp_path, monkeypatch):
    import shutil

    src = specs.data_dir()
    shutil.copy(src / "accelerators.toml", tmp_path / "accelerators.toml")
    text = (src / "power_clocks.toml").read_text(encoding="utf-8")
    (tmp_path / "power_clocks.toml").write_text(
        text.replace("peak_clock_hz = 1.83e9", "peak_clock_hz = 2.5e9", 1), encoding="utf-8")
    monkeypatch.setenv("LLMPHYS_DATA", str(tmp_path))
    pc.chip_clocks.cache_clear()
    try:
        with pytest.raises(ValueError, match="peak_clock_hz <= max_clock_hz"):
            pc.chip_clocks()
    finally:
        pc.chip_clocks.cache_clear()
