"""Figures of the architecture chapter: KV cache by attention variant, decode ceilings,
attention vs weight FLOP, router balance, RoPE scaling, norm placement.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from .. import accounting, inference, kv_cache, rope_scaling, units
from ..specs import Accelerator, Model
from ._style import PALETTE, new_axes, series_styles, si_formatter, style


def _check_nonempty(name: str, value) -> None:
    if not len(value):
        raise ValueError(f"{name} must not be empty")


def plot_kv_cache_by_variant(
    models: Mapping[str, Model],
    accs: Sequence[Accelerator],
    *,
    context_tokens: int,
    bytes_per_element: float = 2.0,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Bars: KV cache (GB, log) of one sequence per variant; lines: each chip's HBM capacity."""
    _check_nonempty("models", models)
    with style():
        fig, ax = new_axes(ax)
        sizes = [
            kv_cache.kv_cache_bytes(m, n_tokens=context_tokens, bytes_per_element=bytes_per_element)
            / units.GB
            for m in models.values()
        ]
        y = np.arange(len(sizes))
        ax.barh(y, sizes, color=PALETTE[0])
        for yi, s in enumerate(sizes):  # yi runs over y
            ax.text(s * 1.08, yi, f"{s:,.1f} GB", va="center", fontsize=8.5)
        for acc, ls in zip(accs, ("--", "-.", ":"), strict=False):
            ax.axvline(
                acc.hbm_bytes / units.GB,
                color=PALETTE[1],
                linestyle=ls,
                label=f"{acc.name.split(' ')[1]} HBM (usable)",
            )
        ax.set_yticks(y, list(models))
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlim(min(sizes) / 2, max(sizes) * 4)
        ax.set_xlabel(f"KV cache of one {context_tokens:,}-token sequence (GB, 1e9 bytes)")
        ax.grid(axis="y", visible=False)
        if accs:
            ax.legend(loc="lower right")
    return fig


def plot_decode_ceilings(
    models: Mapping[str, Model],
    acc: Accelerator,
    *,
    contexts: np.ndarray,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> plt.Figure:
    """Batch-1 tokens/s ceiling vs context, one chip: cache only (left), cache + weights (right).

    Each point is :func:`llmphys.inference.decode_tokens_per_s`."""
    _check_nonempty("models", models)
    with style():
        fig, axes = plt.subplots(1, 2, figsize=(8.6, 3.6), sharey=True)
        for ax, weights in zip(axes, (False, True), strict=True):
            for (label, m), st in zip(models.items(), series_styles(len(models)), strict=True):
                rate = [
                    inference.decode_tokens_per_s(
                        m,
                        acc,
                        context_tokens=int(t),
                        weight_dtype=weight_dtype,
                        kv_bytes_per_element=kv_bytes_per_element,
                        include_weights=weights,
                    )
                    for t in contexts
                ]
                ax.plot(contexts, rate, label=label, markevery=4, markersize=4, **st)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("context (tokens)")
            ax.set_title("weights included" if weights else "KV cache only")
        axes[0].set_ylabel(f"decode ceiling on {acc.key} (tokens/s)")
        axes[0].legend()
        fig.tight_layout()
    return fig


def plot_attention_vs_weights(
    models: Sequence[Model], *, contexts: np.ndarray, ax: plt.Axes | None = None
) -> plt.Figure:
    """Attention FLOP per token as a multiple of the weights' FLOP, vs context (log-log)."""
    _check_nonempty("models", models)
    with style():
        fig, ax = new_axes(ax)
        for m, st in zip(models, series_styles(len(models)), strict=True):
            parts = [
                accounting.flop_breakdown_per_token(m, context_tokens=float(t)) for t in contexts
            ]
            ratio = [p["attention matmuls"] / p["weight matmuls"] for p in parts]
            ax.plot(contexts, ratio, label=m.key, markevery=4, markersize=4, **st)
        ax.axhline(1.0, color="0.3", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context attended to (tokens)")
        ax.set_ylabel("attention FLOP / weight FLOP (ratio)")
        ax.legend(ncol=2)
    return fig


def plot_router_balance(runs: Mapping[str, Mapping[str, np.ndarray]]) -> plt.Figure:
    """Left: busiest/mean expert load per step; right: final load per expert, sorted."""
    _check_nonempty("runs", runs)
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(8.6, 3.4))
        for (label, run), st in zip(runs.items(), series_styles(len(runs)), strict=True):
            a.plot(run["imbalance"], label=label, color=st["color"], linestyle=st["linestyle"])
            load = np.sort(run["load"])[::-1] * run["load"].size
            b.plot(
                np.arange(1, load.size + 1),
                load,
                label=label,
                color=st["color"],
                linestyle=st["linestyle"],
            )
        a.axhline(1.0, color="0.3", linewidth=1)
        a.set_xlabel("router step (batches)")
        a.set_ylabel("max load / mean load (ratio)")
        b.axhline(1.0, color="0.3", linewidth=1)
        b.set_xlabel("expert rank (busiest first)")
        b.set_ylabel("load / mean load (ratio)")
        a.legend()
        fig.tight_layout()
    return fig


def plot_rope_scaling(
    freqs: Mapping[str, np.ndarray], *, trained_context_tokens: int, distances: np.ndarray
) -> plt.Figure:
    """Left: each RoPE pair's wavelength (tokens, log) per method; right: mean score against
    distance (``rope_scaling.score_vs_distance``, log distance axis; pass distances > 0), with
    the trained context marked on both."""
    _check_nonempty("freqs", freqs)
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 3.6))
        for (label, f), st in zip(freqs.items(), series_styles(len(freqs)), strict=False):
            f = np.asarray(f, dtype=float)
            left.plot(
                np.arange(f.size), 2 * np.pi / f, label=label, markevery=8, markersize=4, **st
            )
            right.plot(
                distances,
                rope_scaling.score_vs_distance(f, distances),
                label=label,
                linewidth=1.0,
                color=st["color"],
                linestyle=st["linestyle"],
            )
        left.axhline(
            trained_context_tokens,
            color="0.35",
            linestyle=":",
            linewidth=1.0,
            label=f"trained context ({trained_context_tokens:,})",
        )
        right.axvline(trained_context_tokens, color="0.35", linestyle=":", linewidth=1.0)
        left.set_yscale("log")
        left.set_xlabel("rotation pair i (index)")
        left.set_ylabel("wavelength 2π/θ_i (tokens)")
        right.set_xscale("log")
        right.set_xlabel("distance between query and key (tokens)")
        right.set_ylabel("mean score, q = k (fraction of |q|²)")
        right.xaxis.set_major_formatter(si_formatter(""))
        left.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
    return fig


def plot_norm_placement(study: Mapping[str, Mapping[str, np.ndarray]]) -> plt.Figure:
    """Left: gradient norm of each layer's W2 at initialisation (log), pre- against post-norm,
    at the deepest stack of ``norm_placement.depth_study``; right: post/pre ratio of the top
    layer's gradient against depth (log-log) with the sqrt(L) of Xiong et al.'s Theorem 1."""
    for key in ("pre", "post", "post_over_pre"):
        if key not in study:
            raise ValueError(f"study must be norm_placement.depth_study's result; no {key!r}")
    with style():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.6, 3.4))
        for pl, st in zip(("pre", "post"), series_styles(2), strict=True):
            prof = np.asarray(study[pl]["profile"])
            left.plot(np.arange(1, prof.size + 1), prof, label=f"{pl}-norm", markevery=4, **st)
        left.set_yscale("log")
        left.set_xlabel(f"layer index (1 = bottom, of {prof.size})")
        left.set_ylabel("‖∂loss/∂W2‖ at init (1/nat)")
        left.legend()
        r = study["post_over_pre"]
        depths, ratio = np.asarray(r["depths"], dtype=float), np.asarray(r["top_ratio"])
        right.plot(depths, ratio, "o-", color=PALETTE[0], label="measured")
        ref = ratio[0] * np.sqrt(depths / depths[0])
        right.plot(depths, ref, "--", color="0.35", linewidth=1.0, label="∝ √L (Theorem 1)")
        right.set_xscale("log", base=2)
        right.set_yscale("log")
        right.set_xticks(depths, [f"{d:g}" for d in depths])
        for axis in (left.yaxis, right.yaxis):  # narrow log ranges: plain numbers, not 6x10^0
            axis.set_major_formatter(mticker.FormatStrFormatter("%g"))
            axis.set_minor_formatter(mticker.FormatStrFormatter("%g"))
        right.set_xlabel("depth L (layers)")
        right.set_ylabel("top-layer gradient, post / pre (ratio)")
        right.legend()
        fig.tight_layout()
    return fig
