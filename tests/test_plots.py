"""Every plot function returns a Figure whose axes carry a unit in their labels."""

import matplotlib.pyplot as plt
import pytest

from llmphys import plots, specs
from plot_checks import assert_units_in_labels



def test_plot_roofline_returns_a_labelled_log_log_figure():
    accs = [specs.accelerator(k) for k in ("a100_sxm", "h100_sxm", "b200")]
    fig = plots.plot_roofline(accs, {"decode": 1.0, "train GEMM": 5000.0})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.get_legend().get_texts()) == 3
    assert_units_in_labels(fig)
    plt.close(fig)


def test_plot_ridge_points_leaves_a_gap_where_a_dtype_is_missing():
    import numpy as np
    accs = [specs.accelerator(k) for k in ("a100_sxm", "h100_sxm")]
    fig = plots.plot_ridge_points(accs)
    bf16, fp8 = fig.axes[0].lines
    assert np.all(np.isfinite(bf16.get_xdata()))
    assert np.isnan(fp8.get_xdata()[0]) and fp8.get_xdata()[1] > 500  # A100 has no FP8
    assert_units_in_labels(fig)
    plt.close(fig)


def test_plots_draw_into_a_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    out = plots.plot_roofline([specs.accelerator("h200")], ax=b)
    assert out is fig and b.lines and not a.lines
    plt.close(fig)


def test_palette_styles_are_distinct():
    styles = plots.series_styles(12)
    assert len({(s["color"], s["linestyle"]) for s in styles}) == 12


def test_empty_accelerator_list_is_rejected():
    with pytest.raises(ValueError, match="accs"):
        plots.plot_roofline([])
