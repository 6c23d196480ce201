"""Every figure in the book, in one style.

Each function takes specs, arrays and labels, accepts an optional ``ax`` so a
chapter can compose panels, computes nothing physical itself (it calls the model
modules) and returns the ``Figure``. The palette is Okabe and Ito's
colour-blind-safe set, with line styles as a second cue; every axis names its
unit; quantities that span decades get log axes.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from . import roofline, units
from .specs import Accelerator

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common
# colour-vision deficiencies. Yellow is last because it is faint on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#000000",
           "#F0E442")
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

STYLE = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.prop_cycle": plt.cycler(color=PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8.5,
    "lines.linewidth": 1.8,
}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Apply the book's matplotlib style inside a ``with`` block."""
    with plt.style.context(STYLE):
        yield


def series_styles(n: int) -> list[dict]:
    """``n`` distinct (colour, line style, marker) combinations, colour varying fastest."""
    combos = itertools.product(LINESTYLES, zip(PALETTE[:7], MARKERS[:7]))
    return [{"color": c, "linestyle": ls, "marker": m}
            for (ls, (c, m)), _ in zip(combos, range(n))]


def si_formatter(unit: str) -> FuncFormatter:
    """Tick labels with SI prefixes, e.g. '1 PFLOP/s'."""
    def fmt(x: float, _pos: int) -> str:
        if x <= 0:
            return ""
        for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if x >= scale:
                return f"{x / scale:g} {prefix}{unit}"
        return f"{x:g} {unit}"
    return FuncFormatter(fmt)


def _new_axes(ax: plt.Axes | None) -> tuple[plt.Figure, plt.Axes]:
    if ax is not None:
        return ax.figure, ax
    return plt.subplots()


def plot_roofline(accs: Sequence[Accelerator], kernels: Mapping[str, float] | None = None,
                  *, dtype: str = "bf16", intensity_range: tuple[float, float] = (0.1, 1e4),
                  ax: plt.Axes | None = None) -> plt.Figure:
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
        fig = ax.figure
        x = np.logspace(np.log10(lo), np.log10(hi), 400)
        for acc, sty in zip(accs, series_styles(len(accs))):
            y = roofline.attainable_flop_per_s(acc, x, dtype)
            ridge = roofline.ridge_point(acc, dtype)
            ax.plot(x, y, color=sty["color"], linestyle=sty["linestyle"],
                    label=f"{acc.name} (ridge {ridge:.0f} FLOP/B)")
            ax.plot([ridge], [acc.peak_flop_per_s(dtype)], marker="|", markersize=10,
                    color=sty["color"])
            for (label, intensity), marker in zip((kernels or {}).items(), MARKERS):
                ax.plot([intensity], [roofline.attainable_flop_per_s(acc, intensity, dtype)],
                        marker=marker, color=sty["color"], markersize=6, linestyle="none")
        for (label, intensity), marker in zip((kernels or {}).items(), MARKERS):
            ax.axvline(intensity, color="0.4", linewidth=0.8, linestyle=":")
            # Label at the foot of the guide, on whichever side has room.
            right_half = np.log(intensity / lo) > 0.6 * np.log(hi / lo)
            ax.annotate(f"{label}\n({intensity:,.0f} FLOP/B)", (intensity, 0.03),
                        xycoords=("data", "axes fraction"), xytext=(-4 if right_half else 4, 0),
                        textcoords="offset points", ha="right" if right_half else "left",
                        va="bottom", fontsize=8, color="0.25")
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


def plot_ridge_points(accs: Sequence[Accelerator], *, dtypes: Sequence[str] = ("bf16", "fp8"),
                      ax: plt.Axes | None = None) -> plt.Figure:
    """Dot plot of each accelerator's ridge point (FLOP/byte) per dtype, on a log axis.

    Dots rather than bars, because a bar's length on a log axis means nothing. A missing
    dot means the chip has no native matrix math at that dtype.
    """
    if not accs:
        raise ValueError("accs must name at least one accelerator")
    with style():
        if ax is None:
            fig, ax = plt.subplots(figsize=(STYLE["figure.figsize"][0], 1.2 + 0.3 * len(accs)))
        fig = ax.figure
        y = np.arange(len(accs))
        for dtype, color, marker in zip(dtypes, PALETTE, MARKERS):
            ridges = [_ridge_or_nan(acc, dtype) for acc in accs]
            ax.plot(ridges, y, linestyle="none", marker=marker, color=color, markersize=7,
                    label=dtype.upper())
        ax.set_yticks(y, [a.name.split(" (")[0] for a in accs])
        ax.set_ylim(len(accs) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(
            lambda x, _pos: f"{x:g}" if str(int(round(x)))[0] in "25" else ""))
        ax.set_xlabel("ridge point: dense peak / HBM bandwidth (FLOP/byte)")
        ax.legend(loc="lower right")
        fig.tight_layout()
    return fig


def _ridge_or_nan(acc: Accelerator, dtype: str) -> float:
    try:
        return roofline.ridge_point(acc, dtype)
    except ValueError:
        return float("nan")
