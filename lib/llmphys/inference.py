"""Time and cost of a decode step and of a prefill, for dense and MoE models.

One decode step produces one token for each of the B sequences in the batch. It
reads the weights it touches once and the KV cache of every sequence, and does
B times the per-token FLOP. Sharded evenly over n chips of bandwidth W and peak
P (Pope et al. 2023, arXiv:2211.05102, sec. 2 and 3.3),

    t(B) = max( (bytes_w(B) + B T k) / (n W),  B (f + a T) / (n P) )

with k the KV bytes per token, T the context, f = 2 x (matmul weights used per
token) and a the attention FLOP per context token. For a mixture of experts,
bytes_w(B) counts only the experts that some token in the batch is routed to:
E (1 - (1 - k_e/E)^B) of E per layer under uniform routing. Setting the two
terms equal gives the balance batch, B* ~ ridge x (bytes/param / 2) x sparsity
when the KV term is small, and the balanced context T_bal where the slopes in B
match, beyond which a step is memory-bound at any batch. The weights a step streams are
counted in :mod:`llmphys.streamed_weights` (re-exported here).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import accounting, kv_cache, units
from .specs import Accelerator, Model
from .streamed_weights import _expert_params as _expert_params
from .streamed_weights import _n_moe_layers as _n_moe_layers
from .streamed_weights import _out, _positive_array
from .streamed_weights import experts_touched as experts_touched
from .streamed_weights import streamed_params as streamed_params
from .streamed_weights import weight_bytes_read as weight_bytes_read
from .streamed_weights import weight_bytes_stored as weight_bytes_stored


def linear_flop_per_token(model: Model) -> float:
    """Matmul FLOP per token that do not depend on the context: 2 x weights multiplied."""
    return accounting.forward_flop_per_token(
        model, context_tokens=1.0
    ) - accounting.attention_flop_per_token(model, context_tokens=1.0)


def decode_flop_per_token(model: Model, *, context_tokens: float) -> float:
    """Forward FLOP of one decode step per sequence (FLOP): f + a T.

    f = :func:`linear_flop_per_token` (2 x the weights each token multiplies), a =
    :func:`llmphys.kv_cache.decode_attention_flop_per_context_token` (MLA absorbed, as decode
    kernels run it), T = the cached positions (capped by a sliding window). The one decode FLOP
    model: :func:`decode_step`, :func:`balance_batch` and :func:`decode_tokens_per_s` use it.

    >>> from llmphys import specs
    >>> round(decode_flop_per_token(specs.model("llama3_70b"), context_tokens=0) / 1e9, 1)
    139.0
    """
    if context_tokens < 0 or not math.isfinite(context_tokens):
        raise ValueError(f"context_tokens must be >= 0 and finite, got {context_tokens!r}")
    positions = kv_cache.cached_positions(model, n_tokens=int(context_tokens))
    a = kv_cache.decode_attention_flop_per_context_token(model)
    return linear_flop_per_token(model) + positions * a


def _peak(acc: Accelerator, weight_dtype: str) -> float:
    return acc.peak_flop_per_s("bf16" if weight_dtype == "fp16" else weight_dtype)


def decode_step(
    model: Model,
    acc: Accelerator,
    *,
    batch_size,
    context_tokens: float,
    n_chips: int,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> dict:
    """One decode step's bytes, FLOP and time, by part; accepts an array of batch sizes.

    Returns weight_bytes, kv_bytes, flop, memory_time_s, compute_time_s and step_time_s
    = max of the two (perfect overlap, even sharding, no communication; Pope et al.
    2023, sec. 2). Matmuls run at the weight dtype's dense peak (FP8 weights: FP8 math).

    >>> from llmphys import specs
    >>> s = decode_step(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                 batch_size=1, context_tokens=0, n_chips=8)
    >>> round(s["step_time_s"] * 1e3, 2)  # ms: 139 GB of BF16 weights over 8 x 3.35 TB/s
    5.19
    """
    batch = _positive_array("batch_size", batch_size)
    units.check_positive("n_chips", n_chips)
    if context_tokens < 0 or not math.isfinite(context_tokens):
        raise ValueError(f"context_tokens must be >= 0 and finite, got {context_tokens!r}")
    bw = units.bytes_per_element(weight_dtype)
    positions = kv_cache.cached_positions(model, n_tokens=int(context_tokens))
    w_bytes = np.asarray(weight_bytes_read(model, batch_size=batch, weight_bytes_per_param=bw))
    kv_bytes = (
        batch
        * positions
        * kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bytes_per_element)
    )
    flop = batch * decode_flop_per_token(model, context_tokens=context_tokens)
    mem_s = (w_bytes + kv_bytes) / (n_chips * acc.hbm_bytes_per_s)
    comp_s = flop / (n_chips * _peak(acc, weight_dtype))
    parts = {
        "weight_bytes": w_bytes,
        "kv_bytes": kv_bytes,
        "flop": flop,
        "memory_time_s": mem_s,
        "compute_time_s": comp_s,
        "step_time_s": np.maximum(mem_s, comp_s),
    }
    return {k: _out(v) for k, v in parts.items()}


def decode_tokens_per_s(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: int,
    batch_size: int = 1,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
    include_weights: bool = True,
) -> float:
    """Roofline ceiling on generated tokens/s, all sequences together, on one chip.

    B / max(F / P, Q / W) with F, Q from :func:`decode_step` on one chip: Q is the KV cache
    of every sequence plus (if ``include_weights``) the weights the step reads; F is the
    batch's decode FLOP (:func:`decode_flop_per_token`). Pope et al. 2023
    (arXiv:2211.05102) sec. 2.

    >>> from llmphys import kv_cache, specs
    >>> mha = kv_cache.with_attention(specs.model("llama3_70b"), "mha")
    >>> round(decode_tokens_per_s(mha, specs.accelerator("h100_sxm"), context_tokens=128_000,
    ...                           include_weights=False), 1)  # the series' "near ten"
    10.0
    """
    s = decode_step(
        model,
        acc,
        batch_size=batch_size,
        context_tokens=context_tokens,
        n_chips=1,
        weight_dtype=weight_dtype,
        kv_bytes_per_element=kv_bytes_per_element,
    )
    bytes_read = s["kv_bytes"] + (s["weight_bytes"] if include_weights else 0.0)
    step_s = max(bytes_read / acc.hbm_bytes_per_s, s["compute_time_s"])
    return float(batch_size / step_s)


def cost_per_token_usd(
    model: Model,
    acc: Accelerator,
    *,
    batch_size,
    context_tokens: float,
    n_chips: int,
    usd_per_chip_hour: float,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
):
    """USD per generated token: n x price per second x t(B) / B.

    >>> from llmphys import specs
    >>> c = cost_per_token_usd(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                        batch_size=1, context_tokens=0, n_chips=8, usd_per_chip_hour=3.0)
    >>> round(c * 1e6, 1)  # USD per million tokens at batch 1
    34.6
    """
    units.check_positive("usd_per_chip_hour", usd_per_chip_hour)
    s = decode_step(
        model,
        acc,
        batch_size=batch_size,
        context_tokens=context_tokens,
        n_chips=n_chips,
        weight_dtype=weight_dtype,
        kv_bytes_per_element=kv_bytes_per_element,
    )
    return _out(
        n_chips
        * usd_per_chip_hour
        / units.HOUR
        * np.asarray(s["step_time_s"])
        / np.asarray(batch_size, dtype=float)
    )


def balance_batch(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: float = 0.0,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> float:
    """Batch at which a decode step's memory and compute times are equal (inf if none).

    B* = (bytes_w / W) / ((f + a T) / P - T k / W), with every expert read (true once
    B k_e / E >> 1). At T = 0: B* = (P / W) (b / 2) (N_read / N_active), ridge x sparsity
    for 2-byte weights. Independent of n_chips: both times divide by n.

    >>> from llmphys import specs
    >>> round(balance_batch(specs.model("llama3_70b"), specs.accelerator("h100_sxm")))
    295
    """
    bw = units.bytes_per_element(weight_dtype)
    w_all = (accounting.n_params(model) - accounting.embedding_params(model)) * bw
    t = kv_cache.cached_positions(model, n_tokens=int(context_tokens))
    k = kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bytes_per_element)
    per_seq = (
        decode_flop_per_token(model, context_tokens=t) / _peak(acc, weight_dtype)
        - t * k / acc.hbm_bytes_per_s
    )
    return (w_all / acc.hbm_bytes_per_s) / per_seq if per_seq > 0 else math.inf


def balanced_context_tokens(
    model: Model, acc: Accelerator, *, weight_dtype: str = "bf16", kv_bytes_per_element: float = 2.0
) -> float:
    """Context at which the KV read time per sequence equals the compute time per sequence.

    T_bal = f / (k P / W - a). Beyond it no batch size makes a decode step compute-bound.

    >>> from llmphys import specs
    >>> round(balanced_context_tokens(specs.model("llama3_70b"), specs.accelerator("h100_sxm")))
    1476
    """
    k = kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bytes_per_element)
    ridge = _peak(acc, weight_dtype) / acc.hbm_bytes_per_s
    gap = k * ridge - kv_cache.decode_attention_flop_per_context_token(model)
    return linear_flop_per_token(model) / gap if gap > 0 else math.inf


def max_batch_by_memory(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: float,
    n_chips: int,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> int:
    """Most sequences whose KV cache fits beside the weights in n chips' HBM (0 if none).

    floor((n HBM - N b) / (T k)); activations and fragmentation ignored.

    >>> from llmphys import specs
    >>> max_batch_by_memory(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                     context_tokens=8192, n_chips=8)  # 8 x 85.5 GB usable HBM
    202
    """
    units.check_positive("n_chips", n_chips)
    units.check_positive("context_tokens", context_tokens)
    free = n_chips * acc.hbm_bytes - weight_bytes_stored(model, weight_dtype=weight_dtype)
    t = kv_cache.cached_positions(model, n_tokens=int(context_tokens))
    per_seq = t * kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bytes_per_element)
    return max(int(free // per_seq), 0)


def min_chips(
    model: Model, acc: Accelerator, *, weight_dtype: str = "bf16", headroom: float = 0.4
) -> int:
    """Smallest multiple of the scale-up domain whose HBM holds the weights with room to spare.

    Weights may fill at most (1 - headroom) of the HBM, leaving the rest for the KV cache.

    >>> from llmphys import specs
    >>> min_chips(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"), weight_dtype="fp8")
    16
    """
    if not 0 <= headroom < 1:
        raise ValueError(f"headroom must lie in [0, 1), got {headroom!r}")
    need = weight_bytes_stored(model, weight_dtype=weight_dtype) / (1.0 - headroom)
    unit = acc.scale_up_domain_size
    return unit * math.ceil(need / (unit * acc.hbm_bytes))


def hbm_drain_time_s(acc: Accelerator) -> float:
    """Seconds to read a chip's whole HBM once: usable capacity / bandwidth.

    >>> from llmphys import specs
    >>> round(hbm_drain_time_s(specs.accelerator("h100_sxm")) * 1e3, 1)  # 85.5 GB / 3.35 TB/s
    25.5
    """
    return acc.hbm_bytes / acc.hbm_bytes_per_s


def prefill(
    model: Model,
    acc: Accelerator,
    *,
    prompt_tokens: int,
    n_chips: int,
    n_prompts: int = 1,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> dict:
    """Bytes, FLOP, time and intensity of prefilling ``n_prompts`` prompts of S tokens at once.

    FLOP = n S (f + a (S + 1) / 2) (causal: the mean token attends to (S + 1)/2 keys),
    with MLA's keys and values decompressed, as its prefill kernels do; bytes = weights
    touched by n S tokens + the KV cache written. Time is the roofline max; the time
    to first token (TTFT) of an unqueued request is this time.

    >>> from llmphys import specs
    >>> p = prefill(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...             prompt_tokens=4096, n_chips=8)
    >>> round(p["time_s"], 3), round(p["intensity_flop_per_byte"])
    (0.075, 4214)
    """
    units.check_positive("prompt_tokens", prompt_tokens)
    units.check_positive("n_prompts", n_prompts)
    units.check_positive("n_chips", n_chips)
    s = kv_cache.cached_positions(model, n_tokens=int(prompt_tokens))
    tokens = n_prompts * prompt_tokens
    bw = units.bytes_per_element(weight_dtype)
    w = weight_bytes_read(model, batch_size=tokens, weight_bytes_per_param=bw)
    kv = tokens * kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bytes_per_element)
    flop = tokens * (
        linear_flop_per_token(model)
        + accounting.attention_flop_per_token(model, context_tokens=(s + 1) / 2)
    )
    mem_s = (w + kv) / (n_chips * acc.hbm_bytes_per_s)
    comp_s = flop / (n_chips * _peak(acc, weight_dtype))
    return {
        "weight_bytes": w,
        "kv_bytes": kv,
        "flop": flop,
        "memory_time_s": mem_s,
        "compute_time_s": comp_s,
        "time_s": max(mem_s, comp_s),
        "intensity_flop_per_byte": flop / (w + kv),
    }


def balance_batch_by_operator(
    model: Model, acc: Accelerator, *, weight_dtype: str = "bf16"
) -> dict[str, float]:
    """Decode batch at which each weight-reading operator turns compute-bound, per operator.

    A weight matrix read once per step (b bytes per weight) and applied to the t tokens
    that reach it does 2 t FLOP per weight, so it is balanced at t = ridge x b / 2. The
    attention projections and the dense (and shared-expert) FFN see every token of the
    batch: B* = ridge b / 2. A routed expert sees only B k / E of them under uniform
    routing, so it needs B* = ridge (b / 2) (E / k). The KV-cache read has no balance
    batch (its intensity does not grow with B; see ``kv_cache.decode_attention_intensity``).
    Dense models return the first two keys only. Method: Pope et al. 2023
    (arXiv:2211.05102), sec. 2, applied operator by operator.

    >>> from llmphys import specs
    >>> b = balance_batch_by_operator(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"))
    >>> {k: round(v) for k, v in b.items()}  # 295 x 256 / 8 for the routed experts
    {'attention': 295, 'dense_ffn': 295, 'routed_experts': 9451}
    """
    per_token = (
        _peak(acc, weight_dtype) / acc.hbm_bytes_per_s * units.bytes_per_element(weight_dtype) / 2.0
    )
    out = {"attention": per_token, "dense_ffn": per_token}
    if model.moe is not None:
        out["routed_experts"] = per_token * model.moe.n_experts / model.moe.n_experts_per_token
    return out
