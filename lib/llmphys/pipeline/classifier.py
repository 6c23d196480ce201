"""A learned quality filter: a planted quality signal and a hashed n-gram logistic regression.

Heuristic rules (``quality``) see form: length, symbols, repetition. The classifiers that
FineWeb-Edu (Penedo et al. 2024, arXiv:2406.17557, sec. 4) and DCLM (Li et al. 2024,
arXiv:2406.11794, sec. 4.4) filter with see *content*: which words a page uses. Word salad
has no content, so the crawl gets one planted deterministically:

    every page has a latent educational value e ~ Beta(2, 2);
    each of its words is replaced, with probability ``rate``, by a word of a "register":
    with probability e from the language's educational register, else from its chatty one
    (two disjoint sets of 10 mid-frequency words of the page's language, fixed by a seed).

The answer key keeps a page when e >= 1/2 and it is not spam or low quality. Annotators, like
the LLM raters of FineWeb-Edu, see e with noise (sd 0.1) and mark every defective page low;
the classifier is trained on their labels, never on the key.

The model is fastText's supervised mode reduced to its linear core (Joulin et al. 2017,
arXiv:1607.01759): unigrams (optionally bigrams) hashed into B buckets, each page's counts
scaled to unit length, and a logistic regression p = sigmoid(w . x + b) fitted by
full-batch Adam on the L2-regularised log loss. All of it is numpy on a CSR matrix.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses
import functools
import zlib

import numpy as np

from .. import specs
from . import crawl as crawl_mod
from . import dedup, quality, text
from .words import word_table

N_REGISTER = 10  # words per register
PLANT_RATE = 0.1  # probability that a word is replaced by a register word
ANNOTATOR_SD = 0.1  # noise of the annotators' view of e
N_BUCKETS = 2**14  # hash buckets of the features
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlantedQuality:
    """The crawl's texts with the quality signal planted, and its answer key."""

    texts: list[str]
    edu: np.ndarray  # latent educational value e in [0, 1], one per document
    annotator: np.ndarray  # bool: the noisy label a classifier is trained on
    keep: np.ndarray  # bool: the answer key (e >= 1/2 and not spam/low quality)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PublishedFilter:
    """A published classifier filter, as ``data/quality_classifiers.toml`` states it."""

    key: str
    name: str
    classifier: str
    threshold: str
    source: str
    quote: str
    as_of: str
    kept_tokens: float | None = None
    pool_tokens: float | None = None
    kept_fraction: float | None = None
    binary_f1: float | None = None
    mmlu_7b: float | None = None
    train_tokens: float | None = None

    @property
    def kept_share(self) -> float:
        """Fraction of the pool the filter keeps (stated, or kept/pool tokens)."""
        if self.kept_fraction is not None:
            return self.kept_fraction
        if self.kept_tokens is None or self.pool_tokens is None:
            raise ValueError(f"{self.key}: needs kept_fraction or both kept_tokens and pool_tokens")
        return self.kept_tokens / self.pool_tokens


@functools.cache
def published_filters() -> dict[str, PublishedFilter]:
    """FineWeb-Edu's and DCLM's classifier filters from ``data/quality_classifiers.toml``.

    >>> f = published_filters()
    >>> round(f["fineweb_edu"].kept_share, 3), f["dclm"].kept_share, f["fineweb_edu"].binary_f1
    (0.087, 0.1, 0.82)
    """
    return dict(specs.load_registry("quality_classifiers.toml", PublishedFilter))


@functools.cache
def registers(lang: str, *, seed: int = 19) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(educational, chatty): two disjoint sets of ``N_REGISTER`` words of ``lang``, drawn
    without replacement from its frequency ranks 500 to 3000 with a fixed ``seed``.

    >>> edu, chat = registers("en")
    >>> len(edu), len(chat), bool(set(edu) & set(chat))
    (10, 10, False)
    """
    if lang not in crawl_mod.LANGUAGES:
        raise ValueError(
            f"lang={lang!r} is not a crawl language; allowed: {list(crawl_mod.LANGUAGES)}"
        )
    words = word_table(lang)[0][500:3000]
    pick = np.random.default_rng([seed, zlib.crc32(lang.encode())]).choice(
        len(words), size=2 * N_REGISTER, replace=False
    )
    chosen = [words[i] for i in pick]
    return tuple(chosen[:N_REGISTER]), tuple(chosen[N_REGISTER:])


def plant_quality(
    crawl: crawl_mod.Crawl,
    *,
    rng: np.random.Generator,
    rate: float = PLANT_RATE,
    annotator_sd: float = ANNOTATOR_SD,
) -> PlantedQuality:
    """Plant the register signal into every page's main text; return texts and answer key.

    The crawl itself is unchanged (its numbers elsewhere in the chapter stay as they are);
    the planted texts are a new, deterministic function of (crawl, rng).

    >>> c = crawl_mod.generate_crawl(60, rng=np.random.default_rng(0))
    >>> pq = plant_quality(c, rng=np.random.default_rng(1))
    >>> len(pq.texts) == len(c.documents), bool(0 <= pq.edu.min() <= pq.edu.max() <= 1)
    (True, True)
    """
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    if annotator_sd < 0:
        raise ValueError(f"annotator_sd must be >= 0, got {annotator_sd!r}")
    docs = crawl.documents
    edu = rng.beta(2.0, 2.0, size=len(docs))
    texts = []
    for d, e in zip(docs, edu, strict=False):
        good, chatty = registers(d.lang)
        lines = []
        for line in d.main_text.split("\n"):
            w = line.split(" ")
            hit = np.flatnonzero(rng.random(len(w)) < rate)
            from_good = rng.random(hit.size) < e
            pick = rng.integers(N_REGISTER, size=hit.size)
            for i, g, k in zip(hit, from_good, pick, strict=False):
                w[i] = (good if g else chatty)[k]
            lines.append(" ".join(w))
        texts.append("\n".join(lines))
    defective = np.array([d.kind in ("spam", "low_quality") for d in docs])
    annotator = (edu + rng.normal(0.0, annotator_sd, size=len(docs)) >= 0.5) & ~defective
    return PlantedQuality(texts=texts, edu=edu, annotator=annotator, keep=(edu >= 0.5) & ~defective)


def hashed_features(
    texts: list[str], *, n_buckets: int = N_BUCKETS, ngrams: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR (indices, offsets, values) of each text's hashed 1..``ngrams``-grams, unit length.

    Word hashes are CRC-32 of the word (stable across runs, unlike Python's ``hash``); an
    n-gram's is a multiplicative mix of its words' hashes, taken modulo ``n_buckets``. Each
    row's counts are divided by their Euclidean norm, so long and short pages weigh alike
    (fastText averages its input vectors for the same reason).

    >>> idx, off, val = hashed_features(["a b a"], n_buckets=64, ngrams=2)
    >>> off.tolist(), round(float((val**2).sum()), 6)
    ([0, 4], 1.0)
    """
    if int(n_buckets) != n_buckets or n_buckets < 2:
        raise ValueError(f"n_buckets must be an integer >= 2, got {n_buckets!r}")
    if ngrams not in (1, 2, 3):
        raise ValueError(f"ngrams must be 1, 2 or 3, got {ngrams!r}")
    vocab: dict[str, int] = {}
    rows, offsets = [], [0]
    for t in texts:
        ids = np.array([vocab.setdefault(w, len(vocab)) for w in text.words(t)], dtype=np.int64)
        rows.append(ids)
    word_hash = np.array([zlib.crc32(w.encode()) for w in vocab], dtype=np.uint64)
    indices, values = [], []
    for ids in rows:
        h = word_hash[ids]
        grams = [h]
        for n in range(2, ngrams + 1):
            if ids.size >= n:
                g = h[: ids.size - n + 1].copy()
                for k in range(1, n):
                    g = g * _GOLDEN + h[k : ids.size - n + 1 + k]
                grams.append(g)
        b, counts = np.unique(np.concatenate(grams) % np.uint64(n_buckets), return_counts=True)
        indices.append(b.astype(np.int64))
        values.append(counts / max(float(np.sqrt((counts**2).sum())), 1.0))
        offsets.append(offsets[-1] + b.size)
    return (
        np.concatenate(indices) if indices else np.zeros(0, np.int64),
        np.array(offsets, dtype=np.int64),
        np.concatenate(values) if values else np.zeros(0),
    )


def _matvec(idx, off, val, w):
    """X @ w for the CSR matrix X, one entry per row (empty rows give 0)."""
    prod = np.r_[val * w[idx], 0.0]
    out = np.add.reduceat(prod, np.minimum(off[:-1], prod.size - 1))
    return np.where(np.diff(off) > 0, out, 0.0)


def fit_logistic(
    features: tuple[np.ndarray, np.ndarray, np.ndarray],
    labels: np.ndarray,
    *,
    n_buckets: int = N_BUCKETS,
    l2: float = 1e-4,
    n_steps: int = 200,
    learning_rate: float = 0.5,
) -> tuple[np.ndarray, float]:
    """(weights, bias) minimising mean log loss + ``l2`` |w|^2 by full-batch Adam.

    The gradient is X^T (p - y) / n, computed with one ``bincount`` over the CSR entries.

    >>> X = (np.array([0, 1]), np.array([0, 1, 2]), np.array([1.0, 1.0]))
    >>> w, b = fit_logistic(X, np.array([True, False]), n_buckets=2)
    >>> bool(w[0] > 0 > w[1])
    True
    """
    idx, off, val = features
    y = np.asarray(labels, dtype=float)
    if y.shape != (off.size - 1,):
        raise ValueError(f"labels must have one entry per row ({off.size - 1}), got {y.shape}")
    if l2 < 0 or n_steps < 1 or learning_rate <= 0:
        raise ValueError(
            f"need l2 >= 0, n_steps >= 1, learning_rate > 0; got {l2}, {n_steps}, {learning_rate}"
        )
    theta = np.zeros(n_buckets + 1)  # weights, then the bias
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    row = np.repeat(np.arange(y.size), np.diff(off))
    for t in range(1, n_steps + 1):
        p = 1.0 / (1.0 + np.exp(-(_matvec(idx, off, val, theta[:-1]) + theta[-1])))
        r = (p - y) / y.size
        g = np.r_[
            np.bincount(idx, weights=val * r[row], minlength=n_buckets) + 2 * l2 * theta[:-1],
            r.sum(),
        ]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        theta -= learning_rate * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return theta[:-1], float(theta[-1])


def predict_proba(
    features: tuple[np.ndarray, np.ndarray, np.ndarray], weights: np.ndarray, bias: float
) -> np.ndarray:
    """sigmoid(X w + b): the classifier's probability that each page is worth keeping."""
    idx, off, val = features
    if idx.size and idx.max() >= weights.size:
        raise ValueError(f"features use bucket {idx.max()} but weights has {weights.size}")
    return 1.0 / (1.0 + np.exp(-(_matvec(idx, off, val, weights) + bias)))


def select_rows(
    features: tuple[np.ndarray, np.ndarray, np.ndarray], rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR matrix restricted to ``rows`` (indices into its rows), in that order."""
    idx, off, val = features
    rows = np.asarray(rows, dtype=np.int64)
    parts = [np.arange(off[r], off[r + 1]) for r in rows]
    take = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return idx[take], np.r_[0, np.cumsum(np.diff(off)[rows])].astype(np.int64), val[take]


@dataclasses.dataclass(frozen=True, kw_only=True)
class FilterComparison:
    """Held-out verdicts: ``points[name] = (precision, recall, share kept)`` of each filter's
    KEEP decision, the classifier's scores, the rules' verdict and the answer key."""

    points: dict[str, tuple[float, float, float]]
    scores: np.ndarray
    rules_keep: np.ndarray
    truth: np.ndarray


def compare_filters(
    crawl: crawl_mod.Crawl, *, rng: np.random.Generator, train_fraction: float = 0.5
) -> FilterComparison:
    """Train on the annotators' labels of part of the crawl; judge on the rest against the
    answer key: the heuristic rules, the classifier (p >= 1/2), both in series, and the
    annotators' own labels (the ceiling a classifier trained on them approaches).

    >>> c = crawl_mod.generate_crawl(200, rng=np.random.default_rng(2))
    >>> r = compare_filters(c, rng=np.random.default_rng(19))
    >>> list(r.points), r.points["rules"][1] > 0.9
    (['rules', 'classifier', 'rules + classifier', 'annotators'], True)
    """
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction!r}")
    pq = plant_quality(crawl, rng=rng)
    feats = hashed_features(pq.texts)
    order = rng.permutation(len(pq.texts))
    n_train = round(train_fraction * order.size)
    train, test = order[:n_train], order[n_train:]
    w, b = fit_logistic(select_rows(feats, train), pq.annotator[train])
    scores = predict_proba(select_rows(feats, test), w, b)
    learned = scores >= 0.5
    fails, _ = quality.rule_table(
        [pq.texts[i] for i in test], [crawl.documents[i].lang for i in test]
    )
    rules = np.logical_not(fails.any(axis=1))
    truth = pq.keep[test]
    kept: dict[str, np.ndarray] = {
        "rules": rules,
        "classifier": learned,
        "rules + classifier": rules & learned,
        "annotators": pq.annotator[test],
    }
    points = {k: (*dedup.precision_recall(m, truth), float(m.mean())) for k, m in kept.items()}
    return FilterComparison(points=points, scores=scores, rules_keep=rules, truth=truth)


def precision_recall_curve(
    scores: np.ndarray, truth: np.ndarray, thresholds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) of keeping pages with score >= t, for each threshold t.

    >>> p, r = precision_recall_curve(np.array([0.9, 0.2]), np.array([True, False]),
    ...                               np.array([0.1, 0.5]))
    >>> p.tolist(), r.tolist()
    ([0.5, 1.0], [1.0, 1.0])
    """
    scores, truth = np.asarray(scores), np.asarray(truth, dtype=bool)
    if scores.shape != truth.shape:
        raise ValueError(f"scores {scores.shape} and truth {truth.shape} must have one shape")
    pr = np.array([dedup.precision_recall(scores >= t, truth) for t in np.asarray(thresholds)])
    return pr[:, 0], pr[:, 1]
