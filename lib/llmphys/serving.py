"""Serving mechanisms: per-operator balance, batch-1 latency floors and token prices.

:mod:`~llmphys.inference` gives the roofline of one decode step and one prefill. The functions
here compose it for any model and chip passed in; the worked cases chapter 6 shows and the claims
ledger judges (a model at the largest batch that fits, a rack, a slow mode) are
:mod:`llmphys.studies.serving`.

**Operators and floors.** The whole-step balance batch of ``inference.balance_batch`` pools
every weight of a step. Operators balance separately: a dense matmul (attention projections,
shared experts, dense layers) multiplies each weight by all B tokens, 2B FLOP per weight read,
so it turns compute-bound at B = ridge x (b / 2) for b bytes per weight; a routed expert sees
only B k / E of them (top-k of E experts, uniform routing), so it needs B = ridge x (b / 2) x
E / k. At batch 1 the floor on the time per output token is the weights read over bandwidth.
Sharding every weight evenly over n chips divides it by n, but expert parallelism keeps each
routed expert whole on one chip: the token's critical path reads one expert per MoE layer at
one chip's bandwidth. Each collective also costs a latency that no bandwidth removes (Megatron
tensor parallelism: two all-reduces per layer, Shoeybi et al. 2019; expert parallelism: a
dispatch and a combine all-to-all per MoE layer).

**Prices.** A token costs n x price_per_chip_hour x t_step(B) / (3600 s x B) at the recorded
on-demand price of ``data/prices.toml`` (:func:`usd_per_chip_hour`).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import math

from . import accounting, economics, inference, predict, specs, units  # noqa: F401 (specs: doctests)
from .specs import Accelerator, Model

__all__ = [
    "QUOTED_RACK_WAIT_S",
    "batch1_latency_floor_s",
    "cost_per_token_at_max_batch_usd",
    "decode_efficiency",
    "operator_balance_batch",
    "output_input_cost_ratio",
    "rack_wait_overstatement",
    "usd_per_chip_hour",
]


def usd_per_chip_hour(chip_key: str) -> float:
    """The recorded on-demand rental price of one ``chip_key`` GPU for an hour, USD.

    >>> usd_per_chip_hour("h100_sxm") > 0
    True
    """
    return economics.price(f"gpu_hour_usd.{chip_key}").value


def _ridge(acc: Accelerator, weight_dtype: str) -> float:
    """FLOP per byte of weights at which a matmul with ``weight_dtype`` weights balances."""
    return inference._peak(acc, weight_dtype) / acc.hbm_bytes_per_s


def operator_balance_batch(
    model: Model, acc: Accelerator, *, weight_dtype: str = "bf16"
) -> dict[str, float]:
    """Batch (tokens per step) at which each kind of operator turns compute-bound, no cache.

    dense = (P / W) (b / 2); routed_experts = dense x E / k (MoE models only). Pope et al.
    2023 (arXiv:2211.05102), sec. 3.3, for the dense case; the expert case divides the
    batch by E / k tokens per expert.

    >>> from llmphys import specs
    >>> b = operator_balance_batch(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
    ...                            weight_dtype="fp8")
    >>> round(b["dense"]), round(b["routed_experts"])
    (295, 9451)
    """
    dense = _ridge(acc, weight_dtype) * units.bytes_per_element(weight_dtype) / 2.0
    out = {"dense": dense}
    if model.moe is not None:
        out["routed_experts"] = dense * model.moe.n_experts / model.moe.n_experts_per_token
    return out


QUOTED_RACK_WAIT_S = 20e-3
"""The summaries' 'even if you use an entire rack for one user, you still have to wait ~20 ms'
(data/claims, P13): the figure the single-user floors are compared with."""


def rack_wait_overstatement(
    model: Model, acc: Accelerator, *, n_chips: int, weight_dtype: str, expert_parallel: bool
) -> float:
    """How many times the quoted ~20 ms exceeds the bandwidth floor of one user's token:
    ``QUOTED_RACK_WAIT_S`` / :func:`batch1_latency_floor_s`'s weights time.

    >>> from llmphys import specs
    >>> round(rack_wait_overstatement(specs.model("deepseek_v3"), specs.accelerator("gb200"),
    ...                               n_chips=72, weight_dtype="fp8", expert_parallel=True))
    58
    """
    f = batch1_latency_floor_s(
        model, acc, n_chips=n_chips, weight_dtype=weight_dtype, expert_parallel=expert_parallel
    )
    return QUOTED_RACK_WAIT_S / f["weights_s"]


def batch1_latency_floor_s(
    model: Model,
    acc: Accelerator,
    *,
    n_chips: int,
    weight_dtype: str = "bf16",
    expert_parallel: bool = True,
    collective_latency_s: float = 0.0,
) -> dict[str, float]:
    """Lower bound on the seconds per output token of one sequence, by part.

    weights_s: dense model, or MoE without expert parallelism: the weights touched over
    n W. MoE with expert parallelism: (non-routed weights / n + L_moe ceil(k/n) expert
    bytes) / W, every routed expert whole on one chip and the token's k experts on
    different chips (the best placement). collectives_s: latency x number of collectives,
    2 per layer (tensor-parallel all-reduces) plus 1 more per MoE layer with expert
    parallelism (the MLP's all-reduce becomes a dispatch and a combine). Context 0.

    >>> from llmphys import specs
    >>> f = batch1_latency_floor_s(specs.model("deepseek_v3"), specs.accelerator("gb200"),
    ...                            n_chips=72, weight_dtype="fp8")
    >>> round(f["weights_s"] * 1e3, 3)  # ms
    0.347
    """
    n = units.check_positive("n_chips", n_chips)
    if collective_latency_s < 0 or not math.isfinite(collective_latency_s):
        raise ValueError(
            f"collective_latency_s must be >= 0 and finite, got {collective_latency_s!r}"
        )
    bw = units.bytes_per_element(weight_dtype)
    n_collectives = 2 * model.n_layers
    if model.moe is None or not expert_parallel:
        weights_s = inference.weight_bytes_read(model, batch_size=1, weight_bytes_per_param=bw) / (
            n * acc.hbm_bytes_per_s
        )
    else:
        n_moe, expert = inference._n_moe_layers(model), inference._expert_params(model)
        routed = n_moe * model.moe.n_experts * expert
        other = accounting.n_params(model) - accounting.embedding_params(model) - routed
        per_chip = math.ceil(model.moe.n_experts_per_token / n)
        weights_s = bw * (other / n + n_moe * per_chip * expert) / acc.hbm_bytes_per_s
        n_collectives += n_moe
    collectives_s = n_collectives * collective_latency_s
    return {
        "weights_s": weights_s,
        "collectives_s": collectives_s,
        "n_collectives": n_collectives,
        "total_s": weights_s + collectives_s,
    }


def output_input_cost_ratio(
    model: Model,
    acc: Accelerator,
    *,
    prompt_tokens: int,
    output_tokens: int,
    n_chips: int,
    weight_dtype: str = "bf16",
    priced: bool = True,
) -> float:
    """Cost of an output token over that of an input token, on the same chips.

    Input: the prefill time of one prompt over its S tokens. Output: t(B) / B at the
    largest batch whose cache (S + output tokens per sequence) fits. Both priced by
    ``predict.priced_time_s``, or both at 100% of the roofline with ``priced=False``. The chip
    price cancels.

    >>> from llmphys import specs
    >>> round(output_input_cost_ratio(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                               prompt_tokens=4096, output_tokens=512, n_chips=8), 1)
    2.1
    """
    units.check_positive("output_tokens", output_tokens)
    p = inference.prefill(
        model, acc, prompt_tokens=prompt_tokens, n_chips=n_chips, weight_dtype=weight_dtype
    )
    context = prompt_tokens + output_tokens
    b = inference.max_batch_by_memory(
        model, acc, context_tokens=context, n_chips=n_chips, weight_dtype=weight_dtype
    )
    if b < 1:
        raise ValueError(f"no sequence of {context} tokens fits on {n_chips} x {acc.key}")
    d = inference.decode_step(
        model, acc, batch_size=b, context_tokens=context, n_chips=n_chips, weight_dtype=weight_dtype
    )
    if not priced:
        return (d["step_time_s"] / b) / (p["time_s"] / prompt_tokens)
    out = predict.priced_time_s(
        memory_time_s=d["memory_time_s"], compute_time_s=d["compute_time_s"]
    )
    t_in = predict.priced_time_s(
        memory_time_s=p["memory_time_s"], compute_time_s=p["compute_time_s"]
    )
    return (out / b) / (t_in / prompt_tokens)


def cost_per_token_at_max_batch_usd(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: float,
    n_chips: int,
    usd_per_chip_hour: float,
    weight_dtype: str = "bf16",
) -> float:
    """USD per generated token at the largest batch whose KV cache fits in HBM.

    ``inference.cost_per_token_usd`` at B = ``inference.max_batch_by_memory``.

    >>> from llmphys import specs
    >>> c = cost_per_token_at_max_batch_usd(specs.model("llama3_70b"),
    ...                                     specs.accelerator("h100_sxm"), context_tokens=1024,
    ...                                     n_chips=8, usd_per_chip_hour=2.95)
    >>> round(c * 1e6, 3)  # USD per million tokens
    0.117
    """
    b = inference.max_batch_by_memory(
        model, acc, context_tokens=context_tokens, n_chips=n_chips, weight_dtype=weight_dtype
    )
    if b < 1:
        raise ValueError(f"no sequence of {context_tokens} tokens fits on {n_chips} x {acc.key}")
    return inference.cost_per_token_usd(
        model,
        acc,
        batch_size=b,
        context_tokens=context_tokens,
        n_chips=n_chips,
        usd_per_chip_hour=usd_per_chip_hour,
        weight_dtype=weight_dtype,
    )


def decode_efficiency(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: float,
    n_chips: int,
    batch_size: float | None = None,
    weight_dtype: str = "bf16",
) -> float:
    """Fraction of peak FLOP/s a decode step uses at the roofline: compute time / step time.

    eta = min(1, (B f / n P) / t(B)); B defaults to the largest batch whose KV cache fits.
    With a training MFU u, ``inference_optimal.inference_flop_cost`` turns it into the
    price of a served FLOP, u / eta training FLOP.

    >>> from llmphys import specs
    >>> round(decode_efficiency(specs.model("llama3_8b"), specs.accelerator("h100_sxm"),
    ...                         context_tokens=1024, n_chips=1), 3)
    0.322
    """
    b = batch_size
    if b is None:
        b = inference.max_batch_by_memory(
            model, acc, context_tokens=context_tokens, n_chips=n_chips, weight_dtype=weight_dtype
        )
        if b < 1:
            raise ValueError(
                f"no sequence of {context_tokens} tokens fits on {n_chips} x {acc.key}"
            )
    s = inference.decode_step(
        model,
        acc,
        batch_size=b,
        context_tokens=context_tokens,
        n_chips=n_chips,
        weight_dtype=weight_dtype,
    )
    return s["compute_time_s"] / s["step_time_s"]
