"""The ridge's change between generations is the ratio of compute and bandwidth growth, checked
against the registry's datasheet values."""

import pytest

from llmphys import ridge_trend, specs

NVIDIA = [specs.accelerator(k) for k in ("a100_sxm", "h100_sxm", "h200", "b200")]


def test_ridge_growth_is_compute_growth_over_bandwidth_growth():
    for r in ridge_trend.ridge_steps(NVIDIA):
        assert r["ridge_after"] / r["ridge_before"] == pytest.approx(r["ridge_growth"], rel=1e-12)
        assert r["ridge_growth"] == pytest.approx(r["compute_growth"] / r["bandwidth_growth"])


def test_datasheet_ridges_295_206_281_are_not_monotonic():
    # H100 SXM 989.4 TFLOP/s over 3.35 TB/s, H200 the same over 4.8, B200 2,250 over 8
    # (NVIDIA datasheets, dense BF16, in data/accelerators.toml).
    steps = ridge_trend.ridge_steps(NVIDIA)
    ridges = [steps[0]["ridge_before"]] + [r["ridge_after"] for r in steps]
    assert [round(x) for x in ridges] == [153, 295, 206, 281]
    assert steps[1]["compute_growth"] == pytest.approx(1.0)  # the H200 keeps the H100's die
    assert steps[1]["ridge_growth"] == pytest.approx(3.35 / 4.8, rel=1e-3)


def test_fp8_ridge_steps_follow_the_same_ratio_where_both_have_fp8():
    h100, b200 = specs.accelerator("h100_sxm"), specs.accelerator("b200")
    r = ridge_trend.ridge_steps([h100, b200], dtype="fp8")[0]
    assert r["ridge_growth"] == pytest.approx(r["ridge_after"] / r["ridge_before"])


def test_needs_two_chips():
    with pytest.raises(ValueError, match="at least 2"):
        ridge_trend.ridge_steps(NVIDIA[:1])
