"""Non-GEMM work of a training step as bytes against achieved HBM bandwidth.

Per layer: norms, residual adds, dropout (GPT-2-era blocks), the MLP activation, an MoE
layer's token permutation, rotary, the
materialised softmax (without flash), FP8's casts, transposes and amax passes; per step the
cross-entropy over the vocabulary and FP8's weight casts. Without sequence parallelism every TP
rank repeats the norms, residuals and dropout on the full sequence. ``fused_elementwise=False``
is eager PyTorch, where each op of a norm, of rotary and of the gated activation is its own
kernel reading and writing the whole tensor (``EAGER_*`` below).

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import accounting
from . import memory as memory_mod
from .terms import _Ctx

NORM_BYTES_PER_H = 8.0
"""Forward HBM bytes per token and unit of d_model of a layer's two norms: each reads and
writes d_model 16-bit values (2 x (2 + 2)). Repeated by every TP rank without SP."""

RESIDUAL_BYTES_PER_H = 12.0
"""Two residual adds per layer, each reading two 16-bit streams and writing one (2 x 6)."""

DROPOUT_BYTES_PER_H = 10.0
"""Two bias-dropout-adds' extra traffic per layer in GPT-2-era blocks: a 16-bit read and
write and a 1-byte mask each (2 x 5; Narayanan et al. 2021, sec. 4.2)."""

SOFTMAX_BYTES_PER_SCORE = 9.0
"""HBM bytes per attention score a forward pass moves when the score matrix is materialised
(no flash kernel): scale-mask-softmax 4, dropout 5 (Narayanan et al. 2021, sec. 4.2)."""

CROSS_ENTROPY_BYTES_PER_LOGIT = 16.0
"""Bytes per vocabulary logit per token: write the 16-bit logits (2), the FP32 softmax reads
them and writes probabilities (2 + 4), the backward reads those and writes a 16-bit gradient
(4 + 2), and the head's dgrad reads it (2)."""

FP8_CAST_BYTES = {"delayed": 4.0, "tensorwise": 6.0, "blockwise": 4.0, "mxfp8": 4.0}
"""Bytes per element an FP8 cast moves: read 16-bit (2), write the row-wise and the transposed
FP8 copy (1 + 1); current per-tensor scaling reads the input once more for its amax (+2)."""

MOE_PERMUTE_BYTES_PER_H = 4.0
"""Bytes per routed copy and unit of d_model that token permutation moves in an MoE layer's
forward, plus the same per token: the permute reads each token and writes its k copies in
expert order, the unpermute reads the k expert outputs and writes the combined token, 16-bit
each, (4k + 4) h bytes a token (Megatron-Core megatron/core/transformer/moe/moe_utils.py,
``permute`` and ``unpermute``, fused or not by --moe-permute-fusion, which saves kernels,
not these bytes). The dispatcher's own copies into and out of communication buffers are not
counted, so this is a lower bound."""

MEMORY_BOUND_PASSES = 3.0
"""Forward plus backward of the elementwise work, the backward moving twice the forward's bytes."""


EAGER_NORM_BYTES_PER_H = 72.0
"""Two RMSNorms in eager PyTorch, bytes per token and unit of d_model: torchtitan's RMSNorm
(torchtitan/models/norms.py at commit 9dec370) runs ``x.float()`` (read 2, write 4), ``pow``
(4, 4), ``mean`` (4), the multiply by the reciprocal root (4, 4), ``type_as`` (4, 2) and the
weight multiply (2, 2), 36 bytes an element each against a fused kernel's 4."""

EAGER_ROTARY_BYTES_PER_ELEMENT = 20.0
"""Rotary on q and k in eager PyTorch: ``float()`` (2, 4), the complex multiply (4, 4) and
``type_as`` (4, 2), bytes per element of q and k (torchtitan/models/llama/model.py,
apply_rotary_emb, commit 9dec370) against a fused kernel's 4."""

EAGER_ACTIVATION_BYTES_PER_FF = 10.0
"""SwiGLU's ``silu(w1(x)) * w3(x)`` in eager PyTorch: silu (read 2, write 2) and the multiply
(4, 2), bytes per element of the MLP width, against a fused kernel's 6."""


def memory_bound_bytes_per_token(c: _Ctx) -> dict[str, float]:
    """Forward-pass HBM bytes per token of the non-GEMM work, by kind, all layers, counted
    at full width (the chip does tokens_chip of them); norms x tp without SP."""
    mdl, d = c.mdl, c.mdl.d_model
    n_l = mdl.n_layers
    rep = 1.0 if c.sequence_parallel else float(c.tp)
    ff = memory_mod._active_ff(mdl)
    act = (3.0 if mdl.mlp in accounting.GATED_MLPS else 2.0) * ff * 2.0
    rope = 0.0
    if mdl.position == "rope":  # read and write q and k
        rope = 2.0 * 2.0 * (mdl.n_heads + mdl.n_kv_heads) * mdl.d_head
    norm = NORM_BYTES_PER_H
    if not c.fused_elementwise:
        norm, act = EAGER_NORM_BYTES_PER_H, act * EAGER_ACTIVATION_BYTES_PER_FF / 6.0
        rope *= EAGER_ROTARY_BYTES_PER_ELEMENT / 4.0
    parts = {
        "norms": norm * d * n_l * rep,
        "residual": RESIDUAL_BYTES_PER_H * d * n_l * rep,
        "dropout": (DROPOUT_BYTES_PER_H * d * n_l * rep) if memory_mod._dropout(mdl) else 0.0,
        "activation": act * n_l,
        "rotary": rope * n_l,
        "softmax": 0.0
        if c.flash_attention
        else SOFTMAX_BYTES_PER_SCORE * mdl.n_heads * c.seq_len / 2 * n_l,
        "fp8_casts": 0.0,
        "moe_permute": 0.0,
    }
    if mdl.moe is not None:
        k = mdl.moe.n_experts_per_token
        moe_layers = accounting.n_moe_layers(mdl)
        parts["moe_permute"] = MOE_PERMUTE_BYTES_PER_H * (k + 1) * d * moe_layers
    if c.dtype == "fp8":
        h_dim = mdl.n_heads * mdl.d_head
        qkv = (mdl.n_heads + 2 * mdl.n_kv_heads) * mdl.d_head
        g = 2.0 if mdl.mlp in accounting.GATED_MLPS else 1.0
        inputs = 2.0 * d + h_dim + ff  # activation inputs of qkv, o, up, down
        grads = qkv + d + g * ff + d  # output gradients of the same four
        parts["fp8_casts"] = FP8_CAST_BYTES[c.fp8_recipe or "delayed"] * (inputs + grads / 2) * n_l
    return parts


def memory_bound_time_s(c: _Ctx) -> float:
    """Seconds of non-GEMM work: forward bytes x passes, cross-entropy and FP8 weight casts.

    Gradient accumulation is not here: Megatron-Core fuses it into the weight-gradient GEMM's
    epilogue (gradient_accumulation_fusion), whose FP32 read and write are charged on that
    GEMM's own roofline (``terms.wgrad_roofline_factor``)."""
    parts = memory_bound_bytes_per_token(c)
    factor = MEMORY_BOUND_PASSES + (1.0 if c.op_sac else c.layer_recompute)
    again = 0.0  # Megatron's "moe" recompute runs the MoE layers' permutes and activation again
    if c.moe_recompute:
        again = parts["moe_permute"] + parts["activation"] * (
            accounting.n_moe_layers(c.mdl) / c.mdl.n_layers
        )
    ce = CROSS_ENTROPY_BYTES_PER_LOGIT * c.mdl.vocab_size
    byts = (sum(parts.values()) * factor + again + ce) * c.tokens_chip
    if c.dtype == "fp8":  # weights cast once per step (cached over micro-batches)
        byts += FP8_CAST_BYTES[c.fp8_recipe or "delayed"] * c.n_local
    return byts / c.hbm_bw
