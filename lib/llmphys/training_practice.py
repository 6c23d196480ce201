"""Training practice: learning-rate schedules, gradient clipping and FP16 loss scaling.

Three pieces of every pre-training recipe, as small functions the tiny LM's training
loop (``tinylm_train.train``) calls:

    warmup-cosine        linear warm-up, then cosine decay to a floor (Loshchilov & Hutter
                         2017, arXiv:1608.03983; the Llama 3 recipe, Dubey et al. 2024)
    warmup-stable-decay  linear warm-up, a long constant phase, then a short decay
                         (Hu et al. 2024, MiniCPM, arXiv:2404.06395, sec. 4; Hägele et al.
                         2024, arXiv:2405.18392, who find a linear cool-down of 10-20% of the
                         steps matches cosine)
    clipping             g <- g min(1, c / ||g||) on the global norm (Pascanu et al. 2013,
                         arXiv:1211.5063, alg. 1)
    loss scaling         gradients stored in FP16 lose every value below its smallest
                         subnormal, 2^-24 ~ 6e-8; multiplying the loss by S before the backward
                         pass and dividing after moves them into range (Micikevicius et al.
                         2018, arXiv:1710.03740, sec. 3.2)

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import units

SCHEDULES = ("cosine", "wsd", "constant")
FP16_MAX = float(np.finfo(np.float16).max)  # 65504
FP16_SMALLEST_SUBNORMAL = 2.0**-24  # IEEE 754 binary16: 5.96e-8
FP16_SMALLEST_NORMAL = 2.0**-14  # 6.10e-5


def lr_schedule(
    step: int,
    *,
    n_steps: int,
    peak_lr: float,
    warmup_steps: int,
    schedule: str = "cosine",
    decay_fraction: float = 0.2,
    min_lr_ratio: float = 0.1,
) -> float:
    """Learning rate at ``step`` (0-based) of ``n_steps`` under a named schedule.

    All three warm up linearly over ``warmup_steps``. "cosine" then follows
    min + (peak - min)(1 + cos(pi f))/2 with f the fraction of the remaining steps done;
    "wsd" stays at the peak until the last ``decay_fraction`` of the steps and falls
    linearly to min there; "constant" stays at the peak. min = ``min_lr_ratio`` x peak.

    >>> [round(lr_schedule(s, n_steps=100, peak_lr=1.0, warmup_steps=10, schedule="wsd"), 3)
    ...  for s in (0, 9, 50, 80, 90, 99)]
    [0.1, 1.0, 1.0, 1.0, 0.55, 0.145]
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    units.check_positive("n_steps", n_steps)
    units.check_positive("peak_lr", peak_lr)
    if not 0 <= warmup_steps < n_steps:
        raise ValueError(f"warmup_steps must lie in [0, n_steps={n_steps}), got {warmup_steps!r}")
    if not 0 < decay_fraction <= 1:
        raise ValueError(f"decay_fraction must lie in (0, 1], got {decay_fraction!r}")
    if not 0 <= min_lr_ratio <= 1:
        raise ValueError(f"min_lr_ratio must lie in [0, 1], got {min_lr_ratio!r}")
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    if schedule == "constant":
        return peak_lr
    if schedule == "cosine":  # written so that min_lr_ratio = 0.1 gives 0.1 + 0.45 (1 + cos)
        frac = min(1.0, (step - warmup_steps) / max(1, n_steps - warmup_steps))
        return peak_lr * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac)))
    low = min_lr_ratio * peak_lr
    decay_start = n_steps - max(1, round(decay_fraction * n_steps))
    if step < decay_start:
        return peak_lr
    frac = min(1.0, (step - decay_start) / max(1, n_steps - decay_start))
    return peak_lr - (peak_lr - low) * frac


def global_norm(grads: dict[str, np.ndarray]) -> float:
    """sqrt(sum of squares) over every gradient entry: the norm clipping compares with c."""
    return float(math.sqrt(sum(float(np.sum(g * g)) for g in grads.values())))


def clip_by_global_norm(
    grads: dict[str, np.ndarray], max_norm: float
) -> tuple[dict[str, np.ndarray], float]:
    """(g min(1, c / ||g||), ||g||): the gradient rescaled so its global norm is at most c.

    >>> g, n = clip_by_global_norm({"w": np.array([3.0, 4.0])}, max_norm=1.0)
    >>> g["w"].tolist(), n
    ([0.6, 0.8], 5.0)
    """
    units.check_positive("max_norm", max_norm)
    norm = global_norm(grads)
    factor = min(1.0, max_norm / norm) if norm > 0 else 1.0
    return {k: g * factor for k, g in grads.items()}, norm


def fp16_gradients(
    grads: dict[str, np.ndarray], *, loss_scale: float = 1.0
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Gradients as an FP16 backward pass with a static loss scale S leaves them.

    Each entry is S g rounded to FP16, then divided by S in the working precision.
    Returns the gradients and counts: ``zero_fraction`` (nonzero entries flushed to 0),
    ``subnormal_fraction`` (entries left below 2^-14, with fewer than 10 bits of
    mantissa) and ``overflow`` (1.0 if any S g exceeded 65,504; a dynamic scaler would
    skip that step and halve S).

    >>> g, s = fp16_gradients({"w": np.array([1e-8, 1e-3])})
    >>> float(g["w"][0]), s["zero_fraction"]
    (0.0, 0.5)
    >>> fp16_gradients({"w": np.array([1e-8, 1e-3])}, loss_scale=1024.0)[1]["zero_fraction"]
    0.0
    """
    units.check_positive("loss_scale", loss_scale)
    out, n, zeros, subnormal, overflow = {}, 0, 0, 0, False
    for k, g in grads.items():
        with np.errstate(over="ignore"):
            h = (g * loss_scale).astype(np.float16)
        nonzero = g != 0
        n += int(nonzero.sum())
        zeros += int((nonzero & (h == 0)).sum())
        subnormal += int(((h != 0) & (np.abs(h) < FP16_SMALLEST_NORMAL)).sum())
        overflow |= bool(np.isinf(h).any())
        out[k] = h.astype(g.dtype) / loss_scale
    return out, {
        "zero_fraction": zeros / max(n, 1),
        "subnormal_fraction": subnormal / max(n, 1),
        "overflow": float(overflow),
    }
