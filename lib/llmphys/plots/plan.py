"""The layout search's figure: every layout that fits, MFU against memory per chip.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import PercentFormatter

from .. import units
from ._style import MARKERS, PALETTE, new_axes, style


def plot_layout_search(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    usable_bytes: float,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """One point per layout: memory per chip (x, GB) against predicted MFU (y), one marker
    per entry of ``series`` (label -> (memory_per_chip_bytes, mfu)); the dashed line is the
    HBM a layout may use, and each series' fastest layout is ringed."""
    if not series:
        raise ValueError("series: give at least one (memory_per_chip_bytes, mfu) pair")
    units.check_positive("usable_bytes", usable_bytes)
    with style():
        fig, ax = new_axes(ax, figsize=(6.0, 4.2))
        for i, (label, (mem, mfu)) in enumerate(series.items()):
            x, y = np.asarray(mem, dtype=float) / units.GB, np.asarray(mfu, dtype=float)
            if len(x) != len(y) or len(x) == 0:
                raise ValueError(
                    f"series[{label!r}]: memory and mfu need one equal, non-zero length"
                )
            colour, marker = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
            ax.plot(x, y, linestyle="none", marker=marker, markersize=3, alpha=0.45,
                    color=colour, label=f"{label} ({len(x):,} layouts)")  # fmt: skip
            k = int(np.argmax(y))
            ax.plot(x[k], y[k], marker="o", markersize=11, markerfacecolor="none",
                    markeredgecolor=colour, markeredgewidth=1.6, linestyle="none")  # fmt: skip
        ax.axvline(usable_bytes / units.GB, color="0.3", linestyle="--", linewidth=1.0,
                   label="usable HBM per chip")  # fmt: skip
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("memory per chip (GB, 1e9 bytes)")
        ax.set_ylabel("predicted MFU (PaLM's count, %)")
        ax.legend(loc="lower left", fontsize=7.5)
        fig.tight_layout()
    return fig
