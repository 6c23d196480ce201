"""Memory-wall figures: growth trends, a measured roofline, FP8/FP4 scaling error,
communication share and goodput vs cluster size (chapters/04_memory_wall.ipynb).

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, NullFormatter, PercentFormatter

from .. import trends
from ..specs import Accelerator
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

_METRIC_LABELS = {
    "peak_headline": "peak FLOP/s, narrowest native dtype",
    "peak_bf16": "peak FLOP/s, BF16",
    "hbm_bandwidth": "HBM bandwidth",
    "hbm_capacity": "HBM capacity",
    "scale_up": "scale-up link (per direction)",
    "scale_out": "scale-out NIC (per direction)",
}


def plot_growth_trends(
    accs: Sequence[Accelerator],
    *,
    metrics: Sequence[str] = (
        "peak_headline",
        "peak_bf16",
        "hbm_bandwidth",
        "scale_up",
        "scale_out",
    ),
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Each metric over launch year, divided by its fitted value at the first year (log y).

    One colour per metric: dots are chips, the line is the least-squares exponential fit,
    and the legend gives the fitted growth per two years (``trends.registry_growth``).
    """
    if len(accs) < 2:
        raise ValueError("accs must hold at least two accelerators")
    with style():
        fig, ax = (figure_of(ax), ax) if ax is not None else plt.subplots(figsize=(6.4, 4.2))
        years = np.array([a.launch_year for a in accs], dtype=float)
        t0 = years.min()
        grid = np.linspace(t0, years.max(), 50)
        for metric, sty in zip(metrics, series_styles(len(metrics)), strict=True):
            values = np.array([trends.METRICS[metric](a) for a in accs])
            slope, intercept = np.polyfit(years - t0, np.log(values), 1)
            g = trends.registry_growth(accs, metric)
            jitter = 0.06 * (metrics.index(metric) - (len(metrics) - 1) / 2)
            ax.plot(
                years + jitter,
                values / np.exp(intercept),
                linestyle="none",
                marker=sty["marker"],
                color=sty["color"],
                alpha=0.7,
                markersize=5,
            )
            ax.plot(
                grid,
                np.exp(slope * (grid - t0)),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=f"{_METRIC_LABELS[metric]}: x{g:.2f} / 2 yr",
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:g}x"))
        ax.set_xticks(np.arange(t0, years.max() + 1))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:.0f}"))
        ax.set_xlabel("launch year (year)")
        ax.set_ylabel(f"relative to the fit at {t0:.0f} (ratio)")
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_measured_roofline(result: Mapping, *, ax: plt.Axes | None = None) -> plt.Figure:
    """The roofline built from measured P and W, with measured and predicted kernel points.

    ``result`` is the dict returned by ``benchmark.measured_roofline``.
    """
    with style():
        fig, ax = new_axes(ax)
        peak, bw = result["peak_flop_per_s"], result["bytes_per_s"]
        pts = result["points"]
        lo = min(0.1, min(p["intensity"] for p in pts) / 3)
        hi = max(1e3, 3 * max(p["intensity"] for p in pts))
        x = np.logspace(np.log10(lo), np.log10(hi), 200)
        ax.plot(
            x,
            np.minimum(peak, bw * x),
            color=PALETTE[0],
            label=f"roof from measured P and W (ridge {result['ridge']:.1f} FLOP/B)",
        )
        for p, marker, color in zip(pts, MARKERS, PALETTE[1:], strict=False):
            m, n, k = p["shape"]
            ax.plot(
                [p["intensity"]],
                [p["flop_per_s"]],
                marker=marker,
                color=color,
                linestyle="none",
                label=f"measured {m}x{k} @ {k}x{n}",
            )
            ax.plot(
                [p["intensity"]],
                [p["predicted_flop_per_s"]],
                marker=marker,
                color=color,
                markerfacecolor="none",
                linestyle="none",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP/byte, FP32)")
        ax.set_ylabel("throughput (FLOP/s)")
        ax.yaxis.set_major_formatter(si_formatter("FLOP/s"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.legend(loc="lower right", fontsize=7.5, title="hollow: predicted", title_fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_scaling_error(
    errors: Mapping[str, Mapping[str, float]], *, ax: plt.Axes | None = None
) -> plt.Figure:
    """Dot plot of relative RMS error (log x) per scaling scheme (rows) and format (markers).

    ``errors[scheme][format]`` is a dimensionless error, e.g. from
    ``precision.relative_rms_error``; an error of 1 means the tensor was lost entirely.
    """
    if not errors:
        raise ValueError("errors must name at least one scheme")
    with style():
        schemes = list(errors)
        formats = list(dict.fromkeys(f for e in errors.values() for f in e))
        if ax is None:
            fig, ax = plt.subplots(figsize=(STYLE["figure.figsize"][0], 1.2 + 0.45 * len(schemes)))
        fig = figure_of(ax)
        y = np.arange(len(schemes))
        for fmt, color, marker in zip(formats, PALETTE, MARKERS, strict=False):
            ax.plot(
                [errors[s].get(fmt, np.nan) for s in schemes],
                y,
                linestyle="none",
                marker=marker,
                color=color,
                markersize=7,
                label=fmt,
            )
        ax.set_yticks(y, schemes)
        ax.set_ylim(len(schemes) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.set_xlabel("relative RMS error ||x_hat - x|| / ||x|| (ratio)")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
    return fig


def plot_comm_share(
    n_gpus: Sequence[float],
    shares: Mapping[str, Sequence[float]],
    *,
    marks: Mapping[float, str] | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Share of a training step spent communicating vs GPU count (log x), one line per fabric.

    ``marks`` maps GPU counts to labels drawn as vertical guides (e.g. the series' points).
    """
    if not shares:
        raise ValueError("shares must hold at least one curve")
    with style():
        fig, ax = new_axes(ax)
        for (label, s), sty in zip(shares.items(), series_styles(len(shares)), strict=True):
            ax.plot(
                n_gpus,
                100 * np.asarray(s),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=label,
            )
        for n, text in (marks or {}).items():
            ax.axvline(n, color="0.5", linewidth=0.8, linestyle=":")
            ax.annotate(
                text,
                (n, 101),
                ha="center",
                va="bottom",
                fontsize=7.5,
                color="0.3",
                annotation_clip=False,
            )
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.set_ylim(0, 100)
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.set_xlabel("GPUs in the data-parallel group (count)")
        ax.set_ylabel("step time spent in exposed communication (%)")
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_goodput(
    n_gpus: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    *,
    simulated: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Goodput (useful fraction of wall time) vs GPU count, closed form as lines.

    ``simulated`` maps a curve's label to (GPU counts, Monte-Carlo goodputs), drawn as dots.
    """
    with style():
        fig, ax = new_axes(ax)
        for (label, g), sty in zip(curves.items(), series_styles(len(curves)), strict=True):
            ax.plot(
                n_gpus,
                100 * np.asarray(g),
                color=sty["color"],
                linestyle=sty["linestyle"],
                label=label,
            )
            if simulated and label in simulated:
                xs, ys = simulated[label]
                ax.plot(
                    xs,
                    100 * np.asarray(ys),
                    linestyle="none",
                    marker=sty["marker"],
                    color=sty["color"],
                    markersize=5,
                )
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.yaxis.set_major_formatter(PercentFormatter())
        ax.set_xlabel("GPUs in the job (count)")
        ax.set_ylabel("goodput: kept work / wall time (%)")
        ax.legend(loc="lower left", fontsize=7.5, title="dots: Monte Carlo", title_fontsize=7.5)
        fig.tight_layout()
    return fig
