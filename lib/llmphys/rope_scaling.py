"""RoPE's rotation frequencies and the ways of stretching them past the trained context.

RoPE turns the pair (x[2i], x[2i+1]) of a query or key at position m by the angle
m theta_i, theta_i = b^(-2i/d) (Su et al. 2021, arXiv:2104.09864, sec. 3.4), so pair i
completes a turn every 2 pi / theta_i tokens (its wavelength). A model trained on L
tokens has seen pair i's angle only up to L theta_i; the slow pairs, whose wavelength
exceeds L, never saw a full turn, and past L they meet angles they were never trained
on. Each method below changes theta_i for a context s times longer (s = ``factor``):

    pi       theta_i / s for every pair: positions squeezed into [0, L) (Chen et al.
             2023, arXiv:2306.15595, eq. 4)
    ntk      base b s^(d/(d-2)): fast pairs barely move, the slowest is divided by s
             ("NTK-aware" scaling, as stated in Peng et al. 2023, arXiv:2309.00071, sec. 3.1)
    yarn     a ramp over r_i = L / wavelength_i: pairs with r_i < alpha are divided by s,
             pairs with r_i > beta kept, a linear blend between ("NTK-by-parts", Peng et al.
             2023, sec. 3.2, alpha = 1, beta = 32), plus attention logits scaled by
             (0.1 ln s + 1)^2 (their eq. 22)
    llama3   the same blend on wavelengths: kept below L / high_freq_factor, divided by s
             above L / low_freq_factor, smooth between (Llama 3.1's ``rope_scaling``:
             factor 8, low_freq_factor 1, high_freq_factor 4, original 8,192 tokens)

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import units

METHODS = ("none", "pi", "ntk", "yarn", "llama3")


def inv_freq(d_head: int, *, base: float) -> np.ndarray:
    """theta_i = base^(-2i/d) for i = 0 .. d/2 - 1, radians per token (RoFormer eq. 15).

    >>> inv_freq(4, base=10_000.0).tolist()
    [1.0, 0.01]
    """
    units.check_positive("base", base)
    if isinstance(d_head, bool) or int(d_head) != d_head or d_head < 2 or d_head % 2:
        raise ValueError(f"d_head must be an even integer >= 2, got {d_head!r}")
    return base ** (-np.arange(0, d_head, 2) / d_head)


def scaled_inv_freq(
    d_head: int,
    *,
    base: float,
    method: str,
    factor: float = 1.0,
    original_context_tokens: int = 8192,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    alpha: float = 1.0,
    beta: float = 32.0,
) -> np.ndarray:
    """Rotation frequencies (radians per token) of each pair under a context-extension method.

    >>> f = scaled_inv_freq(128, base=500_000.0, method="llama3", factor=8.0)
    >>> bool(f[0] == 1.0), round(float(inv_freq(128, base=500_000.0)[-1] / f[-1]), 6)
    (True, 8.0)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    theta = inv_freq(d_head, base=base)
    s = units.check_positive("factor", factor)
    length = units.check_positive("original_context_tokens", original_context_tokens)
    if method == "none":
        return theta
    if method == "pi":
        return theta / s
    if method == "ntk":
        return inv_freq(d_head, base=base * s ** (d_head / (d_head - 2)))
    wavelength = 2 * math.pi / theta
    if method == "yarn":
        if not 0 < alpha < beta:
            raise ValueError(f"need 0 < alpha < beta, got alpha={alpha!r}, beta={beta!r}")
        keep = np.clip((length / wavelength - alpha) / (beta - alpha), 0.0, 1.0)
    else:  # llama3: the blend runs over L / wavelength from low_freq_factor to high_freq_factor
        if not 0 < low_freq_factor < high_freq_factor:
            raise ValueError(
                "need 0 < low_freq_factor < high_freq_factor, got "
                f"{low_freq_factor!r}, {high_freq_factor!r}"
            )
        keep = np.clip(
            (length / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor), 0.0, 1.0
        )
    return (1 - keep) * theta / s + keep * theta


def yarn_logit_scale(factor: float) -> float:
    """YaRN's multiplier on attention logits, (0.1 ln s + 1)^2 (Peng et al. 2023, eq. 22).

    Applied as sqrt(1/t) = 0.1 ln s + 1 on both q and k, so the logits grow by its square.

    >>> round(yarn_logit_scale(8.0), 4)
    1.4591
    """
    s = units.check_positive("factor", factor)
    return (0.1 * math.log(s) + 1.0) ** 2 if s > 1 else 1.0


def unseen_angle_pairs(
    freqs: np.ndarray,
    *,
    trained_freqs: np.ndarray,
    trained_context_tokens: int,
    context_tokens: int,
) -> int:
    """Pairs that reach, within ``context_tokens``, an angle never reached in training.

    Pair i was trained on angles [0, L theta_i] (all of [0, 2 pi) once L theta_i >= 2 pi);
    at context T under ``freqs`` it meets angles up to T theta'_i. It is out of range when
    L theta_i < 2 pi and T theta'_i > L theta_i.

    >>> theta = inv_freq(128, base=500_000.0)
    >>> unseen_angle_pairs(theta, trained_freqs=theta, trained_context_tokens=8192,
    ...                    context_tokens=131_072)
    29
    """
    freqs, trained = np.asarray(freqs, dtype=float), np.asarray(trained_freqs, dtype=float)
    if freqs.shape != trained.shape:
        raise ValueError(
            f"freqs and trained_freqs must have one shape, got {freqs.shape} and {trained.shape}"
        )
    seen = units.check_positive("trained_context_tokens", trained_context_tokens) * trained
    reach = units.check_positive("context_tokens", context_tokens) * freqs
    return int(np.sum((seen < 2 * math.pi) & (reach > seen * (1 + 1e-12))))


def score_vs_distance(freqs: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """Mean RoPE score of a query with an identical key at each distance: mean_i cos(Delta theta_i).

    For q = k with equal energy in every pair, <R_m q, R_n k> / |q|^2 is the mean over
    pairs of cos((m - n) theta_i): 1 at distance 0, and its long-range wiggles show which
    pairs still tell positions apart (RoFormer sec. 3.4.3, long-term decay).

    >>> float(score_vs_distance(inv_freq(8, base=10_000.0), np.array([0]))[0])
    1.0
    """
    freqs = np.asarray(freqs, dtype=float)
    return np.cos(np.asarray(distances, dtype=float)[:, None] * freqs[None, :]).mean(axis=1)
