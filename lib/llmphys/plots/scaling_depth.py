"""Figures for chapter 5's later sections: the batch size against training compute, and
downstream accuracy against loss.

Home: chapters/05_scaling_laws.ipynb, section "The critical batch size revisited".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def plot_downstream_fit(panels: Sequence[Mapping]) -> plt.Figure:
    """One panel per mapping, side by side: a downstream metric against loss (nats per token).

    Each mapping has ``title``, ``ylabel``, ``fitted`` and ``held_out`` (each a pair of arrays
    loss, metric: the runs a law was fitted on, as open markers, and the larger runs it was
    asked to predict, as filled ones) and ``curves`` (label -> (loss grid, metric)). The loss
    axis runs from high to low, so better models lie to the right."""
    with style():
        fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels), 3.6))
        for ax, panel in zip(np.atleast_1d(axes), panels, strict=True):
            x, y = panel["fitted"]
            ax.plot(
                x, y, "o", mfc="none", color="0.45", markersize=4, label="fitted runs (<= 0.4B)"
            )
            x, y = panel["held_out"]
            ax.plot(x, y, "*", color=PALETTE[6], markersize=9, label="held-out runs (1.4B, 6.9B)")
            for i, (label, (lx, ly)) in enumerate(panel["curves"].items()):
                ax.plot(
                    lx, ly, color=PALETTE[i], linestyle=LINESTYLES[i % len(LINESTYLES)], label=label
                )
            ax.invert_xaxis()
            ax.set_title(panel["title"], fontsize=9)
            ax.set_xlabel("loss on C4 validation (nats per token)")
            ax.set_ylabel(panel["ylabel"])
            ax.legend(fontsize=7)
        fig.tight_layout()
    return fig


def plot_moe_breakeven(
    sparsity: np.ndarray,
    memory_fractions: Mapping[str, np.ndarray],
    throughput_ratio: np.ndarray,
    throughput_multipliers: np.ndarray,
) -> plt.Figure:
    """Two panels. Left, log-x: the effective size an MoE needs, as a fraction of its total
    parameters, to match the dense model holding the same memory on the same FLOP, against
    sparsity N_tot / N_act, one line per memory budget. Right: the multiplier N_eff / N_act an
    MoE training at a fraction of the dense model's speed needs to match it in the same time."""
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 3.6))
        for i, (label, frac) in enumerate(memory_fractions.items()):
            left.plot(sparsity, frac, color=PALETTE[i], linestyle=LINESTYLES[i % 4], label=label)
        left.set_xscale("log", base=2)
        left.set_ylim(0, 1.05)
        left.set_xlabel("sparsity N_tot / N_act (ratio)")
        left.set_ylabel("N_eff / N_tot needed (fraction)")
        left.set_title("same memory, same FLOP", fontsize=9)
        left.legend(fontsize=7)
        right.plot(throughput_ratio, throughput_multipliers, color=PALETTE[0])
        right.invert_xaxis()
        right.set_xlabel("MoE training speed / dense (ratio)")
        right.set_ylabel("N_eff / N_act needed (ratio)")
        right.set_title("same active size, same wall-clock", fontsize=9)
        fig.tight_layout()
    return fig
