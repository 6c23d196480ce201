"""Figures for chapter 5's test-time compute section: accuracy of best-of-n sampling against
the number of samples, by selection rule, with each rule's closed-form curve or limit.

Home: chapters/05_scaling_laws.ipynb, section "Test-time compute".
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from ._style import new_axes, series_styles, style


def plot_best_of_n(
    n_samples: np.ndarray,
    measured: Mapping[str, np.ndarray],
    *,
    n_problems: int,
    closed_form: Mapping[str, np.ndarray] | None = None,
    limits: Mapping[str, float] | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-x: share of problems solved against samples per problem; measured rules as points
    with binomial standard errors, closed forms as lines, large-n limits as dotted lines, each
    in the colour of the measured series of the same name."""
    closed_form = closed_form or {}
    limits = limits or {}
    with style():
        fig, ax = new_axes(ax)
        for (label, y), sty in zip(measured.items(), series_styles(len(measured)), strict=False):
            se = np.sqrt(y * (1 - y) / n_problems)
            ax.errorbar(
                n_samples,
                y,
                yerr=se,
                color=sty["color"],
                marker=sty["marker"],
                linestyle="none",
                capsize=2,
                markersize=5,
                label=f"{label} (simulated)",
            )
            if label in closed_form:
                ax.plot(
                    n_samples,
                    closed_form[label],
                    color=sty["color"],
                    linestyle="-",
                    label=f"{label} (closed form)",
                )
            if label in limits:
                ax.axhline(limits[label], color=sty["color"], linestyle=":", linewidth=1.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("samples per problem, n (count, log scale)")
        ax.set_ylabel("problems solved (fraction)")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
    return fig
