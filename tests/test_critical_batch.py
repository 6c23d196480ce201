import numpy as np
import pytest

from llmphys import critical_batch as cb


def test_steps_and_examples_obey_mccandlishs_hyperbola():
    # (S/S_min - 1)(E/E_min - 1) = 1 at every batch size (eq. 2.11).
    b = np.logspace(0, 6, 50)
    s = cb.steps(b, min_steps=1.0, critical_batch=1e3)
    e = cb.examples(b, min_examples=1.0, critical_batch=1e3)
    assert np.allclose((s - 1) * (e - 1), 1.0)


def test_at_the_critical_batch_both_costs_double():
    assert cb.steps(500.0, min_steps=7.0, critical_batch=500.0) == 14.0
    assert cb.examples(500.0, min_examples=7.0, critical_batch=500.0) == 14.0


def test_smaller_batches_never_need_more_examples():
    # "Smaller is always better for convergence" holds per example, not per step.
    b = np.logspace(0, 6, 50)
    assert np.all(np.diff(cb.examples(b, min_examples=1.0, critical_batch=1e3)) > 0)
    assert np.all(np.diff(cb.steps(b, min_steps=1.0, critical_batch=1e3)) < 0)


def test_simple_noise_scale_recovers_trace_sigma_over_g_squared(rng):
    # Gradients G + noise with covariance diag(sigma^2): B = sum(sigma^2) / |G|^2 = 4.0 here.
    g = np.array([1.0, 0.0, 0.0, 0.0])
    sigma = np.array([1.0, 1.0, 1.0, 1.0])
    samples = g + sigma * rng.standard_normal((200_000, 4))
    assert cb.simple_noise_scale(samples) == pytest.approx(4.0, rel=0.02)


def test_kaplan_critical_batch_grows_as_loss_falls():
    # Kaplan eq. (1.4): ~2e8 / L^(1/0.21); about 1-2M tokens near L = 3 nats.
    assert 1e6 < cb.kaplan_critical_batch_tokens(3.0) < 2e6
    assert cb.kaplan_critical_batch_tokens(2.0) > cb.kaplan_critical_batch_tokens(3.0)


def test_bad_batch_is_rejected():
    with pytest.raises(ValueError, match="batch_size"):
        cb.steps(0.0, min_steps=1.0, critical_batch=1.0)
    with pytest.raises(ValueError, match="per_example_grads"):
        cb.simple_noise_scale(np.ones(3))
