"""The layout-search figure: one point per layout that fits, the usable-HBM line."""

import matplotlib.pyplot as plt
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots, predict


def test_one_point_per_layout_and_the_usable_hbm_line():
    plans = predict.plan_training("llama3_8b", "h100_sxm", n_chips=16, seq_len=4096,
                                  global_batch_tokens=2**20)
    mem = [p.step.memory_per_chip_bytes for p in plans]
    fig = plots.plot_layout_search({"16 chips": (mem, [p.mfu for p in plans])},
                                   usable_bytes=85.5e9)
    ax = fig.axes[0]
    assert len(ax.lines[0].get_xdata()) == len(plans)
    assert ax.lines[1].get_ydata()[0] == pytest.approx(max(p.mfu for p in plans))  # ringed best
    assert ax.lines[-1].get_xdata()[0] == pytest.approx(85.5)  # GB
    assert_units_in_labels(fig)
    plt.close(fig)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="series: give at least one"):
        plots.plot_layout_search({}, usable_bytes=1e9)
    with pytest.raises(ValueError, match=r"series\['a'\]: memory and mfu"):
        plots.plot_layout_search({"a": ([1e9], [0.4, 0.5])}, usable_bytes=1e9)
