"""The measured roofline: closed-form bookkeeping, and predictions of held-out kernels."""

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


def test_stream_kernels_count_stream_bytes():
    # McCalpin's STREAM counts 16 B per element for copy and scale and 24 B for add and
    # triad (float64, each array once); the triad does 2 FLOP per element.
    n = 1000
    expect = {"copy": (0, 16), "scale": (1, 16), "add": (1, 24), "triad": (2, 24),
              "dot": (2, 16)}
    for name, (flop, q) in expect.items():
        p = benchmark.stream_point(name, n_bytes=8 * n, n_repeats=1)
        assert (p["flop"], p["bytes"]) == (flop * n, q * n), name


def test_stream_kernels_compute_what_they_say():
    # The triad is BLAS daxpy in place: b = b + 3 c, on b = 2, c = 3 -> 11.
    s = benchmark._Streams(1000, 2)
    with s.pool:
        s.runner("triad")()
        assert np.all(s.arrays[1] == 2.0 + 3.0 * 3.0)
        assert sum(s.runner("dot")()) == pytest.approx(11.0 * 3.0 * 1000)
        s.runner("add")()
        assert np.all(s.arrays[0] == 11.0 + 3.0)


def test_prediction_is_the_larger_of_the_two_times():
    kw = {"peak_flop_per_s": 1e11, "bytes_per_s": 1e10}
    assert benchmark.predicted_time_s(flop=1e11, bytes_moved=1.0, **kw) == 1.0
    assert benchmark.predicted_time_s(flop=1.0, bytes_moved=1e10, **kw) == 1.0


def test_the_roofline_predicts_kernels_it_was_not_fitted_to(rng):
    # Benchmark-style: prints its table. P comes from a 2048^3 GEMM and W from a triad on
    # arrays of 4 x the last-level cache; none of the seven kernels below sets either. On an
    # idle core the target is 20%; this test runs beside other jobs on a shared
    # 2-core machine, where one kernel's error moved between -48% and +74% from one run to
    # the next while this was written (the other engineers' jobs take bandwidth), so it
    # asserts a factor 2 either way and allows three attempts. A gross error, such as a
    # bandwidth ceiling measured in cache rather than DRAM (several times too high), fails
    # every attempt; a burst of load on one kernel does not. The 20% figure is reported by
    # chapter 4's run, not asserted here.
    for attempt in range(3):
        r = benchmark.measured_roofline(rng=rng, n_threads=1, n_rounds=5)
        print(f"\nattempt {attempt + 1}: P = {r['peak_flop_per_s'] / 1e9:.1f} GFLOP/s, "
              f"W = {r['bytes_per_s'] / 1e9:.2f} GB/s")
        print(f"{'kernel':22} {'FLOP/B':>8} {'measured ms':>12} {'predicted ms':>12} {'error':>7}")
        for p in r["kernels"]:
            print(f"{p['name']:22} {p['intensity']:8.3f} {1e3 * p['time_s']:12.2f} "
                  f"{1e3 * p['predicted_time_s']:12.2f} {100 * p['error']:+6.0f}%")
        if all(1 / 2 < 1 + p["error"] < 2 for p in r["kernels"]):
            break
    else:
        pytest.fail("a held-out kernel missed its prediction by more than 2x in 3 attempts")
    assert len(r["kernels"]) == 7 and len({round(p["intensity"], 3) for p in r["kernels"]}) == 7
    assert r["ridge"] == pytest.approx(r["peak_flop_per_s"] / r["bytes_per_s"])
    assert [p["shape"] for p in r["points"]] == list(benchmark.HELD_OUT_MATMUL)


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
    with pytest.raises(ValueError, match="streaming kernel"):
        benchmark.stream_point("memset")
    with pytest.raises(ValueError, match="n_threads"):
        benchmark.measured_roofline(rng=rng, n_threads=0)


def test_thread_limit_is_applied_and_lifted(rng):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with benchmark._blas_threads(1):
        assert all(i["num_threads"] == 1 for i in threadpoolctl.threadpool_info()
                   if i["user_api"] == "blas")
    with pytest.raises(ValueError, match="n_threads"):
        benchmark._blas_threads(0)
    assert benchmark.n_cpus() >= 1 and benchmark.last_level_cache_bytes() > 0
