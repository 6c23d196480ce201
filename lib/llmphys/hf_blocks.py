"""Reading a Hugging Face config's fields: typed look-ups, the activation, and the blocks
that differ by family (a mixture of experts, DeepSeek's latent attention, GPT-2's layout).

``hf_config.model_from_hf_config`` composes these into a :class:`specs.Model`; each reader
names the model type and the field in its error, and takes the type's implicit defaults
from ``data/hf_model_types.toml`` (``specs.hf_model_types``).

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from . import specs

_GATED = {
    "silu": "swiglu",
    "swish": "swiglu",
    "gelu": "geglu",
    "gelu_pytorch_tanh": "geglu",
    "gelu_new": "geglu",
}
_PLAIN = {"gelu": "gelu", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu"}


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


def _mlp_kind(cfg: dict, t: str, table: dict, key: str = "hidden_act") -> str:
    act = (
        cfg.get(key) or cfg.get("hidden_activation") or specs.hf_model_types()[t].activation_default
    )
    if act not in table:
        raise ValueError(
            f"model_type {t!r}: activation {key}={act!r} is not modelled; known: {', '.join(table)}"
        )
    return table[act]


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
        "router_bias": specs.hf_model_types()[t].router_bias,
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
