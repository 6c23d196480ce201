"""Measure this machine's roofline and check that it predicts kernels it was not fitted to.

The roofline of a datasheet is a promise; an empirical roofline (the approach of
Williams et al. 2009's "Roofline" paper, CACM 52(4)) measures the two ceilings with two
kernels that each hit one of them:

  * a large square FP32 matrix multiplication for P (2 n^3 FLOP on 3 n^2 elements),
  * a STREAM-style triad for W (McCalpin 1995, "Memory bandwidth and machine balance",
    IEEE TCCA newsletter): b = b + s c through the BLAS's daxpy, in one pass, on arrays of
    4 x the last-level cache each, so that what is measured is DRAM and not cache,

both at one thread or at every thread the process may use. It then predicts the time of
other kernels, held out from the ceilings, as max(F / P, Q / W) and compares with their
measured time: a copy, a scale, an add, a dot product, a GEMV and two GEMMs, whose
intensities run from 0 to about 170 FLOP/byte. A prediction that only reproduced the
kernels it was fitted to would prove nothing.

Bytes follow STREAM's convention: each array read or written counts once (a copy moves 16
bytes per float64 element, a triad 24). Streaming kernels run in numpy or the BLAS with
one BLAS thread per Python thread; with several threads each takes one slice of the arrays
(numpy and the BLAS release the GIL). Matrix kernels run in the BLAS, its thread count
limited with threadpoolctl. Ceilings and kernels are timed in interleaved rounds so that
they share whatever else the machine is doing.

numpy runs on the CPU. When PyTorch is importable and sees a CUDA GPU (e.g. in Colab),
``torch_measurements`` does the same on the GPU; nothing here needs one. Timings depend on
the machine and its load: every function returns numbers, and the chapter prints them in
cells whose output is not compared. Each measurement takes the best of a few repeats, the
usual estimator of what the hardware can do.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from . import units


def best_time_s(fn: Callable[[], object], *, n_repeats: int = 5) -> float:
    """Shortest wall-clock seconds of ``n_repeats`` calls of ``fn`` (after one warm-up call).

    >>> best_time_s(lambda: None, n_repeats=3) < 1e-3
    True
    """
    units.check_positive("n_repeats", n_repeats)
    fn()
    times = []
    for _ in range(int(n_repeats)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return max(min(times), 1e-9)


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
    *, flop: float, bytes_moved: float, peak_flop_per_s: float, bytes_per_s: float
) -> float:
    """Roofline prediction of a kernel's time in seconds: max(F / P, Q / W).

    >>> predicted_time_s(flop=2e9, bytes_moved=1e9, peak_flop_per_s=1e11, bytes_per_s=1e10)
    0.1
    """
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    units.check_positive("bytes_per_s", bytes_per_s)
    return max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)


def n_cpus() -> int:
    """CPUs this process may run on (its affinity mask), the "all threads" count.

    >>> n_cpus() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def last_level_cache_bytes(default: float = 32 * units.MiB) -> float:
    """Size in bytes of the largest CPU cache Linux reports (``default`` where it cannot tell).

    >>> last_level_cache_bytes() > 0
    True
    """
    best = 0.0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            if entry.startswith("index"):
                with open(os.path.join(base, entry, "size")) as f:
                    size = f.read().strip()
                scale = {"K": units.KiB, "M": units.MiB, "G": units.GiB}.get(size[-1:], 1.0)
                best = max(best, float(size.rstrip("KMG")) * scale)
    except (OSError, ValueError):
        pass
    return best or float(default)


# name: (FLOP per element, bytes per element (float64), each array read or written counted
# once: the roofline's and STREAM's convention). numpy has no fused triad (b + s * c is two
# passes through DRAM with a temporary), so the triad is the BLAS's in-place one, daxpy:
# b = b + s c in a single pass, b and c read and b written, 24 bytes per element as in STREAM.
STREAM_KERNELS: dict[str, tuple[float, float]] = {
    "triad": (2.0, 24.0),  # b = b + s c (BLAS daxpy)
    "copy": (0.0, 16.0),  # a = b (memcpy)
    "scale": (1.0, 16.0),  # a = s b
    "add": (1.0, 24.0),  # a = b + c
    "dot": (2.0, 16.0),  # b . c (BLAS ddot)
}


def _stream_slice(name: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Run streaming kernel ``name`` on one slice of a, b, c; a float for the reductions."""
    s = 3.0
    if name == "triad":
        from scipy.linalg.blas import daxpy

        daxpy(c, b, a=s)  # b is updated in place (same dtype and contiguous)
    elif name == "copy":
        np.copyto(a, b)
    elif name == "scale":
        np.multiply(b, s, out=a)
    elif name == "add":
        np.add(b, c, out=a)
    elif name == "dot":
        return float(np.dot(b, c))
    return 0.0


class _Streams:
    """Three float64 arrays of ``n`` elements, split into one slice per thread, and a pool."""

    def __init__(self, n: int, n_threads: int):
        self.arrays = [np.full(n, 1.0 + i) for i in range(3)]  # touched: pages are mapped
        self.bounds = np.linspace(0, n, n_threads + 1).astype(int)
        self.n, self.n_threads = n, n_threads
        self.pool = ThreadPoolExecutor(max_workers=n_threads)

    def runner(self, name: str) -> Callable[[], object]:
        """A call that runs ``name`` once over all three arrays, one slice per thread, with
        the BLAS held to one thread inside each (the pool supplies the parallelism)."""

        def slice_k(k: int) -> float:
            lo, hi = self.bounds[k], self.bounds[k + 1]
            return _stream_slice(name, *(x[lo:hi] for x in self.arrays))

        def run() -> object:
            with _blas_threads(1):
                if self.n_threads == 1:
                    return slice_k(0)
                return list(self.pool.map(slice_k, range(self.n_threads)))

        return run

    def point(self, name: str, time_s: float) -> dict[str, Any]:
        flop_per, bytes_per = STREAM_KERNELS[name]
        flop, q = flop_per * self.n, bytes_per * self.n
        return {
            "name": name,
            "flop": flop,
            "bytes": q,
            "intensity": flop / q,
            "time_s": time_s,
            "flop_per_s": flop / time_s,
            "bytes_per_s": q / time_s,
        }


def _check_stream(name: str) -> None:
    if name not in STREAM_KERNELS:
        raise ValueError(
            f"name={name!r} is not a streaming kernel; allowed: {', '.join(STREAM_KERNELS)}"
        )


def _default_stream_bytes(n_bytes: float | None) -> float:
    return (
        4.0 * last_level_cache_bytes()
        if n_bytes is None
        else units.check_positive("n_bytes", n_bytes)
    )


def stream_point(
    name: str, *, n_bytes: float | None = None, n_threads: int = 1, n_repeats: int = 5
) -> dict[str, Any]:
    """Time streaming kernel ``name`` (see STREAM_KERNELS) on float64 arrays of ``n_bytes`` each.

    ``n_bytes`` defaults to 4 x the last-level cache per array (STREAM's rule), so the data
    comes from DRAM. The arrays are split into ``n_threads`` slices, one per thread. Returns
    FLOP, bytes (each array read or written once), seconds, FLOP/s and bytes/s.

    >>> p = stream_point("scale", n_bytes=8e5, n_repeats=2)
    >>> p["flop"], p["bytes"], p["intensity"]
    (100000.0, 1600000.0, 0.0625)
    """
    _check_stream(name)
    n_threads = int(units.check_positive("n_threads", n_threads))
    streams = _Streams(int(_default_stream_bytes(n_bytes) // 8), n_threads)
    with streams.pool:
        return streams.point(name, best_time_s(streams.runner(name), n_repeats=n_repeats))


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

    P is the FP32 FLOP/s of a square GEMM of ``gemm_size``; W the DRAM bytes/s of a triad on
    arrays of ``stream_bytes`` (default 4 x the last-level cache). Neither ceiling sees a
    held-out kernel. Every kernel runs once per round, in turn, for ``n_rounds`` rounds after
    a warm-up round, and keeps its best time: interleaving makes the ceilings and the
    kernels see the same background load, which on a shared machine moves from second to
    second. ``n_threads`` is the thread count of every kernel (None: all, ``n_cpus()``).

    Each held-out kernel gets ``predicted_time_s`` = max(F / P, Q / W) from the best rates,
    and ``error``: the median over rounds of (prediction from that round's own P and W) over
    (that round's measured time), minus 1, which cancels the load common to one round.
    Returns ``peak_flop_per_s``, ``bytes_per_s``, ``stream_bytes_per_s`` (the triad in
    STREAM's 24-byte convention), ``ridge``, ``kernels`` (every held-out kernel) and
    ``points`` (the matmuls, with their ``shape``, for ``plots.plot_measured_roofline``).
    Ten to twenty seconds at the defaults.
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
    t_triad = np.array(times[("ceiling", "triad")])
    t_gemm = np.array(times[("ceiling", (gemm_size,) * 3)])
    triad = streams.point("triad", best[("ceiling", "triad")])
    gemm_key = ("ceiling", (gemm_size,) * 3)
    gemm = _matmul_result(*mats[gemm_key][:2], best[gemm_key])
    roof = {
        "n_threads": n_threads,
        "peak_flop_per_s": gemm["flop_per_s"],
        "bytes_per_s": triad["bytes_per_s"],
        "stream_bytes_per_s": triad["bytes_per_s"],
        "ridge": gemm["flop_per_s"] / triad["bytes_per_s"],
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
        p["predicted_time_s"] = predicted_time_s(
            flop=p["flop"],
            bytes_moved=p["bytes"],
            peak_flop_per_s=roof["peak_flop_per_s"],
            bytes_per_s=roof["bytes_per_s"],
        )
        p["predicted_flop_per_s"] = p["flop"] / p["predicted_time_s"]
        # The same prediction with each round's own ceilings, over that round's time: the
        # load common to one round cancels. Its median is the reported error.
        per_round = np.maximum(
            p["flop"] * t_gemm / gemm["flop"], p["bytes"] * t_triad / triad["bytes"]
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
    """FLOP, bytes (each operand once), seconds and FLOP/s of A B timed at ``t`` seconds."""
    m = a.shape[0] if a.ndim == 2 else 1
    k, n = b.shape
    flop = 2.0 * m * n * k
    q = float(a.itemsize) * (m * k + k * n + m * n)
    return {"flop": flop, "bytes": q, "intensity": flop / q, "time_s": t, "flop_per_s": flop / t}


def _blas_threads(n_threads: int | None) -> contextlib.AbstractContextManager:
    """A context limiting BLAS to ``n_threads`` threads (no limit for None)."""
    if n_threads is None:
        return contextlib.nullcontext()
    units.check_positive("n_threads", n_threads)
    import threadpoolctl

    return threadpoolctl.threadpool_limits(limits=int(n_threads), user_api="blas")


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
