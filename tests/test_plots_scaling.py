"""Scaling figures: labelled axes with units, log axes where quantities span decades."""

import matplotlib.pyplot as plt
import numpy as np
from plot_checks import assert_units_in_labels

from llmphys import plots, scaling_fit, scaling_laws


def test_every_scaling_figure_has_units_and_returns_a_figure():
    law = scaling_laws.parametric_law("besiroglu2024")
    runs = scaling_fit.load_chinchilla_runs()
    grid = {"n_params": np.array([96.0, 96.0, 160.0, 160.0]),
            "n_tokens": np.array([1e4, 1e5, 1e4, 1e5]), "loss": np.array([3.5, 3.45, 3.46, 3.4])}
    figs = [plots.plot_isoflop_curves(law, [1e20, 1e22]),
            plots.plot_fit_residuals(runs, {"Epoch": law}),
            plots.plot_inference_optimal(law, n_params=13e9,
                                         inference_tokens=np.logspace(9, 13, 5)),
            plots.plot_epoch_value(),
            plots.plot_emergence(np.logspace(7, 12, 20)),
            plots.plot_scaling_lab(grid, law, entropy_nats=1.0),
            plots.plot_batch_tradeoff(np.logspace(1, 5, 20), b_crit=1e3)]
    for fig in figs:
        assert isinstance(fig, plt.Figure)
        assert_units_in_labels(fig)
        plt.close(fig)


def test_isoflop_curves_are_log_x_and_mark_the_optimum():
    law = scaling_laws.parametric_law("hoffmann2022")
    fig = plots.plot_isoflop_curves(law, [1e21])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    marker = next(ln for ln in ax.lines if ln.get_marker() == "o")
    opt = scaling_laws.compute_optimal(law, train_flop=1e21)
    assert marker.get_xdata()[0] == opt["n_params"]
    plt.close(fig)


def test_scaling_plots_draw_into_a_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    out = plots.plot_epoch_value(ax=b)
    assert out is fig and b.lines and not a.lines
    plt.close(fig)


def test_best_of_n_figure_has_units_and_a_log_sample_axis():
    n = np.array([1, 2, 4, 8])
    fig = plots.plot_best_of_n(n, {"coverage": np.array([0.1, 0.2, 0.3, 0.4]),
                                   "verifier": np.array([0.1, 0.15, 0.18, 0.2])},
                               n_problems=100, closed_form={"coverage": np.array([0.1] * 4)},
                               limits={"verifier": 0.2})
    assert_units_in_labels(fig)
    assert fig.axes[0].get_xscale() == "log"
    plt.close(fig)


def test_batch_against_compute_is_log_log_with_a_ramp_segment_per_ramping_run():
    c = np.logspace(20, 26, 7)
    fig = plots.plot_batch_vs_compute(
        c, {"fit": 0.292 * c**0.3271},
        {"ramped": (1e24, 6e7, 1.2e7), "constant": (1e23, 9e6, 9e6)})
    ax = fig.axes[0]
    assert_units_in_labels(fig)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # one law line, one segment for the ramping run, one marker per run
    segments = [ln for ln in ax.lines if len(ln.get_xdata()) == 2]
    assert len(segments) == 1 and list(segments[0].get_ydata()) == [1.2e7, 6e7]
    assert sum(ln.get_marker() not in ("None", "") and ln.get_linestyle() == "None"
               for ln in ax.lines) == 2
    plt.close(fig)


def test_downstream_figure_has_one_panel_per_mapping_with_loss_decreasing_to_the_right():
    x = np.linspace(3.0, 6.0, 5)
    panel = {"title": "t", "ylabel": "average top-1 error (fraction)", "fitted": (x, 1 - x / 10),
             "held_out": (x[:2], 1 - x[:2] / 10), "curves": {"law": (x, 1 - x / 10)}}
    fig = plots.plot_downstream_fit([panel, panel])
    assert len(fig.axes) == 2
    assert_units_in_labels(fig)
    assert all(ax.xaxis_inverted() for ax in fig.axes)
    plt.close(fig)


def test_moe_breakeven_figure_has_two_labelled_panels():
    s = np.array([1.0, 2.0, 4.0])
    fig = plots.plot_moe_breakeven(s, {"a": np.array([1.0, 0.8, 0.6])},
                                   np.array([1.0, 0.7, 0.5]), np.array([1.0, 1.5, 2.5]))
    assert len(fig.axes) == 2
    assert_units_in_labels(fig)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[1].xaxis_inverted()
    plt.close(fig)
