"""A word-list toxicity filter and its false-positive rate, measured and in closed form.

C4 dropped every page containing any word of a public list of "bad words" (Raffel et al.
2020, arXiv:1910.10683, sec. 2.2); Dodge et al. 2021 (arXiv:2104.08758, sec. 5) found that
the rule removed disproportionately text about and by minorities, and medical and legal
text. The arithmetic of that failure: if the listed words make up a share q of a language's
running words, a page of n words with no toxic intent holds k ~ Binomial(n, q) of them,
and a rule "at least m hits" flags it with probability

    FPR(n) = P(k >= m) = 1 - sum_{k < m} C(n, k) q^k (1 - q)^(n - k).

For m = 1 that is 1 - (1 - q)^n, which grows with page length: a list filter removes long
pages for using ordinary words. The crawl draws words at their real frequencies (wordfreq),
so its pages carry listed words at their natural rate q; planted toxic pages carry them at
a higher, chosen rate, which gives the filter something to find.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence

import numpy as np

from .. import specs
from . import crawl as crawl_mod
from . import text
from .words import word_table

TOXIC_SHARE = 0.1  # share of pages made toxic by plant_toxicity
TOXIC_RATE = 0.02  # probability that a word of a toxic page is replaced by a listed word


@dataclasses.dataclass(frozen=True, kw_only=True)
class WordList:
    """A toxicity word list from ``data/toxicity_words.toml``."""

    key: str
    lang: str
    source: str
    licence: str
    words: tuple[str, ...]


@functools.cache
def word_list(key: str = "english") -> WordList:
    """The list stored under ``key`` in ``data/toxicity_words.toml``.

    >>> wl = word_list()
    >>> wl.lang, len(wl.words), wl.licence
    ('en', 20, 'CC0-1.0')
    """
    table = specs.load_registry("toxicity_words.toml", WordList)
    if key not in table:
        raise KeyError(f"unknown word list {key!r}; known: {', '.join(sorted(table))}")
    return table[key]


def hits(texts: Sequence[str], words: tuple[str, ...] | None = None) -> np.ndarray:
    """Number of listed words (whole words, case-folded) in each text.

    >>> hits(["What the hell, Hell!", "hello"]).tolist()
    [2, 0]
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of str, not a single str")
    listed = frozenset(word_list().words if words is None else words)
    return np.array([sum(w in listed for w in text.words(t)) for t in texts], dtype=np.int64)


def listed_share(lang: str, words: tuple[str, ...] | None = None) -> float:
    """q: the share of running words of ``lang`` (wordfreq, as the crawl draws them) that
    are on the list.

    >>> round(listed_share("en"), 4)
    0.0023
    """
    if lang not in crawl_mod.LANGUAGES:
        raise ValueError(
            f"lang={lang!r} is not a crawl language; allowed: {list(crawl_mod.LANGUAGES)}"
        )
    listed = frozenset(word_list().words if words is None else words)
    table, p = word_table(lang)
    return float(sum(pi for w, pi in zip(table, p, strict=False) if w in listed))


def false_positive_rate(
    n_words: int | np.ndarray, share: float, *, min_hits: int = 1
) -> np.ndarray:
    """P(Binomial(n_words, share) >= min_hits): the chance a page of n words is flagged.

    >>> round(float(false_positive_rate(300, 0.0025)), 3)    # 1 - 0.9975^300
    0.528
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    if int(min_hits) != min_hits or min_hits < 1:
        raise ValueError(f"min_hits must be an integer >= 1, got {min_hits!r}")
    n = np.atleast_1d(np.asarray(n_words, dtype=np.int64))
    below = np.zeros(n.shape)
    for k in range(int(min_hits)):
        coef = np.array([math.comb(int(m), k) if m >= k else 0 for m in n], dtype=float)
        below += coef * share**k * (1 - share) ** np.maximum(n - k, 0)
    out = 1.0 - below
    return out if np.ndim(n_words) else out[0]


def min_hits_for_rate(n_words: int, share: float, *, max_rate: float) -> int:
    """Smallest m with P(Binomial(n_words, share) >= m) < max_rate: the hit threshold a
    filter needs so that fewer than ``max_rate`` of clean pages of ``n_words`` are flagged.

    >>> [min_hits_for_rate(1000, q, max_rate=0.01) for q in (0.002345, 0.0023)]
    [8, 7]
    """
    if not 0.0 < max_rate <= 1.0:
        raise ValueError(f"max_rate must lie in (0, 1], got {max_rate!r}")
    if int(n_words) != n_words or n_words < 1:
        raise ValueError(f"n_words must be an integer >= 1, got {n_words!r}")
    for m in range(1, int(n_words) + 2):
        if float(false_positive_rate(int(n_words), share, min_hits=m)) < max_rate:
            return m
    raise AssertionError("unreachable: the tail at m = n_words + 1 is 0")


def share_at_rate(n_words: int, *, min_hits: int, rate: float) -> float:
    """The listed-word share q at which P(Binomial(n_words, q) >= min_hits) equals ``rate``.

    The tail rises with q, so bisection on (0, 1) finds it to 1e-12 relative; below this q a
    threshold of ``min_hits`` flags fewer than ``rate`` of clean pages.

    >>> round(100 * share_at_rate(1000, min_hits=7, rate=0.01), 4)  # percent
    0.2335
    """
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    if int(min_hits) != min_hits or min_hits < 1 or min_hits > n_words:
        raise ValueError(f"min_hits must be an integer in [1, n_words], got {min_hits!r}")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if float(false_positive_rate(int(n_words), mid, min_hits=int(min_hits))) < rate:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def plant_toxicity(
    texts: list[str],
    *,
    rng: np.random.Generator,
    share: float = TOXIC_SHARE,
    rate: float = TOXIC_RATE,
    words: tuple[str, ...] | None = None,
) -> tuple[list[str], np.ndarray]:
    """Make a ``share`` of the texts toxic: each of their words is replaced, with
    probability ``rate``, by a listed word. Returns (texts, is_toxic)."""
    if not 0.0 <= share <= 1.0 or not 0.0 < rate < 1.0:
        raise ValueError(f"need share in [0, 1] and rate in (0, 1); got {share!r}, {rate!r}")
    listed = word_list().words if words is None else words
    toxic = rng.random(len(texts)) < share
    out = list(texts)
    for i in np.flatnonzero(toxic):
        lines = []
        for line in out[i].split("\n"):
            w = line.split(" ")
            for j in np.flatnonzero(rng.random(len(w)) < rate):
                w[j] = listed[int(rng.integers(len(listed)))]
            lines.append(" ".join(w))
        out[i] = "\n".join(lines)
    return out, toxic
