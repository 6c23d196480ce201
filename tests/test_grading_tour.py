"""The hardware tour's Implement check (tour-ex-variant): a right decode floor passes, and each
typical slip gets its own hint. The wrong versions are written here, independently of the
mistakes the check knows, the way a student would write them."""

import dataclasses

import pytest

from llmphys import grading, roofline, specs


def right(n_params, bytes_per_element, peak_flop_per_s, hbm_bytes_per_s, n_chips):
    per_chip = n_params / n_chips
    return max(2 * per_chip / peak_flop_per_s, per_chip * bytes_per_element / hbm_bytes_per_s)


def test_a_correct_floor_passes_and_says_how_many_cases():
    fb = grading.check_decode_floor_s(right)
    assert fb.passed and fb.n_matched == fb.n_cases == 16
    assert str(fb).startswith("PASS tour-ex-variant (right): all 16 cases match")


def test_the_check_agrees_with_the_chapter_floor_of_llama3_70b_in_fp8_on_an_h200():
    # The tour's tour-ex-floor: 70.6e9 FP8 weights over 4.8 TB/s is 14.7 ms per token.
    h200 = specs.accelerator("h200")
    n = 70.6e9
    want = roofline.kernel_time_s(h200, flop=2 * n, bytes_moved=n, dtype="fp8")
    assert right(n, 1.0, h200.peak_flop_per_s("fp8"), h200.hbm_bytes_per_s, 1) == pytest.approx(
        want, rel=1e-12)
    assert want == pytest.approx(14.7e-3, rel=5e-3)


def test_a_variant_built_with_replace_is_graded_like_the_chip_it_copies():
    h100, h200 = specs.accelerator("h100_sxm"), specs.accelerator("h200")
    v = dataclasses.replace(h100, hbm_bytes=h200.hbm_bytes, hbm_bytes_per_s=h200.hbm_bytes_per_s)
    assert roofline.ridge_point(v) == roofline.ridge_point(h200)


@pytest.mark.parametrize("wrong,hint", [
    (lambda n, b, p, w, k: 2 * n / k / p + n * b / k / w, "not their sum"),
    (lambda n, b, p, w, k: min(2 * n / p, n * b / w) / k, "min picks the ceiling"),
    (lambda n, b, p, w, k: n * b / (w * k), "the arithmetic binds"),
    (lambda n, b, p, w, k: max(n / p, n * b / w) / k, "2 FLOP per parameter"),
    (lambda n, b, p, w, k: max(2 * n / p, n * b / w), "split the weights over the n_chips"),
    (lambda n, b, p, w, k: k * max(2 * n / p, n * b / w), "divide by n_chips"),
    (lambda n, b, p, w, k: max(2 * n / p, n * b * 8 / w) / k, "factor of 8 in the memory time"),
])
def test_each_typical_slip_fails_with_its_hint(wrong, hint):
    fb = grading.check_decode_floor_s(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_a_units_slip_gets_the_generic_prefix_hint():
    # Milliseconds where seconds were asked: every answer is 10^3 times the reference.
    fb = grading.check_decode_floor_s(lambda *a: 1e3 * right(*a))
    assert not fb.passed and "off by 10^3" in fb.message


def test_a_stub_is_not_implemented_yet():
    def decode_floor_s(n_params, bytes_per_element, peak_flop_per_s, hbm_bytes_per_s, n_chips):
        raise NotImplementedError

    fb = grading.check_decode_floor_s(decode_floor_s)
    assert str(fb) == ("NOT YET tour-ex-variant (decode_floor_s): not implemented yet: write the "
                       "body of decode_floor_s and run this cell again")


def test_passing_a_value_instead_of_the_function_is_a_clear_error():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_decode_floor_s(right(70e9, 2.0, 1e15, 3e12, 1))


def _gemm_right(m, n, tile_m, tile_n, n_sms):
    import math

    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    slots = math.ceil(tiles / n_sms) * n_sms * tile_m * tile_n
    return m * n / slots


def test_gemm_efficiency_check_passes_and_names_fractional_waves():
    assert grading.check_gemm_efficiency(_gemm_right).passed

    def fractional(m, n, tm, tn, s):
        import math

        tiles = math.ceil(m / tm) * math.ceil(n / tn)
        return m * n / (tiles * tm * tn)  # tiles / (tiles / s) / s = 1: no wave term at all

    fb = grading.check_gemm_efficiency(fractional)
    assert not fb.passed and "wave" in fb.message


def _tiled_right(m, n, k, tile_m, tile_n, bytes_per_element):
    import math

    return bytes_per_element * (m * k * math.ceil(n / tile_n) + k * n * math.ceil(m / tile_m)
                                + m * n)


def test_tiled_gemm_check_passes_and_names_each_slip():
    import math

    assert grading.check_tiled_gemm_hbm_bytes(_tiled_right).passed
    slips = {
        "untiled best case": lambda m, n, k, tm, tn, b: b * (m * k + k * n + m * n),
        "written to HBM once": lambda m, n, k, tm, tn, b: b * (
            m * k * math.ceil(n / tn) + k * n * math.ceil(m / tm)),
        "with a ceiling": lambda m, n, k, tm, tn, b: b * (m * k * n / tn + k * n * m / tm + m * n),
        "multiply by bytes_per_element": lambda m, n, k, tm, tn, b: (
            m * k * math.ceil(n / tn) + k * n * math.ceil(m / tm) + m * n),
    }
    for hint, wrong in slips.items():
        fb = grading.check_tiled_gemm_hbm_bytes(wrong)
        assert not fb.passed and hint in fb.message, (hint, fb.message)


def test_clock_under_cap_check_passes_and_names_each_slip():
    def right(cap, demand, f, ps, x):
        return f if demand <= cap else f * ((cap - ps) / (demand - ps)) ** (1 / x)

    assert grading.check_clock_under_cap_hz(right).passed
    slips = {
        "is not slowed": lambda cap, d, f, ps, x: f * ((cap - ps) / (d - ps)) ** (1 / x),
        "subtract static_w": lambda cap, d, f, ps, x: f if d <= cap else f * (cap / d) ** (1 / x),
        "ROOT of the power": lambda cap, d, f, ps, x: f if d <= cap else f * (cap - ps) / (d - ps),
    }
    for hint, wrong in slips.items():
        fb = grading.check_clock_under_cap_hz(wrong)
        assert not fb.passed and hint in fb.message, (hint, fb.message)


def test_tp_intensity_check_passes_and_names_each_slip():
    def right(n, d, t, b):
        return 6 * n / t / (4 * 2 * (t - 1) / t * d * b)

    assert grading.check_tp_layer_intensity(right).passed
    slips = {
        "two backward": lambda n, d, t, b: 6 * n / t / (2 * 2 * (t - 1) / t * d * b),
        "forward and backward": lambda n, d, t, b: 2 * n / t / (2 * 2 * (t - 1) / t * d * b),
        "not the buffer once": lambda n, d, t, b: 6 * n / t / (4 * d * b),
        "divide 6 N by tp": lambda n, d, t, b: 6 * n / (8 * (t - 1) / t * d * b),
    }
    for hint, wrong in slips.items():
        fb = grading.check_tp_layer_intensity(wrong)
        assert not fb.passed and hint in fb.message, (hint, fb.message)
