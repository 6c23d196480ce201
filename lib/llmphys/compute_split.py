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

The optimum itself and the overtraining factor D / D*(N) are ``inference_optimal``'s (one
implementation, exact: a root of the first-order condition, or closed form at a given cost
ratio); this module applies them with the book's default law and chapter 6's names.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import inference_optimal, scaling_laws, units
from .scaling_laws import ParametricLaw

# The loss law is the registry's (data/scaling_laws.toml), at the paper's own precision: by
# default Besiroglu et al. 2024's refit of Hoffmann et al.'s approach 3 (arXiv:2404.10102,
# table 1), whose optimum is ~20 tokens/param like Hoffmann's approaches 1 and 2. Hoffmann's
# own fit ("hoffmann2022") sits near 80-120 tokens/param, which Besiroglu et al. trace to a
# fitting error.
DEFAULT_LAW = "besiroglu2024"


def _law(fit: ParametricLaw | None) -> ParametricLaw:
    return scaling_laws.parametric_law(DEFAULT_LAW) if fit is None else fit


def loss(n_params: float, n_tokens: float, *, fit: ParametricLaw | None = None) -> float:
    """Predicted loss in nats/token: E + A N^-alpha + B D^-beta.

    :func:`llmphys.scaling_laws.loss` under chapter 6's default law (Besiroglu et al.'s refit).

    >>> round(loss(70e9, 1.4e12), 3)  # Chinchilla's N and D
    1.977
    """
    units.check_positive("n_params", n_params)
    units.check_positive("n_tokens", n_tokens)
    return float(scaling_laws.loss(_law(fit), n_params=n_params, n_tokens=n_tokens))


def tokens_for_loss(
    n_params: float, *, target_loss: float, fit: ParametricLaw | None = None
) -> float:
    """Training tokens D that bring an N-parameter model to ``target_loss``: inf where no amount
    of data can (:func:`llmphys.inference_optimal.tokens_for_loss` raises there instead).

    >>> tokens_for_loss(1e9, target_loss=1.5)
    inf
    """
    units.check_positive("n_params", n_params)
    try:
        return inference_optimal.tokens_for_loss(
            _law(fit), n_params=n_params, target_loss=target_loss
        )
    except ValueError:
        return math.inf


def lifetime_optimum(
    *,
    target_loss: float,
    inference_tokens: float,
    fit: ParametricLaw | None = None,
    inference_cost_per_flop: float = 1.0,
) -> dict[str, float]:
    """Model size and data that reach ``target_loss`` at least lifetime cost 6ND + 2cN D_inf.

    :func:`llmphys.inference_optimal.inference_optimal` under the default law, with chapter
    6's names: n_params, n_tokens, tokens_per_param, pretrain_flop, inference_cost (in
    training-FLOP equivalents), cost_ratio = C_inf / C_pre and overtraining = D / D*(N)
    (:func:`llmphys.inference_optimal.overtraining_factor`).

    >>> r = lifetime_optimum(target_loss=2.0, inference_tokens=0.0)
    >>> round(r["tokens_per_param"], 1), round(r["overtraining"], 6)  # Besiroglu's fit: ~20
    (18.7, 1.0)
    """
    r = inference_optimal.inference_optimal(
        _law(fit),
        target_loss=target_loss,
        n_inference_tokens=inference_tokens,
        inference_cost_per_flop=inference_cost_per_flop,
    )
    return _chapter_names(r)


def marginal_saving_at_optimum(
    *,
    target_loss: float,
    inference_tokens: float,
    step: float = 1e-4,
    fit: ParametricLaw | None = None,
    inference_cost_per_flop: float = 1.0,
) -> float:
    """Inference FLOP saved per extra training FLOP, one finite step from the lifetime optimum.

    From :func:`lifetime_optimum`'s N (served FLOP priced at ``inference_cost_per_flop``
    training FLOP, c), a model N' = (1 - step) N reaches the same loss on D(N') tokens
    (:func:`tokens_for_loss`): it costs 6 (N' D(N') - N D(N)) more training FLOP and saves
    2 D_inf (N - N') inference FLOP. At the optimum the ratio is 1/c to first order in ``step``
    (the first-order condition of Sardana et al. 2024, arXiv:2401.00448): 1 counting FLOP alike.

    >>> round(marginal_saving_at_optimum(target_loss=2.0, inference_tokens=1e15), 3)
    0.999
    """
    if not 0.0 < step < 1.0:
        raise ValueError(f"step must be a fraction of the model size in (0, 1), got {step!r}")
    n0 = lifetime_optimum(
        target_loss=target_loss,
        inference_tokens=inference_tokens,
        fit=fit,
        inference_cost_per_flop=inference_cost_per_flop,
    )["n_params"]
    n1 = n0 * (1 - step)  # a smaller model, trained longer
    d0, d1 = (tokens_for_loss(n, target_loss=target_loss, fit=fit) for n in (n0, n1))
    extra_training = 6 * (n1 * d1 - n0 * d0)
    inference_saved = 2 * inference_tokens * (n0 - n1)
    return inference_saved / extra_training


def _chapter_names(r: dict[str, float]) -> dict[str, float]:
    keys = ("n_params", "n_tokens", "tokens_per_param", "inference_cost", "cost_ratio")
    return {
        **{k: r[k] for k in keys},
        "pretrain_flop": r["train_flop"],
        "overtraining": r["overtraining"],
    }


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

    :func:`llmphys.inference_optimal.optimum_at_cost_ratio` (closed form) under the default
    law; returns :func:`lifetime_optimum`'s dict plus ``inference_tokens``.

    >>> r = optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)  # "one third each"
    >>> round(r["overtraining"], 2)  # 2^(1/beta)
    6.65
    """
    r = inference_optimal.optimum_at_cost_ratio(
        _law(fit),
        target_loss=target_loss,
        cost_ratio=units.check_positive("cost_ratio", cost_ratio),
        inference_cost_per_flop=inference_cost_per_flop,
    )
    return {**_chapter_names(r), "inference_tokens": r["n_inference_tokens"]}


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


def cost_ratio_range(*, target_loss: float = 2.0) -> tuple[float, float]:
    """Least and greatest inference/pretraining cost ratio over :func:`optimum_grid`.

    >>> lo, hi = cost_ratio_range()
    >>> bool(lo < 1 < hi)
    True
    """
    ratios = [g["cost_ratio"] for g in optimum_grid(target_loss=target_loss)]
    return float(min(ratios)), float(max(ratios))
