"""Figure of tile and wave quantisation: a GEMM's predicted efficiency against its width.

Home: chapters/hardware_tour.ipynb, section "Tensor-core tiles and wave quantisation".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ._style import series_styles, style


def plot_wave_efficiency(
    widths: Sequence[int],
    curves: Mapping[str, Sequence[float]],
    *,
    marks: Sequence[int] = (),
) -> plt.Figure:
    """Predicted efficiency (useful share of SM-tile slots) against the GEMM width n, one step
    line per tile shape; ``marks`` draws vertical guides at chosen widths."""
    if not curves:
        raise ValueError("curves must hold at least one tile shape")
    n = np.asarray(widths, dtype=float)
    with style():
        fig, ax = plt.subplots(figsize=(7.2, 3.6))
        for (label, eff), sty in zip(curves.items(), series_styles(len(curves)), strict=False):
            ax.step(
                n,
                100 * np.asarray(eff),
                where="post",
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=label,
            )
        for x in marks:
            ax.axvline(x, color="0.35", linestyle=":", linewidth=1.0)
            ax.annotate(
                f"n = {x:,}",
                (x, 0.02),
                xycoords=("data", "axes fraction"),
                rotation=90,
                ha="right",
                va="bottom",
                fontsize="small",
            )
        ax.set_xlabel("GEMM width n (output columns)")
        ax.set_ylabel("predicted efficiency (% of peak)")
        ax.legend(loc="lower right")
        fig.tight_layout()
    return fig
