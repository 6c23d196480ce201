"""Figures of chapter 6's KV offload tiers (cost of a returning conversation against its reuse
interval) and of the cost of a decode token against its context.

Home: chapters/06_economics.ipynb, section "KV offload tiers priced".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ._style import new_axes, series_styles, style


def plot_offload_tiers(
    rows: Mapping[str, Mapping[str, float]],
    bands: Mapping[str, tuple[float, float]],
    *,
    reuse_interval_s: np.ndarray,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """USD to serve a returning conversation from each tier, r + h tau, against the reuse
    interval tau (log-log); ``rows`` from ``kv_offload.node_tiers``, ``bands`` from
    ``kv_offload.tier_bands``. The cheapest tier at each tau is drawn thick."""
    tau = np.asarray(reuse_interval_s, dtype=float)
    with style():
        fig, ax = new_axes(ax)
        for (name, r), sty in zip(rows.items(), series_styles(len(rows)), strict=False):
            cost = r["restore_usd"] + r["hold_usd_per_s"] * tau
            ax.loglog(tau, cost, color=sty["color"], linestyle=sty["linestyle"], linewidth=1.0,
                      label=name)  # fmt: skip
            if name in bands:
                lo, hi = bands[name]
                on = (tau >= lo) & (tau <= hi)
                ax.loglog(tau[on], cost[on], color=sty["color"], linewidth=4.0, alpha=0.5)
        ax.set_xlabel("reuse interval: time until the conversation returns (s)")
        ax.set_ylabel("cost to hold and bring back one cache (USD)")
        ax.legend(loc="upper left", fontsize="small")
        fig.tight_layout()
    return fig


def plot_reasoning_cost(
    context_tokens: Sequence[int],
    usd_per_mtok: Mapping[str, Sequence[float]],
    *,
    marks: Mapping[str, float],
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """USD per million decode tokens against the mean cached context (log x), one line per
    batch setting in ``usd_per_mtok``; vertical lines at the ``marks`` (label -> context)."""
    x = np.asarray(context_tokens, dtype=float)
    with style():
        fig, ax = new_axes(ax)
        for (name, y), sty in zip(
            usd_per_mtok.items(), series_styles(len(usd_per_mtok)), strict=False
        ):
            ax.semilogx(x, y, color=sty["color"], linestyle=sty["linestyle"], marker=sty["marker"],
                        markersize=4, label=name)  # fmt: skip
        for label, t in marks.items():
            ax.axvline(t, color="0.35", linestyle=":", linewidth=1.0)
            ax.annotate(label, (t, 0.97), xycoords=("data", "axes fraction"), rotation=90,
                        va="top", ha="right", fontsize="small")  # fmt: skip
        ax.set_ylim(bottom=0)
        ax.set_xlabel("mean cached context per sequence (tokens)")
        ax.set_ylabel("cost per million decode tokens (USD)")
        ax.legend(loc="center left", fontsize="small")
        fig.tight_layout()
    return fig
