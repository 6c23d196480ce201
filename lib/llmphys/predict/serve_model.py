"""Predicted throughput and latency of a serving deployment, built from the book's own pieces.

A deployment of n chips runs n / (max(tp, ep) pp) replicas. Inside a replica, attention and any
dense FFN are tensor-parallel over ``tp`` chips and data-parallel across the replica's
max(tp, ep) / tp groups; the routed experts are split whole over ``ep`` chips. Each step of
continuous batching decodes one token (or, with speculation, the accepted run) for each of the
replica's sequences and, with chunked prefill, carries prompt tokens in the same step (Agrawal et
al. 2024, Sarathi-Serve, arXiv:2403.02310).

One step is a short sum of named terms, each its own function below, timed on the busiest chip:

    weights      the weight GEMMs per operator, max(bytes read / W_eff, FLOP / P_eff): the dense
                 part (attention, dense FFN, output head; read once per data-parallel group) and
                 the routed experts (only those the step's tokens touch, E (1 - (1 - k/E)^T) a
                 layer; their FLOP scaled by the expert load imbalance of the busiest EP rank)
    attention    decode attention, max(KV bytes / W_eff, FLOP / P_attn) (a KV head is copied on
                 every TP rank beyond the model's KV heads), plus the chunked prompts' causal
                 attention
    tp_comm      2 all-reduces per layer of the step's activations, each with one registry latency
    ep_comm      expert dispatch and combine per MoE layer, each with one registry latency, hidden
                 behind the step's compute when the engine overlaps two micro-batches
    draft        the draft model's k decode steps (speculative decoding)
    overhead     a fixed cost per step: scheduling, sampling, launch gaps

Bytes and FLOP come from ``accounting``, ``inference`` and ``kv_cache``; every term shares one
weight-read count (:func:`weight_read_bytes`), one MoE-layer count, one all-to-all formula
(:func:`all_to_all_s`) and one small-collective latency (the registry's
``collective_latency_s.nvlink_small_all_reduce``). The constants sit in one frozen
:class:`ServeConstants`: three are sourced (HBM, attention and link efficiencies) and three,
``gemm_efficiency``, ``expert_gemm_efficiency`` and ``step_overhead_s``, are fitted once, on the
rows named in ``predict.serving_data.CALIBRATION_RUNS``.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
from typing import Any

from .. import accounting, economics, inference, kv_cache, specs, units
from ..specs import Accelerator, Model
from . import train as _train

HBM_EFFICIENCY = 0.9
"""Fraction of the datasheet HBM bandwidth a streaming kernel sustains: Azure measured 7.35 TB/s
on a GB200's 8 TB/s, 92% (Microsoft Azure HPC blog, 'Azure's ND GB200 v6 delivers record
performance for inference workloads', 2025); rounded down to 0.9 for Hopper. Sourced."""

KV_CACHE_FREE_FRACTION = 0.9
"""Share of the memory left after the weights that TensorRT-LLM gives the KV cache: its
``kv_cache_free_gpu_mem_fraction`` default (0.90, its perf-overview page). Sourced."""

KV_MEMORY_RULES = {"trtllm": ("free", 0.90), "vllm": ("total", 0.90), "sglang": ("total", 0.88)}
"""How each engine sizes its KV cache: ("free", f) gives the cache f of the memory the weights
leave (TensorRT-LLM's kv_cache_free_gpu_mem_fraction, 0.90); ("total", f) caps weights plus cache
at f of the whole HBM (vLLM's gpu_memory_utilization, default 0.90, in its engine arguments;
SGLang's mem_fraction_static, 0.88 assumed: SGLang picks it from the GPU's memory and the TP size).
The activation workspace is not subtracted."""


def kv_budget_bytes(hbm_bytes: float, weight_bytes: float, *, rule: tuple[str, float]) -> float:
    """Bytes of KV cache a chip holds under an engine's memory rule (``KV_MEMORY_RULES``).

    >>> rules = (("free", 0.9), ("total", 0.9))  # TensorRT-LLM's and vLLM's defaults
    >>> [round(kv_budget_bytes(80e9, 35e9, rule=r) / 1e9, 1) for r in rules]  # GB
    [40.5, 37.0]
    """
    kind, f = rule
    if kind == "free":
        return max(hbm_bytes - weight_bytes, 0.0) * f
    if kind == "total":
        return max(f * hbm_bytes - weight_bytes, 0.0)
    raise ValueError(f"rule must be ('free', f) or ('total', f), got {rule!r}")


ACTIVATION_BYTES = 2.0
"""Bytes per element of the activations the TP all-reduces and the EP combine move (BF16). The EP
dispatch moves the math dtype's bytes: DeepSeek dispatches in FP8 and combines in BF16 (its day-6
overview), as DeepEP's low-latency kernels do."""

MAX_BATCH = 2048
"""TensorRT-LLM's default max_batch_size (its build configuration): the cap per replica when a
row does not name an engine with another default."""

CHUNK_TOKENS = 8192
"""Tokens one step may carry (decode plus prompt chunks): TensorRT-LLM's default max_num_tokens
and vLLM's max_num_batched_tokens on a >= 70 GiB GPU (vllm/engine/arg_utils.py,
get_batch_defaults, v0.11)."""

ENGINE_LIMITS = {"trtllm": (2048, 8192), "vllm": (1024, 8192), "sglang": (4096, 8192)}
"""(max sequences, max tokens) a step of each engine holds at its defaults: TensorRT-LLM
max_batch_size 2048 and max_num_tokens 8192; vLLM v0.11 on a >= 70 GiB GPU max_num_seqs 1024 and
max_num_batched_tokens 8192 (arg_utils.py); SGLang sizes its running batch from the free memory
(4096 here stands for 'no cap below the cache') with chunked_prefill_size 8192 (assumed)."""


def small_collective_latency_s() -> float:
    """Seconds of one small all-reduce or all-to-all inside a scale-up domain: the registry value.

    One figure for the whole collective (a one-shot kernel writes to every peer at once), used
    wherever the book times a latency-bound collective (prices.toml,
    ``collective_latency_s.nvlink_small_all_reduce``).

    >>> round(small_collective_latency_s() * 1e6)  # microseconds
    10
    """
    return float(economics.price("collective_latency_s.nvlink_small_all_reduce").value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServeConstants:
    """The serving model's constants: three sourced, three fitted once (module docstring)."""

    hbm_efficiency: float = HBM_EFFICIENCY
    attention_efficiency: float = _train.ATTENTION_EFFICIENCY  # FlashAttention-3 on H100 (sourced)
    link_efficiency: float = _train.COLLECTIVE_EFFICIENCY  # NCCL bus bandwidth / link (sourced)
    gemm_efficiency: float = 0.44  # fitted: fraction of the dense peak the dense GEMMs reach
    expert_gemm_efficiency: float = 0.68  # fitted: the same for the routed experts' grouped GEMMs
    step_overhead_s: float = 2.5e-3  # fitted: seconds per step beyond every roofline term


CONSTANTS = ServeConstants(
    gemm_efficiency=0.44, expert_gemm_efficiency=0.68, step_overhead_s=2.5e-3
)
"""The constants in use: the fitted three are the values ``predict.serving_data.calibrate()``
returns on CALIBRATION_RUNS (a test checks it)."""


def priced_time_s(*, memory_time_s: float, compute_time_s: float) -> float:
    """Seconds of a roofline phase as served: max(bytes time / HBM_EFFICIENCY, FLOP time /
    the fitted GEMM efficiency), with both times at 100% of the datasheet. The one way chapter 6
    prices a prefill (a prompt's tokens, a recomputed cache) and a decode step outside ``serve``.

    >>> round(priced_time_s(memory_time_s=0.0, compute_time_s=0.44), 3)  # s: at CONSTANTS
    1.0
    """
    return max(memory_time_s / CONSTANTS.hbm_efficiency, compute_time_s / CONSTANTS.gemm_efficiency)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Layout:
    """A replica's parallelism: attention TP, expert EP, pipeline stages; chips = max(tp, ep) pp."""

    tp: int = 1
    ep: int = 1
    pp: int = 1
    two_batch_overlap: bool = False  # the engine hides EP traffic behind a second micro-batch

    @property
    def stage_chips(self) -> int:
        """Chips of one pipeline stage: the attention TP group times its data-parallel copies."""
        return max(self.tp, self.ep)

    @property
    def chips(self) -> int:
        """Chips of one replica."""
        return self.stage_chips * self.pp


def _int(name: str, v: Any, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def make_layout(model: Model, *, tp: int = 1, ep: int = 1, pp: int = 1, overlap: bool = False):
    """A checked :class:`Layout`: ep > 1 needs a MoE model; tp and ep must divide each other."""
    t, e, p = _int("tp", tp), _int("ep", ep), _int("pp", pp)
    if e > 1 and model.moe is None:
        raise ValueError(f"ep={e} needs a mixture-of-experts model; {model.key} is dense")
    if max(t, e) % min(t, e):
        raise ValueError(f"tp={t} and ep={e}: one must divide the other")
    return Layout(tp=t, ep=e, pp=p, two_batch_overlap=bool(overlap))


# ------------------------------------------------------------------ the one weight count
def n_moe_layers(model: Model) -> int:
    """MoE layers of a model: every layer after its dense ones (0 for a dense model)."""
    return 0 if model.moe is None else model.n_layers - model.moe.n_dense_layers


def _expert_params(model: Model) -> float:
    assert model.moe is not None
    return accounting.mlp_params(model, model.moe.d_ff_expert)


def dense_params(model: Model) -> float:
    """Parameters every token multiplies and every step reads: all but the input embedding and
    the routed experts (attention, dense FFN, shared experts, norms, router, output head)."""
    routed = n_moe_layers(model) * (model.moe.n_experts * _expert_params(model) if model.moe else 0)
    lookup = accounting.embedding_params(model)  # a tied table is also the output head's matmul
    if model.tied_embeddings:
        lookup -= model.vocab_size * model.d_model
    return accounting.n_params(model) - lookup - routed


def weight_read_bytes(model: Model, *, n_tokens: float, weight_bytes: float) -> dict[str, float]:
    """Bytes of weights one step of ``n_tokens`` reads in a replica, dense part and experts.

    The experts part counts the expected distinct experts the step touches per MoE layer,
    E (1 - (1 - k/E)^T) (:func:`inference.experts_touched`), each read once however many of the
    step's tokens it serves.

    >>> from llmphys import specs
    >>> r = weight_read_bytes(specs.model("deepseek_v3"), n_tokens=1, weight_bytes=1.0)
    >>> round(r["experts"] / 1e9, 2)  # GB: 8 experts x 58 layers x 44M parameters, FP8
    20.43
    """
    units.check_positive("weight_bytes", weight_bytes)
    if model.moe is None:
        return {"dense": dense_params(model) * weight_bytes, "experts": 0.0}
    touched = float(inference.experts_touched(model, batch_size=max(float(n_tokens), 1.0)))
    experts = n_moe_layers(model) * touched * _expert_params(model)
    return {"dense": dense_params(model) * weight_bytes, "experts": experts * weight_bytes}


def expert_load_imbalance(*, n_tokens: float, k: int, ep: int) -> float:
    """Busiest EP rank's expert load over the mean, for uniform random top-k routing.

    Each rank receives about lambda = T k / ep token-expert assignments; the maximum of ep such
    Poisson counts exceeds the mean by about sqrt(2 lambda ln ep) (the balls-into-bins bound,
    Raab and Steger 1998), so the factor is 1 + sqrt(2 ln(ep) / lambda). Real routing is
    skewed; a load balancer (EPLB) with redundant experts pulls it back towards this bound.

    >>> round(expert_load_imbalance(n_tokens=256, k=8, ep=72), 3)  # lambda = 28.4 a rank
    1.549
    """
    if ep <= 1:
        return 1.0
    lam = max(float(n_tokens), 1e-9) * k / ep
    return 1.0 + math.sqrt(2.0 * math.log(ep) / max(lam, 1.0))


def all_to_all_s(n_bytes: float, n_ranks: int, *, link_bytes_per_s: float, latency_s: float):
    """Seconds of one all-to-all in which each rank holds ``n_bytes`` for all ranks.

    (p - 1)/p of the bytes leave each rank over its link; the sends go out at once (DeepEP's
    and NCCL's one-shot kernels), so one latency is paid, not p - 1 as in a pairwise schedule.

    >>> round(all_to_all_s(1e6, 8, link_bytes_per_s=1e9, latency_s=1e-5) * 1e6)  # microseconds
    885
    """
    if n_ranks <= 1:
        return 0.0
    return (n_ranks - 1) / n_ranks * n_bytes / link_bytes_per_s + latency_s


# ------------------------------------------------------------------ one step, by term
@dataclasses.dataclass(frozen=True)
class StepCost:
    """Per-step cost terms of one replica, precomputed once so a simulator can call it per step.

    ``parts(n_decode, kv_tokens, n_prefill, prefill_attn_flop)`` gives each term's seconds:
    ``n_decode`` sequences decoding, ``kv_tokens`` cached positions they read in all,
    ``n_prefill`` prompt tokens in the step and the FLOP of their causal attention.
    """

    model: Model
    acc: Accelerator
    layout: Layout
    weight_bytes: float
    kv_bytes_per_token: float
    peak_flop_per_s: float
    attention_peak_flop_per_s: float  # attention runs its matmuls in BF16 whatever the weights
    constants: ServeConstants
    tokens_per_decode: int = 1  # k + 1 with speculation
    draft_s_per_seq: tuple[float, float] = (0.0, 0.0)  # (fixed, per sequence) seconds of drafts

    @functools.cached_property
    def _counts(self) -> tuple[float, float, int, float, float]:
        """(dense parameters, parameters of one expert, MoE layers, decode attention FLOP per
        cached position, small-collective latency): fixed for the replica, counted once."""
        m = self.model
        return (
            dense_params(m),
            _expert_params(m) if m.moe is not None else 0.0,
            n_moe_layers(m),
            kv_cache.decode_attention_flop_per_context_token(m),
            small_collective_latency_s(),
        )

    @property
    def kv_replication(self) -> float:
        """Copies of each KV head across the TP group: tp / min(tp, KV heads); MLA: tp."""
        tp, m = self.layout.tp, self.model
        heads = 1 if m.attention == "mla" else m.n_kv_heads
        return tp / min(tp, heads)

    def parts(
        self, n_decode: float, kv_tokens: float, n_prefill: float, prefill_attn_flop: float
    ) -> dict[str, float]:
        """Seconds of one step by term (summing to the step, see :meth:`step_s`)."""
        m, a, lay, c = self.model, self.acc, self.layout, self.constants
        s = lay.stage_chips
        bw = a.hbm_bytes_per_s * c.hbm_efficiency
        p_attn = self.attention_peak_flop_per_s * c.attention_efficiency
        tokens = n_decode * self.tokens_per_decode + n_prefill
        n_dense, n_expert, n_moe, attn_per_pos, _ = self._counts
        # dense operators: each data-parallel group of tp chips reads the whole dense part
        dense_mem = n_dense * self.weight_bytes / (lay.tp * bw)
        p = self.peak_flop_per_s * c.gemm_efficiency
        dense_cmp = 2.0 * n_dense * tokens / (s * p)
        exp_mem = exp_cmp = 0.0
        if m.moe is not None:
            e, k = m.moe.n_experts, m.moe.n_experts_per_token
            touched = e * (1.0 - (1.0 - k / e) ** max(tokens, 1.0))  # = weight_read_bytes
            exp_mem = n_moe * touched * n_expert * self.weight_bytes / (s * bw)
            imb = expert_load_imbalance(n_tokens=tokens, k=k, ep=lay.ep)
            # grouped GEMMs of a few hundred rows per expert, with gathers and scatters around
            # them, run well below the dense layers' rate (DeepGEMM's README tables by m)
            p_e = self.peak_flop_per_s * c.expert_gemm_efficiency
            exp_cmp = 2.0 * n_moe * k * n_expert * tokens * imb / (s * p_e)
        kv_s = kv_tokens * self.kv_bytes_per_token * self.kv_replication / (s * bw)
        attn_c = self.tokens_per_decode * kv_tokens * attn_per_pos / (s * p_attn)
        pre_s = prefill_attn_flop / (s * p_attn)
        tp_s, ep_s = self._collectives_s(tokens)
        compute = max(dense_mem, dense_cmp) + max(exp_mem, exp_cmp) + max(kv_s, attn_c) + pre_s
        if lay.two_batch_overlap:
            ep_s = max(0.0, ep_s - compute)  # the other micro-batch computes while this one sends
        fixed, per_seq = self.draft_s_per_seq
        return {
            "weights": (dense_mem if dense_mem >= dense_cmp else 0.0)
            + (exp_mem if exp_mem >= exp_cmp else 0.0),
            "compute": (dense_cmp if dense_cmp > dense_mem else 0.0)
            + (exp_cmp if exp_cmp > exp_mem else 0.0)
            + (attn_c if attn_c > kv_s else 0.0),
            "kv_reads": kv_s if kv_s >= attn_c else 0.0,
            "prefill_attention": pre_s,
            "tp_collectives": tp_s,
            "ep_collectives": ep_s,
            "draft": (fixed + per_seq * n_decode) if n_decode > 0 else 0.0,
            "overhead": c.step_overhead_s,
        }

    def step_s(self, n_decode: float, kv_tokens: float, n_prefill: float, prefill_attn_flop: float):
        """Seconds of one step: the sum of :meth:`parts`."""
        return sum(self.parts(n_decode, kv_tokens, n_prefill, prefill_attn_flop).values())

    def collectives_s(self, tokens: float) -> tuple[float, float]:
        """TP all-reduce and EP all-to-all seconds of a step of ``tokens`` (before any overlap)."""
        return self._collectives_s(tokens)

    def _collectives_s(self, tokens: float) -> tuple[float, float]:
        """TP all-reduce and EP all-to-all seconds of one step of ``tokens`` in the replica."""
        m, a, lay, c = self.model, self.acc, self.layout, self.constants
        s = lay.stage_chips
        up = a.scale_up_bytes_per_s_per_direction * c.link_efficiency
        out = a.scale_out_bytes_per_s_per_direction * c.link_efficiency
        lat_up, lat_out = self._counts[4], _train.LINK_LATENCY_S
        tp_s = ep_s = 0.0
        if lay.tp > 1:
            inside = lay.tp <= a.scale_up_domain_size
            link, lat = (up, lat_up) if inside else (out, lat_out)
            group_bytes = tokens * lay.tp / s * m.d_model * ACTIVATION_BYTES  # one DP group's
            one = 2.0 * (lay.tp - 1) / lay.tp * group_bytes / link + lat
            tp_s = 2 * m.n_layers * one
        if lay.ep > 1 and m.moe is not None:
            inside = lay.ep <= a.scale_up_domain_size
            link, lat = (up, lat_up) if inside else (out, lat_out)
            rank_el = tokens / s * m.moe.n_experts_per_token * m.d_model  # k copies per token
            dispatch = min(ACTIVATION_BYTES, self.weight_bytes) * rank_el
            ep_s = self._counts[2] * (
                all_to_all_s(dispatch, lay.ep, link_bytes_per_s=link, latency_s=lat)
                + all_to_all_s(
                    ACTIVATION_BYTES * rank_el, lay.ep, link_bytes_per_s=link, latency_s=lat
                )
            )
        return tp_s, ep_s


def prefill_attention_flop(model: Model, *, n_tokens: float, prompt_tokens: int) -> float:
    """Causal attention FLOP of ``n_tokens`` prompt tokens of prompts ``prompt_tokens`` long
    (each attends to (S + 1)/2 positions on average)."""
    ctx = (kv_cache.cached_positions(model, n_tokens=prompt_tokens) + 1) / 2
    return n_tokens * accounting.attention_flop_per_token(model, context_tokens=ctx)


def step_cost(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    layout: Layout,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    math_dtype: str | None = None,
    constants: ServeConstants = CONSTANTS,
    draft_tokens: int = 0,
    draft_model: Model | str | None = None,
) -> StepCost:
    """The :class:`StepCost` of one replica (``math_dtype`` defaults to the weights' dtype; 4-bit
    weights are dequantised to BF16)."""
    mdl, acc = resolve_model(model), resolve_accelerator(accelerator)
    if math_dtype is None:
        math_dtype = weight_dtype if weight_dtype in ("bf16", "fp16", "fp8", "fp4") else "bf16"
    peak = acc.peak_flop_per_s("bf16" if math_dtype == "fp16" else math_dtype)
    wbytes = units.bytes_per_element(weight_dtype)
    kvb = kv_cache.kv_bytes_per_token(mdl, bytes_per_element=units.bytes_per_element(kv_dtype))
    k = _int("draft_tokens", draft_tokens, 0)
    draft = (0.0, 0.0)
    if k > 0 and draft_model is not None:
        d = resolve_model(draft_model)
        s = layout.stage_chips
        bw = acc.hbm_bytes_per_s * constants.hbm_efficiency
        fixed = k * (dense_params(d) * wbytes / (layout.tp * bw) + constants.step_overhead_s / 2)
        per = k * 2.0 * dense_params(d) / (s * peak * constants.gemm_efficiency)  # large m
        draft = (fixed, per)
    return StepCost(
        model=mdl,
        acc=acc,
        layout=layout,
        weight_bytes=wbytes,
        kv_bytes_per_token=kvb,
        peak_flop_per_s=peak,
        attention_peak_flop_per_s=acc.peak_flop_per_s("bf16"),
        constants=constants,
        tokens_per_decode=k + 1,
        draft_s_per_seq=draft,
    )


# ------------------------------------------------------------------ registries
@functools.cache
def _serving_registry() -> dict:
    with open(specs.data_dir() / "serving_models.toml", "rb") as f:
        return tomllib.load(f)


def resolve_model(value: Model | str) -> Model:
    """A model by key from the registries, then ``data/serving_models.toml``; or a Model."""
    if isinstance(value, Model):
        return value
    if not isinstance(value, str):
        raise TypeError(f"model must be a Model or a registry key, got {type(value).__name__}")
    extra = _serving_registry().get("models", {})
    if value in extra:
        return specs.build_spec(Model, extra[value], f"serving_models.toml[{value}]", key=value)
    return _train._model(value)


def resolve_accelerator(value: Accelerator | str) -> Accelerator:
    """A chip by key from the registry, then a variant of ``data/serving_models.toml``."""
    if isinstance(value, Accelerator):
        return value
    if not isinstance(value, str):
        raise TypeError(f"accelerator must be an Accelerator or a key, got {type(value).__name__}")
    extra = _serving_registry().get("accelerators", {})
    if value in extra:
        e = dict(extra[value])
        base = specs.accelerator(e.pop("base"))
        return dataclasses.replace(base, key=value, **e)
    return _train._accelerator(value)


# ------------------------------------------------------------------ the steady state
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
    constants: ServeConstants = CONSTANTS,
    check_memory: bool = True,
) -> Serve:
    """Predicted throughput (tokens/s), TPOT and TTFT (s) and memory (bytes) in the steady state.

    ``batch_size`` is the number of sequences decoding at once in the whole deployment, split
    evenly over its replicas; ``None`` is max-throughput mode, the largest batch whose KV cache
    fits (``kv_memory_rule``, by default ``KV_CACHE_FREE_FRACTION`` of the memory the weights
    leave, sequences at their mean
    length I + O/2), capped at ``max_batch`` a replica. In the steady state each step decodes B
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
    9.9
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
        kv = kv_budget_bytes(acc.hbm_bytes, empty["weights"], rule=kv_memory_rule)
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
