"""Figures of the architecture chapter's second pass: paged and quantised KV caches, MoE
capacity and dropping, recurrent state against the KV cache, tied heads, the non-matmul
share in time.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .. import accounting, block_savings, inference, units
from ..specs import Accelerator, Model
from ._style import PALETTE, new_axes, series_styles, style

_PART_LABELS = {
    "token_states": "token states",
    "reservation": "reserved for later tokens",
    "internal_fragmentation": "never filled",
}


def _check_nonempty(name: str, value) -> None:
    if not len(value):
        raise ValueError(f"{name} must not be empty")


def plot_kv_memory(
    slot_shares: Mapping[str, Mapping[str, float]],
    published: Mapping[str, float],
    model: Model,
    acc: Accelerator,
    *,
    bytes_by_format: Mapping[str, float],
    contexts: np.ndarray,
) -> plt.Figure:
    """Left: what each allocator's KV slots hold (stacked shares, drawn in percent), with a
    published token-state share (a fraction, like the shares) per allocator as a marker.
    Right: batch-1 decode ceiling against context, weights included, for each cache
    format's bytes per element
    (:func:`llmphys.inference.decode_tokens_per_s`)."""
    _check_nonempty("slot_shares", slot_shares)
    _check_nonempty("bytes_by_format", bytes_by_format)
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.2, 3.8), gridspec_kw={"width_ratios": [1.1, 1]})
        y = np.arange(len(slot_shares))
        left = np.zeros(len(slot_shares))
        for part, color in zip(_PART_LABELS, PALETTE, strict=False):
            w = np.array([100 * s[part] for s in slot_shares.values()])
            a.barh(y, w, left=left, color=color, label=_PART_LABELS[part])
            left += w
        keys = zip(y, slot_shares, strict=True)
        pub = [(yi, 100 * published[k]) for yi, k in keys if k in published]
        if pub:
            a.plot(
                [p for _, p in pub],
                [yi for yi, _ in pub],
                "D",
                color="black",
                markersize=7,
                markeredgecolor="white",
                label="token states, Kwon et al. fig. 2",
            )
        a.set_yticks(y, list(slot_shares))
        a.invert_yaxis()
        a.set_xlim(0, 100)
        a.set_xlabel("share of KV slots (%)")
        a.grid(axis="y", visible=False)
        a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8.5)
        for (label, bpe), st in zip(
            bytes_by_format.items(), series_styles(len(bytes_by_format)), strict=True
        ):
            rate = [
                inference.decode_tokens_per_s(
                    model, acc, context_tokens=int(t), kv_bytes_per_element=bpe
                )
                for t in contexts
            ]
            b.plot(contexts, rate, label=label, markevery=3, markersize=4, **st)
        b.set_xscale("log", base=2)
        b.set_xlabel("context (tokens)")
        b.set_ylabel(f"decode ceiling on {acc.key} (tokens/s)")
        b.set_title(f"{model.key}, batch 1, BF16 weights", fontsize=10)
        b.legend(fontsize=8.5)
        fig.tight_layout()
    return fig


def plot_moe_drops(
    curves: Mapping[str, np.ndarray],
    capacity_factors: np.ndarray,
    *,
    closed_form: np.ndarray | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Dropped share of (token, expert) assignments (percent) against the capacity factor,
    one line per router; optionally the uniform-routing closed form as a dashed line."""
    _check_nonempty("curves", curves)
    with style():
        fig, ax = new_axes(ax)
        for (label, drops), st in zip(curves.items(), series_styles(len(curves)), strict=True):
            ax.plot(capacity_factors, 100 * np.asarray(drops), label=label, markersize=4, **st)
        if closed_form is not None:
            ax.plot(
                capacity_factors,
                100 * np.asarray(closed_form),
                color="0.3",
                linestyle=":",
                linewidth=1.4,
                label="uniform routing, closed form (top-1)",
            )
        ax.set_xlabel("capacity factor f (buffer / mean load)")
        ax.set_ylabel("assignments dropped (%)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8.5)
    return fig


def plot_mixer_costs(
    study: Mapping[str, Mapping[str, np.ndarray]], contexts: np.ndarray, *, model_label: str
) -> plt.Figure:
    """Left: state bytes per sequence (GB, log-log) against context, per mixer; right: mixer
    FLOP per generated token (log-log). ``study`` is :func:`llmphys.mixer_costs.mixer_study`."""
    _check_nonempty("study", study)
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.2, 3.7))
        for (label, parts), st in zip(study.items(), series_styles(len(study)), strict=True):
            a.plot(
                contexts,
                np.asarray(parts["bytes"]) / units.GB,
                label=label,
                markevery=3,
                markersize=4,
                **st,
            )
            b.plot(
                contexts,
                np.asarray(parts["flop"]) / 1e9,
                label=label,
                markevery=3,
                markersize=4,
                **st,
            )
        for ax in (a, b):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("context (tokens)")
        a.set_ylabel("state per sequence (GB, 1e9 bytes)")
        b.set_ylabel("mixer work per token (GFLOP)")
        a.set_title(f"{model_label}, BF16", fontsize=10)
        a.legend(fontsize=8.5)
        fig.tight_layout()
    return fig


def plot_block_savings(models: Sequence[Model], *, ax: plt.Axes | None = None) -> plt.Figure:
    """Share of parameters an output head tied to the embeddings saves (percent, log), against
    the model's untied size (log), one labelled point per model
    (:func:`llmphys.block_savings.tying_savings`); filled where the model ties."""
    _check_nonempty("models", models)
    with style():
        fig, ax = new_axes(ax)
        for m in models:
            s = block_savings.tying_savings(m)
            size = accounting.n_params(m) + (s["params"] if m.tied_embeddings else 0.0)
            face = PALETTE[1] if m.tied_embeddings else "white"
            ax.plot(
                size, 100 * s["share"], "o", color=PALETTE[1], markerfacecolor=face, markersize=7
            )
            ax.annotate(
                m.key,
                (size, 100 * s["share"]),
                textcoords="offset points",
                xytext=(5, 3),
                fontsize=8,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("parameters with an untied head (count)")
        ax.set_ylabel("saved by tying the head (% of parameters)")
    return fig


def plot_nonmatmul_time(
    models: Sequence[Model], acc: Accelerator, *, context_tokens: float, ax: plt.Axes | None = None
) -> plt.Figure:
    """Non-matmul work as a share of the weight matmuls' roofline time (percent, log x), per
    model: timed by its FLOP and by its unfused HBM bytes
    (:func:`llmphys.accounting.elementwise_roofline_s_per_token`), models by width."""
    _check_nonempty("models", models)
    with style():
        fig, ax = new_axes(ax, figsize=(6.4, 0.42 * len(models) + 1.4))
        ordered = sorted(models, key=lambda m: m.d_model)
        parts = [
            accounting.elementwise_roofline_s_per_token(m, acc, context_tokens=context_tokens)
            for m in ordered
        ]
        y = np.arange(len(ordered))
        for shift, key, color, label in (
            (-0.2, "elementwise_hbm_s", PALETTE[1], "timed by unfused HBM bytes"),
            (0.2, "elementwise_flop_s", PALETTE[0], "timed by FLOP"),
        ):
            share = [100 * p[key] / p["matmul_s"] for p in parts]
            ax.barh(y + shift, share, height=0.38, color=color, label=label)
        ax.set_yticks(y, [f"{m.key} (d = {m.d_model:,})" for m in ordered])
        ax.set_xscale("log")
        ax.set_xlabel(f"share of the weight matmuls' time on {acc.key} (%)")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8.5)
    return fig
