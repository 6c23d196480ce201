"""Splitting compute between pretraining, RL and inference; lifetime-optimal overtraining.

With the Chinchilla loss L(N, D) = E + A N^-alpha + B D^-beta (Hoffmann et al. 2022,
eq. 2), a model of N parameters that must reach loss L and then serve D_inf tokens
costs 6 N D(N) + 2 c N D_inf FLOP-equivalents (c: cost of an inference FLOP relative
to a training FLOP). Minimising over N (Sardana et al. 2024, arXiv:2401.00448) gives,
from the first-order conditions, a ratio of lifetime inference to pretraining cost

    C_inf / C_pre = (alpha A N^-alpha) / (beta B D^-beta) - 1,

which equals 1 only where the two loss terms stand in the ratio X : Y = 2 beta : alpha
(X = A N^-alpha, Y = B D^-beta; 2.10 for the refit). The
rule "costs are minimised where they are equal" is the special case of two costs
with equal and opposite elasticities; in general the cost-minimising shares equal
the elasticities (a Cobb-Douglas result).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from . import scaling_laws, units
from .scaling_laws import ParametricLaw

# The loss law is the registry's (data/scaling_laws.toml), at the paper's own precision: by
# default Besiroglu et al. 2024's refit of Hoffmann et al.'s approach 3 (arXiv:2404.10102,
# table 1), whose optimum is ~20 tokens/param like Hoffmann's approaches 1 and 2. Hoffmann's
# own fit ("hoffmann2022") sits near 80-120 tokens/param, which Besiroglu et al. trace to a
# fitting error.
DEFAULT_LAW = "besiroglu2024"


def _law(fit: ParametricLaw | None) -> ParametricLaw:
    return scaling_laws.parametric_law(DEFAULT_LAW) if fit is None else fit


# Hoffmann et al. 2022, table 3: compute-optimal models see about 20 tokens per parameter.
CHINCHILLA_TOKENS_PER_PARAM = 20.0


def loss(n_params: float, n_tokens: float, *, fit: ParametricLaw | None = None) -> float:
    """Predicted loss in nats/token: E + A N^-alpha + B D^-beta.

    >>> round(loss(70e9, 1.4e12), 3)  # Chinchilla's N and D
    1.977
    """
    fit = _law(fit)
    units.check_positive("n_params", n_params)
    units.check_positive("n_tokens", n_tokens)
    return fit.E + fit.A * n_params**-fit.alpha + fit.B * n_tokens**-fit.beta


def tokens_for_loss(
    n_params: float, *, target_loss: float, fit: ParametricLaw | None = None
) -> float:
    """Training tokens D that bring an N-parameter model to ``target_loss`` (inf if it cannot)."""
    fit = _law(fit)
    gap = target_loss - fit.E - fit.A * units.check_positive("n_params", n_params) ** -fit.alpha
    return (fit.B / gap) ** (1.0 / fit.beta) if gap > 0 else math.inf


def lifetime_optimum(
    *,
    target_loss: float,
    inference_tokens: float,
    fit: ParametricLaw | None = None,
    inference_cost_per_flop: float = 1.0,
) -> dict[str, float]:
    """Model size and data that reach ``target_loss`` at least lifetime cost.

    Minimises 6 N D(N) + 2 c N D_inf over N. Returns n_params, n_tokens, pretrain_flop,
    inference_cost (in training-FLOP equivalents), cost_ratio = C_inf / C_pre,
    tokens_per_param and overtraining: D/N over the compute-optimal D/N at the same loss.

    >>> r = lifetime_optimum(target_loss=2.0, inference_tokens=0.0)
    >>> round(r["tokens_per_param"], 1)  # compute-optimal: Besiroglu's fit gives ~20
    18.7
    """
    fit = _law(fit)
    if target_loss <= fit.E:
        raise ValueError(
            f"target_loss must exceed the irreducible loss E={fit.E}, got {target_loss!r}"
        )
    if inference_tokens < 0 or not math.isfinite(inference_tokens):
        raise ValueError(f"inference_tokens must be >= 0 and finite, got {inference_tokens!r}")
    c = units.check_positive("inference_cost_per_flop", inference_cost_per_flop)
    n_min = (fit.A / (target_loss - fit.E)) ** (1.0 / fit.alpha)  # D -> inf here

    def log_cost(x: float) -> float:
        n = math.exp(x)
        return math.log(
            6 * n * tokens_for_loss(n, target_loss=target_loss, fit=fit)
            + 2 * c * n * inference_tokens
        )

    lo = math.log(n_min) + 1e-9
    x = minimize_scalar(log_cost, bounds=(lo, lo + 25), method="bounded", options={"xatol": 1e-9}).x
    n = math.exp(x)
    d = tokens_for_loss(n, target_loss=target_loss, fit=fit)
    if inference_tokens > 0:
        d0 = lifetime_optimum(target_loss=target_loss, inference_tokens=0.0, fit=fit)
        ratio0 = d0["tokens_per_param"]
    else:
        ratio0 = d / n
    pre, inf = 6 * n * d, 2 * c * n * inference_tokens
    return {
        "n_params": n,
        "n_tokens": d,
        "pretrain_flop": pre,
        "inference_cost": inf,
        "cost_ratio": inf / pre,
        "tokens_per_param": d / n,
        "overtraining": d / n / ratio0,
    }


def cost_ratio_at_optimum(
    n_params: float, n_tokens: float, *, fit: ParametricLaw | None = None
) -> float:
    """C_inf / C_pre implied by the first-order condition at (N, D): alpha X / (beta Y) - 1.

    X = A N^-alpha and Y = B D^-beta are the two reducible loss terms. An independent
    check of ``lifetime_optimum``, which finds the optimum numerically.
    """
    fit = _law(fit)
    x = fit.A * units.check_positive("n_params", n_params) ** -fit.alpha
    y = fit.B * units.check_positive("n_tokens", n_tokens) ** -fit.beta
    return fit.alpha * x / (fit.beta * y) - 1.0


def cost_minimising_shares(elasticities: list[float] | np.ndarray) -> np.ndarray:
    """Budget shares that maximise prod x_i^e_i at fixed total spend: e_i / sum(e).

    Equal shares are optimal only when the elasticities are equal.

    >>> cost_minimising_shares([1.0, 1.0, 1.0]).round(3).tolist()
    [0.333, 0.333, 0.333]
    """
    e = np.asarray(elasticities, dtype=float)
    if e.ndim != 1 or len(e) == 0 or np.any(~np.isfinite(e)) or np.any(e <= 0):
        raise ValueError(
            f"elasticities must be a non-empty list of positive numbers, got {elasticities!r}"
        )
    return e / e.sum()


def rl_tokens_for_equal_cost(
    *, pretrain_tokens: float, train_mfu: float, decode_efficiency: float
) -> float:
    """RL tokens whose generation plus training costs what pretraining cost.

    Pretraining a token costs 6N / (P u); an RL token costs 2N / (P eta) to generate at
    decode efficiency eta plus 6N / (P u) to train on, so D_RL = D (6/u) / (2/eta + 6/u).

    >>> d = rl_tokens_for_equal_cost(pretrain_tokens=15e12, train_mfu=0.4, decode_efficiency=0.1)
    >>> f"{d:.3g}"
    '6.43e+12'
    """
    d = units.check_positive("pretrain_tokens", pretrain_tokens)
    u = units.check_fraction("train_mfu", train_mfu)
    eta = units.check_fraction("decode_efficiency", decode_efficiency)
    return d * (6.0 / u) / (2.0 / eta + 6.0 / u)


def optimum_at_cost_ratio(
    *,
    target_loss: float,
    cost_ratio: float,
    fit: ParametricLaw | None = None,
    inference_cost_per_flop: float = 1.0,
) -> dict[str, float]:
    """The lifetime optimum whose inference-to-pretraining cost ratio is ``cost_ratio``.

    Solves for the served tokens D_inf (the ratio rises monotonically with D_inf) and
    returns ``lifetime_optimum``'s dict plus ``inference_tokens``.

    >>> r = optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)  # "one third each"
    >>> round(r["overtraining"], 1)
    6.9
    """
    units.check_positive("cost_ratio", cost_ratio)

    def gap(log_d: float) -> float:
        opt = lifetime_optimum(
            target_loss=target_loss,
            inference_tokens=math.exp(log_d),
            fit=fit,
            inference_cost_per_flop=inference_cost_per_flop,
        )
        return opt["cost_ratio"] - cost_ratio

    # xtol 1e-12, not 1e-6: at 1e-6 Brent stopped with the ratio at 1 + 4e-8 and the
    # overtraining factor 4e-7 away from the root, a digit set by where it stopped.
    log_d = brentq(gap, math.log(1e3), math.log(1e22), xtol=1e-12)
    r = lifetime_optimum(
        target_loss=target_loss,
        inference_tokens=math.exp(log_d),
        fit=fit,
        inference_cost_per_flop=inference_cost_per_flop,
    )
    return {**r, "inference_tokens": math.exp(log_d)}


@functools.cache
def optimum_grid(*, target_loss: float = 2.0, n_points: int = 41) -> tuple[dict[str, float], ...]:
    """:func:`lifetime_optimum` at ``n_points`` served-token counts from 1e12 to 1e16, log-spaced.

    Cached, since several claims and a chapter read the same grid; do not mutate the rows.

    >>> len(optimum_grid(n_points=3))
    3
    """
    return tuple(
        lifetime_optimum(target_loss=target_loss, inference_tokens=d)
        for d in np.logspace(12, 16, n_points)
    )


def cost_ratio_for_overtraining(factor: float, *, target_loss: float = 2.0) -> float:
    """Lifetime inference over pretraining cost at the optimum that is ``factor`` overtrained.

    Interpolated in log-log on :func:`optimum_grid` (target loss 2.0, 1e12 to 1e16 served
    tokens); dimensionless.

    >>> cost_ratio_for_overtraining(100.0) > 1
    True
    """
    grid = optimum_grid(target_loss=target_loss)
    return float(
        np.exp(
            np.interp(
                np.log(factor),
                np.log([g["overtraining"] for g in grid]),
                np.log([g["cost_ratio"] for g in grid]),
            )
        )
    )


def cost_ratio_range(*, target_loss: float = 2.0) -> tuple[float, float]:
    """Least and greatest inference/pretraining cost ratio over :func:`optimum_grid`.

    >>> lo, hi = cost_ratio_range()
    >>> bool(lo < 1 < hi)
    True
    """
    ratios = [g["cost_ratio"] for g in optimum_grid(target_loss=target_loss)]
    return float(min(ratios)), float(max(ratios))
