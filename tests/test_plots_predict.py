"""The predicted-against-measured figure: one point per run, the y = x line and the band."""

import matplotlib.pyplot as plt
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots, predict


def test_one_marker_per_run_with_the_diagonal_and_band():
    rows = predict.residuals()
    fig = plots.plot_predicted_vs_measured(
        [r["measured_mfu"] for r in rows], [r["predicted_mfu"] for r in rows],
        groups=[r["accelerator"] for r in rows], calibration=[r["calibration"] for r in rows],
        labels=[r["run"] for r in rows])
    ax = fig.axes[0]
    points = sum(len(line.get_xdata()) for line in ax.lines[1:])
    assert points == len(rows)  # every run drawn, the first line is y = x
    assert list(ax.lines[0].get_xdata()) == list(ax.lines[0].get_ydata())
    assert len(ax.collections) == 1  # the +/-15% band
    assert_units_in_labels(fig)
    plt.close(fig)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="one equal"):
        plots.plot_predicted_vs_measured([0.4], [0.4, 0.5], groups=["a"], calibration=[False])
    with pytest.raises(ValueError, match="band must lie in"):
        plots.plot_predicted_vs_measured([0.4], [0.4], groups=["a"], calibration=[False],
                                         band=1.5)


def test_serving_figure_draws_every_published_deployment_on_log_axes():
    from llmphys import predict
    # every deployment that publishes a throughput (Poisson-rate rows publish latency only)
    rows = [r for r in predict.serving_residuals() if r["measured"] is not None]
    fig = plots.plot_serving_predicted_vs_measured(
        [r["measured"] for r in rows], [r["predicted"] for r in rows],
        groups=[r["accelerator"] for r in rows], calibration=[r["calibration"] for r in rows])
    ax = fig.axes[0]
    assert sum(len(line.get_xdata()) for line in ax.lines[1:]) == len(rows)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.collections) == 1  # the +/-25% band
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="must be positive"):
        plots.plot_serving_predicted_vs_measured([0.0], [1.0], groups=["a"],
                                                 calibration=[False])


def test_latency_under_load_figure_draws_each_percentile_on_a_log_axis_with_the_rates():
    rates = [2.0, 6.0, 10.0]
    series = {"TPOT p50": [0.008, 0.009, 0.012], "TTFT p90": [0.09, 0.1, 0.3]}
    fig = plots.plot_latency_under_load(rates, series, sla_rate_per_s=7.0, max_rate_per_s=12.0,
                                        tpot_target_s=0.02)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert [list(line.get_ydata()) for line in ax.lines[:2]] == [
        [8.0, 9.0, 12.0], [90.0, 100.0, 300.0]]  # milliseconds
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="one value"):
        plots.plot_latency_under_load(rates, {"x": [1.0]}, sla_rate_per_s=1.0,
                                      max_rate_per_s=2.0, tpot_target_s=0.02)


def test_out_of_source_figure_draws_every_run_in_each_panel():
    rows = predict.loso_residuals()
    fig = plots.plot_out_of_source_errors(rows)
    scatter, by_size, by_dtype, by_chip = fig.axes
    n = len(rows)
    assert sum(len(line.get_xdata()) for line in scatter.lines[1:]) == n  # line 0 is y = x
    for ax in (by_size, by_dtype, by_chip):
        assert sum(len(line.get_xdata()) for line in ax.lines[:-1]) == n  # last is y = 0
    assert len(scatter.get_legend().get_texts()) == len(predict.source_groups()) + 1
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="rows: empty"):
        plots.plot_out_of_source_errors([])


def test_gemm_efficiency_figure_has_one_curve_per_shape():
    from llmphys import specs
    e, h100 = predict.default_efficiencies(), specs.accelerator("h100_sxm")
    tokens = [2.0**k for k in range(4, 15)]
    curves = {f"{w}": predict.gemm_efficiency_curve(tokens, acc=h100, dtype="bf16", eff=e,
                                                   width=w) for w in (1024, 4096, 16384)}
    fig = plots.plot_gemm_efficiency(tokens, curves)
    assert len(fig.axes[0].lines) == 3
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="has 2 points"):
        plots.plot_gemm_efficiency(tokens, {"x": [0.1, 0.2]})
