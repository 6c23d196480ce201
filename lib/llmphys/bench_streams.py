"""The streaming kernels of the empirical roofline (``benchmark``), and how it times things.

Bytes are counted as the memory system moves them (:data:`STREAM_KERNELS`): what the kernel
reads, what it writes, and the write-allocate reads of a cache that must own a line before it
stores into it. :func:`stream_point` times one kernel on float64 arrays of 4 x the last-level
cache (McCalpin 1995's STREAM rule), one slice per thread with the BLAS held to one thread in
each. :func:`best_time_s` (best of a few repeats after a warm-up) and the BLAS thread limit
are what every measurement of ``benchmark`` uses. ``benchmark`` re-exports all of these.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

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


@dataclasses.dataclass(frozen=True, kw_only=True)
class StreamKernel:
    """What one element of a float64 streaming kernel costs: FLOP and bytes, by kind."""

    flop: float
    read_bytes: float  # loaded by the kernel
    write_bytes: float  # stored by the kernel
    allocate_bytes: float  # read for ownership before a store into a line not already cached

    @property
    def fill_bytes(self) -> float:
        """Bytes brought into the cache: reads and write-allocate reads."""
        return self.read_bytes + self.allocate_bytes

    @property
    def dram_bytes(self) -> float:
        """Bytes across the memory bus: every fill and every write-back."""
        return self.fill_bytes + self.write_bytes

    @property
    def stream_bytes(self) -> float:
        """STREAM's count (each array read or written once), which ignores write-allocate."""
        return self.read_bytes + self.write_bytes


WRITE_ALLOCATE_BYTES = 8.0
"""Bytes read per float64 stored into a line the cache does not hold: ordinary memory is of
the write-back type, whose write misses fill the line before the store (Intel 64 and IA-32
Architectures Software Developer's Manual, vol. 3A, "Methods of Caching Available", WB), so
a kernel that writes an array it does not read moves each of its lines twice. Non-temporal
stores do not."""

# numpy has no fused triad (b + s * c is two passes through DRAM with a temporary), so the
# triad is the BLAS's in-place one, daxpy: b = b + s c in a single pass, b and c read and b
# written, 24 bytes per element as in STREAM, no write-allocate (b's lines were just read).
STREAM_KERNELS: dict[str, StreamKernel] = {
    # b = b + s c (BLAS daxpy): the ceiling kernel
    "triad": StreamKernel(flop=2.0, read_bytes=16.0, write_bytes=8.0, allocate_bytes=0.0),
    # a = b (memcpy): glibc's x86 memcpy switches to non-temporal stores, which bypass the
    # cache and allocate nothing, above __x86_shared_non_temporal_threshold, a fraction of the
    # shared cache (sysdeps/x86/dl-cacheinfo.h); the arrays here are larger than the cache
    "copy": StreamKernel(flop=0.0, read_bytes=8.0, write_bytes=8.0, allocate_bytes=0.0),
    # a = s b and a = b + c: a is written, never read, so each of its lines is allocated first
    "scale": StreamKernel(
        flop=1.0, read_bytes=8.0, write_bytes=8.0, allocate_bytes=WRITE_ALLOCATE_BYTES
    ),
    "add": StreamKernel(
        flop=1.0, read_bytes=16.0, write_bytes=8.0, allocate_bytes=WRITE_ALLOCATE_BYTES
    ),
    # b . c (BLAS ddot): reads only
    "dot": StreamKernel(flop=2.0, read_bytes=16.0, write_bytes=0.0, allocate_bytes=0.0),
}

STREAM_MAX_ARRAY_BYTES = 1.0 * units.GiB
"""Cap on each stream array. STREAM asks for 4 x the last-level cache per array; a VM on a
large server can report the whole socket's L3 (hundreds of MiB), which would ask for several
GB of memory. A pass over two or three arrays of 1 GiB still misses in any such cache: an
LRU cache of C bytes keeps none of a sequential pass over more than C bytes."""


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
        k = STREAM_KERNELS[name]
        flop, q = k.flop * self.n, k.dram_bytes * self.n
        return {
            "name": name,
            "flop": flop,
            "bytes": q,
            "fill_bytes": k.fill_bytes * self.n,
            "stream_bytes": k.stream_bytes * self.n,
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
    if n_bytes is None:
        return min(4.0 * last_level_cache_bytes(), STREAM_MAX_ARRAY_BYTES)
    return units.check_positive("n_bytes", n_bytes)


def stream_point(
    name: str, *, n_bytes: float | None = None, n_threads: int = 1, n_repeats: int = 5
) -> dict[str, Any]:
    """Time streaming kernel ``name`` (see STREAM_KERNELS) on float64 arrays of ``n_bytes`` each.

    ``n_bytes`` defaults to 4 x the last-level cache per array (STREAM's rule, capped at
    STREAM_MAX_ARRAY_BYTES), so the data comes from DRAM. The arrays are split into
    ``n_threads`` slices, one per thread. Returns FLOP, bytes (DRAM traffic, write-allocate
    included), fill bytes, STREAM's byte count, seconds, FLOP/s and bytes/s.

    >>> p = stream_point("scale", n_bytes=8e5, n_repeats=2)
    >>> p["flop"], p["bytes"], p["fill_bytes"], p["stream_bytes"]
    (100000.0, 2400000.0, 1600000.0, 1600000.0)
    """
    _check_stream(name)
    n_threads = int(units.check_positive("n_threads", n_threads))
    streams = _Streams(int(_default_stream_bytes(n_bytes) // 8), n_threads)
    with streams.pool:
        return streams.point(name, best_time_s(streams.runner(name), n_repeats=n_repeats))


def _blas_threads(n_threads: int | None) -> contextlib.AbstractContextManager:
    """A context limiting BLAS to ``n_threads`` threads (no limit for None)."""
    if n_threads is None:
        return contextlib.nullcontext()
    units.check_positive("n_threads", n_threads)
    import threadpoolctl

    return threadpoolctl.threadpool_limits(limits=int(n_threads), user_api="blas")
