"""Pre-norm against post-norm on the tiny decoder: the gradients are right (against tinylm and
finite differences), and their depth dependence is Xiong et al. 2020's (arXiv:2002.04745)."""

import numpy as np
import pytest

from llmphys import norm_placement as npl
from llmphys import tinylm


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    p = npl.init_params(vocab_size=16, context_tokens=8, n_layers=3, rng=rng)
    x = rng.integers(0, 16, (2, 9))
    return p, x[:, :-1], x[:, 1:]


@pytest.fixture(scope="module")
def study():
    return npl.depth_study()


def test_pre_norm_is_exactly_tinylm(setup):
    # Same model, independent code: the losses and every gradient agree to round-off.
    p, x, y = setup
    loss, grads = npl.loss_and_grads(p, x, y, placement="pre")
    ref_loss, ref = tinylm.loss_and_grads(p, x, y)
    assert loss == pytest.approx(ref_loss, rel=1e-13)
    assert set(grads) == set(ref)
    for k in ref:
        np.testing.assert_allclose(grads[k], ref[k], rtol=1e-10, atol=1e-14, err_msg=k)


@pytest.mark.parametrize("key", ["l0.wq", "l0.wv", "l1.attn_norm", "l2.w1", "l2.mlp_norm",
                                 "l0.b1", "tok_emb", "pos_emb", "unembed"])
def test_post_norm_gradient_matches_finite_differences(setup, key):
    # Central differences with h = 1e-6: truncation O(h^2) and round-off O(1e-16/h) are both
    # far below the 1e-6 relative tolerance on entries of order 0.1.
    p, x, y = setup
    _, g = npl.loss_and_grads(p, x, y, placement="post")
    idx = np.unravel_index(np.argmax(np.abs(g[key])), g[key].shape)
    q = dict(p)
    q[key] = p[key].copy()
    q[key][idx] += 1e-6
    up, _ = npl.loss_and_grads(q, x, y, placement="post")
    q[key][idx] -= 2e-6
    down, _ = npl.loss_and_grads(q, x, y, placement="post")
    assert (up - down) / 2e-6 == pytest.approx(g[key][idx], rel=1e-6)


def test_post_norm_leaves_the_final_norm_unused(setup):
    p, x, y = setup
    _, g = npl.loss_and_grads(p, x, y, placement="post")
    assert not g["final_norm"].any()


def test_xavier_init_has_the_stated_spread():
    p = npl.init_params(vocab_size=64, context_tokens=64, d_model=64, d_ff=256, n_layers=4,
                        rng=np.random.default_rng(1))
    # 64 x 256 = 16,384 draws: the sample std is within 2% of sqrt(2 / 320) (5 sigma ~ 2.8%).
    assert p["l3.w2"].std() == pytest.approx(np.sqrt(2 / 320), rel=0.03)
    assert p["tok_emb"].std() == pytest.approx(1.0, rel=0.03)


def test_post_over_pre_top_gradient_grows_as_sqrt_depth(study):
    # Theorem 1: post-norm's last-layer gradient is O(d sqrt(ln d)), pre-norm's
    # O(d sqrt(ln d / L)), so their ratio grows as L^(1/2). Over five disjoint sets of four
    # seeds the fitted exponent ran from 0.41 to 0.55; the band is 1/2 +- 0.15.
    assert float(study["post_over_pre"]["exponent"]) == pytest.approx(0.5, abs=0.15)
    assert np.all(np.diff(study["post_over_pre"]["top_ratio"]) > 0)


def test_post_norm_gradients_grow_towards_the_top_and_pre_norm_ones_do_not(study):
    # Fig. 3 of the paper: post-norm's gradient norm rises with the layer index. At 32 layers
    # the top/bottom ratio ran 1.9 to 3.1 for post-norm and 0.29 to 0.39 for pre-norm over
    # five seed sets; the thresholds sit outside both ranges.
    post, pre = study["post"]["top_over_bottom"], study["pre"]["top_over_bottom"]
    assert post[-1] > 1.5 and post[-1] > post[0]
    assert pre[-1] < 0.5 and np.all(pre <= 1.0)
    assert float(study["post"]["top_exponent"]) > 0 > float(study["pre"]["top_exponent"])


def test_bad_inputs_are_named(setup):
    p, x, y = setup
    with pytest.raises(ValueError, match="placement"):
        npl.loss_and_grads(p, x, y, placement="sandwich")
    with pytest.raises(ValueError, match="inputs"):
        npl.loss_and_grads(p, x, y[:, :-1])
    with pytest.raises(ValueError, match="n_layers"):
        npl.layer_grad_norms(n_layers=0, placement="pre")
    with pytest.raises(ValueError, match="weight"):
        npl.layer_grad_norms(n_layers=2, placement="pre", weight="w3")
    with pytest.raises(ValueError, match="depths"):
        npl.depth_study((4,))
    with pytest.raises(ValueError, match="seeds"):
        npl.layer_profile(n_layers=2, seeds=())
