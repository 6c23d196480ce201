"""The gradient identity dL/dz = p - y against finite differences, on random logits and through
the numpy decoder (tinylm), whose backward pass starts from the same identity."""

import numpy as np
import pytest

from llmphys import objective, tinylm, xent_gradient

# A central difference at h ~ eps^(1/3) has relative error ~ eps^(2/3) ~ 4e-11 for a function
# of order one (Numerical Recipes, sec. 5.7); 1e-7 leaves three decades for the conditioning.
RTOL = 1e-7


def _logits(shape=(3, 5, 7), seed=0):
    rng = np.random.default_rng(seed)
    return 3.0 * rng.standard_normal(shape), rng.integers(0, shape[-1], shape[:-1])


def test_closed_form_matches_central_difference_on_random_logits():
    z, t = _logits()
    exact = xent_gradient.logit_gradient(z, t)
    fd = xent_gradient.central_difference(lambda v: objective.cross_entropy_nats(v, t), z)
    assert xent_gradient.max_relative_error(fd, exact) < RTOL


def test_rows_sum_to_zero_and_entries_lie_in_minus_one_one():
    z, t = _logits(seed=1)
    g = xent_gradient.logit_gradient(z, t) * t.size  # per-token gradient p - y
    assert np.allclose(g.sum(axis=-1), 0.0, atol=1e-12)
    assert g.min() > -1.0 and g.max() < 1.0
    # The target's entry is p_y - 1 < 0, every other entry is p_i > 0.
    picked = np.take_along_axis(g, t[..., None], axis=-1)
    assert (picked < 0).all() and (g > 0).sum() == g.size - t.size


def test_uniform_logits_give_one_over_v_minus_onehot():
    g = xent_gradient.logit_gradient(np.zeros((1, 4)), np.array([2]))
    assert np.allclose(g, [[0.25, 0.25, -0.75, 0.25]])


def test_decoder_backward_matches_finite_difference_through_the_model():
    rng = np.random.default_rng(3)
    p = tinylm.init_params(vocab_size=8, context_tokens=6, d_model=16, n_heads=2, n_layers=1,
                           d_ff=32, rng=rng)
    x = rng.integers(0, 8, (4, 7))
    _, grads = tinylm.loss_and_grads(p, x[:, :-1], x[:, 1:])
    for name in ("unembed", "l0.wq", "tok_emb"):
        idx = rng.choice(p[name].size, 12, replace=False)

        def loss(w, name=name):
            return objective.cross_entropy_nats(tinylm.forward({**p, name: w}, x[:, :-1])[0],
                                                x[:, 1:])

        fd = xent_gradient.central_difference(loss, p[name], indices=idx)
        assert xent_gradient.max_relative_error(
            fd, np.where(np.isnan(fd), np.nan, grads[name])) < 1e-6


def test_step_scan_is_v_shaped_truncation_then_round_off():
    z, t = _logits(seed=2)
    scan = xent_gradient.step_scan(z, t, steps=[1e-1, xent_gradient.OPTIMAL_STEP, 1e-12])
    big, best, tiny = scan["max_relative_error"]
    assert best < big / 100 and best < tiny / 100


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="targets must have shape"):
        xent_gradient.logit_gradient(np.zeros((2, 3)), np.array([0]))
    with pytest.raises(ValueError, match="targets must lie"):
        xent_gradient.logit_gradient(np.zeros((1, 3)), np.array([3]))
    with pytest.raises(ValueError, match="step must be positive"):
        xent_gradient.central_difference(lambda v: 0.0, np.zeros(2), step=0.0)


def test_best_step_grows_as_the_cube_root_of_the_tokens_averaged():
    assert xent_gradient.best_step(1) == pytest.approx(xent_gradient.OPTIMAL_STEP, rel=1e-12)
    assert xent_gradient.best_step(512) / xent_gradient.best_step(1) == pytest.approx(8.0)
    z, t = _logits((64, 8), seed=4)  # 64 tokens: the measured best lies within 10x of it
    steps = np.geomspace(1e-9, 1e-2, 15)
    scan = xent_gradient.step_scan(z, t, steps=steps)
    h_best = steps[np.argmin(scan["max_relative_error"])]
    assert 0.1 < h_best / xent_gradient.best_step(64) < 10
