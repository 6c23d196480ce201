"""The tour's limit figures: one roof per bandwidth, unit-labelled axes, and clear errors."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots


def test_ceilings_draw_one_roof_per_bandwidth_and_label_units():
    fig = plots.plot_ceilings(1e15, {"fast": 1e13, "slow": 1e12}, kernels={"k": 50.0})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["fast (ridge 100)", "slow (ridge 1,000)"]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_power_clock_figure_has_two_labelled_panels():
    f = np.linspace(1e9, 2e9, 5)
    fig = plots.plot_power_clock(f, {"load": f / 1e9 * 500}, power_cap_w=700.0,
                                 marks_hz={"peak": 1.83e9}, caps_w=[500.0, 700.0],
                                 share_curves={"x = 3": [0.8, 0.9]})
    assert len(fig.axes) == 2
    assert_units_in_labels(fig)
    plt.close(fig)


def test_empty_inputs_are_rejected():
    with pytest.raises(ValueError, match="roofs"):
        plots.plot_ceilings(1e15, {})
    with pytest.raises(ValueError, match="curves"):
        plots.plot_power_clock([1e9], {}, power_cap_w=700.0, marks_hz={}, caps_w=[1.0],
                               share_curves={})
