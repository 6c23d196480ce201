"""RoPE, masking and the attention kernel, checked against their defining properties."""

import numpy as np
import pytest

from llmphys import attention, nn


@pytest.mark.parametrize("shift", [1, 17, 1000])
def test_rope_scores_depend_only_on_the_relative_position(rng, shift):
    # RoFormer eq. 16: <R_m q, R_n k> = g(q, k, m - n). float64: 1e-12 is ~1e4 ulps.
    q, k = rng.standard_normal((2, 1, 1, 16))
    m, n = np.array([9]), np.array([4])
    a = np.sum(attention.apply_rope(q, m) * attention.apply_rope(k, n))
    b = np.sum(attention.apply_rope(q, m + shift) * attention.apply_rope(k, n + shift))
    assert a == pytest.approx(b, rel=1e-12)
    assert a != pytest.approx(np.sum(q * k), rel=1e-3)  # and it does depend on m - n


def test_rope_is_a_rotation(rng):
    x = rng.standard_normal((5, 3, 8))
    y = attention.apply_rope(x, np.arange(5))
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(attention.apply_rope(x, np.zeros(5)), x)  # position 0: identity


def test_rope_rejects_odd_head_width(rng):
    with pytest.raises(ValueError, match="even"):
        attention.apply_rope(rng.standard_normal((2, 1, 5)), np.arange(2))


def test_gqa_equals_mha_with_each_kv_head_copied(rng):
    q = rng.standard_normal((6, 4, 8))
    k, v = rng.standard_normal((2, 6, 2, 8))
    pos = np.arange(6)
    grouped = attention.attend(q, k, v, pos, pos)
    copied = attention.attend(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1), pos, pos)
    np.testing.assert_array_equal(grouped, copied)


def test_first_token_attends_only_to_itself(rng):
    q, k, v = rng.standard_normal((3, 4, 2, 8))
    out = attention.attend(q, k, v, np.arange(4), np.arange(4))
    np.testing.assert_allclose(out[0], v[0], rtol=1e-12)


def test_rms_norm_output_has_unit_rms(rng):
    y = nn.rms_norm(rng.standard_normal((4, 64)) * 7.0, np.ones(64))
    np.testing.assert_allclose(np.sqrt(np.mean(y * y, axis=-1)), 1.0, rtol=1e-6)  # eps = 1e-6
