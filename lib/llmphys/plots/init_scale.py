"""Figure of initialisation against width: activation scales of fresh models under each rule.

Home: chapters/01_foundations.ipynb, section "Initialisation across widths".
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from ._style import series_styles, style


def plot_init_scales(sweeps: Mapping[str, Mapping[str, np.ndarray]]) -> plt.Figure:
    """Left: RMS of the first MLP pre-activation; right: RMS of the logits; both against the
    model width on log-log axes, one line per rule (``init_scale.width_sweep`` results)."""
    if not sweeps:
        raise ValueError("sweeps must hold at least one rule")
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.6, 3.6), sharex=True)
        panels = (("preact_rms", "first MLP pre-activation RMS"), ("logit_rms", "logit RMS"))
        for ax, (key, label) in zip(axes, panels, strict=True):
            for (name, s), sty in zip(sweeps.items(), series_styles(len(sweeps)), strict=False):
                ax.loglog(
                    s["width"],
                    s[key],
                    color=sty["color"],
                    linestyle=sty["linestyle"],
                    marker=sty["marker"],
                    label=name,
                )
            ax.axhline(1.0, color="0.35", linestyle=":", linewidth=1.0)
            ax.set_xlabel("model width d (count)")
            ax.set_ylabel(f"{label} (dimensionless)")
        axes[0].legend(loc="upper left", fontsize="small")
        fig.tight_layout()
    return fig
