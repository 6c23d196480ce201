"""Test-time compute on a toy task: best-of-n sampling with majority vote or a verifier.

A model answers a problem correctly with probability p on each independent sample. Drawing n
samples, the chance that at least one is right (coverage, "pass@n") is 1 - (1 - p)^n; over
problems whose p follows a Beta(a, b) distribution of difficulty it is

    E[1 - (1 - p)^n] = 1 - B(a, b + n) / B(a, b),

which climbs roughly log-linearly in n for hard problem sets, the shape Brown et al. (2024,
"Large Language Monkeys", arXiv:2407.21787) measure on real models. Coverage is not accuracy: an
answer must be chosen. Majority vote converges, per problem, to 1 if the right answer is more
likely than the most likely wrong one and to 0 otherwise. A verifier that accepts a right sample
with probability s_tp and a wrong one with s_fp selects, as n grows, a right answer with
probability equal to its precision on that problem,

    p s_tp / (p s_tp + (1 - p) s_fp)    (< 1 unless s_fp = 0),

so selection plateaus below coverage. Cost in the book's terms: a sample of T tokens from a model
of N parameters costs 2 N T forward FLOP (attention over the context and the prompt's prefill
left out), so n samples cost what one sample of a model n times larger costs.

Home: chapters/05_scaling_laws.ipynb, section "Test-time compute".
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln

FORWARD_FLOP_PER_PARAM = 2.0  # one multiply-add per parameter per token (Kaplan et al. 2020)
TRAIN_FLOP_PER_PARAM = 6.0  # forward and backward per training token (Kaplan et al. 2020)


def _check_n(n: np.ndarray | float) -> np.ndarray:
    arr = np.asarray(n, dtype=float)
    if np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ValueError(f"n_samples must be integers >= 1, got {n!r}")
    return arr


def coverage(p: np.ndarray | float, n_samples: np.ndarray | float) -> np.ndarray:
    """Probability (fraction) that at least one of n independent samples is right: 1 - (1 - p)^n.

    >>> float(coverage(0.1, 10)).__round__(4)
    0.6513
    """
    p_arr = np.asarray(p, dtype=float)
    if np.any((p_arr < 0) | (p_arr > 1)):
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    return 1.0 - (1.0 - p_arr) ** _check_n(n_samples)


def coverage_beta(a: float, b: float, n_samples: np.ndarray | float) -> np.ndarray:
    """Coverage (fraction) averaged over p ~ Beta(a, b): 1 - B(a, b + n) / B(a, b).

    >>> float(coverage_beta(1.0, 1.0, 1))   # uniform p: mean coverage of one sample is 1/2
    0.5
    """
    if a <= 0 or b <= 0:
        raise ValueError(f"a and b must be > 0, got {a!r}, {b!r}")
    n = _check_n(n_samples)
    return 1.0 - np.exp(betaln(a, b + n) - betaln(a, b))


def verifier_precision(p: np.ndarray | float, *, true_accept: float, false_accept: float):
    """The large-n accuracy (fraction) of verifier selection: p s_tp / (p s_tp + (1 - p) s_fp).

    >>> float(verifier_precision(0.1, true_accept=0.9, false_accept=0.1))
    0.5
    """
    for name, v in (("true_accept", true_accept), ("false_accept", false_accept)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {v!r}")
    p_arr = np.asarray(p, dtype=float)
    return p_arr * true_accept / (p_arr * true_accept + (1 - p_arr) * false_accept)


def simulate(
    *,
    n_problems: int,
    n_max: int,
    difficulty_a: float,
    difficulty_b: float,
    wrong_weights: np.ndarray,
    verifier_accuracy: float,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Seeded best-of-n on ``n_problems`` problems with p ~ Beta(a, b), for n = 1, 2, 4, ..., n_max.

    Wrong samples name one of len(wrong_weights) wrong answers with those relative weights. The
    verifier accepts a right sample and rejects a wrong one each with ``verifier_accuracy``.
    Returns the n grid, the drawn p, and per n the fraction of problems covered, solved by
    majority vote (ties broken at random, once per problem), and solved by verifier selection (the
    first accepted sample; the majority answer when none is accepted).
    """
    if n_max < 1 or n_max & (n_max - 1):
        raise ValueError(f"n_max must be a power of two >= 1, got {n_max!r}")
    if not 0 <= verifier_accuracy <= 1:
        raise ValueError(f"verifier_accuracy must lie in [0, 1], got {verifier_accuracy!r}")
    w = np.asarray(wrong_weights, dtype=float)
    if w.ndim != 1 or len(w) < 1 or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("wrong_weights must be a non-empty 1-D array of weights >= 0")
    p = rng.beta(difficulty_a, difficulty_b, size=n_problems)
    right = rng.random((n_problems, n_max)) < p[:, None]
    wrong = 1 + rng.choice(len(w), size=(n_problems, n_max), p=w / w.sum())
    answer = np.where(right, 0, wrong)  # 0 is the right answer
    accepted = np.where(
        right,
        rng.random((n_problems, n_max)) < verifier_accuracy,
        rng.random((n_problems, n_max)) >= verifier_accuracy,
    )
    counts = np.zeros((n_problems, len(w) + 1), dtype=np.int64)
    tiebreak = rng.random((n_problems, len(w) + 1)) * 0.5  # < 1: orders only equal counts
    rows = np.arange(n_problems)
    grid = 2 ** np.arange(int(np.log2(n_max)) + 1)
    first_acc = np.where(accepted.any(axis=1), accepted.argmax(axis=1), n_max)
    rates: dict[str, list[float]] = {"coverage": [], "majority": [], "verifier": []}
    done = 0
    for n in (int(g) for g in grid):
        for j in range(done, n):
            np.add.at(counts, (rows, answer[:, j]), 1)
        done = n
        majority = (counts + tiebreak).argmax(axis=1)
        chosen = np.where(first_acc < n, answer[rows, np.minimum(first_acc, n_max - 1)], majority)
        rates["coverage"].append(float(right[:, :n].any(axis=1).mean()))
        rates["majority"].append(float((majority == 0).mean()))
        rates["verifier"].append(float((chosen == 0).mean()))
    return {"n_samples": grid, "p": p, **{k: np.asarray(v) for k, v in rates.items()}}


def majority_limit(p: np.ndarray, wrong_weights: np.ndarray) -> float:
    """Large-n accuracy (fraction) of majority vote over problems with these p: the share whose
    right answer beats the likeliest wrong one, p > (1 - p) max(w) / sum(w).

    >>> majority_limit(np.array([0.1, 0.3, 0.6]), np.array([1.0, 1.0]))
    0.3333333333333333
    """
    w = np.asarray(wrong_weights, dtype=float)
    top = w.max() / w.sum()
    p_arr = np.asarray(p, dtype=float)
    return float(np.mean(p_arr > (1 - p_arr) * top))


def sampling_flop(*, n_params: float, n_tokens_per_sample: float, n_samples: float) -> float:
    """Forward FLOP (count) of n samples of T tokens from a model of N parameters: 2 N T n.

    >>> sampling_flop(n_params=8e9, n_tokens_per_sample=1_000, n_samples=100)
    1600000000000000.0
    """
    for name, v in (
        ("n_params", n_params),
        ("n_tokens_per_sample", n_tokens_per_sample),
        ("n_samples", n_samples),
    ):
        if v <= 0:
            raise ValueError(f"{name} must be > 0, got {v!r}")
    return FORWARD_FLOP_PER_PARAM * n_params * n_tokens_per_sample * n_samples


def break_even_problems(
    *, n_train_tokens: float, n_tokens_per_sample: float, n_samples: float
) -> float:
    """Problems (count) after which a model's best-of-n sampling has cost as much as its own
    training, 6 N D / (2 N T n) = 3 D / (T n), independent of N.

    >>> break_even_problems(n_train_tokens=15e12, n_tokens_per_sample=1_000, n_samples=100)
    450000000.0
    """
    per = sampling_flop(n_params=1.0, n_tokens_per_sample=n_tokens_per_sample, n_samples=n_samples)
    if n_train_tokens <= 0:
        raise ValueError(f"n_train_tokens must be > 0, got {n_train_tokens!r}")
    return TRAIN_FLOP_PER_PARAM * n_train_tokens / per
