"""Figures for the data chapter's mixture-search and unigram-tokenizer sections: proxy losses
against the regression's prediction with the mixtures it compares, and tokens per byte of BPE
against a unigram language-model tokenizer across vocabulary sizes.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from ._style import MARKERS, PALETTE, series_styles, style


def plot_mixture_search(
    predicted: np.ndarray,
    measured: np.ndarray,
    fitted: np.ndarray,
    domains: Sequence[str],
    mixtures: Mapping[str, np.ndarray],
    *,
    spread: Mapping[str, np.ndarray] | None = None,
) -> plt.Figure:
    """Two panels. Left: each proxy run's measured loss against the regression's prediction
    (filled: fitted on, open: held out), with the line of equality. Right: the weight each
    mixture gives each domain, as grouped bars, with optional ± spreads (error bars)."""
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.6))
        fit = np.asarray(fitted, dtype=bool)
        a.plot(
            predicted[fit],
            measured[fit],
            MARKERS[0],
            color=PALETTE[0],
            markersize=4,
            linestyle="none",
            label="proxy runs fitted on",
        )
        a.plot(
            predicted[~fit],
            measured[~fit],
            MARKERS[1],
            color=PALETTE[1],
            markersize=5,
            markerfacecolor="none",
            linestyle="none",
            label="proxy runs held out",
        )
        lo = float(min(predicted.min(), measured.min()))
        hi = float(max(predicted.max(), measured.max()))
        a.plot([lo, hi], [lo, hi], color=PALETTE[6], linewidth=0.8, label="predicted = measured")
        a.set_xlabel("predicted loss (bits per byte)")
        a.set_ylabel("measured loss (bits per byte)")
        a.legend(fontsize=8)
        x = np.arange(len(domains))
        width = 0.8 / len(mixtures)
        for k, ((label, w), sty) in enumerate(
            zip(mixtures.items(), series_styles(len(mixtures)), strict=False)
        ):
            err = None if spread is None else spread.get(label)
            b.bar(
                x + (k - (len(mixtures) - 1) / 2) * width,
                w,
                width,
                color=sty["color"],
                yerr=err,
                capsize=2,
                label=label,
            )
        b.set_xticks(x, list(domains))
        b.set_xlabel("domain (language of the pages)")
        b.set_ylabel("weight in the mixture (fraction)")
        b.legend(fontsize=8)
        fig.tight_layout()
    return fig


def plot_tokenizer_comparison(
    vocab_sizes: np.ndarray,
    tokens_per_byte: Mapping[str, np.ndarray],
    fallback: Mapping[str, Mapping[str, float]],
) -> plt.Figure:
    """Two panels. Left: tokens per byte of held-out text against vocabulary size (log x) for
    each tokenizer. Right: for text in a script the tokenizers never saw, tokens per byte and
    the fraction of bytes lost on a round trip (grouped bars, one group per tokenizer)."""
    with style():
        fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.6))
        for (label, y), sty in zip(
            tokens_per_byte.items(), series_styles(len(tokens_per_byte)), strict=False
        ):
            a.plot(vocab_sizes, y, **sty, label=label)
        a.set_xscale("log")
        a.set_xticks(vocab_sizes, [f"{int(v):,}" for v in vocab_sizes])
        a.xaxis.set_minor_formatter(NullFormatter())
        a.set_xlabel("vocabulary size (tokens, log scale)")
        a.set_ylabel("sequence length (tokens per byte)")
        a.legend(fontsize=8)
        names = list(fallback)
        metrics = list(next(iter(fallback.values())))
        x = np.arange(len(names))
        width = 0.8 / len(metrics)
        for k, m in enumerate(metrics):
            b.bar(
                x + (k - (len(metrics) - 1) / 2) * width,
                [fallback[n][m] for n in names],
                width,
                color=PALETTE[k + 3],
                label=m,
            )
        b.set_xticks(x, names, fontsize=8)
        b.set_ylabel("per byte of unseen-script text (ratio)")
        b.legend(fontsize=8)
        fig.tight_layout()
    return fig
