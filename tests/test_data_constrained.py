import numpy as np
import pytest

from llmphys import data_constrained as dc


def test_constants_are_muennighoffs():
    # Paper: R*_D = 15.4, R*_N = 5.3 (sec. 3); the repository gives more digits.
    c = dc.repetition_constants()
    assert c.r_d_star == pytest.approx(15.4, abs=0.05)
    assert c.r_n_star == pytest.approx(5.3, abs=0.05)


def test_loss_reproduces_the_values_pinned_in_their_readme():
    # github.com/huggingface/datablations README: the two models of their Figure 1 (right).
    assert dc.loss(n_params=6.34e9, n_tokens=242e9, n_unique_tokens=25e9) == pytest.approx(
        2.2256440889984477, rel=1e-12)
    assert dc.loss(n_params=8.67e9, n_tokens=178e9, n_unique_tokens=25e9) == pytest.approx(
        2.2269634075087867, rel=1e-12)


def test_four_epochs_are_worth_almost_four_fresh_ones():
    # "Up to 4 epochs ... negligible changes to loss": 4 passes = 3.73 fresh epochs (93%).
    assert dc.effective_tokens(n_unique_tokens=1.0, n_tokens=4.0) == pytest.approx(3.726, abs=1e-3)
    assert dc.repetition_penalty(n_params=8.7e9, n_tokens=178e9, epochs=4) < 0.02  # nats


def test_effective_data_is_the_sum_of_epoch_values():
    total = sum(dc.epoch_value(k) for k in range(1, 11))
    assert total == pytest.approx(dc.effective_tokens(n_unique_tokens=1.0, n_tokens=10.0))


def test_effective_data_saturates_at_one_plus_r_star():
    c = dc.repetition_constants()
    assert dc.effective_tokens(n_unique_tokens=1.0, n_tokens=1e6) == pytest.approx(1 + c.r_d_star)
    assert dc.epoch_value(1) == 1.0 and dc.epoch_value(100) < 0.01


def test_fresh_data_has_no_penalty():
    assert dc.repetition_penalty(n_params=1e9, n_tokens=20e9, epochs=1) == 0.0


def test_more_unique_tokens_than_tokens_is_rejected():
    with pytest.raises(ValueError, match="n_unique_tokens"):
        dc.effective_tokens(n_unique_tokens=2.0, n_tokens=1.0)
    with pytest.raises(ValueError, match="epochs"):
        dc.repetition_penalty(n_params=1e9, n_tokens=1e10, epochs=0.5)
    with pytest.raises(ValueError, match="k"):
        dc.epoch_value(np.array([0.0]))
