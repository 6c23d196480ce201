"""The foundations chapter's figures: labelled axes with units, log axes where tokens span
decades, composition into given axes, and clear errors."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots


def test_loss_curves_use_a_log_token_axis_and_draw_every_reference():
    x = np.array([1e3, 1e4, 1e5])
    fig = plots.plot_loss_curves({"model": (x, [3.0, 2.0, 1.6]), "trigram": (x, [2.5, 1.7, 1.5])},
                                 references={"floor": 1.48, "uniform": 3.0})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "model", "trigram", "floor (1.48)", "uniform (3.00)"]
    assert sorted(line.get_ydata()[0] for line in ax.lines[2:]) == [1.48, 3.0]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_residual_stream_figure_has_one_row_per_write():
    norms = {"embed": 1.0, "attn0": 2.0, "mlp0": 5.0}
    ablation = {"none": 1.6, "embed": 4.0, "attn0": 3.5, "mlp0": 3.0}
    fig = plots.plot_residual_stream(norms, ablation, floor_bits=1.48)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == list(norms)
    assert list(right.lines[0].get_xdata()) == [4.0, 3.5, 3.0]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_code_lengths_label_each_bar_with_its_value():
    fig = plots.plot_code_lengths({"zlib": 2.3, "tiny model": 1.55}, floor_bits=1.48)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["2.30", "1.55"]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_figures_draw_into_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    out = plots.plot_code_lengths({"zlib": 2.3}, floor_bits=1.5, ax=b)
    assert out is fig and b.patches and not a.patches
    plt.close(fig)


@pytest.mark.parametrize("call,match", [
    (lambda: plots.plot_loss_curves({}), "curves"),
    (lambda: plots.plot_loss_curves({"a": ([0, 1], [1, 2])}), "tokens"),
    (lambda: plots.plot_residual_stream({"embed": 1.0}, {"embed": 2.0}, floor_bits=1), "none"),
    (lambda: plots.plot_code_lengths({}, floor_bits=1.0), "bits_per_byte"),
])
def test_bad_inputs_are_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()
    plt.close("all")


def test_schedules_figure_draws_one_lr_and_one_loss_line_per_run():
    runs = {name: {"lr": np.linspace(0.1, 1.0, 10), "eval_tokens_seen": [0, 100, 200],
                   "eval_bits": [3.0, 2.0, 1.7]} for name in ("cosine", "wsd")}
    fig = plots.plot_schedules(runs, floor_bits=1.48)
    left, right = fig.axes
    assert len(left.lines) == 2 and len(right.lines) == 3  # two runs and the floor
    assert right.lines[-1].get_ydata()[0] == 1.48
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="runs"):
        plots.plot_schedules({})
