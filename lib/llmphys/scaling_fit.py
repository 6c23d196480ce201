"""Fitting L(N, D) = E + A/N^alpha + B/D^beta to training runs, the way Chinchilla did.

Hoffmann et al. 2022 (arXiv:2203.15556, sec. 3.3 and app. D.2) fit their Approach 3 by
minimising a Huber loss (delta = 1e-3) between predicted and observed *log* loss, with
L-BFGS started from a grid of initial values. In log space the law is a log-sum-exp,

    log L = LSE(a - alpha log N,  b - beta log D,  e),   A = e^a, B = e^b, E = e^e,

which keeps A, B, E positive without constraints. Besiroglu, Erdil, Barnett and You 2024
("Chinchilla Scaling: A replication attempt", arXiv:2404.10102) re-extracted 245 runs
from the paper's Figure 4, refit them this way and found a different law (E = 1.82,
A = 482.0, B = 2085.4, alpha = 0.3478, beta = 0.3658) with bootstrap standard errors
much wider than the original's. This module does the same fit with an analytic
gradient, so that a few dozen starts and a bootstrap run in seconds.
The runs are data/chinchilla_svg_extracted_data.csv, read through ``specs.registry_csv``.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from . import specs
from .scaling_laws import ParametricLaw

CHINCHILLA_CSV = "chinchilla_svg_extracted_data.csv"
PARAM_NAMES = ("E", "A", "B", "alpha", "beta")


def load_chinchilla_runs(*, drop_highest: int = 5) -> dict[str, np.ndarray]:
    """The extracted Chinchilla runs: n_params, train_flop, n_tokens = C/(6N), loss (nats).

    ``drop_highest`` removes that many runs with the largest loss, as the replication did
    (five: 245 -> 240 runs; they sit far above the law at tiny token counts).
    """
    header, rows = specs.registry_csv(CHINCHILLA_CSV)
    missing = {"Model Size", "Training FLOP", "loss"} - set(header)
    if missing:
        raise ValueError(f"{CHINCHILLA_CSV}: missing column(s) {sorted(missing)}")
    n, c, loss = (_column(rows, name) for name in ("Model Size", "Training FLOP", "loss"))
    if drop_highest:
        keep = loss < np.sort(loss)[-drop_highest]
        n, c, loss = n[keep], c[keep], loss[keep]
    return {"n_params": n, "train_flop": c, "n_tokens": c / (6.0 * n), "loss": loss}


def _column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    """One numeric column of the CSV; a cell that is not a number names its row and column."""
    out = []
    for i, r in enumerate(rows):
        try:
            out.append(float(r[name]))
        except (TypeError, ValueError):
            raise ValueError(
                f"{CHINCHILLA_CSV} row {i + 2}: {name}={r[name]!r} is not a number"
            ) from None
    return np.array(out)


def huber(r: np.ndarray, delta: float) -> np.ndarray:
    """Huber's loss: r^2/2 inside |r| <= delta, delta (|r| - delta/2) outside."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


def _objective(theta, log_n, log_d, log_l, delta):
    """Sum of Huber losses of log-loss residuals, and its gradient in (a, b, e, alpha, beta)."""
    a, b, e, alpha, beta = theta
    terms = np.stack([a - alpha * log_n, b - beta * log_d, np.full_like(log_n, e)])
    top = terms.max(axis=0)
    w = np.exp(terms - top)
    pred = top + np.log(w.sum(axis=0))
    w /= w.sum(axis=0)  # softmax weights: d pred / d term_k
    r = log_l - pred
    psi = -np.clip(r, -delta, delta)  # d huber / d pred
    grad = np.array(
        [psi @ w[0], psi @ w[1], psi @ w[2], -(psi * w[0]) @ log_n, -(psi * w[1]) @ log_d]
    )
    return float(huber(r, delta).sum()), grad


def initial_grid(kind: str = "small") -> np.ndarray:
    """Starting points (a, b, e, alpha, beta) for the multi-start fit.

    "hoffmann": the 4,500-point grid of Hoffmann et al. app. D.2 as the replication ran it
    (alpha, beta in 0..2 by 0.5; e in -1..1 by 0.5; a, b in 0..25 by 5). "small": 18
    starts over the same ranges; on the Chinchilla data one of them, (5, 10, -1, 0.5, 0.2),
    ends in a worse local minimum (beta near 1.3), which is why one start is not enough.
    """
    axes: tuple[Iterable[float], ...]
    if kind == "hoffmann":
        axes = (
            np.arange(0, 30, 5),
            np.arange(0, 30, 5),
            np.arange(-1, 1.5, 0.5),
            np.arange(0, 2.5, 0.5),
            np.arange(0, 2.5, 0.5),
        )
    elif kind == "small":
        axes = ((0.0, 5.0, 10.0), (0.0, 5.0, 10.0), (-1.0, 0.5), (0.5,), (0.2,))
    else:
        raise ValueError(f"kind must be 'small' or 'hoffmann', got {kind!r}")
    return np.array(list(itertools.product(*axes)), dtype=float)


def _to_law(theta, key: str) -> ParametricLaw:
    a, b, e, alpha, beta = theta
    return ParametricLaw(
        key=key,
        name=f"fit ({key})",
        E=float(np.exp(e)),
        A=float(np.exp(a)),
        B=float(np.exp(b)),
        alpha=float(alpha),
        beta=float(beta),
    )


def _from_law(law: ParametricLaw) -> np.ndarray:
    return np.array([np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta])


def fit_parametric_law(
    *,
    n_params,
    n_tokens,
    loss,
    inits: np.ndarray | None = None,
    delta: float = 1e-3,
    key: str = "fit",
) -> ParametricLaw:
    """Fit E, A, B, alpha, beta by Huber loss on log-loss with L-BFGS from many starts.

    Returns the best fit over ``inits`` (default ``initial_grid("small")``) as a law.
    Ref: Hoffmann et al. 2022 app. D.2; Besiroglu et al. 2024 sec. 2.
    """
    n, d, l_obs = (np.asarray(x, dtype=float) for x in (n_params, n_tokens, loss))
    if not (n.shape == d.shape == l_obs.shape) or n.size < 5:
        raise ValueError("n_params, n_tokens and loss must be arrays of one length >= 5")
    if np.any(n <= 0) or np.any(d <= 0) or np.any(l_obs <= 0):
        raise ValueError("n_params, n_tokens and loss must be positive")
    args = (np.log(n), np.log(d), np.log(l_obs), delta)
    starts = initial_grid() if inits is None else np.atleast_2d(np.asarray(inits, dtype=float))
    best = None
    # One BLAS thread: L-BFGS on five parameters gains nothing from threads, and on a busy
    # machine OpenBLAS's thread pool made these fits ten times slower.
    # ftol 0: stop on the gradient (gtol) or where float precision ends the line search, not
    # after the first step that lowers the Huber sum by under 1e-15 relative. That stop moved
    # with the CPU's SIMD kernels: one-start bootstrap fits of A differed by 4e-6 relative
    # between AVX-512 and AVX2 (enough to change a printed digit), and agree to 1e-7 this way.
    # It also stopped the start (0, 10, 0.5, 0.5, 0.2) on a slope (Huber sum 0.0113, beta 1.18)
    # that the fit now descends to the global minimum (0.00102).
    with threadpool_limits(limits=1, user_api="blas"):
        for x0 in starts:
            res = minimize(
                _objective,
                x0,
                args=args,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": 2000, "ftol": 0.0, "gtol": 1e-10},
            )
            if np.all(np.isfinite(res.x)) and (best is None or res.fun < best.fun):
                best = res
    if best is None:
        raise ValueError("no start of the fit reached a finite point; pass other inits")
    return _to_law(best.x, key)


def _objective_batch(theta, log_n, log_d, log_l, counts, delta):
    """``_objective`` for a batch of problems: theta (B, 5), counts (B, n) weights per run.

    A bootstrap resample drawn with replacement is the full data with integer weights (how
    many times each run was drawn), so every resample shares the same arrays. Returns the
    Huber sums (B,) and their gradients (B, 5).
    """
    a, b, e, alpha, beta = (theta[:, k, None] for k in range(5))
    t0 = a - alpha * log_n  # (B, n)
    t1 = b - beta * log_d
    top = np.maximum(np.maximum(t0, t1), e)
    w0, w1, w2 = np.exp(t0 - top), np.exp(t1 - top), np.exp(e - top)
    total = w0 + w1 + w2
    r = log_l - (top + np.log(total))
    psi = -np.clip(r, -delta, delta) * counts / total  # d huber / d pred, over the softmax sum
    q0, q1, q2 = psi * w0, psi * w1, psi * w2
    grad = np.column_stack(
        [q0.sum(axis=1), q1.sum(axis=1), q2.sum(axis=1), -(q0 @ log_n), -(q1 @ log_d)]
    )
    return (huber(r, delta) * counts).sum(axis=1), grad


BOOT_GTOL = 1e-10
"""Stop a resample's fit when every gradient component is below this (scipy's gtol above)."""
BOOT_MAXITER = 2000


def _bfgs_batch(x, fun, *, gtol: float = BOOT_GTOL, maxiter: int = BOOT_MAXITER) -> np.ndarray:
    """Minimise B independent smooth problems at once: BFGS with a backtracking line search.

    ``fun(x)`` maps (B, k) points to ((B,) values, (B, k) gradients), and ``fun(x_rows, rows)``
    does the same for the problems numbered ``rows`` only. Each problem keeps its
    own inverse-Hessian estimate (Nocedal and Wright 2006, sec. 6.1, eq. 6.17, with the
    initial scaling of eq. 6.20) and stops on its own when its gradient is below ``gtol``, when
    no step along its search direction lowers its value, or when five steps in a row lower it
    by under 1e-15 of itself (float precision reached, where scipy's line search gives up).
    """
    x = np.array(x, dtype=float)
    n_prob, k = x.shape
    f, g = fun(x)
    h = np.broadcast_to(np.eye(k), (n_prob, k, k)).copy()
    first = np.ones(n_prob, dtype=bool)
    flat = np.zeros(n_prob, dtype=int)  # consecutive steps that lowered f by under 1e-15 of it
    active = np.max(np.abs(g), axis=1) >= gtol
    for _ in range(maxiter):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        p = -np.einsum("bij,bj->bi", h[idx], g[idx])
        slope = np.einsum("bi,bi->b", p, g[idx])
        bad = slope >= 0  # not a descent direction: restart from the gradient
        p[bad], slope[bad] = -g[idx][bad], -np.einsum("bi,bi->b", g[idx][bad], g[idx][bad])
        h[idx[bad]] = np.eye(k)
        step = np.where(first[idx], 1.0 / np.maximum(np.abs(g[idx]).sum(axis=1), 1e-300), 1.0)
        x_new, f_new, g_new = x[idx].copy(), f[idx].copy(), g[idx].copy()
        pending = np.ones(idx.size, dtype=bool)
        for _trial in range(60):
            j = np.flatnonzero(pending)
            if j.size == 0:
                break
            trial = x[idx[j]] + step[j, None] * p[j]
            ft, gt = fun(trial, idx[j])
            ok = ft <= f[idx[j]] + 1e-4 * step[j] * slope[j]
            x_new[j[ok]], f_new[j[ok]], g_new[j[ok]] = trial[ok], ft[ok], gt[ok]
            pending[j[ok]] = False
            step[j[~ok]] *= 0.5
        stalled = pending  # no acceptable step: this problem is as good as floats allow
        s_vec = x_new - x[idx]
        y_vec = g_new - g[idx]
        sy = np.einsum("bi,bi->b", s_vec, y_vec)
        upd = (~stalled) & (sy > 1e-300)
        if upd.any():
            u = idx[upd]
            sv, yv, syv = s_vec[upd], y_vec[upd], sy[upd]
            scale = np.where(first[u], syv / np.einsum("bi,bi->b", yv, yv), 1.0)
            hu = h[u] * scale[:, None, None]
            rho = 1.0 / syv
            eye = np.eye(k)
            left = eye - rho[:, None, None] * np.einsum("bi,bj->bij", sv, yv)
            h[u] = np.einsum("bij,bjk,blk->bil", left, hu, left) + rho[:, None, None] * np.einsum(
                "bi,bj->bij", sv, sv
            )
            first[u] = False
        gain = f[idx] - f_new
        flat[idx] = np.where(gain <= 1e-15 * np.abs(f[idx]), flat[idx] + 1, 0)
        x[idx], f[idx], g[idx] = x_new, f_new, g_new
        done = stalled | (flat[idx] >= 5) | (np.max(np.abs(g_new), axis=1) < gtol)
        active[idx[done]] = False
    return x


def bootstrap_laws(
    *,
    n_params,
    n_tokens,
    loss,
    n_boot: int,
    rng: np.random.Generator,
    start: ParametricLaw,
    delta: float = 1e-3,
) -> np.ndarray:
    """Refit ``n_boot`` resamples (with replacement) from ``start``; rows are E, A, B, alpha, beta.

    One start per resample from the full-data fit, as the replication did (4,000 resamples).
    All resamples are fitted at once (``_bfgs_batch`` on ``_objective_batch``): a resample is
    the data with integer weights, so 4,000 fits cost a few hundred vectorised passes rather
    than 4,000 calls of scipy (``bootstrap_laws_scipy``, which the tests check it against).
    """
    if int(n_boot) != n_boot or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot}")
    n, d, l_obs = (np.asarray(x, dtype=float) for x in (n_params, n_tokens, loss))
    log_n, log_d, log_l = np.log(n), np.log(d), np.log(l_obs)
    idx = rng.integers(0, n.size, (int(n_boot), n.size))  # the same draws as the scipy loop
    counts = np.stack([np.bincount(row, minlength=n.size) for row in idx]).astype(float)

    def fun(theta, rows=None):
        c = counts if rows is None else counts[rows]
        return _objective_batch(theta, log_n, log_d, log_l, c, delta)

    x0 = np.broadcast_to(_from_law(start), (int(n_boot), 5))
    with threadpool_limits(limits=1, user_api="blas"):
        theta = _bfgs_batch(x0, fun)
    a, b, e, alpha, beta = theta.T
    return np.column_stack([np.exp(e), np.exp(a), np.exp(b), alpha, beta])


def bootstrap_laws_scipy(
    *,
    n_params,
    n_tokens,
    loss,
    n_boot: int,
    rng: np.random.Generator,
    start: ParametricLaw,
    delta: float = 1e-3,
) -> np.ndarray:
    """``bootstrap_laws`` one resample at a time with scipy's L-BFGS (the reference, slower)."""
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, got {n_boot}")
    n, d, l_obs = (np.asarray(x, dtype=float) for x in (n_params, n_tokens, loss))
    x0 = _from_law(start)
    out = np.empty((n_boot, 5))
    for i in range(n_boot):
        idx = rng.integers(0, n.size, n.size)
        law = fit_parametric_law(
            n_params=n[idx], n_tokens=d[idx], loss=l_obs[idx], inits=x0, delta=delta
        )
        out[i] = [law.E, law.A, law.B, law.alpha, law.beta]
    return out


def laws_from_rows(samples: np.ndarray) -> list[ParametricLaw]:
    """Rows of (E, A, B, alpha, beta), as returned by ``bootstrap_laws``, as laws."""
    return [
        ParametricLaw(
            key=f"boot{i}",
            name=f"bootstrap {i}",
            E=float(e),
            A=float(a),
            B=float(b),
            alpha=float(al),
            beta=float(be),
        )
        for i, (e, a, b, al, be) in enumerate(np.asarray(samples, dtype=float))
    ]


def percentile_interval(samples: np.ndarray, *, level: float = 0.8) -> np.ndarray:
    """Central ``level`` percentile interval of each column: shape (2, n_columns).

    >>> percentile_interval(np.arange(101.0)[:, None], level=0.8).ravel().tolist()
    [10.0, 90.0]
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    q = 50 * (1 - level)
    return np.percentile(np.asarray(samples, dtype=float), [q, 100 - q], axis=0)


def log_residuals(law: ParametricLaw, *, n_params, n_tokens, loss) -> np.ndarray:
    """log(observed loss) - log(predicted loss) for every run (the quantity the fit weighs)."""
    n, d = np.asarray(n_params), np.asarray(n_tokens)
    pred = law.E + law.A / n**law.alpha + law.B / d**law.beta
    return np.log(np.asarray(loss, dtype=float)) - np.log(pred)
