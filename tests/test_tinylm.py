"""The tiny transformer: hand-written gradients against finite differences, the causal mask,
the parameter count, and AdamW's defining properties."""

import numpy as np
import pytest

from llmphys import tinylm


def _model(rng, *, dtype="float64", **kw):
    shape = dict(vocab_size=7, context_tokens=5, d_model=8, n_heads=2, n_layers=2, d_ff=12) | kw
    p = tinylm.init_params(rng=rng, dtype=dtype, **shape)
    for k in p:  # move away from the symmetric initialisation so every path carries gradient
        if k != "n_heads":
            p[k] = p[k] + rng.normal(0.0, 0.3, p[k].shape)
    return p


@pytest.mark.parametrize("causal", [True, False])
def test_backward_pass_matches_central_finite_differences(rng, causal):
    # Central differences in float64 have error O(h^2) ~ 1e-10 relative to the gradient's
    # scale; a wrong term in any backward formula shows up at 1e-2 or worse.
    p = _model(rng)
    x, y = rng.integers(0, 7, (3, 5)), rng.integers(0, 7, (3, 5))
    _, grads = tinylm.loss_and_grads(p, x, y, causal=causal)
    assert set(grads) == set(p) - {"n_heads"}
    h = 1e-5
    for name, g in grads.items():
        flat = p[name].reshape(-1)
        picks = rng.choice(flat.size, size=min(flat.size, 6), replace=False)
        for i in picks:
            old = flat[i]
            flat[i] = old + h
            up, _ = tinylm.loss_and_grads(p, x, y, causal=causal)
            flat[i] = old - h
            down, _ = tinylm.loss_and_grads(p, x, y, causal=causal)
            flat[i] = old
            numeric = (up - down) / (2 * h)
            assert g.reshape(-1)[i] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, i)


def test_loss_at_initialisation_is_close_to_uniform(rng):
    # N(0, 0.02) weights give near-zero logits, so the first loss is about ln V.
    p = tinylm.init_params(vocab_size=16, context_tokens=8, rng=rng)
    x = rng.integers(0, 16, (4, 8))
    loss, _ = tinylm.loss_and_grads(p, x, x)
    assert loss == pytest.approx(np.log(16), abs=0.02)


def test_parameter_count_matches_the_closed_form():
    # V d (tokens) + T d (positions) + L (4 d^2 + 2 d + 2 d d_ff + d_ff + d) + d + d V
    v, t, d, layers, ff = 8, 8, 32, 2, 64
    p = tinylm.init_params(vocab_size=v, context_tokens=t, d_model=d, n_layers=layers, d_ff=ff,
                           rng=np.random.default_rng(0))
    expected = v * d + t * d + layers * (4 * d * d + 2 * d + 2 * d * ff + ff + d) + d + d * v
    assert tinylm.n_params(p) == expected == 17504


def test_causal_mask_hides_the_future_and_removing_it_leaks_it(rng):
    p = _model(rng)
    x = rng.integers(0, 7, (1, 5))
    x2 = x.copy()
    x2[0, 3] = (x2[0, 3] + 1) % 7  # change one token
    for causal, leaks in ((True, False), (False, True)):
        a, _ = tinylm.forward(p, x, causal=causal)
        b, _ = tinylm.forward(p, x2, causal=causal)
        # Positions before 3 see the change only if the mask is off.
        assert (not np.allclose(a[0, :3], b[0, :3])) == leaks
        assert not np.allclose(a[0, 3:], b[0, 3:])


def test_attention_rows_are_distributions_with_nothing_above_the_diagonal(rng):
    q, k, v = (rng.normal(size=(2, 3, 6, 4)) for _ in range(3))
    _out, a = tinylm.attention(q, k, v)
    assert np.allclose(a.sum(axis=-1), 1.0)
    upper = np.triu_indices(6, k=1)
    assert np.all(a[..., upper[0], upper[1]] == 0.0)
    _, a_open = tinylm.attention(q, k, v, causal=False)
    assert np.all(a_open[..., upper[0], upper[1]] > 0.0)


def test_residual_stream_is_the_sum_of_its_writes(rng):
    p = _model(rng)
    _, cache = tinylm.forward(p, rng.integers(0, 7, (2, 5)))
    assert list(cache["writes"]) == ["embed", "attn0", "mlp0", "attn1", "mlp1"]
    assert np.allclose(sum(cache["writes"].values()), cache["stream"])


def test_ablating_a_write_removes_exactly_that_term(rng):
    p = _model(rng)
    x = rng.integers(0, 7, (2, 5))
    _, full = tinylm.forward(p, x)
    _, cut = tinylm.forward(p, x, ablate="mlp1")  # the last write: nothing downstream reads it
    assert np.allclose(cut["stream"], full["stream"] - full["writes"]["mlp1"])
    with pytest.raises(ValueError, match="ablate"):
        tinylm.forward(p, x, ablate="mlp7")


def test_adamw_first_step_moves_every_weight_by_the_learning_rate(rng):
    # After one step the bias-corrected m_hat / sqrt(v_hat) is g / |g| = sign(g) (Kingma &
    # Ba 2015, sec. 2.1): each weight moves by lr, whatever the gradient's scale, plus the
    # decoupled decay lr * wd * w on matrices (Loshchilov & Hutter 2019, alg. 2).
    p = {"w": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}
    g = {"w": 1e3 * rng.normal(size=(3, 4)), "b": 1e-3 * rng.normal(size=4)}
    before = {k: v.copy() for k, v in p.items()}
    state = tinylm.adamw_update(p, g, {}, lr=0.01, weight_decay=0.1, eps=1e-12)
    assert state["step"] == 1
    assert np.allclose(p["w"], before["w"] - 0.01 * (np.sign(g["w"]) + 0.1 * before["w"]))
    assert np.allclose(p["b"], before["b"] - 0.01 * np.sign(g["b"]))  # vectors are not decayed


def test_adamw_weight_decay_is_decoupled_from_the_gradient(rng):
    # With a zero gradient Adam's step is zero, so only the decay acts: w <- (1 - lr wd) w.
    p = {"w": rng.normal(size=(2, 2))}
    w0 = p["w"].copy()
    tinylm.adamw_update(p, {"w": np.zeros((2, 2))}, {}, lr=0.1, weight_decay=0.5)
    assert np.allclose(p["w"], (1 - 0.05) * w0)


@pytest.mark.parametrize("kwargs,name", [({"d_model": 10, "n_heads": 3}, "n_heads"),
                                         ({"vocab_size": 0}, "vocab_size"),
                                         ({"n_layers": 1.5}, "n_layers")])
def test_bad_shapes_name_themselves(kwargs, name):
    args = dict(vocab_size=8, context_tokens=4, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ValueError, match=name):
        tinylm.init_params(**args)


def test_windows_longer_than_the_context_are_rejected(rng):
    p = tinylm.init_params(vocab_size=8, context_tokens=4, rng=rng)
    with pytest.raises(ValueError, match="context_tokens"):
        tinylm.forward(p, np.zeros((1, 5), dtype=int))


def test_tinylm_and_the_registry_decoder_run_one_attention(rng, monkeypatch):
    # One forward pass of attention for both numpy decoders: tinylm (chapter 1) and
    # transformer (chapter 3) each call attention.attend once per layer, and no private copy.
    from llmphys import attention, specs, transformer

    calls = []
    real = attention.attend
    monkeypatch.setattr(attention, "attend", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    p = _model(rng)
    tinylm.forward(p, rng.integers(0, 7, (2, 5)))
    assert len(calls) == tinylm.n_layers(p)
    m = transformer.tiny(specs.model("llama3_8b"))
    transformer.forward(transformer.init_params(m, rng), m, np.arange(6))
    assert len(calls) == tinylm.n_layers(p) + m.n_layers


def test_attention_is_the_softmax_of_scaled_scores_under_the_mask(rng):
    # Closed form, one query at a time: weights_j = exp(q.k_j / sqrt(c)) / sum over j <= i.
    q, k, v = (rng.standard_normal((1, 2, 5, 4)) for _ in range(3))
    out, a = tinylm.attention(q, k, v)
    for h in range(2):
        for i in range(5):
            s = np.exp(k[0, h, : i + 1] @ q[0, h, i] / 2.0)
            w = s / s.sum()
            assert np.allclose(a[0, h, i, : i + 1], w, rtol=1e-13) and not a[0, h, i, i + 1 :].any()
            assert np.allclose(out[0, h, i], w @ v[0, h, : i + 1], rtol=1e-13)
