"""Parameter and FLOP accounting of a decoder-only transformer (dense, MoE, MLA).

Counts follow the shapes in the official configs, matrix by matrix, so that for
a model whose config is complete the total equals the checkpoint's exact count.
Per layer, with d = d_model, h = n_heads, g = n_kv_heads, c = d_head:

    attention (MHA/MQA/GQA)   d*h*c (Q) + 2*d*g*c (K, V) + h*c*d (O)
    MLP                       3*d*d_ff (SwiGLU: gate, up, down) or 2*d*d_ff (GELU)
    norms                     d per RMSNorm, 2d per LayerNorm (gain and bias)

plus token embeddings V*d, an untied output head V*d, learned positions
(context*d) and a final norm. A forward pass spends 2 FLOP per weight used per
token (one multiply, one add), plus attention's context-dependent term.
Refs: Kaplan et al. 2020, sec. 2.1 (arXiv:2001.08361); Hoffmann et al. 2022,
app. F (arXiv:2203.15556); DeepSeek-AI 2024, sec. 2.1 (arXiv:2412.19437).

Longer than 400 lines because it is the counting core that every mechanism may import
(parameters, FLOP and bytes per token); split, its peers would import each other's internals.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import functools

from . import units
from .specs import Accelerator, Model

GATED_MLPS = ("swiglu", "geglu")
"""MLP kinds with a gate: two input projections (gate and up) and an elementwise product."""


def attention_params_per_layer(model: Model) -> float:
    """Weights (and biases) of one attention block.

    MLA (DeepSeek-V3): Q = W_uq · norm(W_dq x); the cached latent c_KV = W_dkv x
    and the shared RoPE key k_R = W_kr x; K_nope and V are up-projected from c_KV.
    Transformer-XL relative positions (Gopher, Chinchilla) add a d x h*c projection
    of the sinusoidal position embeddings in every layer (Dai et al. 2019, eq. 4).
    """
    d, h = model.d_model, model.n_heads
    if model.mla is not None:
        a = model.mla
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        if a.q_lora_rank:
            q = d * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * h * qk  # incl. its RMSNorm
        else:
            q = d * h * qk
        kv = d * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank  # incl. its RMSNorm
        kv += a.kv_lora_rank * h * (a.qk_nope_head_dim + a.v_head_dim)
        return float(q + kv + h * a.v_head_dim * d)
    c, g = model.d_head, model.n_kv_heads
    n = d * h * c + 2 * d * g * c + h * c * d
    if model.qkv_bias or model.linear_bias:
        n += (h + 2 * g) * c
    if model.linear_bias or model.o_bias:
        n += d  # output projection bias
    if model.qk_norm == "head":  # one RMSNorm gain of width c for Q, one for K (Qwen3)
        n += 2 * c
    elif model.qk_norm == "full":  # gains over all query and key heads (OLMo 2)
        n += (h + g) * c
    if model.position == "relative":
        n += d * h * c
    return float(n)


def mlp_params(model: Model, d_ff: int) -> float:
    """Weights of one dense MLP of hidden width ``d_ff`` (SwiGLU/GeGLU: 3 matrices, GELU: 2)."""
    d = model.d_model
    gated = model.mlp in GATED_MLPS
    n = (3.0 if gated else 2.0) * d * d_ff
    if model.mlp_bias or (model.linear_bias and not gated):
        n += (2 if gated else 1) * d_ff + d
    return n


def _norm_params(model: Model) -> float:
    return (2.0 if model.norm == "layernorm" else 1.0) * model.d_model


def _shared_expert_params(model: Model) -> float:
    moe = model.moe
    assert moe is not None, "called for MoE models only"
    return moe.n_shared_experts * mlp_params(model, moe.d_ff_shared_expert or moe.d_ff_expert)


def ffn_params_per_layer(model: Model, layer: int) -> tuple[float, float]:
    """(total, active per token) feed-forward weights of layer ``layer`` (0-based)."""
    moe = model.moe
    if moe is None or layer < moe.n_dense_layers:
        n = mlp_params(model, model.d_ff)
        return n, n
    expert = mlp_params(model, moe.d_ff_expert)
    router = float(moe.n_experts * model.d_model)
    router += moe.n_experts * moe.router_bias + model.d_model * moe.shared_expert_gate
    total = moe.n_experts * expert + _shared_expert_params(model) + router
    active = moe.n_experts_per_token * expert + _shared_expert_params(model) + router
    return total, active


def embedding_params(model: Model) -> float:
    """Input embeddings (plus learned positions), which a forward pass looks up, not multiplies."""
    n = float(model.vocab_size * model.d_model)
    if model.position == "learned":
        n += model.max_context_tokens * model.d_model
    return n


def output_head_params(model: Model) -> float:
    """The unembedding matrix when it is not tied to the input embeddings."""
    return 0.0 if model.tied_embeddings else float(model.vocab_size * model.d_model)


def param_breakdown(model: Model) -> dict[str, float]:
    """Parameters by part: embedding, attention, ffn (all experts), norms, output head."""
    ffn = sum(ffn_params_per_layer(model, i)[0] for i in range(model.n_layers))
    return {
        "embedding": embedding_params(model),
        "attention": model.n_layers * attention_params_per_layer(model),
        "ffn": ffn,
        "norms": (model.n_norms_per_layer * model.n_layers + 1) * _norm_params(model),
        "output_head": output_head_params(model),
    }


def n_params(model: Model) -> float:
    """Total parameters N, every expert included.

    >>> from llmphys import specs
    >>> int(n_params(specs.model("llama3_8b")))
    8030261248
    """
    return _counts(model)[0]


def n_active_params(model: Model) -> float:
    """Parameters a single token uses: only top-k routed (plus shared) experts for MoE.

    >>> from llmphys import specs
    >>> round(n_active_params(specs.model("mixtral_8x7b")) / 1e9, 1)
    12.9
    """
    return _counts(model)[1]


@functools.lru_cache(maxsize=512)
def _counts(model: Model) -> tuple[float, float]:
    """(total, active) parameters, counted once per spec: a layout search times thousands of
    layouts of one model, and the per-layer recount was most of each prediction's time."""
    total = sum(param_breakdown(model).values())
    ffn_total = sum(ffn_params_per_layer(model, i)[0] for i in range(model.n_layers))
    ffn_active = sum(ffn_params_per_layer(model, i)[1] for i in range(model.n_layers))
    return total, total - ffn_total + ffn_active


def checkpoint_weight_bytes(model: Model) -> float:
    """Bytes of the released checkpoint's weights, at the precision it ships in.

    ``model.checkpoint_dtype`` "bf16": 2 bytes per parameter. "fp8" (DeepSeek-V3, whose
    README_WEIGHTS.md documents FP8 e4m3 weights with 128 x 128 block scales): 1 byte per
    parameter, the embedding and the output head at 2 (an assumption: the weight documentation
    does not say which tensors are FP8; 0.9 GB at most), the F32 block scales (1/16,384 of a
    float per weight, about 0.17 GB for DeepSeek-V3) left out.

    >>> from llmphys import specs
    >>> round(checkpoint_weight_bytes(specs.model("deepseek_v3")) / 1e9)  # GB, not BF16's 1,342
    673
    """
    b16 = units.bytes_per_element("bf16")
    if model.checkpoint_dtype == "bf16":
        return n_params(model) * b16
    wide = embedding_params(model) + (
        0 if model.tied_embeddings else model.vocab_size * model.d_model
    )
    return (n_params(model) - wide) * units.bytes_per_element(model.checkpoint_dtype) + wide * b16


def attention_flop_per_token(model: Model, *, context_tokens: float) -> float:
    """Context-dependent forward FLOP of one token: scores QK^T and the weighted sum of V.

    2 FLOP per multiply-add, per layer: 2*h*(d_qk + d_v)*T over the T keys attended to
    (capped at the sliding window); for MHA with h*c = d_attn that is 4 L d_attn T.
    Kaplan et al. 2020 (arXiv:2001.08361), table 1, list only "Attention: Mask",
    2 n_layer n_ctx d_attn: the QK^T product. Their table leaves out the product of the
    softmax weights with V, another 2 n_layer n_ctx d_attn, which this count includes, as
    Hoffmann et al. 2022 (arXiv:2203.15556, appendix F) do; hence twice Kaplan's term.
    MLA is counted as training and prefill run it, with per-head keys and values expanded
    from the latent (``kv_cache.decode_attention_flop_per_context_token`` is the absorbed
    decode count).

    >>> from llmphys import specs
    >>> m = specs.model("gpt3_175b")  # MHA: 4 L d_attn T against Kaplan's 2 L d_attn T
    >>> attention_flop_per_token(m, context_tokens=2048) / (2 * m.n_layers * 2048 * m.d_model)
    2.0
    """
    t = units.check_positive("context_tokens", context_tokens)
    if model.sliding_window_tokens:
        t = min(t, float(model.sliding_window_tokens))
    if model.mla is not None:
        per_head = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim + model.mla.v_head_dim
    else:
        per_head = 2 * model.d_head
    return 2.0 * model.n_layers * model.n_heads * per_head * t


def forward_flop_per_token(model: Model, *, context_tokens: float) -> float:
    """Forward FLOP per token: 2 x (active weights that are multiplied) + the attention term.

    Embedding look-ups cost no FLOP; the output head is a real matmul and counts.
    For a causal training sequence of length T, the average token attends to
    (T + 1) / 2 keys; pass that as ``context_tokens``.

    >>> from llmphys import specs
    >>> f = forward_flop_per_token(specs.model("llama3_8b"), context_tokens=4096)
    >>> round(f / 1e9, 2)  # GFLOP: 2 x 7.5e9 weights + 2.1 GFLOP of attention
    17.16
    """
    matmul_weights = n_active_params(model) - embedding_params(model)
    if model.tied_embeddings:
        matmul_weights += model.vocab_size * model.d_model  # the tied matrix is reused as the head
    return 2.0 * matmul_weights + attention_flop_per_token(model, context_tokens=context_tokens)


def attention_share(model: Model, *, context_tokens: float) -> float:
    """Attention's forward FLOP per token as a fraction of the weight matmuls' (dimensionless).

    attention_flop_per_token(T) / (2 N_matmul), where N_matmul counts every multiplied weight
    (the output head included, embedding look-ups excluded), exactly the "weight matmuls" of
    :func:`flop_breakdown_per_token`. This is the one definition the book uses for "attention
    adds x%": the forward pass costs (1 + share) times 2 N_matmul. For a causal training
    sequence of T tokens pass the average context (T + 1) / 2.

    >>> from llmphys import specs
    >>> round(100 * attention_share(specs.model("llama31_405b"), context_tokens=(8192 + 1) / 2), 1)
    4.2
    """
    attn = attention_flop_per_token(model, context_tokens=context_tokens)
    return attn / (forward_flop_per_token(model, context_tokens=context_tokens) - attn)


def train_flop(n_params: float, n_tokens: float) -> float:
    """Training compute C = 6 N D in FLOP (forward 2N + backward 4N per token).

    Kaplan et al. 2020, sec. 2.1; Hoffmann et al. 2022, eq. 4 uses the same approximation.

    >>> f"{train_flop(175e9, 300e9):.2e}"  # GPT-3; its paper reports 3.14e23
    '3.15e+23'
    """
    units.check_positive("n_params", n_params)
    units.check_positive("n_tokens", n_tokens)
    return 6.0 * n_params * n_tokens


# ----------------------------------------------------------------- architecture chapter
# Rough FLOP per element of the non-matmul operations, for the share of work that is
# not a matrix multiply. The conclusion (over 99% of FLOP in matmuls) survives
# multiplying every one of these by ten; see tests/test_accounting.py.
ELEMENTWISE_FLOP = {
    "softmax": 5.0,  # per score: max, subtract, exp, sum, divide
    "rmsnorm": 4.0,  # per element: square, sum, scale, gain
    "layernorm": 7.0,  # per element: mean, subtract, square, sum, scale, gain, bias
    "swiglu": 5.0,  # per hidden element: exp, add, divide, x * sigmoid, * up
    "gelu": 8.0,  # per hidden element, tanh approximation
    "geglu": 9.0,  # per hidden element: the tanh GELU of the gate, then * up
    "rope": 3.0,  # per rotated element: two multiplies, one add
    "residual": 1.0,  # per element of each residual add
}


def attention_rivals_params_context_tokens(model: Model) -> float:
    """Context T (tokens) at which attention's FLOP per token equals the weights' 2N_matmul.

    Solves attention_flop_per_token(T) = forward_flop_per_token(T) - attention term;
    ``inf`` if a sliding window caps attention below that. For MHA with d_ff = 4d this
    is about 6 d_model. Kaplan et al. 2020, sec. 2.1 make the same comparison with their
    QK^T-only attention term and so find 12 d_model.

    >>> from llmphys import specs
    >>> round(attention_rivals_params_context_tokens(specs.model("llama3_70b")))
    53027
    """
    per_token = attention_flop_per_token(model, context_tokens=1.0)
    weights = forward_flop_per_token(model, context_tokens=1.0) - per_token
    t = weights / per_token
    if model.sliding_window_tokens and t > model.sliding_window_tokens:
        return float("inf")
    return t


def flop_breakdown_per_token(model: Model, *, context_tokens: float) -> dict[str, float]:
    """Forward FLOP of one token by kind: weight matmuls, attention matmuls, and the rest.

    Matmul parts sum to ``forward_flop_per_token``; the others use ``ELEMENTWISE_FLOP``.
    """
    t = units.check_positive("context_tokens", context_tokens)
    if model.sliding_window_tokens:
        t = min(t, float(model.sliding_window_tokens))
    attn = attention_flop_per_token(model, context_tokens=context_tokens)
    L, d, h, e = model.n_layers, model.d_model, model.n_heads, ELEMENTWISE_FLOP
    norm_width = (model.n_norms_per_layer * L + 1) * d
    if model.mla is not None:
        norm_width += L * (model.mla.q_lora_rank + model.mla.kv_lora_rank)
        rotated = L * (h + 1) * model.mla.qk_rope_head_dim
    else:
        rotated = L * (h + model.n_kv_heads) * model.d_head
    hidden = sum(_active_hidden_width(model, i) for i in range(L))
    router = L * model.moe.n_experts * e["softmax"] if model.moe is not None else 0.0
    return {
        "weight matmuls": forward_flop_per_token(model, context_tokens=context_tokens) - attn,
        "attention matmuls": attn,
        "softmax": e["softmax"] * L * h * t + router,
        "norms": e[model.norm] * norm_width,
        "activations": e[model.mlp] * hidden,
        "rope": e["rope"] * rotated if model.position == "rope" else 0.0,
        "residual adds": e["residual"] * 2 * L * d,
    }


def elementwise_bytes_per_token(
    model: Model, *, bytes_per_element: float = 2.0
) -> dict[str, float]:
    """HBM bytes per token of the non-matmul operations, each run as its own (unfused) kernel.

    Each reads its inputs and writes its output once: a norm reads and writes d values
    (2d), SwiGLU/GeGLU reads gate and up and writes their product (3 d_ff; GELU 2 d_ff), RoPE
    reads and writes the rotated queries and keys, a residual add reads two streams and
    writes one (3d). The softmax lives inside the fused attention kernel and moves nothing.

    >>> from llmphys import specs
    >>> round(sum(elementwise_bytes_per_token(specs.model("llama3_70b")).values()) / 1e6, 1)
    29.9
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    L, d = model.n_layers, model.d_model
    norm_width = (model.n_norms_per_layer * L + 1) * d
    if model.mla is not None:
        norm_width += L * (model.mla.q_lora_rank + model.mla.kv_lora_rank)
        rotated = L * (model.n_heads + 1) * model.mla.qk_rope_head_dim
    else:
        rotated = L * (model.n_heads + model.n_kv_heads) * model.d_head
    hidden = sum(_active_hidden_width(model, i) for i in range(L))
    gated = model.mlp in GATED_MLPS
    return {
        "norms": 2 * norm_width * b,
        "activations": (3 if gated else 2) * hidden * b,
        "rope": 2 * rotated * b if model.position == "rope" else 0.0,
        "residual adds": 3 * 2 * L * d * b,
    }


def elementwise_roofline_s_per_token(
    model: Model, acc: Accelerator, *, context_tokens: float, bytes_per_element: float = 2.0
) -> dict[str, float]:
    """Roofline seconds per token: weight matmuls at the dense BF16 peak against the
    non-matmul operations, timed by their FLOP at that peak and by their unfused HBM bytes.

    ``matmul_s`` = weight-matmul FLOP / peak; ``elementwise_flop_s`` = norm, activation,
    RoPE and residual FLOP / peak (what their FLOP share suggests); ``elementwise_hbm_s`` =
    :func:`elementwise_bytes_per_token` / HBM bandwidth (what they cost unfused).

    >>> from llmphys import specs
    >>> t = elementwise_roofline_s_per_token(specs.model("llama3_70b"),
    ...                                      specs.accelerator("h100_sxm"), context_tokens=8192)
    >>> round(100 * t["elementwise_hbm_s"] / t["matmul_s"], 1)  # % of the weight-matmul time
    6.3
    """
    parts = flop_breakdown_per_token(model, context_tokens=context_tokens)
    small = sum(parts[k] for k in ("norms", "activations", "rope", "residual adds"))
    nbytes = sum(elementwise_bytes_per_token(model, bytes_per_element=bytes_per_element).values())
    return {
        "matmul_s": parts["weight matmuls"] / acc.peak_bf16_flop_per_s,
        "elementwise_flop_s": small / acc.peak_bf16_flop_per_s,
        "elementwise_hbm_s": nbytes / acc.hbm_bytes_per_s,
    }


def _active_hidden_width(model: Model, layer: int) -> float:
    moe = model.moe
    if moe is None or layer < moe.n_dense_layers:
        return float(model.d_ff)
    shared = moe.n_shared_experts * (moe.d_ff_shared_expert or moe.d_ff_expert)
    return float(moe.n_experts_per_token * moe.d_ff_expert + shared)


def matmul_flop_share(model: Model, *, context_tokens: float) -> float:
    """Fraction of forward FLOP spent in matrix multiplies (weights and attention).

    >>> from llmphys import specs
    >>> round(matmul_flop_share(specs.model("llama3_70b"), context_tokens=8192), 4)
    0.9986
    """
    parts = flop_breakdown_per_token(model, context_tokens=context_tokens)
    return (parts["weight matmuls"] + parts["attention matmuls"]) / sum(parts.values())


def swiglu_matched_d_ff(d_model: float) -> float:
    """Hidden width at which a SwiGLU MLP (3 d d_ff) has a 4d GELU MLP's 8 d^2 weights: 8d/3.

    Shazeer 2020 (arXiv:2002.05202), sec. 2.

    >>> round(swiglu_matched_d_ff(4096))
    10923
    """
    return 8.0 * units.check_positive("d_model", d_model) / 3.0


def modern_feature_counts(*, since_year: int = 2023) -> dict[str, int]:
    """How many registry models released in ``since_year`` or later use each modern feature.

    Keys: ``n_models`` (all of them), ``rope``, ``rmsnorm``, ``swiglu``, ``shared_kv`` (GQA,
    MQA or MLA) and ``moe``.

    >>> c = modern_feature_counts()
    >>> c["rope"] <= c["n_models"]
    True
    """
    from . import specs

    modern = [m for m in specs.models().values() if m.release_year >= since_year]
    return {
        "n_models": len(modern),
        "rope": sum(m.position == "rope" for m in modern),
        "rmsnorm": sum(m.norm == "rmsnorm" for m in modern),
        "swiglu": sum(m.mlp == "swiglu" for m in modern),
        "shared_kv": sum(m.n_kv_heads < m.n_heads or m.mla is not None for m in modern),
        "moe": sum(m.moe is not None for m in modern),
    }


def sparsity(model: Model) -> float:
    """Weights a batch reads once every expert is touched over the weights one token multiplies.

    (N - N_emb) / (N_active - N_emb): total over active parameters, both without the embedding
    table (which a token looks up, not multiplies); 1 for a dense model.

    >>> from llmphys import specs
    >>> (round(sparsity(specs.model("llama3_70b")), 6),
    ...  round(sparsity(specs.model("deepseek_v3")), 1))
    (1.0, 18.3)
    """
    emb = embedding_params(model)
    return (n_params(model) - emb) / (n_active_params(model) - emb)


def n_moe_layers(model: Model) -> int:
    """Layers whose FFN is a routed mixture of experts: every layer after the model's leading
    dense ones (0 for a dense model). The one MoE-layer count: weight reads, expert FLOP and the
    expert all-to-all of ``inference``, ``scale_up`` and ``predict.serve`` all use it.

    >>> from llmphys import specs
    >>> [n_moe_layers(specs.model(k)) for k in ("deepseek_v3", "mixtral_8x7b", "llama3_8b")]
    [58, 32, 0]
    """
    return 0 if model.moe is None else model.n_layers - model.moe.n_dense_layers
