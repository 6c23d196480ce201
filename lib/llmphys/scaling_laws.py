"""Loss as a function of parameters and tokens, and the compute-optimal allocation.

Hoffmann et al. 2022 ("Chinchilla", arXiv:2203.15556, eq. 2) model the final loss of a
run with N parameters trained on D tokens as

    L(N, D) = E + A / N^alpha + B / D^beta          (nats per token).

Training costs C = 6 N D FLOP. Minimising L on that constraint (a Lagrangian, or
substituting D = C / 6N and setting dL/dN = 0) gives their eq. (4):

    N*(C) = G (C/6)^(beta/(alpha+beta)),   D*(C) = G^-1 (C/6)^(alpha/(alpha+beta)),
    G = (alpha A / (beta B))^(1/(alpha+beta)).

At the optimum the two reducible terms satisfy alpha A/N^alpha = beta B/D^beta. Kaplan
et al. 2020 (arXiv:2001.08361) fit different forms; their compute-optimal N grows as
C^0.73, which is why GPT-3 was trained on 1.7 tokens per parameter.

The constants are sourced data in ``data/scaling_laws.toml``.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import brentq

from . import specs, units

PF_DAY_FLOP = units.PETA * units.DAY  # 1 PFLOP/s sustained for a day = 8.64e19 FLOP
_TOML = "scaling_laws.toml"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ParametricLaw:
    """L(N, D) = E + A/N^alpha + B/D^beta in nats per token, with its source."""

    key: str
    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str = ""
    notes: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class KaplanLaw:
    """Kaplan et al. 2020's power laws (non-embedding N, compute in PF-days)."""

    key: str
    name: str
    n_c: float
    alpha_n: float
    d_c: float
    alpha_d: float
    c_min_c_pf_days: float
    alpha_c_min: float
    n_opt_e: float
    n_opt_exponent: float
    b_star_tokens: float
    alpha_b: float
    source: str
    notes: str


def load_table(section: str, cls: type) -> dict:
    """Every entry of ``[section.<key>]`` as a ``cls``; unknown or missing fields raise."""
    return specs.load_registry(_TOML, cls, section=section)


def parametric_law(key: str) -> ParametricLaw:
    """A published L(N, D) fit by key: hoffmann2022, sardana2024, besiroglu2024, muennighoff2023.

    >>> parametric_law("hoffmann2022").E
    1.69
    """
    laws = load_table("parametric", ParametricLaw)
    if key not in laws:
        raise KeyError(f"no parametric law {key!r}; known: {', '.join(laws)}")
    return laws[key]


def kaplan_law(key: str = "kaplan2020") -> KaplanLaw:
    """Kaplan et al. 2020's constants from data/scaling_laws.toml."""
    return load_table("kaplan", KaplanLaw)[key]


def loss(law: ParametricLaw, *, n_params, n_tokens):
    """Loss in nats per token, E + A/N^alpha + B/D^beta (Hoffmann et al. 2022, eq. 2).

    >>> round(loss(parametric_law("hoffmann2022"), n_params=70e9, n_tokens=1.4e12), 3)
    1.937
    """
    n, d = np.asarray(n_params, dtype=float), np.asarray(n_tokens, dtype=float)
    if np.any(n <= 0) or np.any(d <= 0):
        raise ValueError("n_params and n_tokens must be positive")
    out = law.E + law.A / n**law.alpha + law.B / d**law.beta
    return float(out) if out.ndim == 0 else out


def _g(law: ParametricLaw) -> float:
    return (law.alpha * law.A / (law.beta * law.B)) ** (1.0 / (law.alpha + law.beta))


def compute_optimal(law: ParametricLaw, *, train_flop: float) -> dict[str, float]:
    """N* and D* that minimise L at C = 6ND, in closed form (Hoffmann et al. 2022, eq. 4).

    Returns n_params, n_tokens, tokens_per_param and loss.

    >>> opt = compute_optimal(parametric_law("besiroglu2024"), train_flop=5.76e23)
    >>> round(opt["n_params"] / 1e9), round(opt["tokens_per_param"], 1)
    (72, 18.4)
    """
    c6 = units.check_positive("train_flop", train_flop) / 6.0
    s = law.alpha + law.beta
    n = _g(law) * c6 ** (law.beta / s)
    d = c6 ** (law.alpha / s) / _g(law)
    return {
        "n_params": n,
        "n_tokens": d,
        "tokens_per_param": d / n,
        "loss": loss(law, n_params=n, n_tokens=d),
    }


def size_at_ratio(*, train_flop: float, tokens_per_param: float) -> tuple[float, float]:
    """(N, D) that spend ``train_flop`` at a fixed D/N = r: N = sqrt(C / (6 r)), D = r N.

    The rule-of-thumb sizing from C = 6ND (forward and backward, Kaplan et al. 2020 sec. 2.1)
    and Hoffmann et al. 2022's ~20 tokens per parameter (table 3); the law's own optimum is
    :func:`compute_optimal`. Returns (n_params, n_tokens).

    >>> n, d = size_at_ratio(train_flop=5.76e23, tokens_per_param=20.0)  # Chinchilla's budget
    >>> round(n / 1e9, 1), round(d / 1e12, 2)
    (69.3, 1.39)
    """
    c = units.check_positive("train_flop", train_flop)
    r = units.check_positive("tokens_per_param", tokens_per_param)
    n = (c / (6.0 * r)) ** 0.5
    return n, r * n


def compute_optimal_tokens(law: ParametricLaw, *, n_params: float) -> float:
    """Tokens D for which a model of N parameters is compute-optimal (inverts N*(C)).

    >>> round(compute_optimal_tokens(parametric_law("hoffmann2022"), n_params=70e9) / 1e12, 2)
    7.66
    """
    n = units.check_positive("n_params", n_params)
    s = law.alpha + law.beta
    c6 = (n / _g(law)) ** (s / law.beta)
    return c6 / n


def isoflop_loss(law: ParametricLaw, *, train_flop: float, n_params):
    """Loss along an IsoFLOP profile: each N trained on D = C/(6N) tokens."""
    c = units.check_positive("train_flop", train_flop)
    n = np.asarray(n_params, dtype=float)
    return loss(law, n_params=n, n_tokens=c / (6.0 * n))


def flop_for_loss(law: ParametricLaw, *, target_loss: float) -> float:
    """Smallest training FLOP whose compute-optimal model reaches ``target_loss`` (root-find).

    >>> f"{flop_for_loss(parametric_law('hoffmann2022'), target_loss=2.0):.2e}"
    '1.11e+23'
    """
    if not target_loss > law.E:
        raise ValueError(f"target_loss must exceed the irreducible E = {law.E}, got {target_loss}")
    f = lambda log_c: compute_optimal(law, train_flop=np.exp(log_c))["loss"] - target_loss  # noqa: E731
    return float(np.exp(brentq(f, np.log(1e6), np.log(1e40), xtol=1e-12)))


def kaplan_loss(law: KaplanLaw, *, n_params, n_tokens):
    """Kaplan's L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D in nats (eq. 1.5).

    >>> round(kaplan_loss(kaplan_law(), n_params=1e9, n_tokens=1e15), 3)
    2.376
    """
    n, d = np.asarray(n_params, dtype=float), np.asarray(n_tokens, dtype=float)
    out = ((law.n_c / n) ** (law.alpha_n / law.alpha_d) + law.d_c / d) ** law.alpha_d
    return float(out) if out.ndim == 0 else out


def kaplan_optimal_n_params(law: KaplanLaw, *, train_flop: float) -> float:
    """Kaplan's compute-efficient size, N = 1.3e9 (C / PF-day)^0.73 (their Table 6).

    Tokens follow from C = 6ND. (Table 6 also lists D_e = 2e10 tokens at 1 PF-day, which
    does not satisfy C = 6ND with N_e: the fits are separate; we keep N and derive D.)

    >>> f"{kaplan_optimal_n_params(kaplan_law(), train_flop=3.14e23):.2e}"
    '5.16e+11'
    """
    c = units.check_positive("train_flop", train_flop) / PF_DAY_FLOP
    return law.n_opt_e * c**law.n_opt_exponent


def doubling_gain_ratio(law: ParametricLaw, *, n_params: float, n_tokens: float) -> float:
    """Loss gained by doubling the tokens over that gained by doubling the size (dimensionless).

    Both doublings cost the same FLOP (6ND doubles either way); above 1, tokens buy more:
    [L(N, D) - L(N, 2D)] / [L(N, D) - L(2N, D)].

    >>> m = specs.model("chinchilla_70b")
    >>> round(doubling_gain_ratio(parametric_law("besiroglu2024"), n_params=m.published_n_params,
    ...                           n_tokens=m.n_training_tokens), 2)
    0.96
    """
    base = loss(law, n_params=n_params, n_tokens=n_tokens)
    return (base - loss(law, n_params=n_params, n_tokens=2 * n_tokens)) / (
        base - loss(law, n_params=2 * n_params, n_tokens=n_tokens)
    )


def isoflop_waste_fraction(law: ParametricLaw, *, size_factor: float, train_flop: float) -> float:
    """Fraction of the compute wasted by a model ``size_factor`` times the compute-optimal size.

    At a fixed budget C the off-optimum model reaches a higher loss; the compute-optimal
    allocation reaches that loss with C' < C, and the waste is 1 - C'/C.

    >>> isoflop_waste_fraction(parametric_law("besiroglu2024"), size_factor=1.0,
    ...                        train_flop=5.76e23) < 1e-8
    True
    """
    n_opt = compute_optimal(law, train_flop=train_flop)["n_params"]
    lost = isoflop_loss(law, train_flop=train_flop, n_params=size_factor * n_opt)
    return 1 - flop_for_loss(law, target_loss=float(lost)) / train_flop
