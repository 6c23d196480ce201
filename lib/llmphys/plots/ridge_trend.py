"""Figure of the ridge across chip generations: compute and bandwidth growth, and their ratio.

Home: chapters/hardware_tour.ipynb, section "The BF16 ridge across generations".
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import roofline
from ..specs import Accelerator
from ._style import PALETTE, style


def plot_ridge_generations(accs: Sequence[Accelerator], *, dtype: str = "bf16") -> plt.Figure:
    """Left: dense peak and HBM bandwidth of each chip relative to the first (log scale);
    right: each chip's ridge point (FLOP/byte) at ``dtype``."""
    if len(accs) < 2:
        raise ValueError("accs must hold at least 2 accelerators")
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 3.6))
        x = np.arange(len(accs))
        p = np.array([a.peak_flop_per_s(dtype) for a in accs])
        w = np.array([a.hbm_bytes_per_s for a in accs])
        left.semilogy(
            x, p / p[0], color=PALETTE[0], marker="o", label=f"dense {dtype.upper()} peak"
        )
        left.semilogy(
            x, w / w[0], color=PALETTE[1], marker="s", linestyle="--", label="HBM bandwidth"
        )
        left.set_ylabel(f"relative to the {accs[0].name} (ratio)")
        ridge = [roofline.ridge_point(a, dtype) for a in accs]
        right.bar(x, ridge, color=PALETTE[2], width=0.6)
        for xi, r in zip(x, ridge, strict=True):
            right.annotate(f"{r:.0f}", (xi, r), ha="center", va="bottom", fontsize="small")
        right.set_ylabel(f"{dtype.upper()} ridge point (FLOP/byte)")
        for ax in (left, right):
            ax.set_xticks(x, [a.name for a in accs], rotation=20, ha="right", fontsize="small")
            ax.set_xlabel("chip, in launch order")
        left.legend(loc="upper left")
        fig.tight_layout()
    return fig
