"""Attention per token in prefill and in decode: FLOP, HBM bytes and intensity, per variant.

Per key position a token's attention costs the same in both phases: 4 L h c FLOP for
MHA/GQA/MQA (scores and weighted sum, 2 FLOP per multiply-add) and, for MLA in its
absorbed form, 2 L h (2r + r_R) (DeepSeek-AI 2024, arXiv:2405.04434, sec. 2.1). What
differs is how often each cached K/V byte is reused:

    decode    one new token reads the whole cache:       bytes = kv x keys
    prefill   a query block of B tokens shares each K/V
              tile it loads (FlashAttention, Dao et al.
              2022, arXiv:2205.14135), and each token
              writes its own K/V once:                   bytes = kv x keys / B + kv

with kv = ``kv_cache.kv_bytes_per_token`` and keys the positions attended: the context
(capped at a sliding window) in decode, the causal mean over the prompt in prefill.
So decode's intensity is ``kv_cache.decode_attention_intensity`` at every context, and
prefill's is about B times higher once the prompt is much longer than B.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

from . import kv_cache, units
from .specs import Model

PHASES = ("prefill", "decode")


def flop_per_key(model: Model) -> float:
    """Attention FLOP one token spends per key position, all layers (absorbed form for MLA).

    >>> from llmphys import specs
    >>> flop_per_key(specs.model("llama3_70b")) / 1e6  # 4 x 80 layers x 64 heads x 128
    2.62144
    """
    if model.mla is not None:
        r, rr = model.mla.kv_lora_rank, model.mla.qk_rope_head_dim
        return 2.0 * model.n_layers * model.n_heads * (2 * r + rr)
    return 4.0 * model.n_layers * model.n_heads * model.d_head


def _keys(model: Model, phase: str, t: float) -> float:
    w = model.sliding_window_tokens
    if phase == "decode":
        return min(t, w) if w else t
    if not w or t <= w:
        return (t + 1) / 2  # positions 1 .. T attend to 1 .. T keys
    return (w * (w + 1) / 2 + (t - w) * w) / t  # ramp up to the window, then W each


def attention_per_token(
    model: Model,
    *,
    phase: str,
    context_tokens: float,
    bytes_per_element: float = 2.0,
    query_block_tokens: int = 128,
) -> dict[str, float]:
    """``flop``, ``bytes`` (HBM, K/V only) and ``intensity`` (FLOP/byte) of one token's attention.

    >>> from llmphys import specs
    >>> m = specs.model("llama3_70b")
    >>> [round(attention_per_token(m, phase=p, context_tokens=8192)["intensity"])
    ...  for p in ("decode", "prefill")]
    [8, 993]
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    t = units.check_positive("context_tokens", context_tokens)
    block = units.check_positive("query_block_tokens", query_block_tokens)
    kv = kv_cache.kv_bytes_per_token(model, bytes_per_element=bytes_per_element)
    keys = _keys(model, phase, t)
    flop = flop_per_key(model) * keys
    nbytes = kv * keys if phase == "decode" else kv * keys / block + kv
    return {"flop": flop, "bytes": nbytes, "intensity": flop / nbytes}
