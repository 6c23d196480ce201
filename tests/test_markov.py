import numpy as np
import pytest

from llmphys import markov


def test_entropy_rate_of_a_two_state_chain_matches_the_closed_form():
    # P = [[1-a, a], [b, 1-b]]: pi = (b, a)/(a+b), H = pi0 h(a) + pi1 h(b).
    a, b = 0.1, 0.5
    p = np.array([[1 - a, a], [b, 1 - b]])
    h = lambda x: -x * np.log2(x) - (1 - x) * np.log2(1 - x)  # noqa: E731
    expected = (b * h(a) + a * h(b)) / (a + b)
    assert markov.entropy_rate_bits(p) == pytest.approx(expected, rel=1e-12)


def test_deterministic_cycle_has_zero_entropy():
    p = np.roll(np.eye(5), 1, axis=1)
    assert markov.entropy_rate_bits(p) == pytest.approx(0.0, abs=1e-12)


def test_empirical_transition_frequencies_converge(rng):
    # 200k steps: each row's frequencies within ~5 standard errors of P.
    p = markov.random_chain(4, rng=rng, concentration=1.0)
    x = markov.sample(p, 200_000, rng=rng)
    counts = markov.ngram_counts(x, order=2, vocab_size=4)
    freq = counts / counts.sum(axis=1, keepdims=True)
    se = np.sqrt(p * (1 - p) / counts.sum(axis=1, keepdims=True))
    assert np.all(np.abs(freq - p) < 5 * se + 1e-3)


def test_bigram_model_approaches_the_entropy_floor_from_above(rng):
    # A bigram model is the right model class for a first-order chain: with enough
    # data its held-out cross-entropy tends to H, and it can never beat H by more than noise.
    p = markov.random_chain(8, rng=rng, concentration=0.5)
    h = markov.entropy_rate_bits(p)
    train, test = markov.sample(p, 100_000, rng=rng), markov.sample(p, 50_000, rng=rng)
    ce = markov.ngram_cross_entropy_bits(markov.ngram_counts(train, order=2, vocab_size=8), test)
    assert h - 0.02 < ce < h + 0.02


def test_unigram_model_pays_for_ignoring_context(rng):
    p = markov.random_chain(8, rng=rng, concentration=0.3)
    x = markov.sample(p, 50_000, rng=rng)
    uni = markov.ngram_cross_entropy_bits(markov.ngram_counts(x, order=1, vocab_size=8), x)
    bi = markov.ngram_cross_entropy_bits(markov.ngram_counts(x, order=2, vocab_size=8), x)
    assert uni > bi + 0.3


@pytest.mark.parametrize("bad", [1, 2.5, True])
def test_bad_state_count_is_rejected(bad, rng):
    with pytest.raises(ValueError, match="n_states"):
        markov.random_chain(bad, rng=rng)


def test_non_stochastic_matrix_is_rejected():
    with pytest.raises(ValueError, match="rows must be probability vectors"):
        markov.entropy_rate_bits(np.array([[0.5, 0.6], [0.5, 0.5]]))
