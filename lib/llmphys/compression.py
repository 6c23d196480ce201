"""A model's log-loss is a code length: arithmetic coding with a language model, vs zlib.

Any model q of the next symbol turns into a lossless compressor: an arithmetic coder
spends -log2 q(x_t | x_<t) bits on each symbol, plus at most 2 bits for the whole
message (Witten, Neal & Cleary 1987, doi:10.1145/214762.214771; Shannon 1948). So the
model's cross-entropy in bits per byte *is* its compression rate, and lowering the
training loss is the same thing as compressing the training text better (Delétang
et al. 2023, "Language Modeling Is Compression", arXiv:2309.10668).

This module computes the ideal code length, runs a real 32-bit arithmetic coder to
show the ideal is reached, builds an adaptive n-gram code (Krichevsky-Trofimov counts,
updated as it goes, so the decoder needs nothing but the code), and compresses the
same bytes with the standard library's DEFLATE (zlib/gzip), bzip2 and LZMA.

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import bz2
import lzma
import zlib

import numpy as np

from . import units

_PRECISION = 32
_FULL, _HALF, _QUARTER = (1 << _PRECISION) - 1, 1 << (_PRECISION - 1), 1 << (_PRECISION - 2)


def code_length_bits(probs: np.ndarray) -> float:
    """Ideal code length in bits of a message whose symbols got model probabilities ``probs``.

    sum_t -log2 q(x_t | x_<t): what an arithmetic coder reaches to within 2 bits.

    >>> code_length_bits(np.array([0.5, 0.25, 0.125]))  # 1 + 2 + 3 bits
    6.0
    """
    p = np.asarray(probs, dtype=float)
    if p.size == 0 or np.any(p <= 0) or np.any(p > 1):
        raise ValueError("probs must be a non-empty array of probabilities in (0, 1]")
    return float(-np.sum(np.log2(p)))


def quantize(dists: np.ndarray, *, total_bits: int = 16) -> np.ndarray:
    """Integer frequencies (n, V), each row summing to 2**total_bits, no symbol below 1.

    An arithmetic coder works with integer counts; flooring every symbol at 1 keeps any
    symbol codable and costs at most about V / 2**total_bits of probability per step.

    >>> quantize(np.array([[0.5, 0.5, 0.0]]), total_bits=4)
    array([[8, 7, 1]])
    """
    d = np.asarray(dists, dtype=float)
    total, v = 1 << total_bits, d.shape[-1]
    if total <= 2 * v:
        raise ValueError(f"total_bits={total_bits} leaves too few counts for {v} symbols")
    f = 1 + np.floor(d / d.sum(axis=-1, keepdims=True) * (total - v)).astype(np.int64)
    f[np.arange(len(f)), np.argmax(f, axis=-1)] += total - f.sum(axis=-1)  # fix the sum exactly
    return f


def arithmetic_encode(symbols: np.ndarray, freqs: np.ndarray) -> list[int]:
    """Bits (a list of 0/1) of a 32-bit arithmetic code for ``symbols`` under ``freqs`` (n, V).

    The classic integer coder of Witten, Neal & Cleary 1987 with the E3 underflow rule.
    ``freqs[t]`` is the model's (quantized) distribution for symbol t given symbols < t.

    >>> freqs = np.array([[1, 1, 2]] * 4)  # q = 1/4, 1/4, 1/2
    >>> bits = arithmetic_encode(np.array([2, 2, 0, 2]), freqs)  # ideal 1+1+2+1 = 5, at most +2
    >>> len(bits), arithmetic_decode(bits, freqs).tolist()
    (7, [2, 2, 0, 2])
    """
    symbols = np.asarray(symbols, dtype=np.int64)
    freqs = np.asarray(freqs, dtype=np.int64)
    if freqs.shape[0] != symbols.size:
        raise ValueError(f"freqs needs one row per symbol: {freqs.shape[0]} != {symbols.size}")
    cum = np.concatenate([np.zeros((len(freqs), 1), np.int64), np.cumsum(freqs, axis=1)], axis=1)
    low, high, pending, out = 0, _FULL, 0, []

    def emit(bit: int) -> None:
        nonlocal pending
        out.append(bit)
        out.extend([1 - bit] * pending)
        pending = 0

    for t, s in enumerate(symbols.tolist()):
        span, total = high - low + 1, int(cum[t, -1])
        high = low + span * int(cum[t, s + 1]) // total - 1
        low = low + span * int(cum[t, s]) // total
        while True:
            if high < _HALF:
                emit(0)
            elif low >= _HALF:
                emit(1)
                low, high = low - _HALF, high - _HALF
            elif low >= _QUARTER and high < 3 * _QUARTER:
                pending += 1
                low, high = low - _QUARTER, high - _QUARTER
            else:
                break
            low, high = 2 * low, 2 * high + 1
    pending += 1
    emit(0 if low < _QUARTER else 1)
    return out


def arithmetic_decode(bits: list[int], freqs: np.ndarray) -> np.ndarray:
    """Invert ``arithmetic_encode``: one symbol per row of ``freqs``."""
    freqs = np.asarray(freqs, dtype=np.int64)
    cum = np.concatenate([np.zeros((len(freqs), 1), np.int64), np.cumsum(freqs, axis=1)], axis=1)
    stream = iter(list(bits) + [0] * _PRECISION)
    value = 0
    for _ in range(_PRECISION):
        value = 2 * value + next(stream)
    low, high, out = 0, _FULL, np.empty(len(freqs), dtype=np.int64)
    for t in range(len(freqs)):
        span, total = high - low + 1, int(cum[t, -1])
        target = ((value - low + 1) * total - 1) // span
        s = int(np.searchsorted(cum[t], target, side="right")) - 1
        out[t] = s
        high = low + span * int(cum[t, s + 1]) // total - 1
        low = low + span * int(cum[t, s]) // total
        while True:
            if high < _HALF:
                pass
            elif low >= _HALF:
                low, high, value = low - _HALF, high - _HALF, value - _HALF
            elif low >= _QUARTER and high < 3 * _QUARTER:
                low, high, value = low - _QUARTER, high - _QUARTER, value - _QUARTER
            else:
                break
            low, high, value = 2 * low, 2 * high + 1, 2 * value + next(stream)
    return out


def adaptive_ngram_probs(
    tokens: np.ndarray, *, order: int, vocab_size: int, add_k: float = 0.5
) -> np.ndarray:
    """Probability an adaptive n-gram code gives each token, from the counts of the past only.

    q(x_t | c) = (n_t(c, x_t) + k) / (n_t(c) + k V), where n_t counts occurrences *before*
    t of the (order - 1)-token context c, so a decoder can rebuild every count as it goes:
    no model needs to be sent. k = 1/2 is the Krichevsky-Trofimov estimator
    (doi:10.1109/TIT.1981.1056331). The first order - 1 tokens, whose context runs off the
    start of the text, count in contexts of their own.

    >>> adaptive_ngram_probs(np.array([0, 0, 0]), order=1, vocab_size=2).round(3)
    array([0.5  , 0.75 , 0.833])
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    if isinstance(order, bool) or int(order) != order or order < 1:
        raise ValueError(f"order must be an integer >= 1, got {order!r}")
    units.check_positive("add_k", add_k)
    if tokens.size and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(f"tokens must lie in [0, vocab_size={vocab_size})")
    ctx = np.zeros(tokens.size, dtype=np.int64)
    for lag in range(1, order):  # mixed-radix code of the previous order-1 tokens (+1: 0 = none)
        prev = (
            np.r_[np.full(lag, -1), tokens[:-lag]]
            if lag < tokens.size
            else np.full(tokens.size, -1)
        )
        ctx = ctx * (vocab_size + 1) + prev + 1
    n_ctx = _previous_occurrences(ctx)
    n_pair = _previous_occurrences(ctx * vocab_size + tokens)
    return (n_pair + add_k) / (n_ctx + add_k * vocab_size)


def _previous_occurrences(keys: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same key (vectorised)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    group_start = np.r_[0, np.flatnonzero(np.diff(sorted_keys)) + 1]
    rank = np.arange(keys.size) - np.repeat(group_start, np.diff(np.r_[group_start, keys.size]))
    out = np.empty_like(rank)
    out[order] = rank
    return out


def stdlib_compressed_bits(data: bytes) -> dict[str, float]:
    """Compressed size in bits of ``data`` under Python's DEFLATE, bzip2 and LZMA, best settings.

    "zlib" is DEFLATE (LZ77 + Huffman, RFC 1951) with zlib's 6-byte frame; a .gz file is
    the same stream with an 18-byte gzip frame. The other two are "bz2" and "lzma" (xz).

    >>> sizes = stdlib_compressed_bits(bytes(10_000))
    >>> sizes["zlib"] < 8 * 100  # ten thousand zero bytes squeeze into a few dozen
    True
    """
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise ValueError("data must be non-empty bytes")
    bits = units.BITS_PER_BYTE
    return {
        "zlib": bits * len(zlib.compress(bytes(data), 9)),
        "bz2": bits * len(bz2.compress(bytes(data), 9)),
        "lzma": bits * len(lzma.compress(bytes(data), preset=9 | lzma.PRESET_EXTREME)),
    }


def symbols_to_bytes(
    tokens: np.ndarray, *, alphabet: bytes = b"abcdefghijklmnopqrstuvwxyz"
) -> bytes:
    """Render symbol ids as one ASCII letter per symbol, so every token is exactly one byte.

    >>> symbols_to_bytes(np.array([0, 1, 2, 1]))
    b'abcb'
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.size and (tokens.min() < 0 or tokens.max() >= len(alphabet)):
        raise ValueError(f"tokens must lie in [0, {len(alphabet)}) to fit the alphabet")
    return bytes(np.frombuffer(alphabet, dtype=np.uint8)[tokens].tobytes())
