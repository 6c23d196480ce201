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

Introduced in chapters/00_hardware_tour.ipynb; derived in the architecture chapter.
"""

from __future__ import annotations

from . import units
from .specs import Model


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


def kv_cache_bytes(model: Model, *, n_tokens: int, batch_size: int = 1,
                   bytes_per_element: float = 2.0) -> float:
    """Bytes of the whole cache for ``batch_size`` sequences of ``n_tokens`` tokens each.

    >>> from llmphys import specs, units
    >>> round(kv_cache_bytes(specs.model("llama3_8b"), n_tokens=8192) / units.GB, 2)
    1.07
    """
    units.check_positive("batch_size", batch_size)
    per_seq = cached_positions(model, n_tokens=n_tokens)
    return kv_bytes_per_token(model, bytes_per_element=bytes_per_element) * per_seq * batch_size
