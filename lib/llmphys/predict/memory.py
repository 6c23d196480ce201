"""What one chip holds for a training layout, laid out as Megatron-Core and FSDP lay it out.

    weights        16-bit copy of this chip's shard of the parameters (ZeRO-3: 1/dp of it,
                   plus the gathered layer in flight, or all of it when kept for the backward)
    fp8 weights    FP8 runs: Transformer Engine keeps an FP8 copy (and its transpose) beside the
                   BF16 one, 2 bytes per parameter, unless the weights are FP8-only
    gradients      FP32 main gradients (Megatron's default buffer), sharded by ZeRO-2/3
    optimizer      FP32 master weights and Adam's two moments, 12 bytes per parameter,
                   sharded over DP x CP (the distributed optimizer shards over both); with
                   ep > 1 the experts' state over their own data-parallel group, TP x DP x CP
                   / EP (expert TP 1): Megatron-LM at 1e057005 gives expert parameters their
                   own buffers and optimizer over the expert data-parallel group, of size
                   world / (expert TP x EP x PP) (core/optimizer/__init__.py 568-602,
                   core/distributed/distributed_data_parallel.py 379-386, parallel_state.py
                   718-724); ZeRO-2/3 gradients and ZeRO-3 weights follow the same groups
                   (Megatron-FSDP: core/distributed/custom_fsdp/param_and_grad_buffer.py 1292)
    activations    the architecture's own count (``parallelism.activation_bytes_per_layer``:
                   GQA K/V widths, SwiGLU's gate, no dropout for RMSNorm models, flash
                   attention keeps no score matrix) x layers per stage x micro-batches in flight
    overhead       allocator fragmentation and workspaces, ``Efficiencies.allocator_overhead``
                   of the rest

``state_layout="fp32_params"`` lays the state out as JAX frameworks (MaxText) do: FP32
parameters that are themselves the master copy, FP32 gradients, Adam's two FP32 moments, 16
bytes per parameter, the 16-bit copy cast per layer as it is used. ``state_replicas`` data-
parallel replicas hold the same shard (MaxText's data parallelism across slices, PyTorch's
HSDP): the state is sharded over dp x cp / state_replicas chips.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import accounting, parallelism
from ..specs import Model

MAIN_GRAD_BYTES = 4.0
"""Megatron-Core accumulates gradients in an FP32 'main_grad' buffer (DistributedDataParallel
with accumulate_allreduce_grads_in_fp32; Megatron-LM docs, distributed optimizer)."""

OPTIMIZER_BYTES_PER_PARAM = 12.0
"""FP32 master weight and Adam's two FP32 moments (Rajbhandari et al. 2020, arXiv:1910.02054,
sec. 3.1: K = 12)."""

STATE_LAYOUTS = {"megatron": (2.0, MAIN_GRAD_BYTES, OPTIMIZER_BYTES_PER_PARAM),
                 "fp32_params": (4.0, 4.0, 8.0)}  # fmt: skip
"""Bytes per parameter of (weights, gradients, optimizer) by framework. "fp32_params": MaxText's
FP32 parameters (AI-Hypercomputer/maxtext, MaxText/layers/linears.py at commit 76bd53b0f creates
the kernels ``jnp.float32`` and casts them ``jnp.asarray(kernel, self.dtype)`` at use; later
base.yml's ``weight_dtype: float32``), gradients in the parameters' dtype, and ``optax.adamw``
without ``mu_dtype`` (maxtext_utils.py, same commit), whose moments take the parameters' dtype."""

FP8_WEIGHT_COPY_BYTES = 2.0
"""Transformer Engine's FP8 weight cache: the FP8 weight and its transpose, 1 byte each."""


def _dropout(mdl: Model) -> bool:
    # GPT-2-style blocks (learned positions, LayerNorm with bias) trained with dropout; the
    # RoPE/RMSNorm generation does not.
    return mdl.position == "learned"


def local_params(mdl: Model, *, tp: int, pp: int, ep: int, n_params: float) -> float:
    """Parameters one chip holds: ``n_params`` split tp x pp ways, the experts (with ep > 1)
    split ep x pp ways instead of tp x pp."""
    n = n_params / (tp * pp)
    if mdl.moe is not None and ep > 1:
        expert = _stage_expert_params(mdl, pp)
        n += expert / ep - expert / tp
    return n


def _stage_expert_params(mdl: Model, pp: int) -> float:
    """Routed experts' parameters in one pipeline stage (``accounting.mlp_params`` each)."""
    assert mdl.moe is not None
    expert = accounting.mlp_params(mdl, mdl.moe.d_ff_expert) * mdl.moe.n_experts
    return expert * (accounting.n_moe_layers(mdl) / pp)


def param_shares(
    mdl: Model,
    *,
    tp: int,
    pp: int,
    dp: int,
    cp: int,
    ep: int = 1,
    state_replicas: int = 1,
    n_params: float | None = None,
) -> tuple[float, float, float]:
    """(parameters one chip holds, parameters of the sharded state it owns, expert parameters
    it holds): dense state is sharded over dp x cp / state_replicas; with ep > 1 the experts'
    over their data-parallel group, tp x dp x cp / (ep x state_replicas) (module docstring).
    The one count the memory, the optimizer step and the DP traffic use. The zoo's row 5
    (TP 4, PP 8, EP 8, DP 8: an expert data-parallel group of 4):

    >>> from llmphys import specs
    >>> q3 = specs.model_spec("qwen3_235b_a22b")
    >>> n, owned, e = param_shares(q3, tp=4, pp=8, dp=8, cp=1, ep=8)
    >>> round(n / 1e9, 2), round(owned / 1e9, 3), round(e / 1e9, 2)  # billions
    (3.8, 0.918, 3.55)
    """
    if state_replicas < 1 or (dp * cp) % state_replicas:
        raise ValueError(
            f"state_replicas={state_replicas!r} must be a positive divisor of dp x cp = {dp * cp}"
        )
    if n_params is None:
        n_params = accounting.n_params(mdl)
    n_local = local_params(mdl, tp=tp, pp=pp, ep=ep, n_params=n_params)
    shard = dp * cp // state_replicas
    if mdl.moe is None or ep == 1:
        return n_local, n_local / shard, 0.0
    if (tp * dp * cp) % (ep * state_replicas):
        raise ValueError(
            f"ep={ep} x state_replicas={state_replicas} must divide tp x dp x cp = "
            f"{tp * dp * cp}: the expert data-parallel group folds tp x dp x cp into ep"
        )
    e_local = _stage_expert_params(mdl, pp) / ep
    owned = (n_local - e_local) / shard + e_local * ep * state_replicas / (tp * dp * cp)
    return n_local, owned, e_local


def memory_parts(
    mdl: Model,
    *,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    ep: int,
    seq_len: int,
    micro_batch_size: int,
    recompute: str,
    zero_stage: int,
    dtype: str,
    fsdp_weight_gathers: int,
    sequence_parallel: bool,
    flash_attention: bool,
    activation_microbatches: float,
    weight_copies: float,
    allocator_overhead: float,
    n_params: float | None = None,
    selective_policy: str = "attention",
    state_layout: str = "megatron",
    state_replicas: int = 1,
) -> dict[str, float]:
    """Bytes per chip by kind (see the module docstring), summing to the chip's footprint.

    ``n_params`` (the model's total) may be passed to skip the recount. ``selective_policy``
    is what ``recompute="selective"`` keeps (``predict.policies.SELECTIVE_POLICIES``): "op" keeps
    ``op_sac_bytes_per_token`` per layer, "layer" keeps half the layers whole and half as
    full recomputation keeps them, "moe" drops the MoE layers' expert tensors (their input, the
    checkpoint's, stays counted as the MLP input), "dots_no_batch" keeps
    ``jax_dots_bytes_per_token`` per layer, "dots_no_batch_offloaded" keeps the layer inputs and
    one layer's dots, fetched back from host memory for its backward."""
    if state_layout not in STATE_LAYOUTS:
        raise ValueError(
            f"state_layout={state_layout!r} is not known; allowed: {', '.join(STATE_LAYOUTS)}"
        )
    n_local, n_owned, _ = param_shares(
        mdl, tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, state_replicas=state_replicas, n_params=n_params
    )
    shard = dp * cp // state_replicas
    w_bytes, g_bytes, o_bytes = STATE_LAYOUTS[state_layout]
    weights = w_bytes * n_local * weight_copies
    if zero_stage == 3:  # the gathered layers in flight are 16-bit
        kept = n_local if fsdp_weight_gathers == 1 else 2.0 * n_local / max(1, mdl.n_layers // pp)
        weights = w_bytes * n_owned + 2.0 * kept * (1 - 1 / shard)
    grads = g_bytes * (n_owned if zero_stage >= 2 else n_local)
    optimizer = o_bytes * (n_owned if zero_stage >= 1 else n_local)
    fp8 = 0.0
    if dtype == "fp8":
        fp8 = FP8_WEIGHT_COPY_BYTES * (n_owned if zero_stage == 3 else n_local)
    rec = "selective" if recompute == "none" and flash_attention else recompute
    per_layer = parallelism.activation_bytes_per_layer(
        seq_len=seq_len // cp,
        micro_batch=micro_batch_size,
        d_model=mdl.d_model,
        n_heads=mdl.n_heads,
        tp=tp,
        sequence_parallel=sequence_parallel,
        recompute=rec,
        n_kv_heads=mdl.n_kv_heads,
        d_ff=_active_ff(mdl),
        gated_mlp=mdl.mlp in accounting.GATED_MLPS,
        dropout=_dropout(mdl),
    )
    tokens = seq_len // cp * micro_batch_size
    in_flight = 0.0  # activations held once, not per layer
    if recompute == "selective" and selective_policy.startswith("dots_no_batch"):
        dots = jax_dots_bytes_per_token(mdl, tp=tp, sequence_parallel=sequence_parallel)
        per_layer = dots * tokens
        if selective_policy == "dots_no_batch_offloaded":
            per_layer = 2.0 * mdl.d_model / (tp if sequence_parallel else 1) * tokens
            in_flight = dots * tokens - per_layer
    elif recompute == "selective" and selective_policy != "attention":
        op = op_sac_bytes_per_token(mdl, tp=tp, sequence_parallel=sequence_parallel)
        per_layer = op * tokens if selective_policy == "op" else per_layer
        if selective_policy == "layer":  # every second block keeps only its input
            full = 2.0 * tokens * mdl.d_model / (tp if sequence_parallel else 1)
            per_layer = (per_layer + full) / 2.0
        if (
            selective_policy == "moe" and mdl.moe is not None
        ):  # the MoE layers keep only their input
            g = 6.0 if mdl.mlp in accounting.GATED_MLPS else 4.0
            mlp = g * _active_ff(mdl) * tokens / tp
            per_layer -= mlp * accounting.n_moe_layers(mdl) / mdl.n_layers
    acts = per_layer * (mdl.n_layers / pp) * activation_microbatches + in_flight
    parts = {
        "weights": weights,
        "fp8 weights": fp8,
        "gradients": grads,
        "optimizer": optimizer,
        "activations": acts,
    }
    parts["overhead"] = allocator_overhead * sum(parts.values())
    return parts


def op_sac_bytes_per_token(mdl: Model, *, tp: int = 1, sequence_parallel: bool = True) -> float:
    """Bytes one layer keeps per token under torchtitan's op-level selective checkpointing.

    The policy saves the outputs of the block's matmuls "except every second mm" and of the
    flash-attention kernel, and recomputes everything else (pytorch/torchtitan,
    torchtitan/parallelisms/parallelize_llama.py, ``_save_list``, commit 9dec370); the
    checkpoint wrapper keeps the block's input. In a Llama block (wq, wk, wv, wo, w1, w3, w2)
    that is, 16-bit each: the input d, wq's H, wv's h_kv, w1's f, w2's d, and the attention
    output H, plus the kernel's FP32 log-sum-exp, 4 bytes per head. Shards split by ``tp``
    (the input too under sequence parallelism). Llama 3 8B, (4,096 + 4,096 + 1,024 + 14,336 +
    4,096 + 4,096) x 2 + 32 x 4:

    >>> from llmphys import specs
    >>> op_sac_bytes_per_token(specs.model("llama3_8b"))
    63616.0
    """
    h = mdl.n_heads * mdl.d_head
    kv = mdl.n_kv_heads * mdl.d_head
    ff = _active_ff(mdl)
    split = 2.0 * (h + kv + ff + mdl.d_model + h) + 4.0 * mdl.n_heads
    kept = 2.0 * mdl.d_model
    return split / tp + kept / (tp if sequence_parallel else 1)


def jax_dots_bytes_per_token(mdl: Model, *, tp: int = 1, sequence_parallel: bool = True) -> float:
    """Bytes one layer keeps per token under JAX's ``checkpoint_dots_with_no_batch_dims``.

    The policy makes the output of every ``dot_general`` without batch dimensions saveable
    (jax-ml/jax, jax/_src/ad_checkpoint.py, ``dot_with_no_batch_dims_saveable``); JAX keeps the
    saveable values the backward or its recomputation reads, and the remat'd layer keeps its
    input. In a pre-norm block that is, 16-bit each: the input d; the q, k, v projections H,
    h_kv, h_kv (read by the attention kernel, rerun in the backward); the attention output
    projection d (to rebuild the residual sum the second norm reads); the MLP's up projections
    f (and the gate's f). Not the MLP's down projection: its output only enters the layer's
    output, which the next layer keeps as its input. MaxText shards them over ``tensor`` (its
    ``activation_embed``, ``activation_heads``, ``activation_mlp`` rules), the input too under
    sequence parallelism. In a parallel block (``mdl.parallel_block``: y = x + Attn(N(x)) +
    MLP(N(x))) no norm reads the attention output projection, so it is not kept: its output,
    like the MLP's down projection, only enters the layer's output. Llama 3 8B, 2 x (4,096 +
    4,096 + 2 x 1,024 + 4,096 + 2 x 14,336), and the same shape as a parallel block:

    >>> import dataclasses
    >>> from llmphys import specs
    >>> jax_dots_bytes_per_token(specs.model("llama3_8b"))
    86016.0
    >>> jax_dots_bytes_per_token(dataclasses.replace(specs.model("llama3_8b"), parallel_block=True))
    77824.0
    """
    h = mdl.n_heads * mdl.d_head
    kv = mdl.n_kv_heads * mdl.d_head
    ups = _active_ff(mdl) * (2 if mdl.mlp in accounting.GATED_MLPS else 1)
    out_proj = 0 if mdl.parallel_block else mdl.d_model
    split = 2.0 * (h + 2 * kv + out_proj + ups)
    return split / tp + 2.0 * mdl.d_model / (tp if sequence_parallel else 1)


def _active_ff(mdl: Model) -> int:
    """The MLP width a token passes through: d_ff, or top-k (plus shared) experts' widths."""
    if mdl.moe is None:
        return mdl.d_ff
    moe = mdl.moe
    return moe.d_ff_expert * (moe.n_experts_per_token + moe.n_shared_experts)
