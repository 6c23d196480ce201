"""Memory-wall figures return labelled Figures with the right axes."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots, specs


def test_growth_trends_draw_one_fit_per_metric():
    fig = plots.plot_growth_trends(list(specs.accelerators().values()),
                                   metrics=("peak_bf16", "hbm_bandwidth"))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and len(ax.get_legend().get_texts()) == 2
    assert_units_in_labels(fig)
    plt.close(fig)


def test_measured_roofline_plots_measured_and_predicted_points():
    result = {"peak_flop_per_s": 1e11, "bytes_per_s": 1e10, "ridge": 10.0,
              "points": [{"shape": (1, 64, 64), "intensity": 0.5, "flop_per_s": 4e9,
                          "predicted_flop_per_s": 5e9}]}
    fig = plots.plot_measured_roofline(result)
    assert len(fig.axes[0].lines) == 3 and fig.axes[0].get_xscale() == "log"
    assert_units_in_labels(fig)
    plt.close(fig)


def test_scaling_error_has_one_row_per_scheme():
    fig = plots.plot_scaling_error({"none": {"e4m3": 0.5, "e2m1": 1.0},
                                    "tensor": {"e4m3": 0.02, "e2m1": 0.5}})
    assert len(fig.axes[0].get_yticks()) == 2
    assert_units_in_labels(fig)
    plt.close(fig)


def test_comm_share_and_goodput_use_percent_axes():
    n = np.array([8, 64, 512])
    fig = plots.plot_comm_share(n, {"IB": [0.01, 0.1, 0.4]}, marks={64: "9%"})
    assert fig.axes[0].get_ylim() == (0, 100)
    assert_units_in_labels(fig)
    plt.close(fig)
    fig = plots.plot_goodput(n, {"a": [0.99, 0.95, 0.9]}, simulated={"a": ([8], [0.99])})
    assert len(fig.axes[0].lines) == 2
    assert_units_in_labels(fig)
    plt.close(fig)


def test_empty_inputs_are_rejected():
    with pytest.raises(ValueError, match="shares"):
        plots.plot_comm_share([1, 2], {})
    with pytest.raises(ValueError, match="errors"):
        plots.plot_scaling_error({})
