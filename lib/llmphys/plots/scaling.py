"""Scaling-law figures (chapter 5): IsoFLOP curves, the Chinchilla refit, inference-aware
optima, repeated data, emergence, the synthetic scaling lab and the critical batch.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import (
    critical_batch,
    data_constrained,
    emergence,
    inference_optimal,
    scaling_fit,
    scaling_laws,
)
from ..scaling_laws import ParametricLaw
from ._style import (
    MARKERS,
    PALETTE,
    STYLE,
    figure_of,
    new_axes,
    series_styles,
    si_formatter,
    style,
)


def plot_isoflop_curves(
    law: ParametricLaw,
    budgets_flop: Sequence[float],
    *,
    span: float = 30.0,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Loss against model size at fixed compute (D = C/6N), N from N*/span to N* span per budget."""
    with style():
        fig, ax = new_axes(ax)
        for c, sty in zip(budgets_flop, series_styles(len(budgets_flop)), strict=True):
            opt = scaling_laws.compute_optimal(law, train_flop=c)
            n = opt["n_params"] * np.logspace(-np.log10(span), np.log10(span), 200)
            ax.plot(
                n,
                scaling_laws.isoflop_loss(law, train_flop=c, n_params=n),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"C = {c:.0e} FLOP",
            )
            ax.plot(opt["n_params"], opt["loss"], marker="o", color=sty["color"])
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(si_formatter(""))
        ax.set_xlabel("parameters N (count)")
        ax.set_ylabel("predicted loss (nats/token)")
        ax.set_title(f"IsoFLOP profiles ({law.key})", fontsize=9)
        ax.legend(fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_fit_residuals(
    runs: Mapping[str, np.ndarray], laws: Mapping[str, ParametricLaw], *, ax: plt.Axes | None = None
) -> plt.Figure:
    """Log-loss residuals of each law on the extracted Chinchilla runs vs tokens per parameter."""
    with style():
        fig, ax = new_axes(ax)
        tpp = runs["n_tokens"] / runs["n_params"]
        for (label, law), color, marker in zip(laws.items(), PALETTE, MARKERS, strict=False):
            r = scaling_fit.log_residuals(
                law, n_params=runs["n_params"], n_tokens=runs["n_tokens"], loss=runs["loss"]
            )
            ax.plot(
                tpp,
                100 * r,
                linestyle="none",
                marker=marker,
                markersize=3.5,
                color=color,
                alpha=0.7,
                label=f"{label} (median |r| {100 * np.median(np.abs(r)):.2f}%)",
            )
        ax.axhline(0, color="0.3", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("tokens per parameter D/N (ratio)")
        ax.set_ylabel("log(observed / predicted loss) (%)")
        ax.legend(fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_inference_optimal(
    law: ParametricLaw,
    *,
    n_params: float,
    inference_tokens: Sequence[float],
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Lifetime-optimal size, tokens and total compute relative to compute-optimal at equal loss."""
    with style():
        fig, ax = new_axes(ax)
        rows = [
            inference_optimal.versus_chinchilla(law, n_params=n_params, n_inference_tokens=d)
            for d in inference_tokens
        ]
        d0 = rows[0]["base_n_tokens"]
        series = {
            "parameters N / N_Chinchilla": [r["opt_n_params"] / n_params for r in rows],
            "training tokens D / D_Chinchilla": [r["opt_n_tokens"] / d0 for r in rows],
            "lifetime FLOP / Chinchilla's": [
                r["opt_total_flop"] / r["base_total_flop"] for r in rows
            ],
        }
        for (label, y), sty in zip(series.items(), series_styles(3), strict=True):
            ax.plot(
                inference_tokens, y, color=sty["color"], linestyle=sty["linestyle"], label=label
            )
        ax.axhline(1, color="0.4", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(si_formatter(""))
        ax.set_xlabel("lifetime inference demand D_inf (tokens)")
        ax.set_ylabel("ratio to the compute-optimal model (ratio)")
        ax.set_title(
            f"same loss as a compute-optimal {n_params / 1e9:.0f}B model ({law.key})", fontsize=9
        )
        ax.legend(fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_epoch_value(
    max_epochs: float = 40.0, *, mark_epochs: float = 4.0, ax: plt.Axes | None = None
) -> plt.Figure:
    """Effective data (in fresh epochs) against passes over the data, Muennighoff et al.'s law."""
    with style():
        fig, ax = new_axes(ax)
        e = np.linspace(1, max_epochs, 400)
        eff = data_constrained.effective_tokens(n_unique_tokens=1.0, n_tokens=e)
        ax.plot(e, e, color="0.4", linestyle=":", label="all tokens fresh")
        ax.plot(e, eff, color=PALETTE[0], label="repeated data, D' / U")
        r_star = data_constrained.repetition_constants().r_d_star
        ax.axhline(
            1 + r_star,
            color=PALETTE[1],
            linestyle="--",
            linewidth=1,
            label=f"ceiling 1 + R*_D = {1 + r_star:.1f}",
        )
        m = data_constrained.effective_tokens(n_unique_tokens=1.0, n_tokens=mark_epochs)
        ax.plot(mark_epochs, m, marker="o", color=PALETTE[0])
        ax.annotate(
            f"{mark_epochs:g} epochs = {m:.2f} fresh",
            (mark_epochs, m),
            xytext=(8, -14),
            textcoords="offset points",
            fontsize=8,
        )
        ax.set_xlabel("passes over the unique data, D / U (epochs)")
        ax.set_ylabel("effective data D' / U (fresh epochs)")
        ax.legend(fontsize=7.5, loc="upper left")
        fig.tight_layout()
    return fig


def plot_emergence(
    n_params: np.ndarray,
    *,
    answer_tokens: Sequence[int] = (1, 5, 20),
    axes: Sequence[plt.Axes] | None = None,
) -> plt.Figure:
    """Exact match per answer length (left) and the per-token error rate (right, log-log)."""
    with style():
        if axes is None:
            fig, axes = plt.subplots(1, 2, figsize=(STYLE["figure.figsize"][0], 3.4))
        fig = figure_of(axes[0])
        p = emergence.token_accuracy(emergence.per_token_loss(n_params))
        for k, sty in zip(answer_tokens, series_styles(len(answer_tokens)), strict=True):
            axes[0].plot(
                n_params,
                emergence.exact_match(p, answer_tokens=k),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"{k}-token answers",
            )
        axes[1].plot(
            n_params,
            emergence.token_edit_distance(p, answer_tokens=1),
            color="0.2",
            label="any answer length",
        )
        axes[0].set_ylabel("exact match (fraction)")
        axes[1].set_ylabel("wrong tokens per answer token (fraction)")
        axes[1].set_yscale("log")
        for a in axes:
            a.set_xscale("log")
            a.set_xlabel("parameters N (count)")
            a.legend(fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_scaling_lab(
    grid: Mapping[str, np.ndarray],
    law: ParametricLaw,
    *,
    entropy_nats: float,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Excess loss over the true entropy against training tokens, one series per model size."""
    with style():
        fig, ax = new_axes(ax)
        sizes = np.unique(grid["n_params"])
        d = np.logspace(np.log10(grid["n_tokens"].min()), np.log10(grid["n_tokens"].max()), 100)
        for n, sty in zip(sizes, series_styles(len(sizes)), strict=True):
            sel = grid["n_params"] == n
            ax.plot(
                grid["n_tokens"][sel],
                grid["loss"][sel] - entropy_nats,
                marker=sty["marker"],
                color=sty["color"],
                linestyle="none",
                label=f"N = {n:,.0f}",
            )
            ax.plot(
                d,
                scaling_laws.loss(law, n_params=n, n_tokens=d) - entropy_nats,
                color=sty["color"],
                linestyle="--",
                linewidth=1,
            )
        ax.axhline(
            law.E - entropy_nats,
            color="0.3",
            linestyle=":",
            linewidth=1,
            label="fitted E minus true H",
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training tokens D (count)")
        ax.set_ylabel("test loss minus entropy rate (nats/token)")
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
    return fig


def plot_batch_tradeoff(
    batch_sizes: np.ndarray, *, b_crit: float, ax: plt.Axes | None = None
) -> plt.Figure:
    """Steps and examples to a fixed loss against batch size, both relative to their minimum."""
    with style():
        fig, ax = new_axes(ax)
        steps = critical_batch.steps(batch_sizes, min_steps=1.0, critical_batch=b_crit)
        examples = critical_batch.examples(batch_sizes, min_examples=1.0, critical_batch=b_crit)
        ax.plot(batch_sizes, steps, color=PALETTE[0], label="optimizer steps S / S_min")
        ax.plot(
            batch_sizes,
            examples,
            color=PALETTE[1],
            linestyle="--",
            label="examples processed E / E_min",
        )
        ax.axvline(b_crit, color="0.4", linestyle=":", linewidth=1)
        ax.annotate(
            "B_crit: 2x both", (b_crit, 2), xytext=(6, 8), textcoords="offset points", fontsize=8
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("batch size B (examples)")
        ax.set_ylabel("cost relative to its minimum (ratio)")
        ax.legend(fontsize=7.5)
        fig.tight_layout()
    return fig
