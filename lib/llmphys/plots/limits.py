"""Figures of the tour's limits: one roof per memory level or link, and power against clock.

Home: chapters/hardware_tour.ipynb, section "The memory hierarchy as a roofline".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ._style import MARKERS, PALETTE, figure_of, series_styles, si_formatter, style


def plot_ceilings(
    peak_flop_per_s: float,
    roofs: Mapping[str, float],
    kernels: Mapping[str, float] | None = None,
    *,
    x_label: str = "arithmetic intensity (FLOP/byte)",
    intensity_range: tuple[float, float] = (0.1, 1e4),
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-log roofline with one slanted roof per bandwidth in ``roofs`` (label -> bytes/s) under
    one flat peak; ``kernels`` (label -> FLOP/byte) are marked on the lowest roof."""
    if not roofs:
        raise ValueError("roofs must name at least one bandwidth")
    lo, hi = intensity_range
    if not 0 < lo < hi:
        raise ValueError(f"intensity_range must satisfy 0 < low < high, got {intensity_range!r}")
    with style():
        if ax is None:
            fig, ax = plt.subplots(figsize=(7.2, 4.4))
        fig = figure_of(ax)
        x = np.logspace(np.log10(lo), np.log10(hi), 400)
        for (label, bw), sty in zip(roofs.items(), series_styles(len(roofs)), strict=True):
            ridge = peak_flop_per_s / bw
            ax.plot(
                x,
                np.minimum(peak_flop_per_s, bw * x),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"{label} (ridge {ridge:,.0f})",
            )
            ax.plot([ridge], [peak_flop_per_s], marker="|", markersize=10, color=sty["color"])
        slowest = min(roofs.values())
        for (label, i), marker in zip((kernels or {}).items(), MARKERS, strict=False):
            ax.plot(
                [i],
                [min(peak_flop_per_s, slowest * i)],
                marker=marker,
                color="0.2",
                linestyle="none",
                markersize=7,
                label=f"{label} ({i:,.0f})",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(x_label)
        ax.set_ylabel("attainable (FLOP/s)")
        ax.yaxis.set_major_formatter(si_formatter("FLOP/s"))
        ax.set_ylim(
            peak_flop_per_s * lo * min(roofs.values()) / peak_flop_per_s / 3, peak_flop_per_s * 2.5
        )
        ax.legend(loc="lower right", fontsize="small")
        fig.tight_layout()
    return fig


def plot_power_clock(
    clocks_hz: Sequence[float],
    power_curves_w: Mapping[str, Sequence[float]],
    *,
    power_cap_w: float,
    marks_hz: Mapping[str, float],
    caps_w: Sequence[float],
    share_curves: Mapping[str, Sequence[float]],
) -> plt.Figure:
    """Left: board power against SM clock for each load, the cap as a line and the named clocks
    (``marks_hz``) as guides. Right: the share of the dense peak the clock allows against the
    power cap, one curve per model in ``share_curves``."""
    if not power_curves_w or not share_curves:
        raise ValueError("power_curves_w and share_curves must each hold at least one curve")
    f = np.asarray(clocks_hz, dtype=float)
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
        for (label, p), sty in zip(
            power_curves_w.items(), series_styles(len(power_curves_w)), strict=True
        ):
            left.plot(f / 1e6, p, color=sty["color"], linestyle=sty["linestyle"], label=label)
        left.axhline(power_cap_w, color="0.2", linewidth=1.2)
        left.annotate(
            f"cap {power_cap_w:,.0f} W",
            (f[0] / 1e6, power_cap_w),
            xytext=(2, 3),
            textcoords="offset points",
            fontsize="small",
        )
        for label, hz in marks_hz.items():
            left.axvline(hz / 1e6, color="0.45", linestyle=":", linewidth=1.0)
            left.annotate(
                label,
                (hz / 1e6, 0.02),
                xycoords=("data", "axes fraction"),
                rotation=90,
                ha="right",
                va="bottom",
                fontsize="x-small",
            )
        left.set_xlabel("SM clock (MHz)")
        left.set_ylabel("board power (W)")
        left.legend(loc="upper left", fontsize="x-small")
        caps = np.asarray(caps_w, dtype=float)
        for (label, s), color in zip(share_curves.items(), PALETTE, strict=False):
            right.plot(caps, 100 * np.asarray(s), color=color, label=label)
        right.axvline(power_cap_w, color="0.2", linewidth=1.0)
        right.set_xlabel("power cap (W)")
        right.set_ylabel("clock-limited share of dense peak (%)")
        right.legend(loc="lower right", fontsize="small")
        fig.tight_layout()
    return fig
