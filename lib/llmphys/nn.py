"""Numpy building blocks shared by the book's reference models: softmax and RMSNorm.

The attention layers (``attention``), the MoE router (``moe``) and the decoders
(``transformer``, ``tinylm``) all normalise with these two functions, so a change to either
reaches every model at once. Refs: Zhang and Sennrich 2019 (RMSNorm, arXiv:1910.07467).

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import numpy as np

NORM_EPS = 1e-6  # RMSNorm's epsilon


def rms_norm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """x / rms(x) * gain over the last axis (Zhang and Sennrich 2019, sec. 3; arXiv:1910.07467)."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + NORM_EPS) * gain


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; rows that are all -inf never occur under a causal mask.

    >>> softmax(np.array([0.0, np.log(3.0)])).round(3)
    array([0.25, 0.75])
    """
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)
