"""Second-pass architecture figures: they draw what they are given, with units on every axis."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import kv_paging, plots, specs


def test_kv_memory_bars_stack_to_100_and_markers_sit_at_the_published_percent(h100):
    s = kv_paging.request_snapshot(np.random.default_rng(0), n_requests=50)
    shares = {"max": kv_paging.shares(kv_paging.contiguous_slots(s)),
              "paged": kv_paging.shares(kv_paging.paged_slots(s))}
    fig = plots.plot_kv_memory(shares, {"paged": 0.963}, specs.model("llama3_8b"), h100,
                               bytes_by_format={"BF16": 2.0, "INT4": 0.5625},
                               contexts=np.array([1024, 8192]))
    left, right = fig.axes
    assert len(left.patches) == 3 * 2 and len(right.lines) == 2
    widths = {}
    for p in left.patches:
        widths[round(p.get_y(), 3)] = widths.get(round(p.get_y(), 3), 0) + p.get_width()
    assert all(w == pytest.approx(100.0) for w in widths.values())
    marker = next(ln for ln in left.lines if ln.get_marker() == "D")
    assert marker.get_xdata()[0] == pytest.approx(96.3)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_kv_memory_rejects_empty_inputs(h100):
    with pytest.raises(ValueError, match="slot_shares"):
        plots.plot_kv_memory({}, {}, specs.model("llama3_8b"), h100, bytes_by_format={"x": 1.0},
                             contexts=np.array([1024]))


def test_moe_drops_draws_one_line_per_router_plus_the_closed_form():
    f = np.array([0.5, 1.0, 2.0])
    fig = plots.plot_moe_drops({"a": np.array([0.5, 0.1, 0.0]), "b": np.array([0.6, 0.3, 0.1])}, f,
                               closed_form=np.array([0.5, 0.05, 0.0]))
    ax = fig.axes[0]
    assert len(ax.lines) == 3 and ax.lines[0].get_ydata()[0] == pytest.approx(50.0)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_mixer_costs_has_two_log_log_panels_one_line_per_mixer():
    from llmphys import mixer_costs
    ctx = np.array([1024.0, 8192.0])
    fig = plots.plot_mixer_costs(mixer_costs.mixer_study(specs.model("mixtral_8x7b"), contexts=ctx),
                                 ctx, model_label="Mixtral")
    assert len(fig.axes) == 2
    assert all(len(a.lines) == 5 and a.get_yscale() == "log" for a in fig.axes)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_block_savings_marks_one_point_per_model():
    ms = [specs.model(k) for k in ("llama3_8b", "gpt3_175b")]
    fig = plots.plot_block_savings(ms)
    assert len(fig.axes[0].lines) == 2 and fig.axes[0].get_yscale() == "log"
    assert_units_in_labels(fig)
    plt.close(fig)


def test_nonmatmul_time_bars_put_bytes_above_flop(h100):
    ms = [specs.model(k) for k in ("llama3_8b", "llama3_70b")]
    fig = plots.plot_nonmatmul_time(ms, h100, context_tokens=8192)
    widths = [p.get_width() for p in fig.axes[0].patches]
    assert len(widths) == 4 and min(widths[:2]) > max(widths[2:])  # bytes bars first
    assert_units_in_labels(fig)
    plt.close(fig)
