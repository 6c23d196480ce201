"""Hardware figures: rooflines and ridge points (the hardware tour, the memory-wall chapter).

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter

from .. import roofline
from ..specs import Accelerator
from ._style import MARKERS, PALETTE, STYLE, figure_of, series_styles, si_formatter, style


def plot_roofline(
    accs: Sequence[Accelerator],
    kernels: Mapping[str, float] | None = None,
    *,
    dtype: str = "bf16",
    intensity_range: tuple[float, float] = (0.1, 1e4),
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Log-log roofline of each accelerator, with named kernels marked at their intensity.

    ``kernels`` maps a label to an arithmetic intensity in FLOP/byte; each is drawn
    as a vertical guide with a marker where it meets every chip's roof.
    """
    if not accs:
        raise ValueError("accs must name at least one accelerator")
    lo, hi = intensity_range
    if not 0 < lo < hi:
        raise ValueError(f"intensity_range must satisfy 0 < low < high, got {intensity_range!r}")
    with style():
        if ax is None:
            fig, ax = plt.subplots(figsize=(STYLE["figure.figsize"][0], 4.2 + 0.15 * len(accs)))
        fig = figure_of(ax)
        x = np.logspace(np.log10(lo), np.log10(hi), 400)
        for acc, sty in zip(accs, series_styles(len(accs)), strict=True):
            y = roofline.attainable_flop_per_s(acc, x, dtype)
            ridge = roofline.ridge_point(acc, dtype)
            ax.plot(
                x,
                y,
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"{acc.name} (ridge {ridge:.0f} FLOP/B)",
            )
            ax.plot(
                [ridge], [acc.peak_flop_per_s(dtype)], marker="|", markersize=10, color=sty["color"]
            )
            for (_label, intensity), marker in zip((kernels or {}).items(), MARKERS, strict=False):
                ax.plot(
                    [intensity],
                    [float(roofline.attainable_flop_per_s(acc, intensity, dtype))],
                    marker=marker,
                    color=sty["color"],
                    markersize=6,
                    linestyle="none",
                )
        for (label, intensity), _marker in zip((kernels or {}).items(), MARKERS, strict=False):
            ax.axvline(intensity, color="0.4", linewidth=0.8, linestyle=":")
            # Label at the foot of the guide, on whichever side has room.
            right_half = np.log(intensity / lo) > 0.6 * np.log(hi / lo)
            ax.annotate(
                f"{label}\n({intensity:,.0f} FLOP/B)",
                (intensity, 0.03),
                xycoords=("data", "axes fraction"),
                xytext=(-4 if right_half else 4, 0),
                textcoords="offset points",
                ha="right" if right_half else "left",
                va="bottom",
                fontsize=8,
                color="0.25",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel(f"attainable {dtype.upper()} throughput (FLOP/s)")
        ax.yaxis.set_major_formatter(si_formatter("FLOP/s"))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8)
        fig.tight_layout()
    return fig


_RIDGE_TICKS = (50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000)
"""Labelled ridge-point ticks (FLOP/byte): 1-1.5-2-3-5-7 per decade."""


def plot_ridge_points(
    accs: Sequence[Accelerator],
    *,
    dtypes: Sequence[str] = ("bf16", "fp8"),
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Dot plot of each accelerator's ridge point (FLOP/byte) per dtype, on a log axis.

    Dots rather than bars, because a bar's length on a log axis means nothing. A missing
    dot means the chip has no native matrix math at that dtype.
    """
    if not accs:
        raise ValueError("accs must name at least one accelerator")
    with style():
        if ax is None:
            fig, ax = plt.subplots(figsize=(STYLE["figure.figsize"][0], 1.2 + 0.3 * len(accs)))
        fig = figure_of(ax)
        y = np.arange(len(accs))
        for dtype, color, marker in zip(dtypes, PALETTE, MARKERS, strict=False):
            ridges = [_ridge_or_nan(acc, dtype) for acc in accs]
            ax.plot(
                ridges,
                y,
                linestyle="none",
                marker=marker,
                color=color,
                markersize=7,
                label=dtype.upper(),
            )
        ax.set_yticks(y, [a.name.split(" (")[0] for a in accs])
        ax.set_ylim(len(accs) - 0.5, -0.5)
        ax.set_xscale("log")
        # One labelled tick per "nice" value in the data's range, no minor labels: a log axis
        # spanning less than a decade otherwise gets one or two labels (or a minor label on
        # top of a major one).
        ridges_all = [_ridge_or_nan(acc, dtype) for dtype in dtypes for acc in accs]
        finite = [r for r in ridges_all if np.isfinite(r)]
        lo, hi = min(finite) / 1.15, max(finite) * 1.15
        ax.set_xlim(lo, hi)
        ax.set_xticks([t for t in _RIDGE_TICKS if lo <= t <= hi])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("ridge point: dense peak / HBM bandwidth (FLOP/byte)")
        # The legend sits above the axes, where no chip's dot can be.
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(dtypes), frameon=False)
        fig.tight_layout()
    return fig


def _ridge_or_nan(acc: Accelerator, dtype: str) -> float:
    try:
        return roofline.ridge_point(acc, dtype)
    except ValueError:
        return float("nan")
