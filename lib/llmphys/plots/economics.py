"""Economics figures: decode cost and latency vs batch, the batch schedule, KV tiers, the split.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import (
    compute_split,
    inference,
    inference_optimal,
    kv_tiers,
    scaling_laws,
    units,
)
from ..specs import Accelerator, Model
from ._style import LINESTYLES, MARKERS, PALETTE, STYLE, figure_of, new_axes, style

_PLAIN = FuncFormatter(lambda x, _pos: f"{x:g}")


def plot_decode_cost_latency(
    models: Sequence[Model],
    accs: Sequence[Accelerator],
    *,
    usd_per_chip_hour: Mapping[str, float],
    weight_dtypes: Mapping[str, str],
    context_tokens: int,
    batch_sizes: np.ndarray | None = None,
    axes: Sequence[plt.Axes] | None = None,
) -> plt.Figure:
    """Cost per million generated tokens (left) and time per output token (right) vs batch.

    Colour is the chip, line style the model. Each model runs on the smallest multiple of
    the chip's scale-up domain that holds its weights (``inference.min_chips``). Curves turn
    dotted where the KV cache no longer fits in HBM; a marker sits at the balance batch.
    """
    if not models or not accs:
        raise ValueError("models and accs must each name at least one entry")
    b = (
        np.unique(np.round(np.logspace(0, 16, 97, base=2)))
        if batch_sizes is None
        else np.asarray(batch_sizes, dtype=float)
    )
    with style():
        if axes is None:
            fig, axes = plt.subplots(
                1, 2, figsize=(STYLE["figure.figsize"][0] * 1.5, 5.0), layout="constrained"
            )
        ax_c, ax_t = axes
        fig = figure_of(ax_c)
        for m, ls in zip(models, LINESTYLES, strict=False):
            dt = weight_dtypes[m.key]
            for acc, color, marker in zip(accs, PALETTE, MARKERS, strict=False):
                n = inference.min_chips(m, acc, weight_dtype=dt)
                price = usd_per_chip_hour[acc.key]
                cost = (
                    inference.cost_per_token_usd(
                        m,
                        acc,
                        batch_size=b,
                        context_tokens=context_tokens,
                        n_chips=n,
                        usd_per_chip_hour=price,
                        weight_dtype=dt,
                    )
                    * units.MEGA
                )
                step = (
                    inference.decode_step(
                        m,
                        acc,
                        batch_size=b,
                        context_tokens=context_tokens,
                        n_chips=n,
                        weight_dtype=dt,
                    )["step_time_s"]
                    / units.MS
                )
                fits = b <= inference.max_batch_by_memory(
                    m, acc, context_tokens=context_tokens, n_chips=n, weight_dtype=dt
                )
                label = f"{m.name}, {n}x {_short(acc)}, {dt.upper()} weights"
                for ax, y in ((ax_c, cost), (ax_t, step)):
                    ax.plot(b[fits], y[fits], color=color, linestyle=ls, label=label)
                    ax.plot(b[~fits], y[~fits], color=color, linestyle=":", linewidth=0.9)
                bal = inference.balance_batch(
                    m, acc, context_tokens=context_tokens, weight_dtype=dt
                )
                if np.isfinite(bal) and b[0] <= bal <= b[-1]:
                    for ax, y in ((ax_c, cost), (ax_t, step)):
                        ax.plot(
                            [bal],
                            [np.interp(bal, b, y)],
                            marker=marker,
                            color=color,
                            linestyle="none",
                            markersize=6,
                        )
        for ax in (ax_c, ax_t):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks([8.0**p for p in range(7) if 8.0**p <= b[-1]])
            ax.xaxis.set_major_formatter(si_tokens())
            ax.yaxis.set_major_formatter(_PLAIN)
            ax.set_xlabel("batch size B (sequences decoded together)")
        ax_c.set_ylabel("cost (USD per million output tokens)")
        ax_t.set_ylabel("time per output token (ms)")
        fig.suptitle(
            f"context {context_tokens:,} tokens per sequence; marker: balance batch; "
            "dotted: KV cache exceeds HBM",
            fontsize=9,
        )
        handles, labels = ax_c.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=7.5)
    return fig


def _short(acc: Accelerator) -> str:
    """'NVIDIA H100 SXM5 80GB' -> 'H100'."""
    return acc.name.split()[1] if acc.name.startswith("NVIDIA ") else acc.name


def plot_schedule_latency(
    runs: Mapping[str, np.ndarray],
    *,
    interval_s: float,
    service_s: float | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Histograms of simulated request latency (ms), one per run, with the closed-form lines.

    ``runs`` maps a label to an array of latencies in seconds. Vertical lines: the
    unlimited-seat mean T/2 + S and worst case T + S.
    """
    if not runs:
        raise ValueError("runs must hold at least one array of latencies")
    s = interval_s if service_s is None else service_s
    with style():
        fig, ax = new_axes(ax)
        top = max(float(np.max(v)) for v in runs.values()) / units.MS
        bins = np.linspace(0.0, top * 1.02, 60)
        for (label, lat), color in zip(runs.items(), PALETTE, strict=False):
            ax.hist(
                np.asarray(lat) / units.MS,
                bins=bins.tolist(),
                density=True,
                histtype="step",
                color=color,
                linewidth=1.6,
                label=f"{label}: mean {np.mean(lat) / units.MS:.1f} ms, "
                f"max {np.max(lat) / units.MS:.1f} ms",
            )
        for x, text in (
            (interval_s / 2 + s, "closed-form mean"),
            (interval_s + s, "closed-form worst"),
        ):
            ax.axvline(x / units.MS, color="0.3", linestyle="--", linewidth=0.9)
            ax.annotate(
                text,
                (x / units.MS, 0.3),
                xycoords=("data", "axes fraction"),
                rotation=90,
                ha="right",
                va="center",
                fontsize=8,
                color="0.3",
            )
        ax.set_xlabel("latency from arrival to end of its step (ms)")
        ax.set_ylabel("probability density (1/ms)")
        ax.legend(loc="center left", fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_kv_restore(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: np.ndarray,
    tiers: Mapping[str, tuple[float, int]],
    n_chips: int,
    weight_dtype: str = "bf16",
    efficiency: float | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Time to bring back a conversation's KV cache from each tier vs recomputing it (log-log).

    ``tiers`` maps a name to (bytes/s per link, number of links in parallel). The recomputation
    is priced as ``kv_tiers.recompute_time_s`` prices it (``efficiency=None``: the serving model's
    one prefill pricing, ``predict.priced_time_s``).
    """
    t = np.asarray(context_tokens, dtype=int)
    with style():
        fig, ax = new_axes(ax)
        for (name, (bw, links)), color, marker in zip(
            tiers.items(), PALETTE, MARKERS, strict=False
        ):
            y = [
                kv_tiers.restore_time_s(model, context_tokens=int(x), bytes_per_s=bw, n_links=links)
                for x in t
            ]
            ax.plot(t, y, color=color, marker=marker, markersize=4, label=f"copy from {name}")
        y = [
            kv_tiers.recompute_time_s(
                model,
                acc,
                context_tokens=int(x),
                n_chips=n_chips,
                weight_dtype=weight_dtype,
                efficiency=efficiency,
            )
            for x in t
        ]
        ax.plot(
            t,
            y,
            color="0.1",
            linestyle="--",
            label=f"recompute (prefill on {n_chips}x {_short(acc)}, "
            + ("as served)" if efficiency is None else f"{efficiency:.0%} of roofline)"),
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(si_tokens())
        ax.set_xlabel("conversation length (tokens)")
        ax.set_ylabel("time to restore the KV cache (s)")
        ax.set_title(model.name, fontsize=9)
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig


def si_tokens() -> FuncFormatter:
    """Tick labels for token and batch counts: powers of two as the field writes them (4K for
    4,096 tokens, 32K, 1M for 2^20), other counts with decimal prefixes (1k, 10k).

    >>> f = si_tokens()
    >>> [f(x, 0) for x in (8, 4096, 32768, 2**20, 1000, 50_000)]
    ['8', '4K', '32K', '1M', '1k', '50k']
    """

    def fmt(x: float, _pos: int) -> str:
        if x >= 1024 and float(x).is_integer() and int(x) & (int(x) - 1) == 0:
            return f"{int(x) // 2**20}M" if x >= 2**20 else f"{int(x) // 1024}K"
        for scale, p in ((1e6, "M"), (1e3, "k")):
            if x >= scale:
                return f"{x / scale:g}{p}"
        return f"{x:g}"

    return FuncFormatter(fmt)


def plot_lifetime_split(
    target_losses: Sequence[float], *, inference_tokens: np.ndarray, ax: plt.Axes | None = None
) -> plt.Figure:
    """Overtraining factor vs lifetime inference/pretraining cost ratio at the optimum.

    One curve per target loss, traced by varying the tokens served; overtraining is the
    book's one definition, D / D*(N) (``inference_optimal.overtraining_factor``, Besiroglu
    et al.'s refit, the law ``compute_split`` optimises). Guides mark equal costs (ratio 1,
    "a third each" for two of the three) and 100x overtraining.
    """
    if len(target_losses) == 0:
        raise ValueError("target_losses must name at least one loss")
    law = scaling_laws.parametric_law("besiroglu2024")
    with style():
        fig, ax = new_axes(ax)
        for loss, color, marker in zip(target_losses, PALETTE, MARKERS, strict=False):
            rs = [
                compute_split.lifetime_optimum(target_loss=loss, inference_tokens=d)
                for d in inference_tokens
            ]
            over = [
                inference_optimal.overtraining_factor(
                    law, n_params=r["n_params"], n_tokens=r["n_tokens"]
                )
                for r in rs
            ]
            ax.plot(
                [r["cost_ratio"] for r in rs],
                over,
                color=color,
                marker=marker,
                markersize=3.5,
                label=f"target loss {loss:.2f} nats/token (compute-optimal N = "
                f"{rs[0]['n_params'] / units.GIGA:,.0f}B)",
            )
        ax.axvline(1.0, color="0.3", linestyle="--", linewidth=0.9)
        ax.axhline(100.0, color="0.3", linestyle=":", linewidth=0.9)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(_PLAIN)
        ax.yaxis.set_major_formatter(_PLAIN)
        ax.set_xlabel("lifetime inference cost / pretraining cost at the optimum (ratio)")
        ax.set_ylabel("overtraining D / D*(N) (ratio)")
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig
