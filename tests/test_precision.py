"""FP8/FP4 emulation against the OCP specs, ml_dtypes and the roofline."""

import numpy as np
import pytest

from llmphys import precision, specs


def test_ocp_fp8_limits():
    # OCP OFP8 rev 1.0 table 1 / Micikevicius et al. 2022 table 1.
    e4, e5 = precision.float_format("e4m3"), precision.float_format("e5m2")
    assert (e4.max_value, e4.min_normal, e4.min_subnormal) == (448.0, 2.0**-6, 2.0**-9)
    assert (e5.max_value, e5.min_normal, e5.min_subnormal) == (57344.0, 2.0**-14, 2.0**-16)
    assert e4.bytes_per_element == e5.bytes_per_element == 1.0
    assert precision.float_format("e2m1").bytes_per_element == 0.5


def test_fp4_e2m1_has_exactly_the_eight_mx_magnitudes():
    # OCP MX v1.0, FP4 E2M1: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
    grid = precision.quantize(np.linspace(0, 8, 8001), "e2m1")
    assert sorted(set(grid.tolist())) == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_ties_round_to_even():
    # E4M3 spacing is 32 in [256, 512): 464 lies halfway between 448 (mantissa 110) and 480.
    # Spacing 2 in [16, 32): 17 -> 16 (even), 19 -> 20 (even).
    q = precision.quantize(np.array([17.0, 19.0, 464.0, -17.0]), "e4m3", saturate=False)
    assert q.tolist() == [16.0, 20.0, 448.0, -16.0]


def test_overflow_saturates_or_follows_the_spec():
    x = np.array([1e6, -np.inf, np.nan])
    assert precision.quantize(x, "e4m3")[:2].tolist() == [448.0, -448.0]
    assert np.isnan(precision.quantize(x, "e4m3")[2])
    assert np.isnan(precision.quantize(np.array([480.0]), "e4m3", saturate=False)[0])  # no inf
    assert precision.quantize(np.array([61440.0]), "e5m2", saturate=False)[0] == np.inf


def test_every_e4m3_code_is_a_fixed_point():
    # All 126 positive finite E4M3 values: exponent field 0..15, mantissa 0..7, minus the NaN.
    vals = [(2.0**-6) * m / 8 for m in range(1, 8)]
    vals += [2.0 ** (e - 7) * (1 + m / 8) for e in range(1, 16) for m in range(8)][:-1]
    v = np.array(vals)
    assert v.max() == 448.0 and len(v) == 126
    assert np.array_equal(precision.quantize(v, "e4m3"), v)


@pytest.mark.parametrize("fmt, dtype_name", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2"),
                                             ("e2m1", "float4_e2m1fn")])
def test_emulation_matches_ml_dtypes_bit_for_bit(fmt, dtype_name):
    # Independent reference: ml_dtypes' C++ casts (non-saturating, as its casts are).
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(50_000) * 10.0 ** rng.uniform(-12, 6, 50_000)).astype(np.float32)
    ref = x.astype(getattr(ml_dtypes, dtype_name)).astype(np.float64)
    mine = precision.quantize(x, fmt, saturate=False)
    assert np.array_equal(ref, mine, equal_nan=True)


def test_scaled_e4m3_error_is_at_most_half_an_ulp_for_normal_values(rng):
    # After per-block scaling, every value that lands in the normal range is off by at most
    # 2^-(m+1) = 1/16 of itself (round to nearest, 3 mantissa bits).
    x = rng.standard_t(3, size=(64, 256))
    xq = precision.fake_quantize(x, "e4m3", block_size=32)
    s = precision.block_scales(x, "e4m3", block_size=32)
    normal = np.abs(x * s) >= 2.0**-6
    assert np.max(np.abs(xq - x)[normal] / np.abs(x)[normal]) <= 1 / 16 + 1e-12


def test_block_scaling_beats_tensor_scaling_on_heavy_tailed_rows(rng):
    x = rng.standard_t(3, size=(128, 256)) * np.exp(rng.normal(0, 2, size=(128, 1)))
    for fmt in ("e4m3", "e2m1"):
        tensor = precision.relative_rms_error(x, precision.fake_quantize(x, fmt))
        block = precision.relative_rms_error(x, precision.fake_quantize(x, fmt, block_size=32))
        assert block < tensor


def test_unscaled_small_gradients_flush_to_zero_in_e4m3(rng):
    g = 1e-4 * rng.standard_normal(10_000)  # below the smallest E4M3 subnormal, 2^-9
    assert precision.flushed_fraction(g, precision.fake_quantize(g, "e4m3", scaled=False)) == 1.0
    assert precision.flushed_fraction(g, precision.fake_quantize(g, "e4m3")) < 0.01


def test_power_of_two_scales_are_powers_of_two(rng):
    s = precision.block_scales(rng.standard_normal((4, 64)), "e4m3", block_size=32,
                               power_of_two=True)
    assert np.all(np.log2(s) == np.round(np.log2(s)))


def test_fp8_speedup_lies_between_the_peak_ratio_and_the_byte_ratio():
    # Roofline: t = max(F/P, B/W). FP8 divides F/P by the peak ratio r and B/W by 2, so the
    # speed-up lies between min(r, 2) and max(r, 2); where FP8 doubles the peak (r = 2) it is
    # exactly 2 at every intensity. Tolerance 1e-3: vendors round each peak separately
    # (H100: 1978.9 / 989.4 = 2.0001). Holds for any chip added to the registry.
    for acc in specs.accelerators().values():
        for m in (1, 64, 4096):
            r = precision.precision_speedup(acc, m=m, n=8192, k=8192)
            lo, hi = sorted((r["peak_ratio"], r["bytes_ratio"]))
            assert lo - 1e-9 <= r["speedup"] <= hi + 1e-9, (acc.key, m, r)
            if "fp8" in acc.matrix_dtypes and r["peak_ratio"] == pytest.approx(2.0, rel=1e-3):
                assert r["speedup"] == pytest.approx(2.0, rel=1e-3)


def test_weight_only_fp8_speeds_memory_bound_kernels_on_a100_but_not_compute_bound():
    a100 = specs.accelerator("a100_sxm")
    assert precision.precision_speedup(a100, m=1, n=8192, k=8192)["speedup"] == pytest.approx(
        2.0, rel=1e-3)
    assert precision.precision_speedup(a100, m=8192, n=8192, k=8192)["speedup"] == 1.0


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="fmt"):
        precision.quantize(np.ones(3), "e3m4")
    with pytest.raises(ValueError, match="block_size"):
        precision.block_scales(np.ones(10), "e4m3", block_size=3)
    with pytest.raises(ValueError, match="x must not"):
        precision.relative_rms_error(np.zeros(3), np.ones(3))
