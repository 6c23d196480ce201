"""Figures for chapter 5's later sections: the batch size against training compute.

Home: chapters/05_scaling_laws.ipynb, section "The critical batch size revisited".
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from ._style import LINESTYLES, MARKERS, PALETTE, new_axes, style


def plot_batch_vs_compute(
    train_flop: np.ndarray,
    laws: Mapping[str, np.ndarray],
    runs: Mapping[str, tuple[float, float, float]],
    *,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-log: batch in tokens against training FLOP. ``laws`` maps a label to the batch each
    law gives at ``train_flop`` (lines); ``runs`` maps a run's name to (FLOP, final batch,
    batch at the start of its ramp) in tokens: a marker at the final batch and, where the
    batch ramps, a thin vertical segment down to its start."""
    with style():
        fig, ax = new_axes(ax)
        for i, (label, batch) in enumerate(laws.items()):
            ax.plot(
                train_flop,
                batch,
                color=PALETTE[i],
                linestyle=LINESTYLES[i % len(LINESTYLES)],
                label=label,
            )
        for j, (name, (flop, final, start)) in enumerate(runs.items()):
            colour = PALETTE[(len(laws) + j) % len(PALETTE)]
            if start != final:
                ax.plot([flop, flop], [start, final], color=colour, linewidth=1)
            ax.plot(
                flop,
                final,
                marker=MARKERS[j % len(MARKERS)],
                color=colour,
                linestyle="",
                label=name,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training compute C (FLOP)")
        ax.set_ylabel("batch size (tokens per step)")
        ax.legend(fontsize=7.5, loc="upper left")
        fig.tight_layout()
    return fig
