"""Bytes of the key/value cache that autoregressive decoding keeps and re-reads.

To emit one token, every layer attends to the keys and values of all earlier
tokens; caching them trades memory for not recomputing them. Per token:

    MHA / MQA / GQA   2 (K and V) * n_layers * n_kv_heads * d_head * b
    MLA               n_layers * (kv_lora_rank + qk_rope_head_dim) * b

MQA is the case n_kv_heads = 1 and MHA the case n_kv_heads = n_heads. MLA caches
one compressed latent plus the decoupled RoPE key per layer, shared by all
heads (DeepSeek-AI 2024, arXiv:2405.04434 sec. 2.1). A sliding window of W
tokens caps the cache at W positions per sequence (Mistral 7B, arXiv:2310.06825).
Refs: Shazeer 2019 (MQA, arXiv:1911.02150); Ainslie et al. 2023 (GQA,
arXiv:2305.13245); Pope et al. 2022 (arXiv:2211.05102), sec. 3.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import dataclasses

from . import accounting, units
from .specs import MLA, Model


def kv_bytes_per_token(model: Model, *, bytes_per_element: float = 2.0) -> float:
    """Cache bytes added by one token of one sequence, all layers.

    >>> from llmphys import specs
    >>> kv_bytes_per_token(specs.model("llama3_8b"))  # 2 * 32 * 8 * 128 * 2 bytes
    131072.0
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    if model.mla is not None:
        return model.n_layers * (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) * b
    return 2.0 * model.n_layers * model.n_kv_heads * model.d_head * b


def cached_positions(model: Model, *, n_tokens: int) -> int:
    """Token positions held per sequence: all of them, or the last W under a sliding window."""
    if isinstance(n_tokens, bool) or int(n_tokens) != n_tokens or n_tokens < 0:
        raise ValueError(f"n_tokens must be a whole number >= 0, got {n_tokens!r}")
    n = int(n_tokens)
    return min(n, model.sliding_window_tokens) if model.sliding_window_tokens else n


def kv_cache_bytes(
    model: Model, *, n_tokens: int, batch_size: int = 1, bytes_per_element: float = 2.0
) -> float:
    """Bytes of the whole cache for ``batch_size`` sequences of ``n_tokens`` tokens each.

    >>> from llmphys import specs, units
    >>> round(kv_cache_bytes(specs.model("llama3_8b"), n_tokens=8192) / units.GB, 2)
    1.07
    """
    units.check_positive("batch_size", batch_size)
    per_seq = cached_positions(model, n_tokens=n_tokens)
    return kv_bytes_per_token(model, bytes_per_element=bytes_per_element) * per_seq * batch_size


# ----------------------------------------------------------------- architecture chapter
VARIANTS = ("mha", "gqa", "mqa", "mla", "swa")


def with_attention(
    model: Model,
    variant: str,
    *,
    window_tokens: int = 4096,
    kv_lora_rank: int = 512,
    rope_head_dim: int = 64,
) -> Model:
    """``model`` with its attention swapped for ``variant``; everything else unchanged.

    mha: one K/V head per query head; mqa: one K/V head; gqa: the model's own
    grouping; swa: the model's attention over the last ``window_tokens`` positions;
    mla: a DeepSeek-style latent of ``kv_lora_rank`` plus a ``rope_head_dim`` RoPE
    key, keeping the model's head width for the no-RoPE part and for V.

    >>> from llmphys import specs
    >>> with_attention(specs.model("llama3_70b"), "mqa").n_kv_heads
    1
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if variant == "swa":
        units.check_positive("window_tokens", window_tokens)
        return dataclasses.replace(model, sliding_window_tokens=int(window_tokens))
    if variant == "gqa":
        return model
    if variant in ("mha", "mqa"):
        g = model.n_heads if variant == "mha" else 1
        return dataclasses.replace(model, attention=variant, n_kv_heads=g, mla=None)
    mla = MLA(
        q_lora_rank=0,
        kv_lora_rank=kv_lora_rank,
        qk_nope_head_dim=model.d_head,
        qk_rope_head_dim=rope_head_dim,
        v_head_dim=model.d_head,
    )
    return dataclasses.replace(
        model,
        attention="mla",
        n_kv_heads=model.n_heads,
        mla=mla,
        d_head=model.d_head + rope_head_dim,
    )


def decode_attention_intensity(model: Model, *, bytes_per_element: float = 2.0) -> float:
    """FLOP per byte of KV cache read when one new token attends to the cache (any context).

    GQA family: 2 h (2c) T FLOP over 2 g c T b bytes = 2 (h/g) / b. MLA in its absorbed
    form (W_UK folded into the query, W_UV after the sum; DeepSeek-V2 sec. 2.1):
    scores over r + r_R dims and values over r dims for all h heads, reading r + r_R
    values per position: 2 h (2r + r_R) / ((r + r_R) b). Batching does not raise it:
    every sequence has its own cache.

    >>> from llmphys import specs
    >>> decode_attention_intensity(specs.model("llama3_70b"))  # 8 query heads per K/V head
    8.0
    """
    return decode_attention_flop_per_context_token(model) / kv_bytes_per_token(
        model, bytes_per_element=bytes_per_element
    )


def decode_attention_flop_per_context_token(model: Model) -> float:
    """Attention FLOP per generated token per cached position, all layers, as a decode kernel
    computes it: the one decode-attention FLOP count of the library.

    GQA/MHA: 2 L h (d_qk + d_v) (scores and weighted sum). MLA in the "absorbed" form
    that attends over the cached latent directly (DeepSeek-V2, arXiv:2405.04434,
    sec. 2.1.3): 2 L h (2 r_kv + d_rope), about 3.4x the decompressed count for DeepSeek-V3.
    Used by :func:`decode_attention_intensity` and by every decode step of
    :mod:`llmphys.inference`.

    >>> from llmphys import specs
    >>> round(decode_attention_flop_per_context_token(specs.model("deepseek_v3")) / 1e6, 2)
    16.99
    """
    if model.mla is not None:
        per_head = 2 * model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
        return 2.0 * model.n_layers * model.n_heads * per_head
    return accounting.attention_flop_per_token(model, context_tokens=1.0)


def mla_decode_flop_per_position(model: Model) -> dict[str, float]:
    """FLOP per cached position, per layer, per decode step of MLA, naive against absorbed.

    naive_up_projection: rebuilding every head's keys and values from the cached latent,
    2 r h (d_nope + d_v); naive_attention: scores and sum over the rebuilt heads,
    2 h (d_nope + d_rope + d_v); absorbed_attention: W_UK folded into the query and W_UV
    applied after the sum, so scores and sum run in the latent, 2 h (2r + r_R).
    DeepSeek-V2 (arXiv:2405.04434) sec. 2.1.2-2.1.3; r = kv_lora_rank, r_R = qk_rope_head_dim.

    >>> from llmphys import specs
    >>> f = mla_decode_flop_per_position(specs.model("deepseek_v3"))
    >>> naive = f["naive_up_projection"]
    >>> round(naive / 1e6, 1), round(naive / f["absorbed_attention"])
    (33.6, 120)
    """
    if model.mla is None:
        raise ValueError(f"model {model.key!r} has no latent attention (model.mla is None)")
    a, h = model.mla, model.n_heads
    return {
        "naive_up_projection": 2.0 * a.kv_lora_rank * h * (a.qk_nope_head_dim + a.v_head_dim),
        "naive_attention": 2.0 * h * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim),
        "absorbed_attention": decode_attention_flop_per_context_token(model) / model.n_layers,
    }


def fraction_of_mha(model: Model, variant: str, *, n_tokens: int) -> float:
    """``model``'s KV cache with its attention swapped for ``variant``, over that with full MHA.

    Both caches for ``n_tokens`` tokens of one sequence (:func:`with_attention`); dimensionless.

    >>> from llmphys import specs
    >>> fraction_of_mha(specs.model("llama3_70b"), "gqa", n_tokens=128_000)
    0.125
    """
    return kv_cache_bytes(with_attention(model, variant), n_tokens=n_tokens) / kv_cache_bytes(
        with_attention(model, "mha"), n_tokens=n_tokens
    )
