"""The objective's currencies: nats, bits, perplexity and bits per byte, on worked values."""

import math

import numpy as np
import pytest

from llmphys import objective


def test_uniform_model_over_gpt2_vocabulary_has_loss_ln_50257_and_perplexity_50257():
    # GPT-2/GPT-3 BPE has 50,257 tokens (Brown et al. 2020, sec. 2.1; Radford et al. 2019).
    loss = objective.uniform_loss_nats(50257)
    assert loss == pytest.approx(10.8249, abs=1e-4)
    assert objective.perplexity(loss) == pytest.approx(50257, rel=1e-12)
    assert objective.bits_per_token(loss) == pytest.approx(math.log2(50257), rel=1e-12)


def test_cross_entropy_matches_a_hand_computed_example():
    # Logits ln([1, 2, 1]) give probabilities [1/4, 1/2, 1/4]; targets 1 then 0 cost
    # ln 2 and ln 4 nats: mean 1.5 ln 2 = 1.5 bits.
    logits = np.log(np.array([[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]))
    loss = objective.cross_entropy_nats(logits, np.array([1, 0]))
    assert loss == pytest.approx(1.5 * math.log(2.0), rel=1e-12)
    assert objective.bits_per_token(loss) == pytest.approx(1.5, rel=1e-12)


def test_cross_entropy_is_shift_invariant_and_survives_huge_logits():
    rng = np.random.default_rng(0)
    logits, targets = rng.normal(size=(5, 7)), rng.integers(0, 7, 5)
    a = objective.cross_entropy_nats(logits, targets)
    b = objective.cross_entropy_nats(logits + 1e4, targets)  # exp(1e4) would overflow naively
    assert a == pytest.approx(b, rel=1e-9)


def test_worked_bits_per_byte_example():
    # 2 nats per token at 4 bytes per token: 2 / ln 2 / 4 = 0.72135 bits per byte.
    assert objective.bits_per_byte(2.0, bytes_per_token=4.0) == pytest.approx(0.721348, rel=1e-6)


def test_bits_per_byte_is_tokenizer_invariant_while_perplexity_is_not():
    # Independent check: one i.i.d. model of a text over V symbols, scored (a) one symbol
    # per token and (b) two symbols per token with the product distribution. The total
    # code length is the same, so bits per byte agree; per-token perplexity squares.
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(6))
    text = rng.choice(6, size=2000, p=probs)
    single = objective.cross_entropy_nats(np.log(np.tile(probs, (2000, 1))), text)
    pair_probs = np.outer(probs, probs).ravel()
    pairs = text[0::2] * 6 + text[1::2]
    double = objective.cross_entropy_nats(np.log(np.tile(pair_probs, (1000, 1))), pairs)
    assert objective.bits_per_byte(single, bytes_per_token=1) == pytest.approx(
        objective.bits_per_byte(double, bytes_per_token=2), rel=1e-12)
    assert objective.perplexity(double) == pytest.approx(objective.perplexity(single) ** 2,
                                                         rel=1e-12)


def test_conversions_round_trip():
    for loss in (0.0, 0.5, 2.3, 10.8):
        assert objective.loss_nats_from_perplexity(objective.perplexity(loss)) == pytest.approx(
            loss, abs=1e-12)
        bpb = objective.bits_per_byte(loss, bytes_per_token=3.7)
        assert objective.loss_nats_from_bits_per_byte(bpb, bytes_per_token=3.7) == pytest.approx(
            loss, abs=1e-12)
    assert objective.perplexity_from_bits_per_byte(0.5, bytes_per_token=4.0) == pytest.approx(4.0)


@pytest.mark.parametrize("call,name", [
    (lambda: objective.perplexity(-0.1), "loss_nats_per_token"),
    (lambda: objective.bits_per_byte(1.0, bytes_per_token=0), "bytes_per_token"),
    (lambda: objective.loss_nats_from_perplexity(0.5), "ppl"),
    (lambda: objective.uniform_loss_nats(0), "vocab_size"),
    (lambda: objective.loss_nats_from_bits_per_byte(float("nan"), bytes_per_token=1), "bpb"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_targets_must_fit_the_logits():
    with pytest.raises(ValueError, match="targets"):
        objective.cross_entropy_nats(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="targets"):
        objective.cross_entropy_nats(np.zeros((2, 3)), np.array([0]))
