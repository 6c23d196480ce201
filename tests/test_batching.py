"""The batch schedule: simulation against the closed form, and the finite-seat tail."""

import numpy as np
import pytest

from llmphys import batching


def test_poisson_arrival_count_is_within_four_standard_deviations(rng):
    a = batching.poisson_arrivals_s(rng, rate_per_s=2000.0, horizon_s=5.0)
    assert abs(len(a) - 10_000) < 4 * np.sqrt(10_000)  # Poisson: sd = sqrt(mean)
    assert a.min() >= 0 and a.max() < 5.0 and np.all(np.diff(a) > 0)


def test_simulated_mean_latency_matches_three_halves_of_the_interval(rng):
    # Latency = U + T with U ~ Uniform(0, T): sd T/sqrt(12); 4 standard errors over ~20,000.
    t = 0.02
    r = batching.simulate_schedule(rng, rate_per_s=5000.0, interval_s=t, horizon_s=4.0)
    n = len(r["latency_s"])
    assert r["latency_s"].mean() == pytest.approx(1.5 * t, abs=4 * t / np.sqrt(12 * n))


def test_worst_case_is_twice_the_interval_and_never_exceeded(rng):
    t = 0.02
    r = batching.simulate_schedule(rng, rate_per_s=5000.0, interval_s=t, horizon_s=4.0)
    # With ~20,000 arrivals the largest wait is within T/2000 of T almost surely.
    assert 2 * t - t / 1000 < r["latency_s"].max() <= 2 * t + 1e-12
    assert r["latency_s"].min() >= t - 1e-12


def test_service_shorter_than_the_interval_shifts_the_closed_form(rng):
    r = batching.simulate_schedule(rng, rate_per_s=5000.0, interval_s=0.02, service_s=0.005,
                                   horizon_s=4.0)
    cf = batching.schedule_latency_closed_form(interval_s=0.02, service_s=0.005)
    assert cf == {"mean_s": pytest.approx(0.015), "worst_s": pytest.approx(0.025)}
    assert r["latency_s"].mean() == pytest.approx(cf["mean_s"], rel=0.01)


def test_batch_sizes_are_poisson_with_mean_rate_times_interval(rng):
    r = batching.simulate_schedule(rng, rate_per_s=5000.0, interval_s=0.02, horizon_s=8.0)
    b = r["batch_sizes"]
    # 400 departures of mean 100: standard error of the mean 0.5, of the variance ~7.
    assert b.mean() == pytest.approx(100.0, abs=2.0)
    assert b.var() == pytest.approx(100.0, abs=30.0)
    assert b.sum() == len(r["arrival_s"])


def test_finite_seats_cap_every_train_and_lengthen_the_tail(rng):
    r = batching.simulate_schedule(np.random.default_rng(1), rate_per_s=5000.0, interval_s=0.02,
                                   horizon_s=4.0, seats=105)
    free = batching.simulate_schedule(np.random.default_rng(1), rate_per_s=5000.0,
                                      interval_s=0.02, horizon_s=4.0)
    assert r["batch_sizes"].max() <= 105 and r["batch_sizes"].sum() == len(r["arrival_s"])
    assert r["latency_s"].max() > 0.04 and r["latency_s"].mean() > free["latency_s"].mean()


def test_enough_seats_reproduce_the_unlimited_run_exactly():
    kw = dict(rate_per_s=3000.0, interval_s=0.01, horizon_s=1.0)
    a = batching.simulate_schedule(np.random.default_rng(3), **kw)
    b = batching.simulate_schedule(np.random.default_rng(3), seats=10_000, **kw)
    np.testing.assert_array_equal(a["latency_s"], b["latency_s"])


def test_interval_for_batch_inverts_the_mean_batch():
    assert batching.interval_for_batch_s(rate_per_s=5000.0, batch_size=100) == pytest.approx(0.02)


def test_bad_arguments_are_named(rng):
    with pytest.raises(ValueError, match="interval_s"):
        batching.simulate_schedule(rng, rate_per_s=1.0, interval_s=0.0, horizon_s=1.0)
    with pytest.raises(ValueError, match="seats"):
        batching.simulate_schedule(rng, rate_per_s=1.0, interval_s=0.1, horizon_s=1.0, seats=0)
    with pytest.raises(ValueError, match="rate_per_s"):
        batching.poisson_arrivals_s(rng, rate_per_s=-1.0, horizon_s=1.0)
