"""The checks of a training layout's arguments before ``train_step`` times it.

``layout`` returns the data-parallel degree and the micro-batches per rank, or a ValueError
that names the argument and the numbers that do not divide; ``check_options`` names an unknown
option and the allowed values.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import parallelism
from ..specs import Model
from .runs import ATTENTION_FLOPS, FP8_RECIPES
from .terms import MOE_DISPATCHERS, SELECTIVE_POLICIES


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
