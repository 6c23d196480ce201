"""RoPE frequencies and context-extension methods against their defining formulas."""

import math

import numpy as np
import pytest

from llmphys import attention
from llmphys import rope_scaling as rs

LLAMA31 = {"base": 500_000.0, "factor": 8.0, "original_context_tokens": 8192,
           "low_freq_factor": 1.0, "high_freq_factor": 4.0}  # Llama 3.1 config.json rope_scaling


def test_frequencies_match_the_decoders_rotation(rng):
    # apply_rope rotates pair i by m * base^(-2i/c): a unit vector in pair i turns by m theta_i.
    theta = rs.inv_freq(8, base=attention.ROPE_BASE)
    for i in range(4):
        x = np.zeros((1, 1, 8))
        x[..., 2 * i] = 1.0
        y = attention.apply_rope(x, np.array([7]))
        assert math.atan2(y[0, 0, 2 * i + 1], y[0, 0, 2 * i]) == pytest.approx(
            math.remainder(7 * theta[i], 2 * math.pi), abs=1e-12)


def _llama31_reference(theta):
    # Meta's apply_scaling, written as its loop over frequencies (llama-models, Llama 3.1).
    f = LLAMA31
    low_wl, high_wl = f["original_context_tokens"] / f["low_freq_factor"], \
        f["original_context_tokens"] / f["high_freq_factor"]
    out = []
    for freq in theta:
        wl = 2 * math.pi / freq
        if wl < high_wl:
            out.append(freq)
        elif wl > low_wl:
            out.append(freq / f["factor"])
        else:
            smooth = ((f["original_context_tokens"] / wl - f["low_freq_factor"])
                      / (f["high_freq_factor"] - f["low_freq_factor"]))
            out.append((1 - smooth) * freq / f["factor"] + smooth * freq)
    return np.array(out)


def test_llama3_scaling_equals_the_reference_loop():
    theta = rs.inv_freq(128, base=LLAMA31["base"])
    ours = rs.scaled_inv_freq(128, method="llama3", **LLAMA31)
    np.testing.assert_allclose(ours, _llama31_reference(theta), rtol=1e-14)
    # wavelengths below 8192 / 4 = 2048 tokens are kept, above 8192 divided by 8
    wl = 2 * math.pi / theta
    assert np.all(ours[wl < 2048] == theta[wl < 2048])
    np.testing.assert_allclose(ours[wl > 8192], theta[wl > 8192] / 8, rtol=1e-14)


def test_position_interpolation_is_dividing_positions_by_the_factor():
    # Chen et al. 2023 eq. 4: f'(x, m) = f(x, m L / L').
    theta = rs.inv_freq(64, base=10_000.0)
    pi = rs.scaled_inv_freq(64, base=10_000.0, method="pi", factor=4.0)
    d = np.arange(0, 40_000, 97.0)
    np.testing.assert_allclose(rs.score_vs_distance(pi, d), rs.score_vs_distance(theta, d / 4),
                               rtol=0, atol=1e-12)


def test_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_the_factor():
    # base' = b s^(d/(d-2)): theta'_(d/2-1) = b^(-(d-2)/d) / s exactly; theta'_0 = 1 always.
    theta = rs.inv_freq(128, base=10_000.0)
    ntk = rs.scaled_inv_freq(128, base=10_000.0, method="ntk", factor=8.0)
    assert ntk[0] == theta[0] == 1.0
    assert ntk[-1] == pytest.approx(theta[-1] / 8.0, rel=1e-12)
    assert np.all(np.diff(theta / ntk) > 0)  # ever more stretched towards the slow pairs


def test_yarn_keeps_fast_pairs_divides_slow_ones_and_blends_between():
    # Peng et al. 2023 sec. 3.2 with alpha = 1, beta = 32: r = L / wavelength.
    theta = rs.inv_freq(128, base=10_000.0)
    y = rs.scaled_inv_freq(128, base=10_000.0, method="yarn", factor=16.0,
                           original_context_tokens=4096)
    r = 4096 * theta / (2 * math.pi)
    assert np.all(y[r > 32] == theta[r > 32])
    np.testing.assert_allclose(y[r < 1], theta[r < 1] / 16.0, rtol=1e-14)
    mid = (r > 1) & (r < 32)
    assert mid.any() and np.all((y[mid] < theta[mid]) & (y[mid] > theta[mid] / 16.0))


def test_yarn_logit_scale_is_the_square_of_point_one_ln_s_plus_one():
    assert rs.yarn_logit_scale(1.0) == 1.0
    assert rs.yarn_logit_scale(8.0) == pytest.approx((0.1 * math.log(8.0) + 1) ** 2, rel=1e-15)


def test_slow_pairs_of_llama3_meet_unseen_angles_past_8k_unless_scaled():
    # Pairs with wavelength 2 pi 500000^(i/64) > 8192 tokens: i >= 35, 29 of 64.
    theta = rs.inv_freq(128, base=500_000.0)
    kw = {"trained_freqs": theta, "trained_context_tokens": 8192}
    assert rs.unseen_angle_pairs(theta, context_tokens=8192, **kw) == 0
    assert rs.unseen_angle_pairs(theta, context_tokens=65_536, **kw) == 29
    for method in ("pi", "llama3"):  # a factor of 8 covers 8 x 8192 tokens exactly
        f = rs.scaled_inv_freq(128, method=method, **LLAMA31)
        assert rs.unseen_angle_pairs(f, context_tokens=65_536, **kw) == 0
        assert rs.unseen_angle_pairs(f, context_tokens=131_072, **kw) == 29


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        rs.scaled_inv_freq(8, base=1e4, method="alibi")
    with pytest.raises(ValueError, match="d_head"):
        rs.inv_freq(7, base=1e4)
    with pytest.raises(ValueError, match="factor"):
        rs.scaled_inv_freq(8, base=1e4, method="pi", factor=0.0)
    with pytest.raises(ValueError, match="low_freq_factor"):
        rs.scaled_inv_freq(8, base=1e4, method="llama3", low_freq_factor=4.0)
    with pytest.raises(ValueError, match="shape"):
        rs.unseen_angle_pairs(np.ones(3), trained_freqs=np.ones(4), trained_context_tokens=8,
                              context_tokens=16)
