"""Activation memory of the tiny model: the closed form against its stored tensors, and
checkpointing that changes the bytes but not the gradients."""

import numpy as np
import pytest

from llmphys import activation_memory as am
from llmphys import parallelism, tinylm


def _model(rng, **shape):
    kw = dict(vocab_size=8, context_tokens=8, d_model=32, n_heads=2, n_layers=2, d_ff=64) | shape
    return tinylm.init_params(rng=rng, **kw), kw


@pytest.mark.parametrize("shape", [{}, {"n_layers": 3, "n_heads": 4}, {"context_tokens": 16,
                                                                       "d_ff": 48}])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_closed_form_equals_the_bytes_of_the_arrays_the_forward_pass_keeps(rng, shape, checkpoint):
    # An independent cross-check: nbytes of the real arrays against the per-block formula.
    params, kw = _model(rng, **shape)
    b, t = 3, kw["context_tokens"]
    x = rng.integers(0, kw["vocab_size"], (b, t))
    measured = am.measured_bytes(params, x, checkpoint=checkpoint)
    formula = am.tinylm_activation_bytes(batch_size=b, checkpoint=checkpoint, **kw)
    assert measured == formula


def test_checkpointed_gradients_equal_the_stored_ones_exactly(rng):
    # Recomputation repeats the same float operations on the same inputs: bit-identical.
    params, _ = _model(rng, n_layers=3)
    w = rng.integers(0, 8, (4, 9))
    loss0, g0 = tinylm.loss_and_grads(params, w[:, :-1], w[:, 1:])
    loss1, g1 = tinylm.loss_and_grads(params, w[:, :-1], w[:, 1:], checkpoint=True)
    assert loss0 == loss1
    for k in g0:
        np.testing.assert_array_equal(g0[k], g1[k])


def test_checkpointing_saves_nothing_for_one_block_and_more_for_deeper_models():
    # Limit: with L = 1 the kept input comes on top of the rebuilt block, so the peak grows.
    kw = dict(batch_size=4, context_tokens=8, d_model=32, n_heads=2, d_ff=64, vocab_size=8)
    full1, ckpt1 = (am.tinylm_activation_bytes(n_layers=1, checkpoint=c, **kw)["total"]
                    for c in (False, True))
    assert ckpt1 > full1
    saved = [1 - am.tinylm_activation_bytes(n_layers=n, checkpoint=True, **kw)["total"]
             / am.tinylm_activation_bytes(n_layers=n, **kw)["total"] for n in (2, 8, 64)]
    assert saved[0] < saved[1] < saved[2] < 1


def test_full_recomputation_keeps_2sbh_bytes_per_gpt3_layer():
    # Korthikanti et al. 2022 sec. 5: full recomputation keeps only the layer input, 2 s b h
    # bytes in 16-bit: 2 x 2048 x 1 x 12288 = 50,331,648 bytes for a GPT-3 175B layer.
    full = parallelism.activation_bytes_per_layer(seq_len=2048, micro_batch=1, d_model=12288,
                                                  n_heads=96, recompute="full")
    assert full == 2 * 2048 * 12288


def test_bad_shapes_name_the_argument():
    with pytest.raises(ValueError, match="d_ff"):
        am.tinylm_activation_bytes(batch_size=1, context_tokens=8, d_model=32, n_heads=2,
                                   d_ff=0, n_layers=2, vocab_size=8)


def test_reversible_blocks_rebuild_their_inputs_from_the_last_output():
    """Gomez et al. 2017: a RevNet coupling is exactly invertible, so the backward pass needs
    no stored activations. In float64 the rebuilt inputs agree to round-off (< 1e-12 relative
    over 32 blocks; about 1e-15 per block), and a plain stack would keep n_blocks + 1 tensors."""
    r = am.reversible_reconstruction(n_blocks=32, d_model=128, seed=3)
    assert r["max_rel_error"] < 1e-12
    assert r["stored_bytes_plain"] / r["stored_bytes_reversible"] == 33
    assert r["stored_bytes_reversible"] == 2 * 32 * 64 * 8


def test_reversible_bad_arguments():
    with pytest.raises(ValueError, match="d_model: even"):
        am.reversible_reconstruction(d_model=63)
    with pytest.raises(ValueError, match="n_blocks: a positive integer"):
        am.reversible_reconstruction(n_blocks=0)
