"""Steps against examples: the critical batch size of McCandlish et al. 2018.

McCandlish, Kaplan, Amodei et al. ("An Empirical Model of Large-Batch Training",
arXiv:1812.06162, sec. 2.2-2.3) show that reaching a given loss with batch size B takes

    S = S_min (1 + B_noise / B)  optimizer steps   and   E = E_min (1 + B / B_noise)  examples,

so that (S / S_min - 1)(E / E_min - 1) = 1 (their eq. 2.11), with B_crit = E_min / S_min
equal to the gradient noise scale B_noise. Small batches use the fewest examples (data,
FLOP) but the most steps (wall-clock time); large batches the reverse. At B = B_crit a run
needs 2 S_min steps and 2 E_min examples. B_noise can be estimated from per-example
gradients as the "simple" noise scale tr(Sigma) / |G|^2 (their eq. 2.8). Kaplan et al.
2020 (eq. 1.4) fit B_crit(L) = B* / L^(1/alpha_B) tokens for language models: the critical
batch grows as the loss falls.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import units
from .scaling_laws import PF_DAY_FLOP, kaplan_law


def steps(batch_size, *, min_steps: float, critical_batch: float):
    """Optimizer steps to a target loss at batch B: S_min (1 + B_crit / B) (eq. 2.11).

    >>> steps(1000.0, min_steps=1e4, critical_batch=1000.0)
    20000.0
    """
    units.check_positive("min_steps", min_steps)
    units.check_positive("critical_batch", critical_batch)
    b = _batch(batch_size)
    out = min_steps * (1.0 + critical_batch / b)
    return float(out) if out.ndim == 0 else out


def examples(batch_size, *, min_examples: float, critical_batch: float):
    """Examples (or tokens) processed to a target loss at batch B: E_min (1 + B / B_crit).

    >>> examples(1000.0, min_examples=1e7, critical_batch=1000.0)
    20000000.0
    """
    units.check_positive("min_examples", min_examples)
    units.check_positive("critical_batch", critical_batch)
    b = _batch(batch_size)
    out = min_examples * (1.0 + b / critical_batch)
    return float(out) if out.ndim == 0 else out


def kaplan_critical_batch_tokens(loss_nats: float | np.ndarray) -> float | np.ndarray:
    """Critical batch in tokens at loss L, B* / L^(1/alpha_B) (Kaplan et al. 2020, eq. 1.4).

    >>> f"{kaplan_critical_batch_tokens(2.0):.2e}"
    '7.37e+06'
    """
    law = kaplan_law()
    l_nats = np.asarray(loss_nats, dtype=float)
    if np.any(l_nats <= 0):
        raise ValueError("loss_nats must be positive")
    out = law.b_star_tokens / l_nats ** (1.0 / law.alpha_b)
    return float(out) if out.ndim == 0 else out


def kaplan_critical_batch_at_compute(train_flop: float | np.ndarray) -> float | np.ndarray:
    """Kaplan's critical batch in tokens on the compute-efficient frontier, B_crit(L(C)).

    Kaplan et al. 2020 fit L(C_min) = (C_c / C_min)^alpha_C (eq. 1.3, C in PF-days) and
    B_crit(L) = B* / L^(1/alpha_B) (eq. 1.4); together B_crit = B* (C_min / C_c)^(alpha_C /
    alpha_B), a power of compute with exponent 0.050 / 0.21 = 0.24. Their losses are in nats on
    WebText2 with GPT-2's tokenizer, so the absolute level carries over to other data only
    roughly.

    >>> f"{kaplan_critical_batch_at_compute(1e24):.3g}"
    '1.77e+07'
    """
    law = kaplan_law()
    c = np.asarray(train_flop, dtype=float)
    if np.any(c <= 0):
        raise ValueError(f"train_flop must be positive, got {train_flop!r}")
    loss_nats = (law.c_min_c_pf_days / (c / PF_DAY_FLOP)) ** law.alpha_c_min
    return kaplan_critical_batch_tokens(loss_nats)


def simple_noise_scale(per_example_grads: np.ndarray) -> float:
    """B_simple = tr(Sigma) / |G|^2 from a (n_examples, n_params) array of gradients (eq. 2.8)."""
    g = np.asarray(per_example_grads, dtype=float)
    if g.ndim != 2 or g.shape[0] < 2:
        raise ValueError(f"per_example_grads must be 2-D with >= 2 rows, got shape {g.shape}")
    mean = g.mean(axis=0)
    trace_cov = g.var(axis=0, ddof=1).sum()
    return float(trace_cov / (mean @ mean))


def _batch(batch_size) -> np.ndarray:
    b = np.asarray(batch_size, dtype=float)
    if np.any(b <= 0):
        raise ValueError(f"batch_size must be positive, got {batch_size!r}")
    return b
