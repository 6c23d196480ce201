"""Figures for the data chapter's learned, PII/toxicity, substring-dedup and Bloom-filter
sections: a classifier's precision-recall curve, a word-list filter's threshold sweep, the cost
of three dedup methods against corpus size, and a Bloom filter's false-positive rate against
its bits per key.

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


def plot_bloom_fpr(
    bits_per_item: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    measured_bits: np.ndarray,
    measured_rate: np.ndarray,
    measured_se: np.ndarray,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-y: a Bloom filter's false-positive rate against bits per key, one closed-form curve
    per hash setting, the measured rates as points with binomial standard errors."""
    with style():
        fig, ax = new_axes(ax)
        for (label, y), sty in zip(curves.items(), series_styles(len(curves)), strict=False):
            ax.plot(bits_per_item, y, color=sty["color"], linestyle=sty["linestyle"], label=label)
        ax.errorbar(
            measured_bits,
            measured_rate,
            yerr=measured_se,
            linestyle="none",
            marker=MARKERS[0],
            color=PALETTE[6],
            markersize=5,
            capsize=3,
            label="measured, optimal k (± 1 s.e.)",
        )
        ax.set_yscale("log")
        ax.set_xlabel("memory (bits per key)")
        ax.set_ylabel("false-positive rate (fraction, log scale)")
        ax.legend(fontsize=8)
        fig.tight_layout()
    return fig
