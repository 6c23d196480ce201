"""What repeated data is worth: Muennighoff et al. 2023's data-constrained scaling law.

With U unique tokens seen for D = U (1 + R_D) tokens in total (R_D repetitions beyond the
first epoch), Muennighoff et al. (arXiv:2305.16264, sec. 3, eq. 5) replace D in the
Chinchilla law by an effective data size

    D' = U + U R*_D (1 - exp(-R_D / R*_D)),

so each repetition is worth a little less than the one before: the k-th epoch adds
U exp(-(k-2)/R*_D) (1 - exp(-1/R*_D)) R*_D effective tokens, and no amount of repetition
gives more than U (1 + R*_D). Parameters beyond those that U unique tokens can use are
discounted the same way with R*_N (eq. 6). Fitted on C4: R*_D = 15.4, R*_N = 5.3.

Their headline: at a fixed compute budget, up to about four epochs cost almost nothing
(Figure 3 and sec. 5). Here it is a number: four epochs are worth 3.73 fresh ones.
Constants in data/scaling_laws.toml.
Constants in data/scaling_laws.toml.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import units
from .scaling_laws import ParametricLaw, load_table, parametric_law


@dataclasses.dataclass(frozen=True, kw_only=True)
class RepetitionConstants:
    """Decay constants of Muennighoff et al. 2023: R*_D (data) and R*_N (parameters)."""

    key: str
    r_d_star: float
    r_n_star: float
    source: str
    notes: str


def repetition_constants(key: str = "muennighoff2023") -> RepetitionConstants:
    """R*_D and R*_N from data/scaling_laws.toml.

    >>> c = repetition_constants()
    >>> round(c.r_d_star, 1), round(c.r_n_star, 1)
    (15.4, 5.3)
    """
    return load_table("repetition", RepetitionConstants)[key]


def effective_tokens(*, n_unique_tokens, n_tokens, r_d_star: float | None = None):
    """Effective data D' = U + U R* (1 - exp(-R_D/R*)), R_D = D/U - 1 (Muennighoff eq. 5).

    >>> round(effective_tokens(n_unique_tokens=1.0, n_tokens=4.0), 3)  # four epochs
    3.726
    """
    u = np.asarray(n_unique_tokens, dtype=float)
    d = np.asarray(n_tokens, dtype=float)
    if np.any(u <= 0) or np.any(d < u):
        raise ValueError("need 0 < n_unique_tokens <= n_tokens")
    r_star = repetition_constants().r_d_star if r_d_star is None else r_d_star
    out = u + u * r_star * (1.0 - np.exp(-(d / u - 1.0) / r_star))
    return float(out) if out.ndim == 0 else out


def epoch_value(k, *, r_d_star: float | None = None):
    """Worth of the k-th pass over the data, in fresh epochs (1 for the first).

    >>> [round(epoch_value(k), 3) for k in (1, 2, 4, 16)]
    [1.0, 0.968, 0.85, 0.39]
    """
    k = np.asarray(k, dtype=float)
    if np.any(k < 1):
        raise ValueError(f"k must be >= 1, got {k}")
    r_star = repetition_constants().r_d_star if r_d_star is None else r_d_star
    later = r_star * (np.exp(-(k - 2.0) / r_star) - np.exp(-(k - 1.0) / r_star))
    out = np.where(k < 2, 1.0, later)
    return float(out) if out.ndim == 0 else out


def loss(
    *,
    n_params,
    n_tokens,
    n_unique_tokens,
    law: ParametricLaw | None = None,
    constants: RepetitionConstants | None = None,
):
    """Loss (nats) with repeated data and excess parameters, as in Muennighoff et al.'s code.

    Follows the README of github.com/huggingface/datablations line for line: U_N is the
    compute-optimal size for U unique tokens, R_N = N/U_N - 1, and both N and D are
    replaced by their effective values.

    >>> round(loss(n_params=6.34e9, n_tokens=242e9, n_unique_tokens=25e9), 6)
    2.225644
    """
    law = law or parametric_law("muennighoff2023")
    c = constants or repetition_constants()
    n = np.asarray(n_params, dtype=float)
    d = np.asarray(n_tokens, dtype=float)
    u = np.asarray(n_unique_tokens, dtype=float)
    if np.any(n <= 0) or np.any(u <= 0) or np.any(d < u):
        raise ValueError("need n_params > 0 and 0 < n_unique_tokens <= n_tokens")
    g = (law.alpha * law.A / (law.beta * law.B)) ** (1.0 / (law.alpha + law.beta))
    u_n = np.minimum(n, (u * g) ** (law.beta / law.alpha) * g)  # their D_to_N(U)
    r_n = np.maximum(n / u_n - 1.0, 0.0)
    r_d = np.maximum(d / u - 1.0, 0.0)
    n_eff = u_n + u_n * c.r_n_star * (1.0 - np.exp(-r_n / c.r_n_star))
    d_eff = u + u * c.r_d_star * (1.0 - np.exp(-r_d / c.r_d_star))
    out = law.E + law.A / n_eff**law.alpha + law.B / d_eff**law.beta
    return float(out) if out.ndim == 0 else out


def repetition_penalty(*, n_params: float, n_tokens: float, epochs: float) -> float:
    """Extra loss (nats) from seeing D tokens as ``epochs`` passes over D/epochs unique ones.

    Compared with the same model on D unique tokens. At four epochs it is a few thousandths
    of a nat; the law's own fit residuals are larger.
    """
    units.check_positive("epochs", epochs)
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    fresh = loss(n_params=n_params, n_tokens=n_tokens, n_unique_tokens=n_tokens)
    return loss(n_params=n_params, n_tokens=n_tokens, n_unique_tokens=n_tokens / epochs) - fresh
