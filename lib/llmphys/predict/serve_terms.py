"""The serving model's constants, layout, registries and shared counts (``predict.serve``).

The constants sit in one frozen :class:`ServeConstants` and are described the same way
everywhere: three are sourced (HBM, attention and link efficiencies, each docstring naming its
source), three are fitted once, ``gemm_efficiency``, ``expert_gemm_efficiency`` and
``step_overhead_s``, on the rows ``data/serving_runs.toml`` marks ``fit_row = true``
(``predict.serving_data.calibration_runs``; a test checks that ``CONSTANTS`` is that fit). Each
is pinned by rows of two sources, so leaving any one source out still refits all three. The
small-collective latency is the registry's one value
(``collective_latency_s.nvlink_small_all_reduce`` in ``data/prices.toml``). Each engine's
limits (sequences and tokens a step, how it sizes and reserves its KV cache) are sourced from its
defaults. Weight reads, the MoE layer count and the all-to-all time are not counted here: they call
:func:`llmphys.inference.streamed_params`, :func:`llmphys.accounting.n_moe_layers` and
:func:`llmphys.comms.all_to_all_time_s`.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

from .. import accounting, economics, inference, specs, units
from ..specs import Accelerator, Model
from . import train as _train

HBM_EFFICIENCY = 0.9
"""Fraction of the datasheet HBM bandwidth a streaming kernel sustains: Azure measured 7.35 TB/s
on a GB200's 8 TB/s, 92% (Microsoft Azure HPC blog, 'Azure's ND GB200 v6 delivers record
performance for inference workloads', 2025); rounded down to 0.9 for Hopper. Sourced."""

EXPERT_GEMM_CEILING = 0.6
"""Fraction of the dense FP8 peak the best published grouped GEMMs reach with thousands of rows an
expert: DeepGEMM's contiguous-layout table on H800 (README of deepseek-ai/DeepGEMM at its first
release, Feb 2025: 1,297, 1,099, 1,288 and 1,093 TFLOPS for 4 or 8 groups of 4,096-8,192 rows,
against the H800's 1,979 TFLOPS dense FP8), 0.55-0.66, mean 0.60. Not used in the step: the fitted
``expert_gemm_efficiency`` (an engine's whole MoE layer: routing, permutes and its grouped GEMMs)
is checked to sit below it. Sourced."""

KV_CACHE_FREE_FRACTION = 0.9
"""Share of the memory left after the weights and the step's activations
(:func:`engine_reserved_bytes`) that TensorRT-LLM gives the KV cache: its
``kv_cache_free_gpu_mem_fraction`` default (0.90, its perf-overview page). Sourced."""

KV_MEMORY_RULES = {"trtllm": ("free", 0.90), "vllm": ("total", 0.90), "sglang": ("static", 0.88)}
"""How each engine sizes its KV cache (:func:`kv_budget_bytes`): ("free", f) gives the cache f of
the memory left after the weights and the engine's reserve (TensorRT-LLM's
kv_cache_free_gpu_mem_fraction, 0.90); ("total", f) caps weights, reserve and cache at f of the
whole HBM (vLLM's gpu_memory_utilization, default 0.90, in its engine arguments); ("static", f)
caps weights plus cache at f and leaves the rest to activations (SGLang's mem_fraction_static,
0.88 assumed: SGLang picks it from the GPU's memory and the TP size). The reserve is
:func:`engine_reserved_bytes`."""

KV_RESERVES_FULL_SEQUENCE = {"trtllm": True, "vllm": False, "sglang": False}
"""Whether an engine admits a request only when the cache can hold its whole sequence (prompt plus
its maximum output) from the start. TensorRT-LLM's capacity scheduler defaults to
GUARANTEED_NO_EVICT, which 'guarantee[s] that a started request is never paused' by reserving a
request's blocks through its maximum length (TensorRT-LLM documentation, 'Useful Runtime Options',
Capacity Scheduler Policy; https://nvidia.github.io/TensorRT-LLM/performance/
performance-tuning-guide/useful-runtime-flags.html): at max throughput its batch is the cache over
I + O tokens a sequence, not over the mean length I + O/2. vLLM and SGLang allocate blocks as
tokens arrive and preempt when the cache is full (vLLM docs, 'Optimization and Tuning',
Preemption). Sourced."""


def kv_budget_bytes(
    hbm_bytes: float, weight_bytes: float, *, rule: tuple[str, float], reserved_bytes: float = 0.0
) -> float:
    """Bytes of KV cache a chip holds under an engine's memory rule (``KV_MEMORY_RULES``).

    ``reserved_bytes`` is what the engine holds outside the cache before it sizes it
    (:func:`engine_reserved_bytes`): "free" gives the cache f (HBM - weights - reserve), "total"
    f HBM - weights - reserve, "static" f HBM - weights (the reserve lives in the 1 - f share).

    >>> rules = (("free", 0.9), ("total", 0.9))  # TensorRT-LLM's and vLLM's defaults
    >>> [round(kv_budget_bytes(80e9, 35e9, rule=r, reserved_bytes=2e9) / 1e9, 1) for r in rules]
    [38.7, 35.0]
    """
    kind, f = rule
    if kind == "free":
        return max(hbm_bytes - weight_bytes - reserved_bytes, 0.0) * f
    if kind == "total":
        return max(f * hbm_bytes - weight_bytes - reserved_bytes, 0.0)
    if kind == "static":
        return max(f * hbm_bytes - weight_bytes, 0.0)
    raise ValueError(f"rule must be ('free' | 'total' | 'static', f), got {rule!r}")


def engine_reserved_bytes(
    model: Model, *, tp: int, chips: int, n_tokens: int, n_sequences: int
) -> float:
    """Bytes a chip holds outside its KV cache for one forward step: the step's peak activations.

    Both engines size the cache after that peak: TensorRT-LLM's engine 'pre-computes the
    activation tensors memory requirement at build time' for its largest shapes, 'close to max
    number of input tokens * some constant factor', one block's worth because layers reuse it
    (docs/source/reference/memory.md), and its PyTorch backend gives the cache
    (total - peak of a dummy forward of max_num_tokens) x fraction
    (tensorrt_llm/_torch/pyexecutor/_util.py, _cal_max_memory); vLLM gives it
    gpu_memory_utilization x total - weights - the peak of a dummy forward of
    max_num_batched_tokens (vllm/v1/worker/gpu_worker.py, determine_available_memory).
    The peak modelled here is one layer's largest live tensors at T = ``n_tokens``:
    the residual stream in and the normed copy (2 d_model, replicated over TP) and the MLP's
    gate and up outputs (2 d_ff / tp, or for a MoE layer 2 k d_ff_expert over the ``chips``
    that share the routed rows), BF16; plus FP32 logits over the whole vocabulary for the last
    token of each of min(``n_sequences``, T) sequences. Sampler workspaces, NCCL buffers and
    CUDA graphs are not counted, so this is a lower bound.

    >>> from llmphys import specs
    >>> r = engine_reserved_bytes(specs.model("llama3_70b"), tp=2, chips=2, n_tokens=8192,
    ...                           n_sequences=2048)
    >>> round(r / 1e9, 2)  # GB: 0.74 of activations + 1.05 of FP32 logits
    1.79
    """
    t, seqs = _int("n_tokens", n_tokens), _int("n_sequences", n_sequences)
    mlp = 2.0 * model.d_ff / _int("tp", tp)
    if model.moe is not None:
        mlp = max(mlp, 2.0 * model.moe.n_experts_per_token * model.moe.d_ff_expert / chips)
    act = t * (2.0 * model.d_model + mlp) * ACTIVATION_BYTES
    return act + min(seqs, t) * model.vocab_size * 4.0


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


def bench_engine_limits(
    model: Model,
    accelerator: Accelerator,
    *,
    n_chips: int,
    weight_bytes: float,
    kv_bytes: float,
    input_tokens: int,
    output_tokens: int,
) -> tuple[int, int]:
    """(max sequences, max tokens a step) that trtllm-bench gives an engine it builds itself.

    ``trtllm-bench throughput`` run without --max_batch_size sizes both from the dataset
    (TensorRT-LLM, tensorrt_llm/bench/build/tuning.py, calc_engine_setting and finetune_setting):
    the cache is 0.95 of the chips' memory less the weights, a token holds 2 L max(tp, h_kv) d_h
    elements, the requests that fit at I + O tokens each are the raw batch b (at most 4,096), and
    the token budget is b (1 + I/O), at most 32,768; both are rounded up ('slightly optimistic').
    Sourced (the tool's code, not a fit). ``n_chips`` is the replica's tp x pp.

    >>> from llmphys import specs
    >>> bench_engine_limits(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=1,
    ...                     weight_bytes=1.0, kv_bytes=1.0, input_tokens=2048, output_tokens=128)
    (640, 9216)
    """
    heads = max(n_chips, model.n_kv_heads)
    per_token = 2.0 * model.n_layers * heads * model.d_head * kv_bytes
    cache = 0.95 * (n_chips * accelerator.hbm_bytes - accounting.n_params(model) * weight_bytes)
    raw_bs = min(max(cache, 0.0) / (per_token * (input_tokens + output_tokens)), 4096.0)
    raw_tok = min(raw_bs * (1.0 + input_tokens / output_tokens), 32768.0)
    if raw_bs < 256:
        bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        bs = 128 * math.ceil(raw_bs / 128)
    else:
        bs = 256 * math.ceil(raw_bs / 256)
    step = 256 if raw_tok < 4096 else 512 if raw_tok < 8192 else 1024
    tok = max(2048, step * math.ceil(raw_tok / step))
    return int(bs), int(tok)


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

    hbm_efficiency: float = HBM_EFFICIENCY  # sourced: Azure's measured HBM stream
    attention_efficiency: float = _train.ATTENTION_EFFICIENCY  # sourced: FlashAttention-3 on H100
    link_efficiency: float = _train.COLLECTIVE_EFFICIENCY  # sourced: NCCL bus bandwidth / link
    gemm_efficiency: float = 0.48  # fitted: fraction of the dense peak the dense GEMMs reach
    expert_gemm_efficiency: float = 0.25  # fitted: the same for the routed experts' MoE layer
    step_overhead_s: float = 3.0e-3  # fitted: seconds per step beyond every roofline term


CONSTANTS = ServeConstants(
    gemm_efficiency=0.48, expert_gemm_efficiency=0.25, step_overhead_s=3.0e-3
)
"""The constants in use: the fitted three are the values ``predict.serving_data.calibrate()``
returns on the calibration rows, rounded (a test checks it)."""


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
    """MoE layers of a model (:func:`llmphys.accounting.n_moe_layers`, the one count)."""
    return accounting.n_moe_layers(model)


def _expert_params(model: Model) -> float:
    assert model.moe is not None
    return accounting.mlp_params(model, model.moe.d_ff_expert)


def dense_params(model: Model) -> float:
    """Parameters every token multiplies and every step reads: all but the input embedding and
    the routed experts (:func:`llmphys.inference.streamed_params`, the one count)."""
    return float(inference.streamed_params(model, batch_size=1)["dense"])


def weight_read_bytes(model: Model, *, n_tokens: float, weight_bytes: float) -> dict[str, float]:
    """Bytes of weights one step of ``n_tokens`` reads in a replica, dense part and experts.

    :func:`llmphys.inference.streamed_params` (the one count of streamed weights) times the
    bytes per parameter: the experts part counts the expected distinct experts the step touches
    per MoE layer, E (1 - (1 - k/E)^T), each read once however many of the step's tokens it
    serves.

    >>> from llmphys import specs
    >>> r = weight_read_bytes(specs.model("deepseek_v3"), n_tokens=1, weight_bytes=1.0)
    >>> round(r["experts"] / 1e9, 2)  # GB: 8 experts x 58 layers x 44M parameters, FP8
    20.43
    """
    units.check_positive("weight_bytes", weight_bytes)
    r = inference.streamed_params(model, batch_size=max(float(n_tokens), 1.0))
    return {
        "dense": float(r["dense"]) * weight_bytes,
        "experts": float(r["experts"]) * weight_bytes,
    }


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


# ------------------------------------------------------------------ registries
@functools.cache
def _serving_registry() -> dict:
    return specs.registry_table("serving_models.toml")


def resolve_model(value: Model | str) -> Model:
    """A model by key from the registries, then ``data/serving_models.toml``; or a Model."""
    if isinstance(value, Model):
        return value
    if not isinstance(value, str):
        raise TypeError(f"model must be a Model or a registry key, got {type(value).__name__}")
    return _model_by_key(value)


@functools.cache
def _model_by_key(key: str) -> Model:
    """The registry's Model for ``key``, built once (a frozen value; serving's calibration asks
    for the same few models thousands of times)."""
    extra = _serving_registry().get("models", {})
    if key in extra:
        return specs.build_spec(Model, extra[key], f"serving_models.toml[{key}]", key=key)
    return _train._model(key)


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
