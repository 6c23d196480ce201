"""The memory and time a training run costs, per parameter and per run.

Mixed-precision training with Adam keeps, for every parameter, a low-precision
copy of the weight and its gradient for the matmuls, plus an FP32 master weight
and Adam's two FP32 moments for the update (Micikevicius et al. 2018,
arXiv:1710.03740; Rajbhandari et al. 2020, "ZeRO", arXiv:1910.02054, sec. 3.1):

    2 (bf16 weight) + 2 (bf16 gradient) + 4 (fp32 master) + 4 + 4 (Adam m, v) = 16 bytes.

A run of C FLOP on n chips of peak P at model-FLOP utilisation (MFU) u takes
C / (n P u) seconds.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from . import units

OPTIMIZER_STATES = {"adamw": 2, "adam": 2, "sgd_momentum": 1, "sgd": 0}


def training_state_bytes_per_param(
    *,
    weight_dtype: str = "bf16",
    grad_dtype: str = "bf16",
    master_weights: bool = True,
    optimizer: str = "adamw",
) -> dict[str, float]:
    """Bytes of training state per parameter, by part (activations excluded).

    Optimizer moments and master weights are FP32. Sum the parts for the total.

    >>> parts = training_state_bytes_per_param()
    >>> parts, sum(parts.values())
    ({'weights': 2.0, 'gradients': 2.0, 'master_weights': 4.0, 'optimizer_states': 8.0}, 16.0)
    """
    if optimizer not in OPTIMIZER_STATES:
        raise ValueError(
            f"optimizer={optimizer!r} is not known; allowed: {', '.join(OPTIMIZER_STATES)}"
        )
    fp32 = units.bytes_per_element("fp32")
    return {
        "weights": units.bytes_per_element(weight_dtype),
        "gradients": units.bytes_per_element(grad_dtype),
        "master_weights": fp32 if master_weights else 0.0,
        "optimizer_states": OPTIMIZER_STATES[optimizer] * fp32,
    }


def training_time_s(
    train_flop: float, *, n_chips: int, peak_flop_per_s: float, mfu: float
) -> float:
    """Wall-clock seconds for ``train_flop`` on ``n_chips`` at utilisation ``mfu``: C / (n P u).

    >>> round(training_time_s(3.8e25, n_chips=16_384, peak_flop_per_s=989.4e12, mfu=0.4) / 86400)
    68
    """
    units.check_positive("train_flop", train_flop)
    units.check_positive("n_chips", n_chips)
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    units.check_fraction("mfu", mfu)
    return train_flop / (n_chips * peak_flop_per_s * mfu)


def model_flop_utilization(
    train_flop: float, *, time_s: float, n_chips: int, peak_flop_per_s: float
) -> float:
    """MFU: useful model FLOP per second over the cluster's dense peak, C / (t n P).

    Counts only the model's FLOP (6ND), not recomputation (Chowdhery et al. 2022, app. B).
    """
    units.check_positive("train_flop", train_flop)
    units.check_positive("time_s", time_s)
    units.check_positive("n_chips", n_chips)
    units.check_positive("peak_flop_per_s", peak_flop_per_s)
    return train_flop / (time_s * n_chips * peak_flop_per_s)
