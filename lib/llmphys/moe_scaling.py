"""Where a mixture of experts pays: the effective-parameter multiplier it needs to break even.

Routed models are fitted in the literature as dense laws in an *effective* parameter count
N_eff, larger than the active count N_act that sets the FLOP per token and smaller than the
total N_tot that sets the memory held (Clark et al. 2022, arXiv:2202.01169; Krajewski et al.
2024, arXiv:2402.07871; Ludziejewski et al. 2025, arXiv:2502.05172). Write m = N_eff / N_act,
1 <= m <= N_tot / N_act. Without a fitted m, a dense law L(N, D) = E + A/N^alpha + B/D^beta
still says how large m must be for the MoE to win a given comparison:

* **Same wall-clock, slower steps.** An MoE whose training runs at a fraction eta of the dense
  model's tokens per second sees eta D tokens where the dense model of N_act parameters sees
  D. It matches that model when A (m N_act)^-alpha + B (eta D)^-beta = A N_act^-alpha +
  B D^-beta, so

      m = [N_act^-alpha + (B/A)(D^-beta - (eta D)^-beta)]^(-1/alpha) / N_act,

  infinite when the bracket is not positive (no multiplier makes up for the lost tokens).
* **Same memory, same FLOP.** A dense model that fits in the MoE's memory has N_tot
  parameters; on the same budget C it sees D_d = C / (6 N_tot) tokens, the MoE s D_d with
  s = N_tot / N_act. The MoE matches it when A N_eff^-alpha + B (s D_d)^-beta =
  A N_tot^-alpha + B D_d^-beta; the answer is a fraction N_eff / N_tot <= 1.

The constants of the dense law are sourced (``scaling_laws``); the multiplier an actual MoE
achieves is what the MoE papers fit, and is not assumed here.

Home: chapters/05_scaling_laws.ipynb, section "Scaling laws for mixture-of-experts models".
"""

from __future__ import annotations

import numpy as np

from . import units
from .scaling_laws import ParametricLaw, compute_optimal


def _multiplier(law: ParametricLaw, n_ref: float, target_param_term: np.ndarray) -> np.ndarray:
    """N_eff / n_ref with A N_eff^-alpha = target (inf where the target is not positive)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(
            target_param_term > 0, (target_param_term / law.A) ** (-1.0 / law.alpha), np.inf
        )
    return n_eff / n_ref


def breakeven_multiplier_throughput(
    law: ParametricLaw, *, n_active: float, n_tokens: float, throughput_ratio
):
    """Effective-parameter multiplier N_eff / N_act (dimensionless) that an MoE running at
    ``throughput_ratio`` (eta) of the dense model's training speed needs to match the dense
    model of ``n_active`` parameters trained on ``n_tokens`` in the same time:
    m = [N^-alpha + (B/A)(D^-beta - (eta D)^-beta)]^(-1/alpha) / N (inf if the bracket <= 0).

    >>> from llmphys.scaling_laws import parametric_law
    >>> law = parametric_law("besiroglu2024")
    >>> round(breakeven_multiplier_throughput(law, n_active=7e9, n_tokens=1.4e11,
    ...                                       throughput_ratio=1.0), 6)
    1.0
    >>> round(breakeven_multiplier_throughput(law, n_active=7e9, n_tokens=1.4e11,
    ...                                       throughput_ratio=0.7), 2)
    1.51
    """
    n = units.check_positive("n_active", n_active)
    d = units.check_positive("n_tokens", n_tokens)
    eta = np.asarray(throughput_ratio, dtype=float)
    if np.any(eta <= 0) or np.any(eta > 1):
        raise ValueError(f"throughput_ratio must lie in (0, 1], got {throughput_ratio!r}")
    target = law.A * n**-law.alpha + law.B * (d**-law.beta - (eta * d) ** -law.beta)
    out = _multiplier(law, n, target)
    return float(out) if out.ndim == 0 else out


def breakeven_fraction_memory(law: ParametricLaw, *, n_total: float, sparsity, train_flop: float):
    """Smallest N_eff / N_tot (dimensionless) at which an MoE holding ``n_total`` parameters,
    ``sparsity`` = N_tot / N_act times more than it activates, matches on the same
    ``train_flop`` the dense model that holds the same memory (N_tot parameters, all active).

    The dense model sees D_d = C / (6 N_tot) tokens, the MoE s D_d; they match when
    A N_eff^-alpha + B (s D_d)^-beta = A N_tot^-alpha + B D_d^-beta. One at s = 1; the smaller
    it is, the less of its total size an MoE must turn into effective size to win.

    >>> from llmphys.scaling_laws import parametric_law
    >>> law = parametric_law("besiroglu2024")
    >>> round(breakeven_fraction_memory(law, n_total=24e9, sparsity=1.0, train_flop=1e24), 6)
    1.0
    >>> round(breakeven_fraction_memory(law, n_total=24e9, sparsity=8.0, train_flop=1e24), 3)
    0.609
    """
    n_tot = units.check_positive("n_total", n_total)
    c = units.check_positive("train_flop", train_flop)
    s_arr = np.asarray(sparsity, dtype=float)
    if np.any(s_arr < 1):
        raise ValueError(f"sparsity = N_total / N_active must be >= 1, got {sparsity!r}")
    d_dense = c / (6.0 * n_tot)
    target = law.A * n_tot**-law.alpha + law.B * (
        d_dense**-law.beta - (s_arr * d_dense) ** -law.beta
    )
    out = _multiplier(law, n_tot, target)
    return float(out) if out.ndim == 0 else out


def breakeven_multiplier_compute(law: ParametricLaw, *, n_active: float, n_tokens: float) -> float:
    """Multiplier N_eff / N_act (dimensionless) at which an MoE of ``n_active`` active
    parameters trained on ``n_tokens`` matches the compute-optimal dense model of the same
    training FLOP C = 6 N_act D (no memory limit, same speed): A (m N_act)^-alpha =
    L*(C) - E - B D^-beta, with L*(C) from ``scaling_laws.compute_optimal``. Inf when the
    MoE's data term alone is above L*(C) - E.

    >>> from llmphys.scaling_laws import parametric_law
    >>> law = parametric_law("besiroglu2024")
    >>> round(breakeven_multiplier_compute(law, n_active=37e9, n_tokens=14.8e12), 2)
    1.76
    """
    n = units.check_positive("n_active", n_active)
    d = units.check_positive("n_tokens", n_tokens)
    best = compute_optimal(law, train_flop=6.0 * n * d)["loss"]
    target = np.asarray(best - law.E - law.B * d**-law.beta)
    return float(_multiplier(law, n, target))
