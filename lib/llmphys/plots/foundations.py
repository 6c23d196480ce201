"""Figures of the foundations chapter: loss curves against an entropy floor, the residual
stream's writes, and code lengths of one text under several compressors.

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import units
from ._style import (
    LINESTYLES,
    PALETTE,
    STYLE,
    figure_of,
    new_axes,
    series_styles,
    si_formatter,
    style,
)


def plot_loss_curves(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    references: Mapping[str, float] | None = None,
    xlabel: str = "tokens seen (count)",
    ylabel: str = "loss (bits per token)",
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Loss against tokens on a log x axis, one line per curve, with horizontal references.

    ``curves`` maps a label to (tokens, bits per token); ``references`` maps a label to a
    constant loss (the source's entropy rate, a uniform guess) drawn as a grey line and
    named, with its value, in the legend.
    """
    if not curves:
        raise ValueError("curves must hold at least one (tokens, bits) pair")
    with style():
        fig, ax = new_axes(ax)
        for (label, (x_in, y_in)), sty in zip(
            curves.items(), series_styles(len(curves)), strict=True
        ):
            x, y = np.asarray(x_in, dtype=float), np.asarray(y_in, dtype=float)
            if x.shape != y.shape or np.any(x <= 0):
                raise ValueError(f"curve {label!r}: tokens must be > 0 and match the losses")
            marker = sty["marker"] if x.size <= 30 else None
            ax.plot(
                x,
                y,
                color=sty["color"],
                linestyle=sty["linestyle"],
                marker=marker,
                markersize=4,
                label=label,
            )
        for (label, value), ls in zip((references or {}).items(), LINESTYLES[1:] * 3, strict=False):
            ax.axhline(
                value, color="0.35", linestyle=ls, linewidth=1.0, label=f"{label} ({value:.2f})"
            )
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(si_formatter(""))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.legend(loc="lower left")
        fig.tight_layout()
    return fig


def plot_residual_stream(
    write_norms: Mapping[str, float],
    ablation_bits: Mapping[str, float],
    *,
    floor_bits: float,
    axes: Sequence[plt.Axes] | None = None,
) -> plt.Figure:
    """Two panels: the mean size of each write to the residual stream, and the loss when
    that write is left out (``ablation_bits`` has an extra "none" entry: the intact model)."""
    names = list(write_norms)
    if not names or set(names) - set(ablation_bits) or "none" not in ablation_bits:
        raise ValueError("ablation_bits must hold 'none' and every key of write_norms")
    with style():
        if axes is None:
            fig, axes = plt.subplots(1, 2, figsize=(STYLE["figure.figsize"][0], 3.2))
        left, right = axes
        fig = figure_of(left)
        y = np.arange(len(names))
        left.barh(y, [write_norms[k] for k in names], color=PALETTE[0])
        left.set_yticks(y, names)
        left.set_ylim(len(names) - 0.5, -0.5)
        left.set_xlabel("mean L2 norm of the write (model units)")
        right.plot(
            [ablation_bits[k] for k in names],
            y,
            linestyle="none",
            marker="o",
            color=PALETTE[1],
            label="write removed",
        )
        right.axvline(
            ablation_bits["none"],
            color=PALETTE[2],
            linestyle="--",
            linewidth=1.2,
            label=f"intact model ({ablation_bits['none']:.2f})",
        )
        right.axvline(
            floor_bits,
            color="0.35",
            linestyle=":",
            linewidth=1.0,
            label=f"entropy floor ({floor_bits:.2f})",
        )
        right.set_yticks(y, names)
        right.set_ylim(len(names) - 0.5, -0.5)
        right.set_xlim(left=0)
        right.set_xlabel("held-out loss (bits per token)")
        right.legend(loc="lower right", fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_code_lengths(
    bits_per_byte: Mapping[str, float], *, floor_bits: float, ax: plt.Axes | None = None
) -> plt.Figure:
    """Horizontal bars: the bits per byte each coder spends on the same text, floor marked."""
    if not bits_per_byte:
        raise ValueError("bits_per_byte must name at least one coder")
    with style():
        if ax is None:
            fig, ax = plt.subplots(
                figsize=(STYLE["figure.figsize"][0], 1.5 + 0.35 * len(bits_per_byte))
            )
        fig = figure_of(ax)
        names = list(bits_per_byte)
        y = np.arange(len(names))
        values = [bits_per_byte[k] for k in names]
        ax.barh(
            y,
            values,
            color=[PALETTE[4] if "model" in k or "gram" in k else PALETTE[0] for k in names],
        )
        for yi, v in zip(y, values, strict=True):
            ax.annotate(
                f"{v:.2f}",
                (v, yi),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.axvline(
            floor_bits,
            color=PALETTE[1],
            linestyle="--",
            linewidth=1.2,
            label=f"entropy rate of the source ({floor_bits:.2f} bits per byte)",
        )
        ax.set_yticks(y, names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, 1.15 * max(values))
        ax.set_xlabel("code length (bits per byte)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.1 / len(names)))
        fig.tight_layout()
    return fig


def plot_schedules(
    runs: Mapping[str, Mapping[str, Sequence[float]]], *, floor_bits: float | None = None
) -> plt.Figure:
    """Left: learning rate per step; right: held-out loss against tokens, one line per run.

    ``runs`` maps a label to a ``tinylm_train.train`` history (``lr``, ``eval_tokens_seen``,
    ``eval_bits``); ``floor_bits`` draws the source's entropy rate on the right.
    """
    if not runs:
        raise ValueError("runs must hold at least one training history")
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 3.6))
        for (label, h), sty in zip(runs.items(), series_styles(len(runs)), strict=False):
            lr = np.asarray(h["lr"], dtype=float)
            left.plot(
                np.arange(lr.size), lr, color=sty["color"], linestyle=sty["linestyle"], label=label
            )
            right.plot(
                h["eval_tokens_seen"],
                h["eval_bits"],
                color=sty["color"],
                linestyle=sty["linestyle"],
                marker=sty["marker"],
                markersize=4,
                label=label,
            )
        if floor_bits is not None:
            right.axhline(
                floor_bits,
                color="0.35",
                linestyle=":",
                linewidth=1.0,
                label=f"entropy rate ({floor_bits:.2f})",
            )
        left.set_xlabel("optimizer step (count)")
        left.set_ylabel("learning rate (dimensionless)")
        right.set_xlabel("tokens seen (count)")
        right.set_ylabel("held-out loss (bits per token)")
        right.xaxis.set_major_formatter(si_formatter(""))
        left.legend(loc="lower center")
        right.legend(loc="upper right")
        fig.tight_layout()
    return fig


def plot_step_scan(
    step: Sequence[float], error: Sequence[float], *, best_step: float | None = None
) -> plt.Figure:
    """A finite difference's relative error against its step h, both axes logarithmic.

    ``step`` and ``error`` come from ``xent_gradient.step_scan``; ``best_step`` marks the
    predicted optimum (eps n)^(1/3) with a vertical line.
    """
    h, e = np.asarray(step, dtype=float), np.asarray(error, dtype=float)
    if h.shape != e.shape or h.size < 2:
        raise ValueError("step and error must be arrays of the same length, at least 2")
    with style():
        fig, ax = plt.subplots(figsize=(5.6, 3.6))
        ax.loglog(h, e, color=PALETTE[0], marker="o", markersize=4, label="central difference")
        if best_step is not None:
            ax.axvline(
                best_step,
                color="0.35",
                linestyle=":",
                linewidth=1.0,
                label="predicted best step, (eps n)^(1/3)",
            )
        ax.set_xlabel("finite-difference step h (logit units)")
        ax.set_ylabel("max relative error against p - y")
        ax.legend(loc="upper center")
        fig.tight_layout()
    return fig


def plot_zero_stages(
    rows: Sequence[Mapping[str, float]], *, hbm_bytes: float, hbm_label: str = "HBM of one GPU"
) -> plt.Figure:
    """Stacked bars of model state and activations per GPU (GB) for each ZeRO stage.

    ``rows`` comes from ``zero_memory.zero_stage_memory``; ``hbm_bytes`` draws the memory
    of one GPU as a horizontal line.
    """
    if not rows:
        raise ValueError("rows must hold at least one ZeRO stage")
    with style():
        fig, ax = plt.subplots(figsize=(5.6, 3.6))
        x = np.arange(len(rows))
        state = np.array([r["state_bytes"] for r in rows]) / units.GB
        act = np.array([r["activation_bytes"] for r in rows]) / units.GB
        ax.bar(x, state, color=PALETTE[0], width=0.6, label="weights, gradients, Adam state")
        ax.bar(x, act, bottom=state, color=PALETTE[1], width=0.6, label="activations")
        ax.axhline(
            hbm_bytes / units.GB, color="0.35", linestyle=":", linewidth=1.0, label=hbm_label
        )
        ax.set_xticks(x, [f"stage {int(r['stage'])}" for r in rows])
        ax.set_xlabel("ZeRO stage")
        ax.set_ylabel("memory per GPU (GB, decimal)")
        ax.legend(loc="upper right")
        fig.tight_layout()
    return fig
