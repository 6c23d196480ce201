"""Figures for the data chapter's learned, PII/toxicity and substring-dedup sections: a
classifier's precision-recall curve, a word-list filter's threshold sweep, and the cost of
three dedup methods against corpus size.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ._style import MARKERS, PALETTE, new_axes, series_styles, style


def plot_filter_pr(
    precision: np.ndarray,
    recall: np.ndarray,
    points: Mapping[str, tuple[float, float]],
    *,
    iso_f1: float | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """The classifier's precision against recall over thresholds, each named filter as a
    point, and optionally the curve of constant F1 = ``iso_f1`` (a published figure)."""
    with style():
        fig, ax = new_axes(ax)
        ax.plot(recall, precision, color=PALETTE[0], label="classifier, threshold swept")
        styles = zip(points.items(), PALETTE[1:], MARKERS[1:], strict=False)
        for (name, (p, r)), color, marker in styles:
            ax.plot(
                [r], [p], linestyle="none", marker=marker, color=color, markersize=8, label=name
            )
        if iso_f1 is not None:
            rr = np.linspace(iso_f1 / (2 - iso_f1) + 1e-6, 1.0, 200)
            ax.plot(
                rr,
                iso_f1 * rr / (2 * rr - iso_f1),
                color="0.5",
                linestyle=":",
                label=f"F1 = {iso_f1:.2f} (published)",
            )
        ax.set_xlabel("recall of pages worth keeping (fraction)")
        ax.set_ylabel("precision of the pages kept (fraction)")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8, loc="lower left")
        fig.tight_layout()
    return fig


def plot_threshold_sweep(
    min_hits: Sequence[int], curves: Mapping[str, Sequence[float]], *, ax: plt.Axes | None = None
) -> plt.Figure:
    """Rates (flagged pages, fraction) against the minimum number of hits, one line each."""
    with style():
        fig, ax = new_axes(ax)
        for (label, y), sty in zip(curves.items(), series_styles(len(curves)), strict=False):
            ax.plot(list(min_hits), list(y), **sty, label=label)
        ax.set_xticks(list(min_hits))
        ax.set_xlabel("listed words needed to flag a page (count)")
        ax.set_ylabel("pages flagged (fraction)")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=8)
        fig.tight_layout()
    return fig


def plot_dedup_cost(
    n_words: np.ndarray,
    times_s: Mapping[str, np.ndarray],
    exponents: Mapping[str, float],
    *,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-log: seconds against corpus words for each method, its fitted exponent in the legend."""
    with style():
        fig, ax = new_axes(ax)
        for (name, t), sty in zip(times_s.items(), series_styles(len(times_s)), strict=False):
            ax.plot(n_words, t, **sty, label=f"{name} (n^{exponents[name]:.1f})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("corpus size (words, log scale)")
        ax.set_ylabel("wall-clock time (s, log scale)")
        ax.legend(fontsize=8)
        fig.tight_layout()
    return fig
