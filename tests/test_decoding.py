"""Decoding strategies against closed forms: filters keep the right tokens and renormalise,
sampling follows the distribution it is given, beam search finds the best sequence a
brute-force enumeration finds."""

import itertools
import math

import numpy as np
import pytest

from llmphys import decoding

P = np.array([0.5, 0.25, 0.15, 0.1])
Z = np.log(P)


def test_temperature_one_is_softmax_and_zero_is_greedy():
    assert np.allclose(decoding.next_token_probs(Z), P)
    assert np.array_equal(decoding.next_token_probs(Z, temperature=0.0), [1, 0, 0, 0])


def test_temperature_raises_probabilities_to_the_power_one_over_tau():
    got = decoding.next_token_probs(Z, temperature=0.5)
    assert np.allclose(got, P**2 / np.sum(P**2))


def test_top_k_keeps_k_largest_renormalised():
    assert np.allclose(decoding.next_token_probs(Z, top_k=2), [2 / 3, 1 / 3, 0, 0])


def test_top_p_keeps_smallest_prefix_reaching_p():
    # 0.5 + 0.25 < 0.8 <= 0.9: three tokens; 0.5 < 0.7 <= 0.75: two.
    assert np.allclose(decoding.next_token_probs(Z, top_p=0.8),
                       np.array([0.5, 0.25, 0.15, 0]) / 0.9)
    assert np.allclose(decoding.next_token_probs(Z, top_p=0.7), np.array([0.5, 0.25, 0, 0]) / 0.75)
    assert np.allclose(decoding.next_token_probs(Z, top_p=1.0), P)


def test_sampling_follows_the_distribution():
    rng = np.random.default_rng(0)
    toks = decoding.generate(lambda t: np.tile(Z, (t.shape[0], 1)), np.zeros((20_000, 1)),
                             n_new=1, rng=rng)[:, 1]
    freq = np.bincount(toks, minlength=4) / toks.size
    # binomial s.d. sqrt(p(1-p)/n) <= 0.0036 at n = 20,000; 4 s.d.
    assert np.allclose(freq, P, atol=0.015)


def _markov_logits(tokens):  # a first-order chain over 3 tokens, as a "model"
    trans = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.1, 0.4], [0.45, 0.45, 0.1]]))
    return trans[tokens[:, -1]]


def test_beam_search_matches_brute_force_for_a_wide_beam_and_beats_greedy():
    prompt = np.array([[0], [2]])
    trans = np.exp(_markov_logits(np.arange(3)[:, None]))
    for row, start in enumerate((0, 2)):
        best = max(itertools.product(range(3), repeat=4),
                   key=lambda s: sum(math.log(trans[a, b])
                                     for a, b in itertools.pairwise((start, *s))))
        exact = sum(math.log(trans[a, b]) for a, b in itertools.pairwise((start, *best)))
        toks, score = decoding.beam_search(_markov_logits, prompt, n_new=4, beam_width=9)
        assert tuple(toks[row, 1:]) == best and score[row] == pytest.approx(exact)
    greedy = decoding.generate(_markov_logits, prompt, n_new=4, rng=np.random.default_rng(0),
                               temperature=0.0)
    g_score = [sum(math.log(trans[a, b]) for a, b in itertools.pairwise(r)) for r in greedy]
    _, b_score = decoding.beam_search(_markov_logits, prompt, n_new=4, beam_width=2)
    assert all(b >= g - 1e-12 for b, g in zip(b_score, g_score, strict=True))


def test_beam_width_one_is_greedy():
    prompt = np.array([[0], [1], [2]])
    greedy = decoding.generate(_markov_logits, prompt, n_new=5, rng=np.random.default_rng(0),
                               temperature=0.0)
    beam, _ = decoding.beam_search(_markov_logits, prompt, n_new=5, beam_width=1)
    assert np.array_equal(beam, greedy)


def test_distinct_ngrams_and_selection_ops():
    assert decoding.distinct_ngram_fraction(np.array([[0, 1, 2, 3]]), n=2) == 1.0
    assert decoding.selection_ops_per_token(1024) == 3 * 1024
    assert decoding.selection_ops_per_token(1024, top_p=0.9) == 3 * 1024 + 1024 * 10


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="temperature"):
        decoding.next_token_probs(Z, temperature=-1.0)
    with pytest.raises(ValueError, match="top_k"):
        decoding.next_token_probs(Z, top_k=5)
    with pytest.raises(ValueError, match="top_p"):
        decoding.next_token_probs(Z, top_p=0.0)
    with pytest.raises(ValueError, match="beam_width"):
        decoding.beam_search(_markov_logits, np.array([[0]]), n_new=1, beam_width=0)
