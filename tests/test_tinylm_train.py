"""The order-2 source's exact entropies, honest next-token evaluation, and training itself."""

import numpy as np
import pytest

from llmphys import markov, tinylm, tinylm_train


@pytest.fixture(scope="module")
def chain():
    return tinylm_train.second_order_chain(8, rng=np.random.default_rng(1), concentration=0.2)


@pytest.fixture(scope="module")
def corpus(chain):
    return tinylm_train.sample_symbols(chain, 60_000, rng=np.random.default_rng(2))


def test_pair_state_chain_moves_only_from_ab_to_bc(chain):
    assert np.allclose(chain.sum(axis=1), 1.0)
    a, b = 3, 5
    row = chain[a * 8 + b].reshape(8, 8)  # row index = next state's (first, second) symbol
    assert np.all(row[np.arange(8) != b] == 0.0) and row[b].sum() == pytest.approx(1.0)


def test_conditional_entropies_match_count_models_on_a_long_sample(chain, corpus):
    # Independent check: an n-gram model of order k+1 fitted to the sample and scored on it
    # estimates H(x_t | k previous symbols). Its sampling error is ~1.5 bits / sqrt(60,000)
    # = 0.006 bits, its in-sample bias at most V^(k+1) / (2 n ln 2) = 0.006 bits for k = 2.
    for k in (0, 1, 2):
        counts = markov.ngram_counts(corpus, order=k + 1, vocab_size=8)
        estimate = markov.ngram_cross_entropy_bits(counts, corpus, add_k=0.5)
        assert estimate == pytest.approx(tinylm_train.conditional_entropy_bits(chain, k),
                                         abs=0.03)
    assert tinylm_train.conditional_entropy_bits(chain, 2) == pytest.approx(
        markov.entropy_rate_bits(chain), abs=1e-12)


def test_a_uniform_order_two_source_has_log2_v_bits_at_every_context_length():
    p = tinylm_train.second_order_chain(4, rng=np.random.default_rng(0), concentration=1e6)
    for k in (0, 1, 2):
        assert tinylm_train.conditional_entropy_bits(p, k) == pytest.approx(2.0, abs=1e-4)


@pytest.mark.parametrize("causal", [True, False])
def test_next_token_distributions_never_see_the_token_they_predict(rng, causal):
    p = tinylm.init_params(vocab_size=8, context_tokens=4, rng=rng, dtype="float64")
    for k in p:
        if k != "n_heads":
            p[k] = p[k] + rng.normal(0, 0.5, p[k].shape)
    x = rng.integers(0, 8, 23)
    base = tinylm_train.next_token_distributions(p, x, causal=causal)
    assert base.shape == (22, 8) and np.allclose(base.sum(axis=1), 1.0)
    for t in (0, 2, 5, 13, 21):
        y = x.copy()
        y[t + 1:] = (y[t + 1:] + 3) % 8  # change the target and everything after it
        changed = tinylm_train.next_token_distributions(p, y, causal=causal)
        assert np.allclose(changed[t], base[t]), t


def test_strided_evaluation_equals_direct_forward_within_the_first_window(rng):
    p = tinylm.init_params(vocab_size=8, context_tokens=6, rng=rng)
    x = rng.integers(0, 8, 7)  # exactly one window: positions 0..5 predict tokens 1..6
    logits, _ = tinylm.forward(p, x[None, :6])
    direct = np.exp(logits[0]) / np.exp(logits[0]).sum(axis=1, keepdims=True)
    assert np.allclose(tinylm_train.next_token_distributions(p, x), direct, atol=1e-6)


def test_training_learns_to_use_two_tokens_of_context(chain, corpus):
    # Below H(x_t | x_{t-1}) a model must use the token two back, which only attention can
    # fetch. 100 steps of 64 x 8 tokens reach about 1.8 bits against 2.75 for the bigram.
    params = tinylm.init_params(vocab_size=8, context_tokens=8, rng=np.random.default_rng(4),
                                dtype="float32")  # fast; the thresholds are coarse
    held = tinylm_train.sample_symbols(chain, 2048, rng=np.random.default_rng(3))
    _, hist = tinylm_train.train(params, corpus, n_steps=100, batch_size=64, lr=2e-2,
                                 rng=np.random.default_rng(5), eval_tokens=held, eval_every=50)
    assert hist["eval_bits"][0] == pytest.approx(3.0, abs=0.05)  # ~log2 8 at initialisation
    assert hist["eval_bits"][-1] < tinylm_train.conditional_entropy_bits(chain, 1) - 0.5
    assert hist["tokens_seen"][-1] == 100 * 64 * 8


def test_without_the_mask_training_loss_falls_below_the_entropy_floor(chain, corpus):
    # No honest predictor can average below the entropy rate; one that reads the answer can.
    params = tinylm.init_params(vocab_size=8, context_tokens=8, rng=np.random.default_rng(4),
                                dtype="float32")
    _, hist = tinylm_train.train(params, corpus, n_steps=60, batch_size=32, lr=2e-2,
                                 rng=np.random.default_rng(5), causal=False)
    assert hist["train_bits"][-10:].mean() < 0.5 * markov.entropy_rate_bits(chain)


def test_ablation_and_norms_name_every_write(rng):
    p = tinylm.init_params(vocab_size=8, context_tokens=4, n_layers=1, rng=rng)
    x = rng.integers(0, 8, 40)
    assert list(tinylm_train.residual_write_norms(p, x.reshape(-1, 4))) == ["embed", "attn0",
                                                                           "mlp0"]
    assert list(tinylm_train.ablation_bits(p, x)) == ["none", "embed", "attn0", "mlp0"]
    assert tinylm_train.per_position_bits(p, x[:35].reshape(-1, 5)).shape == (4,)
    assert np.allclose(tinylm_train.attention_weights(p, x.reshape(-1, 4), layer=0).sum(-1), 1)


@pytest.mark.parametrize("call,name", [
    (lambda: tinylm_train.second_order_chain(1, rng=np.random.default_rng(0)), "n_symbols"),
    (lambda: tinylm_train.conditional_entropy_bits(np.eye(4), 3), "context_tokens"),
    (lambda: tinylm_train.n_symbols_of(np.eye(5)), "pair-state"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_excess_shares_sum_to_one_and_the_total_is_the_token_weighted_mean(chain, corpus):
    # A model that is the source itself has zero excess; a uniform model's excess is
    # log2 V - H per token on average. Use a slightly blurred source so every share is finite.
    v = tinylm_train.n_symbols_of(chain)
    tokens = corpus[:20_000]
    q = 0.9 * tinylm_train.source_probs(chain, tokens) + 0.1 / v
    model_probs = np.concatenate([[1.0 / v], q])
    out = tinylm_train.excess_by_frequency(chain, tokens, model_probs, n_groups=4)
    assert out["excess_share"].sum() == pytest.approx(1.0, abs=1e-12)
    assert float(out["total_excess_bits"]) == pytest.approx(
        float(np.sum(out["token_share"] * out["excess_bits"])), rel=1e-12)
    direct = np.mean(np.log2(tinylm_train.source_probs(chain, tokens)) - np.log2(q))
    assert float(out["total_excess_bits"]) == pytest.approx(direct, rel=1e-9)


def test_tokens_until_below_finds_the_first_crossing_and_names_a_threshold_never_reached():
    seen, bits = np.array([0, 64, 128, 192]), np.array([3.0, 2.4, 2.6, 1.9])
    assert tinylm_train.tokens_until_below(seen, bits, 2.5) == 64
    with pytest.raises(ValueError, match="threshold_bits"):
        tinylm_train.tokens_until_below(seen, bits, 1.0)


def test_write_label_names_every_write_the_ablation_reports_and_rejects_others(rng):
    labels = [tinylm_train.write_label(k) for k in ("embed", "attn0", "mlp0", "attn1", "mlp1")]
    assert labels[3] == "the second attention layer" and len(set(labels)) == 5
    with pytest.raises(ValueError, match="name"):
        tinylm_train.write_label("attention1")
