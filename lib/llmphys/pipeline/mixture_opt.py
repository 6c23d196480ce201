"""Choosing domain weights from small proxy runs: a RegMix-style regression on byte n-gram models.

RegMix (Liu et al. 2024, arXiv:2407.01492) trains many small proxy models, each on a mixture
w drawn from a Dirichlet, measures each one's loss on a held-out target, fits a regression
L(w) from weights to loss, and trains the large model on the mixture the regression predicts
best. DoReMi (Xie et al. 2023, arXiv:2305.10429) instead reweights domains during one proxy
run by their excess loss over a reference model; both treat mixture search as an experiment on
cheap models whose answer is hoped to transfer to a larger one.

Here the proxies are byte n-gram models with hierarchical Dirichlet smoothing (MacKay and Peto
1995, "A hierarchical Dirichlet language model", Natural Language Engineering 1(3)):

    P_n(c | h) = (count(h c) + a P_{n-1}(c | h')) / (count(h) + a),    P_0 = 1/256,

where h' drops the oldest byte of h. The regression is logarithmic in each weight,

    L(w) ≈ c + Σ_d β_d ln(w_d + ε),

the learning curve of a count model whose loss on domain d falls with the log of its data.
Its minimum on the simplex (Σ w_d = 1, w_d >= 0) is closed-form: setting the gradient equal
to a multiplier λ gives w_d + ε = -β_d / λ, so w_d = max(0, -β_d / λ - ε) with λ fixed by
Σ w_d = 1 (a water-filling: a domain whose β_d is not negative, or too small, gets nothing).
With ε → 0 the chosen weights are just -β_d / Σ(-β).

Home: chapters/02_data.ipynb, section "Choosing the mixture from proxy runs".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import units

N_BYTE_VALUES = 256  # the alphabet of a byte model


def dirichlet_mixtures(
    n_mixtures: int, n_domains: int, *, concentration: float, rng: np.random.Generator
) -> np.ndarray:
    """Random domain weights (fractions), shape (n_mixtures, n_domains), rows from a symmetric
    Dirichlet: concentration 1 is uniform on the simplex, larger values stay nearer its centre.

    >>> w = dirichlet_mixtures(4, 3, concentration=3.0, rng=np.random.default_rng(0))
    >>> w.shape, bool(np.allclose(w.sum(axis=1), 1.0))
    ((4, 3), True)
    """
    for name, v in (("n_mixtures", n_mixtures), ("n_domains", n_domains)):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    units.check_positive("concentration", concentration)
    return rng.dirichlet(np.full(int(n_domains), float(concentration)), size=int(n_mixtures))


def _check_weights(weights: np.ndarray, n: int) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {n} non-negative fractions summing to 1, got {w!r}")
    return w


def draw_mixture(
    pools: Sequence[np.ndarray], weights: np.ndarray, *, n_bytes: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """A training sample of about ``n_bytes`` bytes: from each domain's pool (uint8 arrays) one
    contiguous window of round(w_d n_bytes) bytes at a random offset, so no byte repeats.

    >>> pools = [np.arange(100, dtype=np.uint8), np.full(50, 7, dtype=np.uint8)]
    >>> [len(p) for p in draw_mixture(pools, np.array([0.8, 0.2]), n_bytes=40,
    ...                              rng=np.random.default_rng(0))]
    [32, 8]
    """
    w = _check_weights(weights, len(pools))
    units.check_positive("n_bytes", n_bytes)
    out = []
    for d, (pool, wd) in enumerate(zip(pools, w, strict=True)):
        n = round(float(wd) * n_bytes)
        if n > len(pool):
            raise ValueError(
                f"pool {d} holds {len(pool)} bytes, fewer than the {n} that weight {wd:.3f} of "
                f"n_bytes={n_bytes} asks for; lower n_bytes or that domain's weight"
            )
        start = int(rng.integers(0, len(pool) - n + 1))
        out.append(np.asarray(pool[start : start + n], dtype=np.uint8))
    return out


def _codes(x: np.ndarray, n: int) -> np.ndarray:
    """Each window of n bytes as one integer (base 256), oldest byte most significant."""
    x = np.asarray(x, dtype=np.int64)
    m = x.size - n + 1
    c = np.zeros(max(m, 0), dtype=np.int64)
    for k in range(n):
        c = c * N_BYTE_VALUES + x[k : k + m]
    return c


def _lookup(table: tuple[np.ndarray, np.ndarray], keys: np.ndarray) -> np.ndarray:
    u, cnt = table
    if u.size == 0:
        return np.zeros(keys.shape, dtype=np.int64)
    i = np.minimum(np.searchsorted(u, keys), u.size - 1)
    return np.where(u[i] == keys, cnt[i], 0)


def ngram_loss_bits(
    train: Sequence[np.ndarray], target: np.ndarray, *, order: int, alpha: float = 1.0
) -> float:
    """Bits per byte that a byte n-gram model trained on the pieces ``train`` spends on
    ``target``, with hierarchical Dirichlet smoothing of strength ``alpha`` (module docstring).

    n-grams are counted inside each piece, never across two. Positions of ``target`` from the
    ``order``-th byte on are scored. An empty model spends log2(256) = 8 bits a byte.

    >>> t = np.frombuffer(b"abababab", dtype=np.uint8)
    >>> ngram_loss_bits([], t, order=2)
    8.0
    >>> round(ngram_loss_bits([t] * 50, t, order=2), 3)   # P(b|a) = 200.5/201, P(a|b) = 150.5/151
    0.004
    """
    if int(order) != order or order < 1:
        raise ValueError(f"order must be an integer >= 1, got {order!r}")
    units.check_positive("alpha", alpha)
    tgt = np.asarray(target, dtype=np.int64)
    if tgt.size < order:
        raise ValueError(f"target must hold at least order={order} bytes, got {tgt.size}")
    return _score(train, np.unique(_codes(tgt, int(order)), return_counts=True), int(order), alpha)


def _score(
    train: Sequence[np.ndarray],
    target_grams: tuple[np.ndarray, np.ndarray],
    order: int,
    alpha: float,
) -> float:
    """ngram_loss_bits on the target's distinct order-grams and their counts (computed once)."""
    full, weight = target_grams
    p = np.full(full.size, 1.0 / N_BYTE_VALUES)
    for n in range(1, order + 1):
        grams = np.concatenate([_codes(x, n) for x in train] or [np.zeros(0, np.int64)])
        ctx = grams // N_BYTE_VALUES  # the n-1 older bytes (0 for unigrams: one shared context)
        key = full % N_BYTE_VALUES**n
        num = _lookup(np.unique(grams, return_counts=True), key)
        den = _lookup(np.unique(ctx, return_counts=True), key // N_BYTE_VALUES)
        p = (num + alpha * p) / (den + alpha)
    return float(-(weight * np.log2(p)).sum() / weight.sum())


def _log_features(weights: np.ndarray, eps: float) -> np.ndarray:
    return np.log(np.asarray(weights, dtype=float) + eps)


def fit_log_regression(
    weights: np.ndarray, losses: np.ndarray, *, eps: float = 0.01
) -> tuple[float, np.ndarray]:
    """Least-squares fit of L ≈ c + Σ_d β_d ln(w_d + ε) to proxy losses: returns (c, β).

    >>> w = dirichlet_mixtures(40, 3, concentration=2.0, rng=np.random.default_rng(1))
    >>> c, beta = fit_log_regression(w, 3.0 - np.log(w + 0.01) @ np.array([0.5, 0.3, 0.2]))
    >>> round(c, 6), beta.round(6).tolist()
    (3.0, [-0.5, -0.3, -0.2])
    """
    units.check_positive("eps", eps)
    w = np.asarray(weights, dtype=float)
    y = np.asarray(losses, dtype=float)
    if w.ndim != 2 or y.shape != (w.shape[0],) or w.shape[0] <= w.shape[1] + 1:
        raise ValueError(
            "weights must have shape (n, n_domains) and losses shape (n,), with n > n_domains + 1"
            f"; got {w.shape} and {y.shape}"
        )
    design = np.column_stack([np.ones(len(w)), _log_features(w, eps)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(coef[0]), coef[1:]


def predict_log_regression(
    weights: np.ndarray, intercept: float, beta: np.ndarray, *, eps: float = 0.01
) -> np.ndarray:
    """The fitted loss c + Σ_d β_d ln(w_d + ε) of each row of ``weights``.

    >>> predict_log_regression(np.array([[1.0, 0.0]]), 2.0, np.array([-1.0, -1.0]), eps=1.0)
    array([1.30685282])
    """
    return intercept + _log_features(np.atleast_2d(weights), eps) @ np.asarray(beta, dtype=float)


def optimal_mixture(beta: np.ndarray, *, eps: float = 0.01) -> np.ndarray:
    """The weights (fractions) minimising Σ_d β_d ln(w_d + ε) on the simplex:
    w_d = max(0, -β_d/λ - ε), λ = Σ_A(-β_d) / (1 + |A| ε) over the domains A that get weight.

    >>> optimal_mixture(np.array([-0.6, -0.3, -0.1]), eps=1e-12).round(6).tolist()
    [0.6, 0.3, 0.1]
    >>> optimal_mixture(np.array([-1.0, -0.001, 0.2]), eps=0.01).round(4).tolist()
    [1.0, 0.0, 0.0]
    """
    units.check_positive("eps", eps)
    b = -np.asarray(beta, dtype=float)  # a domain helps when beta < 0, i.e. b > 0
    if b.ndim != 1 or b.size < 1 or not np.all(np.isfinite(b)):
        raise ValueError(f"beta must be a 1-D array of finite coefficients, got {beta!r}")
    if not np.any(b > 0):
        raise ValueError("no domain lowers the fitted loss (every beta >= 0): nothing to choose")
    order = np.argsort(-b, kind="stable")
    w = np.zeros_like(b)
    for k in range(b.size, 0, -1):  # the largest active set whose weights all come out > 0
        active = order[:k]
        lam = b[active].sum() / (1.0 + k * eps)
        if b[active].min() / lam - eps > 0:
            w[active] = b[active] / lam - eps
            break
    return w / w.sum()


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (fraction in [-1, 1]) of two samples without ties.

    >>> rank_correlation(np.array([1.0, 2.0, 3.0]), np.array([10.0, 30.0, 20.0]))
    0.5
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError(f"a and b must be 1-D of equal length >= 2, got {a.shape}, {b.shape}")
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def regmix_trial(
    pools: Sequence[np.ndarray],
    target: np.ndarray,
    baselines: dict[str, np.ndarray],
    *,
    rng: np.random.Generator,
    n_proxies: int = 96,
    concentration: float = 3.0,
    proxy_bytes: int = 8_000,
    proxy_order: int = 2,
    large_bytes: int = 64_000,
    large_order: int = 3,
    eps: float = 0.01,
    n_fit: int | None = None,
) -> dict[str, object]:
    """One RegMix experiment: ``n_proxies`` proxy models (order ``proxy_order``, ``proxy_bytes``
    each) on Dirichlet mixtures, the log regression fitted on the first ``n_fit`` of them (all
    by default), its predicted-best mixture, then one larger model (order ``large_order``,
    ``large_bytes``) per mixture, the chosen one and each of ``baselines``, all on the same
    training windows' seed. Returns the proxies' weights and losses, the fit, the chosen
    weights, the rank correlation of predicted and measured loss on the proxies not fitted
    (nan if none), and ``large_loss``: bits per byte on ``target`` by mixture name."""
    n_fit = n_proxies if n_fit is None else n_fit
    tgt = np.asarray(target, dtype=np.int64)
    grams = {k: np.unique(_codes(tgt, k), return_counts=True) for k in (proxy_order, large_order)}
    w = dirichlet_mixtures(n_proxies, len(pools), concentration=concentration, rng=rng)
    loss = np.array(
        [
            _score(
                draw_mixture(pools, wi, n_bytes=proxy_bytes, rng=rng),
                grams[proxy_order],
                proxy_order,
                1.0,
            )
            for wi in w
        ]
    )
    c, beta = fit_log_regression(w[:n_fit], loss[:n_fit], eps=eps)
    held = slice(n_fit, None)
    rho = (
        rank_correlation(predict_log_regression(w[held], c, beta, eps=eps), loss[held])
        if n_proxies - n_fit >= 2
        else float("nan")
    )
    chosen = optimal_mixture(beta, eps=eps)
    seed = int(rng.integers(2**32))
    large = {
        name: _score(
            draw_mixture(pools, mix, n_bytes=large_bytes, rng=np.random.default_rng(seed)),
            grams[large_order],
            large_order,
            1.0,
        )
        for name, mix in {"chosen": chosen, **baselines}.items()
    }
    return {
        "weights": w,
        "losses": loss,
        "intercept": c,
        "beta": beta,
        "chosen": chosen,
        "rank_correlation": rho,
        "large_loss": large,
    }
