"""A Hugging Face ``config.json`` read into the book's frozen :class:`specs.Model`.

The registry (``data/models.toml``) names fields after the book's notation; a
checkpoint's config names them after its ``transformers`` model class, and leaves
much implicit: whether the embeddings are tied, which projections carry biases,
how many norms a layer has, the MLP width when it is not given. Each model type
below takes those implicit choices from its reference implementation in
``transformers`` (the files named in ``_SOURCES``; read, not copied), so that
``accounting.n_params`` of the result equals the checkpoint's parameter count
exactly (``tests/test_hf_config.py`` checks 14 published totals).

What the counter cannot represent is refused with a message saying so, rather
than counted wrongly: a per-layer mix of window sizes the spec's single window
cannot hold, MoE layers that are not "dense first, sparse after", an unknown
RoPE variant or activation. Keys the count does not depend on (token ids,
dropout, dtype) are ignored, as are keys that start with ``_`` (``_source``).

A multimodal checkpoint (Gemma 3, Llama 4) wraps its text model in ``text_config``;
that text model is what is counted. ``cached_config_path`` finds a repo id's
``config.json`` in the local Hugging Face cache: the library never uses the network.

Introduced in chapters/your_own_model.ipynb.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

from . import accounting, specs

# The transformers files each type's defaults were read from (huggingface/transformers,
# src/transformers/models/<type>/), configuration_<type>.py for the defaults and
# modeling_<type>.py for which weights exist.
_SOURCES = {
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "qwen2_moe": "qwen2_moe",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3_text": "gemma3",
    "phi3": "phi3",
    "gpt2": "gpt2",
    "gpt_neox": "gpt_neox",
    "olmo2": "olmo2",
    "deepseek_v2": "deepseek_v2",
    "deepseek_v3": "deepseek_v3",
    "llama4_text": "llama4",
}
SUPPORTED_MODEL_TYPES = tuple(_SOURCES)

# RoPE variants change how positions rotate, never which weights exist.
_ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "su")
_GATED = {
    "silu": "swiglu",
    "swish": "swiglu",
    "gelu": "geglu",
    "gelu_pytorch_tanh": "geglu",
    "gelu_new": "geglu",
}
_PLAIN = {"gelu": "gelu", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu"}

# Per type: embeddings tied unless the config says otherwise (configuration_<type>.py
# default of tie_word_embeddings), and the default head width.
_TIED_DEFAULT = {"gemma": True, "gemma2": True, "gemma3_text": True, "gpt2": True}
_HEAD_DIM_DEFAULT = {"gemma": 256, "gemma2": 256, "gemma3_text": 256, "qwen3": 128}
_MOE_TYPES = ("mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "llama4_text")
# Fields a type's configuration_<type>.py defaults, so that a checkpoint's config.json may
# omit them (Gemma 3's multimodal configs carry a sparse text_config).
_FIELD_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {
        "vocab_size": 262_208,
        "max_position_embeddings": 131_072,
        "num_key_value_heads": 4,
        "sliding_window": 4096,
    },
}
# Wrappers of a text model inside a multimodal checkpoint: the text model is counted, the
# vision tower (``vision_config``) and its projector are not.
_WRAPPERS = ("gemma3", "llama4")
_BIAS_FROM_CONFIG = (
    "llama",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3_text",
    "llama4_text",
    "olmo2",
    "gpt_neox",
    "deepseek_v2",
    "deepseek_v3",
)


def load_config(config: dict | str | os.PathLike) -> dict[str, Any]:
    """The config as a dict: ``config`` itself, a ``config.json`` path, or a folder holding one."""
    if isinstance(config, dict):
        return config
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError(
            f"config must be a dict, a path to config.json or a folder holding one, "
            f"got {type(config).__name__}"
        )
    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"config={str(config)!r}: no such file (expected a config.json or a folder holding one)"
        )
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(raw, dict):  # bad content of a file, so ValueError
        kind = type(raw).__name__
        raise ValueError(f"{path}: expected a JSON object, got {kind}")
    return raw


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``~/.cache/huggingface/hub`` (huggingface_hub's own order of look-up)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "hub"


def is_repo_id(text: str) -> bool:
    """Whether ``text`` has the shape of a Hugging Face repo id, ``org/name``.

    >>> is_repo_id("Qwen/Qwen2.5-0.5B"), is_repo_id("config.json")
    (True, False)
    """
    parts = text.split("/")
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return len(parts) == 2 and all(p and set(p) <= ok and p not in (".", "..") for p in parts)


def cached_config_path(repo_id: str, *, cache_dir: str | os.PathLike | None = None) -> Path:
    """The ``config.json`` of ``repo_id`` in the local hub cache (never the network).

    The cache layout is huggingface_hub's: ``models--<org>--<name>/snapshots/<commit>/``,
    with ``refs/main`` naming the commit; without that ref the newest snapshot is used.
    """
    if not is_repo_id(repo_id):
        raise ValueError(f"repo_id={repo_id!r} is not of the form 'org/name'")
    cache = Path(cache_dir) if cache_dir is not None else hf_cache_dir()
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    ref = repo / "refs" / "main"
    found = []
    if ref.is_file():
        found = [repo / "snapshots" / ref.read_text(encoding="utf-8").strip() / "config.json"]
    found += sorted(
        (repo / "snapshots").glob("*/config.json"), key=lambda q: q.stat().st_mtime, reverse=True
    )
    for path in found:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{repo_id!r}: no config.json in the local Hugging Face cache ({repo}); llmphys "
        "has no network at run time. Download it once (huggingface-cli download "
        f"{repo_id} config.json) or pass the path of a config.json"
    )


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
    if t not in _SOURCES:
        raise ValueError(
            f"model_type={t!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    cfg = {**_FIELD_DEFAULTS.get(t, {}), **cfg}
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
            f"models/{_SOURCES[t]}/configuration_{_SOURCES[t]}.py",
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


def _need(cfg: dict, t: str, *names: str):
    """The first of ``names`` the config holds; a missing field names it and the type."""
    for n in names:
        if cfg.get(n) is not None:
            return cfg[n]
    raise ValueError(f"model_type {t!r}: missing required field {names[0]!r}")


def _int(cfg: dict, t: str, *names: str) -> int:
    v = _need(cfg, t, *names)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"model_type {t!r}: {names[0]} must be a whole number >= 0, got {v!r}")
    return v


def _flag(cfg: dict, t: str, name: str, default: bool) -> bool:
    v = cfg.get(name, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        message = f"model_type {t!r}: {name} must be true or false, got {v!r}"
        raise ValueError(message)
    return v


def _check_rope(cfg: dict, t: str) -> None:
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters") or {}
    kind = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else rope
    if kind not in _ROPE_TYPES:
        raise ValueError(
            f"model_type {t!r}: rope variant {kind!r} is not modelled; known: "
            f"{', '.join(_ROPE_TYPES)}"
        )


# The activation a config that names none gets (configuration_<type>.py).
_ACT_DEFAULT = {
    "gpt2": "gelu_new",
    "gpt_neox": "gelu",
    "gemma": "gelu_pytorch_tanh",
    "gemma2": "gelu_pytorch_tanh",
    "gemma3_text": "gelu_pytorch_tanh",
}


def _mlp_kind(cfg: dict, t: str, table: dict, key: str = "hidden_act") -> str:
    act = cfg.get(key) or cfg.get("hidden_activation") or _ACT_DEFAULT.get(t, "silu")
    if act not in table:
        raise ValueError(
            f"model_type {t!r}: activation {key}={act!r} is not modelled; known: {', '.join(table)}"
        )
    return table[act]


def _attention_label(h: int, g: int) -> str:
    return "mha" if g == h else "mqa" if g == 1 else "gqa"


def _window(cfg: dict, t: str, n_layers: int) -> tuple[int, str]:
    """(window in tokens, note) for the layers; refuses a mix the spec cannot hold."""
    # MistralConfig and Gemma2Config default to a 4096-token window; the others to none.
    w = cfg.get("sliding_window", 4096 if t in ("mistral", "gemma2") else 0) or 0
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
    if t in ("llama", "gemma", "gpt_neox", "olmo2", "deepseek_v2", "deepseek_v3"):
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
    c = _int(cfg, t, "head_dim") if cfg.get("head_dim") else _HEAD_DIM_DEFAULT.get(t, d // h)
    tied = _flag(cfg, t, "tie_word_embeddings", _TIED_DEFAULT.get(t, False))
    window, notes = _window(cfg, t, L)
    # Only these modeling files read attention_bias; the others fix their biases in code
    # (Qwen2 and Qwen2-MoE: on q, k, v; Mistral, Mixtral, Phi-3: none).
    bias = t in _BIAS_FROM_CONFIG and _flag(cfg, t, "attention_bias", t == "gpt_neox")
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
        "qk_norm": {
            "qwen3": "head",
            "qwen3_moe": "head",
            "gemma3_text": "head",
            "olmo2": "full",
        }.get(t, "none"),
        "n_norms_per_layer": 4 if t in ("gemma2", "gemma3_text") else 2,
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
    if t in _MOE_TYPES:
        out["moe"] = _moe(cfg, t, L)
    if t.startswith("deepseek"):
        if bias:
            raise ValueError(
                f"model_type {t!r}: attention_bias=true on MLA projections is not modelled"
            )
        out.update(_mla(cfg, t))
    return out


def _moe(cfg: dict, t: str, n_layers: int) -> dict:
    if t == "llama4_text":  # modeling_llama4.py: Llama4TextMoe, a bias-free router, one shared
        step = cfg.get("interleave_moe_layer_step", 1)  # expert as wide as a routed one
        moe_layers = cfg.get("moe_layers")
        if step != 1 or (moe_layers is not None and list(moe_layers) != list(range(n_layers))):
            raise ValueError(
                f"model_type {t!r}: interleave_moe_layer_step={step} interleaves dense and "
                "MoE layers; the spec models only leading dense layers"
            )
        return {
            "n_experts": _int(cfg, t, "num_local_experts"),
            "n_experts_per_token": _int(cfg, t, "num_experts_per_tok"),
            "n_shared_experts": 1,
            "d_ff_expert": _int(cfg, t, "intermediate_size"),
            "n_dense_layers": 0,
        }
    if t == "mixtral":
        ff = _int(cfg, t, "intermediate_size")
        return {
            "n_experts": _int(cfg, t, "num_local_experts"),
            "n_experts_per_token": _int(cfg, t, "num_experts_per_tok"),
            "n_shared_experts": 0,
            "d_ff_expert": ff,
            "n_dense_layers": 0,
        }
    if t.startswith("qwen"):
        step = cfg.get("decoder_sparse_step", 1)
        dense = sorted(cfg.get("mlp_only_layers") or [])
        if step != 1 or dense != list(range(len(dense))):
            raise ValueError(
                f"model_type {t!r}: decoder_sparse_step={step} with mlp_only_layers="
                f"{dense} interleaves dense and MoE layers; the spec models only "
                "leading dense layers"
            )
        shared = cfg.get("shared_expert_intermediate_size", 0) if t == "qwen2_moe" else 0
        return {
            "n_experts": _int(cfg, t, "num_experts"),
            "n_experts_per_token": _int(cfg, t, "num_experts_per_tok"),
            "n_shared_experts": 1 if shared else 0,
            "d_ff_shared_expert": shared,
            "shared_expert_gate": bool(shared),
            "d_ff_expert": _int(cfg, t, "moe_intermediate_size"),
            "n_dense_layers": len(dense),
        }
    if cfg.get("moe_layer_freq", 1) != 1:
        raise ValueError(
            f"model_type {t!r}: moe_layer_freq={cfg['moe_layer_freq']} interleaves "
            "dense and MoE layers; the spec models only leading dense layers"
        )
    return {
        "n_experts": _int(cfg, t, "n_routed_experts"),
        "n_experts_per_token": _int(cfg, t, "num_experts_per_tok"),
        "n_shared_experts": cfg.get("n_shared_experts") or 0,
        "d_ff_expert": _int(cfg, t, "moe_intermediate_size"),
        "n_dense_layers": min(cfg.get("first_k_dense_replace") or 0, n_layers),
        "router_bias": t == "deepseek_v3",
    }


def _mla(cfg: dict, t: str) -> dict:
    mla = {
        "q_lora_rank": cfg.get("q_lora_rank") or 0,
        "kv_lora_rank": _int(cfg, t, "kv_lora_rank"),
        "qk_nope_head_dim": _int(cfg, t, "qk_nope_head_dim"),
        "qk_rope_head_dim": _int(cfg, t, "qk_rope_head_dim"),
        "v_head_dim": _int(cfg, t, "v_head_dim"),
    }
    h = _int(cfg, t, "num_attention_heads")
    return {
        "mla": mla,
        "attention": "mla",
        "n_kv_heads": h,
        "d_head": mla["qk_nope_head_dim"] + mla["qk_rope_head_dim"],
    }


def _gpt2(cfg: dict) -> dict:
    """GPT-2 (modeling_gpt2.py): learned positions, LayerNorm, biases everywhere, tied head."""
    t = "gpt2"
    d, h = _int(cfg, t, "n_embd", "hidden_size"), _int(cfg, t, "n_head", "num_attention_heads")
    return {
        "n_layers": _int(cfg, t, "n_layer", "num_hidden_layers"),
        "d_model": d,
        "n_heads": h,
        "n_kv_heads": h,
        "d_head": d // h,
        "d_ff": cfg.get("n_inner") or 4 * d,
        "vocab_size": _int(cfg, t, "vocab_size"),
        "max_context_tokens": _int(cfg, t, "n_positions", "max_position_embeddings"),
        "attention": "mha",
        "sliding_window_tokens": 0,
        "position": "learned",
        "norm": "layernorm",
        "mlp": _mlp_kind(cfg, t, _PLAIN, "activation_function"),
        "tied_embeddings": _flag(cfg, t, "tie_word_embeddings", True),
        "qkv_bias": True,
        "linear_bias": True,
    }


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
    m = model_from_hf_config(raw)
    masks = m.n_layers * m.max_context_tokens**2 if raw["model_type"] == "gpt2" else 0
    n_mtp = raw.get("num_nextn_predict_layers", 0) if raw["model_type"] == "deepseek_v3" else 0
    last = m.n_layers - 1
    layer = accounting.attention_params_per_layer(m) + accounting.ffn_params_per_layer(m, last)[0]
    layer += m.n_norms_per_layer * m.d_model
    mtp = n_mtp * (layer + 3 * m.d_model + 2 * m.d_model * m.d_model + 2 * m.vocab_size * m.d_model)
    scales = 0
    quant = raw.get("quantization_config") or {}
    if quant:
        block = quant.get("weight_block_size")
        if quant.get("quant_method") != "fp8" or not block:
            raise ValueError(
                f"quantization_config {quant.get('quant_method')!r} without "
                "weight_block_size is not modelled; only block-scaled fp8 is"
            )
        layers = list(range(m.n_layers)) + [last] * n_mtp
        scales = sum(_n_blocks(shape, block) for i in layers for shape in _matrices(m, i))
    return {
        "model": accounting.n_params(m),
        "mtp_layers": float(mtp),
        "quant_scales": float(scales),
        "mask_buffers": float(masks),
    }


def _n_blocks(shape: tuple[int, int], block: list[int]) -> int:
    return -(-shape[0] // block[0]) * -(-shape[1] // block[1])


def _matrices(m: specs.Model, layer: int) -> list[tuple[int, int]]:
    """(out, in) of every matrix of decoder layer ``layer`` but the router."""
    d, h = m.d_model, m.n_heads
    if m.mla is not None:
        a = m.mla
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        q = [(a.q_lora_rank, d), (h * qk, a.q_lora_rank)] if a.q_lora_rank else [(h * qk, d)]
        attn = [
            *q,
            (a.kv_lora_rank + a.qk_rope_head_dim, d),
            (h * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank),
            (d, h * a.v_head_dim),
        ]
    else:
        c, g = m.d_head, m.n_kv_heads
        attn = [(h * c, d), (g * c, d), (g * c, d), (d, h * c)]
    moe = m.moe
    if moe is None or layer < moe.n_dense_layers:
        widths = [m.d_ff]
    else:
        widths = [moe.d_ff_expert] * moe.n_experts + [
            moe.d_ff_shared_expert or moe.d_ff_expert
        ] * moe.n_shared_experts
    per = 3 if m.mlp in ("swiglu", "geglu") else 2
    mlp = [
        shape
        for f in widths
        for shape in ([(f, d), (f, d), (d, f)] if per == 3 else [(f, d), (d, f)])
    ]
    return attn + mlp
