"""The names a training layout may give its recomputation and its expert dispatch.

``SELECTIVE_POLICIES`` (what ``recompute="selective"`` keeps, from Megatron, torchtitan and JAX)
and ``MOE_DISPATCHERS`` (how expert parallelism moves tokens): vocabularies the run records,
the layout checks and the CLI share (split from ``predict/terms.py``).

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

SELECTIVE_POLICIES = (
    "attention", "op", "layer", "moe", "dots_no_batch", "dots_no_batch_offloaded",
)  # fmt: skip
"""What ``recompute="selective"`` recomputes. "attention": Megatron's selective recomputation,
the attention core only (Korthikanti et al. 2022, sec. 5), free under a flash kernel. "op":
torchtitan's op-level policy, which saves the output of every matmul "except every second mm"
of each transformer block and recomputes every other op (pytorch/torchtitan
torchtitan/parallelisms/parallelize_llama.py, ``_save_list`` and ``_custom_policy``, commit
9dec370): in a Llama block the mms run wq, wk, wv, wo, w1, w3, w2, so wk, wo and w3 run again,
with the block's norms, activation and rotary. "layer": torchtitan's "int" option at its
default 2, 'checkpoint every other layer' (torchtitan/config_manager.py, commit 9dec370).
"moe": Megatron-Core's ``--recompute-modules moe`` ("moe": recompute the MoE layer, by normal
checkpointing: NVIDIA/Megatron-LM, megatron/core/transformer/transformer_config.py,
``recompute_modules``), which runs each MoE layer's forward again in its backward: the router,
the dispatch and combine all-to-alls and the expert GEMMs (its "layernorm" companion, cheap,
is not charged). "dots_no_batch": JAX's ``checkpoint_dots_with_no_batch_dims``, which saves the
output of every ``dot_general`` without batch dimensions (the weight matmuls; attention's
batched einsums and a flash kernel are not such dots) and recomputes the rest (jax-ml/jax,
jax/_src/ad_checkpoint.py, ``dot_with_no_batch_dims_saveable``); MaxText's
``remat_policy=minimal``. "dots_no_batch_offloaded": the same dots moved to pinned host memory
(``offload_dot_with_no_batch_dims``), MaxText's ``minimal_offloaded``. Their time is charged as
"attention"'s: no matmul runs again; the flash kernel's rerun forward and the host copies are
not charged (``memory.jax_dots_bytes_per_token``)."""

MOE_DISPATCHERS = ("alltoall", "deepep")
"""How expert parallelism moves tokens: "alltoall" (NCCL's all-to-all, every remote copy on
its own) or "deepep" (DeepEP's node-deduplicated dispatch; DeepSeek-AI 2024, arXiv:2412.19437)."""
