"""Model FLOP utilisation (MFU): the share of a cluster's peak that does the model's arithmetic.

PaLM's definition (Chowdhery et al. 2022, arXiv:2204.02311, app. B): with observed
throughput of R tokens/s on n chips of dense peak P,

    MFU = R (6 N + 12 L H Q T) / (n P),

where 6N counts the weight matmuls forward and backward, and 12 L H Q T the attention
scores and weighted values (L layers, H heads of width Q, sequence length T). Work the
hardware repeats for rematerialisation does not count (that is "hardware FLOP
utilisation"). Over a whole run, the same ratio from total model FLOP and chip-hours also
charges downtime, restarts and slow steps.

Published anchors are kept below with their sources; the chapter recomputes each ratio.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from . import units

PUBLISHED_RUNS = {
    "palm_540b": {
        "n_params": 540.35e9, "n_layers": 118, "n_heads": 48, "d_head": 256, "seq_len": 2048,
        "tokens_per_s": 238.3e3, "n_chips": 6144, "accelerator": "tpu_v4", "reported_mfu": 0.462,
        "source": "Chowdhery et al. 2022 (arXiv:2204.02311), app. B: 238.3K tokens/s "
                  "on 6144 TPU v4 chips, 46.2% MFU (57.8% hardware FLOP utilisation).",
    },
    "llama3_405b": {
        "n_gpus": (8192, 16_384, 16_384), "tflop_per_s_per_gpu": (430.0, 400.0, 380.0),
        "reported_mfu": (0.43, 0.41, 0.38), "accelerator": "h100_sxm",
        "gpu_hours": 30.84e6, "train_flop": 3.8e25,
        "source": "Dubey et al. 2024 (arXiv:2407.21783), table 4 (BF16 TFLOP/s per GPU and MFU "
                  "for three 405B configurations; the third uses 128K-token context); "
                  "3.8e25 FLOP of pre-training as the paper states; 30.84M H100 GPU-hours on "
                  "the Llama 3.1 model card.",
    },
    "deepseek_v3": {
        "gpu_hours": 2.664e6, "n_tokens": 14.8e12, "n_active_params": 37e9,
        "accelerator": "h100_sxm",
        "source": "DeepSeek-AI 2024 (arXiv:2412.19437), table 1 and sec. 1: pre-training on "
                  "14.8T tokens took 2664K H800 GPU-hours (2.788M with context extension and "
                  "post-training), trained in FP8. The H800 has the H100 SXM's tensor cores.",
    },
}


def palm_flop_per_token(n_params: float, *, n_layers: int, n_heads: int, d_head: int,
                        seq_len: int) -> float:
    """Training FLOP per token in PaLM's MFU: 6 N + 12 L H Q T (Chowdhery et al. 2022, app. B).

    >>> r = PUBLISHED_RUNS["palm_540b"]
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


def palm_540b_mfu() -> float:
    """PaLM 540B's MFU recomputed from its published throughput on 6,144 TPU v4 (fraction).

    :func:`mfu_from_throughput` with :func:`palm_flop_per_token` (Chowdhery et al. 2022,
    arXiv:2204.02311, app. B).

    >>> round(100 * palm_540b_mfu(), 1)
    46.2
    """
    from . import specs

    r = PUBLISHED_RUNS["palm_540b"]
    flop = palm_flop_per_token(r["n_params"], n_layers=r["n_layers"], n_heads=r["n_heads"],
                               d_head=r["d_head"], seq_len=r["seq_len"])
    return mfu_from_throughput(r["tokens_per_s"], flop_per_token=flop, n_chips=r["n_chips"],
                               peak_flop_per_s=specs.accelerator("tpu_v4").peak_bf16_flop_per_s)


def run_level_mfu(run_key: str) -> float:
    """A published run's MFU from its total FLOP over its GPU-hours at the H100's dense BF16 peak.

    ``run_key``: ``"llama3_405b"`` (the published training FLOP) or ``"deepseek_v3"`` (the FLOP
    counted by :func:`~llmphys.accounting.deepseek_v3_flop_per_token` over the run's tokens).

    >>> round(100 * run_level_mfu("llama3_405b"), 1)
    34.6
    """
    from . import accounting, specs

    peak = specs.accelerator("h100_sxm").peak_bf16_flop_per_s
    r = PUBLISHED_RUNS[run_key]
    if run_key == "llama3_405b":
        return mfu_from_chip_hours(r["train_flop"], chip_hours=r["gpu_hours"], peak_flop_per_s=peak)
    if run_key == "deepseek_v3":
        flop = accounting.deepseek_v3_flop_per_token()
        return mfu_from_chip_hours(flop * r["n_tokens"], chip_hours=r["gpu_hours"],
                                   peak_flop_per_s=peak)
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
