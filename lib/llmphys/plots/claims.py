"""The claims ledger at a glance: how far each of the series' figures is from ours.

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ._style import PALETTE, new_axes, style

VERDICT_STYLE = {  # colour and marker per verdict (short names, as in the ledger table)
    "exact": (PALETTE[2], "o"),
    "assumption": (PALETTE[0], "s"),
    "approx.": (PALETTE[3], "D"),
    "disputed": (PALETTE[1], "X"),
    "by construction": ("0.55", "^"),  # grey: a check no data can move is no evidence
}


def plot_claim_ratios(
    points: list[tuple[str, str, float, str]],
    *,
    band: float = 0.25,
    label_beyond: float = 1.5,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """One row per source document; each point is one stated figure, at our value / theirs.

    ``points`` holds (document label, claim id, ratio, verdict short name). The shaded band is
    the ledger's "approximately" tolerance (``band``, relative); points further than
    ``label_beyond`` times off in either direction are labelled with their claim id, once per
    claim (at its point furthest from 1).
    """
    if not points:
        raise ValueError("points must hold at least one (document, id, ratio, verdict) tuple")
    unknown = {p[3] for p in points} - set(VERDICT_STYLE)
    if unknown:
        raise ValueError(f"unknown verdict {sorted(unknown)}; allowed: {sorted(VERDICT_STYLE)}")
    docs = list(dict.fromkeys(p[0] for p in points))
    with style():
        fig, ax = new_axes(ax, figsize=(7.0, 1.2 + 1.1 * len(docs)))
        ax.axvspan(1 - band, 1 + band, color="0.9", zorder=0, label=f"within {band:.0%}")
        ax.axvline(1.0, color="0.4", lw=0.8, zorder=1)
        for verdict, (colour, marker) in VERDICT_STYLE.items():
            mine = [p for p in points if p[3] == verdict]
            if not mine:
                continue
            y = [docs.index(p[0]) + _jitter(p[1]) for p in mine]
            ax.scatter(
                [p[2] for p in mine],
                y,
                color=colour,
                marker=marker,
                s=30,
                zorder=3,
                label=verdict,
                edgecolors="white",
                linewidths=0.4,
            )
        extreme: dict[str, tuple[str, float]] = {}  # label each claim once, at its worst point
        for doc, cid, r, _ in points:
            if (r > label_beyond or r < 1 / label_beyond) and (
                cid not in extreme or abs(np.log(r)) > abs(np.log(extreme[cid][1]))
            ):
                extreme[cid] = (doc, r)
        for cid, (doc, r) in extreme.items():
            ax.annotate(
                cid,
                (r, docs.index(doc) + _jitter(cid)),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=7,
            )
        ax.set_xscale("log")
        lo = min(p[2] for p in points)
        hi = max(p[2] for p in points)
        ax.set_xlim(min(0.3, lo / 1.5), max(3.0, hi * 1.5))
        ax.set_yticks(range(len(docs)), docs)
        ax.set_ylim(-0.6, len(docs) - 0.4)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("our value / the source's figure (ratio, 1 = agreement)")
        ax.set_ylabel("source document (letter)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        fig.tight_layout()
    return fig


def _jitter(claim_id: str) -> float:
    """A fixed vertical offset per claim id, so overlapping points separate reproducibly."""
    digits = int("".join(ch for ch in claim_id if ch.isdigit()) or 0)
    return float(np.interp((digits * 0.618) % 1.0, [0, 1], [-0.28, 0.28]))
