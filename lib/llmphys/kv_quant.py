"""Quantised KV caches: bytes per cached element with their scales, and the error they add.

A cache stored in b bits per element with one scale of s bytes shared by a group of G
elements costs

    bytes per element = b / 8 + s / G,

so INT4 with an FP16 scale per 32 elements is 0.5625 bytes, not 0.5: the scales are part of
the bytes a decode step streams. FP8 (E4M3) carries its own exponent and needs only one
scale per tensor. Integer formats here are symmetric: x ~ s q with q an integer in
[-(2^(b-1) - 1), 2^(b-1) - 1] and s = max |x| of the group over 2^(b-1) - 1.

Keys are harder to quantise than values because a few channels carry large magnitudes in
every token (outlier channels; KIVI, Liu et al. 2024, arXiv:2402.02750, sec. 3); the error
study below draws keys with such channels. Grouped along the head dimension, an outlier
channel sets the scale of its whole group; grouped per channel over tokens (KIVI's choice
for keys), each channel gets its own scale.

Home: chapters/03_architecture.ipynb, section "Paged and quantised KV caches".
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import precision, units

SCALE_BYTES = 2.0
"""One FP16 scale per group (the integer formats below); an assumption, stated."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class CacheFormat:
    """A KV-cache element format: bits per element, elements per shared scale (0: none), and
    the axis a group runs along ("head": within one token's head vector; "token": one
    channel over consecutive tokens)."""

    name: str
    bits: float
    group_size: int
    scale_bytes: float = SCALE_BYTES
    group_axis: str = "head"


CACHE_FORMATS: dict[str, CacheFormat] = {
    "bf16": CacheFormat(name="BF16", bits=16, group_size=0, scale_bytes=0.0),
    "fp8": CacheFormat(name="FP8 E4M3, one scale per tensor", bits=8, group_size=0),
    "int8": CacheFormat(name="INT8, one scale per 128", bits=8, group_size=128),
    "int4": CacheFormat(name="INT4, one scale per 32", bits=4, group_size=32),
    "int4_channel": CacheFormat(
        name="INT4, one scale per channel per 32 tokens", bits=4, group_size=32, group_axis="token"
    ),
}
"""The formats the chapter compares. Group sizes are our choices: 128 is one head's width
for INT8, 32 a common INT4 group (the MX block size, OCP MX v1.0)."""


def cache_format(key: str) -> CacheFormat:
    """The :data:`CACHE_FORMATS` entry ``key``, or a ValueError naming the allowed keys."""
    try:
        return CACHE_FORMATS[key]
    except (KeyError, TypeError):
        raise ValueError(f"format {key!r} is not known; allowed: {list(CACHE_FORMATS)}") from None


def bytes_per_element(key: str) -> float:
    """Bytes per cached element, scales included: b / 8 + s / G (s / G = 0 without groups).

    >>> bytes_per_element("int4"), bytes_per_element("int8"), bytes_per_element("fp8")
    (0.5625, 1.015625, 1.0)
    >>> bytes_per_element("int4_channel") == bytes_per_element("int4")  # same bytes, other axis
    True
    """
    f = cache_format(key)
    overhead = f.scale_bytes / f.group_size if f.group_size else 0.0
    return f.bits / units.BITS_PER_BYTE + overhead


def int_fake_quantize(x: np.ndarray, *, bits: int, group_size: int) -> np.ndarray:
    """Quantise-dequantise ``x`` to symmetric ``bits``-bit integers, one scale per group of
    ``group_size`` along the last axis (units of ``x``).

    >>> int_fake_quantize(np.array([0.1, -1.0, 0.5, 0.26]), bits=2, group_size=2).tolist()
    [0.0, -1.0, 0.5, 0.5]
    """
    if isinstance(bits, bool) or bits not in (2, 3, 4, 8):
        raise ValueError(f"bits must be 2, 3, 4 or 8, got {bits!r}")
    x = np.asarray(x, dtype=np.float64)
    if isinstance(group_size, bool) or int(group_size) < 1 or x.shape[-1] % int(group_size):
        raise ValueError(
            f"group_size={group_size!r} must be a positive divisor of the last axis {x.shape[-1]}"
        )
    q_max = 2 ** (bits - 1) - 1
    g = x.reshape(*x.shape[:-1], -1, int(group_size))
    amax = np.abs(g).max(axis=-1, keepdims=True)
    scale = np.where(amax > 0, amax / q_max, 1.0)
    return (np.clip(np.round(g / scale), -q_max, q_max) * scale).reshape(x.shape)


def fake_quantize_cache(x: np.ndarray, key: str) -> np.ndarray:
    """``x`` through the cache format ``key`` (BF16 is taken as exact here).

    >>> fake_quantize_cache(np.array([1.0, 3.0]), "fp8").tolist()
    [1.0, 3.0]
    """
    f = cache_format(key)
    if key == "bf16":
        return np.asarray(x, dtype=np.float64)
    if key == "fp8":
        return precision.fake_quantize(x, "e4m3", block_size=None)
    if f.group_axis == "token":  # (tokens, channels): group each channel over its tokens
        xt = np.swapaxes(np.asarray(x, dtype=np.float64), -1, -2)
        return np.swapaxes(int_fake_quantize(xt, bits=int(f.bits), group_size=f.group_size), -1, -2)
    return int_fake_quantize(x, bits=int(f.bits), group_size=f.group_size)


def synthetic_keys(
    rng: np.random.Generator,
    *,
    n_tokens: int = 512,
    head_dim: int = 128,
    n_outlier_channels: int = 4,
    outlier_scale: float = 10.0,
) -> np.ndarray:
    """Keys of one head (n_tokens x head_dim, unit-variance channels) with a few channels
    ``outlier_scale`` times larger in every token, as keys show (KIVI, sec. 3).

    >>> synthetic_keys(np.random.default_rng(0), n_tokens=4, head_dim=8).shape
    (4, 8)
    """
    units.check_positive("outlier_scale", outlier_scale)
    if not 0 <= n_outlier_channels <= head_dim:
        raise ValueError(f"n_outlier_channels must be in [0, {head_dim}], got {n_outlier_channels}")
    k = rng.standard_normal((int(n_tokens), int(head_dim)))
    cols = rng.choice(int(head_dim), size=int(n_outlier_channels), replace=False)
    k[:, cols] *= outlier_scale
    return k


def cache_error(keys: np.ndarray, key: str) -> float:
    """Relative RMS error of ``keys`` stored in format ``key`` (dimensionless).

    >>> cache_error(np.ones((2, 128)), "int8")
    0.0
    """
    return precision.relative_rms_error(keys, fake_quantize_cache(keys, key))
