"""What the serving simulator takes and returns: request lengths, the scheduler's options and a
run's per-request latencies (split from ``predict.simulate``, which runs the events).

Home: chapters/06_economics.ipynb, section "Latency under load".
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import TYPE_CHECKING

import numpy as np

from .. import units

if TYPE_CHECKING:
    from .serve_step import StepCost

# the module itself: the package's name serve is the function
_serve = importlib.import_module(".serve_model", __package__)

BLOCK_TOKENS = 16
"""Tokens per KV-cache block: vLLM's default block_size (16)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LengthDistribution:
    """Token lengths: ``fixed`` (every request ``mean``) or ``lognormal`` with that mean and a
    log-space spread ``sigma``, clipped to [1, ``max_tokens``]."""

    mean: float
    kind: str = "fixed"
    sigma: float = 0.0
    max_tokens: int = 131072

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` integer lengths."""
        units.check_positive("mean", self.mean)
        if self.kind == "fixed":
            x = np.full(n, float(self.mean))
        elif self.kind == "lognormal":
            mu = math.log(self.mean) - self.sigma**2 / 2  # so that E[x] = mean
            x = rng.lognormal(mu, self.sigma, n)
        else:
            raise ValueError(f"kind must be 'fixed' or 'lognormal', got {self.kind!r}")
        return np.clip(np.rint(x), 1, self.max_tokens).astype(np.int64)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LengthFilter:
    """Which (prompt, output) pairs a benchmark's sampler keeps: it drops a pair whose prompt or
    output is under ``min_tokens``, whose prompt is over ``max_prompt_tokens`` or whose sum is
    over ``max_total_tokens``, and takes the next. ``exact_means`` rescales the kept lengths so
    that their means are the distributions' means: a run that publishes its total input and
    output tokens fixes its sample's means, and the draw should not add its own sampling error.
    The defaults are vLLM's benchmark sampler's (``vllm bench serve`` ShareGPT sampling,
    vllm/benchmarks/datasets.py, ``is_valid_sequence``: min_len 4, max_prompt_len 1024,
    max_total_len 2048)."""

    min_tokens: int = 4
    max_prompt_tokens: int = 1024
    max_total_tokens: int = 2048
    exact_means: bool = True


def sample_pairs(
    inputs: LengthDistribution,
    outputs: LengthDistribution,
    rng: np.random.Generator,
    n: int,
    length_filter: LengthFilter | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (prompt, output) lengths: drawn independently, then (``length_filter``) the pairs
    the benchmark's sampler would drop redrawn until none is left, and the means matched.

    >>> import numpy as np
    >>> d = LengthDistribution(mean=200.0, kind="lognormal", sigma=1.0, max_tokens=10**6)
    >>> i, o = sample_pairs(d, d, np.random.default_rng(0), 1000, LengthFilter())
    >>> int((i + o).max()) <= 2048, int(i.max()) <= 1024, round(float(o.mean()))
    (True, True, 200)
    """
    ins, outs = inputs.sample(rng, n), outputs.sample(rng, n)
    f = length_filter
    if f is None:
        return ins, outs

    def bad(i: np.ndarray, o: np.ndarray) -> np.ndarray:
        return (
            (i < f.min_tokens)
            | (o < f.min_tokens)
            | (i > f.max_prompt_tokens)
            | (i + o > f.max_total_tokens)
        )

    drop = bad(ins, outs)
    for _ in range(1000):
        if not drop.any():
            break
        k = int(drop.sum())
        ins[drop], outs[drop] = inputs.sample(rng, k), outputs.sample(rng, k)
        drop = bad(ins, outs)
    else:
        raise ValueError("length_filter keeps almost no pair of these distributions")
    if f.exact_means:
        ins = np.clip(np.rint(ins * (inputs.mean / ins.mean())), f.min_tokens, f.max_prompt_tokens)
        outs = np.rint(outs * (outputs.mean / outs.mean()))
        outs = np.clip(outs, f.min_tokens, f.max_total_tokens - ins)
    return ins.astype(np.int64), outs.astype(np.int64)


RATIO_MIN, RATIO_DECAY, RETRACT_STEPS, CLIP_NEW_TOKENS = 0.14, (1 - 0.14) / 600, 20, 4096
"""SGLang's new-token-ratio schedule (sgl-project/sglang v0.5.5.post1, python/sglang/srt/environ.py
and managers/scheduler.py, Scheduler.__init__): the ratio falls from its initial value by
(1 - 0.14)/600 of it each decode step to 0.14 of it (SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600); a retraction resets it to (generated tokens + 20 a
request) over the requests' max_new_tokens (SGLANG_RETRACT_DECODE_STEPS 20,
ScheduleBatch.retract_decode); a request's output is reserved up to 4,096 tokens
(managers/schedule_policy.py, CLIP_MAX_NEW_TOKENS). v0.3.0 (python/sglang/global_config.py) floors
it at 0.1 and takes 0.001 a step, within 2% of these."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scheduler:
    """The engine's limits: sequences per step, tokens per step, chunked prefill on or off, how
    it sizes its KV cache (``predict.serve_model.KV_MEMORY_RULES``), and how it admits a request.

    ``reserve_output`` False is vLLM's policy: a request takes the blocks its prompt needs, grows
    one block at a time, and the newest is preempted when the cache runs out. True is
    TensorRT-LLM's default capacity-scheduler policy, GUARANTEED_NO_EVICT: a request is admitted
    only when blocks for its prompt and its whole ``max_tokens`` output are free, so nothing is
    ever preempted and the cache holds fewer sequences (TensorRT-LLM performance-tuning guide,
    "Useful Runtime Options": "GUARANTEED_NO_EVICT (default)";
    https://nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/useful-runtime-flags.html).

    ``mixed_prefill`` True (vLLM, TensorRT-LLM's in-flight batching) runs prompt chunks in the
    same step as the decodes; False is SGLang's default (``enable_mixed_chunk`` off): a step that
    has prompt work to do is a prefill step, and the running sequences decode in the next one.
    Such an engine also keeps room for the running requests to grow before it admits a prompt
    (SGLang's PrefillAdder subtracts their reserved future tokens, remaining max_new_tokens
    clipped and scaled by new_token_ratio, from the free tokens: python/sglang/srt/managers/
    schedule_policy.py): with ``new_token_ratio`` the simulator keeps that reserve, without it
    the least of it, a block per running sequence.

    ``overlap`` True is an overlap scheduler: the engine schedules and launches step n+1 while
    step n runs, so a request that arrives during step n can first run in step n+2, a step later
    than without it (TensorRT-LLM's PyTorch backend, 'Overlap Scheduler': "At step n, the system
    launches GPU computation for step n+1 without waiting for CPU tasks ... from step n to
    complete", "Enabled by default",
    https://nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html; SGLang's zero-overhead
    batch scheduler, on unless ``disable_overlap_schedule``; vLLM's ``async_scheduling``, off by
    default until vllm-project/vllm pull request 27614). The tokens and the finish of step n are
    still seen at its end; the one extra decode step a finished request rides is not charged.

    ``steps_per_round`` N > 1 is vLLM V0's multi-step scheduling (``--num-scheduler-steps N``,
    vLLM v0.6.0): the scheduler runs once per round, and a decode round runs N steps of the batch
    scheduled at its start. Nothing joins or leaves mid-round: a new request waits for the round to
    end; a sequence that reaches its length mid-round stays in the batch (its steps are still
    priced) and is freed at the round's end; the round's tokens reach the client together at its
    end, so the streamed gap is the round. A prompt (no chunked prefill) runs in a step of its own
    between rounds and returns its first token at that step's end. The engine's step overhead is
    kept as is: no sourced figure gives what multi-step saves per step (vllm/engine/llm_engine.py
    ``step``: "Skip the scheduler if there are any remaining steps in the seq groups"; vLLM blog,
    2024-09-05, 'vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction').

    ``new_token_ratio`` r > 0 is SGLang's admission and retraction (sgl-project/sglang
    v0.5.5.post1, python/sglang/srt/managers/schedule_policy.py, PrefillAdder.add_one_req;
    scheduler.py, get_new_batch_prefill and update_running_batch; schedule_batch.py,
    retract_decode): a prompt is admitted only while its prompt and its whole output (its
    max_new_tokens, here its length, capped at ``CLIP_NEW_TOKENS``) stay below the free tokens
    less r times every running request's remaining output and less what this batch admitted; a
    refusal marks the batch full, and no prompt is tried again until a request finishes or is
    retracted. r falls each decode step (``RATIO_DECAY``, ``RATIO_MIN``). When a decode finds no
    room, the requests with the fewest generated tokens (then the longest prompts) are retracted,
    queued last, and r is reset from the requests left. 0: no such reserve (vLLM, TensorRT-LLM).

    ``request_intake_s`` c > 0 is a server that prepares requests one at a time before the engine
    sees them: each takes c seconds on one thread, first come first served, so a burst of N
    reaches the engine over N c seconds (:func:`serial_intake`). The time counts in the TTFT,
    which the client clocks from its send; a deployment of several replicas is simulated with one
    such server per replica. 0: the engine sees a request when it is sent."""

    max_num_seqs: int = 1024
    max_num_batched_tokens: int = _serve.CHUNK_TOKENS
    chunked_prefill: bool = True
    kv_memory_rule: tuple[str, float] = ("free", _serve.KV_CACHE_FREE_FRACTION)
    reserve_output: bool = False
    mixed_prefill: bool = True
    overlap: bool = False
    steps_per_round: int = 1
    new_token_ratio: float = 0.0
    request_intake_s: float = 0.0

    def __post_init__(self) -> None:  # the library's one integer check (a whole float is kept)
        object.__setattr__(
            self, "steps_per_round", _serve._int("steps_per_round", self.steps_per_round)
        )
        if not 0.0 <= self.request_intake_s < 1.0:
            raise ValueError(
                f"request_intake_s must be in [0, 1) seconds, got {self.request_intake_s!r}"
            )
        if not 0.0 <= self.new_token_ratio <= 1.0:
            raise ValueError(f"new_token_ratio must be in [0, 1], got {self.new_token_ratio!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Simulation:
    """Per-request latencies (s) and the run's throughput; percentiles by :meth:`percentile`."""

    ttft_s: np.ndarray
    tpot_s: np.ndarray  # (finish - first token) / (output - 1), requests with > 1 output token
    e2e_s: np.ndarray
    output_tokens_per_s: float  # whole deployment: generated tokens / (last finish - first arrival)
    input_tokens_per_s: float
    n_requests: int
    n_steps: int
    n_preemptions: int
    mean_batch: float  # decode sequences per step of one replica, averaged over steps
    duration_s: float
    peak_output_tokens_per_s: float = 0.0  # most tokens emitted in one whole second from the start

    def percentile(self, metric: str, q: float) -> float:
        """The ``q``-th percentile (0-100) of ``ttft_s``, ``tpot_s`` or ``e2e_s``."""
        if metric not in ("ttft_s", "tpot_s", "e2e_s"):
            raise ValueError(f"metric must be ttft_s, tpot_s or e2e_s, got {metric!r}")
        return float(np.percentile(getattr(self, metric), q))

    def summary(self) -> dict[str, float]:
        """p50, p90 and p99 of each latency, and the throughputs."""
        out = {
            f"{m}_p{q}": self.percentile(m, q)
            for m in ("ttft_s", "tpot_s", "e2e_s")
            for q in (50, 90, 99)
        }
        out["output_tokens_per_s"] = self.output_tokens_per_s
        return out


def peak_tokens_per_s(emitted: list[np.ndarray], *, start_s: float) -> float:
    """The benchmark's peak output rate: the most tokens received in one whole second counted
    from the first send, as vLLM's ``bench serve`` buckets them. ``emitted``: per replica, rows
    of (step end time in s, tokens the step emitted).

    >>> peak_tokens_per_s([np.array([[0.2, 3.0], [0.9, 4.0], [1.5, 5.0]])], start_s=0.0)
    7.0
    """
    ev = np.concatenate(emitted)
    secs = np.floor(ev[:, 0] - start_s).astype(np.int64)
    ok = secs >= 0
    return float(np.bincount(secs[ok], weights=ev[ok, 1]).max()) if ok.any() else 0.0


def kv_cache_blocks(cost: StepCost, sched: Scheduler) -> int:
    """KV-cache blocks a chip of ``cost``'s layout holds under ``sched``'s memory rule: what the
    rule leaves after the weights and the engine's activation reserve for a step of
    ``max_num_batched_tokens`` (``serve_model.engine_reserved_bytes``), over a block's bytes."""
    mem = _serve.memory_per_chip_bytes(cost, n_sequences=0, seq_tokens=1)
    held = _serve.engine_reserved_bytes(
        cost.model,
        tp=cost.layout.tp,
        chips=cost.layout.stage_chips,
        n_tokens=sched.max_num_batched_tokens,
        n_sequences=sched.max_num_seqs,
    )
    free = _serve.kv_budget_bytes(
        cost.acc.hbm_bytes, mem["weights"], rule=sched.kv_memory_rule, reserved_bytes=held
    )
    per_token = _serve.memory_per_chip_bytes(cost, n_sequences=1, seq_tokens=1)["kv_cache"]
    return int(free / per_token) // BLOCK_TOKENS


def serial_intake(sent: np.ndarray, per_request_s: float, *, busy_s: float = 0.0) -> np.ndarray:
    """When a one-thread server, free from ``busy_s``, hands each request to the engine: first
    come first served, ``per_request_s`` each (``Scheduler.request_intake_s``); a request never
    sent (inf) is never handed over. 0 s: the send times themselves.

    >>> serial_intake(np.array([0.0, 0.0, 0.0, 1.0]), 0.25).tolist()
    [0.25, 0.5, 0.75, 1.25]
    """
    if not per_request_s:
        return sent.astype(float).copy()
    out = np.full(len(sent), np.inf)
    done = busy_s
    for i in np.argsort(sent, kind="stable"):
        if np.isfinite(sent[i]):
            done = out[i] = max(float(sent[i]), done) + per_request_s
    return out


def prefill_pool_ready(
    cost: StepCost, *, tp: int, pp: int, chips: int, arrivals: np.ndarray, inputs: np.ndarray
) -> np.ndarray:
    """When each prompt's cache reaches the decode pool of a disaggregated deployment: a prefill
    pool of ``chips`` in replicas of tp*pp chips, each a FIFO server of whole prompts, then the
    cache's bytes over the scale-out link (``chips`` 0: no pool, the arrivals)."""
    if not chips:
        return arrivals.astype(float).copy()
    mdl = cost.model
    pre_lay = _serve.make_layout(mdl, tp=tp, pp=pp)
    pcost = dataclasses.replace(
        cost, layout=pre_lay, tokens_per_decode=1, draft_s_per_seq=(0.0, 0.0)
    )
    free_at = np.zeros(chips // pre_lay.chips)
    link = cost.acc.scale_out_bytes_per_s_per_direction * cost.constants.link_efficiency
    ready = arrivals.astype(float).copy()
    for j in np.argsort(arrivals, kind="stable"):
        s = int(np.argmin(free_at))
        i_len = int(inputs[j])
        f = _serve.prefill_attention_flop(mdl, n_tokens=i_len, prompt_tokens=i_len)
        free_at[s] = max(free_at[s], arrivals[j]) + pcost.step_s(0, 0, i_len, f)
        ready[j] = free_at[s] + i_len * cost.kv_bytes_per_token / link
    return ready
