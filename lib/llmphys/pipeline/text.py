"""Words, normalisation, stable hashes and n-gram hashes shared by the pipeline stages.

A "word" is a maximal run of letters, combining marks and digits (``[\\p{L}\\p{M}\\p{N}]+``),
so that Devanagari vowel signs stay inside their word. Hashes are computed from the
bytes of the word with BLAKE2b, never with Python's ``hash`` (salted per process),
so every run of the book gives the same numbers.

A corpus is kept in compressed-sparse-row form: one flat array of word (or n-gram)
hashes and an ``offsets`` array of length n_docs + 1, document i owning
``flat[offsets[i]:offsets[i+1]]``. Every stage after this one is then numpy code.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import hashlib
import unicodedata

import numpy as np
import regex

WORD_RE = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_ASCII_SPACES = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of the polynomial n-gram hash


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` (NFKC-normalised first).

    >>> words("Ein Test, two-words; यह है!")
    ['ein', 'test', 'two', 'words', 'यह', 'है']
    >>> words("ASCII_too: it's 3.5x!")
    ['ascii', 'too', 'it', 's', '3', '5x']
    """
    if text.isascii():
        # ASCII is NFKC-stable, casefolds to lower case, and its [\p{L}\p{M}\p{N}] are the
        # letters and digits: map every other byte to a space and split, at C speed (4x).
        return text.lower().encode("ascii").translate(_ASCII_SPACES).decode("ascii").split()
    return WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize(text: str) -> str:
    """The text exact dedup compares: NFKC, case-folded, punctuation dropped, one space.

    >>> normalize("  Hello,   WORLD!\\n")
    'hello world'
    """
    return " ".join(words(text))


def stable_hash64(strings: list[str]) -> np.ndarray:
    """uint64 BLAKE2b hash of each string's UTF-8 bytes; identical in every process.

    >>> int(stable_hash64(["the"])[0]) == int(stable_hash64(["the"])[0])
    True
    """
    out = np.empty(len(strings), dtype=np.uint64)
    for i, s in enumerate(strings):
        out[i] = int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "little")
    return out


def mix64(h: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: spreads every input bit over the output (uint64 in, out)."""
    h = np.asarray(h, dtype=np.uint64)
    h = (h ^ (h >> np.uint64(30))) * _MIX1
    h = (h ^ (h >> np.uint64(27))) * _MIX2
    return h ^ (h >> np.uint64(31))


def corpus_word_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(flat uint64 word hashes, offsets) for ``texts`` in CSR form.

    Each distinct word is hashed once (ids are assigned in any order; only the hashes are
    returned, so the result does not depend on it), so the cost is one look-up per word.

    >>> flat, off = corpus_word_hashes(["a b", "", "b"])
    >>> off.tolist(), bool(flat[1] == flat[2])
    ([0, 2, 2, 3], True)
    """
    vocab: dict[str, int] = {}
    ids: list[int] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        w = words(t)
        lengths[i] = len(w)
        for x in set(w).difference(vocab):  # a Python step only for words not seen yet
            vocab[x] = len(vocab)
        ids.extend(map(vocab.__getitem__, w))  # the look-ups run in C
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    table = stable_hash64(list(vocab))
    return table[np.fromiter(ids, dtype=np.int64, count=len(ids))], offsets


def ngram_hashes(flat: np.ndarray, offsets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """uint64 hashes of every word n-gram that lies inside one document, in CSR form.

    A window starting at position p is kept if p + n <= the end of p's document, so
    n-grams never straddle two documents. h = mix64(sum_j w[p+j] B^(n-1-j)) mod 2^64.

    >>> flat, off = corpus_word_hashes(["a b c", "a b"])
    >>> g, goff = ngram_hashes(flat, off, 2)
    >>> goff.tolist(), bool(g[0] == g[2])
    ([0, 2, 3], True)
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    lengths = np.diff(offsets)
    counts = np.maximum(lengths - n + 1, 0)
    new_offsets = np.concatenate([[0], np.cumsum(counts)])
    if flat.size < n:
        return np.empty(0, dtype=np.uint64), new_offsets
    h = np.zeros(flat.size - n + 1, dtype=np.uint64)
    for j in range(n):  # Horner's rule over the window, all windows at once
        h = h * _BASE + flat[j : flat.size - n + 1 + j]
    doc = np.repeat(np.arange(lengths.size), lengths)[: h.size]
    valid = np.arange(h.size) + n <= offsets[1:][doc]
    return mix64(h[valid]), new_offsets


def unique_per_doc(flat: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop repeated values inside each document (a document's shingles form a set).

    Values below 2^32 (MinHash shingles are folded to uint32) are sorted in one pass as the
    uint64 key (doc << 32) | value, which orders by document, then value: one radix-friendly
    ``np.sort`` instead of a two-key ``np.lexsort`` (about 13x faster at 30 M shingles).
    Wider values fall back to the lexsort; both give the same result.

    >>> v, off = unique_per_doc(np.array([3, 1, 3, 2, 2], dtype=np.uint64), np.array([0, 3, 5]))
    >>> v.tolist(), off.tolist()
    ([1, 3, 2], [0, 2, 3])
    """
    flat, offsets = np.asarray(flat), np.asarray(offsets, dtype=np.int64)
    n_docs = offsets.size - 1
    lengths = np.diff(offsets)
    if (
        flat.size == 0
        or flat.dtype == np.uint32
        or (flat.dtype.kind in "ui" and int(flat.min()) >= 0 and int(flat.max()) < 2**32)
    ):
        key = np.repeat(np.arange(n_docs, dtype=np.uint64), lengths)
        key <<= np.uint64(32)
        key |= flat.astype(np.uint64)
        key.sort(kind="stable")  # already in document order: the merge sort gallops (2x)
        keep = np.empty(key.size, dtype=bool)
        keep[:1] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])
        key = key[keep]
        # document d's values start at the first key >= d << 32
        new_offsets = np.searchsorted(key, np.arange(n_docs + 1, dtype=np.uint64) << np.uint64(32))
        return key.astype(np.uint32).astype(flat.dtype, copy=False), new_offsets.astype(np.int64)
    doc = np.repeat(np.arange(n_docs), lengths)
    order = np.lexsort((flat, doc))
    v, d = flat[order], doc[order]
    keep = np.ones(v.size, dtype=bool)
    keep[1:] = (v[1:] != v[:-1]) | (d[1:] != d[:-1])
    counts = np.bincount(d[keep], minlength=n_docs)
    return v[keep], np.concatenate([[0], np.cumsum(counts)])
