"""Emergence as a property of the metric: smooth per-token loss, sharp exact match.

Schaeffer, Miranda and Koyejo 2023 ("Are Emergent Abilities of Large Language Models a
Mirage?", arXiv:2304.15004, sec. 2) argue that many "emergent" abilities come from
scoring a multi-token answer all-or-nothing. If the per-token cross-entropy falls as a
power law in parameters, L_tok(N) = (N / c)^(-alpha), then each answer token is right
with probability p(N) = exp(-L_tok(N)), and

    exact match of an L-token answer      = p^L          (zero for decades, then a rise)
    expected token edit distance (errors) = L (1 - p)    (a power law in N: smooth)

The same models, the same predictions: only the score changes. Since p(N)^L = p(N / L^(1/alpha)),
exact match on long answers is the one-token curve shifted to larger N; seen from a model family
that spans a few decades below and around that shift, it looks like a sudden jump. A finite test
set adds a resolution floor: with n items, any accuracy below about 1/n is measured as zero.

The constants below are illustrative, not fitted to any model: the point is the shape.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import units

ILLUSTRATIVE_N_C = 1e8  # params: where the per-token loss is 1 nat
ILLUSTRATIVE_ALPHA = 0.3


def per_token_loss(n_params, *, n_c: float = ILLUSTRATIVE_N_C, alpha: float = ILLUSTRATIVE_ALPHA):
    """Per-token cross-entropy in nats, (N / n_c)^(-alpha) (Schaeffer et al. 2023, eq. 1).

    >>> round(per_token_loss(1e10), 4)
    0.2512
    """
    n = np.asarray(n_params, dtype=float)
    if np.any(n <= 0):
        raise ValueError("n_params must be positive")
    units.check_positive("n_c", n_c)
    units.check_positive("alpha", alpha)
    out = (n / n_c) ** (-alpha)
    return float(out) if out.ndim == 0 else out


def token_accuracy(loss_nats):
    """Probability that one answer token is right, exp(-loss)."""
    return np.exp(-np.asarray(loss_nats, dtype=float))


def exact_match(p_token, *, answer_tokens: int):
    """All ``answer_tokens`` right: p^L (Schaeffer et al. 2023, sec. 2).

    >>> round(float(exact_match(0.9, answer_tokens=10)), 4)
    0.3487
    """
    _check_tokens(answer_tokens)
    return np.asarray(p_token, dtype=float) ** answer_tokens


def token_edit_distance(p_token, *, answer_tokens: int):
    """Expected number of wrong tokens in an L-token answer, L (1 - p): linear in p."""
    _check_tokens(answer_tokens)
    return answer_tokens * (1.0 - np.asarray(p_token, dtype=float))


def threshold_n_params(
    *,
    answer_tokens: int,
    level: float = 0.5,
    n_c: float = ILLUSTRATIVE_N_C,
    alpha: float = ILLUSTRATIVE_ALPHA,
) -> float:
    """Parameters at which exact match first reaches ``level``: N = n_c (L / -ln level)^(1/alpha).

    The "emergence point" moves with the answer length, which a real capability would not.

    >>> f"{threshold_n_params(answer_tokens=10):.2e}"
    '7.31e+11'
    """
    _check_tokens(answer_tokens)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return n_c * (answer_tokens / -np.log(level)) ** (1.0 / alpha)


def measured_accuracy(p_correct, *, n_items: int, rng: np.random.Generator):
    """Accuracy measured on ``n_items`` test items: Binomial(n, p) / n for each p."""
    if int(n_items) != n_items or n_items < 1:
        raise ValueError(f"n_items must be a positive integer, got {n_items!r}")
    p = np.asarray(p_correct, dtype=float)
    return rng.binomial(int(n_items), p) / n_items


def _check_tokens(answer_tokens: int) -> None:
    if isinstance(answer_tokens, bool) or int(answer_tokens) != answer_tokens or answer_tokens < 1:
        raise ValueError(f"answer_tokens must be a positive integer, got {answer_tokens!r}")
