import math

import pytest

from llmphys.pipeline import mixture


def test_four_epochs_are_worth_93_percent_of_fresh_tokens():
    # Muennighoff et al. 2023, R* = 15.4: D'/D = (1 + 15.4 (1 - e^{-3/15.4})) / 4 = 0.9315.
    assert mixture.effective_tokens(1.0, 4.0) / 4.0 == pytest.approx(0.9315, abs=1e-4)
    assert float(mixture.repeated_token_value(4.0)) == pytest.approx(0.9315, abs=1e-4)


def test_effective_data_limits():
    # One epoch: nothing repeats. Infinite repetition: D' -> U (1 + R*).
    assert mixture.effective_tokens(5.0, 1.0) == 5.0
    assert mixture.effective_tokens(1.0, 1e6) == pytest.approx(1 + mixture.r_star_data())
    assert mixture.effective_tokens(1.0, 0.5) == 0.5


def test_llama1_table_implies_two_to_five_bytes_per_token_in_every_domain():
    # Touvron et al. 2023, table 1: weight x 1.4T / epochs = unique tokens; disk bytes divided
    # by that must look like a BPE tokenizer's bytes per token on raw, partly markup-heavy data.
    w = {d: v[0] for d, v in mixture.LLAMA1_MIXTURE.items()}
    e = {d: v[1] for d, v in mixture.LLAMA1_MIXTURE.items()}
    unique = mixture.unique_tokens_from_epochs(w, e, total_tokens=mixture.LLAMA1_TOTAL_TOKENS)
    assert math.isclose(sum(w.values()), 1.0)
    for d, (_, _, disk) in mixture.LLAMA1_MIXTURE.items():
        assert 2.0 < disk / unique[d] < 5.0, d
    back = mixture.epochs_per_domain(w, unique, total_tokens=mixture.LLAMA1_TOTAL_TOKENS)
    assert back["Wikipedia"] == pytest.approx(2.45)


def test_temperature_weights_interpolate_between_uniform_and_proportional():
    u = {"a": 100.0, "b": 300.0}
    assert mixture.temperature_weights(u, alpha=0.0) == {"a": 0.5, "b": 0.5}
    assert mixture.temperature_weights(u, alpha=1.0)["b"] == pytest.approx(0.75)


def test_two_phase_tokens_add_up_to_the_budget():
    t = mixture.two_phase_tokens(mixture.LLAMA3_MIX, {"general": 0.3, "math_reasoning": 0.4,
                                                      "code": 0.3}, total_tokens=1e12,
                                 anneal_fraction=0.05)
    assert sum(a + b for a, b in t.values()) == pytest.approx(1e12)
    assert t["multilingual"][1] == 0.0


def test_bad_weights_are_rejected():
    with pytest.raises(ValueError, match="weights"):
        mixture.epochs_per_domain({"a": 0.7}, {"a": 1.0}, total_tokens=1.0)
    with pytest.raises(ValueError, match="anneal_fraction"):
        mixture.two_phase_tokens({"a": 1.0}, {"a": 1.0}, total_tokens=1.0, anneal_fraction=2.0)


def test_data_chapter_and_scaling_chapter_use_one_repetition_constant():
    """Chapter 2's mixture arithmetic and chapter 5's data-constrained law agree exactly."""
    from llmphys import data_constrained

    assert mixture.effective_tokens(1.0, 4.0) == data_constrained.effective_tokens(
        n_unique_tokens=1.0, n_tokens=4.0)
    assert float(mixture.repeated_token_value(4.0)) == pytest.approx(
        data_constrained.effective_tokens(n_unique_tokens=1.0, n_tokens=4.0) / 4, rel=1e-12)
