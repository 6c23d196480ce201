"""A Hugging Face ``config.json`` read into the book's frozen :class:`specs.Model`.

The registry (``data/models.toml``) names fields after the book's notation; a
checkpoint's config names them after its ``transformers`` model class, and leaves
much implicit: whether the embeddings are tied, which projections carry biases,
how many norms a layer has, the MLP width when it is not given. Each model type
below takes those implicit choices from its reference implementation in
``transformers`` (the files ``data/hf_model_types.toml`` names; read, not copied), so that
``accounting.n_params`` of the result equals the checkpoint's parameter count
exactly (``tests/test_hf_config.py`` checks 14 published totals).

What the counter cannot represent is refused with a message saying so, rather
than counted wrongly: a per-layer mix of window sizes the spec's single window
cannot hold, MoE layers that are not "dense first, sparse after", an unknown
RoPE variant or activation. Keys the count does not depend on (token ids,
dropout, dtype) are ignored, as are keys that start with ``_`` (``_source``).

A multimodal checkpoint (Gemma 3, Llama 4) wraps its text model in ``text_config``;
that text model is what is counted. ``cached_config_path`` finds a repo id's
``config.json`` in the local Hugging Face cache: the library never uses the network. Finding
and reading a config is :mod:`llmphys.hf_hub` (re-exported here).

Introduced in chapters/your_own_model.ipynb.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

from . import hf_checkpoint, specs
from .hf_blocks import _GATED, _PLAIN, _flag, _gpt2, _int, _mla, _mlp_kind, _moe
from .hf_hub import cached_config_path as cached_config_path
from .hf_hub import hf_cache_dir as hf_cache_dir
from .hf_hub import is_repo_id as is_repo_id
from .hf_hub import load_config as load_config

# What each model type leaves implicit (its transformers defaults and modeling code) is data:
# data/hf_model_types.toml, read by specs.hf_model_types().


def _type(t: str) -> specs.HFModelType:
    return specs.hf_model_types()[t]


def __getattr__(name: str):
    if name == "SUPPORTED_MODEL_TYPES":  # read from data on first use, not at import
        return tuple(specs.hf_model_types())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# RoPE variants change how positions rotate, never which weights exist.
_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "su")
# Wrappers of a text model inside a multimodal checkpoint: the text model is counted, the
# vision tower (``vision_config``) and its projector are not.
_WRAPPERS = ("gemma3", "llama4")


def model_from_hf_config(
    config: dict | str | os.PathLike, *, key: str | None = None, name: str | None = None
) -> specs.Model:
    """The :class:`specs.Model` a Hugging Face config describes (counts in parameters).

    ``accounting.n_params`` of the result is the checkpoint's total: embeddings,
    every projection and bias, every norm gain, routers and experts, as the
    type's ``transformers`` modeling file builds them. Fields the config does
    not carry (developer, release year, published count) are left blank
    (``published_n_params`` 0.0: not published).

    >>> from llmphys import accounting
    >>> m = model_from_hf_config({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
    ...                           "n_head": 12, "vocab_size": 50257, "n_positions": 1024})
    >>> int(accounting.n_params(m))  # GPT-2 small (Radford et al. 2019: '117M')
    124439808
    """
    cfg = text_model_config(load_config(config))
    t = cfg.get("model_type")
    types = specs.hf_model_types()
    if t not in types:
        raise ValueError(f"model_type={t!r} is not supported; supported: {', '.join(types)}")
    cfg = {**types[t].field_defaults, **cfg}  # Gemma 3's multimodal configs are sparse
    fields = _gpt2(cfg) if t == "gpt2" else _decoder(cfg, t)
    notes = fields.pop("_notes", "")
    if cfg.get("_wrapped"):
        notes = " ".join(
            n
            for n in (
                f"The checkpoint is multimodal ({cfg['_wrapped']!r}): its text_config is the "
                "model counted here; the vision tower and its projector are not.",
                notes,
            )
            if n
        )
    label = name or str(load_config(config).get("_name_or_path") or _default_name(config, t))
    return specs.build_spec(
        specs.Model,
        {
            **fields,
            "name": label,
            "developer": "",
            "release_year": 0,
            "published_n_params": 0.0,
            "published_n_active_params": 0.0,
            "n_params_quote": "",
            "source": f"Hugging Face config.json (model_type {t!r}); defaults of transformers "
            f"models/{types[t].module}/configuration_{types[t].module}.py",
            "as_of": datetime.date(1970, 1, 1),
            "notes": notes,
        },
        f"config (model_type {t!r})",
        key=key or _slug(label),
    )


def text_model_config(raw: dict[str, Any]) -> dict[str, Any]:
    """The text model's fields: ``raw`` itself, or its ``text_config`` in a multimodal checkpoint.

    Keys starting with ``_`` are dropped; a wrapped config gets ``_wrapped`` (the outer
    model_type) and inherits the outer ``tie_word_embeddings`` where the inner one is silent.

    >>> text_model_config({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text"}})
    {'model_type': 'gemma3_text', '_wrapped': 'gemma3'}
    """
    cfg = {k: v for k, v in raw.items() if not k.startswith("_")}
    inner = cfg.get("text_config")
    if inner is None:
        return cfg
    if not isinstance(inner, dict):
        raise ValueError(f"text_config must be a JSON object, got {type(inner).__name__}")
    outer = cfg.get("model_type")
    text = {k: v for k, v in inner.items() if not k.startswith("_")}
    if "model_type" not in text and outer in _WRAPPERS:
        text["model_type"] = f"{outer}_text"
    if "tie_word_embeddings" in cfg and "tie_word_embeddings" not in text:
        text["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    return {**text, "_wrapped": outer}


def _default_name(config, t: str) -> str:
    """The folder's name (``Qwen2.5-0.5B/config.json``), a file's stem, or the model type."""
    if isinstance(config, dict):
        return t
    path = Path(config)
    if path.is_dir():
        return path.resolve().name
    return path.resolve().parent.name if path.name == "config.json" else path.stem


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label.split("/")[-1].lower())


def _check_rope(cfg: dict, t: str) -> None:
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    kind = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else rope
    if kind not in _ROPE_TYPES:
        raise ValueError(
            f"model_type {t!r}: rope variant {kind!r} is not modelled; known: "
            f"{', '.join(_ROPE_TYPES)}"
        )


def _attention_label(h: int, g: int) -> str:
    return "mha" if g == h else "mqa" if g == 1 else "gqa"


def _window(cfg: dict, t: str, n_layers: int) -> tuple[int, str]:
    """(window in tokens, note) for the layers; refuses a mix the spec cannot hold."""
    # MistralConfig and Gemma2Config default to a 4096-token window; the others to none.
    w = cfg.get("sliding_window", _type(t).sliding_window_default) or 0
    if t == "llama4_text":  # chunked local attention on the RoPE layers, global on the others
        chunk = cfg.get("attention_chunk_size") or 0
        note = (
            f"Most layers attend within {chunk}-token chunks and the rest globally; the spec "
            "holds one window, so the KV cache is counted as global in every layer: exact "
            f"up to {chunk} tokens, an upper bound beyond."
        )
        return 0, note if chunk else ""
    if t in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and not cfg.get("use_sliding_window"):
        w = 0
    if _type(t).no_sliding_window:
        w = 0  # these modeling files have no sliding window
    kinds = set(cfg.get("layer_types") or ())
    if t == "gemma3_text":  # Gemma3TextConfig: one global layer in sliding_window_pattern
        return 0, (
            f"Most layers use a {w}-token sliding window and every "
            f"{cfg.get('sliding_window_pattern', 6)}th is global; the spec holds one window, "
            "so the KV cache is counted as global in every layer: exact up to "
            f"{w} tokens, an upper bound beyond."
        )
    if t == "gemma2":
        return 0, (
            f"Layers alternate a {w}-token sliding window and global attention; the spec "
            "holds one window, so the KV cache is counted as global in every layer: exact "
            f"up to {w} tokens, an upper bound beyond."
        )
    if w and t.startswith("qwen") and cfg.get("max_window_layers", n_layers) < n_layers:
        raise ValueError(
            f"model_type {t!r}: use_sliding_window with max_window_layers < "
            "num_hidden_layers mixes windowed and full layers, which the spec's "
            "single sliding window cannot represent"
        )
    if len(kinds) > 1:
        raise ValueError(
            f"model_type {t!r}: layer_types mixes {sorted(kinds)}, which the spec's "
            "single sliding window cannot represent"
        )
    return int(w), ""


def _decoder(cfg: dict, t: str) -> dict:
    """Every type but GPT-2: a pre-norm (post-norm for OLMo 2) RoPE decoder."""
    _check_rope(cfg, t)
    L, d = _int(cfg, t, "num_hidden_layers"), _int(cfg, t, "hidden_size")
    h = _int(cfg, t, "num_attention_heads")
    g = _int(cfg, t, "num_key_value_heads") if cfg.get("num_key_value_heads") else h
    if not g or h % g:
        raise ValueError(
            f"model_type {t!r}: num_attention_heads={h} is not a multiple of "
            f"num_key_value_heads={g}"
        )
    c = _int(cfg, t, "head_dim") if cfg.get("head_dim") else (_type(t).head_dim_default or d // h)
    tied = _flag(cfg, t, "tie_word_embeddings", _type(t).tied_default)
    window, notes = _window(cfg, t, L)
    # Only these modeling files read attention_bias; the others fix their biases in code
    # (Qwen2 and Qwen2-MoE: on q, k, v; Mistral, Mixtral, Phi-3: none).
    bias = _type(t).attention_bias_from_config and _flag(cfg, t, "attention_bias", t == "gpt_neox")
    out = {
        "n_layers": L,
        "d_model": d,
        "n_heads": h,
        "n_kv_heads": g,
        "d_head": c,
        "vocab_size": _int(cfg, t, "vocab_size"),
        "max_context_tokens": _int(cfg, t, "max_position_embeddings"),
        "attention": _attention_label(h, g),
        "sliding_window_tokens": window,
        "position": "rope",
        "norm": "layernorm" if t == "gpt_neox" else "rmsnorm",
        "tied_embeddings": tied,
        "qkv_bias": bias or t in ("qwen2", "qwen2_moe"),
        "linear_bias": t == "gpt_neox" and bias,
        "o_bias": bias and t != "gpt_neox",
        "mlp_bias": t == "llama" and _flag(cfg, t, "mlp_bias", False),
        # Llama 4's qk norm is a weightless L2 norm (Llama4TextL2Norm): no parameters
        "qk_norm": _type(t).qk_norm,
        "n_norms_per_layer": _type(t).n_norms_per_layer,
        "_notes": notes,
    }
    # Llama 4: intermediate_size is an expert's width, intermediate_size_mlp the dense MLP's
    out["d_ff"] = _int(
        cfg, t, "intermediate_size_mlp" if t == "llama4_text" else "intermediate_size"
    )
    if t == "gpt_neox":  # parallel or serial residual: the same weights, in another order
        if not bias:
            raise ValueError(
                "model_type 'gpt_neox': attention_bias=false is not modelled (the "
                "MLP keeps its biases while attention drops them)"
            )
        out["mlp"] = _mlp_kind(cfg, t, _PLAIN)
        return out
    out["mlp"] = _mlp_kind(cfg, t, _GATED)
    if _type(t).moe:
        out["moe"] = _moe(cfg, t, L)
    if t.startswith("deepseek"):
        if bias:
            raise ValueError(
                f"model_type {t!r}: attention_bias=true on MLA projections is not modelled"
            )
        out.update(_mla(cfg, t))
    return out


def checkpoint_n_values(config: dict | str | os.PathLike) -> float:
    """Numbers stored in the checkpoint's safetensors files: what a model page's total counts.

    The sum of :func:`checkpoint_breakdown`: the model itself plus what the checkpoint
    stores beside it.

    >>> f"{checkpoint_n_values(specs.data_dir() / 'hf_configs' / 'DeepSeek-V3'):,.0f}"
    '684,531,386,000'
    """
    return sum(checkpoint_breakdown(config).values())


def checkpoint_breakdown(config: dict | str | os.PathLike) -> dict[str, float]:
    """Stored numbers by kind: model, extra layers, quantization scales, buffers.

    ``model`` is ``accounting.n_params``. ``mtp_layers``: DeepSeek-V3's
    multi-token-prediction layers (``num_nextn_predict_layers``: one more decoder layer,
    two norms, a 2d -> d projection, a norm and its own copies of the embedding and output
    head; DeepSeek-AI 2024, arXiv:2412.19437, sec. 2.2). ``quant_scales``: the float32
    scales of block-quantized FP8 weights, one per ``weight_block_size`` block of every
    decoder-layer matrix (routers, norms, embeddings stay unquantized). ``mask_buffers``:
    GPT-2's causal masks, an n_positions x n_positions ``attn.bias`` per layer.
    """
    raw = {k: v for k, v in load_config(config).items() if not k.startswith("_")}
    return hf_checkpoint.stored_parts(model_from_hf_config(raw), raw)
