"""The measured roofline: its byte bookkeeping against closed forms, the structure of its
predictions, and the record `make bench` wrote. No assertion here reads the clock: how well
the roofline predicts the held-out kernels on a given machine is `make bench`'s report
(data/bench/roofline.toml, quoted by chapter 4), not a pass/fail of `make test`."""

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


def test_stream_kernels_count_stream_bytes_and_write_allocate():
    # McCalpin's STREAM counts 16 B per element for copy and scale and 24 B for add and
    # triad (float64, each array once). A write-back cache also reads each line of an array
    # that is written without being read (scale and add write a): +8 B. The triad writes b,
    # which it has just read, and memcpy's non-temporal stores allocate nothing.
    n = 1000
    expect = {  # FLOP, STREAM bytes, fill bytes (reads + allocate), DRAM bytes
        "copy": (0, 16, 8, 16), "scale": (1, 16, 16, 24), "add": (1, 24, 24, 32),
        "triad": (2, 24, 16, 24), "dot": (2, 16, 16, 16)}
    assert set(expect) == set(benchmark.STREAM_KERNELS)
    for name, (flop, stream, fill, dram) in expect.items():
        p = benchmark.stream_point(name, n_bytes=8 * n, n_repeats=1)
        got = (p["flop"], p["stream_bytes"], p["fill_bytes"], p["bytes"])
        assert got == (flop * n, stream * n, fill * n, dram * n), name
        assert p["intensity"] == flop / dram


def test_scale_and_add_move_one_and_a_half_and_four_thirds_of_streams_count():
    k = benchmark.STREAM_KERNELS
    assert k["scale"].dram_bytes / k["scale"].stream_bytes == 1.5
    assert k["add"].dram_bytes / k["add"].stream_bytes == pytest.approx(4 / 3)


def test_stream_kernels_compute_what_they_say():
    # The triad is BLAS daxpy in place: b = b + 3 c, on b = 2, c = 3 -> 11.
    s = benchmark._Streams(1000, 2)
    with s.pool:
        s.runner("triad")()
        assert np.all(s.arrays[1] == 2.0 + 3.0 * 3.0)
        assert sum(s.runner("dot")()) == pytest.approx(11.0 * 3.0 * 1000)
        s.runner("add")()
        assert np.all(s.arrays[0] == 11.0 + 3.0)


def test_prediction_is_the_largest_of_the_three_times():
    kw = {"peak_flop_per_s": 1e11, "bytes_per_s": 1e10}
    assert benchmark.predicted_time_s(flop=1e11, bytes_moved=1.0, **kw) == 1.0
    assert benchmark.predicted_time_s(flop=1.0, bytes_moved=1e10, **kw) == 1.0
    assert benchmark.predicted_time_s(flop=1.0, bytes_moved=1.0, fill_bytes=2e9,
                                      fill_bytes_per_s=1e9, **kw) == 2.0


@pytest.fixture(scope="module")
def small_roofline():
    # Small arrays and matrices: this checks the bookkeeping, not the machine (a second).
    return benchmark.measured_roofline(rng=np.random.default_rng(0), n_threads=1,
                                       gemm_size=256, stream_bytes=2**20,
                                       shapes=((1, 512, 512), (256, 256, 256)), n_rounds=1)


def test_roofline_ceilings_come_from_the_triad_and_the_gemm(small_roofline):
    r = small_roofline
    triad = benchmark.STREAM_KERNELS["triad"]
    # W and R are one triad's time seen through two byte counts: 24 B and 16 B per element.
    assert r["fill_bytes_per_s"] / r["bytes_per_s"] == pytest.approx(
        triad.fill_bytes / triad.dram_bytes)
    assert r["stream_bytes_per_s"] == pytest.approx(r["bytes_per_s"])  # no write-allocate
    assert r["ridge"] == pytest.approx(r["peak_flop_per_s"] / r["bytes_per_s"])
    assert r["stream_array_bytes"] == 2**20 and r["n_threads"] == 1


def test_every_prediction_is_its_binding_term(small_roofline):
    r = small_roofline
    names = [*benchmark.HELD_OUT_STREAM, "GEMV", "GEMM 256x256x256"]
    assert [p["name"] for p in r["kernels"]] == names
    for p in r["kernels"]:
        terms = {"compute": p["flop"] / r["peak_flop_per_s"],
                 "bytes": p["bytes"] / r["bytes_per_s"],
                 "fills": p["fill_bytes"] / r["fill_bytes_per_s"]}
        assert p["predicted_time_s"] == pytest.approx(max(terms.values()), rel=1e-12), p["name"]
        assert terms[p["bound"]] == max(terms.values()), p["name"]
        assert p["predicted_flop_per_s"] == pytest.approx(p["flop"] / p["predicted_time_s"])
    assert [p["shape"] for p in r["points"]] == [(1, 512, 512), (256, 256, 256)]


def test_read_only_and_write_allocating_streams_are_fill_bound_and_copy_is_not(small_roofline):
    # With R = 2/3 W (the triad's 16 fill bytes of 24), a kernel is fill-bound when more than
    # 2/3 of its bytes are fills: dot (all reads), add (24 of 32), the GEMV (the matrix);
    # copy (8 of 16: its stores are non-temporal) is held by its bytes.
    bound = {p["name"]: p["bound"] for p in small_roofline["kernels"]}
    assert bound["dot"] == bound["add"] == bound["GEMV"] == "fills"
    assert bound["copy"] == "bytes"


@pytest.mark.parametrize(("peak", "w"), [(1e11, 2e10), (5e12, 1e11), (1e10, 1e10)])
def test_memory_bound_kernels_are_predicted_slower_than_the_gemms(peak, w):
    # Structural, at any ceilings with the GEMMs right of the ridge (about 150 FLOP/B >= P/W):
    # every streaming kernel and the GEMV is predicted at fewer FLOP/s than either GEMM.
    rate = {}
    for name, k in benchmark.STREAM_KERNELS.items():
        if k.flop:
            t = benchmark.predicted_time_s(flop=k.flop, bytes_moved=k.dram_bytes,
                                           peak_flop_per_s=peak, bytes_per_s=w,
                                           fill_bytes=k.fill_bytes, fill_bytes_per_s=w * 2 / 3)
            rate[name] = k.flop / t
    for m, n, kk in benchmark.HELD_OUT_MATMUL:
        flop, q = 2.0 * m * n * kk, 4.0 * (m * kk + kk * n + m * n)
        assert m == 1 or flop / q >= peak / w  # the GEMMs are right of the ridge here
        rate[(m, n, kk)] = flop / benchmark.predicted_time_s(
            flop=flop, bytes_moved=q, peak_flop_per_s=peak, bytes_per_s=w)
    gemms = [rate[s] for s in benchmark.HELD_OUT_MATMUL if s[0] > 1]
    others = [v for key, v in rate.items() if key not in benchmark.HELD_OUT_MATMUL[1:]]
    assert len(others) == 5 and max(others) < min(gemms) == pytest.approx(peak)


def test_the_recorded_run_names_its_machine_and_holds_every_held_out_kernel():
    rec = benchmark.load_record()
    assert rec.machine["cpu"] and rec.machine["n_cpus"] >= 1 and rec.versions["blas"]
    assert rec.machine["cpu"] in rec.machine_name and "L3" in rec.machine_name
    names = [*benchmark.HELD_OUT_STREAM, "GEMV", "GEMM 1024x1024x1024", "GEMM 4096x512x1024"]
    assert 1 in {r["n_threads"] for r in rec.runs}
    for run in rec.runs:
        assert [k["name"] for k in run["kernels"]] == names
        for k in run["kernels"]:
            assert k["bound"] in ("compute", "bytes", "fills")
            assert k["predicted_time_s"] > 0 and k["time_s"] > 0 and k["error"] > -1
        s = benchmark.error_summary(run["kernels"])
        assert s["n_kernels"] == len(names) and s["worst"] in names
    assert rec.in_cache["array_bytes"] == benchmark.IN_CACHE_ARRAY_BYTES
    assert rec.dot_cache_speedup() > 0
    with pytest.raises(KeyError, match="n_threads=999"):
        rec.run(999)


def test_the_dot_cache_speedup_is_the_in_cache_rate_over_the_dram_rate():
    # 1 GiB arrays (2^27 elements) dotted in 0.25 s: 16 B x 2^27 / 0.25 s = 8.59 GB/s; at
    # 85.9 GB/s in cache that is a factor 10.
    run = {"n_threads": 1, "stream_array_bytes": 2.0**30,
           "kernels": [{"name": "dot", "time_s": 0.25}]}
    in_cache = {"array_bytes": 1.0, "dot_bytes_per_s": 16 * 2**27 * 40.0}
    rec = benchmark.RooflineRecord(date="d", n_rounds=1, machine={}, versions={},
                                   in_cache=in_cache, runs=(run,))
    assert rec.dot_cache_speedup() == pytest.approx(10.0)


def test_a_record_with_a_missing_or_unknown_field_is_rejected(tmp_path):
    text = benchmark.record_file().read_text(encoding="utf-8")
    (tmp_path / "a.toml").write_text(text.replace("\nbound = ", "\nboundary = ", 1))
    with pytest.raises(KeyError, match=r"kernels\[0\]: missing \['bound'\], unknown"):
        benchmark.load_record(tmp_path / "a.toml")


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
    with pytest.raises(ValueError, match="kernels is empty"):
        benchmark.error_summary([])


def test_thread_limit_is_applied_and_lifted(rng):
    import threadpoolctl  # in requirements.txt: the roofline needs it

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    before = blas_threads()
    with benchmark._blas_threads(1):
        assert blas_threads() and all(n == 1 for n in blas_threads())
    assert blas_threads() == before  # lifted on exit
    with pytest.raises(ValueError, match="n_threads"):
        benchmark._blas_threads(0)
    assert benchmark.n_cpus() >= 1 and benchmark.last_level_cache_bytes() > 0
