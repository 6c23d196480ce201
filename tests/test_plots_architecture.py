"""Architecture figures: they draw what they are given, with units on every axis."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import kv_cache, moe, plots, specs


def _variants():
    m = specs.model("llama3_70b")
    return {v: kv_cache.with_attention(m, v) for v in ("mha", "gqa", "mla")}


def test_kv_cache_bars_are_log_scaled_with_one_bar_per_variant():
    fig = plots.plot_kv_cache_by_variant(_variants(), [specs.accelerator("h100_sxm")],
                                         context_tokens=128_000)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.patches) == 3
    assert_units_in_labels(fig)
    plt.close(fig)


def test_decode_ceilings_have_two_panels_and_one_line_per_variant(h100):
    fig = plots.plot_decode_ceilings(_variants(), h100, contexts=np.array([1024, 8192, 65536]))
    assert len(fig.axes) == 2 and all(len(a.lines) == 3 for a in fig.axes)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_attention_ratio_crosses_one_for_llama3_70b():
    fig = plots.plot_attention_vs_weights([specs.model("llama3_70b")],
                                          contexts=np.array([1024, 1_048_576]))
    ratio = fig.axes[0].lines[0].get_ydata()
    assert ratio[0] < 1 < ratio[-1]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_router_balance_figure(rng):
    runs = {"none": moe.balance_router(rng, method="none", n_steps=3, n_tokens=64)}
    fig = plots.plot_router_balance(runs)
    assert len(fig.axes) == 2
    assert_units_in_labels(fig)
    plt.close(fig)


def test_empty_inputs_are_rejected(h100):
    with pytest.raises(ValueError, match="models"):
        plots.plot_kv_cache_by_variant({}, [h100], context_tokens=8)


def test_rope_scaling_figure_has_a_log_wavelength_panel_and_a_score_panel():
    from llmphys import rope_scaling as rs
    freqs = {m: rs.scaled_inv_freq(16, base=1e4, method=m, factor=4.0, original_context_tokens=64)
             for m in ("none", "pi")}
    fig = plots.plot_rope_scaling(freqs, trained_context_tokens=64, distances=np.arange(1.0, 256.0))
    left, right = fig.axes
    assert left.get_yscale() == "log" and len(left.lines) == 3 and len(right.lines) == 3
    assert right.lines[0].get_ydata()[0] < 1.0  # distance 1: already turned
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="freqs"):
        plots.plot_rope_scaling({}, trained_context_tokens=64, distances=np.arange(3.0))


def test_norm_placement_figure_draws_both_placements_and_the_sqrt_reference():
    from llmphys import norm_placement
    study = norm_placement.depth_study((2, 4), seeds=(0,))
    fig = plots.plot_norm_placement(study)
    left, right = fig.axes
    assert len(left.lines) == 2 and len(left.lines[0].get_ydata()) == 4  # the 4-layer stack
    ref = right.lines[1].get_ydata()
    assert ref[1] / ref[0] == pytest.approx(np.sqrt(2.0), rel=1e-12)
    assert left.get_yscale() == "log" and right.get_xscale() == "log"
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="study"):
        plots.plot_norm_placement({"pre": {}})
