"""Data mixtures: weights by domain, epochs per domain, annealing, and what repetition is worth.

A mixture gives each domain d a sampling weight w_d. Training on T tokens draws w_d T
tokens from a pool of U_d unique tokens, i.e. w_d T / U_d epochs: a small, valuable pool
(Wikipedia, books) is repeated, a large one (the web) is not even read once. An annealing
phase at the end of training, while the learning rate decays, switches to weights that
favour the best data (Llama 3: Dubey et al. 2024, arXiv:2407.21783, sec. 3.1.3).

How much a repeated token is worth comes from Muennighoff et al. 2023 (arXiv:2305.16264,
eq. 5 and sec. 4): with R = epochs - 1 repetitions of U unique tokens, the effective data
is D' = U + U R* (1 - exp(-R / R*)) with fitted R* = 15.4 (the unrounded fit is in
data/scaling_laws.toml, read by llmphys.data_constrained), so four epochs are worth about
93% of the same number of fresh tokens and the value of further repetition decays with a
half-life of R* ln 2, about 11 repetitions.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .. import data_constrained, units


def r_star_data() -> float:
    """Muennighoff et al.'s fitted R*_D, from the one registry the scaling chapter also reads.

    >>> round(r_star_data(), 1)
    15.4
    """
    return data_constrained.repetition_constants().r_d_star


# LLaMA 1 pre-training data (Touvron et al. 2023, arXiv:2302.13971, table 1):
# sampling proportion, epochs when training on 1.4T tokens, disk size in bytes.
LLAMA1_TOTAL_TOKENS = 1.4e12
LLAMA1_MIXTURE = {
    "CommonCrawl": (0.670, 1.10, 3.3 * units.TB),
    "C4": (0.150, 1.06, 783 * units.GB),
    "GitHub": (0.045, 0.64, 328 * units.GB),
    "Wikipedia": (0.045, 2.45, 83 * units.GB),
    "Books": (0.045, 2.23, 85 * units.GB),
    "ArXiv": (0.025, 1.06, 92 * units.GB),
    "StackExchange": (0.020, 1.03, 78 * units.GB),
}
# Llama 3's final pre-training mix by kind of knowledge (Dubey et al. 2024, sec. 3.1.2).
LLAMA3_MIX = {"general": 0.50, "math_reasoning": 0.25, "code": 0.17, "multilingual": 0.08}


def _check_weights(weights: dict[str, float]) -> None:
    if (
        not weights
        or any(w < 0 for w in weights.values())
        or not math.isclose(sum(weights.values()), 1.0, rel_tol=1e-6)
    ):
        raise ValueError(f"weights must be non-negative and sum to 1, got {weights!r}")


def epochs_per_domain(
    weights: dict[str, float], unique_tokens: dict[str, float], *, total_tokens: float
) -> dict[str, float]:
    """Epochs over each domain's pool: w_d T / U_d.

    >>> e = epochs_per_domain({"a": 0.5, "b": 0.5}, {"a": 1e9, "b": 4e9}, total_tokens=4e9)
    >>> round(e["a"], 2)
    2.0
    """
    _check_weights(weights)
    units.check_positive("total_tokens", total_tokens)
    return {
        d: w * total_tokens / units.check_positive(f"unique_tokens[{d!r}]", unique_tokens[d])
        for d, w in weights.items()
    }


def unique_tokens_from_epochs(
    weights: Mapping[str, float], epochs: Mapping[str, float], *, total_tokens: float
) -> dict[str, float]:
    """The pool sizes a published (weight, epochs) table implies: U_d = w_d T / epochs_d.

    >>> round(unique_tokens_from_epochs({"Wikipedia": 0.045}, {"Wikipedia": 2.45},
    ...                                 total_tokens=1.4e12)["Wikipedia"] / 1e9, 1)
    25.7
    """
    units.check_positive("total_tokens", total_tokens)
    return {
        d: w * total_tokens / units.check_positive(f"epochs[{d!r}]", epochs[d])
        for d, w in weights.items()
    }


def temperature_weights(unique_tokens: dict[str, float], *, alpha: float) -> dict[str, float]:
    """Sampling weights p_d ∝ U_d^alpha: alpha = 1 is proportional, 0 uniform; multilingual
    models upsample small languages with alpha ≈ 0.3 (mT5: Xue et al. 2021, arXiv:2010.11934).

    >>> w = temperature_weights({"en": 900.0, "sw": 100.0}, alpha=0.5)
    >>> round(w["sw"], 3)
    0.25
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    z = {
        d: units.check_positive(f"unique_tokens[{d!r}]", u) ** alpha
        for d, u in unique_tokens.items()
    }
    total = sum(z.values())
    return {d: v / total for d, v in z.items()}


def two_phase_tokens(
    main: dict[str, float], anneal: dict[str, float], *, total_tokens: float, anneal_fraction: float
) -> dict[str, tuple[float, float]]:
    """Tokens per domain in the main phase and in the final annealing phase.

    >>> two_phase_tokens({"web": 1.0, "math": 0.0}, {"web": 0.5, "math": 0.5},
    ...                  total_tokens=100.0, anneal_fraction=0.1)["math"]
    (0.0, 5.0)
    """
    _check_weights(main)
    _check_weights(anneal)
    units.check_positive("total_tokens", total_tokens)
    units.check_fraction("anneal_fraction", anneal_fraction)
    t_anneal = anneal_fraction * total_tokens
    t_main = total_tokens - t_anneal
    return {
        d: (main.get(d, 0.0) * t_main, anneal.get(d, 0.0) * t_anneal)
        for d in dict.fromkeys([*main, *anneal])
    }


def effective_tokens(unique_tokens: float, epochs: float, *, r_star: float | None = None) -> float:
    """Muennighoff's effective data D' = U + U R* (1 - exp(-R/R*)), R = epochs - 1 (>= 0).

    Below one epoch nothing repeats and D' = epochs U.

    >>> round(effective_tokens(1.0, 4.0), 3)
    3.726
    """
    units.check_positive("unique_tokens", unique_tokens)
    units.check_positive("epochs", epochs)
    if r_star is not None:
        units.check_positive("r_star", r_star)
    if epochs <= 1.0:
        return epochs * unique_tokens
    return data_constrained.effective_tokens(
        n_unique_tokens=unique_tokens, n_tokens=epochs * unique_tokens, r_d_star=r_star
    )


def repeated_token_value(epochs: np.ndarray | float, *, r_star: float | None = None) -> np.ndarray:
    """D'/D: effective tokens per token trained, for an array of epoch counts (1 when fresh)."""
    e = np.asarray(epochs, dtype=float)
    if np.any(e <= 0):
        raise ValueError("epochs must be > 0")
    r_star = r_star_data() if r_star is None else r_star
    r = np.maximum(e - 1.0, 0.0)
    return np.where(e <= 1.0, 1.0, (1.0 + r_star * (1.0 - np.exp(-r / r_star))) / e)
