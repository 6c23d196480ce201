"""The measured roofline: closed-form bookkeeping, and sanity of real (machine-dependent) timings."""

import numpy as np
import pytest

from llmphys import benchmark


def test_matmul_point_counts_flop_and_bytes_exactly(rng):
    p = benchmark.matmul_point(32, 48, 16, rng=rng, n_repeats=1)
    assert p["flop"] == 2 * 32 * 48 * 16
    assert p["bytes"] == 4 * (32 * 16 + 16 * 48 + 32 * 48)  # FP32, each operand once
    assert p["time_s"] > 0 and p["flop_per_s"] == pytest.approx(p["flop"] / p["time_s"])


def test_gemv_uses_a_vector_and_has_intensity_near_half_a_flop_per_byte(rng):
    p = benchmark.matmul_point(1, 512, 512, rng=rng, n_repeats=1)
    assert p["intensity"] == pytest.approx(0.5, rel=0.01)  # 2 n^2 / (4 n^2): FP32 weights


def test_prediction_is_the_larger_of_the_two_times():
    kw = dict(peak_flop_per_s=1e11, bytes_per_s=1e10)
    assert benchmark.predicted_time_s(flop=1e11, bytes_moved=1.0, **kw) == 1.0
    assert benchmark.predicted_time_s(flop=1.0, bytes_moved=1e10, **kw) == 1.0


def test_measured_roofline_is_self_consistent(rng):
    # Small sizes keep this fast; only claims that hold on any machine, however loaded:
    # the ridge is P / W, and a GEMV's prediction is bandwidth-bound (W x 0.5 FLOP/B).
    r = benchmark.measured_roofline(rng=rng, peak_size=256, shapes=((1, 1024, 1024),),
                                    copy_bytes=16e6, n_repeats=3)
    assert r["ridge"] == pytest.approx(r["peak_flop_per_s"] / r["bytes_per_s"])
    gemv = r["points"][0]
    assert gemv["predicted_flop_per_s"] <= r["bytes_per_s"] * gemv["intensity"] * (1 + 1e-12)
    # The ceilings are the best observed rates, so no measured point lies above the roof.
    for p in r["points"]:
        assert p["flop_per_s"] <= p["predicted_flop_per_s"] * (1 + 1e-12)
    assert r["bytes_per_s"] >= r["copy_bytes_per_s"]


def test_torch_path_is_optional():
    assert isinstance(benchmark.torch_gpu_available(), bool)
    if not benchmark.torch_gpu_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            benchmark.torch_measurements()


def test_bad_inputs_name_the_argument(rng):
    with pytest.raises(ValueError, match="n_repeats"):
        benchmark.best_time_s(lambda: None, n_repeats=0)
    with pytest.raises(ValueError, match="dtype"):
        benchmark.matmul_point(2, 2, 2, rng=rng, dtype="float16")


def test_thread_limit_is_applied_and_lifted(rng):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    r = benchmark.measured_roofline(rng=rng, peak_size=128, shapes=((1, 256, 256),),
                                    copy_bytes=1e6, n_repeats=1, n_threads=1)
    assert r["peak_flop_per_s"] > 0
    with benchmark._blas_threads(1):
        assert all(i["num_threads"] == 1 for i in threadpoolctl.threadpool_info()
                   if i["user_api"] == "blas")
    with pytest.raises(ValueError, match="n_threads"):
        benchmark._blas_threads(0)
