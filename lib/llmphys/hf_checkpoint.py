"""What a checkpoint stores beyond the model it describes: extra layers, scales, buffers.

A model page's parameter total counts the numbers in the safetensors files. Beside the model
itself (``accounting.n_params``) a checkpoint may store DeepSeek-V3's multi-token-prediction
layers, the float32 scales of block-quantized FP8 weights and GPT-2's causal-mask buffers;
:func:`stored_parts` counts each from the model and its raw ``config.json``.
``hf_config.checkpoint_breakdown`` reads the config and calls it.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

from typing import Any

from . import accounting, specs


def stored_parts(m: specs.Model, raw: dict[str, Any]) -> dict[str, float]:
    """Stored numbers by kind for model ``m`` read from the config ``raw``: ``model``,
    ``mtp_layers``, ``quant_scales``, ``mask_buffers`` (see ``hf_config.checkpoint_breakdown``).
    """
    masks = m.n_layers * m.max_context_tokens**2 if raw["model_type"] == "gpt2" else 0
    kind = specs.hf_model_types().get(raw["model_type"])
    n_mtp = raw.get("num_nextn_predict_layers", 0) if kind is not None and kind.mtp_layers else 0
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
