"""Batch size against compute: DeepSeek LLM's fit reproduces its own runs' printed batches."""

import numpy as np
import pytest

from llmphys import batch_scaling as bs
from llmphys import critical_batch
from llmphys.predict import runs

FIT = bs.batch_fit()
CHOICES = bs.batch_choices()


def test_deepseek_fit_constants_are_the_printed_ones():
    # DeepSeek LLM (arXiv:2401.02954) eq. (1), as printed to four digits.
    assert (FIT.batch_coeff, FIT.batch_exponent) == (0.2920, 0.3271)
    assert (FIT.lr_coeff, FIT.lr_exponent) == (0.3118, -0.1250)


@pytest.mark.parametrize("key", ["deepseek_llm_7b", "deepseek_llm_67b"])
def test_the_fit_reproduces_deepseek_llm_table_2_batches_and_learning_rates(key):
    # Table 2 sets the 7B and 67B runs' batch and learning rate from eq. (1), rounded to
    # batch sizes of whole sequences that suit the hardware: within 10% of the fit.
    c = CHOICES[key]
    flop = bs.choice_train_flop(c)
    assert bs.optimal_batch_tokens(FIT, train_flop=flop) == pytest.approx(
        bs.choice_batch_tokens(c), rel=0.10)
    assert bs.optimal_learning_rate(FIT, train_flop=flop) == pytest.approx(
        c.learning_rate, rel=0.05)


def test_deepseek_non_embedding_flop_per_token_is_6n_plus_attention():
    # M = 72 n d^2 + 6 n d l: with N = 12 n d^2 non-embedding parameters the first term is 6N.
    n, d, l_seq = 30, 4096, 4096
    m = bs.non_embedding_flop_per_token(n_layers=n, d_model=d, seq_len=l_seq)
    assert m == 6 * 12 * n * d**2 + 6 * n * d * l_seq
    with pytest.raises(ValueError, match="d_model"):
        bs.non_embedding_flop_per_token(n_layers=30, d_model=0, seq_len=4096)


def test_llama3_405b_compute_matches_the_papers_3_8e25_flop():
    # Dubey et al. 2024, sec. 3.3.1: "3.8 x 10^25 FLOPs"; 6 N D with N = 405B, D = 15.6T.
    assert bs.choice_train_flop(CHOICES["llama31_405b"]) == pytest.approx(3.8e25, rel=0.01)


def test_llama3_batch_agrees_with_the_training_runs_registry():
    # The same 16M-token batch is stored independently for Table 4's layout.
    run = runs.training_runs()["llama3_405b_8k"]
    assert bs.choice_batch_tokens(CHOICES["llama31_405b"]) == run.global_batch_tokens
    assert bs.choice_batch_tokens(CHOICES["llama31_405b"], start=True) == 4 * 2**20


def test_deepseek_v3_batch_ramps_from_3072_to_15360_sequences():
    c = CHOICES["deepseek_v3"]
    assert bs.choice_batch_tokens(c) / bs.choice_batch_tokens(c, start=True) == 5.0
    assert bs.choice_batch_tokens(c) == 15360 * 4096


def test_a_tenfold_budget_doubles_deepseeks_batch_and_kaplans_by_less():
    # Closed forms: 10^0.3271 = 2.12 and Kaplan's 10^(0.050 / 0.21) = 1.73.
    assert bs.batch_growth_per_decade(FIT.batch_exponent) == pytest.approx(2.123, rel=1e-3)
    ratio = (critical_batch.kaplan_critical_batch_at_compute(1e25)
             / critical_batch.kaplan_critical_batch_at_compute(1e24))
    assert ratio == pytest.approx(10 ** (0.050 / 0.21), rel=1e-9)


def test_kaplan_and_deepseek_agree_within_a_factor_of_two_near_1e24_flop():
    # Two independent fits (WebText2 2020, DeepSeek's corpus 2024): same order of magnitude
    # at the compute where both were used.
    k = critical_batch.kaplan_critical_batch_at_compute(1e24)
    d = bs.optimal_batch_tokens(FIT, train_flop=1e24)
    assert 0.5 < k / d < 2.0


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="train_flop"):
        bs.optimal_batch_tokens(FIT, train_flop=-1.0)
    with pytest.raises(ValueError, match="train_flop"):
        critical_batch.kaplan_critical_batch_at_compute(np.array([0.0]))
    with pytest.raises(KeyError, match="deepseek2024"):
        bs.batch_fit("nope")
