"""Training memory per GPU under ZeRO stages 0-3: model state, activations and data-parallel
traffic, for one registered model.

ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054, sec. 5 and fig. 1) shards the 16 bytes per
parameter of mixed-precision Adam over N_d data-parallel ranks in three steps: the optimizer
state (stage 1), then the gradients (stage 2), then the weights (stage 3). It does not shard
activations: each rank keeps those of its own micro-batch, so the activation term is the same
at every stage and only tensor (with sequence) parallelism or recomputation shrinks it
(Korthikanti et al. 2022, arXiv:2205.05198). Stage 3 buys its memory with traffic: the
weights are all-gathered before the forward and again before the backward pass, 1.5 times the
bytes of stage 0's gradient all-reduce (ZeRO sec. 7.2.2).

The formulas live in ``parallelism`` (bytes) and ``comms`` (traffic); this module only lines
them up, stage by stage, for one model.

Home: chapters/01_foundations.ipynb, section "The cost of a training step".
"""

from __future__ import annotations

from . import accounting, comms, parallelism, units
from .specs import Model

STAGES = (0, 1, 2, 3)
SHARDED = {0: "nothing", 1: "optimizer state", 2: "+ gradients", 3: "+ weights"}
"""What each stage shards across the data-parallel ranks (ZeRO fig. 1: P_os, P_os+g, P_os+g+p)."""


def zero_stage_memory(
    model: Model,
    *,
    n_dp: int,
    seq_len: int,
    micro_batch: int,
    tp: int = 1,
    recompute: str = "selective",
) -> list[dict[str, float]]:
    """Per-GPU bytes for each ZeRO stage: ``state_bytes``, ``activation_bytes``, ``total_bytes``,
    with ``state_bytes_per_param`` and ``dp_traffic_bytes`` (sent per rank per step, before the
    ring's (p - 1)/p factor), one dict per stage 0-3.

    State: N / t x parallelism.zero_bytes_per_param; activations: L x
    parallelism.activation_bytes_per_layer (16-bit, no dropout, the model's own MLP and KV heads).

    >>> from llmphys import specs
    >>> rows = zero_stage_memory(specs.model("llama3_8b"), n_dp=64, seq_len=8192, micro_batch=1)
    >>> [round(r["state_bytes"] / 1e9, 1) for r in rows]  # GB: 16, 4 + 12/64, 2 + 14/64, 16/64 x N
    [128.5, 33.6, 17.8, 2.0]
    """
    units.check_positive("n_dp", n_dp)
    units.check_positive("tp", tp)
    if recompute not in parallelism.RECOMPUTE:
        raise ValueError(f"recompute must be one of {parallelism.RECOMPUTE}, got {recompute!r}")
    n = accounting.n_params(model) / tp
    act = model.n_layers * parallelism.activation_bytes_per_layer(
        seq_len=seq_len,
        micro_batch=micro_batch,
        d_model=model.d_model,
        n_heads=model.n_heads,
        tp=tp,
        recompute=recompute,
        n_kv_heads=model.n_kv_heads,
        d_ff=model.d_ff,
        gated_mlp=model.mlp in ("swiglu", "geglu"),
        dropout=False,
    )
    rows = []
    for stage in STAGES:
        bpp = parallelism.zero_bytes_per_param(stage, n_dp)
        rows.append(
            {
                "stage": float(stage),
                "state_bytes_per_param": bpp,
                "state_bytes": n * bpp,
                "activation_bytes": act,
                "total_bytes": n * bpp + act,
                "dp_traffic_bytes": n * comms.zero_dp_bytes_per_param(stage),
            }
        )
    return rows
