"""A tiny decoder-only transformer in numpy, configured by the same ``specs.Model`` as the formulas.

Teaching code, not a framework: parameters are a nested dict of arrays, the forward
pass is the residual loop of ``decoder`` (the one chapter 1's ``tinylm`` runs), and every
architectural choice of the registry is a switch read off the ``Model``:

    embeddings -> L x [x += attn(norm(x)); x += ffn(norm(x))] -> norm -> head

    norm        RMSNorm (gain) or LayerNorm (gain and bias)
    attn        MHA / GQA / MQA / MLA, optionally a sliding window (``attention.py``)
    ffn         SwiGLU or GELU MLP, or a top-k routed MoE with shared experts
    position    RoPE on queries and keys

Because the shapes come from the ``Model``, instantiating a shrunken registry
model (``tiny``) and counting its arrays checks ``accounting.n_params`` and
``kv_cache.kv_cache_bytes`` against something real.
Refs: Vaswani et al. 2017 (arXiv:1706.03762); Shazeer 2020 (SwiGLU,
arXiv:2002.05202); Zhang and Sennrich 2019 (RMSNorm, arXiv:1910.07467).

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import attention, decoder, moe, nn
from .attention import KVCache
from .specs import Model


def tiny(model: Model) -> Model:
    """``model`` shrunk to 2 layers of width 32, keeping every architectural switch.

    MHA stays MHA (4 KV heads), GQA becomes 2 KV heads, MQA 1; a sliding window
    becomes 4 positions; MoE keeps shared experts and a leading dense layer if it had them.
    """
    g = 4 if model.n_kv_heads == model.n_heads else (1 if model.n_kv_heads == 1 else 2)
    small: dict[str, Any]  # Model fields of several types, for dataclasses.replace
    small = dict(
        key=f"{model.key}_tiny",
        n_layers=2,
        d_model=32,
        n_heads=4,
        n_kv_heads=g,
        d_head=8,
        d_ff=64,
        vocab_size=97,
        max_context_tokens=64,
        sliding_window_tokens=4 if model.sliding_window_tokens else 0,
    )
    if model.moe is not None:
        small["moe"] = dataclasses.replace(
            model.moe,
            n_experts=8,
            n_experts_per_token=min(model.moe.n_experts_per_token, 2),
            n_shared_experts=min(model.moe.n_shared_experts, 1),
            d_ff_expert=16,
            n_dense_layers=min(model.moe.n_dense_layers, 1),
        )
    if model.mla is not None:
        small["mla"] = dataclasses.replace(
            model.mla,
            q_lora_rank=16 if model.mla.q_lora_rank else 0,
            kv_lora_rank=8,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=8,
        )
        small.update(n_kv_heads=4, d_head=12)
    return dataclasses.replace(model, **small)


def _check_supported(model: Model) -> None:
    if model.position != "rope":
        raise ValueError(f"position={model.position!r} is not implemented; the decoder uses 'rope'")
    if model.linear_bias:
        raise ValueError("linear_bias=True is not implemented; only qkv_bias is")
    if model.n_heads % model.n_kv_heads:
        raise ValueError(f"n_kv_heads={model.n_kv_heads} must divide n_heads={model.n_heads}")


def init_params(model: Model, rng: np.random.Generator, *, dtype=np.float64) -> dict:
    """Random parameters with exactly the shapes ``accounting`` counts (fan-in scaled normals)."""
    _check_supported(model)

    def w(*shape):  # weights stored (in, out): y = x @ w; fan-in is shape[-2]
        return (rng.standard_normal(shape) / np.sqrt(shape[-2])).astype(dtype)

    def norm(width=model.d_model):
        gain = {"gain": np.ones(width, dtype)}
        return gain | ({"bias": np.zeros(width, dtype)} if model.norm == "layernorm" else {})

    params = {
        "embed": rng.standard_normal((model.vocab_size, model.d_model)).astype(dtype),
        "layers": [
            {
                "attn_norm": norm(),
                "attn": _init_attention(model, w, dtype),
                "ffn_norm": norm(),
                "ffn": _init_ffn(model, i, w),
            }
            for i in range(model.n_layers)
        ],
        "final_norm": norm(),
    }
    if not model.tied_embeddings:
        params["head"] = w(model.d_model, model.vocab_size)
    return params


def _init_attention(model: Model, w, dtype) -> dict:
    d, h = model.d_model, model.n_heads
    if model.mla is not None:
        a = model.mla
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = (
            {
                "w_dq": w(d, a.q_lora_rank),
                "q_norm": np.ones(a.q_lora_rank, dtype),
                "w_uq": w(a.q_lora_rank, h * qk),
            }
            if a.q_lora_rank
            else {"w_q": w(d, h * qk)}
        )
        return q | {
            "w_dkv": w(d, a.kv_lora_rank + a.qk_rope_head_dim),
            "kv_norm": np.ones(a.kv_lora_rank, dtype),
            "w_ukv": w(a.kv_lora_rank, h * (a.qk_nope_head_dim + a.v_head_dim)),
            "w_o": w(h * a.v_head_dim, d),
        }
    hc, gc = h * model.d_head, model.n_kv_heads * model.d_head
    p = {"w_q": w(d, hc), "w_k": w(d, gc), "w_v": w(d, gc), "w_o": w(hc, d)}
    if model.qkv_bias:
        p |= {"b_q": np.zeros(hc, dtype), "b_k": np.zeros(gc, dtype), "b_v": np.zeros(gc, dtype)}
    return p


def _init_mlp(model: Model, d_ff: int, w, *lead: int) -> dict:
    d = model.d_model
    if model.mlp == "swiglu":  # gate, up, down (Shazeer 2020, sec. 2: FFN_SwiGLU)
        return {"w_gate": w(*lead, d, d_ff), "w_up": w(*lead, d, d_ff), "w_down": w(*lead, d_ff, d)}
    return {"w_in": w(*lead, d, d_ff), "w_out": w(*lead, d_ff, d)}


def _init_ffn(model: Model, layer: int, w) -> dict:
    m = model.moe
    if m is None or layer < m.n_dense_layers:
        return _init_mlp(model, model.d_ff, w)
    p = {
        "router": w(model.d_model, m.n_experts),
        "experts": _init_mlp(model, m.d_ff_expert, w, m.n_experts),
    }  # stacked (E, in, out)
    if m.n_shared_experts:
        p["shared"] = _init_mlp(model, m.d_ff_expert, w, m.n_shared_experts)
    return p


def count_params(params: dict | list | np.ndarray) -> int:
    """Number of scalars in a (nested) parameter structure."""
    if isinstance(params, np.ndarray):
        return params.size
    values = params.values() if isinstance(params, dict) else params
    return sum(count_params(v) for v in values)


def _norm(x: np.ndarray, p: dict) -> np.ndarray:
    if "bias" not in p:
        return nn.rms_norm(x, p["gain"])
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + nn.NORM_EPS) * p["gain"] + p["bias"]


def mlp(x: np.ndarray, p: dict) -> np.ndarray:
    """SwiGLU (silu(x W_gate) * (x W_up)) W_down, or GELU(x W_in) W_out (tanh form)."""
    if "w_gate" in p:
        gate = x @ p["w_gate"]
        return (gate / (1.0 + np.exp(-gate)) * (x @ p["w_up"])) @ p["w_down"]
    h = x @ p["w_in"]
    return 0.5 * h * (1.0 + np.tanh((2.0 / np.pi) ** 0.5 * (h + 0.044715 * h**3))) @ p["w_out"]


def moe_ffn(x: np.ndarray, p: dict, model: Model) -> np.ndarray:
    """Each token's output: gate-weighted sum of its k routed experts, plus the shared experts."""
    assert model.moe is not None, "called for MoE models only"
    idx, gates = moe.route(x @ p["router"], k=model.moe.n_experts_per_token)
    y = np.zeros_like(x)
    for e in np.unique(idx):  # one expert at a time, on the tokens routed to it
        rows, slot = np.nonzero(idx == e)
        expert = {n: a[e] for n, a in p["experts"].items()}
        y[rows] += gates[rows, slot, None] * mlp(x[rows], expert)
    for s in range(model.moe.n_shared_experts):
        y += mlp(x, {n: a[s] for n, a in p["shared"].items()})
    return y


def forward(
    params: dict, model: Model, tokens, cache: KVCache | None = None
) -> tuple[np.ndarray, KVCache]:
    """Logits (T, V) for token ids (T,) that follow the ``cache.n_tokens`` tokens already cached.

    With ``cache=None`` this is a full causal pass over ``tokens``; otherwise the new
    tokens attend to the cached keys and values, and the cache grows (or rolls, under
    a sliding window) in place.
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or tokens.size == 0 or tokens.min() < 0 or tokens.max() >= model.vocab_size:
        raise ValueError(f"tokens must be a non-empty 1-D array of ids in [0, {model.vocab_size})")
    cache = attention.new_cache(model) if cache is None else cache
    layers = params["layers"]
    if len(cache.layers) != len(layers):
        raise ValueError(f"cache has {len(cache.layers)} layers; params have {len(layers)}")
    pos = cache.n_tokens + np.arange(tokens.size)
    attn = attention.mla_attention if model.mla is not None else attention.gqa_attention
    head = params["embed"].T if model.tied_embeddings else params["head"]

    def ffn(i: int, x: np.ndarray) -> np.ndarray:
        h, p = _norm(x, layers[i]["ffn_norm"]), layers[i]["ffn"]
        return moe_ffn(h, p, model) if "router" in p else mlp(h, p)

    parts = decoder.Decoder(
        n_layers=len(layers),
        embed=lambda t: params["embed"][t],  # no position table: RoPE acts inside attention
        attn=lambda i, x: attn(
            _norm(x, layers[i]["attn_norm"]), layers[i]["attn"], model, pos, cache.layers[i]
        ),
        ffn=ffn,
        head=lambda x: _norm(x, params["final_norm"]) @ head,
    )
    logits = decoder.forward(parts, tokens, keep_writes=False).logits
    cache.n_tokens += tokens.size
    return logits, cache


def greedy_decode(params: dict, model: Model, prompt, n_new: int) -> tuple[np.ndarray, KVCache]:
    """Prefill ``prompt`` once, then generate ``n_new`` tokens one at a time from the cache."""
    logits, cache = forward(params, model, prompt)
    out = [int(np.argmax(logits[-1]))]
    for _ in range(n_new - 1):
        logits, cache = forward(params, model, out[-1:], cache)
        out.append(int(np.argmax(logits[-1])))
    return np.array(out), cache


def forward_incremental(
    params: dict, model: Model, tokens, *, n_prefill: int = 1
) -> tuple[np.ndarray, KVCache]:
    """Logits (T, V) computed as inference does: prefill ``n_prefill`` tokens, then one by one."""
    tokens = np.asarray(tokens)
    if not 1 <= n_prefill <= tokens.size:
        raise ValueError(f"n_prefill must lie in [1, {tokens.size}], got {n_prefill!r}")
    logits, cache = forward(params, model, tokens[:n_prefill])
    steps = [logits]
    for i in range(n_prefill, tokens.size):
        logits, cache = forward(params, model, tokens[i : i + 1], cache)
        steps.append(logits)
    return np.concatenate(steps), cache
