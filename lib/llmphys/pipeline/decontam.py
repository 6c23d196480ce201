"""Decontamination: find training documents that share a word n-gram with a benchmark item.

GPT-3 flagged any training document sharing a 13-gram with a test example (Brown et al.
2020, arXiv:2005.14165, appendix C). The choice of n is a trade-off this module makes
measurable: a short n flags clean documents that share common phrases by chance, a long
n misses a quoted item whose words were lightly edited (one edit every k words leaves no
n-gram intact once n > k), and an n longer than the item can never match at all.

Vectorised like dedup: every document and item becomes a CSR array of n-gram hashes
and the test is one ``np.isin``.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import text as text_mod


def contaminated(texts: list[str], items: list[str], *, n: int) -> np.ndarray:
    """True for each text that shares at least one word n-gram with any benchmark item.

    >>> contaminated(["a b c d", "a b x d"], ["q a b c z"], n=3).tolist()
    [True, False]
    """
    return _flag(
        text_mod.corpus_word_hashes(list(texts)), text_mod.corpus_word_hashes(list(items)), n
    )


def _flag(
    docs: tuple[np.ndarray, np.ndarray], items: tuple[np.ndarray, np.ndarray], n: int
) -> np.ndarray:
    grams, offsets = text_mod.ngram_hashes(*docs, n)
    item_grams, _ = text_mod.ngram_hashes(*items, n)
    hit = np.isin(grams, item_grams)
    doc = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    return np.bincount(doc[hit], minlength=offsets.size - 1) > 0


def leaked_items(texts: list[str], items: list[str], *, n: int) -> np.ndarray:
    """True for each benchmark item that shares at least one n-gram with any text."""
    return contaminated(list(items), list(texts), n=n)


def chance_overlap_rate(n_doc_grams: int, n_item_grams: int, p_gram: float) -> float:
    """Probability a clean document shares >= 1 n-gram with the items if n-grams were
    independent with per-gram match probability ``p_gram``: 1 - (1 - p)^(D I).

    An order-of-magnitude guide only: real n-grams of common words repeat far more.

    >>> round(chance_overlap_rate(200, 1000, 1e-7), 4)
    0.0198
    """
    if not 0.0 <= p_gram <= 1.0:
        raise ValueError(f"p_gram must lie in [0, 1], got {p_gram!r}")
    return 1.0 - (1.0 - p_gram) ** (n_doc_grams * n_item_grams)


def detection_probability(n_words: int, n: int, edit_rate: float) -> float:
    """Probability that an item of ``n_words`` words, each replaced independently with
    probability ``edit_rate``, keeps at least one intact run of n words (and so is caught).

    Exact, by dynamic programming over the length of the current intact run (a Markov
    chain with an absorbing state "a run of n was seen"): O(n_words n).

    >>> detection_probability(30, 13, 0.0), detection_probability(10, 13, 0.0)
    (1.0, 0.0)
    >>> round(detection_probability(2, 1, 0.5), 3)   # 1 - P(both edited)
    0.75
    """
    if not 0.0 <= edit_rate <= 1.0:
        raise ValueError(f"edit_rate must lie in [0, 1], got {edit_rate!r}")
    if int(n) != n or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    keep = 1.0 - edit_rate
    run = np.zeros(int(n))  # run[k]: P(no n-run yet, current intact run has length k)
    run[0], found = 1.0, 0.0
    for _ in range(int(n_words)):
        found += run[-1] * keep  # a run of n - 1 extended to n
        run = np.concatenate([[run.sum() * edit_rate], run[:-1] * keep])
    return float(found)


def sweep(texts: list[str], items: list[str], truth: np.ndarray, ns: list[int]) -> dict[int, dict]:
    """For each n: recall on documents that truly quote an item, false-positive rate on the rest."""
    truth = np.asarray(truth, dtype=bool)
    docs = text_mod.corpus_word_hashes(list(texts))  # split and hash the words once
    item_words = text_mod.corpus_word_hashes(list(items))
    out = {}
    for n in ns:
        flagged = _flag(docs, item_words, n)
        out[n] = {
            "recall": float(flagged[truth].mean()) if truth.any() else 1.0,
            "false_positive_rate": float(flagged[~truth].mean()) if (~truth).any() else 0.0,
            "n_flagged": int(flagged.sum()),
        }
    return out
