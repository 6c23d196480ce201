"""Predicted throughput and latency of a serving deployment, built from the book's own pieces.

A deployment of n chips runs n / (max(tp, ep) pp) replicas. Inside a replica, attention and any
dense FFN are tensor-parallel over ``tp`` chips and data-parallel across the replica's
max(tp, ep) / tp groups; the routed experts are split whole over ``ep`` chips. Each step of
continuous batching decodes one token (or, with speculation, the accepted run) for each of the
replica's sequences and, with chunked prefill, carries prompt tokens in the same step (Agrawal et
al. 2024, Sarathi-Serve, arXiv:2403.02310).

One step is a short sum of named terms, each its own function below, timed on the busiest chip:

    weights      the weight GEMMs per operator: the dense part (attention, dense FFN, output
                 head; read once per data-parallel group) at max(bytes read / W_eff, FLOP / P_eff),
                 and the routed experts at bytes read / W_eff + FLOP / P_expert (a grouped GEMM of
                 a few rows an expert does not hide its weight stream behind its math; only the
                 experts the step's tokens touch are read, E (1 - (1 - k/E)^T) a layer, and their
                 FLOP is scaled by the expert load imbalance of the busiest EP rank); an engine
                 that overlaps two micro-batches runs each layer's GEMMs once per micro-batch, so
                 it streams every weight twice a step (the experts touched by T/2 tokens each)
    attention    decode attention, max(KV bytes / W_eff, FLOP / P_attn) (a KV head is copied on
                 every TP rank beyond the model's KV heads), plus the chunked prompts' causal
                 attention
    tp_comm      2 all-reduces per layer of the step's activations, each with one registry latency
    ep_comm      expert dispatch and combine per MoE layer between attention's data-parallel
                 groups (none when attention is TP over the whole EP group: its tokens are on
                 every rank and the combine rides the TP all-reduce), each with one registry
                 latency, hidden behind the step's compute when the engine overlaps two
                 micro-batches
    draft        the draft model's k decode steps (speculative decoding)
    overhead     a fixed cost per step: scheduling, sampling, launch gaps

Bytes and FLOP come from ``accounting``, ``inference`` and ``kv_cache``; every term shares one
weight-read count (:func:`llmphys.inference.streamed_params`), one MoE-layer count
(:func:`llmphys.accounting.n_moe_layers`), one all-to-all formula
(:func:`llmphys.comms.all_to_all_time_s`, one-shot) and one small-collective latency (the
registry's ``collective_latency_s.nvlink_small_all_reduce``). The constants, the layout and the
registries live in ``serve_terms``, the step in ``serve_step``, and this module puts them
together into the steady state.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from .. import accounting, kv_cache, units
from ..specs import Accelerator, Model
from . import train as _train
from .serve_step import StepCost, prefill_attention_flop, step_cost
from .serve_terms import (  # re-exported: the package and serving_data read them from here
    ACTIVATION_BYTES as ACTIVATION_BYTES,
)
from .serve_terms import (
    CHUNK_TOKENS,
    CONSTANTS,
    KV_CACHE_FREE_FRACTION,
    MAX_BATCH,
    ServeConstants,
    _expert_params,
    _int,
    engine_reserved_bytes,
    kv_budget_bytes,
    make_layout,
    n_moe_layers,
    resolve_accelerator,
    resolve_model,
)
from .serve_terms import (
    ENGINE_LIMITS as ENGINE_LIMITS,
)
from .serve_terms import (
    EXPERT_GEMM_CEILING as EXPERT_GEMM_CEILING,
)
from .serve_terms import (
    HBM_EFFICIENCY as HBM_EFFICIENCY,
)
from .serve_terms import (
    KV_MEMORY_RULES as KV_MEMORY_RULES,
)
from .serve_terms import (
    KV_RESERVES_FULL_SEQUENCE as KV_RESERVES_FULL_SEQUENCE,
)
from .serve_terms import (
    Layout as Layout,
)
from .serve_terms import (
    bench_engine_limits as bench_engine_limits,
)
from .serve_terms import (
    dense_params as dense_params,
)
from .serve_terms import (
    expert_load_imbalance as expert_load_imbalance,
)
from .serve_terms import (
    priced_time_s as priced_time_s,
)
from .serve_terms import (
    small_collective_latency_s as small_collective_latency_s,
)
from .serve_terms import (
    weight_read_bytes as weight_read_bytes,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Serve:
    """One predicted deployment: throughput, latency, memory and the decode step's budget."""

    output_tokens_per_s: float  # the whole deployment
    input_tokens_per_s: float  # prompt tokens prefilled per second, whole deployment
    tpot_s: float  # time per output token of one sequence, on average
    tpot_worst_s: float  # the longest gap between two of a sequence's tokens (a prefill stall)
    ttft_s: float  # time to first token of one request that finds a free slot
    batch_size: int  # concurrent sequences, whole deployment
    n_replicas: int
    tokens_per_step: float  # output tokens per sequence per step (speculation: > 1)
    memory_per_chip_bytes: float
    hbm_bytes: float
    parts: dict[str, float]  # seconds of one decode step, summing to step_s
    memory_parts: dict[str, float]  # bytes per chip by kind

    @property
    def step_s(self) -> float:
        """Seconds of one decode step of one replica."""
        return sum(self.parts.values())

    @property
    def fits(self) -> bool:
        """Whether the deployment's memory fits in one chip's HBM."""
        return self.memory_per_chip_bytes <= self.hbm_bytes


def expected_tokens_per_step(*, draft_tokens: int, acceptance_rate: float) -> float:
    """Tokens a sequence gains per verification step of speculative decoding.

    With k drafted tokens each accepted with probability a (independently), the step keeps the
    accepted prefix plus the target's own next token: (1 - a^(k+1)) / (1 - a) (Leviathan et al.
    2023, arXiv:2211.17192, eq. 1); k + 1 when a = 1, 1 when k = 0.

    >>> round(expected_tokens_per_step(draft_tokens=4, acceptance_rate=0.8), 3)
    3.362
    """
    k = _int("draft_tokens", draft_tokens, 0)
    try:
        a = float(acceptance_rate)
    except (TypeError, ValueError):
        a = math.nan
    if isinstance(acceptance_rate, bool) or not 0.0 <= a <= 1.0:
        raise ValueError(f"acceptance_rate must lie in [0, 1], got {acceptance_rate!r}")
    return float(k + 1) if a == 1.0 else (1.0 - a ** (k + 1)) / (1.0 - a)


def memory_per_chip_bytes(
    cost: StepCost, *, n_sequences: float, seq_tokens: float, draft_model: Model | None = None
) -> dict[str, float]:
    """Bytes per chip: weights (dense part per TP group, experts per stage) and the KV cache of
    ``n_sequences`` sequences of ``seq_tokens`` cached positions in the replica."""
    m, lay = cost.model, cost.layout
    routed = n_moe_layers(m) * (m.moe.n_experts * _expert_params(m) if m.moe else 0.0)
    w = (accounting.n_params(m) - routed) / (lay.tp * lay.pp) + routed / lay.chips
    if draft_model is not None:
        w += accounting.n_params(draft_model) / (lay.tp * lay.pp)
    kv = n_sequences * seq_tokens * cost.kv_bytes_per_token * cost.kv_replication / lay.chips
    return {"weights": w * cost.weight_bytes, "kv_cache": kv}


def serve(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    tp: int = 1,
    ep: int = 1,
    pp: int = 1,
    batch_size: int | None,
    input_tokens: int,
    output_tokens: int,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    math_dtype: str | None = None,
    chunked_prefill: bool = True,
    chunk_tokens: int = CHUNK_TOKENS,
    max_batch: int = MAX_BATCH,
    draft_tokens: int = 0,
    acceptance_rate: float = 0.0,
    draft_model: Model | str | None = None,
    prefill_chips: int = 0,
    decode_only: bool = False,
    two_batch_overlap: bool = False,
    kv_memory_rule: tuple[str, float] = ("free", KV_CACHE_FREE_FRACTION),
    kv_reserve_full: bool = False,
    constants: ServeConstants = CONSTANTS,
    check_memory: bool = True,
) -> Serve:
    """Predicted throughput (tokens/s), TPOT and TTFT (s) and memory (bytes) in the steady state.

    ``batch_size`` is the number of sequences decoding at once in the whole deployment, split
    evenly over its replicas; ``None`` is max-throughput mode, the largest batch whose KV cache
    fits (``kv_memory_rule``, by default ``KV_CACHE_FREE_FRACTION`` of the memory the weights
    and the step's peak activations (:func:`engine_reserved_bytes`) leave, sequences at their mean
    length I + O/2, or at their full length I + O with ``kv_reserve_full``, as an engine that
    reserves a request's whole sequence on admission holds them), capped at ``max_batch`` a
    replica. In the steady state each step decodes B
    sequences and prefills the prompts replacing the finished ones, B e I / O tokens; a step
    holds at most ``chunk_tokens`` tokens, so B is capped at C / (k + 1 + e I / O). Output
    tokens/s = replicas x B e / t_step, TPOT = t_step / e (e: :func:`expected_tokens_per_step`).
    ``decode_only`` times a decode pool whose prompts are prefilled elsewhere (``input_tokens``
    is then the cached context). ``prefill_chips`` > 0 disaggregates: those chips prefill, the
    rest decode, the deployment runs at the slower pool, and TTFT adds the KV transfer over
    scale-out. Speculation with ``draft_model=None`` drafts for free (n-gram or MTP heads).
    Raises ``predict.LayoutDoesNotFit`` when the weights or the batch do not fit, unless
    ``check_memory=False``.

    >>> s = serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=1,
    ...           input_tokens=1000, output_tokens=1000)
    >>> round(s.tpot_s * 1e3, 1)  # ms: BF16 weights over 8 HBMs, all-reduces, overhead
    10.4
    """
    mdl, acc = resolve_model(model), resolve_accelerator(accelerator)
    layout = make_layout(mdl, tp=tp, ep=ep, pp=pp, overlap=two_batch_overlap)
    n, i, o = (
        _int("n_chips", n_chips),
        _int("input_tokens", input_tokens),
        _int("output_tokens", output_tokens),
    )
    pc = _int("prefill_chips", prefill_chips, 0)
    g = layout.chips
    if n - pc < g or (n - pc) % g:
        raise ValueError(
            f"n_chips - prefill_chips = {n - pc} must be a positive multiple of "
            f"max(tp, ep)*pp = {g}"
        )
    if pc % (layout.tp * layout.pp):
        raise ValueError(f"prefill_chips={pc} must be a multiple of tp*pp = {layout.tp * pp}")
    n_rep = (n - pc) // g
    chunk, cap = _int("chunk_tokens", chunk_tokens), _int("max_batch", max_batch)
    k = _int("draft_tokens", draft_tokens, 0)
    e_tok = expected_tokens_per_step(draft_tokens=k, acceptance_rate=acceptance_rate)
    draft = None if draft_model is None else resolve_model(draft_model)
    cost = step_cost(
        mdl,
        acc,
        layout=layout,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        math_dtype=math_dtype,
        constants=constants,
        draft_tokens=k,
        draft_model=draft,
    )
    ctx = kv_cache.cached_positions(mdl, n_tokens=i if decode_only else i + o // 2)

    # --- memory and the batch
    empty = memory_per_chip_bytes(cost, n_sequences=0, seq_tokens=ctx, draft_model=draft)
    free = acc.hbm_bytes - empty["weights"]
    if free <= 0 and check_memory:
        raise _train.LayoutDoesNotFit(
            f"{mdl.key} on {acc.key}: {units.fmt_bytes(empty['weights'])} of {weight_dtype} "
            f"weights per chip exceed its {units.fmt_bytes(acc.hbm_bytes)} of HBM"
        )
    one = memory_per_chip_bytes(cost, n_sequences=1, seq_tokens=ctx)["kv_cache"]
    if batch_size is None:
        held = engine_reserved_bytes(
            mdl, tp=layout.tp, chips=layout.stage_chips, n_tokens=chunk, n_sequences=cap
        )
        kv = kv_budget_bytes(
            acc.hbm_bytes, empty["weights"], rule=kv_memory_rule, reserved_bytes=held
        )
        if kv_reserve_full and not decode_only:
            full = kv_cache.cached_positions(mdl, n_tokens=i + o)
            one = memory_per_chip_bytes(cost, n_sequences=1, seq_tokens=full)["kv_cache"]
        b = max(1, min(cap, int(kv // one)))
    else:
        b_all = _int("batch_size", batch_size)
        if b_all % n_rep:
            raise ValueError(f"batch_size={b_all} must be a multiple of the {n_rep} replicas")
        b = b_all // n_rep
    mem = memory_per_chip_bytes(cost, n_sequences=b, seq_tokens=ctx, draft_model=draft)
    if check_memory and sum(mem.values()) > acc.hbm_bytes:
        raise _train.LayoutDoesNotFit(
            f"{mdl.key} on {acc.key} with batch {b} per replica of {g} chips needs "
            f"{units.fmt_bytes(sum(mem.values()))} per chip ({units.fmt_bytes(mem['weights'])} "
            f"weights, {units.fmt_bytes(mem['kv_cache'])} KV cache); the chip has "
            f"{units.fmt_bytes(acc.hbm_bytes)}"
        )

    # --- the steady state: the step's token budget caps the batch that can be kept fed
    rides = chunked_prefill and pc == 0 and not decode_only
    if rides:
        b_fed = min(float(b), chunk / (k + 1 + e_tok * i / o))
        pre = b_fed * e_tok * i / o
    else:
        b_fed, pre = float(b), 0.0
    pre_flop = prefill_attention_flop(mdl, n_tokens=pre, prompt_tokens=i)
    parts = cost.parts(b_fed, b_fed * ctx, pre, pre_flop)
    whole = cost.step_s(0, 0, i, prefill_attention_flop(mdl, n_tokens=i, prompt_tokens=i))
    if pc == 0 and not chunked_prefill and not decode_only:
        parts["prefill_stall"] = b_fed * e_tok / o * whole  # each prompt stalls the batch
    step = sum(parts.values())
    out_rate = n_rep * b_fed * e_tok / step
    c_i = min(i, chunk)
    mixed = cost.step_s(
        b_fed, b_fed * ctx, c_i, prefill_attention_flop(mdl, n_tokens=c_i, prompt_tokens=i)
    )
    if decode_only:
        ttft, worst = 0.0, step
    elif pc == 0:
        ttft = math.ceil(i / chunk) * mixed if chunked_prefill else whole
        worst = max(mixed, step) if chunked_prefill else step - parts["prefill_stall"] + whole
    else:
        pre_lay = make_layout(mdl, tp=tp, pp=pp)
        pcost = dataclasses.replace(
            cost, layout=pre_lay, tokens_per_decode=1, draft_s_per_seq=(0.0, 0.0)
        )
        t_pre = pcost.step_s(0, 0, i, prefill_attention_flop(mdl, n_tokens=i, prompt_tokens=i))
        link = acc.scale_out_bytes_per_s_per_direction * constants.link_efficiency
        ttft, worst = t_pre + i * cost.kv_bytes_per_token / link, step
        big = pcost.step_s(
            0, 0, chunk, prefill_attention_flop(mdl, n_tokens=chunk, prompt_tokens=i)
        )
        prefill_rate = (pc // (layout.tp * layout.pp)) * chunk / big
        out_rate = min(out_rate, prefill_rate * o / i)
    return Serve(
        output_tokens_per_s=out_rate,
        input_tokens_per_s=out_rate * i / o,
        tpot_s=step / e_tok,
        tpot_worst_s=worst,
        ttft_s=ttft,
        batch_size=b * n_rep,
        n_replicas=n_rep,
        tokens_per_step=e_tok,
        memory_per_chip_bytes=sum(mem.values()),
        hbm_bytes=acc.hbm_bytes,
        parts=parts,
        memory_parts=mem,
    )


def format_budget(s: Serve) -> str:
    """A deployment's decode step as text: each part's time and share, rates and memory."""
    lines = [
        f"{name:<18} {units.fmt_seconds(t):>10}  {t / s.step_s:6.1%}"
        for name, t in s.parts.items()
        if t > 0
    ]
    fits = "fits" if s.fits else "DOES NOT FIT"
    lines += [
        f"{'decode step':<18} {units.fmt_seconds(s.step_s):>10}",
        (
            f"batch {s.batch_size} over {s.n_replicas} replica(s): "
            f"{units.fmt_si(s.output_tokens_per_s, 'tokens/s')} out, "
            f"{units.fmt_si(s.input_tokens_per_s, 'tokens/s')} in"
        ),
        (
            f"TPOT {units.fmt_seconds(s.tpot_s)} (longest gap "
            f"{units.fmt_seconds(s.tpot_worst_s)}), TTFT {units.fmt_seconds(s.ttft_s)}"
        ),
        (
            f"memory {units.fmt_bytes(s.memory_per_chip_bytes)} per chip of "
            f"{units.fmt_bytes(s.hbm_bytes)} ({fits})"
        ),
    ]
    return "\n".join(lines)


def largest_batch_within_tpot(
    model: Model | str, accelerator: Accelerator | str, *, tpot_s: float, **kwargs: Any
) -> Serve | None:
    """The deployment at the largest batch whose mean time per output token is <= ``tpot_s``.

    TPOT grows with the batch, so bisect the per-replica batch between 1 and the largest whose
    cache fits (:func:`serve` with ``batch_size=None``). ``kwargs`` are :func:`serve`'s other
    arguments. None when even batch 1 misses the target; raises ``predict.LayoutDoesNotFit``
    when the weights do not fit.
    """
    units.check_positive("tpot_s", tpot_s)
    if "batch_size" in kwargs:
        raise ValueError("batch_size: chosen by largest_batch_within_tpot; do not pass it")
    top = serve(model, accelerator, batch_size=None, **kwargs)
    if top.tpot_s <= tpot_s:
        return top
    n_rep = top.n_replicas
    best = serve(model, accelerator, batch_size=n_rep, **kwargs)
    if best.tpot_s > tpot_s:
        return None
    lo, hi = 1, top.batch_size // n_rep
    while hi - lo > 1:
        mid = (lo + hi) // 2
        s = serve(model, accelerator, batch_size=mid * n_rep, **kwargs)
        lo, hi, best = (mid, hi, s) if s.tpot_s <= tpot_s else (lo, mid, best)
    return best
