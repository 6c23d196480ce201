"""Measure this machine's roofline and check that it predicts kernels it was not fitted to.

The roofline of a datasheet is a promise; an empirical roofline (the approach of
Williams et al. 2009's "Roofline" paper, CACM 52(4)) measures the ceilings with kernels
that each hit one of them:

  * a large square FP32 matrix multiplication for P (2 n^3 FLOP on 3 n^2 elements),
  * a STREAM-style triad for the memory ceilings (McCalpin 1995, "Memory bandwidth and
    machine balance", IEEE TCCA newsletter): b = b + s c through the BLAS's daxpy, in one
    pass, on arrays of 4 x the last-level cache each (capped at STREAM_MAX_ARRAY_BYTES), so
    that what is measured is DRAM and not cache,

at one thread or at every thread the process may use, each thread count its own ceilings.
It then predicts the time of other kernels, held out from the ceilings, and compares with
their measured time: a copy, a scale, an add, a dot product, a GEMV and two GEMMs, whose
intensities run from 0 to about 170 FLOP/byte. A prediction that only reproduced the
kernels it was fitted to would prove nothing.

Bytes are counted as the memory system moves them (STREAM_KERNELS): what the kernel reads,
what it writes, and the write-allocate reads of a cache that must own a line before it
stores into it (a kernel that writes a third array, scale and add, reads each of its lines
first; the triad writes the array it has just read, and a large memcpy uses non-temporal
stores, so neither pays). From the triad come two ceilings: W, all those bytes per second,
and R, the line fills per second (reads and write-allocate reads). R is the one-core limit:
a core keeps only so many cache-line fills in flight, and by Little's law its fill rate is
that number of 64-byte lines over the memory latency, whatever the DRAM could deliver,
while written-back lines leave without holding a fill slot. The prediction is
max(F / P, fills / R, bytes / W): a read-only stream (dot, GEMV) is held by R and goes no
faster per element than the triad although it moves two thirds of its bytes.

Streaming kernels run in numpy or the BLAS with one BLAS thread per Python thread; with
several threads each takes one slice of the arrays (numpy and the BLAS release the GIL).
Matrix kernels run in the BLAS, its thread count limited with threadpoolctl. Ceilings and
kernels are timed in interleaved rounds so that they share whatever else the machine is
doing.

numpy runs on the CPU. When PyTorch is importable and sees a CUDA GPU (e.g. in Colab),
``torch_measurements`` does the same on the GPU; nothing here needs one. Timings depend on
the machine and its load: every function returns numbers, the chapter prints them in cells
whose output is not compared, and `make bench` (tools/bench.py) records one run with its
machine in data/bench/roofline.toml (``load_record``). Each measurement takes the best of a
few repeats, the usual estimator of what the hardware can do. The streaming kernels and the
timing helpers are :mod:`llmphys.bench_streams`, the record :mod:`llmphys.bench_record`; both
are re-exported here.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from . import units
from .bench_record import RooflineRecord as RooflineRecord
from .bench_record import load_record as load_record
from .bench_record import record_file as record_file
from .bench_streams import STREAM_KERNELS as STREAM_KERNELS
from .bench_streams import STREAM_MAX_ARRAY_BYTES as STREAM_MAX_ARRAY_BYTES
from .bench_streams import WRITE_ALLOCATE_BYTES as WRITE_ALLOCATE_BYTES
from .bench_streams import StreamKernel as StreamKernel
from .bench_streams import _blas_threads as _blas_threads
from .bench_streams import _check_stream, _default_stream_bytes
from .bench_streams import _Streams as _Streams
from .bench_streams import best_time_s as best_time_s
from .bench_streams import last_level_cache_bytes as last_level_cache_bytes
from .bench_streams import stream_point as stream_point


def matmul_point(
    m: int,
    n: int,
    k: int,
    *,
    rng: np.random.Generator,
    dtype: Literal["float32", "float64"] = "float32",
    n_repeats: int = 5,
) -> dict[str, float]:
    """Time C[m,n] = A[m,k] B[k,n] in numpy: FLOP, bytes (each operand once), seconds, FLOP/s.

    ``m = 1`` multiplies a vector (numpy then calls BLAS GEMV rather than GEMM).

    >>> p = matmul_point(64, 64, 64, rng=np.random.default_rng(0), n_repeats=2)
    >>> p["flop"], p["bytes"], p["intensity"]
    (524288.0, 49152.0, 10.666666666666666)
    """
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype={dtype!r} is not supported; allowed: float32, float64")
    a, b, out = _matmul_operands(m, n, k, rng, dtype)
    return _matmul_result(a, b, best_time_s(lambda: np.matmul(a, b, out=out), n_repeats=n_repeats))


def predicted_time_s(
    *,
    flop: float,
    bytes_moved: float,
    peak_flop_per_s: float,
    bytes_per_s: float,
    fill_bytes: float = 0.0,
    fill_bytes_per_s: float | None = None,
) -> float:
    """Roofline prediction of a kernel's time in seconds: max(F / P, Q / W, fills / R).

    ``fill_bytes`` / ``fill_bytes_per_s`` is the line-fill term (reads and write-allocate
    reads at the rate R one core sustains, see the module docstring); without R it is left out.

    >>> predicted_time_s(flop=2e9, bytes_moved=1e9, peak_flop_per_s=1e11, bytes_per_s=1e10)
    0.1
    >>> predicted_time_s(flop=0.0, bytes_moved=1.5e9, peak_flop_per_s=1e11, bytes_per_s=1.5e10,
    ...                  fill_bytes=1.5e9, fill_bytes_per_s=1e10)
    0.15
    """
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    units.check_positive("bytes_per_s", bytes_per_s)
    fills = 0.0
    if fill_bytes_per_s is not None:
        fills = fill_bytes / units.check_positive("fill_bytes_per_s", fill_bytes_per_s)
    return max(flop / peak_flop_per_s, bytes_moved / bytes_per_s, fills)


def n_cpus() -> int:
    """CPUs this process may run on (its affinity mask), the "all threads" count.

    >>> n_cpus() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


IN_CACHE_ARRAY_BYTES = 128 * units.KiB
"""Each array of the in-cache dot control: two of them fit in a core's L2 (1 MiB or more on
recent x86 server cores), so no line comes from DRAM once they are warm."""


HELD_OUT_STREAM = ("copy", "scale", "add", "dot")
HELD_OUT_MATMUL = ((1, 8192, 8192), (1024, 1024, 1024), (4096, 1024, 512))


def measured_roofline(
    *,
    rng: np.random.Generator,
    n_threads: int | None = 1,
    gemm_size: int = 2048,
    stream_bytes: float | None = None,
    stream: Sequence[str] = HELD_OUT_STREAM,
    shapes: Sequence[tuple[int, int, int]] = HELD_OUT_MATMUL,
    n_rounds: int = 7,
) -> dict:
    """Empirical roofline from a GEMM and a triad, then predicted against measured for held-out
    kernels: ``stream`` kernels (see STREAM_KERNELS) and FP32 matmuls of ``shapes`` (m, n, k).

    P is the FP32 FLOP/s of a square GEMM of ``gemm_size``. From one triad on arrays of
    ``stream_bytes`` (default 4 x the last-level cache, capped) come W, its DRAM bytes/s, and
    R, its line-fill bytes/s (reads and write-allocate reads), the limit of the fills a core
    keeps in flight. No ceiling sees a held-out kernel. Every kernel runs once per round, in
    turn, for ``n_rounds`` rounds after a warm-up round, and keeps its best time:
    interleaving makes the ceilings and the kernels see the same background load, which on a
    shared machine moves from second to second. ``n_threads`` is the thread count of every
    kernel and so of the ceilings (None: all, ``n_cpus()``): one core's fills cap a thread,
    the DRAM's bytes cap many, and each thread count has its own measured P, W and R.

    Each held-out kernel gets ``predicted_time_s`` = max(F / P, Q / W, fills / R) from the
    best rates, ``bound`` (the term that sets it: "compute", "bytes" or "fills"), and
    ``error``: the median over rounds of (prediction from that round's own ceilings) over
    (that round's measured time), minus 1, which cancels the load common to one round.
    Returns ``peak_flop_per_s``, ``bytes_per_s`` (W), ``fill_bytes_per_s`` (R),
    ``stream_bytes_per_s`` (the triad in STREAM's 24-byte convention), ``ridge``,
    ``stream_array_bytes``, ``kernels`` (every held-out kernel) and ``points`` (the matmuls,
    with their ``shape``, for ``plots.plot_measured_roofline``). Ten to thirty seconds.
    """
    n_threads = n_cpus() if n_threads is None else int(units.check_positive("n_threads", n_threads))
    units.check_positive("n_rounds", n_rounds)
    for name in stream:
        _check_stream(name)
    streams = _Streams(int(_default_stream_bytes(stream_bytes) // 8), n_threads)
    mats: dict[tuple[str, tuple[int, ...]], tuple[np.ndarray, np.ndarray, np.ndarray]] = {
        ("ceiling", (gemm_size,) * 3): _matmul_operands(gemm_size, gemm_size, gemm_size, rng)
    }
    for shape in shapes:
        mats[("held out", tuple(shape))] = _matmul_operands(*shape, rng)
    runs: dict[tuple, Callable[[], object]] = {("ceiling", "triad"): streams.runner("triad")}
    runs.update({("held out", name): streams.runner(name) for name in stream})
    runs.update(
        {key: functools.partial(np.matmul, a, b, out=out) for key, (a, b, out) in mats.items()}
    )
    times: dict[tuple, list[float]] = {key: [] for key in runs}
    with streams.pool, _blas_threads(n_threads):
        for r in range(int(n_rounds) + 1):
            for key, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                if r:  # round 0 warms caches, pages and pools up
                    times[key].append(max(time.perf_counter() - t0, 1e-9))
    best = {key: min(t) for key, t in times.items()}
    gemm_key = ("ceiling", (gemm_size,) * 3)
    t_triad, t_gemm = np.array(times[("ceiling", "triad")]), np.array(times[gemm_key])
    triad = streams.point("triad", best[("ceiling", "triad")])
    gemm = _matmul_result(*mats[gemm_key][:2], best[gemm_key])
    roof = {
        "n_threads": n_threads,
        "peak_flop_per_s": gemm["flop_per_s"],
        "bytes_per_s": triad["bytes_per_s"],
        "fill_bytes_per_s": triad["fill_bytes"] / triad["time_s"],
        "stream_bytes_per_s": triad["stream_bytes"] / triad["time_s"],
        "ridge": gemm["flop_per_s"] / triad["bytes_per_s"],
        "stream_array_bytes": 8.0 * streams.n,
    }
    kernels: list[dict[str, Any]] = [
        {**streams.point(name, best[("held out", name)]), "key": ("held out", name)}
        for name in stream
    ]
    points: list[dict[str, Any]] = [
        {
            **_matmul_result(*mats[("held out", tuple(s))][:2], best[("held out", tuple(s))]),
            "shape": tuple(s),
            "name": "GEMV" if s[0] == 1 else f"GEMM {s[0]}x{s[2]}x{s[1]}",
            "key": ("held out", tuple(s)),
        }
        for s in shapes
    ]
    for p in kernels + points:
        terms = {
            "compute": p["flop"] / roof["peak_flop_per_s"],
            "bytes": p["bytes"] / roof["bytes_per_s"],
            "fills": p["fill_bytes"] / roof["fill_bytes_per_s"],
        }
        p["predicted_time_s"] = max(terms.values())
        p["bound"] = max(terms, key=terms.__getitem__)
        p["predicted_flop_per_s"] = p["flop"] / p["predicted_time_s"]
        # The same prediction with each round's own ceilings, over that round's time: the
        # load common to one round cancels. Its median is the reported error.
        per_round = np.maximum(
            p["flop"] * t_gemm / gemm["flop"],
            np.maximum(p["bytes"] / triad["bytes"], p["fill_bytes"] / triad["fill_bytes"])
            * t_triad,
        )
        p["error"] = float(np.median(per_round / np.array(times[p.pop("key")]))) - 1.0
    return {**roof, "kernels": kernels + points, "points": points}


def thread_scaling(*, rng: np.random.Generator, n_rounds: int = 5, **kw) -> dict:
    """The roofline at one thread and at all threads, and the factor each ceiling grew by.

    The measurement behind "does bandwidth or compute scale better with cores here?";
    ``kw`` goes to ``measured_roofline``.
    """
    one = measured_roofline(rng=rng, n_threads=1, n_rounds=n_rounds, **kw)
    every = measured_roofline(rng=rng, n_threads=n_cpus(), n_rounds=n_rounds, **kw)
    return {
        "n_threads": every["n_threads"],
        "one": one,
        "all": every,
        "compute_gain": every["peak_flop_per_s"] / one["peak_flop_per_s"],
        "bandwidth_gain": every["bytes_per_s"] / one["bytes_per_s"],
    }


def dot_in_cache_bytes_per_s(
    *, n_bytes: float = IN_CACHE_ARRAY_BYTES, n_calls: int = 200, n_repeats: int = 5
) -> float:
    """Bytes/s of the float64 dot product at one thread on two arrays of ``n_bytes`` each that
    stay in cache: ``n_calls`` calls per timing (one call is microseconds, shorter than the
    clock's and the thread limit's overheads), best of ``n_repeats``.

    >>> dot_in_cache_bytes_per_s(n_bytes=8e3, n_calls=10, n_repeats=2) > 0
    True
    """
    n = int(units.check_positive("n_bytes", n_bytes) // 8)
    units.check_positive("n_calls", n_calls)
    b, c = np.full(n, 2.0), np.full(n, 3.0)

    def calls() -> None:
        for _ in range(int(n_calls)):
            np.dot(b, c)

    with _blas_threads(1):
        t = best_time_s(calls, n_repeats=n_repeats)
    return STREAM_KERNELS["dot"].dram_bytes * n * int(n_calls) / t


def error_summary(kernels: Sequence[dict[str, Any]], *, within: float = 0.2) -> dict[str, Any]:
    """How the held-out kernels fared: ``n_kernels``, ``n_within`` (|error| <= ``within``),
    ``worst`` (the name of the worst-predicted kernel) and ``worst_error`` (its signed error).

    >>> error_summary([{"name": "copy", "error": -0.05}, {"name": "add", "error": -0.3}])
    {'n_kernels': 2, 'n_within': 1, 'worst': 'add', 'worst_error': -0.3}
    """
    units.check_positive("within", within)
    if not kernels:
        raise ValueError("kernels is empty; allowed: the 'kernels' of measured_roofline")
    worst = max(kernels, key=lambda p: abs(p["error"]))
    return {
        "n_kernels": len(kernels),
        "n_within": sum(abs(p["error"]) <= within for p in kernels),
        "worst": worst["name"],
        "worst_error": float(worst["error"]),
    }


def _matmul_operands(
    m: int,
    n: int,
    k: int,
    rng: np.random.Generator,
    dtype: Literal["float32", "float64"] = "float32",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A[m,k] (a vector when m = 1), B[k,n] and the output, standard normal."""
    a = rng.standard_normal((m, k) if m > 1 else (k,), dtype=dtype)
    b = rng.standard_normal((k, n), dtype=dtype)
    return a, b, np.empty((m, n) if m > 1 else (n,), dtype=dtype)


def _matmul_result(a: np.ndarray, b: np.ndarray, t: float) -> dict[str, float]:
    """FLOP, bytes (each operand once), fill bytes (A and B read), seconds and FLOP/s of A B
    timed at ``t`` seconds. C's write-allocate is left out: it is 1/n of a GEMV's bytes, and
    the GEMMs are compute-bound."""
    m = a.shape[0] if a.ndim == 2 else 1
    k, n = b.shape
    flop = 2.0 * m * n * k
    q = float(a.itemsize) * (m * k + k * n + m * n)
    return {
        "flop": flop,
        "bytes": q,
        "fill_bytes": float(a.itemsize) * (m * k + k * n),
        "intensity": flop / q,
        "time_s": t,
        "flop_per_s": flop / t,
    }


def torch_gpu_available() -> bool:
    """True when PyTorch is importable and sees a CUDA device; never imports torch otherwise."""
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def torch_measurements(
    *, size: int = 8192, copy_bytes: float = 1e9, n_repeats: int = 10
) -> dict[str, float | str]:
    """GPU BF16 GEMM FLOP/s and copy bandwidth in bytes/s through PyTorch (needs CUDA).

    Synchronises before reading the clock, since CUDA kernels run asynchronously.
    """
    if not torch_gpu_available():
        raise RuntimeError(
            "torch_measurements needs PyTorch and a CUDA GPU; check torch_gpu_available() first"
        )
    import torch

    dev = torch.device("cuda")
    a = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    src = torch.empty(int(copy_bytes) // 2, device=dev, dtype=torch.bfloat16)
    dst = torch.empty_like(src)

    def synced(fn):
        return lambda: (fn(), torch.cuda.synchronize())

    t_mm = best_time_s(synced(lambda: a @ b), n_repeats=n_repeats)
    t_cp = best_time_s(synced(lambda: dst.copy_(src)), n_repeats=n_repeats)
    return {
        "device": torch.cuda.get_device_name(0),
        "torch_version": torch.__version__,
        "gemm_flop_per_s": 2.0 * size**3 / t_mm,
        "copy_bytes_per_s": 2.0 * src.numel() * src.element_size() / t_cp,
    }
