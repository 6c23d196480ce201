"""The corpus of the tiny model: a random order-2 Markov source whose entropy is known.

The next symbol depends on the two before it, P(x_t | x_{t-2}, x_{t-1}). Written as a
first-order chain over the V^2 pair states (x_{t-1}, x_t), its entropy rate comes exactly from
``markov.entropy_rate_bits``: the floor no model can beat. ``conditional_entropy_bits`` gives
the exact loss of the best model with 0, 1 or 2 tokens of context, ``source_probs`` the
source's own probability of each token (the oracle's code). ``tinylm_train`` trains and probes
the model on it and re-exports these functions.

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import markov, units


def second_order_chain(
    n_symbols: int, *, rng: np.random.Generator, concentration: float = 0.5
) -> np.ndarray:
    """Transition matrix (V^2, V^2) over pair states s = V x_{t-1} + x_t of an order-2 source.

    Each of the V^2 contexts gets its own next-symbol distribution drawn from
    Dirichlet(concentration); state (a, b) moves only to states (b, c).

    >>> p = second_order_chain(3, rng=np.random.default_rng(0))
    >>> p.shape, int((p > 0).sum(axis=1).max())
    ((9, 9), 3)
    """
    if isinstance(n_symbols, bool) or int(n_symbols) != n_symbols or n_symbols < 2:
        raise ValueError(f"n_symbols must be an integer >= 2, got {n_symbols!r}")
    v = int(n_symbols)
    units.check_positive("concentration", concentration)
    q = rng.dirichlet(np.full(v, float(concentration)), size=v * v)  # row V a + b: P(c | a, b)
    p = np.zeros((v * v, v * v))
    rows = np.arange(v * v)
    p[rows[:, None], (rows % v)[:, None] * v + np.arange(v)] = q
    return p


def n_symbols_of(p: np.ndarray) -> int:
    v = math.isqrt(p.shape[0])
    if v * v != p.shape[0]:
        raise ValueError(f"p must be a pair-state matrix of shape (V^2, V^2), got {p.shape}")
    return v


def sample_symbols(p: np.ndarray, n_tokens: int, *, rng: np.random.Generator) -> np.ndarray:
    """``n_tokens`` symbols of the order-2 source (the second element of each pair state)."""
    return markov.sample(p, n_tokens, rng=rng) % n_symbols_of(p)


def conditional_entropy_bits(p: np.ndarray, context_tokens: int) -> float:
    """H(x_t | the previous k symbols) in bits, k = 0, 1 or 2: the best k-token model's loss.

    k = 2 is the entropy rate (the floor); k = 0 the entropy of the symbol frequencies.

    >>> p = second_order_chain(4, rng=np.random.default_rng(1))
    >>> h = [conditional_entropy_bits(p, k) for k in (0, 1, 2)]
    >>> bool(h[0] >= h[1] >= h[2]), round(h[2] - markov.entropy_rate_bits(p), 12)
    (True, 0.0)
    """
    v = n_symbols_of(p)
    pi = markov.stationary_distribution(p).reshape(v, v)  # pi[a, b] = P(x_{t-2}=a, x_{t-1}=b)
    q = p.reshape(v, v, v, v)[
        np.arange(v)[:, None], np.arange(v)[None, :], np.arange(v)[None, :]
    ]  # q[a, b, c] = P(c | a, b)
    joint = pi[:, :, None] * q  # P(a, b, c)
    if context_tokens not in (0, 1, 2):
        raise ValueError(f"context_tokens must be 0, 1 or 2, got {context_tokens!r}")
    joint = joint.sum(axis=tuple(range(2 - context_tokens)))  # keep the last k + 1 axes
    cond = joint / joint.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(-np.sum(np.where(joint > 0, joint * np.log2(cond), 0.0)))


def source_probs(p: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The source's own probability of tokens[2:], P(x_t | x_{t-2}, x_{t-1}): the oracle's code.

    >>> p = second_order_chain(2, rng=np.random.default_rng(0))
    >>> bool(np.isclose(source_probs(p, np.array([0, 1, 1]))[0], p[0 * 2 + 1, 1 * 2 + 1]))
    True
    """
    v, tokens = n_symbols_of(p), np.asarray(tokens, dtype=np.int64)
    return p[tokens[:-2] * v + tokens[1:-1], tokens[1:-1] * v + tokens[2:]]
