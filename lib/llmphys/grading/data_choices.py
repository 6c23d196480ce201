"""Checks for chapter 2's mixture-search and unigram-tokenizer exercises (see ``llmphys.grading``).

- :func:`check_optimal_mixture`: the weights minimising Σ β_d ln(w_d + ε) on the simplex
  (``pipeline.mixture_opt.optimal_mixture``), exercise ``data-ex-regmix``;
- :func:`check_viterbi_segment`: the most likely segmentation of a word under a unigram
  language model (``pipeline.unigram.viterbi_segment``), exercise ``data-ex-viterbi``.

The cases are drawn from fixed seeds, so the stored feedback in the chapter never changes.

Home: chapters/02_data.ipynb, section "Unigram tokenizers and byte fallback".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmphys.grading._core import Case, Feedback, Mistake, check_function
from llmphys.pipeline import mixture_opt, unigram

__all__ = ["check_optimal_mixture", "check_viterbi_segment"]

MIXTURE_ATOL = 1e-6
"""Absolute tolerance on each weight: the closed form is exact, and a bisection on λ to 1e-9
also passes; every wrong rule below moves some weight by more than 1e-3."""

# ---------------------------------------------------------------------------------------------
# data-ex-regmix: w_d = max(0, -β_d / λ - ε), Σ w_d = 1


def _mixture(beta: np.ndarray, eps: float) -> np.ndarray:
    return mixture_opt.optimal_mixture(np.asarray(beta, dtype=float), eps=eps)


def _mixture_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_21)
    cases = [
        Case(args=(np.array([-0.6, -0.3, -0.1]), 1e-9), label="beta=[-0.6, -0.3, -0.1], eps=1e-9"),
        Case(args=(np.array([-0.5, -0.5]), 0.01), label="beta=[-0.5, -0.5], eps=0.01"),
        Case(args=(np.array([-1.0, -0.001, 0.2]), 0.01), label="beta=[-1, -0.001, 0.2], eps=0.01"),
    ]
    for _ in range(9):
        d = int(rng.integers(2, 7))
        beta = -rng.uniform(0.0, 0.5, size=d) * (rng.random(d) < 0.85)
        beta[0] = -rng.uniform(0.1, 0.5)  # at least one domain helps
        eps = float(rng.choice([0.001, 0.01, 0.05]))
        cases.append(
            Case(args=(beta.round(4), eps), label=f"beta={beta.round(4).tolist()}, eps={eps}")
        )
    return cases


def _no_eps(beta, eps):
    b = -np.asarray(beta, dtype=float)
    return b / b.sum()


def _no_clip(beta, eps):
    b = -np.asarray(beta, dtype=float)
    lam = b.sum() / (1 + b.size * eps)
    return b / lam - eps


def _renormalised_clip(beta, eps):
    b = -np.asarray(beta, dtype=float)
    w = np.maximum(b / (b.sum() / (1 + b.size * eps)) - eps, 0.0)
    return w / w.sum()


_MIXTURE_MISTAKES = (
    Mistake(
        implementation=_no_eps,
        message="-β_d / Σ(-β) is the answer only when ε = 0; with ε the stationarity condition "
        "is w_d + ε = -β_d / λ, so subtract ε and fix λ by Σ w_d = 1",
    ),
    Mistake(
        implementation=_no_clip,
        message="some weights come out negative: a domain whose -β_d / λ falls below ε gets "
        "weight 0, and λ must then be recomputed over the domains that remain",
    ),
    Mistake(
        implementation=_renormalised_clip,
        message="clipping the negative weights to 0 and renormalising is not the optimum: "
        "recompute λ over the domains that keep weight (water-filling), then subtract ε",
    ),
)


def check_optimal_mixture(fn: Any) -> Feedback:
    """Check ``fn(beta, eps)``: the weights (fractions summing to 1) that minimise
    Σ_d β_d ln(w_d + ε) over the simplex.

    >>> print(check_optimal_mixture(lambda b, e: mixture_opt.optimal_mixture(b, eps=e)))
    PASS data-ex-regmix (<lambda>): all 12 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="data-ex-regmix",
        reference=_mixture,
        cases=_mixture_cases(),
        mistakes=_MIXTURE_MISTAKES,
        factors=(),
        atol=MIXTURE_ATOL,
    )


# ---------------------------------------------------------------------------------------------
# data-ex-viterbi: argmax over segmentations of Σ log p(x_i)


def _joined(fn: Any) -> Any:
    def run(word: str, log_probs: dict[str, float]) -> str:
        return "|".join(fn(word, log_probs))

    return run


def _viterbi_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_22)
    hello = {"h": -3.0, "e": -3.0, "l": -3.0, "o": -3.0, "hell": -5.0, "he": -2.0, "llo": -2.5}
    cases = [
        Case(args=("hello", hello), label="word='hello' (the docstring's vocabulary)"),
        Case(args=("a", {"a": -1.0}), label="word='a', one piece"),
        Case(
            args=("abab", {"a": -1.0, "b": -1.0, "ab": -5.0, "abab": -9.0}),
            label="word='abab', long pieces unlikely",
        ),
        Case(
            args=("abc", {"a": -2.0, "b": -2.0, "c": -2.0, "ab": -1.0, "bc": -0.5}),
            label="word='abc', the longest first match is not the best",
        ),
    ]
    for _ in range(10):
        pieces = {c: float(np.log(rng.uniform(0.01, 0.3))) for c in "abcd"}
        while len(pieces) < 14:
            p = "".join(rng.choice(list("abcd"), size=int(rng.integers(2, 5))))
            pieces[p] = round(float(np.log(rng.uniform(0.001, 0.5))), 3)
        pieces = {k: round(v, 3) for k, v in pieces.items()}
        word = "".join(rng.choice(list("abcd"), size=int(rng.integers(4, 11))))
        cases.append(Case(args=(word, pieces), label=f"word={word!r}, {len(pieces)} pieces"))
    return cases


def _longest_match(word, log_probs):
    out, i = [], 0
    while i < len(word):
        j = max(j for j in range(i + 1, len(word) + 1) if word[i:j] in log_probs)
        out.append(word[i:j])
        i = j
    return out


def _fewest_pieces(word, log_probs):
    n = len(word)
    best: list[tuple[int, list[str]] | None] = [(0, [])] + [None] * n
    for j in range(1, n + 1):
        for i in range(j):
            prev = best[i]
            if prev is not None and word[i:j] in log_probs:
                cand = (prev[0] + 1, [*prev[1], word[i:j]])
                cur = best[j]
                if cur is None or cand[0] < cur[0]:
                    best[j] = cand
    last = best[n]
    return [] if last is None else last[1]


def _most_probable_pieces(word, log_probs):
    # greedy: at each position take the single most probable piece that starts there
    out, i = [], 0
    while i < len(word):
        j = max(
            (j for j in range(i + 1, len(word) + 1) if word[i:j] in log_probs),
            key=lambda j: log_probs[word[i:j]],
        )
        out.append(word[i:j])
        i = j
    return out


_VITERBI_MISTAKES = (
    Mistake(
        implementation=_joined(_longest_match),
        message="this is greedy longest match (WordPiece's rule); the unigram model scores the "
        "whole segmentation, Σ log p(x_i), so keep the best score at every end position",
    ),
    Mistake(
        implementation=_joined(_fewest_pieces),
        message="this minimises the number of pieces; the model maximises the product of their "
        "probabilities, and two likely pieces can beat one unlikely one",
    ),
    Mistake(
        implementation=_joined(_most_probable_pieces),
        message="choosing the most probable piece at each position is greedy: a choice now "
        "changes what can follow, so compare complete paths (dynamic programming)",
    ),
)


def check_viterbi_segment(fn: Any) -> Feedback:
    """Check ``fn(word, log_probs)``: the list of pieces of the most likely segmentation of
    ``word`` under the unigram model ``log_probs`` (piece -> natural-log probability).

    >>> fb = check_viterbi_segment(unigram.viterbi_segment)
    >>> fb.passed, fb.n_cases
    (True, 14)
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    wrapped = _joined(fn)
    wrapped.__name__ = name
    return check_function(
        wrapped,
        exercise="data-ex-viterbi",
        reference=_joined(unigram.viterbi_segment),
        cases=_viterbi_cases(),
        mistakes=_VITERBI_MISTAKES,
        factors=(),
    )
