"""Exact and near-duplicate removal: normalised hashing, MinHash signatures, LSH banding.

Near-duplicates are pages whose sets of word k-grams ("shingles") overlap a lot:
Jaccard J(A, B) = |A ∩ B| / |A ∪ B|. For a random permutation h of shingle space,
P[min h(A) = min h(B)] = J(A, B) (Broder 1997, "On the resemblance and containment of
documents"), so the fraction of H independent min-hashes on which two documents agree
estimates J with standard error sqrt(J (1 - J) / H).

Comparing every pair is O(n^2). LSH banding (Leskovec, Rajaraman and Ullman, "Mining of
Massive Datasets", 3rd ed., sec. 3.4) cuts the H = b r signature rows into b bands of r
rows and calls two documents candidates if they agree on every row of at least one band:

    P(candidate | J = s) = 1 - (1 - s^r)^b,      threshold t ≈ (1/b)^(1/r),

an S-curve that rises steepest near t. FineWeb uses 5-gram shingles and b = 14 bands of
r = 8 (Penedo et al. 2024, arXiv:2406.17557, sec. 3.4), t ≈ 0.72.

Everything below is vectorised: shingles are hashed with numpy (``text.ngram_hashes``),
each permutation is h_i(x) = a_i fmix32(x) + b_i mod 2^32 with a_i odd (a bijection; the
"affine32" scheme of datasketch 2), and a signature is a segmented minimum
(``np.minimum.reduceat``) over each document's shingles.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import text as text_mod

MAX_HASH = np.uint32(0xFFFFFFFF)


def exact_duplicates(texts: list[str]) -> np.ndarray:
    """True for every text whose normalised form (``text.normalize``) appeared earlier.

    >>> exact_duplicates(["A b.", "a  B", "c"]).tolist()
    [False, True, False]
    """
    seen: set[bytes] = set()
    out = np.zeros(len(texts), dtype=bool)
    for i, t in enumerate(texts):
        digest = hashlib.blake2b(text_mod.normalize(t).encode(), digest_size=16).digest()
        out[i] = digest in seen
        seen.add(digest)
    return out


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser (Appleby 2011): every input bit flips half the output bits."""
    h = np.asarray(h, dtype=np.uint32)
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def shingles(
    texts: list[str], *, k: int = 5, chunk_docs: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's set of word k-grams, hashed to uint32, in CSR form (flat, offsets).

    Texts are hashed ``chunk_docs`` at a time, so the uint64 temporaries of word and n-gram
    hashing stay a few MB however large the corpus; only the uint32 result grows with it.

    >>> flat, off = shingles(["a b c d e f", "x"], k=5)
    >>> off.tolist()
    [0, 2, 2]
    """
    if int(chunk_docs) != chunk_docs or chunk_docs < 1:
        raise ValueError(f"chunk_docs must be an integer >= 1, got {chunk_docs!r}")
    parts, sizes = [np.empty(0, dtype=np.uint32)], [np.empty(0, dtype=np.int64)]
    for s in range(0, len(texts), int(chunk_docs)):
        flat, offsets = text_mod.corpus_word_hashes(texts[s : s + int(chunk_docs)])
        grams, goff = text_mod.ngram_hashes(flat, offsets, k)
        folded = ((grams >> np.uint64(32)) ^ grams).astype(np.uint32)
        v, voff = text_mod.unique_per_doc(folded, goff)
        parts.append(v)
        sizes.append(np.diff(voff))
    return np.concatenate(parts), np.concatenate([[0], np.cumsum(np.concatenate(sizes))])


def permutations(n_hashes: int, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(a, b): ``n_hashes`` affine permutations of 32-bit space, a odd so each is a bijection."""
    if int(n_hashes) != n_hashes or n_hashes < 1:
        raise ValueError(f"n_hashes must be an integer >= 1, got {n_hashes!r}")
    a = rng.integers(0, 2**32, size=int(n_hashes), dtype=np.uint64).astype(np.uint32) | np.uint32(1)
    b = rng.integers(0, 2**32, size=int(n_hashes), dtype=np.uint64).astype(np.uint32)
    return a, b


def signatures(
    flat: np.ndarray,
    offsets: np.ndarray,
    perms: tuple[np.ndarray, np.ndarray],
    *,
    chunk_bytes: float = 4 * 2**20,
) -> np.ndarray:
    """MinHash signatures, shape (n_docs, n_hashes) uint32; an empty document gets MAX_HASH.

    sig[d, i] = min over shingles x of d of (a_i fmix32(x) + b_i) mod 2^32. Documents are
    taken in chunks whose (n_hashes, n_shingles) block of permuted hashes fits in about
    ``chunk_bytes`` (default 4 MiB, well inside a 32 MiB last-level cache), all permutations
    at once, so the temporary is written and reduced while it is still in cache and never
    grows with the corpus (the old loop over blocks of 16 permutations built a 16 x n_shingles
    temporary: 2 GB at 50,000 long documents).

    >>> sig = signatures(np.array([5, 9], dtype=np.uint32), np.array([0, 2, 2]),
    ...                  (np.array([1], dtype=np.uint32), np.array([0], dtype=np.uint32)))
    >>> sig[:, 0].tolist() == [int(fmix32(np.array([5, 9])).min()), int(MAX_HASH)]
    True
    """
    a, b = (np.asarray(p, dtype=np.uint32) for p in perms)
    offsets = np.asarray(offsets, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"perms must be two equal 1-d arrays, got shapes {a.shape}, {b.shape}")
    if float(chunk_bytes) <= 0:
        raise ValueError(f"chunk_bytes must be > 0, got {chunk_bytes!r}")
    n_docs = offsets.size - 1
    sig = np.full((n_docs, a.size), MAX_HASH, dtype=np.uint32)
    rows = np.flatnonzero(np.diff(offsets) > 0)
    if rows.size == 0:
        return sig
    per_chunk = max(int(chunk_bytes // (4 * a.size)), 1)  # shingles per chunk
    starts = offsets[rows]
    i = 0
    while i < rows.size:
        # the last non-empty document that still starts inside this chunk's shingle budget
        j = max(int(np.searchsorted(starts, starts[i] + per_chunk, side="left")), i + 1)
        lo, hi = starts[i], offsets[rows[j - 1] + 1]
        # (n_hashes, shingles): each row one permutation, contiguous for the SIMD multiply and
        # the segmented min; uint32 arithmetic wraps mod 2^32
        phv = a[:, None] * fmix32(flat[lo:hi])[None, :]
        phv += b[:, None]
        sig[rows[i:j]] = np.minimum.reduceat(phv, starts[i:j] - lo, axis=1).T
        i = j
    return sig


def exact_jaccard(flat: np.ndarray, offsets: np.ndarray, i: int, j: int) -> float:
    """|A ∩ B| / |A ∪ B| of the shingle sets of documents i and j (1.0 if both are empty)."""
    a, b = flat[offsets[i] : offsets[i + 1]], flat[offsets[j] : offsets[j + 1]]
    union = np.union1d(a, b).size
    return np.intersect1d(a, b).size / union if union else 1.0


def estimated_jaccard(sig: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Fraction of signature rows on which each pair (i, j) agrees: an unbiased estimate of J."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return np.mean(sig[pairs[:, 0]] == sig[pairs[:, 1]], axis=1)


def s_curve(s: np.ndarray | float, *, n_bands: int, n_rows: int) -> np.ndarray | float:
    """Probability that a pair with Jaccard s becomes an LSH candidate: 1 - (1 - s^r)^b.

    >>> round(float(s_curve(0.8, n_bands=14, n_rows=8)), 3)   # FineWeb's setting
    0.924
    """
    _check_bands(n_bands, n_rows)
    return 1.0 - (1.0 - np.asarray(s, dtype=float) ** n_rows) ** n_bands


def lsh_threshold(*, n_bands: int, n_rows: int) -> float:
    """The Jaccard at which the S-curve is steepest, approximately (1/b)^(1/r) (MMDS sec. 3.4.3).

    >>> round(lsh_threshold(n_bands=14, n_rows=8), 3)
    0.719
    """
    _check_bands(n_bands, n_rows)
    return (1.0 / n_bands) ** (1.0 / n_rows)


def best_bands(
    n_hashes: int, threshold: float, *, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """(b, r) with b r <= n_hashes minimising the weighted area of false positives below the
    threshold and false negatives above it (the criterion of datasketch's MinHashLSH).

    >>> best_bands(128, 0.8)
    (9, 13)
    """
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must lie in (0, 1), got {threshold!r}")
    s = np.linspace(0.0, 1.0, 2001)
    best, best_err = (1, 1), np.inf
    for b in range(1, n_hashes + 1):
        r = np.arange(1, n_hashes // b + 1)
        p = 1.0 - (1.0 - s[None, :] ** r[:, None]) ** b
        fp = np.trapezoid(np.where(s <= threshold, p, 0.0), s, axis=1)
        fn = np.trapezoid(np.where(s >= threshold, 1.0 - p, 0.0), s, axis=1)
        err = fp_weight * fp + fn_weight * fn
        k = int(np.argmin(err))
        if err[k] < best_err - 1e-12:
            best, best_err = (b, int(r[k])), err[k]
    return best


def candidate_pairs(sig: np.ndarray, *, n_bands: int, n_rows: int) -> np.ndarray:
    """Pairs (i < j) that agree on all rows of at least one band, shape (n_pairs, 2), sorted."""
    _check_bands(n_bands, n_rows)
    if n_bands * n_rows > sig.shape[1]:
        raise ValueError(
            f"n_bands * n_rows = {n_bands * n_rows} exceeds the {sig.shape[1]} signature rows"
        )
    found = []
    for band in range(n_bands):
        rows = np.ascontiguousarray(sig[:, band * n_rows : (band + 1) * n_rows])
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * n_rows))).ravel()
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        sizes = np.diff(np.r_[starts, keys.size])
        for s0, size in zip(starts[sizes > 1], sizes[sizes > 1], strict=True):
            members = np.sort(order[s0 : s0 + size])
            i, j = np.triu_indices(size, k=1)
            found.append(np.stack([members[i], members[j]], axis=1))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    return np.unique(np.concatenate(found).astype(np.int64), axis=0)


def clusters(n_docs: int, pairs: np.ndarray) -> np.ndarray:
    """Connected-component label of each document in the graph whose edges are ``pairs``."""
    from scipy.sparse import coo_matrix  # imported here: scipy costs ~0.3 s to import
    from scipy.sparse.csgraph import connected_components

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n_docs, n_docs))
    return connected_components(graph, directed=False)[1]


def duplicates_to_remove(labels: np.ndarray) -> np.ndarray:
    """True for every document after the first of its cluster (keep one copy of each).

    >>> duplicates_to_remove(np.array([0, 1, 0, 2, 1])).tolist()
    [False, False, True, False, True]
    """
    labels = np.asarray(labels)
    _, first = np.unique(labels, return_index=True)
    out = np.ones(labels.size, dtype=bool)
    out[first] = False
    return out


def precision_recall(predicted: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(precision, recall) of a boolean removal mask against the true one.

    >>> precision_recall(np.array([True, True, False]), np.array([True, False, True]))
    (0.5, 0.5)
    """
    predicted, truth = np.asarray(predicted, bool), np.asarray(truth, bool)
    tp = float(np.sum(predicted & truth))
    return (
        tp / float(predicted.sum()) if predicted.any() else 1.0,
        tp / float(truth.sum()) if truth.any() else 1.0,
    )


def _check_bands(n_bands: int, n_rows: int) -> None:
    for name, v in (("n_bands", n_bands), ("n_rows", n_rows)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
