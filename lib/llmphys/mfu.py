"""Model FLOP utilisation (MFU): the share of a cluster's peak that does the model's arithmetic.

PaLM's definition (Chowdhery et al. 2022, arXiv:2204.02311, app. B): with observed
throughput of R tokens/s on n chips of dense peak P,

    MFU = R (6 N + 12 L H Q T) / (n P),

where 6N counts the weight matmuls forward and backward, and 12 L H Q T the attention
scores and weighted values (L layers, H heads of width Q, sequence length T). Work the
hardware repeats for rematerialisation does not count (that is "hardware FLOP
utilisation"). Over a whole run, the same ratio from total model FLOP and chip-hours also
charges downtime, restarts and slow steps.

Published anchors come from data/training_runs.toml (one copy, shared with the step-time
model in ``predict``); the chapter recomputes each ratio.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import functools
import tomllib

from . import units


@functools.cache
def published_runs() -> dict[str, dict]:
    """The published facts the chapter recomputes, read from data/training_runs.toml.

    One copy of each fact: the step-level runs (PaLM's throughput, Llama 3's table 4) are
    the step-time model's test set too, and the whole-run totals sit in [run_totals].
    """
    from . import predict, specs  # predict imports this module: import it on first use
    with open(specs.data_dir() / "training_runs.toml", "rb") as f:
        raw = tomllib.load(f)
    palm, palm_model = raw["palm_540b"], predict.model_spec(raw["palm_540b"]["model"])
    llama = [raw[k] for k in ("llama3_405b_8k", "llama3_405b_16k", "llama3_405b_128k")]
    l3, ds = raw["run_totals"]["llama31_405b"], raw["run_totals"]["deepseek_v3"]
    return {
        "palm_540b": {
            "n_params": palm_model.published_n_params, "n_layers": palm_model.n_layers,
            "n_heads": palm_model.n_heads, "d_head": palm_model.d_head,
            "seq_len": palm["seq_len"], "tokens_per_s": palm["measured_value"],
            "n_chips": palm["n_chips"], "accelerator": palm["accelerator"],
            "reported_mfu": palm["published_mfu"],
            "source": f"{palm['source']}, {palm['table']}"},
        "llama3_405b": {
            "n_gpus": tuple(r["n_chips"] for r in llama),
            "tflop_per_s_per_gpu": tuple(r["measured_value"] for r in llama),
            "reported_mfu": tuple(r["published_mfu"] for r in llama),
            "seq_len": tuple(r["seq_len"] for r in llama),
            "context_parallel": tuple(r["cp"] for r in llama),
            "accelerator": llama[0]["accelerator"], "gpu_hours": l3["chip_hours"],
            "train_flop": l3["train_flop"],
            "source": f"{llama[0]['source']}, table 4; {l3['source']}"},
        "deepseek_v3": {
            "gpu_hours": ds["chip_hours"], "n_tokens": ds["n_tokens"],
            "n_active_params": ds["n_active_params"], "accelerator": ds["accelerator"],
            "source": ds["source"]},
    }


def __getattr__(name: str):
    """``mfu.PUBLISHED_RUNS``: ``published_runs()``, read when first used, so importing the
    module needs no data folder (PEP 562 module attribute)."""
    if name == "PUBLISHED_RUNS":
        return published_runs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def palm_flop_per_token(n_params: float, *, n_layers: int, n_heads: int, d_head: int,
                        seq_len: int) -> float:
    """Training FLOP per token in PaLM's MFU: 6 N + 12 L H Q T (Chowdhery et al. 2022, app. B).

    >>> r = published_runs()["palm_540b"]
    >>> round(palm_flop_per_token(r["n_params"], n_layers=118, n_heads=48, d_head=256,
    ...                           seq_len=2048) / 1e12, 3)  # TFLOP per token
    3.278
    """
    units.check_positive("n_params", n_params)
    for name, v in (("n_layers", n_layers), ("n_heads", n_heads), ("d_head", d_head),
                    ("seq_len", seq_len)):
        units.check_positive(name, v)
    return 6.0 * n_params + 12.0 * n_layers * n_heads * d_head * seq_len


def mfu_from_throughput(tokens_per_s: float, *, flop_per_token: float, n_chips: int,
                        peak_flop_per_s: float) -> float:
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
