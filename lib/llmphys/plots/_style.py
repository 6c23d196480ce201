"""The book-wide figure style: palette, rcParams, axis formatters, axes creation.

Okabe and Ito's colour-blind-safe palette, with line styles and markers as a
second cue. Every figure function in this package draws inside ``style()``.

Figures are read on phones: a 6.4-inch figure is shown about 360 CSS px wide at 390 px,
on a screen of 2-3 device pixels per CSS pixel. Importing this module therefore makes a
notebook's inline backend save PNGs at :data:`SAVE_DPI` (1.5 times matplotlib's 100: 2.7 device
pixels per CSS pixel at 390 px, and a page of eight figures stays under 3 MB), while
``figure.dpi`` stays 100 so that a figure's size in inches, its layout and its
``<Figure size 640x380 ...>`` text are unchanged; and the text sizes are large enough that
tick labels stay about 8 CSS px tall at that width.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import SubFigure
from matplotlib.ticker import FuncFormatter

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common
# colour-vision deficiencies. Yellow is last because it is faint on white.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#000000", "#F0E442")
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

# Pixels per inch of a saved figure: 2 device pixels per CSS pixel for a figure shown at
# its 100-dpi size, which is what a phone's (2-3x) and a laptop's "retina" (2x) screen draw.
SAVE_DPI = 150

STYLE: dict[str, Any] = {  # matplotlib rcParams: values of several types
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 100,
    "savefig.dpi": SAVE_DPI,
    "font.size": 11,
    "axes.titlesize": 11.5,
    "axes.labelsize": 11,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "axes.prop_cycle": plt.cycler(color=PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 9.5,
    "lines.linewidth": 1.8,
}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Apply the book's matplotlib style inside a ``with`` block."""
    with plt.style.context(STYLE):
        yield


def series_styles(n: int) -> list[dict]:
    """``n`` distinct (colour, line style, marker) combinations, colour varying fastest."""
    combos = itertools.product(LINESTYLES, zip(PALETTE[:7], MARKERS[:7], strict=True))
    return [
        {"color": c, "linestyle": ls, "marker": m}
        for (ls, (c, m)), _ in zip(combos, range(n), strict=False)
    ]


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


def figure_of(ax: plt.Axes) -> plt.Figure:
    """The top-level figure that holds ``ax`` (its own figure unless ``ax`` is in a subfigure).

    >>> fig, ax = plt.subplots()
    >>> figure_of(ax) is fig
    True
    >>> plt.close(fig)
    """
    fig = ax.figure  # (get_figure(root=True) says the same but needs matplotlib 3.10)
    return fig.figure if isinstance(fig, SubFigure) else fig  # a subfigure's .figure is the root


def new_axes(
    ax: plt.Axes | None, figsize: tuple[float, float] | None = None
) -> tuple[plt.Figure, plt.Axes]:
    """The given axes and their figure, or a new figure (of ``figsize``, if given)."""
    if ax is not None:
        return figure_of(ax), ax
    return plt.subplots(figsize=figsize) if figsize else plt.subplots()


def use_high_dpi_inline(dpi: float = SAVE_DPI) -> bool:
    """Make IPython's inline backend save PNGs at ``dpi`` pixels per inch; True if it did.

    The inline backend renders each figure with ``print_figure(dpi=fig.dpi)`` (100) unless
    ``InlineBackend.print_figure_kwargs`` says otherwise; this sets ``dpi`` there, keeping
    ``bbox_inches="tight"``, so the PNG has ``dpi / figure.dpi`` times the pixels of the
    100-dpi figure and the same layout. Outside IPython (scripts, tests) it does nothing.

    >>> SAVE_DPI / STYLE["figure.dpi"]   # pixels of the saved PNG per pixel of the figure
    1.5
    """
    if not dpi > 0:
        raise ValueError(f"dpi must be a positive number of pixels per inch, got {dpi!r}")
    try:
        from IPython import get_ipython
        from matplotlib_inline.config import InlineBackend
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    cfg = InlineBackend.instance(parent=shell)
    # Assigning a new dict (not updating in place) fires the trait observer that
    # re-registers the PNG formatter with these keyword arguments.
    kwargs: dict[str, Any] = {**cfg.print_figure_kwargs, "dpi": dpi}  # traitlets infers str values
    cfg.print_figure_kwargs = kwargs
    return True


use_high_dpi_inline()
