"""Word-frequency tables of the six languages the book's synthetic text is drawn from.

The ``n`` most frequent words of each language, as shipped inside the ``wordfreq`` package
(Speer 2022; offline), and a sampler that draws words from their unigram distribution. The
crawl generator writes pages with them and the quality filter takes its non-English stop
words from them; neither needs the other.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import wordfreq

LANGUAGES = ("en", "de", "fr", "es", "ru", "hi")  # the languages with a word table here


@functools.cache
def word_table(lang: str, n_words: int = 5000) -> tuple[tuple[str, ...], np.ndarray]:
    """The ``n_words`` most frequent words of ``lang`` and their renormalised frequencies.

    Only words made of letters and combining marks are kept (no digits, no apostrophes).

    >>> w, p = word_table("en", 100)
    >>> w[0], round(float(p.sum()), 6)
    ('the', 1.0)
    """
    freqs = wordfreq.get_frequency_dict(lang, wordlist="small")
    ranked = sorted(((f, w) for w, f in freqs.items() if _is_word(w)), key=lambda t: (-t[0], t[1]))
    words = tuple(w for _, w in ranked[:n_words])
    p = np.array([f for f, _ in ranked[:n_words]])
    return words, p / p.sum()


def _is_word(w: str) -> bool:
    return bool(w) and all(unicodedata.category(c)[0] in "LM" for c in w)


def sample_words(lang: str, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` words drawn independently from the unigram distribution of ``lang``."""
    words, cdf = _sampler(lang)
    return words[cdf.searchsorted(rng.random(n), side="right")].tolist()


@functools.cache
def _sampler(lang: str) -> tuple[np.ndarray, np.ndarray]:
    words, p = word_table(lang)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0  # guard against round-off leaving the last bin short of 1
    return np.array(words, dtype=object), cdf
