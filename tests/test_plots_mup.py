"""Chapter 1's learning-rate transfer figure: one panel per parametrisation, one line per width,
each width's best rate marked, diverged runs left out, labelled axes."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots

LRS = [2.0**-8, 2.0**-7, 2.0**-6]
BITS = {
    "SP": np.array([[2.5, 2.3, 2.4], [2.2, 2.4, math.inf]]),
    "μP": np.array([[2.5, 2.3, 2.4], [2.4, 2.1, 2.3]]),
}


def test_each_panel_draws_every_width_and_marks_its_best_rate():
    fig = plots.plot_lr_transfer(LRS, [32, 64], BITS, floor_bits=1.5)
    left, right = fig.axes
    assert [ax.get_title() for ax in fig.axes] == ["SP", "μP"]
    assert left.get_xscale() == "log"
    # per width: its line, then its filled best point; then the floor line
    assert list(left.lines[2].get_xdata()) == LRS[:2]  # the diverged run is left out
    assert left.lines[3].get_xdata()[0] == LRS[0] and right.lines[3].get_xdata()[0] == LRS[1]
    assert left.lines[-1].get_ydata()[0] == 1.5
    assert_units_in_labels(fig)
    plt.close(fig)


def test_a_bits_array_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="shape"):
        plots.plot_lr_transfer(LRS, [32], BITS)
