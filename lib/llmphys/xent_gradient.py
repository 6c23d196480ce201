"""The softmax cross-entropy gradient identity, dL/dz = p - y, and a finite-difference check.

For one token with logits z (length V), p = softmax(z) and a one-hot target y, the loss is
L = -ln p_y = -z_y + ln sum_j exp(z_j), so dL/dz_i = exp(z_i) / sum_j exp(z_j) - [i = y]
= p_i - y_i. Averaged over n tokens, as the training loss is, every row is divided by n.
Two consequences a test can check: each row of the gradient sums to zero (the loss does not
change when every logit moves by the same amount), and each entry lies in (-1, 1).

A central difference (f(x + h) - f(x - h)) / 2h has truncation error of order h^2 f'''/6 and
round-off error of order eps_machine |f| / h, so its total error is smallest near
h ~ eps_machine^(1/3) (about 6e-6 in float64; Press et al., Numerical Recipes, 3rd ed., sec. 5.7).

Home: chapters/01_foundations.ipynb, section "The gradient of the loss: p minus y".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import nn, objective

FLOAT64_EPS = float(np.finfo(np.float64).eps)
"""Machine epsilon of float64, 2^-52 (IEEE 754-2008)."""

OPTIMAL_STEP = FLOAT64_EPS ** (1.0 / 3.0)
"""The central difference's best step for a function of order one, eps^(1/3) (Numerical
Recipes, 3rd ed., sec. 5.7)."""


CHECK_RTOL = 1e-7
"""A gradient check passes when the central difference and the closed form agree to this
relative error: round-off and truncation at the best step give about eps^(2/3) ~ 4e-11 for a
function of order one, and chains of matmuls lose a few decades more (the chapter measures
1e-9 to 1e-8 on the tiny decoder); a wrong derivative gives errors of order one."""


def _check(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z = np.asarray(logits, dtype=float)
    t = np.asarray(targets)
    if z.ndim < 1 or z.shape[-1] < 2:
        raise ValueError(f"logits must have a last axis of at least 2 classes, got {z.shape}")
    if t.shape != z.shape[:-1]:
        raise ValueError(f"targets must have shape {z.shape[:-1]}, got {t.shape}")
    if t.size and (t.min() < 0 or t.max() >= z.shape[-1]):
        raise ValueError(f"targets must lie in [0, {z.shape[-1]}), got [{t.min()}, {t.max()}]")
    return z, t.astype(np.int64)


def logit_gradient(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Gradient of the mean cross-entropy (nats per token) with respect to the logits.

    (softmax(z) - onehot(y)) / n, with n the number of tokens (the product of the leading axes).

    >>> logit_gradient(np.log(np.array([[1.0, 3.0]])), np.array([1])).round(3)  # p = (1/4, 3/4)
    array([[ 0.25, -0.25]])
    """
    z, t = _check(logits, targets)
    p = nn.softmax(z)
    y = np.eye(z.shape[-1])[t]
    return (p - y) / max(t.size, 1)


def central_difference(
    f: Callable[[np.ndarray], float],
    x: np.ndarray,
    *,
    step: float = OPTIMAL_STEP,
    indices: Sequence[int] | None = None,
) -> np.ndarray:
    """Central-difference estimate of the gradient of scalar ``f`` at ``x``, same shape as ``x``.

    (f(x + h e_i) - f(x - h e_i)) / 2h for each flat index i in ``indices`` (all by default);
    entries not in ``indices`` are NaN. Costs 2 evaluations of f per index.

    >>> central_difference(lambda v: float(np.sum(v ** 3)), np.array([1.0, 2.0])).round(6)
    array([ 3., 12.])
    """
    if not step > 0:
        raise ValueError(f"step must be positive, got {step!r}")
    x = np.array(x, dtype=float)
    out = np.full(x.shape, np.nan)
    flat, grad = x.reshape(-1), out.reshape(-1)
    for i in range(flat.size) if indices is None else indices:
        keep = flat[i]
        flat[i] = keep + step
        up = f(x)
        flat[i] = keep - step
        down = f(x)
        flat[i] = keep
        grad[i] = (up - down) / (2.0 * step)
    return out


def best_step(n_tokens: int) -> float:
    """The central difference's best step, in logit units, for a loss averaged over n tokens.

    The mean loss is of order one while each logit's first and third derivatives are of order
    1/n, so balancing truncation (h^2 / 6) f3 against round-off eps |f| / h puts the optimum at
    h ~ (eps n)^(1/3), order-one factors dropped: the per-token eps^(1/3) times n^(1/3).

    >>> f"{best_step(512):.1e}"
    '4.8e-05'
    """
    if int(n_tokens) != n_tokens or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive integer, got {n_tokens!r}")
    return float((FLOAT64_EPS * n_tokens) ** (1.0 / 3.0))


def max_relative_error(estimate: np.ndarray, exact: np.ndarray) -> float:
    """max |estimate - exact| / max |exact| over the entries where ``estimate`` is defined.

    >>> max_relative_error(np.array([1.0, 2.1]), np.array([1.0, 2.0]))
    0.05
    """
    e, x = np.asarray(estimate, dtype=float), np.asarray(exact, dtype=float)
    if e.shape != x.shape:
        raise ValueError(f"estimate has shape {e.shape}, exact {x.shape}: they must match")
    ok = ~np.isnan(e)
    scale = float(np.max(np.abs(x[ok]))) if ok.any() else 0.0
    if scale == 0.0:
        raise ValueError("exact is zero wherever estimate is defined: no scale to compare with")
    return round(float(np.max(np.abs(e[ok] - x[ok]))) / scale, 15)


def step_scan(
    logits: np.ndarray, targets: np.ndarray, *, steps: Sequence[float]
) -> dict[str, np.ndarray]:
    """The central difference's error against the closed form, at each step h.

    Returns "step" and "max_relative_error" (over every logit), for a figure of truncation
    against round-off: the error falls as h^2, then rises as eps / h.
    """
    z, t = _check(logits, targets)
    exact = logit_gradient(z, t)

    def loss(v: np.ndarray) -> float:
        return objective.cross_entropy_nats(v, t)

    errs = [max_relative_error(central_difference(loss, z, step=h), exact) for h in steps]
    return {"step": np.asarray(steps, dtype=float), "max_relative_error": np.asarray(errs)}
