"""Figures of decoding: what each strategy's text costs in likelihood and buys in diversity.

Home: chapters/01_foundations.ipynb, section "Sampling and decoding".
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt

from ._style import series_styles, style


def plot_decoding_tradeoff(
    points: Mapping[str, tuple[float, float]],
    *,
    floor_bits: float | None = None,
    reference: tuple[str, float, float] | None = None,
) -> plt.Figure:
    """Each strategy's generated text as a point: distinct n-gram share (x) against the
    source's bits per token on it (y).

    ``points`` maps a strategy to (distinct share, bits per token); ``reference`` is a
    (label, x, y) point drawn as a black star (text sampled from the source itself);
    ``floor_bits`` draws the source's entropy rate as a dotted line.
    """
    if not points:
        raise ValueError("points must hold at least one strategy")
    with style():
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for (label, (x, y)), sty in zip(points.items(), series_styles(len(points)), strict=False):
            ax.plot(
                x,
                y,
                linestyle="none",
                marker=sty["marker"],
                color=sty["color"],
                markersize=7,
                label=label,
            )
        if reference is not None:
            ax.plot(
                reference[1],
                reference[2],
                linestyle="none",
                marker="*",
                color="black",
                markersize=11,
                label=reference[0],
            )
        if floor_bits is not None:
            ax.axhline(
                floor_bits,
                color="0.35",
                linestyle=":",
                linewidth=1.0,
                label=f"entropy rate ({floor_bits:.2f})",
            )
        ax.set_xlabel("distinct 4-grams / all 4-grams in the generated text (fraction)")
        ax.set_ylabel("source's code length (bits per token)")
        ax.legend(loc="upper left", fontsize="small")
        fig.tight_layout()
    return fig
