"""Checks for the Implement exercises of chapter 2, data (see ``llmphys.grading``).

Three functions a student writes, each checked against the pipeline's own code:

- :func:`check_lsh_candidate_probability`: the LSH S-curve 1 - (1 - s^r)^b
  (``dedup.s_curve``), exercise ``data-ex-scurve``;
- :func:`check_shingle_jaccard`: Jaccard similarity of two texts' sets of word k-grams
  (``dedup.shingles`` and ``dedup.exact_jaccard``), exercise ``data-ex-jaccard``;
- :func:`check_removal_precision_recall`: precision and recall of a removal filter against the
  answer key (``dedup.precision_recall``), exercise ``data-ex-filter-pr``.

The cases are drawn from fixed seeds, so the stored feedback in the chapter never changes.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from llmphys.grading._core import Case, Feedback, Mistake, check_function, common_factors
from llmphys.pipeline import dedup

__all__ = [
    "check_lsh_candidate_probability",
    "check_removal_precision_recall",
    "check_shingle_jaccard",
]

# ---------------------------------------------------------------------------------------------
# data-ex-scurve: P(candidate | J = s) = 1 - (1 - s^r)^b


def _s_curve(s: float, n_bands: int, n_rows: int) -> float:
    return float(dedup.s_curve(s, n_bands=n_bands, n_rows=n_rows))


def _scurve_case(s: float, n_bands: int, n_rows: int) -> Case:
    # positional, so a student's own parameter names work; the label names them for the reader
    return Case(args=(s, n_bands, n_rows), label=f"s={s}, n_bands={n_bands}, n_rows={n_rows}")


def _scurve_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_01)
    cases = [
        _scurve_case(0.8, 14, 8),  # FineWeb's setting
        _scurve_case(0.5, 20, 5),
        _scurve_case(0.9, 1, 6),  # one band: s^r
        _scurve_case(0.3, 7, 1),  # one row a band: 1 - (1 - s)^b
        _scurve_case(0.0, 9, 13),  # nothing shared: never a candidate
        _scurve_case(1.0, 9, 13),  # identical: always
    ]
    for _ in range(10):
        s = round(float(rng.uniform(0.05, 0.95)), 3)
        cases.append(_scurve_case(s, int(rng.integers(2, 31)), int(rng.integers(2, 17))))
    return cases


_SCURVE_MISTAKES = (
    Mistake(
        implementation=lambda s, n_bands, n_rows: 1 - (1 - s**n_bands) ** n_rows,
        message="bands and rows swapped: a band matches when all of its r rows agree "
        "(probability s^r), and the pair is a candidate when any of the b bands matches",
    ),
    Mistake(
        implementation=lambda s, n_bands, n_rows: 1 - (1 - s**n_bands) ** n_bands,
        message="s^b where s^r belongs: one band has r rows, and all of them must agree",
    ),
    Mistake(
        implementation=lambda s, n_bands, n_rows: s ** (n_bands * n_rows),
        message="this is the chance that every row of every band agrees; a pair becomes a "
        "candidate when at least one band agrees (the complement of all b bands missing)",
    ),
    Mistake(
        implementation=lambda s, n_bands, n_rows: s**n_rows,
        message="this is one band's chance, s^r; the pair has b bands to match in, and "
        "needs only one: 1 - P(every band misses)",
    ),
    Mistake(
        implementation=lambda s, n_bands, n_rows: min(1.0, n_bands * s**n_rows),
        message="adding the b bands' chances counts pairs that match in several bands more "
        "than once; take the complement of the chance that every band misses",
    ),
    Mistake(
        implementation=lambda s, n_bands, n_rows: (1 - (1 - s) ** n_rows) ** n_bands,
        message="AND and OR are swapped: a band needs ALL its rows to agree, the pair needs "
        "ANY band",
    ),
)


def check_lsh_candidate_probability(fn: Any) -> Feedback:
    """Check ``fn(s, n_bands, n_rows)``: the chance (a probability) that a pair of Jaccard s
    becomes an LSH candidate with b bands of r rows, 1 - (1 - s^r)^b (MMDS sec. 3.4).

    >>> print(check_lsh_candidate_probability(lambda s, n_bands, n_rows:
    ...                                       1 - (1 - s**n_rows) ** n_bands))
    PASS data-ex-scurve (<lambda>): all 16 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="data-ex-scurve",
        reference=_s_curve,
        cases=_scurve_cases(),
        mistakes=_SCURVE_MISTAKES,
        factors=common_factors(quantity="probability"),
        atol=1e-12,
    )


# ---------------------------------------------------------------------------------------------
# data-ex-jaccard: |A ∩ B| / |A ∪ B| of the sets of word k-grams

_VOCAB = ("data", "page", "web", "text", "model", "token", "crawl", "filter", "the", "of")


def _jaccard(text_a: str, text_b: str, k: int) -> float:
    flat, offsets = dedup.shingles([text_a, text_b], k=k)
    return dedup.exact_jaccard(flat, offsets, 0, 1)


def _grams(text: str, k: int) -> list[tuple[str, ...]]:
    w = text.split()
    return [tuple(w[i : i + k]) for i in range(len(w) - k + 1)]


def _jaccard_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_02)
    a = "the web crawl of the web page"
    cases = [
        Case(args=(a, a, 2)),  # identical: 1
        Case(args=("data page web", "text model token", 1)),  # disjoint: 0
        Case(args=("data data data page", "data page page page", 1)),  # repeats: sets, not counts
        Case(args=("the model reads the text", "the model reads the token", 3)),
        Case(args=("data page", "data page web text model", 5)),  # one side has no 5-gram
        Case(args=("data page", "web text", 3)),  # neither has a 3-gram: 1.0 by convention
    ]
    for _ in range(8):
        k = int(rng.choice([1, 2, 3]))
        n = int(rng.integers(6, 15))
        words = list(rng.choice(_VOCAB[:6], size=n))  # a small vocabulary: shingles repeat
        edited = [str(rng.choice(_VOCAB)) if rng.random() < 0.25 else w for w in words]
        cases.append(Case(args=(" ".join(words), " ".join(edited), k)))
    return cases


def _multiset_jaccard(text_a: str, text_b: str, k: int) -> float:
    ca, cb = Counter(_grams(text_a, k)), Counter(_grams(text_b, k))
    union = sum((ca | cb).values())
    return sum((ca & cb).values()) / union if union else 1.0


def _char_jaccard(text_a: str, text_b: str, k: int) -> float:
    ga = {text_a[i : i + k] for i in range(len(text_a) - k + 1)}
    gb = {text_b[i : i + k] for i in range(len(text_b) - k + 1)}
    return len(ga & gb) / len(ga | gb) if ga | gb else 1.0


def _word_set_jaccard(text_a: str, text_b: str, k: int) -> float:
    wa, wb = set(text_a.split()), set(text_b.split())
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def _dice(text_a: str, text_b: str, k: int) -> float:
    ga, gb = set(_grams(text_a, k)), set(_grams(text_b, k))
    return 2 * len(ga & gb) / (len(ga) + len(gb)) if ga or gb else 1.0


def _containment(text_a: str, text_b: str, k: int) -> float:
    ga, gb = set(_grams(text_a, k)), set(_grams(text_b, k))
    return len(ga & gb) / len(ga) if ga else (1.0 if not gb else 0.0)


_JACCARD_MISTAKES = (
    Mistake(
        implementation=_multiset_jaccard,
        message="repeated shingles were counted more than once: Jaccard compares the SETS of "
        "k-grams, so a k-gram that occurs three times in a page counts once",
    ),
    Mistake(
        implementation=_char_jaccard,
        message="these are character k-grams; the shingles here are k consecutive WORDS",
    ),
    Mistake(
        implementation=_word_set_jaccard,
        message="this is the Jaccard of the two pages' words, whatever k is; a shingle is a "
        "run of k consecutive words, so word order matters",
    ),
    Mistake(
        implementation=_dice,
        message="this is the Dice coefficient 2|A ∩ B| / (|A| + |B|); Jaccard divides the "
        "intersection by the size of the union",
    ),
    Mistake(
        implementation=_containment,
        message="dividing by the first page's shingles gives its containment in the second; "
        "Jaccard divides by the union of both sets",
    ),
)


def check_shingle_jaccard(fn: Any) -> Feedback:
    """Check ``fn(text_a, text_b, k)``: the Jaccard similarity (a number in [0, 1]) of the two
    texts' sets of word k-grams, 1.0 when neither has a k-gram (Broder 1997).

    The reference hashes shingles as the dedup stage does (``dedup.shingles``); the cases hold
    only lower-case words separated by single spaces, so splitting on whitespace suffices.

    >>> def jac(a, b, k):
    ...     ga = {tuple(a.split()[i:i + k]) for i in range(len(a.split()) - k + 1)}
    ...     gb = {tuple(b.split()[i:i + k]) for i in range(len(b.split()) - k + 1)}
    ...     return len(ga & gb) / len(ga | gb) if ga | gb else 1.0
    >>> print(check_shingle_jaccard(jac))
    PASS data-ex-jaccard (jac): all 14 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="data-ex-jaccard",
        reference=_jaccard,
        cases=_jaccard_cases(),
        mistakes=_JACCARD_MISTAKES,
        factors=common_factors(quantity="fraction"),
        atol=1e-12,
    )


# ---------------------------------------------------------------------------------------------
# data-ex-filter-pr: precision = TP / removed, recall = TP / should be removed


def _precision_recall(removed: list[bool], truth: list[bool]) -> tuple[float, float]:
    return dedup.precision_recall(np.asarray(removed, bool), np.asarray(truth, bool))


def _pr_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_03)
    cases = [
        Case(args=([True, True, False, False], [True, False, True, False])),  # 1/2, 1/2
        Case(args=([True, False, False, False, False], [True, True, True, False, False])),
        Case(args=([True, True, True, True], [True, False, False, False])),  # removes all
        Case(args=([False, False, False], [True, False, True])),  # removes nothing: P = 1
        Case(args=([True, False, True], [False, False, False])),  # nothing to remove: R = 1
        Case(args=([True], [True])),  # one page
    ]
    for _ in range(8):
        n = int(rng.integers(8, 16))
        truth = rng.random(n) < 0.4
        flip = rng.random(n) < 0.25
        removed = truth ^ flip
        cases.append(Case(args=([bool(x) for x in removed], [bool(x) for x in truth])))
    return cases


def _counts(removed: list[bool], truth: list[bool]) -> tuple[int, int, int, int]:
    tp = sum(bool(p) and bool(t) for p, t in zip(removed, truth, strict=True))
    return tp, sum(map(bool, removed)), sum(map(bool, truth)), len(truth)


def _swapped(removed: list[bool], truth: list[bool]) -> tuple[float, float]:
    p, r = _precision_recall(removed, truth)
    return r, p


def _over_all_pages(removed: list[bool], truth: list[bool]) -> tuple[float, float]:
    tp, _, n_true, n = _counts(removed, truth)
    return tp / n, tp / n_true if n_true else 1.0


def _empty_is_zero(removed: list[bool], truth: list[bool]) -> tuple[float, float]:
    tp, n_removed, n_true, _ = _counts(removed, truth)
    return tp / n_removed if n_removed else 0.0, tp / n_true if n_true else 0.0


_PR_MISTAKES = (
    Mistake(
        implementation=_swapped,
        message="precision and recall are swapped: precision divides the pages rightly "
        "removed by the pages the filter removed, recall by the pages that should have gone",
    ),
    Mistake(
        implementation=_over_all_pages,
        message="precision divides the pages rightly removed by the pages the filter "
        "REMOVED, not by every page",
    ),
    Mistake(
        implementation=_empty_is_zero,
        message="a filter that removes nothing makes no false alarm, so its precision is 1.0 "
        "(and with nothing to remove, recall is 1.0), as the prompt's convention says",
    ),
)


def check_removal_precision_recall(fn: Any) -> Feedback:
    """Check ``fn(removed, truth)``: the filter's (precision, recall), two fractions, from two
    equal-length lists of booleans (True = removed, True = should be removed); 1.0 for a
    precision with nothing removed and for a recall with nothing to remove.

    >>> def pr(removed, truth):
    ...     tp = sum(p and t for p, t in zip(removed, truth))
    ...     return (tp / sum(removed) if any(removed) else 1.0,
    ...             tp / sum(truth) if any(truth) else 1.0)
    >>> print(check_removal_precision_recall(pr))
    PASS data-ex-filter-pr (pr): all 14 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="data-ex-filter-pr",
        reference=_precision_recall,
        cases=_pr_cases(),
        mistakes=_PR_MISTAKES,
        factors=common_factors(quantity="fraction"),
        atol=1e-12,
    )
