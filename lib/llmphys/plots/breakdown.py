"""Where a model's parameters live: embeddings, attention, the MLP a token uses, idle experts.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import accounting
from ..specs import Model
from ._style import PALETTE, new_axes, style

PARTS = ("embeddings", "attention", "MLP used per token", "experts idle per token", "norms")


def param_shares(model: Model) -> dict[str, float]:
    """Fraction of ``model``'s parameters in each of ``PARTS`` (they sum to 1).

    Embeddings are the input table plus an untied output head; the idle experts are
    the routed experts a token does not use (total minus active parameters).
    """
    parts = accounting.param_breakdown(model)
    n = accounting.n_params(model)
    idle = n - accounting.n_active_params(model)
    return {
        "embeddings": (parts["embedding"] + parts["output_head"]) / n,
        "attention": parts["attention"] / n,
        "MLP used per token": (parts["ffn"] - idle) / n,
        "experts idle per token": idle / n,
        "norms": parts["norms"] / n,
    }


def plot_param_breakdown(models: Sequence[Model], *, ax: plt.Axes | None = None) -> plt.Figure:
    """Stacked bars: each model's parameters by part (% of its total), total and active noted."""
    if not len(models):
        raise ValueError("models must not be empty")
    with style():
        fig, ax = new_axes(ax, figsize=(8.6, 0.55 * len(models) + 1.6))
        y = np.arange(len(models))
        left = np.zeros(len(models))
        shares = [param_shares(m) for m in models]
        for part, color in zip(PARTS, PALETTE, strict=False):
            width = np.array([100.0 * s[part] for s in shares])
            ax.barh(y, width, left=left, color=color, label=part, height=0.6)
            left += width
        for yi, m in zip(y, models, strict=True):
            ax.text(
                101.5,
                float(yi),
                f"{accounting.n_params(m) / 1e9:.2f}B total, "
                f"{accounting.n_active_params(m) / 1e9:.2f}B active",
                va="center",
                fontsize=8.5,
            )
        ax.set_yticks(y, [m.name for m in models])
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of the model's parameters (%)")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize=8.5)
        fig.tight_layout()
    return fig
