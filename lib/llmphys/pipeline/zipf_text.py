"""Deterministic text with a realistic, ever-growing vocabulary: Zipf ranks spelled as words.

Benchmarks of tokenizers and deduplicators need text whose statistics grow with the corpus
the way real text does. Word frequencies follow Zipf's law, p(rank k) proportional to k^-a
(Zipf 1949), and because the rank has no upper bound, the number of distinct words keeps
growing with the number of tokens N as Heaps' law, V(N) proportional to N^(1/a) for a > 1
(Heaps 1978; Baeza-Yates and Navarro 2000 derive beta = 1/a). English has beta of about
0.5 to 0.7, so the default a = 1.4 gives beta of about 0.71, at the upper end. A generator
with a capped vocabulary (the crawl's wordfreq lists) stops producing new words, and a
tokenizer's or a deduplicator's cost then grows more slowly than it would on real text.

Rank k is spelled by writing k in base 40 with one consonant-vowel syllable per digit
(rank 1 is 'be'), so frequent words are short and rare words long (Zipf's law of
abbreviation), every rank has a distinct spelling, and no word comes from any real text.
Sentences of 4 to 24 words start with a capital and end in a full stop; one word in twelve
is followed by a comma.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import numpy as np

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"][:40]
_BASE = len(_SYLLABLES)


def spell(rank: int) -> str:
    """The word of Zipf rank ``rank`` (>= 1): its base-40 digits as syllables.

    >>> [spell(k) for k in (1, 2, 40, 41, 1600)]
    ['be', 'bi', 'beba', 'bebe', 'bebaba']
    """
    if int(rank) != rank or rank < 1:
        raise ValueError(f"rank must be an integer >= 1, got {rank!r}")
    k, out = int(rank), []
    while k:
        k, d = divmod(k, _BASE)
        out.append(_SYLLABLES[d])
    return "".join(reversed(out))


def zipf_ranks(n_words: int, *, rng: np.random.Generator, a: float = 1.4) -> np.ndarray:
    """``n_words`` i.i.d. ranks with p(k) proportional to k^-a, k = 1, 2, ... (no cap).

    >>> zipf_ranks(5, rng=np.random.default_rng(0)).tolist()
    [12, 1, 68, 130, 26]
    """
    if int(n_words) != n_words or n_words < 0:
        raise ValueError(f"n_words must be an integer >= 0, got {n_words!r}")
    if not a > 1.0:
        raise ValueError(f"a must be > 1 (Zipf's law is not normalisable below), got {a!r}")
    return rng.zipf(a, size=int(n_words)).astype(np.int64)


def words(n_words: int, *, rng: np.random.Generator, a: float = 1.4) -> list[str]:
    """``n_words`` Zipf-distributed words (each distinct rank spelled once, then looked up).

    >>> words(4, rng=np.random.default_rng(0))
    ['fi', 'be', 'belo', 'bofa']
    """
    ranks = zipf_ranks(n_words, rng=rng, a=a)
    distinct, inverse = np.unique(ranks, return_inverse=True)
    table = [spell(int(k)) for k in distinct]
    return [table[i] for i in inverse.tolist()]


def text(n_words: int, *, rng: np.random.Generator, a: float = 1.4) -> str:
    """Prose of ``n_words`` Zipf words: capitalised sentences of 4-24 words, some commas.

    >>> text(6, rng=np.random.default_rng(1))
    'Be bi bibe di. Mo bi.'
    """
    w = words(n_words, rng=rng, a=a)
    if not w:
        return ""
    n = len(w)
    comma = rng.random(n) < 1.0 / 12.0
    # sentence ends: cumulative sums of lengths 4..24
    lengths = rng.integers(4, 25, size=n // 4 + 2)
    ends = np.cumsum(lengths) - 1
    is_end = np.zeros(n, dtype=bool)
    is_end[ends[ends < n]] = True
    is_end[-1] = True
    starts = np.r_[0, np.flatnonzero(is_end[:-1]) + 1]
    for i in starts.tolist():
        w[i] = w[i].capitalize()
    for i in np.flatnonzero(is_end).tolist():
        w[i] += "."
    for i in np.flatnonzero(comma & ~is_end).tolist():
        w[i] += ","
    return " ".join(w)


def corpus(
    n_bytes: float,
    *,
    rng: np.random.Generator,
    a: float = 1.4,
    words_per_doc: tuple[int, int] = (200, 1000),
) -> list[str]:
    """Documents of uniformly 200-1000 Zipf words until their UTF-8 size reaches ``n_bytes``.

    All text is ASCII, so bytes equal characters.

    >>> docs = corpus(5000, rng=np.random.default_rng(0))
    >>> len(docs), sum(map(len, docs)) >= 5000
    (2, True)
    """
    if not float(n_bytes) > 0:
        raise ValueError(f"n_bytes must be > 0, got {n_bytes!r}")
    lo, hi = words_per_doc
    if not 1 <= lo <= hi:
        raise ValueError(
            f"words_per_doc must be (lo, hi) with 1 <= lo <= hi, got {words_per_doc!r}"
        )
    docs, total = [], 0
    while total < n_bytes:
        d = text(int(rng.integers(lo, hi + 1)), rng=rng, a=a)
        docs.append(d)
        total += len(d) + 1
    return docs


def documents(
    n_docs: int,
    *,
    rng: np.random.Generator,
    a: float = 1.4,
    words_per_doc: tuple[int, int] = (200, 1000),
    dup_fraction: float = 0.1,
    edit_fraction: float = 0.02,
) -> list[str]:
    """``n_docs`` documents, of which ``dup_fraction`` copy an earlier one with words replaced.

    Each copy replaces ``edit_fraction`` of its source's words with fresh Zipf words, so the
    pair's 5-gram Jaccard similarity is near (1 - e)^5 / (2 - (1 - e)^5), about 0.82 at
    e = 0.02, above FineWeb's LSH threshold of 0.72: the near-duplicates a MinHash-LSH stage
    is built to find.

    >>> docs = documents(20, rng=np.random.default_rng(0))
    >>> len(docs)
    20
    """
    if int(n_docs) != n_docs or n_docs < 1:
        raise ValueError(f"n_docs must be an integer >= 1, got {n_docs!r}")
    if not 0.0 <= dup_fraction < 1.0:
        raise ValueError(f"dup_fraction must lie in [0, 1), got {dup_fraction!r}")
    if not 0.0 <= edit_fraction <= 1.0:
        raise ValueError(f"edit_fraction must lie in [0, 1], got {edit_fraction!r}")
    lo, hi = words_per_doc
    docs: list[str] = []
    for i in range(int(n_docs)):
        if i > 0 and rng.random() < dup_fraction:
            src = docs[int(rng.integers(0, i))].split(" ")
            edit = np.flatnonzero(rng.random(len(src)) < edit_fraction)
            fresh = words(edit.size, rng=rng, a=a)
            for j, w in zip(edit.tolist(), fresh, strict=True):
                src[j] = w
            docs.append(" ".join(src))
        else:
            docs.append(text(int(rng.integers(lo, hi + 1)), rng=rng, a=a))
    return docs
