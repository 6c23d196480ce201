"""Line-level and exact-substring deduplication: removing repeated text inside documents.

MinHash (``dedup``) removes whole documents that resemble an earlier one. Two finer tools
remove only the repeated *parts*:

    line dedup         drop every line whose normalised text occurred earlier in the corpus
                       (the boilerplate remover of CCNet and Dolma: Wenzek et al. 2020,
                       arXiv:1911.00359, sec. 3.3)
    exact substring    drop every run of at least L tokens that occurred earlier, found with
                       a suffix array over the whole corpus (Lee et al. 2022,
                       arXiv:2107.06499, sec. 4.1, ExactSubstr; they use L = 50 BPE tokens)

The suffix array is built by prefix doubling (Manber & Myers 1993): after round j every
suffix has the rank of its first 2^j tokens, and one stable sort by (rank[i], rank[i+2^j])
doubles the length. Each round is a numpy sort, so the cost is O(n log n) per round and
O(log m) rounds, m the longest repeat. Two suffixes share their first L tokens exactly when,
with 2^j <= L < 2^(j+1), both their 2^j-ranks at offset 0 and at offset L - 2^j agree (the
overlapping-windows test of a sparse table). Suffixes sharing L tokens are contiguous in the
array; in each such run the earliest position is kept and the others are cut.

Tokens here are whitespace words (``str.split``), so L = 50 words is a little stricter than
Lee et al.'s 50 tokens. Every document ends in a separator token of its own, so no match
crosses a document boundary.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import benchmark
from . import dedup


def line_dedup(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """(texts with repeated lines removed, words removed per document).

    A line is compared after stripping and case folding; the first occurrence in corpus
    order is kept, every later one dropped. Empty lines are kept as they are.

    >>> out, removed = line_dedup(["a b\\nshare this", "c d\\nShare this"])
    >>> out, removed.tolist()
    (['a b\\nshare this', 'c d'], [0, 2])
    """
    _check_texts(texts)
    seen: set[str] = set()
    out, removed = [], np.zeros(len(texts), dtype=np.int64)
    for i, t in enumerate(texts):
        keep = []
        for line in t.split("\n"):
            key = line.strip().casefold()
            if key and key in seen:
                removed[i] += len(line.split())
                continue
            seen.add(key)
            keep.append(line)
        out.append("\n".join(keep))
    return out, removed


def token_ids(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(corpus, offsets): whitespace words as int64 ids, each document closed by its own
    negative separator id; document i owns ``corpus[offsets[i]:offsets[i+1] - 1]``.

    >>> seq, off = token_ids(["x y", "y"])
    >>> seq.tolist(), off.tolist()
    ([0, 1, -1, 1, -2], [0, 3, 5])
    """
    _check_texts(texts)
    vocab: dict[str, int] = {}
    ids: list[int] = []
    offsets = [0]
    for i, t in enumerate(texts):
        ids.extend(vocab.setdefault(w, len(vocab)) for w in t.split())
        ids.append(-1 - i)
        offsets.append(len(ids))
    return np.array(ids, dtype=np.int64), np.array(offsets, dtype=np.int64)


def suffix_array(
    seq: np.ndarray, *, max_len: int | None = None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """(sa, ranks): the suffix array of ``seq`` and ranks[j], the rank of every suffix's
    first 2^j tokens (equal prefixes, equal ranks), by prefix doubling.

    Doubling stops when all ranks are distinct or 2^j reaches ``max_len`` (then ``sa`` is
    sorted by the first ``max_len``-or-more tokens only, which is all dedup needs).

    >>> sa, _ = suffix_array(np.array([1, 0, 1, 0, 2]))   # b a b a c: abac < ac < babac < bac < c
    >>> sa.tolist()
    [1, 3, 0, 2, 4]
    """
    seq = np.asarray(seq)
    if seq.ndim != 1 or seq.size == 0 or not np.issubdtype(seq.dtype, np.integer):
        raise ValueError(
            f"seq must be a non-empty 1-D integer array, got shape {seq.shape}, dtype {seq.dtype}"
        )
    if max_len is not None and max_len < 1:
        raise ValueError(f"max_len must be >= 1 or None, got {max_len!r}")
    n = seq.size
    rank = np.unique(seq, return_inverse=True)[1].astype(np.int64)
    ranks = [rank]
    sa = np.argsort(rank, kind="stable")
    k = 1
    while rank[sa[-1]] < n - 1 and (max_len is None or k < max_len):
        second = np.full(n, -1, dtype=np.int64)
        second[: n - k] = rank[k:]
        sa = np.lexsort((second, rank))  # sort by (rank[i], rank[i + k])
        r, s = rank[sa], second[sa]
        new_group = np.r_[True, (r[1:] != r[:-1]) | (s[1:] != s[:-1])]
        rank = np.empty(n, dtype=np.int64)
        rank[sa] = np.cumsum(new_group) - 1
        ranks.append(rank)
        k *= 2
    return sa, ranks


def repeated_mask(seq: np.ndarray, *, min_tokens: int) -> np.ndarray:
    """True for every token inside a run of >= ``min_tokens`` tokens that occurred earlier.

    For each group of suffixes sharing their first ``min_tokens`` tokens, all but the
    earliest start a repeat; the ``min_tokens`` tokens from each such start are marked.

    >>> s = np.array([5, 6, 7, -1, 9, 5, 6, 7, -2])
    >>> repeated_mask(s, min_tokens=3).astype(int).tolist()
    [0, 0, 0, 0, 0, 1, 1, 1, 0]
    """
    if int(min_tokens) != min_tokens or min_tokens < 1:
        raise ValueError(f"min_tokens must be an integer >= 1, got {min_tokens!r}")
    seq = np.asarray(seq)
    n = seq.size
    sa, ranks = suffix_array(seq, max_len=min_tokens)
    j = int(np.floor(np.log2(min_tokens)))
    mask = np.zeros(n, dtype=bool)
    if j >= len(ranks):  # every 2^(len-1)-prefix is unique already: nothing repeats
        return mask
    rank = np.r_[ranks[j], np.arange(-1, -min_tokens - 2, -1)]  # pads never match
    shift = min_tokens - (1 << j)
    a, b = sa[:-1], sa[1:]
    same = (rank[a] == rank[b]) & (rank[a + shift] == rank[b + shift])
    same &= (a + min_tokens <= n) & (b + min_tokens <= n)
    # runs of consecutive suffixes that share the first min_tokens tokens
    starts = np.r_[True, ~same]
    run_id = np.cumsum(starts) - 1
    first = np.full(run_id[-1] + 1, n, dtype=np.int64)
    np.minimum.at(first, run_id, sa)
    cut = sa[sa != first[run_id]]
    delta = np.zeros(n + 1, dtype=np.int64)
    np.add.at(delta, cut, 1)
    np.add.at(delta, np.minimum(cut + min_tokens, n), -1)
    return np.cumsum(delta[:n]) > 0


def exact_substring_dedup(
    texts: list[str], *, min_tokens: int = 50
) -> tuple[list[str], np.ndarray]:
    """(texts with every earlier-seen run of >= ``min_tokens`` words cut, words cut per text).

    Lee et al. 2022, sec. 4.1 (ExactSubstr, L = 50 tokens). A cut joins the words on either
    side with one space; line breaks inside a document are not kept (the words are).

    >>> a = " ".join(f"w{i}" for i in range(60))
    >>> out, cut = exact_substring_dedup([a, "intro " + a], min_tokens=50)
    >>> out[1], cut.tolist()
    ('intro', [0, 60])
    """
    seq, offsets = token_ids(texts)
    mask = repeated_mask(seq, min_tokens=min_tokens)
    cut = np.add.reduceat(mask, offsets[:-1]) if len(texts) else np.zeros(0, dtype=np.int64)
    out = []
    for i, t in enumerate(texts):
        words = t.split()
        keep = ~mask[offsets[i] : offsets[i] + len(words)]
        out.append(" ".join(w for w, k in zip(words, keep, strict=False) if k) if cut[i] else t)
    return out, cut.astype(np.int64)


def compare_removals(
    texts: list[str], kinds: list[str], *, minhash_removed: np.ndarray, min_tokens: int = 50
) -> dict[str, dict[str, float]]:
    """Share of each kind's words that each method removes: line dedup, exact substrings
    (``min_tokens``), and MinHash (the documents in ``minhash_removed``, whole).

    >>> t = ["a b c\\nshared line here", "d e f\\nshared line here"]
    >>> r = compare_removals(t, ["clean", "clean"], minhash_removed=np.array([False, False]))
    >>> r["line dedup"]["clean"], r["MinHash"]["clean"]
    (0.25, 0.0)
    """
    kinds_arr = np.asarray(kinds)
    gone = np.asarray(minhash_removed, dtype=bool)
    if kinds_arr.shape != (len(texts),) or gone.shape != (len(texts),):
        raise ValueError(f"kinds and minhash_removed need one entry per text ({len(texts)})")
    n_words = np.array([len(t.split()) for t in texts], dtype=float)
    removed = {
        "line dedup": line_dedup(texts)[1].astype(float),
        "exact substring": exact_substring_dedup(texts, min_tokens=min_tokens)[1].astype(float),
        "MinHash": np.where(gone, n_words, 0.0),
    }
    return {
        m: {
            k: float(r[kinds_arr == k].sum() / max(n_words[kinds_arr == k].sum(), 1.0))
            for k in dict.fromkeys(kinds)
        }
        | {"all": float(r.sum() / max(n_words.sum(), 1.0))}
        for m, r in removed.items()
    }


def _minhash(texts: list[str]) -> np.ndarray:
    """FineWeb's near-dedup stage (5-word shingles, 14 bands of 8): documents to remove."""
    flat, off = dedup.shingles(texts, k=5)
    sig = dedup.signatures(flat, off, dedup.permutations(112, rng=np.random.default_rng(0)))
    pairs = dedup.candidate_pairs(sig, n_bands=14, n_rows=8)
    return dedup.duplicates_to_remove(dedup.clusters(len(texts), pairs))


def cost_s(
    texts: list[str], n_docs: list[int], *, n_repeats: int = 3, min_tokens: int = 50
) -> dict[str, np.ndarray]:
    """Wall-clock seconds (best of ``n_repeats``) of each method on the first n documents,
    for each n in ``n_docs``. Machine-dependent: print it, do not compare it."""
    if not n_docs or any(n < 2 or n > len(texts) for n in n_docs):
        raise ValueError(f"n_docs must be non-empty sizes in [2, {len(texts)}], got {n_docs!r}")

    def substrings(t: list[str]) -> object:
        return exact_substring_dedup(t, min_tokens=min_tokens)

    methods: dict[str, Callable[[list[str]], object]] = {
        "line dedup": line_dedup,
        "exact substring": substrings,
        "MinHash": _minhash,
    }

    def timed(f: Callable[[list[str]], object], n: int) -> float:
        return benchmark.best_time_s(lambda: f(texts[:n]), n_repeats=n_repeats)

    return {m: np.array([timed(f, n) for n in n_docs]) for m, f in methods.items()}


def fitted_exponent(sizes: np.ndarray, times_s: np.ndarray) -> float:
    """The slope a of log t = a log n + c, by least squares: cost grows as n^a.

    >>> round(fitted_exponent(np.array([1.0, 2.0, 4.0]), np.array([3.0, 12.0, 48.0])), 6)
    2.0
    """
    sizes, times_s = np.asarray(sizes, float), np.asarray(times_s, float)
    if sizes.shape != times_s.shape or sizes.size < 2 or (sizes <= 0).any() or (times_s <= 0).any():
        raise ValueError("sizes and times_s must be positive arrays of one shape, length >= 2")
    return float(np.polyfit(np.log(sizes), np.log(times_s), 1)[0])


def _check_texts(texts: Sequence[str]) -> None:  # a str is a Sequence[str]: refused below
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise ValueError(
            "texts must be a list of str (one per document), not a single str or other objects"
        )
