"""What QK-norm and logit soft-capping prevent: attention logits that grow with the weights.

Attention logits are q.k / sqrt(c). When the query and key projections grow by a
factor a (as they can during training), every logit grows by a^2, the softmax
sharpens towards one key per row, and its entropy collapses; in 16-bit training
large logits also overflow. Two remedies, measured here on the tiny decoder's q and k:

    QK-norm        RMSNorm on each head's q and k before the product (Dehghani et al.
                   2023, arXiv:2302.05442, sec. 3.1.1): |logit| <= sqrt(c) whatever a is
    soft-capping   logits <- cap tanh(logits / cap) (Gemma Team 2024, Gemma 2,
                   arXiv:2408.00118, sec. 2: cap 50 on attention, 30 on the final logits):
                   bounded by the cap, unchanged while |logit| << cap

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import nn, units

GEMMA2_ATTENTION_SOFTCAP = 50.0  # Gemma 2 report sec. 2; config attn_logit_softcapping
GEMMA2_FINAL_SOFTCAP = 30.0  # config final_logit_softcapping


def softcap(x: np.ndarray, cap: float) -> np.ndarray:
    """cap tanh(x / cap): about x for |x| << cap, never beyond +-cap.

    >>> softcap(np.array([1.0, 1000.0]), 50.0).round(3).tolist()
    [1.0, 50.0]
    """
    units.check_positive("cap", cap)
    return cap * np.tanh(np.asarray(x) / cap)


def attention_logit_stats(
    q: np.ndarray, k: np.ndarray, *, qk_norm: bool = False, cap: float | None = None
) -> dict[str, float]:
    """Largest |logit| and mean causal softmax entropy (bits) of one head, q and k (T, c).

    >>> x = np.ones((4, 2))
    >>> s = attention_logit_stats(x, x)
    >>> bool(np.isclose(s["entropy_bits"], np.mean(np.log2([1, 2, 3, 4]))))
    True
    """
    q, k = np.asarray(q, dtype=float), np.asarray(k, dtype=float)
    if q.ndim != 2 or q.shape != k.shape:
        raise ValueError(f"q and k must be equal (T, c) arrays, got {q.shape} and {k.shape}")
    if qk_norm:
        ones = np.ones(q.shape[-1])
        q, k = nn.rms_norm(q, ones), nn.rms_norm(k, ones)
    s = q @ k.T / np.sqrt(q.shape[-1])
    if cap is not None:
        s = softcap(s, cap)
    t = s.shape[0]
    allowed = np.tril(np.ones((t, t), dtype=bool))
    p = nn.softmax(np.where(allowed, s, -np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.sum(np.where(p > 0, p * np.log2(p), 0.0), axis=-1)
    return {"max_logit": float(np.abs(s[allowed]).max()), "entropy_bits": float(h.mean())}


def logit_growth(
    q: np.ndarray, k: np.ndarray, *, scales, qk_norm: bool = False, cap: float | None = None
) -> dict[str, np.ndarray]:
    """``attention_logit_stats`` with q and k both multiplied by each of ``scales``.

    A scale a on the projections multiplies raw logits by a^2.
    """
    rows = [
        attention_logit_stats(a * q, a * k, qk_norm=qk_norm, cap=cap)
        for a in (units.check_positive("scales", float(x)) for x in scales)
    ]
    return {key: np.array([r[key] for r in rows]) for key in ("max_logit", "entropy_bits")}
