"""The numpy decoders against values recorded before they were made to share one forward pass.

``tinylm`` (chapter 1, trained with a hand-written backward pass), ``transformer`` (chapter 3,
the registry architectures) and ``norm_placement`` (chapter 3, pre- against post-norm) once
had a residual loop each; they now run the one loop of ``llmphys.decoder``.
``tests/data/decoder_reference.npz`` holds the logits, losses, gradients and residual writes
of tinylm, the logits and greedy tokens of every transformer variant, and norm_placement's
losses and gradients in both placements, as the separate loops computed them (fixed seeds, float64;
regenerate with ``python tests/test_decoder_equivalence.py --record`` only when a change of
the numbers is intended). Reordering a sum changes float64 results by ~1e-16 relative, and
a CPU with another BLAS by a few ulp more, so 1e-12 relative passes any faithful refactoring
and fails any change of the computation.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from model_variants import variants

from llmphys import norm_placement, tinylm, transformer

REFERENCE = Path(__file__).with_name("data") / "decoder_reference.npz"
RTOL = 1e-12


def _tinylm_params():
    rng = np.random.default_rng(14)
    p = tinylm.init_params(vocab_size=7, context_tokens=5, d_model=8, n_heads=2, n_layers=2,
                           d_ff=12, rng=rng)
    for k in p:  # off the symmetric initialisation, so every path carries gradient
        if k != "n_heads":
            p[k] = p[k] + rng.normal(0.0, 0.3, p[k].shape)
    return p, rng.integers(0, 7, (3, 5)), rng.integers(0, 7, (3, 5))


def compute() -> dict[str, np.ndarray]:
    """Every recorded array, by name, from the current code."""
    out = {}
    p, x, y = _tinylm_params()
    for causal in (True, False):
        tag = f"tinylm.causal{int(causal)}"
        logits, cache = tinylm.forward(p, x, causal=causal)
        out[f"{tag}.logits"] = logits
        out[f"{tag}.stream"] = cache["stream"]
        for name, w in cache["writes"].items():
            out[f"{tag}.write.{name}"] = w
        for checkpoint in (False, True):
            loss, grads = tinylm.loss_and_grads(p, x, y, causal=causal, checkpoint=checkpoint)
            out[f"{tag}.ckpt{int(checkpoint)}.loss"] = np.array(loss)
            for name, g in grads.items():
                out[f"{tag}.ckpt{int(checkpoint)}.grad.{name}"] = g
    for name in ("embed", "attn0", "mlp1"):
        out[f"tinylm.ablate.{name}.logits"] = tinylm.forward(p, x, ablate=name)[0]
    rng = np.random.default_rng(3)
    q = norm_placement.init_params(vocab_size=7, context_tokens=5, d_model=8, n_layers=3, d_ff=12,
                                   rng=rng)
    x = rng.integers(0, 7, (3, 6))
    for placement in norm_placement.PLACEMENTS:
        loss, grads = norm_placement.loss_and_grads(q, x[:, :-1], x[:, 1:], placement=placement)
        out[f"norm_placement.{placement}.loss"] = np.array(loss)
        for name, g in grads.items():
            out[f"norm_placement.{placement}.grad.{name}"] = g
    for key, full in variants().items():
        model = transformer.tiny(full)
        params = transformer.init_params(model, np.random.default_rng(1))
        tokens = np.random.default_rng(2).integers(0, model.vocab_size, 11)
        out[f"transformer.{key}.logits"] = transformer.forward(params, model, tokens)[0]
        out[f"transformer.{key}.incremental"] = transformer.forward_incremental(
            params, model, tokens, n_prefill=4)[0]
        greedy = transformer.greedy_decode(params, model, tokens[:5], 6)[0]
        out[f"transformer.{key}.greedy"] = greedy
    return out


@pytest.fixture(scope="module")
def pair():
    with np.load(REFERENCE) as ref:
        return {k: ref[k] for k in ref.files}, compute()


def test_every_recorded_array_is_still_computed(pair):
    ref, now = pair
    assert set(now) == set(ref)


def test_logits_losses_gradients_and_tokens_equal_the_recorded_ones(pair):
    ref, now = pair
    for name in sorted(ref):
        if name.endswith(".greedy"):
            np.testing.assert_array_equal(now[name], ref[name], err_msg=name)
        else:
            np.testing.assert_allclose(now[name], ref[name], rtol=RTOL, atol=0, err_msg=name)


if __name__ == "__main__" and sys.argv[1:] in (["--record"], ["--record-new"]):
    arrays = compute()
    if sys.argv[1] == "--record-new":  # add arrays not yet recorded, keep the recorded ones
        with np.load(REFERENCE) as ref:
            arrays |= {k: ref[k] for k in ref.files}
    np.savez_compressed(REFERENCE, **arrays)
    print(f"wrote {len(arrays)} arrays to {REFERENCE}")
