import numpy as np
import pytest

from llmphys import roofline, specs


def test_h100_ridge_point_is_about_295_flop_per_byte(h100):
    # 989.4 TFLOP/s dense BF16 / 3.35 TB/s (H100 SXM datasheet) = 295.3.
    assert roofline.ridge_point(h100) == pytest.approx(295.3, abs=0.1)


def test_fp8_doubles_the_ridge_on_hopper(h100):
    # NVIDIA prints 1,978.9 and 989.4 TFLOP/s, each rounded separately: 1e-4.
    assert roofline.ridge_point(h100, "fp8") == pytest.approx(2 * roofline.ridge_point(h100),
                                                              rel=1e-4)


def test_attainable_is_continuous_at_the_ridge_and_capped_by_peak(h100):
    ridge = roofline.ridge_point(h100)
    below = roofline.attainable_flop_per_s(h100, ridge * (1 - 1e-9))
    above = roofline.attainable_flop_per_s(h100, ridge * (1 + 1e-9))
    assert below == pytest.approx(above, rel=1e-8)
    x = np.logspace(-2, 5, 50)
    assert np.all(roofline.attainable_flop_per_s(h100, x) <= h100.peak_bf16_flop_per_s)


def test_batch_one_decode_gemv_runs_at_a_third_of_a_percent_of_h100_peak(h100):
    # A GEMV reads each bf16 weight (2 bytes) once and does 2 FLOP with it: I ~ 1.
    i = roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2.0)
    assert i == pytest.approx(1.0, rel=1e-3)
    assert roofline.fraction_of_peak(h100, i) == pytest.approx(1 / 295.3, rel=2e-3)


def test_square_matmul_intensity_closed_form():
    # m = n = k: 2n^3 / (3 n^2 b) = 2n / (3b).
    n = 3000
    assert roofline.matmul_intensity(n, n, n, bytes_per_element=2.0) == pytest.approx(2 * n / 6)


def test_training_gemm_with_thousands_of_tokens_is_compute_bound(h100):
    i = roofline.matmul_intensity(16384, 8192, 8192, bytes_per_element=2.0)
    assert i > 3000 and roofline.fraction_of_peak(h100, i) == 1.0


def test_kernel_time_is_the_slower_of_compute_and_memory(h100):
    t_mem = roofline.kernel_time_s(h100, flop=1.0, bytes_moved=3.35e12)
    assert t_mem == pytest.approx(1.0)
    t_cmp = roofline.kernel_time_s(h100, flop=989.4e12, bytes_moved=1.0)
    assert t_cmp == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.array([1.0, -2.0])])
def test_non_positive_intensity_is_rejected(h100, bad):
    with pytest.raises(ValueError, match="intensity"):
        roofline.attainable_flop_per_s(h100, bad)


def test_bad_matmul_shape_names_the_dimension():
    with pytest.raises(ValueError, match="k must be a positive"):
        roofline.matmul_intensity(4, 4, 0, bytes_per_element=2.0)


def test_tpu_has_no_fp8_ridge():
    with pytest.raises(ValueError, match="tpu_v5p has no native fp8"):
        roofline.ridge_point(specs.accelerator("tpu_v5p"), "fp8")
