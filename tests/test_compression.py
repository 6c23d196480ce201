"""Code lengths: a real arithmetic coder reaches the ideal -log2 q, the adaptive n-gram code
approaches the source's entropy, and general-purpose compressors obey the limits."""

import math

import numpy as np
import pytest

from llmphys import compression, markov, tinylm_train


def test_arithmetic_coder_round_trips_and_reaches_the_ideal_length_within_two_bits(rng):
    # Witten, Neal & Cleary 1987: the code is at most 2 bits longer than sum -log2 q for the
    # (quantized) model, plus a vanishing round-off from 32-bit integer arithmetic.
    n, v = 3000, 8
    dists = rng.dirichlet(np.full(v, 0.3), size=n)
    symbols = np.array([rng.choice(v, p=d) for d in dists])
    freqs = compression.quantize(dists)
    bits = compression.arithmetic_encode(symbols, freqs)
    ideal = compression.code_length_bits(freqs[np.arange(n), symbols] / freqs.sum(axis=1))
    assert ideal <= len(bits) <= ideal + 2 + 1e-6 * n
    assert np.array_equal(compression.arithmetic_decode(bits, freqs), symbols)


def test_quantized_frequencies_keep_every_symbol_codable():
    f = compression.quantize(np.array([[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]]), total_bits=8)
    assert np.all(f >= 1) and np.all(f.sum(axis=1) == 256)


def test_adaptive_counts_match_a_sequential_implementation(rng):
    # Independent check of the vectorised counting: a plain loop with dictionaries.
    x = rng.integers(0, 3, 200)
    fast = compression.adaptive_ngram_probs(x, order=2, vocab_size=3, add_k=0.5)
    pair, ctx, slow = {}, {}, []
    for t, s in enumerate(x.tolist()):
        c = x[t - 1] if t >= 1 else -1
        slow.append((pair.get((c, s), 0) + 0.5) / (ctx.get(c, 0) + 1.5))
        pair[(c, s)] = pair.get((c, s), 0) + 1
        ctx[c] = ctx.get(c, 0) + 1
    assert np.allclose(fast, slow)


def test_adaptive_trigram_code_approaches_the_entropy_rate():
    # The source is order 2, so an adaptive trigram code is universal for it: its excess
    # over the entropy rate shrinks like (V-1) V^2 log2(n) / (2 n) bits per symbol
    # (Krichevsky & Trofimov 1981): 0.16 bits at n = 20,000 as an upper bound.
    p = tinylm_train.second_order_chain(8, rng=np.random.default_rng(1), concentration=0.2)
    x = tinylm_train.sample_symbols(p, 20_000, rng=np.random.default_rng(3))
    rate = compression.code_length_bits(
        compression.adaptive_ngram_probs(x, order=3, vocab_size=8)) / x.size
    h = markov.entropy_rate_bits(p)
    assert h - 0.03 < rate < h + 7 * 64 * math.log2(20_000) / (2 * 20_000)


def test_no_compressor_shrinks_random_bytes(rng):
    data = rng.integers(0, 256, 20_000, dtype=np.uint8).tobytes()
    for name, bits in compression.stdlib_compressed_bits(data).items():
        assert bits >= 8 * len(data), name


def test_general_compressors_stay_above_the_entropy_of_an_iid_text(rng):
    # Eight equiprobable letters carry exactly 3 bits each; on average no lossless code can
    # do better (Shannon 1948, theorem 9), and these ones pay for not knowing the source.
    text = compression.symbols_to_bytes(rng.integers(0, 8, 20_000))
    for name, bits in compression.stdlib_compressed_bits(text).items():
        assert 3.0 < bits / len(text) < 4.0, name


@pytest.mark.parametrize("call,name", [
    (lambda: compression.code_length_bits(np.array([0.5, 0.0])), "probs"),
    (lambda: compression.adaptive_ngram_probs(np.array([0, 1]), order=0, vocab_size=2), "order"),
    (lambda: compression.adaptive_ngram_probs(np.array([0, 2]), order=1, vocab_size=2), "tokens"),
    (lambda: compression.stdlib_compressed_bits(b""), "data"),
    (lambda: compression.symbols_to_bytes(np.array([30])), "tokens"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()
