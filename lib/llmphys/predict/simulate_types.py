"""What the serving simulator takes and returns: request lengths, the scheduler's options and a
run's per-request latencies (split from ``predict.simulate``, which runs the events).

Home: chapters/06_economics.ipynb, section "Latency under load".
"""

from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np

from .. import units

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

    ``overlap`` True is an overlap scheduler: the engine schedules and launches step n+1 while
    step n runs, so a request that arrives during step n can first run in step n+2, a step later
    than without it (TensorRT-LLM's PyTorch backend, 'Overlap Scheduler': "At step n, the system
    launches GPU computation for step n+1 without waiting for CPU tasks ... from step n to
    complete", "Enabled by default",
    https://nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html; SGLang's zero-overhead
    batch scheduler, on unless ``disable_overlap_schedule``; vLLM's ``async_scheduling``, off by
    default until vllm-project/vllm pull request 27614). The tokens and the finish of step n are
    still seen at its end; the one extra decode step a finished request rides is not charged."""

    max_num_seqs: int = 1024
    max_num_batched_tokens: int = _serve.CHUNK_TOKENS
    chunked_prefill: bool = True
    kv_memory_rule: tuple[str, float] = ("free", _serve.KV_CACHE_FREE_FRACTION)
    reserve_output: bool = False
    mixed_prefill: bool = True
    overlap: bool = False


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
