"""Step-time model figures: predicted against measured MFU of published training runs
(chapters/04_memory_wall.ipynb, section "Does the model predict real runs?").

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import PercentFormatter

from ._style import MARKERS, PALETTE, new_axes, style


def plot_predicted_vs_measured(
    measured: Sequence[float],
    predicted: Sequence[float],
    *,
    groups: Sequence[str],
    calibration: Sequence[bool],
    labels: Sequence[str] | None = None,
    band: float = 0.15,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """One point per run: measured MFU (x) against predicted (y), y = x and a +/-``band``.

    Points are coloured and shaped by ``groups`` (the chip); runs the model was fitted on
    (``calibration``) are drawn hollow. ``labels`` name the points outside the band.
    """
    x, y = _checked(measured, predicted, groups, calibration)
    if not 0.0 < band < 1.0:
        raise ValueError(f"band must lie in (0, 1), got {band!r}")
    with style():
        fig, ax = new_axes(ax, figsize=(5.6, 5.0))
        hi = 1.1 * max(x.max(), y.max())
        line = np.array([0.0, hi])
        _band_and_points(ax, x, y, line=line, band=band, groups=groups, calibration=calibration)
        if labels is not None:
            for xi, yi, lab in zip(x, y, labels, strict=True):
                if abs(yi - xi) > band * xi:
                    ax.annotate(
                        lab, (xi, yi), textcoords="offset points", xytext=(5, -10), fontsize=7.5
                    )
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        ax.set_aspect("equal")
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("measured MFU, PaLM's count (% of dense peak)")
        ax.set_ylabel("predicted MFU (% of dense peak)")
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig


def plot_serving_predicted_vs_measured(
    measured: Sequence[float],
    predicted: Sequence[float],
    *,
    groups: Sequence[str],
    calibration: Sequence[bool],
    band: float = 0.25,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """One point per published deployment: measured output tokens/s (x) against predicted
    (y), log-log, with y = x and a +/-``band`` region; fitted-on rows drawn hollow
    (chapters/06_economics.ipynb, section "Does the model predict real deployments?")."""
    x, y = _checked(measured, predicted, groups, calibration)
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("measured and predicted throughputs must be positive (log axes)")
    if not 0.0 < band < 1.0:
        raise ValueError(f"band must lie in (0, 1), got {band!r}")
    with style():
        fig, ax = new_axes(ax, figsize=(5.6, 5.0))
        lo, hi = 0.7 * min(x.min(), y.min()), 1.4 * max(x.max(), y.max())
        line = np.geomspace(lo, hi, 50)
        _band_and_points(ax, x, y, line=line, band=band, groups=groups, calibration=calibration)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_xlabel("measured output throughput (tokens/s, whole deployment)")
        ax.set_ylabel("predicted output throughput (tokens/s)")
        ax.legend(loc="upper left", fontsize=7.5)
        fig.tight_layout()
    return fig


def _checked(measured, predicted, groups, calibration) -> tuple[np.ndarray, np.ndarray]:
    """``measured`` and ``predicted`` as float arrays, after checking the four lengths agree."""
    x, y = np.asarray(measured, dtype=float), np.asarray(predicted, dtype=float)
    if not (len(x) == len(y) == len(groups) == len(calibration)) or len(x) == 0:
        raise ValueError(
            "measured, predicted, groups and calibration must have one equal, non-zero length"
        )
    return x, y


def _band_and_points(ax, x, y, *, line, band, groups, calibration) -> None:
    """The y = x line with its +/-``band`` region, and one marker style per group; points the
    model was fitted on (``calibration``) hollow. Shared by the training and serving figures."""
    ax.fill_between(
        line, line * (1 - band), line * (1 + band), color="0.85", label=f"within ±{band:.0%}"
    )
    ax.plot(line, line, color="0.3", linewidth=1.0, label="prediction = measurement")
    calib = np.asarray(calibration, dtype=bool)
    for i, g in enumerate(dict.fromkeys(groups)):
        sel = np.array([gg == g for gg in groups])
        colour, marker = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
        for mask, face, suffix in (
            (sel & ~calib, colour, ""),
            (sel & calib, "none", ", fitted on"),
        ):
            if mask.any():
                ax.plot(
                    x[mask],
                    y[mask],
                    linestyle="none",
                    marker=marker,
                    markersize=7,
                    markerfacecolor=face,
                    markeredgecolor=colour,
                    label=g + suffix,
                )


def plot_latency_under_load(
    rates_per_s: Sequence[float],
    series: dict[str, Sequence[float]],
    *,
    sla_rate_per_s: float,
    max_rate_per_s: float,
    tpot_target_s: float,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """TTFT and TPOT percentiles (ms, log axis) against the request rate (requests/s), with the
    TPOT target, the SLA-bound rate and the max-throughput table's rate as vertical lines
    (chapters/06_economics.ipynb, section "Latency under load"). ``series`` maps a label such
    as "TPOT p90" to seconds at each rate."""
    x = np.asarray(rates_per_s, dtype=float)
    if not series or any(len(v) != len(x) for v in series.values()) or len(x) == 0:
        raise ValueError("series must map labels to one value (s) per rate, and rates be non-empty")
    with style():
        fig, ax = new_axes(ax, figsize=(6.4, 4.2))
        for (label, y), color, marker in zip(series.items(), PALETTE, MARKERS, strict=False):
            ax.plot(x, np.asarray(y) * 1e3, color=color, marker=marker, markersize=4, label=label)
        ax.axhline(
            tpot_target_s * 1e3,
            color="0.3",
            linestyle=":",
            linewidth=1.0,
            label=f"TPOT target {tpot_target_s * 1e3:.0f} ms",
        )
        ax.axvline(
            sla_rate_per_s,
            color="0.3",
            linestyle="--",
            linewidth=1.0,
            label=f"SLA-bound rate {sla_rate_per_s:.1f} requests/s",
        )
        ax.axvline(
            max_rate_per_s,
            color="0.6",
            linestyle="-.",
            linewidth=1.0,
            label=f"max-throughput rate {max_rate_per_s:.1f} requests/s",
        )
        ax.set_yscale("log")
        ax.set_xlabel("request rate (requests/s, Poisson arrivals)")
        ax.set_ylabel("latency (ms)")
        ax.legend(loc="upper left", fontsize=7.0)
        fig.tight_layout()
    return fig


def plot_out_of_source_errors(
    rows: Sequence[dict],
    *,
    band: float = 0.2,
) -> plt.Figure:
    """Four panels of leave-one-source-out errors (``predict.loso_residuals`` rows): predicted
    against measured MFU coloured by source, and the relative error against model size, the
    matmul dtype and the chip (chapters/04_memory_wall.ipynb, "Does the model predict real
    runs?")."""
    if not rows:
        raise ValueError("rows: empty")
    if not 0.0 < band < 1.0:
        raise ValueError(f"band must lie in (0, 1), got {band!r}")
    sources = list(dict.fromkeys(r["source"] for r in rows))
    x = np.array([r["measured_mfu"] for r in rows])
    y = np.array([r["predicted_mfu"] for r in rows])
    err = np.array([r["rel_error"] for r in rows])
    size = np.array([r["n_params"] for r in rows])
    with style():
        fig, axes = plt.subplots(2, 2, figsize=(10.0, 8.0))
        ax = axes[0, 0]
        hi = 1.1 * max(x.max(), y.max())
        line = np.array([0.0, hi])
        ax.fill_between(line, line * (1 - band), line * (1 + band), color="0.85",
                        label=f"within ±{band:.0%}")  # fmt: skip
        ax.plot(line, line, color="0.3", linewidth=1.0)
        for i, s in enumerate(sources):
            sel = np.array([r["source"] == s for r in rows])
            kw = dict(color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)])
            ax.plot(x[sel], y[sel], linestyle="none", markersize=6, label=s, **kw)
            axes[0, 1].plot(size[sel], err[sel], linestyle="none", markersize=6, **kw)
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("measured MFU, causal count (% of dense peak)")
        ax.set_ylabel("predicted MFU, source left out (%)")
        ax.legend(loc="upper left", fontsize=7)
        axes[0, 1].set_xscale("log")
        axes[0, 1].set_xlabel("model parameters (count, log scale)")
        for a, key, title in ((axes[1, 0], "dtype", "matmul dtype"),
                              (axes[1, 1], "accelerator", "chip")):  # fmt: skip
            cats = list(dict.fromkeys(r[key] for r in rows))
            for j, cat in enumerate(cats):
                e = err[np.array([r[key] == cat for r in rows])]
                jitter = np.linspace(-0.15, 0.15, len(e)) if len(e) > 1 else np.zeros(1)
                a.plot(j + jitter, e, linestyle="none", marker="o", markersize=4,
                       color=PALETTE[j % len(PALETTE)])  # fmt: skip
            a.set_xticks(range(len(cats)), cats, rotation=30, ha="right")
            a.set_xlabel(f"{title} (category)")
        for a in (axes[0, 1], axes[1, 0], axes[1, 1]):
            a.axhspan(-band, band, color="0.9")
            a.axhline(0.0, color="0.3", linewidth=1.0)
            a.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
            a.set_ylabel("error, predicted / measured - 1 (%)")
        fig.tight_layout()
    return fig


def plot_gemm_efficiency(
    tokens: Sequence[float],
    curves: dict[str, Sequence[float]],
    *,
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Achieved fraction of the dense peak (y) of one GEMM against the tokens in the
    micro-batch (x, log), one curve per labelled shape (``predict.gemm_efficiency_curve``)."""
    t = np.asarray(tokens, dtype=float)
    if t.ndim != 1 or len(t) < 2 or np.any(t <= 0):
        raise ValueError("tokens must be at least two positive values")
    with style():
        fig, ax = new_axes(ax, figsize=(6.4, 4.2))
        for i, (label, ys) in enumerate(curves.items()):
            if len(ys) != len(t):
                raise ValueError(f"curve {label!r} has {len(ys)} points for {len(t)} token counts")
            ax.plot(t, ys, color=PALETTE[i % len(PALETTE)], linestyle=("-", "--", "-.", ":")[i % 4],
                    label=label)  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("tokens in the micro-batch, m (log scale)")
        ax.set_ylabel("achieved share of the dense peak (%)")
        ax.legend(loc="lower right", fontsize=8)
        fig.tight_layout()
    return fig
