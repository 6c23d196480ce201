"""Checks for chapter 2's Bloom-filter and vocabulary-size exercises (see ``llmphys.grading``).

- :func:`check_bloom_false_positive_rate`: the Bloom filter's false-positive rate
  (1 - e^(-k n / m))^k (``pipeline.bloom.false_positive_rate``), exercise ``data-ex-bloom``;
- :func:`check_forward_flop_per_byte`: forward FLOP per byte of text, t (2 N_body + 2 V d)
  (``pipeline.vocab.flop_per_byte``), exercise ``data-ex-vocab-flop``.

The cases are drawn from fixed seeds, so the stored feedback in the chapter never changes.

Home: chapters/02_data.ipynb, section "Bloom filters: exact dedup in a few bits a page".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from llmphys import specs
from llmphys.grading._core import Case, Feedback, Mistake, check_function, common_factors
from llmphys.pipeline import bloom, vocab

__all__ = ["check_bloom_false_positive_rate", "check_forward_flop_per_byte"]

EXACT_FORM_RTOL = 2e-3
"""Relative tolerance of the Bloom check: the exact finite-m form (1 - (1 - 1/m)^(k n))^k
differs from the exponential one by O(k/m) relative, under 1e-3 at the cases' m >= 10^3 bits;
every wrong formula below is off by far more."""

# ---------------------------------------------------------------------------------------------
# data-ex-bloom: p = (1 - e^(-k n / m))^k


def _fpr(n_items: float, n_bits: float, n_hashes: int) -> float:
    return bloom.false_positive_rate(n_items=n_items, n_bits=n_bits, n_hashes=n_hashes)


def _bloom_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_11)
    cases = [
        Case(args=(1_000, 10_000, 7), label="n_items=1000, n_bits=10000, n_hashes=7"),
        Case(args=(1_000, 10_000, 1), label="n_items=1000, n_bits=10000, n_hashes=1"),
        Case(args=(0, 64, 3), label="n_items=0, n_bits=64, n_hashes=3"),  # empty: never
        Case(args=(10**9, 8 * 10**9, 5), label="n_items=1e9, n_bits=8e9, n_hashes=5"),
    ]
    for _ in range(10):
        n = int(rng.integers(1_000, 100_000))
        bpi = float(rng.uniform(1.0, 20.0))
        k = int(rng.integers(1, 15))
        m = round(n * bpi)
        cases.append(Case(args=(n, m, k), label=f"n_items={n}, n_bits={m}, n_hashes={k}"))
    return cases


_BLOOM_MISTAKES = (
    Mistake(
        implementation=lambda n, m, k: 1 - math.exp(-k * n / m),
        message="this is the chance that one given bit is set; a false positive needs all k of "
        "the new key's bits set, so raise it to the power k",
    ),
    Mistake(
        implementation=lambda n, m, k: (1 - math.exp(-n / m)) ** k,
        message="each of the n keys sets k bits, so k n bits are thrown at the m slots: the "
        "fraction still zero is e^(-k n / m), not e^(-n / m)",
    ),
    Mistake(
        implementation=lambda n, m, k: min(1.0, k * n / m) ** k,
        message="k n / m is the first-order (small fill) approximation of the filled fraction; "
        "it overshoots badly once the filter is half full: use 1 - e^(-k n / m)",
    ),
    Mistake(
        implementation=lambda n, m, k: math.exp(-k * n / m) ** k,
        message="e^(-k n / m) is the fraction of bits still zero; a collision needs the bits "
        "to be set, 1 - e^(-k n / m)",
    ),
)


def check_bloom_false_positive_rate(fn: Any) -> Feedback:
    """Check ``fn(n_items, n_bits, n_hashes)``: the chance (a probability) that a fresh key is
    reported seen by a Bloom filter of m bits holding n keys with k hashes each.

    >>> import math
    >>> print(check_bloom_false_positive_rate(lambda n, m, k: (1 - math.exp(-k * n / m)) ** k))
    PASS data-ex-bloom (<lambda>): all 14 cases match the reference (relative tolerance 0.002)
    """
    return check_function(
        fn,
        exercise="data-ex-bloom",
        reference=_fpr,
        cases=_bloom_cases(),
        mistakes=_BLOOM_MISTAKES,
        factors=common_factors(quantity="probability"),
        rtol=EXACT_FORM_RTOL,
        atol=1e-15,
    )


# ---------------------------------------------------------------------------------------------
# data-ex-vocab-flop: FLOP per byte = t (2 N_body + 2 V d)


def _flop_per_byte(
    tokens_per_byte: float, n_body_params: float, vocab_size: int, d_model: int
) -> float:
    parts = vocab.flop_per_byte(
        tokens_per_byte=tokens_per_byte,
        n_body_params=n_body_params,
        vocab_size=vocab_size,
        d_model=d_model,
    )
    return parts["body"] + parts["logits"]


def _vocab_cases() -> list[Case]:
    rng = np.random.default_rng(20_02_12)
    l8 = specs.model("llama3_8b")  # Llama 3's vocabulary and width
    v, d = l8.vocab_size, l8.d_model
    cases = [
        Case(args=(0.25, 7.0e9, v, d), label=f"t=0.25, N_body=7e9, V={v}, d={d}"),
        Case(args=(1.0, 1e6, 256, 128), label="t=1 (bytes only), N_body=1e6, V=256, d=128"),
    ]
    for _ in range(10):
        t = round(float(rng.uniform(0.15, 1.0)), 3)
        d = int(rng.choice([64, 128, 512, 1024, 4096]))
        n = float(12 * int(rng.integers(1, 33)) * d * d)
        v = int(rng.integers(256, 200_000))
        cases.append(Case(args=(t, n, v, d), label=f"t={t}, N_body={n:.4g}, V={v}, d={d}"))
    return cases


_VOCAB_MISTAKES = (
    Mistake(
        implementation=lambda t, n, v, d: 2 * n * t,
        message="the output head is missing: every token multiplies its d-vector by the V x d "
        "unembedding, 2 V d FLOP forward, on top of the body's 2 N_body",
    ),
    Mistake(
        implementation=lambda t, n, v, d: t * (2 * n + v * d),
        message="the logits matmul is V d multiply-adds, 2 V d FLOP, not V d",
    ),
    Mistake(
        implementation=lambda t, n, v, d: t * 6 * (n + v * d),
        message="6 N is a training step's FLOP (forward and backward); the exercise asks for the "
        "forward pass, 2 FLOP per parameter multiplied",
    ),
    Mistake(
        implementation=lambda t, n, v, d: 2 * (n + v * d),
        message="this is per token; a byte of text is t tokens, so multiply by tokens per byte",
    ),
    Mistake(
        implementation=lambda t, n, v, d: 2 * (n + v * d) / t,
        message="dividing by tokens per byte gives FLOP per token squared over bytes; a byte "
        "costs t tokens' worth, so multiply",
    ),
)


def check_forward_flop_per_byte(fn: Any) -> Feedback:
    """Check ``fn(tokens_per_byte, n_body_params, vocab_size, d_model)``: forward FLOP per byte
    of text, t (2 N_body + 2 V d).

    >>> print(check_forward_flop_per_byte(lambda t, n, v, d: 2 * t * (n + v * d)))
    PASS data-ex-vocab-flop (<lambda>): all 12 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="data-ex-vocab-flop",
        reference=_flop_per_byte,
        cases=_vocab_cases(),
        mistakes=_VOCAB_MISTAKES,
        factors=common_factors(quantity="FLOP"),
    )
