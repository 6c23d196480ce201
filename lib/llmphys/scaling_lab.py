"""A scaling experiment you can run in seconds, on a source whose entropy is known.

Real text has no known entropy, so the irreducible term E of a fitted law cannot be
checked. Here the "language" is a first-order Markov chain over V symbols whose
log-transition matrix has a power-law spectrum,

    log P_ij = sum_k s_k u_ik v_jk + const_i,   s_k = scale * k^(-spectrum_exponent),

so its entropy rate H is exact (``markov.entropy_rate_bits``) and models of growing
capacity keep finding structure. The models are the smallest language models there are:
a bigram model with rank-r logits, Q = softmax(U W^T + b), with N = 2 V r + V parameters
(an embedding, an unembedding and a bias: a transformer with no layers). Each is trained
by L-BFGS on add-k-smoothed bigram counts of D sampled tokens. Its test loss is computed
exactly, not sampled:

    L(N, D) = - sum_i pi_i sum_j P_ij ln Q_ij  >=  H ln 2   nats per token.

Fitting E + A/N^alpha + B/D^beta to a grid of (N, D) runs then asks whether the fitted E
finds the true floor H. Its source is ``llmphys.markov``.
Its source is ``llmphys.markov``.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from . import markov


def power_law_chain(
    n_states: int, *, rng: np.random.Generator, spectrum_exponent: float = 1.0, scale: float = 3.0
) -> np.ndarray:
    """A transition matrix whose log-probabilities have singular values scale * k^-exponent."""
    if int(n_states) != n_states or n_states < 2:
        raise ValueError(f"n_states must be an integer >= 2, got {n_states!r}")
    v = int(n_states)
    u, _ = np.linalg.qr(rng.standard_normal((v, v)))
    w, _ = np.linalg.qr(rng.standard_normal((v, v)))
    s = scale * np.sqrt(v) * np.arange(1, v + 1, dtype=float) ** (-spectrum_exponent)
    logits = (u * s) @ w.T
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def n_params_low_rank(n_states: int, rank: int) -> int:
    """Parameters of the rank-r bigram model: U (V x r), W (V x r), bias (V).

    >>> n_params_low_rank(64, 8)
    1088
    """
    return 2 * n_states * rank + n_states


def _nll_and_grad(theta, counts, v, r):
    u, w, b = (
        theta[: v * r].reshape(v, r),
        theta[v * r : 2 * v * r].reshape(v, r),
        theta[2 * v * r :],
    )
    logits = u @ w.T + b
    logits -= logits.max(axis=1, keepdims=True)
    log_q = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    total = counts.sum()
    g = (np.exp(log_q) * counts.sum(axis=1, keepdims=True) - counts) / total  # d/d logits
    grad = np.concatenate([(g @ w).ravel(), (g.T @ u).ravel(), g.sum(axis=0)])
    return float(-(counts * log_q).sum() / total), grad


def fit_low_rank_bigram(
    counts: np.ndarray,
    *,
    rank: int,
    rng: np.random.Generator,
    add_k: float = 0.5,
    max_iter: int = 2000,
) -> np.ndarray:
    """Train Q = softmax(U W^T + b) on smoothed bigram counts; returns ln Q (V x V).

    Trained to the optimum, not near it: with gtol 1e-7 each run stopped where its gradient
    first fell below 1e-7, and that point moved with the CPU's SIMD and BLAS kernels (test
    losses differed by 2e-7 nats between AVX-512 and AVX2). With ftol 1e-15 and gtol 1e-10 they
    agree to 3e-9 at no measurable cost; the slowest of chapter 5's fifteen runs needs ~370
    iterations, hence ``max_iter`` 2000.
    """
    v = counts.shape[0]
    if not 1 <= rank <= v:
        raise ValueError(f"rank must lie in [1, {v}], got {rank}")
    c = counts + add_k
    theta0 = np.concatenate(
        [0.1 * rng.standard_normal(2 * v * rank), np.log(c.sum(axis=0) / c.sum())]
    )
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only cost
        res = minimize(
            _nll_and_grad,
            theta0,
            args=(c, v, rank),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-10},
        )
    u = res.x[: v * rank].reshape(v, rank)
    w = res.x[v * rank : 2 * v * rank].reshape(v, rank)
    logits = u @ w.T + res.x[2 * v * rank :]
    logits -= logits.max(axis=1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))


def expected_loss_nats(p: np.ndarray, log_q: np.ndarray) -> float:
    """Exact expected cross-entropy of model ln Q on the chain P: -sum_i pi_i sum_j P_ij ln Q_ij."""
    pi = markov.stationary_distribution(p)
    return float(-(pi[:, None] * p * log_q).sum())


def run_grid(
    p: np.ndarray, *, ranks, token_counts, rng: np.random.Generator, add_k: float = 0.5
) -> dict[str, np.ndarray]:
    """Train every (rank, D) pair on prefixes of one sampled sequence; exact test losses.

    Returns arrays n_params, n_tokens, loss (nats) and rank, one entry per run.
    """
    v = p.shape[0]
    tokens = markov.sample(p, int(max(token_counts)) + 1, rng=rng)
    rows = []
    for d in token_counts:
        counts = markov.ngram_counts(tokens[: int(d) + 1], order=2, vocab_size=v).astype(float)
        for r in ranks:
            log_q = fit_low_rank_bigram(counts, rank=int(r), rng=rng, add_k=add_k)
            rows.append((n_params_low_rank(v, int(r)), float(d), expected_loss_nats(p, log_q), r))
    arr = np.array(rows, dtype=float)
    return {"n_params": arr[:, 0], "n_tokens": arr[:, 1], "loss": arr[:, 2], "rank": arr[:, 3]}


def entropy_rate_nats(p: np.ndarray) -> float:
    """The chain's entropy rate in nats per token: the floor no model can beat."""
    return markov.entropy_rate_bits(p) * np.log(2.0)
