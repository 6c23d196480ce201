"""Figure of learning-rate transfer across widths: final loss against the learning rate, one
line per width, under the standard parametrisation and under muP.

Home: chapters/01_foundations.ipynb, section "Learning-rate transfer across widths".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ._style import series_styles, style


def plot_lr_transfer(
    lrs: Sequence[float],
    widths: Sequence[int],
    bits: Mapping[str, np.ndarray],
    *,
    floor_bits: float | None = None,
) -> plt.Figure:
    """One panel per parametrisation (``bits`` maps a title to a (widths, lrs) array of final
    bits per token); one line per width, its best learning rate marked with a filled point.
    Diverged runs (inf) are left out of their line."""
    if not bits:
        raise ValueError("bits must hold at least one parametrisation")
    x = np.asarray(lrs, dtype=float)
    with style():
        fig, axes = plt.subplots(1, len(bits), figsize=(4.4 * len(bits), 3.7), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, (title, b) in zip(axes, bits.items(), strict=True):
            b = np.asarray(b, dtype=float)
            if b.shape != (len(widths), x.size):
                raise ValueError(f"bits[{title!r}] has shape {b.shape}, expected "
                                 f"({len(widths)}, {x.size})")  # fmt: skip
            for row, d, sty in zip(b, widths, series_styles(len(widths)), strict=False):
                ok = np.isfinite(row)
                ax.semilogx(
                    x[ok], row[ok], color=sty["color"], linestyle=sty["linestyle"],
                    marker=sty["marker"], markerfacecolor="white", label=f"width {d}",
                )  # fmt: skip
                j = int(np.argmin(np.where(ok, row, np.inf)))
                ax.plot(x[j], row[j], marker=sty["marker"], color=sty["color"], markersize=9)
            if floor_bits is not None:
                ax.axhline(floor_bits, color="0.35", linestyle=":", linewidth=1.0)
            ax.set_xscale("log", base=2)
            ax.set_title(title)
            ax.set_xlabel("base Adam learning rate (per step)")
        axes[0].set_ylabel("held-out loss after training (bits per token)")
        axes[0].legend(loc="lower right", fontsize="small")
        fig.tight_layout()
    return fig
