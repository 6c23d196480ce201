"""Attention per token in prefill and in decode: FLOP, HBM bytes and intensity, per variant.

The MHA family costs the same per key position in both phases: 4 L h c FLOP (scores and
weighted sum, 2 FLOP per multiply-add). MLA runs in a different form in each phase:

    decode    absorbed: W_UK folded into the query, W_UV applied after the sum, so the
              scores and the sum run over the cached latent itself, 2 L h (2r + r_R) FLOP
              per key, reading r + r_R values per key and layer (DeepSeek-AI 2024,
              arXiv:2405.04434, sec. 2.1.2-2.1.3; FlashMLA is such a decode kernel)
    prefill   non-absorbed ("expanded"): the latent is up-projected once per token to
              per-head keys (c_nope + r_R wide) and values (c_v), and attention runs as
              MHA over them, 2 L h (c_nope + r_R + c_v) FLOP per key, the count
              ``accounting.attention_flop_per_token`` uses for training. vLLM's MLA
              backend (vllm/v1/attention/backends/mla/common.py) takes this
              "compute friendly" path for prefill and the absorbed one for decode.

The HBM bytes assume FlashAttention-2's loop order (Dao 2023, arXiv:2307.08691, sec. 3.1):
a block of B query tokens stays on chip while the K/V tiles stream past it once, so

    decode    one new token reads every cached byte:           bytes = kv x keys
    prefill   each K/V byte loaded serves the whole block, and
              each token writes its own K/V once:               bytes = kv x keys / B + kv

with kv the bytes per key the kernel reads (``kv_bytes_per_key``: the cache in decode; the
expanded per-head K and V for MLA in prefill) and keys the positions attended: the context
(capped at a sliding window) in decode, the causal mean over the prompt in prefill.
Every tile load is charged to HBM, so the prefill bytes are an upper bound: on a real chip
the query blocks of one head read the same tiles at nearly the same time, and the L2 cache
serves most of them.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

from . import accounting, kv_cache, units
from .specs import Model

PHASES = ("prefill", "decode")


def mla_form(phase: str) -> str:
    """The form MLA runs in during ``phase``: "expanded" for prefill, "absorbed" for decode.

    >>> mla_form("prefill"), mla_form("decode")
    ('expanded', 'absorbed')
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    return "expanded" if phase == "prefill" else "absorbed"


def flop_per_key(model: Model, *, phase: str = "decode") -> float:
    """Attention FLOP one token spends per key position, all layers, in ``phase``.

    MHA family: 4 L h c in both phases. MLA: absorbed in decode, 2 L h (2r + r_R)
    (``kv_cache.decode_attention_flop_per_context_token``); expanded in prefill,
    2 L h (c_nope + r_R + c_v) (``accounting.attention_flop_per_token`` per key).

    >>> from llmphys import specs
    >>> flop_per_key(specs.model("llama3_70b")) / 1e6  # 4 x 80 layers x 64 heads x 128
    2.62144
    >>> ds = specs.model("deepseek_v3")
    >>> round(flop_per_key(ds, phase="decode") / flop_per_key(ds, phase="prefill"), 2)
    3.4
    """
    if mla_form(phase) == "absorbed":
        return kv_cache.decode_attention_flop_per_context_token(model)
    return accounting.attention_flop_per_token(model, context_tokens=1.0)


def kv_bytes_per_key(model: Model, *, phase: str, bytes_per_element: float = 2.0) -> float:
    """HBM bytes of keys and values per key position, all layers, that ``phase``'s kernel reads.

    The cache (``kv_cache.kv_bytes_per_token``) for every variant in decode and for the MHA
    family in prefill; for MLA in prefill, the expanded per-head keys and values,
    L h (c_nope + r_R + c_v) b.

    >>> from llmphys import specs
    >>> ds = specs.model("deepseek_v3")
    >>> kv_bytes_per_key(ds, phase="prefill") / kv_bytes_per_key(ds, phase="decode")
    71.11111111111111
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    if model.mla is None or mla_form(phase) == "absorbed":
        return kv_cache.kv_bytes_per_token(model, bytes_per_element=b)
    a = model.mla
    return (
        model.n_layers
        * model.n_heads
        * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)
        * b
    )


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
    """``flop``, ``bytes`` (HBM, K/V only, upper bound) and ``intensity`` (FLOP/byte) per token.

    >>> from llmphys import specs
    >>> m = specs.model("llama3_70b")
    >>> [round(attention_per_token(m, phase=p, context_tokens=8192)["intensity"])
    ...  for p in ("decode", "prefill")]
    [8, 993]
    """
    form = mla_form(phase)  # validates phase
    t = units.check_positive("context_tokens", context_tokens)
    block = units.check_positive("query_block_tokens", query_block_tokens)
    kv = kv_bytes_per_key(model, phase=phase, bytes_per_element=bytes_per_element)
    keys = _keys(model, phase, t)
    flop = flop_per_key(model, phase=phase) * keys
    if phase == "decode":
        nbytes = kv * keys
    else:
        nbytes = kv * keys / block + kv
        if model.mla is not None and form == "expanded":  # the latent is cached as well
            nbytes += kv_cache.kv_bytes_per_token(model, bytes_per_element=bytes_per_element)
    return {"flop": flop, "bytes": nbytes, "intensity": flop / nbytes}


def attainable_flop_per_s(
    model: Model,
    *,
    phase: str,
    context_tokens: float,
    peak_flop_per_s: float,
    hbm_bytes_per_s: float,
    bytes_per_element: float = 2.0,
    query_block_tokens: int = 128,
) -> float:
    """Roofline cap (FLOP/s) on attention in ``phase``: min(peak, intensity x bandwidth).

    Because the prefill bytes are an upper bound, so is this cap's memory term a lower
    bound on what a kernel can reach.

    >>> from llmphys import kv_cache, specs
    >>> h100 = specs.accelerator("h100_sxm")
    >>> mha = kv_cache.with_attention(specs.model("llama3_70b"), "mha")
    >>> cap = attainable_flop_per_s(mha, phase="prefill", context_tokens=32_768,
    ...                             peak_flop_per_s=h100.peak_bf16_flop_per_s,
    ...                             hbm_bytes_per_s=h100.hbm_bytes_per_s)
    >>> round(cap / 1e12)  # TFLOP/s, against a dense BF16 peak of 989
    425
    """
    peak = units.check_positive("peak_flop_per_s", peak_flop_per_s)
    bw = units.check_positive("hbm_bytes_per_s", hbm_bytes_per_s)
    i = attention_per_token(
        model,
        phase=phase,
        context_tokens=context_tokens,
        bytes_per_element=bytes_per_element,
        query_block_tokens=query_block_tokens,
    )["intensity"]
    return min(peak, i * bw)
