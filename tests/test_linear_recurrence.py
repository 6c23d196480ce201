"""Decayed linear attention: the recurrent and the parallel forms agree, and the limits hold."""

import numpy as np
import pytest

from llmphys import linear_recurrence as lr


def _qkv(rng, t=48, dk=8, dv=6):
    return (lr.elu_feature_map(rng.standard_normal((t, dk))),
            lr.elu_feature_map(rng.standard_normal((t, dk))), rng.standard_normal((t, dv)))


@pytest.mark.parametrize("decay_kind", ["none", "scalar", "diagonal"])
def test_recurrent_and_parallel_forms_agree_to_1e_12(decay_kind):
    rng = np.random.default_rng(0)
    q, k, v = _qkv(rng)
    decay = {"none": None, "scalar": rng.uniform(0.8, 1.0, 48),
             "diagonal": rng.uniform(0.8, 1.0, (48, 8))}[decay_kind]
    y_rec, _ = lr.recurrent_form(q, k, v, decay)
    y_par = lr.parallel_form(q, k, v, decay)
    scale = np.abs(y_par).max()
    assert np.max(np.abs(y_rec - y_par)) <= 1e-12 * scale


def test_undecayed_form_is_causal_linear_attention_written_out():
    # y_i = q_i . sum_{j<=i} k_j v_j^T: the cumulative sum of outer products (Katharopoulos eq. 9)
    rng = np.random.default_rng(1)
    q, k, v = _qkv(rng, t=10)
    cum = np.cumsum(np.einsum("tc,td->tcd", k, v), axis=0)
    assert np.allclose(lr.recurrent_form(q, k, v)[0], np.einsum("tc,tcd->td", q, cum), rtol=1e-13)


def test_state_is_d_k_by_d_v_whatever_the_length():
    rng = np.random.default_rng(2)
    for t in (4, 64):
        q, k, v = _qkv(rng, t=t)
        assert lr.recurrent_form(q, k, v)[1].shape == (8, 6)


def test_tiny_decay_forgets_everything_but_the_current_token():
    rng = np.random.default_rng(3)
    q, k, v = _qkv(rng, t=5)
    y, _ = lr.recurrent_form(q, k, v, np.full(5, 1e-300))
    assert np.allclose(y, np.sum(q * k, axis=1)[:, None] * v, rtol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: lr.recurrent_form(np.ones((3, 2)), np.ones((3, 3)), np.ones((3, 2))), "must be"),
    (lambda: lr.parallel_form(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.zeros(3)),
     "decay"),
    (lambda: lr.recurrent_form(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)),
                               np.full(3, 1.5)), "decay"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
