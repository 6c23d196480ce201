"""Failures, checkpoints and goodput: Daly's published cases, Llama 3, a Monte-Carlo check."""

import numpy as np
import pytest

from llmphys import predict, reliability, specs, units
from llmphys.studies import memory_wall


@pytest.mark.parametrize("mtbf_h, expected_min", [(24, 117), (6, 57), (0.25, 9.1)])
def test_daly_interval_reproduces_his_figures_3_to_5(mtbf_h, expected_min):
    # Daly 2006, figs. 3-5: delta = 5 min; the paper quotes tau_opt to 2-3 significant figures.
    tau = reliability.daly_interval_s(300.0, mtbf_h * units.HOUR) / units.MINUTE
    assert tau == pytest.approx(expected_min, abs=0.5 if expected_min > 10 else 0.05)


def test_young_is_the_first_order_limit_of_daly():
    d, m = 10.0, 1e7
    assert reliability.daly_interval_s(d, m) == pytest.approx(
        reliability.young_interval_s(d, m), rel=2e-3)
    assert reliability.daly_interval_s(100.0, 40.0) == 40.0  # delta >= 2M: checkpoint every M


def test_llama3_interruptions_are_one_every_three_hours():
    case = specs.scenario("llama3_405b_interruptions")
    assert case.n_unexpected + case.n_planned == 466  # the paper's total
    assert case.duration_s == 54 * units.DAY  # its 54-day snapshot
    n_gpus = predict.training_runs()[case.run].n_chips
    job = reliability.job_mtbf_s(n_gpus, gpu_mtbf_s=memory_wall.gpu_mtbf_s(case))
    assert job / units.HOUR == pytest.approx(54 * 24 / 419)  # N cancels: T / k
    assert 3.0 < job / units.HOUR < 3.2


def test_monte_carlo_agrees_with_daly_closed_form():
    # 20,000 segments: the estimator's relative standard error is below 0.3% here; allow 1%.
    kw = dict(checkpoint_s=60.0, restart_s=600.0, mtbf_s=3 * units.HOUR)
    rng = np.random.default_rng(7)
    for tau in (600.0, 1800.0, 5400.0):
        sim = reliability.simulate_goodput(rng, n_segments=20_000, interval_s=tau, **kw)
        assert sim == pytest.approx(reliability.goodput(interval_s=tau, **kw), rel=0.01)


def test_daly_interval_maximises_goodput():
    kw = dict(checkpoint_s=60.0, restart_s=600.0, mtbf_s=3 * units.HOUR)
    best = reliability.daly_interval_s(60.0, 3 * units.HOUR)
    g = reliability.goodput(interval_s=best, **kw)
    for factor in (0.5, 0.8, 1.25, 2.0):
        assert reliability.goodput(interval_s=factor * best, **kw) < g


def test_no_failures_means_no_waste():
    t = reliability.expected_wall_time_s(1e5, interval_s=1e3, checkpoint_s=0.0, restart_s=0.0,
                                         mtbf_s=1e15)
    assert t == pytest.approx(1e5, rel=1e-9)


def test_checkpoint_bandwidth_is_state_over_time():
    assert reliability.checkpoint_bytes_per_s(1e9, checkpoint_s=14.0) == pytest.approx(1e9)
    assert reliability.checkpoint_bytes_per_s(1e9, checkpoint_s=16.0,
                                              bytes_per_param=16.0) == pytest.approx(1e9)


def test_checkpoint_saves_no_gradients():
    # Mixed-precision Adam: BF16 weights 2 + FP32 master 4 + two FP32 moments 8 = 14 bytes,
    # 12 without the BF16 copy (ZeRO, Rajbhandari et al. 2020, sec. 3.1: K = 12 of the 16).
    assert reliability.checkpoint_bytes_per_param() == 14.0
    assert reliability.checkpoint_bytes_per_param(save_weights=False) == 12.0
    assert reliability.checkpoint_bytes_per_param(optimizer="sgd") == 6.0
    # Llama 3.1 405B (405,853,388,800 parameters): 4.87 to 5.68 TB, not 16 B/param's 6.49 TB.
    n = 405_853_388_800
    lo, hi = (n * reliability.checkpoint_bytes_per_param(save_weights=w) / 1e12
              for w in (False, True))
    assert (round(lo, 2), round(hi, 2)) == (4.87, 5.68)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="optimizer"):
        reliability.checkpoint_bytes_per_param(optimizer="lion9")
    with pytest.raises(ValueError, match="mtbf_s"):
        reliability.young_interval_s(60.0, 0.0)
    with pytest.raises(ValueError, match="checkpoint_s"):
        reliability.expected_wall_time_s(1.0, interval_s=1.0, checkpoint_s=-1.0, restart_s=0.0,
                                         mtbf_s=1.0)


def test_optimal_goodput_falls_with_job_size():
    kw = dict(gpu_mtbf_s=5 * units.YEAR, checkpoint_s=60.0, restart_s=600.0)
    g = reliability.optimal_goodput(np.array([1024, 16_384, 131_072]), **kw)
    assert np.all(np.diff(g) < 0) and g[0] > 0.95
    assert reliability.optimal_goodput(1024, **kw) == pytest.approx(g[0])
