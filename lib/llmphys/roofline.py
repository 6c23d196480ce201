"""The roofline model: a kernel is limited by compute or by memory bandwidth.

A kernel that performs F FLOP while moving Q bytes between HBM and the chip has
arithmetic intensity I = F / Q (FLOP/byte). On a chip with peak compute P
(FLOP/s) and memory bandwidth W (bytes/s) it cannot run faster than

    attainable(I) = min(P, W * I),        time >= max(F / P, Q / W).

The two roofs meet at the ridge point I* = P / W. Left of it a kernel is
memory-bound and extra FLOP/s buy nothing. Ref: Williams, Waterman and
Patterson, "Roofline", CACM 52(4), 2009.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import units
from .specs import Accelerator


def ridge_point(acc: Accelerator, dtype: str = "bf16") -> float:
    """Ridge point in FLOP/byte: dense peak FLOP/s divided by HBM bytes/s.

    I* = P / W. Ref: Williams et al. 2009.

    >>> from llmphys import specs
    >>> round(ridge_point(specs.accelerator("h100_sxm")), 1)
    295.3
    """
    return acc.peak_flop_per_s(dtype) / acc.hbm_bytes_per_s


def attainable_flop_per_s(
    acc: Accelerator, intensity: float | np.ndarray, dtype: str = "bf16"
) -> float | np.ndarray:
    """Roofline bound in FLOP/s at arithmetic intensity ``intensity`` (FLOP/byte).

    min(P, W * I); accepts an array of intensities.

    >>> from llmphys import specs
    >>> h100 = specs.accelerator("h100_sxm")
    >>> attainable_flop_per_s(h100, 1.0) / h100.peak_bf16_flop_per_s  # doctest: +ELLIPSIS
    0.00338...
    """
    i = np.asarray(intensity, dtype=float)
    if np.any(~np.isfinite(i)) or np.any(i <= 0):
        raise ValueError(f"intensity must be positive and finite (FLOP/byte), got {intensity!r}")
    bound = np.minimum(acc.peak_flop_per_s(dtype), acc.hbm_bytes_per_s * i)
    return float(bound) if bound.ndim == 0 else bound


def kernel_time_s(
    acc: Accelerator, *, flop: float, bytes_moved: float, dtype: str = "bf16"
) -> float:
    """Lower bound on a kernel's run time in seconds: max(F / P, Q / W).

    Assumes compute and memory traffic overlap perfectly (the roofline's premise).

    >>> from llmphys import specs
    >>> t = kernel_time_s(specs.accelerator("h100_sxm"), flop=2 * 8e9, bytes_moved=16e9)
    >>> round(t * 1e3, 2)  # ms: one batch-1 decode step of an 8B model in bf16
    4.78
    """
    if flop < 0 or not np.isfinite(flop):
        raise ValueError(f"flop must be >= 0 and finite, got {flop!r}")
    units.check_positive("bytes_moved", bytes_moved)
    return max(flop / acc.peak_flop_per_s(dtype), bytes_moved / acc.hbm_bytes_per_s)


def matmul_flop(m: int, n: int, k: int) -> float:
    """FLOP of C[m, n] = A[m, k] @ B[k, n]: one multiply and one add per term, 2mnk.

    >>> matmul_flop(2, 3, 4)
    48.0
    """
    for name, v in (("m", m), ("n", n), ("k", k)):
        units.check_positive(name, v)
    return 2.0 * m * n * k


def matmul_bytes(m: int, n: int, k: int, *, bytes_per_element: float) -> float:
    """Bytes a matmul moves if each operand is read once and C written once: b(mk + kn + mn)."""
    units.check_positive("bytes_per_element", bytes_per_element)
    return bytes_per_element * (m * k + k * n + m * n)


def matmul_intensity(m: int, n: int, k: int, *, bytes_per_element: float) -> float:
    """Arithmetic intensity of C[m, n] = A[m, k] @ B[k, n] in FLOP/byte.

    2mnk / (b(mk + kn + mn)): the best case, every operand read from HBM once.
    For a weight matrix of shape (k, n) applied to m tokens, intensity grows
    like m while m << k, n: each weight fetched is reused once per token.

    >>> matmul_intensity(1, 8192, 8192, bytes_per_element=2.0)  # doctest: +ELLIPSIS
    0.99...
    >>> round(matmul_intensity(4096, 8192, 8192, bytes_per_element=2.0))
    2048
    """
    return matmul_flop(m, n, k) / matmul_bytes(m, n, k, bytes_per_element=bytes_per_element)


def fraction_of_peak(
    acc: Accelerator, intensity: float | np.ndarray, dtype: str = "bf16"
) -> float | np.ndarray:
    """Attainable FLOP/s as a fraction of the dense peak (1.0 right of the ridge).

    >>> from llmphys import specs
    >>> round(fraction_of_peak(specs.accelerator("h100_sxm"), 5000.0), 3)
    1.0
    """
    return attainable_flop_per_s(acc, intensity, dtype) / acc.peak_flop_per_s(dtype)
