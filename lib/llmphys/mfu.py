"""Model FLOP utilisation (MFU): the share of a cluster's peak that does the model's arithmetic.

PaLM's definition (Chowdhery et al. 2022, arXiv:2204.02311, app. B): with observed
throughput of R tokens/s on n chips of dense peak P,

    MFU = R (6 N + 12 L H Q T) / (n P),

where 6N counts the weight matmuls forward and backward, and 12 L H Q T the attention
scores and weighted values (L layers, H heads of width Q, sequence length T). Work the
hardware repeats for rematerialisation does not count (that is "hardware FLOP
utilisation"). Over a whole run, the same ratio from total model FLOP and chip-hours also
charges downtime, restarts and slow steps.

Published anchors live in the registries with their sources (``data/training_runs.toml`` for
measured throughput; GPU-hours in ``prices.toml``; training FLOP and tokens in
``models.toml``); the chapter recomputes each ratio.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib

from . import accounting, economics, specs, units
from .specs import data_dir


@dataclasses.dataclass(frozen=True, kw_only=True)
class MeasuredThroughput:
    """A run's measured tokens/s on ``n_chips`` chips, with the shape PaLM's FLOP count needs."""

    key: str
    accelerator: str
    n_chips: int
    n_params: float
    n_layers: int
    n_heads: int
    d_head: int
    seq_len: int
    tokens_per_s: float
    reported_mfu: float
    source: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReportedConfigs:
    """Per-GPU throughput and MFU a paper reports for several configurations of one run."""

    key: str
    accelerator: str
    n_gpus: tuple[int, ...]
    context: tuple[str, ...]
    seq_len: tuple[int, ...]
    context_parallel: tuple[int, ...]
    tflop_per_s_per_gpu: tuple[float, ...]
    reported_mfu: tuple[float, ...]
    source: str


_LLAMA3_ROWS = ("llama3_405b_8k", "llama3_405b_16k", "llama3_405b_128k")  # table 4, in order


@functools.cache
def _runs(path: str) -> dict:
    """The two published runs chapter 4 recomputes, built from the step-time model's rows.

    ``data/training_runs.toml`` holds every published run once, with its full layout, for
    :mod:`llmphys.predict`; PaLM's shape comes from its model entry. Nothing is copied here.
    """
    with open(path, "rb") as f:
        table = tomllib.load(f)
    missing = [k for k in ("palm_540b", *_LLAMA3_ROWS) if k not in table]
    if missing:
        raise ValueError(f"training_runs.toml: missing run(s) {missing}")
    palm, shape = table["palm_540b"], specs.model_spec(table["palm_540b"]["model"])
    rows = [table[k] for k in _LLAMA3_ROWS]
    return {
        "palm_540b": MeasuredThroughput(
            key="palm_540b",
            accelerator=palm["accelerator"],
            n_chips=palm["n_chips"],
            n_params=shape.published_n_params,
            n_layers=shape.n_layers,
            n_heads=shape.n_heads,
            d_head=shape.d_head,
            seq_len=palm["seq_len"],
            tokens_per_s=palm["measured_value"],
            reported_mfu=palm["published_mfu"],
            source=f"{palm['source']}, {palm['table']}",
        ),
        "llama3_405b": ReportedConfigs(
            key="llama3_405b",
            accelerator=rows[0]["accelerator"],
            n_gpus=tuple(r["n_chips"] for r in rows),
            context=tuple(f"{r['seq_len'] // 1024}K" for r in rows),
            seq_len=tuple(r["seq_len"] for r in rows),
            context_parallel=tuple(r["cp"] for r in rows),
            tflop_per_s_per_gpu=tuple(r["measured_value"] for r in rows),
            reported_mfu=tuple(r["published_mfu"] for r in rows),
            source=f"{rows[0]['source']}, table 4",
        ),
    }


def training_run(key: str) -> MeasuredThroughput | ReportedConfigs:
    """A published run's measured throughput from ``data/training_runs.toml``.

    >>> training_run("palm_540b").n_chips
    6144
    """
    runs = _runs(str(data_dir() / "training_runs.toml"))
    if key not in runs:
        raise KeyError(f"unknown training run {key!r}; known: {', '.join(runs)}")
    return runs[key]


def palm_flop_per_token(
    n_params: float, *, n_layers: int, n_heads: int, d_head: int, seq_len: int
) -> float:
    """Training FLOP per token in PaLM's MFU: 6 N + 12 L H Q T (Chowdhery et al. 2022, app. B).

    >>> r = training_run("palm_540b")
    >>> round(palm_flop_per_token(r.n_params, n_layers=118, n_heads=48, d_head=256,
    ...                           seq_len=2048) / 1e12, 3)  # TFLOP per token
    3.278
    """
    units.check_positive("n_params", n_params)
    for name, v in (
        ("n_layers", n_layers),
        ("n_heads", n_heads),
        ("d_head", d_head),
        ("seq_len", seq_len),
    ):
        units.check_positive(name, v)
    return 6.0 * n_params + 12.0 * n_layers * n_heads * d_head * seq_len


def mfu_from_throughput(
    tokens_per_s: float, *, flop_per_token: float, n_chips: int, peak_flop_per_s: float
) -> float:
    """MFU from a measured throughput: R F / (n P) (dimensionless).

    >>> round(mfu_from_throughput(238.3e3, flop_per_token=3.278e12, n_chips=6144,
    ...                           peak_flop_per_s=275e12), 3)
    0.462
    """
    units.check_positive("tokens_per_s", tokens_per_s)
    units.check_positive("flop_per_token", flop_per_token)
    units.check_positive("n_chips", n_chips)
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    return tokens_per_s * flop_per_token / (n_chips * peak_flop_per_s)


def mfu_from_chip_hours(train_flop: float, *, chip_hours: float, peak_flop_per_s: float) -> float:
    """Run-level MFU: total model FLOP over (chip-hours x 3600 x peak) (dimensionless).

    Charges everything the chips did for the run: failures, restarts, evaluation, slow steps.

    >>> round(mfu_from_chip_hours(3.8e25, chip_hours=30.84e6, peak_flop_per_s=989.4e12), 3)
    0.346
    """
    units.check_positive("train_flop", train_flop)
    units.check_positive("chip_hours", chip_hours)
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    return train_flop / (chip_hours * units.HOUR * peak_flop_per_s)


def palm_540b_mfu() -> float:
    """PaLM 540B's MFU recomputed from its published throughput on 6,144 TPU v4 (fraction).

    :func:`mfu_from_throughput` with :func:`palm_flop_per_token` (Chowdhery et al. 2022,
    arXiv:2204.02311, app. B).

    >>> round(100 * palm_540b_mfu(), 1)
    46.2
    """
    r = training_run("palm_540b")
    if not isinstance(r, MeasuredThroughput):
        raise TypeError("training_runs.toml must record palm_540b as one measured throughput")
    flop = palm_flop_per_token(
        r.n_params, n_layers=r.n_layers, n_heads=r.n_heads, d_head=r.d_head, seq_len=r.seq_len
    )
    return mfu_from_throughput(
        r.tokens_per_s,
        flop_per_token=flop,
        n_chips=r.n_chips,
        peak_flop_per_s=specs.accelerator(r.accelerator).peak_bf16_flop_per_s,
    )


def run_level_mfu(run_key: str, *, dtype: str = "bf16") -> float:
    """A published run's MFU from its total FLOP over its GPU-hours at the H100's dense BF16 peak.

    ``run_key``: ``"llama3_405b"`` (the published training FLOP over the model card's 30.84M
    GPU-hours) or ``"deepseek_v3"`` (:func:`~llmphys.accounting.deepseek_v3_train_flop` over
    the 2.664M GPU-hours of pre-training); ``dtype`` names the H100 peak it is measured against.

    >>> round(100 * run_level_mfu("llama3_405b"), 1)
    34.6
    """
    peak = specs.accelerator("h100_sxm").peak_flop_per_s(dtype)
    if run_key == "llama3_405b":
        flop = specs.recorded(specs.model("llama31_405b"), "published_train_flop")
        return mfu_from_chip_hours(
            flop,
            chip_hours=economics.price("training_gpu_hours.llama31_405b").value,
            peak_flop_per_s=peak,
        )
    if run_key == "deepseek_v3":
        return mfu_from_chip_hours(
            accounting.deepseek_v3_train_flop(),
            chip_hours=economics.price("training_gpu_hours.deepseek_v3_pretraining").value,
            peak_flop_per_s=peak,
        )
    raise ValueError(f"run_key must be 'llama3_405b' or 'deepseek_v3', got {run_key!r}")


def published_mfu_range() -> tuple[float, float]:
    """Lowest and highest MFU (percent) recomputed for published runs.

    The lowest run-level figure of Llama 3.1 405B and DeepSeek-V3 (:func:`run_level_mfu`), and
    PaLM 540B's from its measured throughput (:func:`palm_540b_mfu`).

    >>> lo, hi = published_mfu_range()
    >>> lo < hi
    True
    """
    low = min(run_level_mfu("llama3_405b"), run_level_mfu("deepseek_v3"))
    return 100 * low, 100 * palm_540b_mfu()
