"""Predicted throughput and latency of a serving deployment, built from the book's own pieces.

A deployment of n chips runs n / (tp pp ep) replicas of the model. Each replica serves its
share of the concurrent sequences with continuous batching: every step emits one token (or,
with speculative decoding, the expected accepted run) for each of its B sequences, and in
the steady state it also prefills the prompts of the sequences that replace the finished
ones, B e I / O prompt tokens a step (I input, O output tokens, e tokens per step). With
chunked prefill those tokens ride in the same step (Agrawal et al. 2024, Sarathi-Serve,
arXiv:2403.02310); without it a prefill stalls every decoding sequence.

One step of one replica is timed operator by operator, each at its own roofline (the
chip's rate x a named efficiency), then summed on the critical path:

    weights        the weight GEMMs: max(bytes read / W_eff, FLOP / P_eff), per operator
                   (attention projections, dense FFN, routed experts touched), so a MoE's
                   experts stay memory-bound long after its attention is compute-bound
    kv_reads       decode attention: max(KV bytes / W_eff, attention FLOP / P_attn)
    prefill_attn   the chunked prompts' causal attention at the flash-kernel efficiency
    tp_collectives 2 all-reduces per layer of the step's activations, with a latency term
    ep_collectives expert dispatch and combine per MoE layer, with a latency term
    draft          the draft model's k decode steps (speculative decoding)
    overhead       a fixed per-step cost: scheduling, sampling, launch gaps

with bytes and FLOP from ``inference`` and ``kv_cache``, collectives from ``comms``, and the
efficiencies from ``predict`` where they are the same physics (GEMMs, flash attention, link
bandwidth and latency). ``STEP_OVERHEAD_S`` is the one constant fitted, on the named rows
``CALIBRATION_RUNS`` of ``data/serving_runs.toml``; every other row is a prediction.

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
from typing import Any

from . import accounting, comms, inference, kv_cache, predict, specs, units
from .specs import Accelerator, Model

# ---------------------------------------------------------------- efficiency constants
HBM_EFFICIENCY = 0.9
"""Fraction of the datasheet HBM bandwidth a streaming kernel sustains: Azure measured
7.35 TB/s on a GB200's 8 TB/s, 92% (Microsoft Azure HPC blog, 'Azure's ND GB200 v6 delivers
record performance for inference workloads', 2025); rounded down to 0.9 for Hopper."""

KV_CACHE_FREE_FRACTION = 0.9
"""Share of the memory left after the weights that the engine gives the KV cache: the
default of TensorRT-LLM's ``kv_cache_free_gpu_mem_fraction`` (0.90, stated in its
perf-overview page) and of vLLM's ``gpu_memory_utilization``."""

ALL_REDUCE_HOPS = 2
"""Link latencies per small-message all-reduce. Serving engines use a one-shot or two-shot
all-reduce over NVSwitch for decode-sized messages (TensorRT-LLM's and vLLM's custom
all-reduce kernels), not NCCL's ring with 2 (p - 1) hops: one write to every peer and one
barrier, whatever tp is."""

CHUNK_TOKENS = 8192
"""Prompt tokens a step may carry under chunked prefill (the engine's token budget per step:
TensorRT-LLM's default max_num_tokens, 8192)."""

STEP_OVERHEAD_S = 2.0e-3
"""Fixed seconds per decode step beyond the roofline: scheduling, sampling, detokenisation
and kernel-launch gaps. An assumption, neither fitted nor measured here: the order of the
CPU-side work per step that engines hide with CUDA graphs and overlapped scheduling. At the
published rows' batches it is 1-10% of a step; at batch 1 it is the largest single term
after the weights, so batch-1 predictions carry its uncertainty."""

SERVE_GEMM_EFFICIENCY = 0.43
"""Fraction of the dense peak the serving engine's weight GEMMs sustain at the math dtype,
end to end through a step (FP8 GEMMs with per-tensor scaling, fused SwiGLU, the mixed
prefill/decode shapes of continuous batching). Not the training model's GEMM_EFFICIENCY:
FP8 at decode shapes is not the same physics as BF16 training matmuls. Fitted (one number,
least squares in log throughput) on CALIBRATION_RUNS only; see
``calibrate_gemm_efficiency``."""

CALIBRATION_RUNS = ("trtllm_llama31_8b_h100_tp1_1000_1000", "trtllm_llama33_70b_h100_tp2_1000_1000")
"""The rows SERVE_GEMM_EFFICIENCY is fitted on: one small and one large dense model at the
middle workload (1,000 in, 1,000 out). Every other row of data/serving_runs.toml is held
out."""

MAX_BATCH = 2048
"""Largest decode batch per replica in max-throughput mode: TensorRT-LLM's default
max_batch_size, 2,048 (its build configuration). The published runs do not state the batch
they reached (see data/serving_runs.toml, ``unstated``)."""


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


def _int(name: str, v, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def expected_tokens_per_step(*, draft_tokens: int, acceptance_rate: float) -> float:
    """Tokens a sequence gains per verification step of speculative decoding.

    With k drafted tokens each accepted with probability a (independently), the step
    keeps the accepted prefix plus the target's own next token: (1 - a^(k+1)) / (1 - a)
    (Leviathan et al. 2023, arXiv:2211.17192, eq. 1); k + 1 when a = 1, 1 when k = 0.

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


def _gemm_s(
    model: Model,
    acc: Accelerator,
    *,
    tokens: float,
    chips: int,
    wbytes: float,
    peak: float,
    weight_passes: float = 1.0,
) -> dict[str, float]:
    """Seconds and bytes of the weight GEMMs for ``tokens`` tokens, operator by operator."""
    bw = acc.hbm_bytes_per_s * HBM_EFFICIENCY * chips
    p = peak * SERVE_GEMM_EFFICIENCY * chips
    dense = accounting.n_params(model) - accounting.embedding_params(model)
    ops = []  # (weights read, weights each token multiplies)
    if model.moe is None:
        ops.append((dense, dense))
    else:
        n_moe = model.n_layers - model.moe.n_dense_layers
        expert = accounting.mlp_params(model, model.moe.d_ff_expert)
        routed = n_moe * model.moe.n_experts * expert
        touched = (
            n_moe * float(inference.experts_touched(model, batch_size=max(tokens, 1.0))) * expert
        )
        ops.append((dense - routed, dense - routed))
        ops.append((touched, n_moe * model.moe.n_experts_per_token * expert))
    t = mem = comp = 0.0
    for read, used in ops:
        m_s, c_s = weight_passes * read * wbytes / bw, 2.0 * used * tokens / p
        t += max(m_s, c_s)
        mem, comp = mem + (m_s if m_s >= c_s else 0.0), comp + (c_s if c_s > m_s else 0.0)
    return {
        "time_s": t,
        "memory_s": mem,
        "compute_s": comp,
        "bytes": weight_passes * sum(r for r, _ in ops) * wbytes,
    }


def _collectives_s(
    model: Model, acc: Accelerator, *, tokens: float, tp: int, ep: int
) -> tuple[float, float]:
    """TP all-reduce and EP all-to-all seconds of one forward pass; ``tokens`` are one EP
    rank's (attention is data-parallel across the EP ranks, as in DeepSeek's and SGLang's
    deployments), so each rank dispatches k copies of each, split over its tp peers."""
    up = acc.scale_up_bytes_per_s_per_direction * predict.COLLECTIVE_EFFICIENCY
    out = acc.scale_out_bytes_per_s_per_direction * predict.COLLECTIVE_EFFICIENCY
    act = tokens * model.d_model * 2.0  # BF16 activations
    tp_s = 0.0
    if tp > 1:
        inside = tp <= acc.scale_up_domain_size
        link, alpha = (up, predict.SCALE_UP_LATENCY_S) if inside else (out, predict.LINK_LATENCY_S)
        one = comms.ring_all_reduce_time_s(act, tp, link_bytes_per_s=link) + ALL_REDUCE_HOPS * alpha
        tp_s = 2 * model.n_layers * one
    ep_s = 0.0
    if ep > 1:
        moe = model.moe
        assert moe is not None
        inside = tp * ep <= acc.scale_up_domain_size
        link, alpha = (up, predict.SCALE_UP_LATENCY_S) if inside else (out, predict.LINK_LATENCY_S)
        per_rank = act * moe.n_experts_per_token / tp  # k copies of this rank's tokens
        one = comms.all_to_all_time_s(per_rank, ep, link_bytes_per_s=link, latency_s=alpha)
        ep_s = 2 * (model.n_layers - moe.n_dense_layers) * one  # dispatch and combine
    return tp_s, ep_s


def _layout(
    model: Model, *, n_chips, tp, ep, pp, input_tokens, output_tokens, prefill_chips
) -> tuple[int, int, int, int, int, int, int, int]:
    n, t, e, p = (_int(k, v) for k, v in (("n_chips", n_chips), ("tp", tp), ("ep", ep), ("pp", pp)))
    i, o = _int("input_tokens", input_tokens), _int("output_tokens", output_tokens)
    pc = _int("prefill_chips", prefill_chips, 0)
    if e > 1 and model.moe is None:
        raise ValueError(f"ep={e} needs a mixture-of-experts model; {model.key} is dense")
    g = t * e * p
    decode_chips = n - pc
    if decode_chips < g or decode_chips % g:
        raise ValueError(
            f"n_chips - prefill_chips = {decode_chips} must be a positive "
            f"multiple of tp*ep*pp = {t}*{e}*{p} = {g}"
        )
    if pc % (t * p):
        raise ValueError(f"prefill_chips={pc} must be a multiple of tp*pp = {t * p}")
    return n, t, e, p, i, o, pc, decode_chips // g


def _step(
    model,
    acc,
    *,
    b: float,
    g: int,
    tp: int,
    ep: int,
    pp: int,
    i: int,
    o: int,
    wbytes: float,
    kv_bpe: float,
    peak: float,
    e_tok: float,
    k: int,
    draft,
    prefill_tokens: float,
) -> dict[str, float]:
    """Seconds of one decode step of one replica of g chips, by part."""
    tokens = b * (k + 1) + prefill_tokens  # every token the target model processes
    gemm = _gemm_s(model, acc, tokens=tokens, chips=g, wbytes=wbytes, peak=peak, weight_passes=pp)
    ctx = kv_cache.cached_positions(model, n_tokens=i + o // 2)
    bw = acc.hbm_bytes_per_s * HBM_EFFICIENCY * g
    kv_s = b * ctx * kv_cache.kv_bytes_per_token(model, bytes_per_element=kv_bpe) / bw
    attn_flop = b * (k + 1) * ctx * kv_cache.decode_attention_flop_per_context_token(model)
    attn_c = attn_flop / (peak * predict.ATTENTION_EFFICIENCY * g)
    pre_attn = prefill_tokens * accounting.attention_flop_per_token(
        model, context_tokens=(kv_cache.cached_positions(model, n_tokens=i) + 1) / 2
    )
    pre_s = pre_attn / (peak * predict.ATTENTION_EFFICIENCY * g)
    tp_s, ep_s = _collectives_s(model, acc, tokens=tokens / max(ep, 1), tp=tp, ep=ep)
    draft_s = 0.0
    if k > 0 and draft is not None:
        d = _gemm_s(draft, acc, tokens=b, chips=g, wbytes=wbytes, peak=peak)["time_s"]
        d += b * ctx * kv_cache.kv_bytes_per_token(draft, bytes_per_element=kv_bpe) / bw
        draft_s = k * (d + STEP_OVERHEAD_S / 2)
    return {
        "weights": gemm["memory_s"],
        "compute": gemm["compute_s"] + (attn_c if attn_c > kv_s else 0.0),
        "kv_reads": kv_s if kv_s >= attn_c else 0.0,
        "prefill_attention": pre_s,
        "tp_collectives": tp_s,
        "ep_collectives": ep_s,
        "draft": draft_s,
        "overhead": STEP_OVERHEAD_S,
    }


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
    draft_tokens: int = 0,
    acceptance_rate: float = 0.0,
    draft_model: Model | str | None = None,
    prefill_chips: int = 0,
    check_memory: bool = True,
) -> Serve:
    """Predicted throughput (tokens/s), TPOT and TTFT (s) and memory (bytes) of a deployment.

    ``batch_size`` is the number of sequences decoding at once in the whole deployment,
    split evenly over its n / (tp ep pp) replicas; ``None`` is max-throughput mode, the
    largest batch whose KV cache fits (``KV_CACHE_FREE_FRACTION`` of the memory the
    weights leave, sequences at their mean length I + O/2), capped at ``MAX_BATCH`` per
    replica. Output tokens/s = replicas x B e / t_step with e the speculative tokens per
    step (``expected_tokens_per_step``); TPOT = t_step / e; input tokens/s = output x I/O.
    ``tpot_worst_s`` is the longest gap a sequence sees: without chunked prefill a whole
    prompt's prefill stalls the batch; with it, one step carries at most ``chunk_tokens``
    of prompt (Agrawal et al. 2024, arXiv:2403.02310). ``math_dtype`` defaults to the weight
    dtype (FP8 weights run FP8 GEMMs; 4-bit weights are dequantised to BF16). Speculation
    with ``draft_model=None`` drafts for free (an n-gram or multi-token-prediction head whose
    cost the step ignores). ``prefill_chips`` > 0 makes the layout disaggregated: those
    chips prefill (in replicas of tp pp chips) and the rest only decode; the deployment
    runs at the slower of the two pools, and TTFT adds the KV transfer over scale-out.
    Raises ``predict.LayoutDoesNotFit`` (with the bytes) when the weights, or the
    requested batch, do not fit, unless ``check_memory=False``.

    >>> s = serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=1,
    ...           input_tokens=1000, output_tokens=1000)
    >>> round(s.tpot_s * 1e3, 1)  # ms: BF16 weights over 8 HBMs, all-reduces, overhead
    8.9
    """
    mdl, acc = predict._model(model), predict._accelerator(accelerator)
    _, tp, ep, pp, i, o, pc, n_rep = _layout(
        mdl,
        n_chips=n_chips,
        tp=tp,
        ep=ep,
        pp=pp,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        prefill_chips=prefill_chips,
    )
    wbytes = units.bytes_per_element(weight_dtype)
    kv_bpe = units.bytes_per_element(kv_dtype)
    if math_dtype is None:
        math_dtype = weight_dtype if weight_dtype in ("bf16", "fp16", "fp8", "fp4") else "bf16"
    peak = acc.peak_flop_per_s("bf16" if math_dtype == "fp16" else math_dtype)
    k = _int("draft_tokens", draft_tokens, 0)
    e_tok = expected_tokens_per_step(draft_tokens=k, acceptance_rate=acceptance_rate)
    draft = None if draft_model is None else predict._model(draft_model)
    chunk = _int("chunk_tokens", chunk_tokens)
    g = tp * ep * pp

    # --- memory: weights sharded over the replica, KV of its sequences at mean length
    w_chip = inference.weight_bytes_stored(mdl, weight_dtype=weight_dtype) / g
    if draft is not None:
        w_chip += inference.weight_bytes_stored(draft, weight_dtype=weight_dtype) / g
    seq_mean = kv_cache.cached_positions(mdl, n_tokens=i + o // 2) * kv_cache.kv_bytes_per_token(
        mdl, bytes_per_element=kv_bpe
    )
    free = acc.hbm_bytes - w_chip
    if free <= 0 and check_memory:
        raise predict.LayoutDoesNotFit(
            f"{mdl.key} on {acc.key}: {units.fmt_bytes(w_chip)} of {weight_dtype} weights per "
            f"chip (tp*ep*pp = {g}) exceed its {units.fmt_bytes(acc.hbm_bytes)} of HBM"
        )
    if batch_size is None:
        b_rep = max(1, min(MAX_BATCH, int(KV_CACHE_FREE_FRACTION * max(free, 0.0) * g // seq_mean)))
    else:
        b_all = _int("batch_size", batch_size)
        if b_all % n_rep:
            raise ValueError(f"batch_size={b_all} must be a multiple of the {n_rep} replicas")
        b_rep = b_all // n_rep
    kv_chip = b_rep * seq_mean / g
    memory_parts = {"weights": w_chip, "kv_cache": kv_chip}
    memory = w_chip + kv_chip
    if check_memory and memory > acc.hbm_bytes:
        raise predict.LayoutDoesNotFit(
            f"{mdl.key} on {acc.key} with batch {b_rep} per replica of {g} chips needs "
            f"{units.fmt_bytes(memory)} per chip ({units.fmt_bytes(w_chip)} weights, "
            f"{units.fmt_bytes(kv_chip)} KV cache); the chip has {units.fmt_bytes(acc.hbm_bytes)}"
        )

    # --- the steady state: each step also prefills the prompts that replace finished ones
    # (at most chunk_tokens a step: past that the prompts, not the batch, set the rate)
    pre_tokens = min(b_rep * e_tok * i / o, chunk) if (chunked_prefill and pc == 0) else 0.0
    out_per_step = b_rep * e_tok if pre_tokens == 0.0 else pre_tokens * o / i
    kw: dict[str, Any] = {
        "g": g,
        "tp": tp,
        "ep": ep,
        "pp": pp,
        "i": i,
        "o": o,
        "wbytes": wbytes,
        "kv_bpe": kv_bpe,
        "peak": peak,
        "e_tok": e_tok,
        "k": k,
        "draft": draft,
    }
    parts = _step(mdl, acc, b=b_rep, prefill_tokens=pre_tokens, **kw)
    step = sum(parts.values())
    # a whole prompt run as its own step (no chunking), and one chunk riding with the batch
    t_whole = sum(_step(mdl, acc, b=1e-9, prefill_tokens=i, **kw).values())
    mixed = sum(_step(mdl, acc, b=b_rep, prefill_tokens=min(i, chunk), **kw).values())
    if pc == 0 and not chunked_prefill:
        # each prompt stalls every decoding sequence for its whole prefill: e I / O a step
        parts["prefill_stall"] = b_rep * e_tok / o * t_whole
        step = sum(parts.values())
    out_rate = n_rep * out_per_step / step
    if pc == 0:
        # chunked: a prompt's chunks ride in ceil(I / C) steps that also decode the batch
        ttft = math.ceil(i / chunk) * mixed if chunked_prefill else t_whole
        worst = (
            max(mixed, step)
            if chunked_prefill
            else step - parts.get("prefill_stall", 0.0) + t_whole
        )
    else:
        kw_p: dict[str, Any] = dict(kw, g=tp * pp, ep=1)
        t_pre = sum(_step(mdl, acc, b=1e-9, prefill_tokens=i, **kw_p).values())
        kv_s = (
            i
            * kv_cache.kv_bytes_per_token(mdl, bytes_per_element=kv_bpe)
            / (acc.scale_out_bytes_per_s_per_direction * predict.COLLECTIVE_EFFICIENCY)
        )
        ttft, worst = t_pre + kv_s, step  # decode chips never prefill
        # the prefill pool's capacity: replicas x prompt tokens per second, batched by chunk
        big = sum(_step(mdl, acc, b=1e-9, prefill_tokens=chunk, **kw_p).values())
        prefill_rate = (pc // (tp * pp)) * chunk / big
        out_rate = min(out_rate, prefill_rate * o / i)
    return Serve(
        output_tokens_per_s=out_rate,
        input_tokens_per_s=out_rate * i / o,
        tpot_s=step / e_tok,
        tpot_worst_s=worst,
        ttft_s=ttft,
        batch_size=b_rep * n_rep,
        n_replicas=n_rep,
        tokens_per_step=e_tok,
        memory_per_chip_bytes=memory,
        hbm_bytes=acc.hbm_bytes,
        parts=parts,
        memory_parts=memory_parts,
    )


# ------------------------------------------------------------------ published deployments
@dataclasses.dataclass(frozen=True, kw_only=True)
class ServingRun:
    """A published serving measurement: model, chips, layout, precisions, workload, figure."""

    key: str
    model: str
    model_name: str
    accelerator: str
    n_chips: int
    tp: int
    ep: int
    pp: int
    weight_dtype: str
    kv_dtype: str
    math_dtype: str
    batch_size: int  # 0: max-throughput mode (every request queued at once)
    input_tokens: int
    output_tokens: int
    measured_output_tokens_per_s: float
    quote: str
    engine: str
    source: str
    table: str
    unstated: str
    measured_ttft_s: float | None = None
    measured_tpot_s: float | None = None


@functools.cache
def serving_runs() -> dict[str, ServingRun]:
    """Every measurement in ``data/serving_runs.toml``, keyed by row (checked field by field)."""
    path = specs.data_dir() / "serving_runs.toml"
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    runs = {}
    for key, entry in raw.items():
        run = specs.build_spec(ServingRun, entry, f"serving_runs.toml[{key}]", key=key)
        for field in ("weight_dtype", "kv_dtype", "math_dtype"):
            units.bytes_per_element(getattr(run, field))  # a known dtype, or ValueError
        runs[key] = run
    return runs


def predict_run(run: ServingRun | str) -> Serve:
    """``serve`` on a published deployment's layout and workload, nothing else taken from it."""
    r = serving_runs()[run] if isinstance(run, str) else run
    return serve(
        r.model,
        r.accelerator,
        n_chips=r.n_chips,
        tp=r.tp,
        ep=r.ep,
        pp=r.pp,
        batch_size=r.batch_size or None,
        input_tokens=r.input_tokens,
        output_tokens=r.output_tokens,
        weight_dtype=r.weight_dtype,
        kv_dtype=r.kv_dtype,
        math_dtype=r.math_dtype,
        check_memory=False,
    )


def residuals() -> list[dict]:
    """One row per published deployment: measured and predicted output tokens/s, the error.

    ``calibration`` marks the rows SERVE_GEMM_EFFICIENCY was fitted on.
    """
    rows = []
    for key, run in serving_runs().items():
        s = predict_run(run)
        meas, pred = run.measured_output_tokens_per_s, s.output_tokens_per_s
        rows.append(
            {
                "run": key,
                "model": run.model,
                "model_name": run.model_name.split(" Instruct")[0],
                "accelerator": run.accelerator,
                "n_chips": run.n_chips,
                "input_tokens": run.input_tokens,
                "output_tokens": run.output_tokens,
                "batch_size": s.batch_size,
                "fits": s.fits,
                "measured": meas,
                "predicted": pred,
                "rel_error": (pred - meas) / meas,
                "calibration": key in CALIBRATION_RUNS,
            }
        )
    return rows


def held_out_summary() -> dict[str, float]:
    """Median and worst |predicted - measured| / measured throughput over the held-out rows."""
    return predict.held_out_errors(residuals())


def calibrate_gemm_efficiency() -> float:
    """The SERVE_GEMM_EFFICIENCY that best fits CALIBRATION_RUNS (least squares in log rate).

    A golden-section search over (0.2, 1); every other constant is held at its sourced value.
    """
    global SERVE_GEMM_EFFICIENCY
    saved, runs = SERVE_GEMM_EFFICIENCY, [serving_runs()[k] for k in CALIBRATION_RUNS]

    def loss(eta: float) -> float:
        global SERVE_GEMM_EFFICIENCY
        SERVE_GEMM_EFFICIENCY = eta
        return sum(
            math.log(predict_run(r).output_tokens_per_s / r.measured_output_tokens_per_s) ** 2
            for r in runs
        )

    try:
        return predict.golden_section_min(loss, 0.2, 1.0, n_iter=50)
    finally:
        SERVE_GEMM_EFFICIENCY = saved


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

    A latency target caps the batch: TPOT grows with the batch, so bisect the per-replica batch
    between 1 and the largest whose cache fits (:func:`serve` with ``batch_size=None``).
    ``kwargs`` are :func:`serve`'s other arguments (``n_chips``, ``tp``, ``input_tokens``, ...).
    None when even batch 1 misses the target; raises ``predict.LayoutDoesNotFit`` when the
    weights do not fit.

    >>> s = largest_batch_within_tpot("llama3_70b", "h100_sxm", tpot_s=0.05, n_chips=8, tp=8,
    ...                               input_tokens=2000, output_tokens=500, weight_dtype="fp8",
    ...                               kv_dtype="fp8")
    >>> s.batch_size, round(s.tpot_s * 1e3, 1)  # sequences, ms
    (257, 49.8)
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
    lo, hi = 1, top.batch_size // n_rep  # per replica: lo meets the target, hi misses it
    while hi - lo > 1:
        mid = (lo + hi) // 2
        s = serve(model, accelerator, batch_size=mid * n_rep, **kwargs)
        lo, hi, best = (mid, hi, s) if s.tpot_s <= tpot_s else (lo, mid, best)
    return best
