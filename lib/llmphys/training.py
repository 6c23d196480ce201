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

from . import mfu, units

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

    Counts only the model's FLOP (6ND), not recomputation (Chowdhery et al. 2022, app. B):
    :func:`llmphys.mfu.utilisation` over ``time_s`` x ``n_chips`` chip-seconds.
    """
    units.check_positive("time_s", time_s)
    units.check_positive("n_chips", n_chips)
    return mfu.utilisation(train_flop, chip_s=time_s * n_chips, peak_flop_per_s=peak_flop_per_s)


def step_flop(
    n_matmul_params: float,
    *,
    n_layers: int,
    n_heads: int,
    d_head: int,
    batch_size: int,
    seq_len: int,
) -> float:
    """FLOP of one optimizer step on ``batch_size`` causal sequences of ``seq_len`` tokens.

    3 B T (2 N + 2 L H d_head (T + 1)): per token the forward pass costs 2 FLOP per multiplied
    weight (N excludes the embedding look-up) plus the scores QK^T and the weighted sum of V,
    2 x 2 L H d_head FLOP per key over the (T + 1) / 2 keys the average token of a causal
    sequence attends to; the backward pass costs twice the forward. The same count as
    3 x ``accounting.forward_flop_per_token`` at context (T + 1) / 2 for a model without
    sliding windows or MLA. Refs: Kaplan et al. 2020, table 1; Chowdhery et al. 2022, app. B
    count every key for every token (12 L H d_head T), the non-causal convention of MFU.

    >>> # Llama 3.1 405B (403.8e9 multiplied weights), 2,048 x 8,192 tokens; 6ND gives 4.065e19
    >>> f = step_flop(403.8e9, n_layers=126, n_heads=128, d_head=128, batch_size=2048,
    ...               seq_len=8192)
    >>> f"{f:.3e}"
    '4.235e+19'
    """
    units.check_positive("n_matmul_params", n_matmul_params)
    for name, v in (
        ("n_layers", n_layers),
        ("n_heads", n_heads),
        ("d_head", d_head),
        ("batch_size", batch_size),
        ("seq_len", seq_len),
    ):
        units.check_positive(name, v)
    forward_per_token = 2.0 * n_matmul_params + 2.0 * n_layers * n_heads * d_head * (seq_len + 1)
    return 3.0 * batch_size * seq_len * forward_per_token
