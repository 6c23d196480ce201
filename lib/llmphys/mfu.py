"""Model FLOP utilisation (MFU): the share of a cluster's peak that does the model's arithmetic.

PaLM's definition (Chowdhery et al. 2022, arXiv:2204.02311, app. B): with observed
throughput of R tokens/s on n chips of dense peak P,

    MFU = R (6 N + 12 L H Q T) / (n P),

where 6N counts the weight matmuls forward and backward, and 12 L H Q T the attention
scores and weighted values (L layers, H heads of width Q, sequence length T). Work the
hardware repeats for rematerialisation does not count (that is "hardware FLOP
utilisation"). Over a whole run, the same ratio from total model FLOP and chip-hours also
charges downtime, restarts and slow steps.

Every MFU in the book is one ratio, :func:`utilisation`: model FLOP over chip-seconds times
the dense peak. A measured throughput gives it per second (:func:`mfu_from_throughput`), a
whole run per run (:func:`mfu_from_chip_hours`). The published runs it is applied to are
scenarios and ``training_runs.toml`` rows, worked in :mod:`llmphys.studies.memory_wall`.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from . import units


def palm_flop_per_token(
    n_params: float, *, n_layers: int, n_heads: int, d_head: int, seq_len: int
) -> float:
    """Training FLOP per token in PaLM's MFU: 6 N + 12 L H Q T (Chowdhery et al. 2022, app. B).

    >>> round(palm_flop_per_token(540.35e9, n_layers=118, n_heads=48, d_head=256,
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


def utilisation(model_flop: float, *, chip_s: float, peak_flop_per_s: float) -> float:
    """Model FLOP utilisation: C / (chip-seconds x P), the one formula behind every MFU here.

    ``model_flop`` is the model's FLOP done in ``chip_s`` chip-seconds (chips x seconds) on
    chips of dense peak ``peak_flop_per_s``; recomputed work does not count (Chowdhery et al.
    2022, arXiv:2204.02311, app. B). Dimensionless.

    >>> round(utilisation(3.8e25, chip_s=30.84e6 * 3600, peak_flop_per_s=989.4e12), 3)
    0.346
    """
    units.check_positive("model_flop", model_flop)
    units.check_positive("chip_s", chip_s)
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    return model_flop / (chip_s * peak_flop_per_s)


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
    # one second of the cluster: R F model FLOP in n chip-seconds
    return utilisation(
        tokens_per_s * flop_per_token, chip_s=n_chips, peak_flop_per_s=peak_flop_per_s
    )


def mfu_from_chip_hours(train_flop: float, *, chip_hours: float, peak_flop_per_s: float) -> float:
    """Run-level MFU: total model FLOP over (chip-hours x 3600 x peak) (dimensionless).

    Charges everything the chips did for the run: failures, restarts, evaluation, slow steps.

    >>> round(mfu_from_chip_hours(3.8e25, chip_hours=30.84e6, peak_flop_per_s=989.4e12), 3)
    0.346
    """
    units.check_positive("chip_hours", chip_hours)
    return utilisation(train_flop, chip_s=chip_hours * units.HOUR, peak_flop_per_s=peak_flop_per_s)
