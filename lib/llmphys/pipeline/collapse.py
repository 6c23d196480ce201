"""Model collapse: fit a model, sample from it, refit on the samples, and repeat.

Shumailov et al. 2024 (Nature 631, 755-759, doi:10.1038/s41586-024-07566-y) show that a
model trained generation after generation on its predecessor's output, the real data
replaced, loses the tails of the distribution first and ends near a point mass. The
mechanism is statistical: a finite sample misses rare events, a refit model cannot
produce what it never saw, and the errors compound. For a Gaussian refit by maximum
likelihood on n samples, E[sigma_g^2] = ((n - 1)/n)^g sigma_0^2 exactly; even the unbiased
estimator collapses almost surely, because log sigma^2 performs a random walk with
negative drift.

Gerstgrasser et al. 2024 (arXiv:2404.01413) show that if synthetic data accumulates
alongside the real data instead of replacing it, the error stays bounded. A filter that
brings in outside information (a verifier) has the same effect. This module simulates all
of them on a categorical model (a unigram "language model" over a Zipfian vocabulary,
whose rare words are the tail):

    replace     each generation trains only on the previous model's samples
    accumulate  each generation trains on the real data plus every synthetic sample so far
    mix_real    each generation's training set keeps a fraction of fresh real data
    verified    a verifier accepts a sample of type x with probability min(1, p(x)/q(x));
                the generator keeps a little probability on every type (``explore``)

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import numpy as np

from .. import units

MODES = ("replace", "accumulate", "mix_real", "verified")


def zipf(n_types: int, *, exponent: float = 1.1) -> np.ndarray:
    """p_k ∝ k^-exponent for k = 1..n_types: word frequencies have exponent near 1 (Zipf 1949).

    >>> round(float(zipf(3, exponent=1.0)[0]), 4)
    0.5455
    """
    units.check_positive("n_types", n_types)
    p = np.arange(1, int(n_types) + 1, dtype=float) ** -float(exponent)
    return p / p.sum()


def expected_missing_mass(p: np.ndarray, n_samples: int) -> float:
    """True probability mass of the types absent from n samples: sum_k p_k (1 - p_k)^n.

    >>> round(expected_missing_mass(np.array([0.5, 0.5]), 1), 3)
    0.5
    """
    p = np.asarray(p, dtype=float)
    return float(np.sum(p * (1.0 - p) ** n_samples))


def gaussian_recursion(
    n_samples: int,
    n_generations: int,
    *,
    rng: np.random.Generator,
    n_chains: int = 1000,
    unbiased: bool = False,
) -> np.ndarray:
    """Fitted variance per generation, shape (n_generations + 1, n_chains), sigma_0^2 = 1.

    Generation g + 1 fits mean and variance to n samples of N(mu_g, sigma_g^2); all chains
    advance together.
    """
    n = int(units.check_positive("n_samples", n_samples))
    if n < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples!r}")
    mu, var = np.zeros(n_chains), np.ones(n_chains)
    out = np.empty((n_generations + 1, n_chains))
    out[0] = var
    for g in range(1, n_generations + 1):
        x = mu + np.sqrt(var) * rng.standard_normal((n, n_chains))
        mu, var = x.mean(axis=0), x.var(axis=0, ddof=1 if unbiased else 0)
        out[g] = var
    return out


def categorical_recursion(
    p_true: np.ndarray,
    *,
    n_samples: int,
    n_generations: int,
    rng: np.random.Generator,
    mode: str = "replace",
    real_fraction: float = 0.1,
    explore: float = 0.1,
) -> np.ndarray:
    """The fitted model q_g for g = 0..n_generations, shape (n_generations + 1, n_types).

    q_0 is the maximum-likelihood fit to ``n_samples`` real samples; each later generation
    refits on ``n_samples`` new training samples chosen according to ``mode``.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not known; allowed: {', '.join(MODES)}")
    units.check_fraction("real_fraction", real_fraction)
    p = np.asarray(p_true, dtype=float)
    n = int(units.check_positive("n_samples", n_samples))
    pool = rng.multinomial(n, p).astype(float)  # generation 0: real data
    q = pool / pool.sum()
    out = np.empty((n_generations + 1, p.size))
    out[0] = q
    for g in range(1, n_generations + 1):
        if mode == "replace":
            counts = rng.multinomial(n, q)
        elif mode == "accumulate":
            pool += rng.multinomial(n, q)
            counts = pool
        elif mode == "mix_real":
            n_real = round(real_fraction * n)
            counts = rng.multinomial(n_real, p) + rng.multinomial(n - n_real, q)
        else:
            counts = _verified_samples(p, q, n, explore, rng)
        q = counts / counts.sum()
        out[g] = q
    return out


def _verified_samples(
    p: np.ndarray, q: np.ndarray, n: int, explore: float, rng: np.random.Generator
) -> np.ndarray:
    """Counts of n accepted samples: propose from q' = (1-e) q + e/V, accept with min(1, p/q')."""
    proposal = (1.0 - explore) * q + explore / q.size
    accept = np.minimum(1.0, p / proposal)
    counts = np.zeros(q.size, dtype=np.int64)
    rate = float(np.sum(proposal * accept))  # expected acceptance probability
    while counts.sum() < n:
        need = n - int(counts.sum())
        drawn = rng.multinomial(int(np.ceil(need / rate)) + 16, proposal)
        kept = rng.binomial(drawn, accept)
        take = np.repeat(np.arange(q.size), kept)
        counts += np.bincount(rng.permutation(take)[:need], minlength=q.size)
    return counts


def tail_share(q: np.ndarray, p_true: np.ndarray, *, head: int = 100) -> np.ndarray:
    """Probability the model gives to types beyond rank ``head``, relative to the truth's."""
    q = np.atleast_2d(q)
    return q[:, head:].sum(axis=1) / np.asarray(p_true)[head:].sum()


def surviving_types(q: np.ndarray) -> np.ndarray:
    """Number of types the model can still produce (q > 0), per generation."""
    return np.sum(np.atleast_2d(q) > 0, axis=1)


def total_variation(q: np.ndarray, p_true: np.ndarray) -> np.ndarray:
    """0.5 sum_k |q_k - p_k| per generation: 0 for a perfect model, 1 for disjoint support."""
    return 0.5 * np.abs(np.atleast_2d(q) - np.asarray(p_true)).sum(axis=1)
