"""MoE routing under a capacity limit: token dropping, expert choice, fine-grained experts,
the router z-loss.

An expert-parallel layer gives each expert a fixed buffer, so that every device's work and
every all-to-all has a static shape. With T tokens, E experts and top-k routing, the buffer
holds

    C = ceil(f * k * T / E)

(token, expert) assignments, f the capacity factor (Switch Transformer, Fedus et al. 2022,
arXiv:2101.03961, eq. 3; GShard, Lepikhin et al. 2021, arXiv:2006.16668, sec. 2.2).
Assignments beyond C are dropped: the token skips that expert and only its residual (and its
other experts) carry it. Assignments are served in priority order, every token's first choice
before any second choice, as GShard does for top-2, and in token order within a rank.

Expert choice (Zhou et al. 2022, arXiv:2202.09368) turns the selection around: each expert
takes the C tokens that score highest for it, so no expert overflows and none idles, but a
token may be taken by several experts or by none.

Fine-grained experts (DeepSeekMoE, Dai et al. 2024, arXiv:2401.06066, sec. 3.1) split each
expert into m of 1/m the width and route to m k of them: the same parameters and FLOP, with
C(mE, mk) combinations instead of C(E, k). Shared experts (sec. 3.2) run for every token.

The router z-loss (ST-MoE, Zoph et al. 2022, arXiv:2202.08906, eq. 5) is the mean over tokens
of (log sum_j exp x_j)^2; it keeps router logits small, where the softmax's round-off is.

Home: chapters/03_architecture.ipynb, section "Routing under a capacity limit".
"""

from __future__ import annotations

import math

import numpy as np

from . import units


def expert_capacity(*, n_tokens: int, n_experts: int, top_k: int, capacity_factor: float) -> int:
    """Assignments one expert's buffer holds, ceil(f k T / E) (a count).

    >>> expert_capacity(n_tokens=4096, n_experts=64, top_k=2, capacity_factor=1.25)
    160
    """
    for name, v in (("n_tokens", n_tokens), ("n_experts", n_experts), ("top_k", top_k)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    if top_k > n_experts:
        raise ValueError(f"top_k={top_k} must not exceed n_experts={n_experts}")
    units.check_positive("capacity_factor", capacity_factor)
    return math.ceil(capacity_factor * top_k * n_tokens / n_experts - 1e-9)


def skewed_logits(
    rng: np.random.Generator, *, n_tokens: int, n_experts: int, skew: float
) -> np.ndarray:
    """Router logits (T, E): unit-normal noise per token and expert plus a fixed per-expert
    popularity, ``skew`` times a unit-normal draw per expert (dimensionless).

    skew = 0 is a router with no favourite; skew = 1 makes an expert one standard deviation
    more popular than another as often as the noise does.

    >>> skewed_logits(np.random.default_rng(0), n_tokens=3, n_experts=4, skew=0.5).shape
    (3, 4)
    """
    if skew < 0:
        raise ValueError(f"skew must be >= 0, got {skew!r}")
    popularity = skew * rng.standard_normal(int(n_experts))
    return rng.standard_normal((int(n_tokens), int(n_experts))) + popularity


def top_k_experts(logits: np.ndarray, *, top_k: int) -> np.ndarray:
    """Each token's ``top_k`` experts, best first (T, k) integer array.

    >>> top_k_experts(np.array([[0.0, 2.0, 1.0]]), top_k=2).tolist()
    [[1, 2]]
    """
    x = np.asarray(logits, dtype=np.float64)
    if x.ndim != 2 or not 1 <= top_k <= x.shape[1]:
        raise ValueError(f"logits must be (T, E) and 1 <= top_k <= E, got {x.shape}, {top_k!r}")
    return np.argsort(-x, axis=1, kind="stable")[:, : int(top_k)]


def dropped_fraction(expert_index: np.ndarray, *, n_experts: int, capacity: int) -> float:
    """Share of (token, expert) assignments that overflow their expert's ``capacity``.

    ``expert_index`` is (T,) for top-1 or (T, k), best choice first. Served by rank (every
    first choice, then every second, ...) and by token order within a rank; an expert keeps
    the first ``capacity`` assignments it receives. Dimensionless, in [0, 1].

    >>> dropped_fraction(np.array([0, 0, 0, 1]), n_experts=2, capacity=2)
    0.25
    """
    idx = np.asarray(expert_index)
    idx = idx[:, None] if idx.ndim == 1 else idx
    if idx.ndim != 2 or idx.size == 0 or idx.min() < 0 or idx.max() >= n_experts:
        raise ValueError(f"expert_index must be (T,) or (T, k) with entries in [0, {n_experts})")
    if isinstance(capacity, bool) or int(capacity) != capacity or capacity < 0:
        raise ValueError(f"capacity must be a whole number >= 0, got {capacity!r}")
    order = idx.T.ravel()  # rank-major: all first choices, then all second choices
    position = np.empty(order.size, dtype=np.int64)
    for e in range(n_experts):  # position of each assignment in its expert's queue
        mask = order == e
        position[mask] = np.arange(mask.sum())
    return float(np.mean(position >= capacity))


def drop_curve(logits: np.ndarray, *, top_k: int, capacity_factors: np.ndarray) -> np.ndarray:
    """Dropped share of assignments of one batch of router ``logits`` (T, E) at each capacity
    factor (:func:`expert_capacity`, :func:`dropped_fraction`); dimensionless array.

    >>> drop_curve(np.eye(4), top_k=1, capacity_factors=np.array([1.0])).tolist()
    [0.0]
    """
    t, e = np.asarray(logits).shape
    idx = top_k_experts(logits, top_k=top_k)
    caps = [
        expert_capacity(n_tokens=t, n_experts=e, top_k=top_k, capacity_factor=float(f))
        for f in np.asarray(capacity_factors, dtype=np.float64)
    ]
    return np.array([dropped_fraction(idx, n_experts=e, capacity=c) for c in caps])


def expected_dropped_fraction_uniform(*, n_tokens: int, n_experts: int, capacity: int) -> float:
    """Top-1 dropped share when each token picks an expert uniformly at random: the load of
    an expert is Binomial(T, 1/E), so the share is E * E[(L - C)+] / T (dimensionless).

    >>> round(expected_dropped_fraction_uniform(n_tokens=2, n_experts=2, capacity=1), 6)
    0.25
    """
    t, e, c = int(n_tokens), int(n_experts), int(capacity)
    p = 1.0 / e
    loads = np.arange(c + 1, t + 1)
    log_pmf = (
        np.array([math.lgamma(t + 1) - math.lgamma(k + 1) - math.lgamma(t - k + 1) for k in loads])
        + loads * math.log(p)
        + (t - loads) * math.log1p(-p)
    )
    return float(e * np.sum((loads - c) * np.exp(log_pmf)) / t)


def expert_choice_coverage(scores: np.ndarray, *, capacity: int) -> dict[str, float]:
    """Expert choice: each expert takes the ``capacity`` tokens with the highest scores.

    Returns unrouted (share of tokens no expert took), mean_experts (experts per token,
    E C / T by construction) and max_experts (the most experts one token got).

    >>> expert_choice_coverage(np.array([[1.0, 0.9], [0.0, 0.1]]), capacity=1)
    {'unrouted': 0.5, 'mean_experts': 1.0, 'max_experts': 2.0}
    """
    s = np.asarray(scores, dtype=np.float64)
    t = s.shape[0]
    if s.ndim != 2 or not 1 <= capacity <= t:
        raise ValueError(f"scores must be (T, E) and 1 <= capacity <= T, got {s.shape}, {capacity}")
    chosen = np.argsort(-s, axis=0, kind="stable")[: int(capacity)]  # (C, E) token ids
    per_token = np.bincount(chosen.ravel(), minlength=t)
    return {
        "unrouted": float(np.mean(per_token == 0)),
        "mean_experts": float(per_token.mean()),
        "max_experts": float(per_token.max()),
    }


def routing_combinations(*, n_experts: int, top_k: int, split: int = 1) -> int:
    """Distinct expert sets a token can be sent to after splitting each of ``n_experts`` into
    ``split`` experts and routing to ``split * top_k``: C(mE, mk) (a count).

    >>> routing_combinations(n_experts=16, top_k=2)  # DeepSeekMoE sec. 3.1's example
    120
    >>> routing_combinations(n_experts=16, top_k=2, split=4)
    4426165368
    """
    if split < 1 or top_k > n_experts:
        raise ValueError(f"need split >= 1 and top_k <= n_experts, got {split!r}, {top_k!r}")
    return math.comb(int(split * n_experts), int(split * top_k))


def z_loss(logits: np.ndarray) -> float:
    """ST-MoE's router z-loss, mean over tokens of (log sum_j exp x_j)^2 (dimensionless).

    >>> round(z_loss(np.zeros((2, 8))), 6) == round(math.log(8) ** 2, 6)
    True
    """
    x = np.asarray(logits, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]
    return float(np.mean(lse**2))
