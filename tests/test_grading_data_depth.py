"""Chapter 2's Bloom-filter Implement check: a right answer passes, each slip gets its hint."""

import math

import pytest

from llmphys import grading


def fpr(n_items, n_bits, n_hashes):
    return (1 - math.exp(-n_hashes * n_items / n_bits)) ** n_hashes


def test_bloom_reference_passes():
    fb = grading.check_bloom_false_positive_rate(fpr)
    assert fb.passed and fb.n_matched == fb.n_cases == 14
    assert str(fb).startswith("PASS data-ex-bloom (fpr)")


def test_the_exact_finite_m_form_also_passes():
    # (1 - (1 - 1/m)^(kn))^k is the exact form for independent bits; it differs from the
    # exponential one by O(k/m) relative, inside the check's stated tolerance
    fb = grading.check_bloom_false_positive_rate(
        lambda n, m, k: (1 - (1 - 1 / m) ** (k * n)) ** k
    )
    assert fb.passed, fb.message


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda n, m, k: 1 - math.exp(-k * n / m), "power k"),
        (lambda n, m, k: (1 - math.exp(-n / m)) ** k, "k n bits"),
        (lambda n, m, k: min(1.0, k * n / m) ** k, "first-order"),
        (lambda n, m, k: math.exp(-k * n / m) ** k, "still zero"),
    ],
    ids=["one_bit", "n_not_kn", "linear_fill", "zero_not_set"],
)
def test_bloom_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_bloom_false_positive_rate(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def flop_per_byte(t, n_body, v, d):
    return t * (2 * n_body + 2 * v * d)


def test_vocab_flop_reference_passes():
    fb = grading.check_forward_flop_per_byte(flop_per_byte)
    assert fb.passed and fb.n_matched == fb.n_cases == 12


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda t, n, v, d: 2 * n * t, "output head is missing"),
        (lambda t, n, v, d: t * (2 * n + v * d), "not V d"),
        (lambda t, n, v, d: 6 * t * (n + v * d), "training step"),
        (lambda t, n, v, d: 2 * (n + v * d), "this is per token"),
        (lambda t, n, v, d: 2 * (n + v * d) / t, "so multiply"),
    ],
    ids=["no_head", "no_factor_two", "training", "per_token", "divided"],
)
def test_vocab_flop_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_forward_flop_per_byte(wrong)
    assert not fb.passed and hint in fb.message, fb.message
