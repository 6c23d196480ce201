"""Every plot function returns a Figure whose axes carry a unit in their labels."""

import matplotlib.pyplot as plt
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots, specs


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


def test_plot_ridge_points_labels_several_distinct_ticks_and_keeps_the_legend_off_the_dots():
    # Issue 32 item 10: the figure showed only two tick labels and its legend sat on TPU v6e.
    import numpy as np
    accs = sorted(specs.accelerators().values(), key=lambda a: (a.launch_year, a.key))
    fig = plots.plot_ridge_points(accs)
    ax = fig.axes[0]
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    minor = [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]
    assert len(labels) >= 4 and len(set(labels)) == len(labels) and not minor
    box = ax.get_legend().get_window_extent()
    for line in ax.lines:
        pts = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        inside = ((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1)
                  & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1))
        assert not inside.any()
    plt.close(fig)
