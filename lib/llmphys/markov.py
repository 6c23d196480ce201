"""A token source whose entropy rate is known exactly: a random first-order Markov chain.

Language has no known entropy, so a model's loss on real text cannot be compared
with a floor. A stationary Markov chain over V symbols with transition matrix P
has entropy rate

    H = - sum_i pi_i sum_j P_ij log2 P_ij     (bits per token),

where pi is the stationary distribution (pi P = pi). No predictor, however large,
can average fewer than H bits per token on its output, so the chain gives small
experiments an exact irreducible loss. Ref: Cover and Thomas, "Elements of
Information Theory", 2nd ed., theorem 4.2.4.

Used by the foundations and scaling-law chapters.

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import units


def random_chain(
    n_states: int, *, rng: np.random.Generator, concentration: float = 0.5
) -> np.ndarray:
    """A random transition matrix, each row drawn from Dirichlet(concentration, ...).

    Small concentrations give peaked rows (low entropy); large ones near-uniform rows.

    >>> p = random_chain(4, rng=np.random.default_rng(0))
    >>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0))
    ((4, 4), True)
    """
    if isinstance(n_states, bool) or int(n_states) != n_states or n_states < 2:
        raise ValueError(f"n_states must be an integer >= 2, got {n_states!r}")
    units.check_positive("concentration", concentration)
    return rng.dirichlet(np.full(int(n_states), float(concentration)), size=int(n_states))


def _check_chain(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"transition matrix must be square, got shape {p.shape}")
    if np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("transition matrix rows must be probability vectors (>= 0, sum 1)")
    return p


def stationary_distribution(p: np.ndarray) -> np.ndarray:
    """The distribution pi with pi P = pi: the left eigenvector of P for eigenvalue 1.

    >>> stationary_distribution(np.array([[0.9, 0.1], [0.5, 0.5]])).round(4)
    array([0.8333, 0.1667])
    """
    p = _check_chain(p)
    values, vectors = np.linalg.eig(p.T)
    pi = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    return pi / pi.sum()


def entropy_rate_bits(p: np.ndarray) -> float:
    """Entropy rate of the stationary chain in bits per token (the loss floor).

    >>> round(entropy_rate_bits(np.full((4, 4), 0.25)), 6)  # uniform: log2(4)
    2.0
    """
    p = _check_chain(p)
    pi = stationary_distribution(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        row_h = -np.sum(np.where(p > 0, p * np.log2(p), 0.0), axis=1)
    return float(pi @ row_h)


def sample(
    p: np.ndarray, n_tokens: int, *, rng: np.random.Generator, start: int | None = None
) -> np.ndarray:
    """``n_tokens`` symbols from the chain, starting from ``start`` or from pi.

    Vectorised by inverse-CDF sampling one step at a time (n_tokens steps of O(1)).
    """
    p = _check_chain(p)
    units.check_positive("n_tokens", n_tokens)
    n = int(n_tokens)
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0  # guard against round-off leaving the last bin short of 1
    u = rng.random(n)
    out = np.empty(n, dtype=np.int64)
    state = int(rng.choice(len(p), p=stationary_distribution(p))) if start is None else int(start)
    for t in range(n):
        state = int(np.searchsorted(cdf[state], u[t], side="right"))
        out[t] = state
    return out


def ngram_counts(tokens: np.ndarray, *, order: int, vocab_size: int) -> np.ndarray:
    """Counts of every ``order``-gram, as an array of shape (vocab_size,) * order.

    >>> ngram_counts(np.array([0, 1, 0, 1]), order=2, vocab_size=2)
    array([[0, 2],
           [1, 0]])
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    if order < 1 or tokens.size < order:
        raise ValueError(f"order must be in [1, len(tokens)], got {order}")
    if tokens.min() < 0 or tokens.max() >= vocab_size:
        raise ValueError(f"tokens must lie in [0, vocab_size={vocab_size})")
    index = np.zeros(tokens.size - order + 1, dtype=np.int64)
    for k in range(order):  # mixed-radix index of each window
        index = index * vocab_size + tokens[k : tokens.size - order + 1 + k]
    counts = np.bincount(index, minlength=vocab_size**order)
    return counts.reshape((vocab_size,) * order)


def ngram_cross_entropy_bits(
    train_counts: np.ndarray, tokens: np.ndarray, *, add_k: float = 0.5
) -> float:
    """Bits per token that an add-k smoothed n-gram model (``train_counts``) spends on ``tokens``.

    P(x_t | context) = (c(context, x_t) + k) / (c(context) + k V): Laplace for k = 1,
    Jeffreys-Krichevsky-Trofimov for k = 1/2.
    """
    units.check_positive("add_k", add_k)
    order, v = train_counts.ndim, train_counts.shape[-1]
    probs = (train_counts + add_k) / (train_counts.sum(axis=-1, keepdims=True) + add_k * v)
    tokens = np.asarray(tokens, dtype=np.int64)
    windows = np.stack([tokens[k : tokens.size - order + 1 + k] for k in range(order)])
    return float(-np.mean(np.log2(probs[tuple(windows)])))
