"""Published training runs (``data/training_runs.toml``): one schema, one loader, conversions.

Every run records how its source counts FLOP (``flop_count``) and is converted from it: the
published figure gives tokens/s under the source's own count, and tokens/s gives MFU under
either attention convention (``attention_flops``: "causal", 6N + 6 L H Q T per token, the
FLOP a causal kernel executes; "full", PaLM's 6N + 12 L H Q T).

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools

from .. import accounting, mfu, parallelism, specs, units
from ..specs import Model
from . import chips
from .policies import SELECTIVE_POLICIES
from .ring import CP_ROTATIONS

FLOP_COUNTS = ("palm", "palm_causal", "megatron_eq3", "megatron_mfu")
MEASURED_UNITS = (
    "tflop_per_s_per_chip",
    "mfu",
    "tokens_per_s",
    "tokens_per_s_per_chip",
    "step_time_s",
)
ATTENTION_FLOPS = ("causal", "full")
FP8_RECIPES = ("", "delayed", "tensorwise", "blockwise", "mxfp8")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingRun:
    """A published training run: model, chips, full layout and the figure as published."""

    key: str
    model: str
    accelerator: str
    n_chips: int
    tp: int
    pp: int
    cp: int
    ep: int
    dp: int
    interleave: int
    schedule: str
    micro_batch_size: int
    zero_stage: int
    fsdp_weight_gathers: int
    grad_bytes: float
    flash_attention: bool
    recompute: str
    seq_len: int
    global_batch_tokens: float
    dtype: str
    measured_value: float
    measured_unit: str
    flop_count: str
    source_group: str
    source: str
    table: str
    notes: str
    sequence_parallel: bool = True
    fp8_recipe: str = ""
    selective_policy: str = "attention"
    moe_dispatcher: str = "alltoall"
    fused_elementwise: bool = True
    pipeline_split: str = "even"
    cp_rotate: str = "p2p"
    kv_repeat: bool = False
    attention_kernel: str = "flash2"
    forced_balance_value: float | None = None  # the same layout with uniformly random routing
    zero3_collectives: str = "per_layer"
    zero3_collectives_quote: str = ""
    state_layout: str = "megatron"  # memory.STATE_LAYOUTS
    state_replicas: int = 1  # data-parallel replicas holding the same state shard
    memory_quote: str = ""  # the source of selective_policy, state_layout, state_replicas
    quote: str = ""
    published_mfu: float | None = None
    published_hfu: float | None = None


@functools.cache
def training_runs() -> dict[str, TrainingRun]:
    """Every run in ``data/training_runs.toml``, keyed by run key (checked field by field)."""
    runs = {}
    for key, entry in specs.registry_table("training_runs.toml").items():
        run = specs.build_spec(TrainingRun, entry, f"training_runs.toml[{key}]", key=key)
        for field, allowed in (
            ("flop_count", FLOP_COUNTS),
            ("measured_unit", MEASURED_UNITS),
            ("schedule", parallelism.SCHEDULES),
            ("recompute", parallelism.RECOMPUTE),
            ("fp8_recipe", FP8_RECIPES),
            ("selective_policy", SELECTIVE_POLICIES),
            ("state_layout", ("megatron", "fp32_params")),
            ("moe_dispatcher", ("alltoall", "deepep")),
            ("pipeline_split", ("even", "account_embedding_loss")),
            ("cp_rotate", CP_ROTATIONS),
            ("attention_kernel", ("flash2", "cudnn")),
            ("zero3_collectives", ("per_layer", "per_tensor")),
        ):
            if getattr(run, field) not in allowed:
                raise ValueError(
                    f"training_runs.toml[{key}].{field}: "
                    f"{getattr(run, field)!r} is not one of {allowed}"
                )
        runs[key] = run
    return runs


def model_flop_per_token(model: Model, *, seq_len: int, attention_flops: str = "full") -> float:
    """Training FLOP per token: 6 N + 12 L H Q T ("full", PaLM) or 6 N + 6 L H Q T ("causal").

    >>> round(model_flop_per_token(specs.model_spec("palm_540b"), seq_len=2048) / 1e12, 3)
    3.278
    """
    if attention_flops not in ATTENTION_FLOPS:
        raise ValueError(
            f"attention_flops={attention_flops!r} is not known; "
            f"allowed: {', '.join(ATTENTION_FLOPS)}"
        )
    full = mfu.palm_flop_per_token(
        accounting.n_active_params(model),
        n_layers=model.n_layers,
        n_heads=model.n_heads,
        d_head=model.d_head,
        seq_len=seq_len,
    )
    if attention_flops == "full":
        return full
    return full - 6.0 * model.n_layers * model.n_heads * model.d_head * seq_len


def source_flop_per_token(run: TrainingRun) -> float:
    """FLOP per token under the run's own published count (``run.flop_count``).

    megatron_eq3: 96 l h^2 (1 + s/(6h) + V/(16 l h)) (Narayanan et al. 2021, eq. 3, with the
    recomputation forward pass); megatron_mfu: 72 l h^2 (1 + s/(6h) + V/(12 l h))
    (Korthikanti et al. 2022, sec. 6.3); palm: 6N + 12 L H Q T; palm_causal: 6N + 6 L H Q T.

    >>> round(source_flop_per_token(training_runs()["megatron_1t"]) / 1e12, 2)
    8.17
    """
    m = specs.model_spec(run.model)
    n_l, h, s, v = m.n_layers, m.d_model, run.seq_len, m.vocab_size  # Megatron's padded V
    if run.flop_count == "megatron_eq3":
        return 96.0 * n_l * h**2 * (1 + s / (6 * h) + v / (16 * n_l * h))
    if run.flop_count == "megatron_mfu":
        return 72.0 * n_l * h**2 * (1 + s / (6 * h) + v / (12 * n_l * h))
    conv = "causal" if run.flop_count == "palm_causal" else "full"
    return model_flop_per_token(m, seq_len=s, attention_flops=conv)


def measured_tokens_per_s(run: TrainingRun) -> float:
    """Tokens per second implied by the published figure under the source's own FLOP count."""
    if run.measured_unit == "tokens_per_s":
        return run.measured_value
    if run.measured_unit == "tokens_per_s_per_chip":
        return run.measured_value * run.n_chips
    if run.measured_unit == "step_time_s":
        return run.global_batch_tokens / run.measured_value
    peak = chips.accelerator_spec(run.accelerator).peak_flop_per_s(run.dtype)
    per_chip = (
        run.measured_value * units.TERA
        if run.measured_unit == "tflop_per_s_per_chip"
        else run.measured_value * peak
    )
    return per_chip * run.n_chips / source_flop_per_token(run)


def measured_step_s(run: TrainingRun) -> float:
    """The published step time in seconds: the global batch over the measured token rate.

    Narayanan et al.'s ZeRO-3 run on 1,536 A100s (44 TFLOP/s per GPU under eq. 3):

    >>> round(measured_step_s(training_runs()["zero3_175b_1536"]), 1)
    66.7
    """
    return run.global_batch_tokens / measured_tokens_per_s(run)


def measured_mfu(run: TrainingRun, *, attention_flops: str = "causal") -> float:
    """The published figure as MFU under ``attention_flops`` over chips x dense peak at dtype.

    Megatron's 1T benchmark: 163 TFLOP/s per A100 under eq. 3 (recomputation counted) is
    0.39 of the 312 TFLOP/s peak as PaLM's (full-attention) model FLOP:

    >>> round(measured_mfu(training_runs()["megatron_1t"], attention_flops="full"), 3)
    0.392
    """
    peak = chips.accelerator_spec(run.accelerator).peak_flop_per_s(run.dtype)
    f = model_flop_per_token(
        specs.model_spec(run.model), seq_len=run.seq_len, attention_flops=attention_flops
    )
    # one second of the run: R F model FLOP in n chip-seconds
    return mfu.utilisation(
        measured_tokens_per_s(run) * f, chip_s=float(run.n_chips), peak_flop_per_s=peak
    )
