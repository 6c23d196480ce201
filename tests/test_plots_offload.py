"""Chapter 6's KV offload and reasoning-cost figures: log axes where costs and intervals span
decades, the cheapest band drawn over each tier's line, labelled axes."""

import matplotlib.pyplot as plt
import numpy as np
from plot_checks import assert_units_in_labels

from llmphys import kv_offload, plots

ROWS = {
    "fast": {"restore_usd": 0.0, "hold_usd_per_s": 1e-3},
    "slow": {"restore_usd": 1e-2, "hold_usd_per_s": 1e-6},
    "recompute": {"restore_usd": 1.0, "hold_usd_per_s": 0.0},
}


def test_offload_figure_is_log_log_and_thickens_each_cheapest_band():
    bands = kv_offload.cheapest_bands(
        {k: (r["restore_usd"], r["hold_usd_per_s"]) for k, r in ROWS.items()}
    )
    tau = np.logspace(-2, 8, 41)
    fig = plots.plot_offload_tiers(ROWS, bands, reuse_interval_s=tau)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.lines) == 2 * len(ROWS)  # each tier: its line and its cheapest segment
    thick = ax.lines[1]  # the fast tier's band ends where the slow tier takes over
    assert thick.get_xdata().max() <= bands["fast"][1]
    assert_units_in_labels(fig)
    plt.close(fig)


def test_reasoning_figure_draws_one_line_per_batch_and_one_mark_per_request():
    fig = plots.plot_reasoning_cost(
        [1000, 4000, 16000],
        {"a": [1.0, 1.2, 2.0], "b": [0.5, 0.9, 2.1]},
        marks={"chat": 2250, "reasoning": 9000},
    )
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.texts] == ["chat", "reasoning"]
    assert_units_in_labels(fig)
    plt.close(fig)
