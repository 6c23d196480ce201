"""Data-pipeline figures (the data chapter): the funnel, the LSH S-curve, decontamination,
fertility, mixtures and model collapse.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from ..pipeline import dedup, mixture
from ._style import (
    LINESTYLES,
    MARKERS,
    PALETTE,
    STYLE,
    new_axes,
    series_styles,
    si_formatter,
    style,
)


def plot_funnel(
    stages: Sequence[str],
    counts_by_kind: Mapping[str, Sequence[int]],
    *,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Stacked bars: documents left after each stage, split by their true kind."""
    if not stages:
        raise ValueError("stages must name at least one stage")
    with style():
        fig, ax = new_axes(ax, (STYLE["figure.figsize"][0], 3.8))
        bottom = np.zeros(len(stages))
        x = np.arange(len(stages))
        for (kind, counts_in), color in zip(counts_by_kind.items(), PALETTE, strict=False):
            counts = np.asarray(counts_in, dtype=float)
            ax.bar(x, counts, bottom=bottom, color=color, label=kind, width=0.7)
            bottom += counts
        ax.set_xticks(x, stages, rotation=20, ha="right")
        ax.set_ylabel("documents left (count)")
        ax.legend(ncol=2, fontsize=8, loc="upper right")
        fig.tight_layout()
    return fig


def plot_s_curve(
    band_settings: Sequence[tuple[int, int]],
    *,
    jaccard: np.ndarray | None = None,
    caught: np.ndarray | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """P(candidate) = 1 - (1 - s^r)^b for each (b, r), with measured catch rates if given.

    ``jaccard`` and ``caught`` (bool) describe real pairs; they are binned by Jaccard and
    drawn as points with binomial error bars.
    """
    s = np.linspace(0.0, 1.0, 401)
    with style():
        fig, ax = new_axes(ax)
        for (b, r), sty in zip(band_settings, series_styles(len(band_settings)), strict=True):
            t = dedup.lsh_threshold(n_bands=b, n_rows=r)
            ax.plot(
                s,
                dedup.s_curve(s, n_bands=b, n_rows=r),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"b={b}, r={r} (threshold {t:.2f})",
            )
            ax.axvline(t, color=sty["color"], linewidth=0.7, linestyle=":")
        if jaccard is not None and caught is not None and len(jaccard):
            edges = np.linspace(0.0, 1.0, 21)
            idx = np.clip(np.digitize(jaccard, edges) - 1, 0, 19)
            n = np.bincount(idx, minlength=20)
            k = np.bincount(idx, weights=np.asarray(caught, float), minlength=20)
            ok = n >= 3
            rate = k[ok] / n[ok]
            err = np.sqrt(rate * (1 - rate) / n[ok])
            ax.errorbar(
                (edges[:-1] + 0.025)[ok],
                rate,
                yerr=err,
                fmt="o",
                color="0.2",
                markersize=4,
                label="measured: crawl pairs",
                capsize=2,
            )
        ax.set_xlabel("Jaccard similarity of the shingle sets (fraction)")
        ax.set_ylabel("probability of becoming a candidate (fraction)")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
    return fig


def plot_decontam_sweep(
    results: Mapping[str, Mapping[int, float]], *, ax: plt.Axes | None = None
) -> plt.Figure:
    """Flag rate against n for each labelled group (verbatim leaks, edited leaks, clean pages)."""
    with style():
        fig, ax = new_axes(ax)
        for (label, by_n), sty in zip(results.items(), series_styles(len(results)), strict=True):
            ns = sorted(by_n)
            ax.plot(ns, [by_n[n] for n in ns], **sty, label=label)
        ax.set_xscale("log")
        ns = sorted({n for by_n in results.values() for n in by_n})
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("n-gram length n (words, log scale)")
        ax.set_ylabel("documents flagged (fraction)")
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=8)
        fig.tight_layout()
    return fig


def plot_fertility(
    fert: Mapping[str, Mapping[str, float]], *, ax: plt.Axes | None = None
) -> plt.Figure:
    """Dot plot: tokens per word for each language (rows) under each tokenizer (series)."""
    with style():
        fig, ax = new_axes(ax)
        tokenizers = list(fert)
        langs = list(next(iter(fert.values())))
        y = np.arange(len(langs))
        for i, (name, color, marker) in enumerate(zip(tokenizers, PALETTE, MARKERS, strict=False)):
            offset = 0.12 * (i - (len(tokenizers) - 1) / 2)
            ax.plot(
                [fert[name][lang] for lang in langs],
                y + offset,
                linestyle="none",
                marker=marker,
                color=color,
                markersize=7,
                label=name,
            )
        ax.set_yticks(y, langs)
        ax.set_ylim(len(langs) - 0.5, -0.5)
        ax.set_xlabel("fertility (tokens per word)")
        ax.set_ylabel("language (ISO 639-1)")
        ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
    return fig


def plot_mixture(
    weights: Mapping[str, float],
    epochs: Mapping[str, float],
    *,
    total_tokens: float,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Per domain: unique tokens in the pool and tokens trained on (log axis), epochs annotated."""
    unique = mixture.unique_tokens_from_epochs(weights, epochs, total_tokens=total_tokens)
    with style():
        fig, ax = new_axes(ax)
        domains = list(weights)
        y = np.arange(len(domains))
        trained = [weights[d] * total_tokens for d in domains]
        ax.barh(
            y - 0.2,
            [unique[d] for d in domains],
            height=0.38,
            color=PALETTE[0],
            label="unique tokens in the pool",
        )
        ax.barh(y + 0.2, trained, height=0.38, color=PALETTE[1], label="tokens trained on")
        for yi, d, t in zip(y, domains, trained, strict=True):
            ax.annotate(
                f"{epochs[d]:.2f} epochs",
                (t, yi + 0.2),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set_xscale("log")
        ax.set_yticks(y, domains)
        ax.set_ylim(len(domains) - 0.5, -0.5)
        ax.xaxis.set_major_formatter(si_formatter("tokens"))
        ax.set_xlabel("tokens (count, log scale)")
        ax.set_xlim(right=ax.get_xlim()[1] * 4)
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
    return fig


def plot_collapse(
    curves: Mapping[str, np.ndarray], *, ylabel: str, ax: plt.Axes | None = None
) -> plt.Figure:
    """One metric per generation for each training regime (one line each)."""
    with style():
        fig, ax = new_axes(ax)
        for i, ((label, y), color) in enumerate(zip(curves.items(), PALETTE, strict=False)):
            ax.plot(
                np.arange(len(y)),
                y,
                color=color,
                linestyle=LINESTYLES[i % len(LINESTYLES)],
                label=label,
            )
        ax.set_xlabel("generation (count)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        fig.tight_layout()
    return fig


def plot_vocab_tradeoff(
    vocab_sizes: np.ndarray,
    tokens_per_byte: Mapping[str, np.ndarray],
    relative_flop: Mapping[str, np.ndarray],
) -> plt.Figure:
    """Two panels against vocabulary size (log x): tokens per byte for each text group, and
    forward FLOP per byte relative to the bytes-only vocabulary for each model."""
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.6))
        for (label, y), sty in zip(
            tokens_per_byte.items(), series_styles(len(tokens_per_byte)), strict=False
        ):
            a.plot(vocab_sizes, y, **sty, label=label)
        a.set_ylabel("sequence length (tokens per byte)")
        for (label, y), sty in zip(
            relative_flop.items(), series_styles(len(relative_flop)), strict=False
        ):
            b.plot(vocab_sizes, y, **sty, label=label)
            i = int(np.argmin(y))
            b.plot(
                [vocab_sizes[i]],
                [y[i]],
                marker="*",
                color=sty["color"],
                markersize=12,
                linestyle="none",
            )
        b.set_ylabel("forward FLOP per byte (relative to 256 tokens)")
        for ax in (a, b):
            ax.set_xscale("log")
            ax.set_xlabel("vocabulary size (tokens, log scale)")
            ax.set_ylim(0, 1.05)
            ax.legend(fontsize=8)
        fig.tight_layout()
    return fig
