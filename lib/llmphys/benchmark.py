"""Measure this machine's roofline: achievable matmul FLOP/s and memory bandwidth.

The roofline of a datasheet is a promise; an empirical roofline (the approach of
Williams et al. 2009's "Roofline" paper, CACM 52(4)) measures the two ceilings
with two kernels that each hit one of them:

  * a large square matrix multiplication (2 n^3 FLOP on 3 n^2 elements: compute-bound),
  * a large array copy (no arithmetic, 2 x its size in bytes read and written).

Each ceiling is the best rate observed (by those kernels or by the others measured), so
every point lies on or under the roof. It then predicts the time of other kernels as
max(F / P, Q / W) and compares with their measured time: a GEMM at several sizes and a
matrix-vector product (GEMV), whose intensity, about 0.5 FLOP/byte in FP32, is far left
of any ridge.

numpy runs on the CPU through its BLAS. When PyTorch is importable and sees a CUDA GPU
(e.g. in Colab), ``torch_measurements`` does the same on the GPU; nothing here needs one.
Timings depend on the machine and its load: every function returns numbers, and the
chapter prints them in cells whose output is not compared. Each measurement takes the
best of a few repeats, the usual estimator of what the hardware can do.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from collections.abc import Callable, Sequence
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


def matmul_point(m: int, n: int, k: int, *, rng: np.random.Generator,
                 dtype: Literal["float32", "float64"] = "float32",
                 n_repeats: int = 5) -> dict[str, float]:
    """Time C[m,n] = A[m,k] B[k,n] in numpy: FLOP, bytes (each operand once), seconds, FLOP/s.

    ``m = 1`` multiplies a vector (numpy then calls BLAS GEMV rather than GEMM).

    >>> p = matmul_point(64, 64, 64, rng=np.random.default_rng(0), n_repeats=2)
    >>> p["flop"], p["bytes"], p["intensity"]
    (524288.0, 49152.0, 10.666666666666666)
    """
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype={dtype!r} is not supported; allowed: float32, float64")
    a = rng.standard_normal((m, k) if m > 1 else (k,), dtype=dtype)
    b = rng.standard_normal((k, n), dtype=dtype)
    out = np.empty((m, n) if m > 1 else (n,), dtype=dtype)
    t = best_time_s(lambda: np.matmul(a, b, out=out), n_repeats=n_repeats)
    flop = 2.0 * m * n * k
    q = float(a.itemsize) * (m * k + k * n + m * n)
    return {"flop": flop, "bytes": q, "intensity": flop / q, "time_s": t, "flop_per_s": flop / t}


def copy_bytes_per_s(n_bytes: float = 64e6, *, n_repeats: int = 5) -> float:
    """Achieved memory bandwidth in bytes/s of copying an ``n_bytes`` array (read + write).

    Choose ``n_bytes`` well above the last-level cache, or this measures the cache.

    >>> copy_bytes_per_s(1e6, n_repeats=2) > 0
    True
    """
    n = int(units.check_positive("n_bytes", n_bytes) // 8)
    src = np.ones(n)
    dst = np.empty_like(src)
    t = best_time_s(lambda: np.copyto(dst, src), n_repeats=n_repeats)
    return 2.0 * src.nbytes / t


def predicted_time_s(*, flop: float, bytes_moved: float, peak_flop_per_s: float,
                     bytes_per_s: float) -> float:
    """Roofline prediction of a kernel's time in seconds: max(F / P, Q / W).

    >>> predicted_time_s(flop=2e9, bytes_moved=1e9, peak_flop_per_s=1e11, bytes_per_s=1e10)
    0.1
    """
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    units.check_positive("bytes_per_s", bytes_per_s)
    return max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)


def measured_roofline(*, rng: np.random.Generator, peak_size: int = 1024,
                      shapes: Sequence[tuple[int, int, int]] = ((1, 4096, 4096),
                                                                (64, 1024, 1024),
                                                                (512, 1024, 1024)),
                      copy_bytes: float = 64e6, n_repeats: int = 5,
                      n_threads: int | None = None) -> dict:
    """Empirical roofline: P and W as the best rates observed, then each of ``shapes`` against it.

    P is the highest FLOP/s of a square FP32 GEMM of ``peak_size`` and of every shape; W the
    highest bytes/s of an array copy and of every shape (a read-only GEMV can stream faster
    than a copy, which also writes). So every measured point lies on or under the roof, as in
    an empirical roofline toolkit; how far under is the kernel's efficiency. Returns
    ``peak_flop_per_s``, ``bytes_per_s``, ``ridge`` and one dict per shape. A few seconds.
    ``n_threads`` caps the BLAS threads (needs ``threadpoolctl``): one thread measures one
    core's roofline, which other processes on a shared machine disturb far less.
    """
    with _blas_threads(n_threads):
        square = matmul_point(peak_size, peak_size, peak_size, rng=rng, n_repeats=n_repeats)
        copy = copy_bytes_per_s(copy_bytes, n_repeats=n_repeats)
        points: list[dict[str, Any]]  # matmul_point's floats and the shape tuple
        points = [{**matmul_point(m, n, k, rng=rng, n_repeats=n_repeats), "shape": (m, n, k)}
                  for m, n, k in shapes]
    peak = max([square["flop_per_s"]] + [p["flop_per_s"] for p in points])
    bw = max([copy] + [p["bytes"] / p["time_s"] for p in points])
    for p in points:
        p["predicted_flop_per_s"] = p["flop"] / predicted_time_s(
            flop=p["flop"], bytes_moved=p["bytes"], peak_flop_per_s=peak, bytes_per_s=bw)
    return {"peak_flop_per_s": peak, "bytes_per_s": bw, "ridge": peak / bw, "points": points,
            "square_gemm_flop_per_s": square["flop_per_s"], "copy_bytes_per_s": copy}


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


def torch_measurements(*, size: int = 8192, copy_bytes: float = 1e9,
                       n_repeats: int = 10) -> dict[str, float | str]:
    """GPU BF16 GEMM FLOP/s and copy bandwidth in bytes/s through PyTorch (needs CUDA).

    Synchronises before reading the clock, since CUDA kernels run asynchronously.
    """
    if not torch_gpu_available():
        raise RuntimeError("torch_measurements needs PyTorch and a CUDA GPU; "
                           "check torch_gpu_available() first")
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
    return {"device": torch.cuda.get_device_name(0), "torch_version": torch.__version__,
            "gemm_flop_per_s": 2.0 * size**3 / t_mm,
            "copy_bytes_per_s": 2.0 * src.numel() * src.element_size() / t_cp}
