"""The checks of a training layout's arguments before ``train_step`` times it.

``layout`` returns the data-parallel degree and the micro-batches per rank, or a ValueError
that names the argument and the numbers that do not divide; ``check_options`` names an unknown
option and the allowed values.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import accounting, parallelism
from ..specs import Model
from .policies import MOE_DISPATCHERS, SELECTIVE_POLICIES
from .runs import ATTENTION_FLOPS, FP8_RECIPES


def layout(
    n_chips: int,
    tp: int,
    pp: int,
    cp: int,
    ep: int,
    seq_len: int,
    global_batch_tokens: float,
    micro_batch_size: int,
    interleave: int,
    model: Model,
) -> tuple[int, int]:
    for name, v in (
        ("n_chips", n_chips),
        ("tp", tp),
        ("pp", pp),
        ("cp", cp),
        ("ep", ep),
        ("seq_len", seq_len),
        ("micro_batch_size", micro_batch_size),
        ("interleave", interleave),
    ):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if n_chips % (tp * pp * cp):
        raise ValueError(
            f"n_chips={n_chips} is not divisible by tp*pp*cp = {tp}*{pp}*{cp} "
            f"= {tp * pp * cp}; the data-parallel degree must be an integer"
        )
    dp = n_chips // (tp * pp * cp)
    if (dp * cp * tp) % ep:
        raise ValueError(
            f"ep={ep} must divide dp*cp*tp = {dp * cp * tp} "
            f"(= n_chips / pp); experts shard inside the folded expert group"
        )
    if ep > 1 and model.moe is None:
        raise ValueError(f"ep={ep} needs a mixture-of-experts model; {model.key} is dense")
    if seq_len % cp:
        raise ValueError(f"seq_len={seq_len} is not divisible by cp={cp}")
    n_seqs = global_batch_tokens / seq_len
    if n_seqs != int(n_seqs):
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} is not a whole number "
            f"of {seq_len}-token sequences"
        )
    per_rank = int(n_seqs) / dp
    if per_rank < 1:
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} over dp={dp} replicas is "
            f"{global_batch_tokens / dp:g} tokens each, less than one "
            f"{seq_len}-token sequence: the batch cannot feed this many replicas"
        )
    if per_rank != int(per_rank) or int(per_rank) % micro_batch_size:
        raise ValueError(
            f"{int(n_seqs)} sequences over dp={dp} ranks in micro-batches of "
            f"{micro_batch_size} do not divide: each rank needs a whole number "
            f"of micro-batches"
        )
    if model.n_layers + 2 < pp * interleave:  # the embedding and the head may be chunks
        raise ValueError(
            f"pp*interleave = {pp}*{interleave} exceeds the model's "
            f"{model.n_layers} layers plus embedding and head"
        )
    return dp, int(per_rank) // micro_batch_size


def check_options(
    recompute: str,
    zero_stage: int,
    attention_flops: str,
    dtype: str,
    fp8_recipe: str,
    selective_policy: str,
    moe_dispatcher: str,
) -> None:
    """ValueError naming the option and the allowed values."""
    if moe_dispatcher not in MOE_DISPATCHERS:
        raise ValueError(
            f"moe_dispatcher={moe_dispatcher!r} is not known; allowed: {', '.join(MOE_DISPATCHERS)}"
        )
    if selective_policy not in SELECTIVE_POLICIES:
        raise ValueError(
            f"selective_policy={selective_policy!r} is not known; "
            f"allowed: {', '.join(SELECTIVE_POLICIES)}"
        )
    if recompute not in parallelism.RECOMPUTE:
        raise ValueError(
            f"recompute={recompute!r} is not known; allowed: {', '.join(parallelism.RECOMPUTE)}"
        )
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    if attention_flops not in ATTENTION_FLOPS:
        raise ValueError(
            f"attention_flops={attention_flops!r} is not known; "
            f"allowed: {', '.join(ATTENTION_FLOPS)}"
        )
    if dtype not in ("bf16", "fp16", "fp8"):
        raise ValueError(f"dtype={dtype!r} is not known; allowed: bf16, fp16, fp8")
    if fp8_recipe not in FP8_RECIPES:
        raise ValueError(f"fp8_recipe={fp8_recipe!r} is not known; allowed: {FP8_RECIPES[1:]}")


PIPELINE_SPLITS = ("even", "account_embedding_loss")
"""How a pipeline assigns layers to its pp x v model chunks. "even": the transformer layers
split as evenly as they divide, the output head and loss added to the last chunk (Megatron-LM's
and torchtitan's default). "account_embedding_loss": the embedding and the loss each counted as
one layer slot, n_layers + 2 slots split evenly (Megatron-LM's
``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split``;
Llama 3's 'the first model chunk on the first stage has only the embedding', Dubey et al. 2024,
sec. 3.3.2)."""


def stage_imbalance(
    *, layer_cost: float, head_cost: float, n_layers: int, pp: int, interleave: int, split: str
) -> float:
    """Busiest pipeline rank's work over the mean rank's, >= 1.

    A pipeline runs at its slowest stage's pace (Huang et al. 2019, GPipe; Narayanan et al.
    2021, sec. 2.2): the other ranks idle for the difference. Rank r holds chunks r, r + pp, ...
    of the pp x v chunks; a chunk's work is its layers' ``layer_cost`` plus ``head_cost`` if it
    holds the output head and loss (the embedding costs nothing). Qwen3-235B's 94 layers as 96
    slots over 32 x 3 chunks leave the last chunk the head alone, which costs 2.4 layers:

    >>> round(stage_imbalance(layer_cost=1.0, head_cost=2.4, n_layers=94, pp=32, interleave=3,
    ...                       split="account_embedding_loss"), 2)
    1.46
    """
    if split not in PIPELINE_SPLITS:
        raise ValueError(f"split={split!r} is not known; allowed: {', '.join(PIPELINE_SPLITS)}")
    if layer_cost <= 0 or head_cost < 0:
        raise ValueError(f"need layer_cost > 0 and head_cost >= 0, got {layer_cost}, {head_cost}")
    if pp == 1:
        return 1.0
    n_chunks = pp * interleave
    # the cost of each slot in order: [embedding] + layers + [head], or layers with the head last
    if split == "account_embedding_loss":
        slots = [0.0] + [layer_cost] * n_layers + [head_cost]
    else:
        slots = [layer_cost] * n_layers
    bounds = [round(i * len(slots) / n_chunks) for i in range(n_chunks + 1)]
    chunk = [sum(slots[bounds[i] : bounds[i + 1]]) for i in range(n_chunks)]
    if split == "even":
        chunk[-1] += head_cost
    rank = [sum(chunk[r::pp]) for r in range(pp)]
    return max(rank) * pp / sum(rank)


def head_layers_equivalent(model: Model) -> float:
    """The output head's weights in units of one transformer layer's active weights:
    V d / ((N_active - E) / L), E the embedding and head parameters (once if tied). A pipeline
    chunk that carries the head does about this many extra layers' GEMM work per token.

    >>> from llmphys import specs
    >>> round(head_layers_equivalent(specs.model("llama3_70b")), 2)
    1.23
    """
    embed = (1 if model.tied_embeddings else 2) * model.vocab_size * model.d_model
    per_layer = (accounting.n_active_params(model) - embed) / model.n_layers
    return model.vocab_size * model.d_model / per_layer
