"""Bloom filters for exact dedup at scale: k bit positions per key in an m-bit array.

Exact dedup (``dedup.exact_duplicates``) keeps a set of 16-byte digests, 128 bits a page before
any hash-table overhead. A Bloom filter (Bloom 1970, "Space/time trade-offs in hash coding with
allowable errors") keeps m bits and sets k of them per key; a key is "seen" when all k of its
bits are set. It never misses a key it holds (no false negatives); a new key collides with
probability, for n keys inserted and bits set independently,

    p = (1 - (1 - 1/m)^(k n))^k  ≈  (1 - e^(-k n / m))^k,

minimised at k = (m / n) ln 2, where p = 2^(-k) and m / n = -log2(p) / ln 2 ≈ 1.44 log2(1/p)
bits per key (Broder and Mitzenmacher 2004, "Network applications of Bloom filters", sec. 2).

The k positions come from one digest by double hashing, g_i = h1 + i h2 mod m, with h1 and h2
the two 64-bit halves of the same blake2b digest that exact dedup uses; Kirsch and Mitzenmacher
(2008, "Less hashing, same performance") show this keeps the false-positive rate above.

Home: chapters/02_data.ipynb, section "Bloom filters: exact dedup in a few bits a page".
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from . import text as text_mod

DIGEST_BYTES = 16  # the digest exact dedup keys on (``dedup.exact_duplicates``), 128 bits
BITS_PER_BYTE = 8


def _check_count(name: str, value: float, minimum: int = 1) -> int:
    if int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def document_keys(texts: list[str]) -> np.ndarray:
    """(n, 2) uint64: the two halves of each normalised text's 16-byte blake2b digest.

    >>> document_keys(["A b.", "a  B"]).tolist()[0] == document_keys(["a b"]).tolist()[0]
    True
    """
    raw = b"".join(
        hashlib.blake2b(text_mod.normalize(t).encode(), digest_size=DIGEST_BYTES).digest()
        for t in texts
    )
    return np.frombuffer(raw, dtype="<u8").reshape(len(texts), 2).copy()


def bit_positions(keys: np.ndarray, *, n_bits: int, n_hashes: int) -> np.ndarray:
    """(n, k) int64 bit positions g_i = h1 + i h2 mod m (Kirsch and Mitzenmacher 2008).

    h2 is forced odd so that, for m a power of two, the k positions of a key are distinct.

    >>> bit_positions(np.array([[5, 2]], dtype=np.uint64), n_bits=64, n_hashes=3).tolist()
    [[5, 8, 11]]
    """
    m = _check_count("n_bits", n_bits)
    k = _check_count("n_hashes", n_hashes)
    keys = np.asarray(keys, dtype=np.uint64)
    if keys.ndim != 2 or keys.shape[1] != 2:
        raise ValueError(f"keys must have shape (n, 2) uint64, got {keys.shape}")
    h1, h2 = keys[:, :1], keys[:, 1:] | np.uint64(1)
    i = np.arange(k, dtype=np.uint64)[None, :]
    # the uint64 products wrap mod 2^64; reduce each term mod m first so the sum cannot wrap
    g = (h1 % np.uint64(m)) + ((i * (h2 % np.uint64(m))) % np.uint64(m))
    return (g % np.uint64(m)).astype(np.int64)


def build(keys: np.ndarray, *, n_bits: int, n_hashes: int) -> np.ndarray:
    """The m-bit array (bool) after inserting every key."""
    bits = np.zeros(_check_count("n_bits", n_bits), dtype=bool)
    bits[bit_positions(keys, n_bits=n_bits, n_hashes=n_hashes).ravel()] = True
    return bits


def contains(bits: np.ndarray, keys: np.ndarray, *, n_hashes: int) -> np.ndarray:
    """True for each key whose k bits are all set (a member, or a false positive)."""
    pos = bit_positions(keys, n_bits=len(bits), n_hashes=n_hashes)
    return np.asarray(bits)[pos].all(axis=1)


def bloom_duplicates(texts: list[str], *, n_bits: int, n_hashes: int) -> np.ndarray:
    """True for every text the filter reports as seen before it (streaming: test, then insert).

    Every true duplicate is flagged (a Bloom filter has no false negatives); a unique page is
    flagged, wrongly, when its k bits were all set by earlier pages.
    """
    keys = document_keys(texts)
    pos = bit_positions(keys, n_bits=n_bits, n_hashes=n_hashes)
    bits = np.zeros(int(n_bits), dtype=bool)
    out = np.zeros(len(texts), dtype=bool)
    for j in range(len(texts)):
        out[j] = bool(bits[pos[j]].all())
        bits[pos[j]] = True
    return out


def false_positive_rate(*, n_items: float, n_bits: float, n_hashes: int) -> float:
    """Probability (fraction) that a new key is reported seen: (1 - e^(-k n / m))^k.

    >>> round(false_positive_rate(n_items=1_000, n_bits=10_000, n_hashes=7), 4)
    0.0082
    """
    if n_items < 0:
        raise ValueError(f"n_items must be >= 0, got {n_items!r}")
    if n_bits <= 0:
        raise ValueError(f"n_bits must be > 0, got {n_bits!r}")
    k = _check_count("n_hashes", n_hashes)
    return float((1.0 - math.exp(-k * n_items / n_bits)) ** k)


def optimal_n_hashes(bits_per_item: float) -> int:
    """The integer k >= 1 that minimises the false-positive rate at m / n bits per key.

    The continuous optimum is (m / n) ln 2; the better of its floor and ceiling is returned.

    >>> optimal_n_hashes(10.0)
    7
    """
    if bits_per_item <= 0:
        raise ValueError(f"bits_per_item must be > 0, got {bits_per_item!r}")
    k0 = bits_per_item * math.log(2)
    cands = {max(1, math.floor(k0)), max(1, math.ceil(k0))}
    return min(
        cands, key=lambda k: false_positive_rate(n_items=1, n_bits=bits_per_item, n_hashes=k)
    )


def bits_per_item_for_rate(target_rate: float) -> float:
    """Bits per key (count) an optimally hashed filter needs for a false-positive rate p:
    m / n = -ln p / (ln 2)^2.

    >>> round(bits_per_item_for_rate(0.01), 2)
    9.59
    """
    if not 0 < target_rate < 1:
        raise ValueError(f"target_rate must be in (0, 1), got {target_rate!r}")
    return -math.log(target_rate) / math.log(2) ** 2


def memory_bytes(*, n_items: float, bits_per_item: float) -> float:
    """Bytes of an m-bit filter for n keys at m / n bits each."""
    if n_items < 0 or bits_per_item <= 0:
        raise ValueError(
            f"n_items must be >= 0 and bits_per_item > 0, got {n_items!r}, {bits_per_item!r}"
        )
    return n_items * bits_per_item / BITS_PER_BYTE


def digest_set_bytes(*, n_items: float) -> float:
    """Bytes of the digests alone that exact dedup keeps (16 a key, no table overhead)."""
    if n_items < 0:
        raise ValueError(f"n_items must be >= 0, got {n_items!r}")
    return n_items * DIGEST_BYTES


def measured_false_positive_rate(
    *, n_items: int, bits_per_item: float, n_hashes: int, n_queries: int, rng: np.random.Generator
) -> float:
    """Fraction of ``n_queries`` fresh random keys reported seen after ``n_items`` are inserted."""
    n = _check_count("n_items", n_items)
    q = _check_count("n_queries", n_queries)
    if bits_per_item <= 0:
        raise ValueError(f"bits_per_item must be > 0, got {bits_per_item!r}")
    m = max(1, round(n * bits_per_item))
    keys = rng.integers(0, 2**63, size=(n + q, 2), dtype=np.int64).astype(np.uint64)
    bits = build(keys[:n], n_bits=m, n_hashes=n_hashes)
    return float(contains(bits, keys[n:], n_hashes=n_hashes).mean())


def expected_false_flags(*, n_unique: int, n_bits: float, n_hashes: int) -> float:
    """Expected number (count) of unique pages a streaming filter wrongly flags: the j-th unique
    page meets a filter holding j keys, so the sum over j < U of (1 - e^(-k j / m))^k.

    >>> round(expected_false_flags(n_unique=1_000, n_bits=10_000, n_hashes=7), 2)
    1.34
    """
    u = _check_count("n_unique", n_unique, minimum=0)
    return float(
        sum(false_positive_rate(n_items=j, n_bits=n_bits, n_hashes=n_hashes) for j in range(u))
    )


def rate_sweep(
    bits_per_item: np.ndarray, *, n_items: int, n_queries: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """At each bits-per-key setting, with the optimal k: the measured false-positive rate, the
    closed form, its binomial standard error sqrt(p (1 - p) / q) and the z-score between them."""
    bpi = np.asarray(bits_per_item, dtype=float)
    k = np.array([optimal_n_hashes(float(b)) for b in bpi])
    measured = np.array(
        [
            measured_false_positive_rate(
                n_items=n_items,
                bits_per_item=float(b),
                n_hashes=int(kk),
                n_queries=n_queries,
                rng=rng,
            )
            for b, kk in zip(bpi, k, strict=True)
        ]
    )
    predicted = np.array(
        [
            false_positive_rate(n_items=n_items, n_bits=round(n_items * b), n_hashes=int(kk))
            for b, kk in zip(bpi, k, strict=True)
        ]
    )
    se = np.sqrt(predicted * (1 - predicted) / n_queries)
    return {
        "bits_per_item": bpi,
        "n_hashes": k,
        "measured": measured,
        "predicted": predicted,
        "se": se,
        "z": (measured - predicted) / se,
    }
