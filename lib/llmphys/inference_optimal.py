"""The size that minimises training plus lifetime inference compute at a fixed loss.

Sardana, Portes, Doubov and Frankle 2024 ("Beyond Chinchilla-Optimal", arXiv:2401.00448,
sec. 2) ask for the N and D that reach a loss l at the least total cost

    minimise  6 N D + 2 N D_inf   subject to   E + A/N^alpha + B/D^beta = l,

where D_inf is the number of tokens the model will process in its lifetime (2N FLOP
each, forward only). On the constraint, D is a function of N. Write X = A/N^alpha and
Y = B/D^beta = l - E - X; then dD/dN = -(alpha X)/(beta Y) D/N and the optimum satisfies

    6 D (1 - alpha X / (beta Y)) + 2 D_inf = 0.

With D_inf = 0 this is Chinchilla's condition alpha X = beta Y. With inference, alpha X
must exceed beta Y: a smaller model trained on more tokens ("overtrained"). Two closed
forms follow, used throughout chapter 5:

* the demand at which a given (N, D) is optimal: D_inf = 3 D (alpha X / (beta Y) - 1);
* the training share of lifetime compute at the optimum: 6ND / total = beta Y / (alpha X).

Sardana et al. solve the first-order condition by Newton's method; we bracket it and use
Brent's method (``inference_optimal``); at a given cost ratio the optimum is closed-form
(``optimum_at_cost_ratio``). ``compute_split`` (chapter 6) calls these, so the book has one
lifetime optimum and one overtraining factor, D / D*(N).

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from . import units
from .scaling_laws import ParametricLaw, compute_optimal_tokens, loss


def tokens_for_loss(law: ParametricLaw, *, n_params: float, target_loss: float) -> float:
    """Training tokens D at which N parameters reach ``target_loss``: (B / (l - E - A/N^a))^(1/b).

    >>> law = ParametricLaw(key="t", name="t", E=1.0, A=1.0, B=1.0, alpha=1.0, beta=1.0)
    >>> tokens_for_loss(law, n_params=2.0, target_loss=2.0)
    2.0
    """
    n = units.check_positive("n_params", n_params)
    y = target_loss - law.E - law.A / n**law.alpha
    if y <= 0:
        raise ValueError(
            f"target_loss={target_loss} is out of reach for n_params={n:.3g}: "
            f"even infinite data leaves {target_loss - y:.4f}"
        )
    return (law.B / y) ** (1.0 / law.beta)


def lifetime_flop(*, n_params: float, n_train_tokens: float, n_inference_tokens: float) -> float:
    """Training plus lifetime inference FLOP: 6 N D + 2 N D_inf (Sardana et al. 2024, eq. 3).

    >>> f"{lifetime_flop(n_params=13e9, n_train_tokens=260e9, n_inference_tokens=2e12):.3e}"
    '7.228e+22'
    """
    n = units.check_positive("n_params", n_params)
    d = units.check_positive("n_train_tokens", n_train_tokens)
    if n_inference_tokens < 0:
        raise ValueError(f"n_inference_tokens must be >= 0, got {n_inference_tokens}")
    return 6.0 * n * d + 2.0 * n * n_inference_tokens


def _ratio(law: ParametricLaw, n: float, d: float) -> float:
    """alpha X / (beta Y): 1 at Chinchilla's optimum, above 1 when overtrained."""
    return (law.alpha * law.A / n**law.alpha) / (law.beta * law.B / d**law.beta)


def inference_flop_cost(*, train_mfu: float, decode_efficiency: float) -> float:
    """Cost of one inference FLOP in training FLOP: the decode-efficiency multiplier c = u / eta.

    A chip-second buys u P training FLOP at MFU u but only eta P decode FLOP at decode
    efficiency eta (compute time over step time of a decode step, ``inference.decode_step``),
    so a served FLOP costs u / eta training FLOP. Training MFU: 38-43% for Llama 3 405B
    (Dubey et al. 2024, table 4; ``economics.price("reported_mfu.llama31_405b")``).

    >>> round(inference_flop_cost(train_mfu=0.4, decode_efficiency=0.16), 2)
    2.5
    """
    u = units.check_fraction("train_mfu", train_mfu)
    return u / units.check_fraction("decode_efficiency", decode_efficiency)


def break_even_inference_tokens(
    law: ParametricLaw, *, n_params: float, n_tokens: float, inference_cost_per_flop: float = 1.0
) -> float:
    """Lifetime inference tokens for which (N, D) is the lifetime-optimal way to its loss.

    D_inf = 3 D (alpha X / (beta Y) - 1) / c, with c the cost of an inference FLOP in
    training FLOP (``inference_flop_cost``; 1 prices them alike, as Sardana et al. do). At
    this demand one more training FLOP, spent on tokens for a slightly smaller model of
    equal loss, saves exactly one training FLOP's worth of inference. Zero at the
    compute-optimal point; negative if the model is undertrained.

    >>> from llmphys.scaling_laws import parametric_law
    >>> law = parametric_law("besiroglu2024")
    >>> [round(break_even_inference_tokens(law, n_params=8e9, n_tokens=15e12,
    ...                                    inference_cost_per_flop=c) / 1e12) for c in (1, 2.5)]
    [190, 76]
    """
    n = units.check_positive("n_params", n_params)
    d = units.check_positive("n_tokens", n_tokens)
    c = units.check_positive("inference_cost_per_flop", inference_cost_per_flop)
    return 3.0 * d * (_ratio(law, n, d) - 1.0) / c


def _check_demand(n_inference_tokens: float) -> float:
    d_inf = float(n_inference_tokens)
    if not d_inf >= 0 or not np.isfinite(d_inf):
        raise ValueError(f"n_inference_tokens must be >= 0 and finite, got {n_inference_tokens!r}")
    return d_inf


def _optimum_parts(
    law: ParametricLaw, n: float, d: float, d_inf: float, c: float
) -> dict[str, float]:
    train, inference = 6.0 * n * d, 2.0 * n * d_inf
    return {
        "n_params": n,
        "n_tokens": d,
        "tokens_per_param": d / n,
        "train_flop": train,
        "inference_flop": inference,
        "total_flop": train + inference,
        "inference_cost": c * inference,  # in training-FLOP equivalents
        "cost_ratio": c * inference / train,
        "overtraining": overtraining_factor(law, n_params=n, n_tokens=d),
    }


def inference_optimal(
    law: ParametricLaw,
    *,
    target_loss: float,
    n_inference_tokens: float,
    inference_cost_per_flop: float = 1.0,
) -> dict[str, float]:
    """N, D minimising 6ND + 2cN D_inf at L(N, D) = target_loss (Sardana et al. 2024, sec. 2).

    The book's one lifetime optimum: Brent's method on the first-order condition
    6 D (1 - alpha X / (beta Y)) + 2 c D_inf = 0 along the loss constraint, so the root is
    exact to 1e-13 in log N. c is the cost of an inference FLOP in training FLOP
    (``inference_flop_cost``; 1 prices them alike, as Sardana et al. do). Returns n_params,
    n_tokens, tokens_per_param, train_flop, inference_flop, total_flop (FLOP),
    inference_cost (c times inference_flop, in training-FLOP equivalents), cost_ratio
    (inference_cost / train_flop) and overtraining (``overtraining_factor``, D / D*(N)).

    >>> from llmphys.scaling_laws import parametric_law
    >>> opt = inference_optimal(parametric_law("sardana2024"), target_loss=2.0453,
    ...                         n_inference_tokens=2e12)
    >>> round(opt["n_params"] / 1e9, 1)
    7.0
    """
    d_inf = _check_demand(n_inference_tokens)
    c = units.check_positive("inference_cost_per_flop", inference_cost_per_flop)
    if not target_loss > law.E:
        raise ValueError(f"target_loss must exceed E = {law.E}, got {target_loss}")
    n_min = (law.A / (target_loss - law.E)) ** (1.0 / law.alpha)  # infinite data needed here

    def condition(log_n: float) -> float:
        n = np.exp(log_n)
        d = tokens_for_loss(law, n_params=n, target_loss=target_loss)
        return 6.0 * d * (1.0 - _ratio(law, n, d)) + 2.0 * c * d_inf

    lo, hi = np.log(n_min) + 1e-9, np.log(n_min) + 1.0
    while condition(hi) < 0:  # walk up until the bracket holds the root
        hi += 1.0
    n = float(np.exp(brentq(condition, lo, hi, xtol=1e-13, rtol=1e-13)))
    d = tokens_for_loss(law, n_params=n, target_loss=target_loss)
    return _optimum_parts(law, n, d, d_inf, c)


def optimum_at_cost_ratio(
    law: ParametricLaw,
    *,
    target_loss: float,
    cost_ratio: float,
    inference_cost_per_flop: float = 1.0,
) -> dict[str, float]:
    """The lifetime optimum at C_inf / C_train = ``cost_ratio``, in closed form.

    At the optimum alpha X / (beta Y) = 1 + r (r = C_inf / C_train), and X + Y = l - E, so
    Y = (l - E) / (1 + (1 + r) beta / alpha), N = (A / X)^(1/alpha), D = (B / Y)^(1/beta)
    and the demand is D_inf = 3 D r / c. Returns ``inference_optimal``'s dict plus
    n_inference_tokens.

    >>> from llmphys.scaling_laws import parametric_law
    >>> r = optimum_at_cost_ratio(parametric_law("besiroglu2024"), target_loss=2.0, cost_ratio=1.0)
    >>> round(r["tokens_per_param"]), round(r["overtraining"], 2)  # "a third each" for two
    (130, 6.65)
    """
    if not cost_ratio >= 0 or not np.isfinite(cost_ratio):
        raise ValueError(f"cost_ratio must be >= 0 and finite, got {cost_ratio!r}")
    c = units.check_positive("inference_cost_per_flop", inference_cost_per_flop)
    if not target_loss > law.E:
        raise ValueError(f"target_loss must exceed E = {law.E}, got {target_loss}")
    y = (target_loss - law.E) / (1.0 + (1.0 + cost_ratio) * law.beta / law.alpha)
    x = target_loss - law.E - y
    n, d = (law.A / x) ** (1.0 / law.alpha), (law.B / y) ** (1.0 / law.beta)
    d_inf = 3.0 * d * cost_ratio / c
    return {**_optimum_parts(law, n, d, d_inf, c), "n_inference_tokens": d_inf}


def versus_chinchilla(
    law: ParametricLaw, *, n_params: float, n_inference_tokens: float
) -> dict[str, float]:
    """Sardana's comparison: a compute-optimal N-parameter model vs the equal-loss lifetime optimum.

    Returns the baseline's tokens, loss and total FLOP, the optimum's n_params, n_tokens and
    total FLOP, and the saving in FLOP and as a fraction of the baseline's total.

    >>> from llmphys.scaling_laws import parametric_law
    >>> r = versus_chinchilla(parametric_law("sardana2024"), n_params=13e9, n_inference_tokens=2e12)
    >>> f"{r['opt_n_params']:.2e} {r['saving_flop']:.2e} {r['saving_fraction']:.2f}"
    '6.97e+09 1.69e+22 0.17'
    """
    d0 = compute_optimal_tokens(law, n_params=n_params)
    l0 = loss(law, n_params=n_params, n_tokens=d0)
    total0 = lifetime_flop(
        n_params=n_params, n_train_tokens=d0, n_inference_tokens=n_inference_tokens
    )
    opt = inference_optimal(law, target_loss=l0, n_inference_tokens=n_inference_tokens)
    return {
        "base_n_tokens": d0,
        "loss": l0,
        "base_total_flop": total0,
        "opt_n_params": opt["n_params"],
        "opt_n_tokens": opt["n_tokens"],
        "opt_total_flop": opt["total_flop"],
        "saving_flop": total0 - opt["total_flop"],
        "saving_fraction": 1.0 - opt["total_flop"] / total0,
    }


def overtraining_factor(law: ParametricLaw, *, n_params: float, n_tokens: float) -> float:
    """Training tokens over the compute-optimal tokens for the same N: D / D*(N).

    The book's one definition of "overtrained by a factor f" (chapters 5 and 6): D*(N) is
    the D that minimises the loss law at compute 6ND for this N, where alpha X = beta Y,
    D*(N) = (beta B N^alpha / (alpha A))^(1/beta). It depends on the law's A, B, alpha and
    beta, not on a fixed 20 tokens per parameter, and is quoted with the law.

    >>> from llmphys.scaling_laws import parametric_law
    >>> law = parametric_law("besiroglu2024")
    >>> round(overtraining_factor(law, n_params=70e9, n_tokens=1.4e12), 2)
    1.1
    """
    return units.check_positive("n_tokens", n_tokens) / compute_optimal_tokens(
        law, n_params=n_params
    )


def overtraining_at_cost_ratio(law: ParametricLaw, *, cost_ratio: float) -> float:
    """Overtraining factor D / D*(N) of the lifetime optimum with C_inf / C_train = ``cost_ratio``.

    At the optimum alpha X / (beta Y) = 1 + C_inf / C_train, and D*(N) has alpha X = beta Y*,
    so (D / D*)^beta = Y* / Y = 1 + ratio: D / D*(N) = (1 + C_inf / C_train)^(1 / beta),
    a function of the cost ratio alone, whatever the target loss.

    >>> from llmphys.scaling_laws import parametric_law
    >>> round(overtraining_at_cost_ratio(parametric_law("besiroglu2024"), cost_ratio=1.0), 2)
    6.65
    """
    if not cost_ratio >= 0 or not np.isfinite(cost_ratio):
        raise ValueError(f"cost_ratio must be >= 0 and finite, got {cost_ratio!r}")
    return (1.0 + cost_ratio) ** (1.0 / law.beta)


def cost_ratio_for_overtraining(law: ParametricLaw, *, overtraining: float) -> float:
    """C_inf / C_train at which overtraining by D / D*(N) = f is lifetime-optimal: f^beta - 1.

    >>> from llmphys.scaling_laws import parametric_law
    >>> round(cost_ratio_for_overtraining(parametric_law("besiroglu2024"), overtraining=100.0), 2)
    4.39
    """
    if not overtraining >= 1 or not np.isfinite(overtraining):
        raise ValueError(
            f"overtraining must be >= 1 and finite (no demand makes an undertrained "
            f"model optimal), got {overtraining!r}"
        )
    return overtraining**law.beta - 1.0


def training_share_at_optimum(law: ParametricLaw, *, n_params: float, n_tokens: float) -> float:
    """Fraction of lifetime compute spent training if (N, D) is lifetime-optimal: beta Y/(alpha X).

    1 at the Chinchilla point (no inference); one half only when alpha X = 2 beta Y. An
    undertrained (N, D) is optimal for no demand and raises ValueError.

    >>> from llmphys.scaling_laws import parametric_law
    >>> round(training_share_at_optimum(parametric_law("besiroglu2024"), n_params=8e9,
    ...                                 n_tokens=15e12), 2)
    0.19
    """
    n = units.check_positive("n_params", n_params)
    d = units.check_positive("n_tokens", n_tokens)
    ratio = _ratio(law, n, d)
    if ratio < 1.0:
        raise ValueError(
            f"n_params={n:.3g}, n_tokens={d:.3g} is undertrained for this law: "
            "no inference demand makes it optimal"
        )
    return 1.0 / ratio


def demand_for_training_share(
    law: ParametricLaw, *, target_loss: float, training_share: float
) -> float:
    """Lifetime inference tokens at which the ``target_loss`` optimum spends that share training.

    Solves beta Y / (alpha X) = share along the optimum (Brent's method on log D_inf).
    """
    units.check_fraction("training_share", training_share)
    if training_share == 1.0:
        return 0.0

    def gap(log_d_inf: float) -> float:
        opt = inference_optimal(law, target_loss=target_loss, n_inference_tokens=np.exp(log_d_inf))
        return opt["train_flop"] / opt["total_flop"] - training_share

    return float(np.exp(brentq(gap, np.log(1e3), np.log(1e25), xtol=1e-10)))
