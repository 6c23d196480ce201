"""The rows of ``data/serving_runs.toml``: one schema, checked field by field (split from
``predict.serving_data``, which predicts them and fits the serving constants on them).

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

from .. import specs, units

# the module itself: the package's name serve is the function
_serve = importlib.import_module(".serve_model", __package__)

LATENCY_FIELDS = ("ttft_p50", "ttft_mean", "tpot_p50", "tpot_p99", "tpot_mean")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServingRun:
    """A published serving measurement: source, engine, model, layout, workload, figures."""

    key: str
    source_key: str
    engine: str
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
    arrival: str  # burst | concurrency | decode_only | rate
    concurrency: int  # 0: unlimited (burst) or open loop (rate)
    length_distribution: str  # fixed | sharegpt
    input_tokens: int
    output_tokens: int
    measured_output_tokens_per_s: float | None = None  # None: unpublished (a Poisson-rate row)
    quote: str
    source: str
    table: str
    unstated: str
    n_requests: int | None = None
    request_rate_per_s: float | None = None  # Poisson arrivals (arrival = "rate"), whole deployment
    two_batch_overlap: bool = False
    measured_ttft_p50_s: float | None = None
    measured_ttft_mean_s: float | None = None
    measured_tpot_p50_s: float | None = None
    measured_tpot_p99_s: float | None = None
    measured_tpot_mean_s: float | None = None
    measured_duration_s: float | None = None  # the benchmark's duration, first send to last token
    measured_peak_output_tokens_per_s: float | None = None  # most chunks received in one second
    measured_peak_concurrency: int | None = None  # most requests open (queued or running) at once
    measured_e2e_p50_s: float | None = None  # median end-to-end latency (a diagnostic)
    measured_itl_p50_s: float | None = None  # median gap between streamed chunks (a diagnostic)
    fit_row: bool = False  # one of the calibration rows the fitted constants are fitted on
    fit_constant: str = ""  # the fitted constant a calibration row pins down (FITTED_CONSTANTS)
    worked_example: bool = False  # the decode pool chapter 6 works through
    scheduler_policy: str = "evict"  # evict (vLLM, SGLang) | guaranteed_no_evict (TensorRT-LLM)
    warmup_requests: int = 0  # sent first and not measured (the closed loop's first wave)
    chunked_prefill: bool = True  # prompts split over steps at the token budget
    mixed_prefill: bool = True  # prompt chunks share a step with the decodes (SGLang: False)
    overlap_scheduler: bool = False  # step n+1 scheduled while step n runs (SGLang, TRT-LLM torch)
    scheduler_steps: int = 1  # decode steps per scheduling round (vLLM V0 --num-scheduler-steps)
    api: str = ""  # the endpoint the harness called: chat | completions | "" (not stated)

    @property
    def is_moe(self) -> bool:
        """Whether the row's model is a mixture of experts."""
        return _serve.resolve_model(self.model).moe is not None

    @property
    def request_intake_s(self) -> float:
        """The server's serial work per request before the engine sees it
        (``Scheduler.request_intake_s``): ``VLLM_0110_CHAT_INTAKE_S`` on vLLM v0.11.0's chat
        endpoint, 0 elsewhere (no source sizes another engine's)."""
        v0110 = self.engine.startswith("vLLM v0.11.0")
        return VLLM_0110_CHAT_INTAKE_S if v0110 and self.api == "chat" else 0.0

    @property
    def engine_family(self) -> str:
        """trtllm, vllm, sglang or other: which engine's default limits apply."""
        e = self.engine.lower()
        for fam, prefix in (("trtllm", "tensorrt-llm"), ("vllm", "vllm"), ("sglang", "sglang")):
            if e.startswith(prefix):
                return fam
        return "other"

    def measured_latency(self) -> dict[str, float]:
        """The published latency figures, by name (seconds)."""
        out = {f: getattr(self, f"measured_{f}_s") for f in LATENCY_FIELDS}
        return {f: v for f, v in out.items() if v is not None}


_ARRIVALS = ("burst", "concurrency", "decode_only", "rate")
_APIS = ("", "chat", "completions")

VLLM_0110_CHAT_INTAKE_S = 7e-3
"""Seconds of serial work vLLM v0.11.0's API server does on each chat request before the engine
sees it. In v0.11.0 (the PyPI wheel, commit f71952c1c) every chat request runs
``resolve_chat_template_kwargs`` (vllm/entrypoints/chat_utils.py, added by vllm-project/vllm pull
request 25794), which builds a sandboxed Jinja environment, parses the whole chat template and
walks it for undeclared variables, uncached, on the server's one event-loop thread; v0.11.1
caches it (``_cached_resolve_chat_template_kwargs``). vLLM measured the same uncached per-request
parse before (pull request 20065, June 2025, on ``_detect_content_format``): "when we send 1000
requests to OpenAI server, it internally calls this function 1000 times which results in 6-8
seconds delay before prompts actually are started to process": 6-8 ms a request, taken here at
its midpoint. Not fitted; no other engine or version is charged it."""

FITTED_CONSTANTS = ("gemm_efficiency", "expert_gemm_efficiency", "step_overhead_s")
"""The three fitted fields of ``predict.serve.ServeConstants``, each named by the calibration rows
that pin it down (``fit_constant``)."""


def check_row(run: ServingRun, where: str) -> None:
    """``ValueError`` naming the field of a row that is not one of its allowed values."""
    for field in ("weight_dtype", "kv_dtype", "math_dtype"):
        units.bytes_per_element(getattr(run, field))  # a known dtype, or ValueError
    if run.arrival not in _ARRIVALS:
        raise ValueError(f"{where}.arrival: {run.arrival!r} is not one of {_ARRIVALS}")
    if (run.arrival == "rate") != (run.request_rate_per_s is not None):
        raise ValueError(f"{where}.request_rate_per_s: set exactly when arrival is 'rate'")
    if run.request_rate_per_s is not None:
        units.check_positive(f"{where}.request_rate_per_s", run.request_rate_per_s)
    if run.measured_output_tokens_per_s is None and run.arrival != "rate":
        raise ValueError(f"{where}.measured_output_tokens_per_s: required unless arrival is 'rate'")
    if run.length_distribution not in ("fixed", "sharegpt"):
        raise ValueError(f"{where}.length_distribution: {run.length_distribution!r}")
    _serve._int(f"{where}.scheduler_steps", run.scheduler_steps)
    if run.api not in _APIS:
        raise ValueError(f"{where}.api: {run.api!r} is not one of {_APIS}")
    if run.scheduler_policy not in ("evict", "guaranteed_no_evict"):
        raise ValueError(f"{where}.scheduler_policy: {run.scheduler_policy!r}")
    if run.fit_row != (run.fit_constant in FITTED_CONSTANTS):
        raise ValueError(
            f"{where}.fit_constant: {run.fit_constant!r}; a calibration row (fit_row = true) "
            f"names one of {FITTED_CONSTANTS}, and only a calibration row names one"
        )


@functools.cache
def serving_runs() -> dict[str, ServingRun]:
    """Every measurement in ``data/serving_runs.toml``, keyed by row (checked field by field)."""
    runs = {}
    for key, entry in specs.registry_table("serving_runs.toml").items():
        where = f"serving_runs.toml[{key}]"
        runs[key] = specs.build_spec(ServingRun, entry, where, key=key)
        check_row(runs[key], where)
    if sum(r.worked_example for r in runs.values()) != 1:
        raise ValueError("serving_runs.toml: exactly one row must set worked_example = true")
    return runs


def calibration_runs() -> tuple[str, ...]:
    """The rows the fitted constants are fitted on: those ``data/serving_runs.toml`` marks
    ``fit_row = true``, each naming the constant it pins down (its header says why each)."""
    return tuple(k for k, r in serving_runs().items() if r.fit_row)
