"""Sparsity and the scale-up domain: expert all-to-all, parameter bounds, pipelining.

A mixture-of-experts layer sends each token's activation (d_model values) to the
k chips holding its experts and gets the results back: per decode step each chip
moves (B / n) k d (b_dispatch + b_combine) bytes per MoE layer each way, a fraction
(1 - m / n) of which leaves a domain of m chips. Compared with the step's compute,
B f / (n P), the ratio does not depend on B or n: it is fixed by k, d, the layer
count and the link's bandwidth against the chip's peak. That is why expert
parallelism lives inside the fast scale-up fabric, and why the fabric's HBM,
n x HBM per chip, bounds the total parameters a fast MoE can have.

Pipelining S stages of c chips each divides weights per chip by S, but keeping S
stages busy needs S micro-batches in flight, so each chip's KV cache stays at
B T k / c: the KV cache cannot be sharded across stages. Per-token latency is the
sum of S stage times, which is the unpipelined step time (Pope et al. 2023,
arXiv:2211.05102, sec. 3; DeepSeek-AI 2024, arXiv:2412.19437, sec. 3.4).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from . import accounting, comms, inference, kv_cache, units
from .specs import Accelerator, Model


def scale_up_to_out_ratio(acc: Accelerator) -> float:
    """How many times faster a chip's scale-up link is than its scale-out NIC (per direction).

    >>> from llmphys import specs
    >>> scale_up_to_out_ratio(specs.accelerator("h100_sxm"))
    9.0
    """
    return acc.scale_up_bytes_per_s_per_direction / acc.scale_out_bytes_per_s_per_direction


def expert_all_to_all(
    model: Model,
    *,
    batch_size: float,
    n_chips: int,
    link_bytes_per_s: float,
    chips_per_domain: int | None = None,
    destinations_per_token: float | None = None,
    dispatch_bytes: float = 1.0,
    combine_bytes: float = 2.0,
) -> dict[str, float]:
    """Bytes each chip sends per decode step for MoE dispatch and combine, and the time.

    Per chip and direction: (B/n) x destinations x d x (b_dispatch + b_combine) x L_moe x
    off, where off = 1 - m/n is the share of destinations outside the chip's group of m
    (m = 1: every other chip; m = domain: traffic that leaves the domain). Defaults: k
    destinations, FP8 dispatch and BF16 combine as in DeepSeek-V3 (sec. 3.3).

    >>> from llmphys import specs
    >>> r = expert_all_to_all(specs.model("deepseek_v3"), batch_size=4096, n_chips=8,
    ...                       link_bytes_per_s=450e9)
    >>> round(r["time_s"] * 1e3, 2)  # ms per step inside one HGX H100 box
    9.93
    """
    if model.moe is None:
        raise ValueError(f"{model.key} is dense: it has no experts to route to")
    units.check_positive("batch_size", batch_size)
    units.check_positive("n_chips", n_chips)
    units.check_positive("link_bytes_per_s", link_bytes_per_s)
    m = 1 if chips_per_domain is None else chips_per_domain
    if not 1 <= m <= n_chips:
        raise ValueError(f"chips_per_domain must lie in [1, n_chips={n_chips}], got {m!r}")
    dest = (
        model.moe.n_experts_per_token if destinations_per_token is None else destinations_per_token
    )
    layers = accounting.n_moe_layers(model)
    # bytes each chip holds for all groups; the one all-to-all formula sends (p - 1)/p of them
    # over p = n/m groups, so 1 - m/n leave the chip's group
    held = (batch_size / n_chips) * dest * model.d_model * (dispatch_bytes + combine_bytes) * layers
    p = n_chips / m
    return {
        "bytes_per_chip": held * (1.0 - m / n_chips),
        "time_s": comms.all_to_all_time_s(held, p, link_bytes_per_s=link_bytes_per_s),
    }


def max_total_params(
    acc: Accelerator, *, n_chips: int, weight_bytes_per_param: float, weight_fraction: float = 0.5
) -> float:
    """Parameters whose weights fit in ``weight_fraction`` of n chips' HBM: f n HBM / b.

    >>> from llmphys import specs
    >>> round(max_total_params(specs.accelerator("gb200"), n_chips=72,
    ...                        weight_bytes_per_param=1.0) / 1e12, 2)  # trillions, FP8, NVL72
    7.19
    """
    units.check_positive("n_chips", n_chips)
    units.check_fraction("weight_fraction", weight_fraction)
    units.check_positive("weight_bytes_per_param", weight_bytes_per_param)
    return weight_fraction * n_chips * acc.hbm_bytes / weight_bytes_per_param


def pipelined_decode(
    model: Model,
    acc: Accelerator,
    *,
    n_stages: int,
    chips_per_stage: int,
    batch_size: int,
    context_tokens: int,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> dict[str, float]:
    """Weights and KV per chip, token latency and tokens/s per chip with S pipeline stages.

    S micro-batches of B sequences are in flight; each stage holds 1/S of the layers.
    Stage time is t_step(B on c chips) / S. A token needs S stage times, t_step; the
    pipeline finishes B tokens every stage time on S c chips, B / (c t_step) per chip.
    Neither depends on S.

    >>> from llmphys import specs
    >>> p1, p4 = (pipelined_decode(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...           n_stages=s, chips_per_stage=8, batch_size=64, context_tokens=4096)
    ...           for s in (1, 4))
    >>> w1, w4 = p1["weight_bytes_per_chip"], p4["weight_bytes_per_chip"]
    >>> round(w4 / w1, 2), p4["kv_bytes_per_chip"] == p1["kv_bytes_per_chip"]
    (0.25, True)
    """
    units.check_positive("n_stages", n_stages)
    units.check_positive("chips_per_stage", chips_per_stage)
    step = inference.decode_step(
        model,
        acc,
        batch_size=batch_size,
        context_tokens=context_tokens,
        n_chips=chips_per_stage,
        weight_dtype=weight_dtype,
        kv_bytes_per_element=kv_bytes_per_element,
    )
    stage_s = step["step_time_s"] / n_stages
    kv_all = (
        n_stages
        * batch_size
        * kv_cache.kv_cache_bytes(
            model, n_tokens=context_tokens, bytes_per_element=kv_bytes_per_element
        )
    )
    return {
        "weight_bytes_per_chip": inference.weight_bytes_stored(model, weight_dtype=weight_dtype)
        / (n_stages * chips_per_stage),
        "kv_bytes_per_chip": kv_all / (n_stages * chips_per_stage),
        "token_latency_s": n_stages * stage_s,
        "tokens_per_s_per_chip": batch_size / stage_s / (n_stages * chips_per_stage),
    }


def pipeline_boundary_slack(model: Model, acc: Accelerator, *, layers_per_stage: int) -> float:
    """EP traffic time over pipeline-boundary traffic time, per token and stage; >= 1 is safe.

    A stage's MoE layers move 2 k d bytes per token per layer over scale-up; the boundary
    moves d bytes over scale-out. Ratio = 2 k L_stage W_out / W_up.

    >>> from llmphys import specs
    >>> round(pipeline_boundary_slack(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
    ...                               layers_per_stage=1), 2)
    1.78
    """
    if model.moe is None:
        raise ValueError(f"{model.key} is dense: no expert traffic to hide behind")
    units.check_positive("layers_per_stage", layers_per_stage)
    return 2 * model.moe.n_experts_per_token * layers_per_stage / scale_up_to_out_ratio(acc)
