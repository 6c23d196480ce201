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

Home chapter: the data chapter (chapters/02_data).
"""

from __future__ import annotations

import numpy as np


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


def suffix_array(seq: np.ndarray, *, max_len: int | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
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
        raise ValueError(f"seq must be a non-empty 1-D integer array, got shape {seq.shape}, "
                         f"dtype {seq.dtype}")
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
        sa = np.lexsort((second, rank))          # sort by (rank[i], rank[i + k])
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


def exact_substring_dedup(texts: list[str], *, min_tokens: int = 50) -> tuple[list[str], np.ndarray]:
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
        keep = ~mask[offsets[i]: offsets[i] + len(words)]
        out.append(" ".join(w for w, k in zip(words, keep) if k) if cut[i] else t)
    return out, cut.astype(np.int64)


def _check_texts(texts: list[str]) -> None:
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise ValueError("texts must be a list of str (one per document), not a single str "
                         "or other objects")
