"""Low-precision number formats emulated in numpy: FP8 (E4M3, E5M2), FP4 (E2M1), scaling.

A binary float with m mantissa bits and exponent bias b represents, in the binade
[2^e, 2^(e+1)), the multiples of 2^(e - m). Below the smallest normal 2^(1 - b) the
spacing stays 2^(1 - b - m) (subnormals). Rounding ``x`` to the format is therefore

    q = 2^(e' - m) * rne(|x| / 2^(e' - m)),    e' = max(floor(log2 |x|), 1 - b),

with rne round-to-nearest-even, followed by an overflow rule when q exceeds the
largest finite value. The OCP 8-bit spec (OFP8 rev. 1.0, 2023; Micikevicius et al.
2022, arXiv:2209.05433, table 1) fixes E4M3 at bias 7 with max 448 and no infinity
(overflow gives NaN), E5M2 at bias 15 with max 57344 and IEEE infinities; hardware
also offers a saturating conversion (overflow gives +-max), the default here. The OCP
MX spec v1.0 (2023) defines FP4 E2M1: bias 1, values 0, 0.5, 1, 1.5, 2, 3, 4, 6.

Scaling multiplies a tensor by s before rounding and divides after, so its largest
magnitude lands near the format's max: one s per tensor, or one per block of 32 (MX)
or 128 (DeepSeek-V3) elements, which follows local magnitudes in heavy-tailed data.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import roofline, units
from .specs import Accelerator


@dataclasses.dataclass(frozen=True, kw_only=True)
class FloatFormat:
    """A binary floating-point format: mantissa bits, exponent bias, largest finite value."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    max_value: float
    has_inf: bool  # overflow without saturation gives inf (else NaN, or max if no NaN exists)
    has_nan: bool

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (1 - self.bias - self.mantissa_bits)

    @property
    def bytes_per_element(self) -> float:
        return (1 + self.exponent_bits + self.mantissa_bits) / units.BITS_PER_BYTE


FORMATS: dict[str, FloatFormat] = {
    "e4m3": FloatFormat(
        name="FP8 E4M3",
        exponent_bits=4,
        mantissa_bits=3,
        bias=7,
        max_value=448.0,
        has_inf=False,
        has_nan=True,
    ),
    "e5m2": FloatFormat(
        name="FP8 E5M2",
        exponent_bits=5,
        mantissa_bits=2,
        bias=15,
        max_value=57344.0,
        has_inf=True,
        has_nan=True,
    ),
    "e2m1": FloatFormat(
        name="FP4 E2M1",
        exponent_bits=2,
        mantissa_bits=1,
        bias=1,
        max_value=6.0,
        has_inf=False,
        has_nan=False,
    ),
    "bf16": FloatFormat(
        name="BF16",
        exponent_bits=8,
        mantissa_bits=7,
        bias=127,
        max_value=(2 - 2.0**-7) * 2.0**127,
        has_inf=True,
        has_nan=True,
    ),
}


def float_format(key: str) -> FloatFormat:
    """The format registered as ``key`` (e4m3, e5m2, e2m1, bf16).

    >>> float_format("e4m3").max_value, float_format("e4m3").min_subnormal
    (448.0, 0.001953125)
    """
    try:
        return FORMATS[key]
    except (KeyError, TypeError):
        raise ValueError(f"fmt={key!r} is not known; allowed: {', '.join(FORMATS)}") from None


def quantize(x: np.ndarray, fmt: str, *, saturate: bool = True) -> np.ndarray:
    """Round ``x`` to the nearest value of ``fmt`` (ties to even); same units as ``x``.

    Overflow gives +-max when ``saturate`` (NVIDIA's satfinite conversion), else inf or
    NaN as the OCP spec says for a non-saturating conversion. NaN stays NaN.

    >>> quantize(np.array([0.3, 465.0, 1e-3, 7.0]), "e4m3").tolist()
    [0.3125, 448.0, 0.001953125, 7.0]
    """
    f = float_format(fmt)
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    finite_nonzero = np.isfinite(a) & (a > 0)
    exp = np.floor(np.log2(np.where(finite_nonzero, a, 1.0)))
    quantum = 2.0 ** (np.maximum(exp, 1 - f.bias) - f.mantissa_bits)
    q = np.where(finite_nonzero, np.rint(a / quantum) * quantum, a)  # np.rint: ties to even
    over = q > f.max_value  # includes +-inf inputs
    if saturate or not (f.has_inf or f.has_nan):
        q = np.where(over, f.max_value, q)
    else:
        q = np.where(over, np.inf if f.has_inf else np.nan, q)
    return np.copysign(q, x)


def block_scales(
    x: np.ndarray, fmt: str, *, block_size: int | None, power_of_two: bool = False
) -> np.ndarray:
    """Scale factor per element (dimensionless): max / amax of its block, or of the tensor.

    ``block_size=None`` gives one scale for the whole tensor. Blocks run along the flattened
    last axis, whose length must be a multiple of ``block_size``. ``power_of_two`` rounds each
    scale down to 2^k, as the MX formats' E8M0 scales do (OCP MX v1.0).

    >>> block_scales(np.array([1.0, 2.0, 100.0, 4.0]), "e4m3", block_size=2).tolist()
    [224.0, 224.0, 4.48, 4.48]
    """
    f = float_format(fmt)
    x = np.asarray(x, dtype=np.float64)
    if block_size is None:
        amax = np.full(x.shape, np.max(np.abs(x)))
    else:
        if int(block_size) < 1 or x.shape[-1] % int(block_size):
            raise ValueError(
                f"block_size={block_size!r} must be a positive divisor of the last "
                f"axis length {x.shape[-1]}"
            )
        blocks = np.abs(x).reshape(*x.shape[:-1], -1, int(block_size))
        amax = np.broadcast_to(blocks.max(axis=-1, keepdims=True), blocks.shape).reshape(x.shape)
    scale = f.max_value / np.where(amax > 0, amax, 1.0)
    return 2.0 ** np.floor(np.log2(scale)) if power_of_two else scale


def fake_quantize(
    x: np.ndarray,
    fmt: str,
    *,
    block_size: int | None = None,
    scaled: bool = True,
    power_of_two: bool = False,
) -> np.ndarray:
    """Quantize-dequantize ``x`` through ``fmt``: s^-1 Q(s x), with saturation (units of ``x``).

    ``scaled=False`` rounds ``x`` as it is (no scale): large values clip, small ones flush.

    >>> fake_quantize(np.array([1e-4, 2e-4]), "e4m3", scaled=False).tolist()
    [0.0, 0.0]
    """
    if not scaled:
        return quantize(x, fmt)
    s = block_scales(x, fmt, block_size=block_size, power_of_two=power_of_two)
    return quantize(np.asarray(x, dtype=np.float64) * s, fmt) / s


def relative_rms_error(x: np.ndarray, x_hat: np.ndarray) -> float:
    """Dimensionless error of an approximation: ||x_hat - x||_2 / ||x||_2.

    >>> relative_rms_error(np.array([3.0, 4.0]), np.array([3.0, 4.5]))
    0.1
    """
    x, x_hat = np.asarray(x, dtype=np.float64), np.asarray(x_hat, dtype=np.float64)
    norm = np.linalg.norm(x)
    if norm == 0:
        raise ValueError("x must not be all zeros")
    return float(np.linalg.norm(x_hat - x) / norm)


def flushed_fraction(x: np.ndarray, x_hat: np.ndarray) -> float:
    """Fraction of the non-zero elements of ``x`` that the approximation turned into zero.

    >>> flushed_fraction(np.array([1.0, 1e-9, 0.0]), np.array([1.0, 0.0, 0.0]))
    0.5
    """
    x, x_hat = np.asarray(x), np.asarray(x_hat)
    nonzero = x != 0
    return float(np.mean(x_hat[nonzero] == 0)) if np.any(nonzero) else 0.0


def precision_speedup(
    acc: Accelerator, *, m: int, n: int, k: int, from_dtype: str = "bf16", to_dtype: str = "fp8"
) -> dict[str, float]:
    """Roofline speed-up of C[m,n] = A[m,k] B[k,n] when every operand moves in ``to_dtype``.

    Where the chip has no native ``to_dtype`` matrix math the operands are stored narrow and
    widened on chip, so the arithmetic runs at the ``from_dtype`` peak (weight-only
    quantisation). Returns the speed-up, the peak FLOP/s ratio and the bytes ratio.

    >>> from llmphys import specs
    >>> r = precision_speedup(specs.accelerator("a100_sxm"), m=1, n=8192, k=8192)
    >>> round(r["speedup"], 2), r["peak_ratio"]
    (2.0, 1.0)
    """
    b_from, b_to = units.bytes_per_element(from_dtype), units.bytes_per_element(to_dtype)
    compute_to = to_dtype if to_dtype in acc.matrix_dtypes else from_dtype
    flop = roofline.matmul_flop(m, n, k)
    bytes_from = roofline.matmul_bytes(m, n, k, bytes_per_element=b_from)
    bytes_to = roofline.matmul_bytes(m, n, k, bytes_per_element=b_to)
    t_from = roofline.kernel_time_s(acc, flop=flop, dtype=from_dtype, bytes_moved=bytes_from)
    t_to = roofline.kernel_time_s(acc, flop=flop, dtype=compute_to, bytes_moved=bytes_to)
    return {
        "speedup": t_from / t_to,
        "peak_ratio": acc.peak_flop_per_s(compute_to) / acc.peak_flop_per_s(from_dtype),
        "bytes_ratio": b_from / b_to,
    }


def unscaled_flush_fraction(
    fmt: str, *, rms: float = 1e-4, n: int = 100_000, seed: int = 0
) -> float:
    """Fraction of normal values of RMS ``rms`` that round to zero when cast to ``fmt`` unscaled.

    No scaling, as when a gradient tensor is cast to FP8 directly (:func:`flushed_fraction`).

    >>> unscaled_flush_fraction("e4m3") > unscaled_flush_fraction("e5m2")
    True
    """
    x = rms * np.random.default_rng(seed).standard_normal(n)
    return flushed_fraction(x, fake_quantize(x, fmt, scaled=False))
