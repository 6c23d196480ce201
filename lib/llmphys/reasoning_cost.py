"""The cost of a reasoning token against a chat token, from the serving model.

A request of I prompt tokens and O output tokens occupies a deployment of n chips at P USD per
chip-second for its share of the steady state that ``predict.serve`` predicts: with X output
tokens per second over the whole deployment,

    USD per output token  = n P / X          (prefill of the prompts included)
    USD per request       = O n P / X.

A decode token alone is priced by the decode-only step at the request's mean cached context
I + O/2. Each decode step reads the weights once for the batch but every sequence's cache in
full, so a token's share of the step grows with its context; and where the batch is limited by
the cache (max-throughput mode), a longer context also shrinks the batch that shares the weights.
A reasoning request (a short prompt, many thousands of thinking and answer tokens) therefore pays
more per decode token than a chat turn, and many times more per request. Ref: Pope et al. 2023
(arXiv:2211.05102) sec. 3; reasoning-length outputs as in DeepSeek-AI 2025 (DeepSeek-R1,
arXiv:2501.12948), whose responses grow to thousands of tokens during RL.

Home: chapters/06_economics.ipynb, section "The cost of a reasoning token".
"""

from __future__ import annotations

import math

from . import economics, predict, specs, units
from .specs import Accelerator, Model

CHAT = (2000, 500)
"""A chat turn: 2,000 prompt tokens (system prompt and history), 500 output tokens."""
REASONING = (1000, 16000)
"""A reasoning request: a 1,000-token question, 16,000 thinking and answer tokens."""


def _chip(acc: Accelerator | str) -> Accelerator:
    return specs.accelerator(acc) if isinstance(acc, str) else acc


def deployment_usd_per_s(acc: Accelerator | str, *, n_chips: int) -> float:
    """USD per second of ``n_chips`` chips at the recorded on-demand price (data/prices.toml).

    >>> round(deployment_usd_per_s("h100_sxm", n_chips=8) * 3600, 2)
    23.6
    """
    units.check_positive("n_chips", n_chips)
    return n_chips * economics.price(f"gpu_hour_usd.{_chip(acc).key}").value / units.HOUR


def request_cost(
    model: Model | str,
    acc: Accelerator | str,
    *,
    n_chips: int,
    tp: int,
    batch_size: int | None,
    input_tokens: int,
    output_tokens: int,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
) -> dict[str, float]:
    """USD per request, per output token and per decode token of one request shape.

    ``batch_size`` None is the serving model's max-throughput mode (the largest batch whose
    cache fits). Also returns ``batch_size`` (whole deployment), ``kv_read_share`` (the KV reads'
    share of the decode-only step) and ``mean_context_tokens`` (I + O/2).

    >>> c = request_cost("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=64,
    ...                  input_tokens=2000, output_tokens=500)
    >>> round(c["usd_per_request"], 4), round(c["kv_read_share"], 2)
    (0.0012, 0.15)
    """
    a, usd_per_s = _chip(acc), deployment_usd_per_s(acc, n_chips=n_chips)
    ctx = input_tokens + output_tokens // 2
    whole = predict.serve(
        model, a, n_chips=n_chips, tp=tp, batch_size=batch_size, weight_dtype=weight_dtype,
        kv_dtype=kv_dtype, input_tokens=input_tokens, output_tokens=output_tokens,
    )  # fmt: skip
    dec = predict.serve(
        model, a, n_chips=n_chips, tp=tp, batch_size=batch_size, weight_dtype=weight_dtype,
        kv_dtype=kv_dtype, input_tokens=ctx, output_tokens=output_tokens, decode_only=True,
    )  # fmt: skip
    per_token = usd_per_s / whole.output_tokens_per_s
    return {
        "usd_per_output_token": per_token,
        "usd_per_request": per_token * output_tokens,
        "usd_per_decode_token": usd_per_s / dec.output_tokens_per_s,
        "batch_size": float(dec.batch_size),
        "kv_read_share": dec.parts["kv_reads"] / dec.step_s,
        "mean_context_tokens": float(ctx),
    }


def reasoning_vs_chat(
    model: Model | str,
    acc: Accelerator | str,
    *,
    n_chips: int = 8,
    tp: int = 8,
    batch_size: int | None = 64,
    chat: tuple[int, int] = CHAT,
    reasoning: tuple[int, int] = REASONING,
) -> dict[str, dict[str, float]]:
    """:func:`request_cost` of a chat turn and a reasoning request on one deployment, and their
    ratios ("ratio": reasoning over chat, key by key).

    >>> r = reasoning_vs_chat("llama3_70b", "h100_sxm")
    >>> round(r["ratio"]["usd_per_decode_token"], 2)  # equal batch of 64: longer KV reads only
    1.45
    """
    out = {
        name: request_cost(model, acc, n_chips=n_chips, tp=tp, batch_size=batch_size,
                           input_tokens=i, output_tokens=o)
        for name, (i, o) in (("chat", chat), ("reasoning", reasoning))
    }  # fmt: skip
    out["ratio"] = {k: out["reasoning"][k] / out["chat"][k] for k in out["chat"]}
    return out


def decode_cost_by_context(
    model: Model | str,
    acc: Accelerator | str,
    *,
    context_tokens: list[int],
    n_chips: int = 8,
    tp: int = 8,
    batch_size: int | None = 64,
    output_tokens: int = 1000,
) -> list[float]:
    """USD per decode token at each mean cached context, decode-only (no prompt prefill); NaN
    where the batch's cache does not fit in the chips' memory.

    >>> c = decode_cost_by_context("llama3_70b", "h100_sxm", context_tokens=[2250, 9000, 10**6])
    >>> [round(x * 1e6, 2) for x in c]  # USD per million decode tokens
    [1.35, 1.95, nan]
    """
    usd_per_s = deployment_usd_per_s(acc, n_chips=n_chips)
    out = []
    for t in context_tokens:
        try:
            s = predict.serve(
                model, _chip(acc), n_chips=n_chips, tp=tp, batch_size=batch_size,
                input_tokens=int(t), output_tokens=output_tokens, decode_only=True,
            )  # fmt: skip
        except predict.LayoutDoesNotFit:
            out.append(math.nan)
            continue
        out.append(usd_per_s / s.output_tokens_per_s)
    return out
