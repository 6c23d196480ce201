"""The book-wide figure style: palette, rcParams, axis formatters, axes creation.

Okabe and Ito's colour-blind-safe palette, with line styles and markers as a
second cue. Every figure function in this package draws inside ``style()``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

from .. import units

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


def new_axes(ax: plt.Axes | None,
             figsize: tuple[float, float] | None = None) -> tuple[plt.Figure, plt.Axes]:
    """The given axes and their figure, or a new figure (of ``figsize``, if given)."""
    if ax is not None:
        return ax.figure, ax
    return plt.subplots(figsize=figsize) if figsize else plt.subplots()
