"""Heuristic quality rules of the kind published for web corpora, with per-rule statistics.

Gopher's rules (Rae et al. 2021, arXiv:2112.11446, appendix A.1.1) remove a document
if it has fewer than 50 or more than 100,000 words, a mean word length outside 3 to 10
characters, more than 0.1 hash-or-ellipsis symbols per word, more than 90% of lines
starting with a bullet, more than 30% ending in an ellipsis, fewer than 80% of words
containing a letter, or fewer than two of the stop words {the, be, to, of, and, that,
have, with}; its repetition rules remove documents whose most common 2-, 3- and 4-gram
cover more than 20%, 18% and 16% of the characters, whose repeated 5-grams cover more than
15%, or with more than 30% duplicate lines. FineWeb adds three (Penedo et al. 2024,
arXiv:2406.17557, sec. 3.5): at most 67% of lines under 30 characters, at least 12% of
lines ending in punctuation, at most 10% of characters in duplicated lines.

Outside English the stop-word list here is the language's eight most frequent words
(wordfreq), the adaptation FineWeb-2 makes per language; the thresholds stay Gopher's,
which is exactly what the chapter shows to be wrong for some scripts.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import collections
import operator

import numpy as np
import regex

from .words import LANGUAGES as WORD_TABLE_LANGUAGES
from .words import word_table

GOPHER_STOP_WORDS = frozenset(["the", "be", "to", "of", "and", "that", "have", "with"])
BULLETS = ("•", "-", "*", "‣", "–")
ELLIPSES = ("...", "…")
TERMINAL = (".", "!", "?", '"', "'", "।", "…")

# name: (signal, comparison that must hold to KEEP the document, threshold, source)
RULES: dict[str, tuple[str, str, float, str]] = {
    "too_few_words": ("n_words", ">=", 50, "gopher"),
    "too_many_words": ("n_words", "<=", 100_000, "gopher"),
    "short_mean_word": ("mean_word_length", ">=", 3, "gopher"),
    "long_mean_word": ("mean_word_length", "<=", 10, "gopher"),
    "symbol_ratio": ("symbol_word_ratio", "<=", 0.1, "gopher"),
    "bullet_lines": ("frac_bullet_lines", "<=", 0.9, "gopher"),
    "ellipsis_lines": ("frac_ellipsis_lines", "<=", 0.3, "gopher"),
    "few_alpha_words": ("frac_alpha_words", ">=", 0.8, "gopher"),
    "no_stop_words": ("n_stop_words", ">=", 2, "gopher"),
    "duplicate_lines": ("frac_dup_lines", "<=", 0.3, "gopher"),
    "top_2gram": ("top_2gram_char_frac", "<=", 0.20, "gopher"),
    "top_3gram": ("top_3gram_char_frac", "<=", 0.18, "gopher"),
    "top_4gram": ("top_4gram_char_frac", "<=", 0.16, "gopher"),
    "dup_5gram": ("dup_5gram_char_frac", "<=", 0.15, "gopher"),
    "short_lines": ("frac_short_lines", "<=", 0.67, "fineweb"),
    "no_terminal_punct": ("frac_terminal_lines", ">=", 0.12, "fineweb"),
    "dup_line_chars": ("frac_dup_line_chars", "<=", 0.10, "fineweb"),
}
_OPS = {">=": operator.ge, "<=": operator.le}
_ALPHA_WORD = regex.compile(r"(?<!\S)\S*\p{L}\S*")  # a whitespace word containing a letter


def stop_words(lang: str) -> frozenset[str]:
    """Gopher's list for English; the eight most frequent words of the other word tables
    (:mod:`llmphys.pipeline.words`); empty for any other language."""
    if lang == "en":
        return GOPHER_STOP_WORDS
    if lang in WORD_TABLE_LANGUAGES:
        return frozenset(word_table(lang)[0][:8])
    return frozenset()


def signals(text: str, lang: str = "en") -> dict[str, float]:
    """Every signal the rules test, computed from whitespace words and newline-separated lines.

    >>> s = signals("the cat sat with the dog\\nthe cat sat with the dog")
    >>> s["n_words"], s["n_stop_words"], s["frac_dup_lines"]
    (12, 2, 0.5)
    """
    words = text.split()
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    n, n_lines = len(words), max(len(lines), 1)
    chars = sum(len(w) for w in words) or 1
    line_counts = collections.Counter(lines)
    dup_lines = [ln for ln in lines if line_counts[ln] > 1]
    lower = [w.lower().strip(".,;:!?\"'()«»।") for w in words]
    sw = stop_words(lang)
    out = {
        "n_words": n,
        "mean_word_length": chars / max(n, 1),
        "symbol_word_ratio": (text.count("#") + sum(text.count(e) for e in ELLIPSES)) / max(n, 1),
        "frac_bullet_lines": sum(ln.startswith(BULLETS) for ln in lines) / n_lines,
        "frac_ellipsis_lines": sum(ln.endswith(ELLIPSES) for ln in lines) / n_lines,
        "frac_alpha_words": len(_ALPHA_WORD.findall(text)) / max(n, 1),
        "n_stop_words": len(sw & set(lower)) if sw else 2,  # no list: the rule cannot apply
        "frac_dup_lines": (len(lines) - len(line_counts)) / n_lines,
        "frac_short_lines": sum(len(ln) < 30 for ln in lines) / n_lines,
        "frac_terminal_lines": sum(ln.endswith(TERMINAL) for ln in lines) / n_lines,
        "frac_dup_line_chars": sum(len(ln) for ln in dup_lines) / max(sum(map(len, lines)), 1),
    }
    for k in (2, 3, 4):
        out[f"top_{k}gram_char_frac"] = _top_ngram_char_frac(lower, k, chars)
    out["dup_5gram_char_frac"] = _dup_ngram_char_frac(lower, 5, chars)
    return out


def _top_ngram_char_frac(words: list[str], n: int, chars: int) -> float:
    """Characters in all occurrences of the most common n-gram, over all word characters."""
    grams = collections.Counter(zip(*(words[i:] for i in range(n)), strict=False))
    if not grams:
        return 0.0
    gram, count = grams.most_common(1)[0]
    return count * sum(len(w) for w in gram) / chars


def _dup_ngram_char_frac(words: list[str], n: int, chars: int) -> float:
    """Characters of words covered by an n-gram that occurs more than once (each word once)."""
    grams = list(zip(*(words[i:] for i in range(n)), strict=False))
    if not grams:
        return 0.0
    counts = collections.Counter(grams)
    starts = np.array([counts[g] > 1 for g in grams], dtype=float)
    covered = np.convolve(starts, np.ones(n))[: len(words)] > 0  # word i is in a repeated window
    lengths = np.fromiter(map(len, words), dtype=float, count=len(words))
    return float(lengths[covered].sum()) / chars


def failed_rules(text: str, lang: str = "en", *, rules: dict | None = None) -> list[str]:
    """Names of the rules ``text`` fails, in the order of ``RULES``; empty means keep."""
    s = signals(text, lang)
    return [
        name for name, (sig, op, thr, _) in (rules or RULES).items() if not _OPS[op](s[sig], thr)
    ]


def rule_table(
    texts: list[str], langs: list[str], *, rules: dict | None = None
) -> tuple[np.ndarray, list[str]]:
    """Boolean matrix (n_docs, n_rules): True where the document fails the rule."""
    rules = rules or RULES
    names = list(rules)
    out = np.zeros((len(texts), len(names)), dtype=bool)
    for i, (t, lang) in enumerate(zip(texts, langs, strict=True)):
        for name in failed_rules(t, lang, rules=rules):
            out[i, names.index(name)] = True
    return out, names


def removal_statistics(fails: np.ndarray, names: list[str]) -> dict[str, dict[str, float]]:
    """Per rule: share of documents it flags, share it alone flags, share it removes first.

    'first' attributes each removed document to the first rule it fails in table order,
    the way a sequential pipeline logs it; 'alone' counts documents no other rule catches.
    """
    n = max(fails.shape[0], 1)
    any_fail = fails.any(axis=1)
    first = np.where(any_fail, fails.argmax(axis=1), -1)
    alone = fails & (fails.sum(axis=1, keepdims=True) == 1)
    return {
        name: {
            "flagged": fails[:, j].sum() / n,
            "alone": alone[:, j].sum() / n,
            "first": float(np.sum(first == j)) / n,
        }
        for j, name in enumerate(names)
    }
