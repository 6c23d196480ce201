"""The book's prediction models: a training step and a deployment, from the book's own pieces.

A package with one file per part of the model (issues 26-29 agree on this layout):

    train.py       ``train_step``: the step time of a training layout as a sum of named terms
    memory.py      what one chip holds for a layout, as the frameworks lay it out
    efficiency.py  achieved fractions of a chip's peaks (GEMM by shape, bandwidth, links)
    runs.py        ``data/training_runs.toml``, one loader and one schema
    serve.py       ``serve``: a deployment's step, throughput and latency terms
    simulate.py    ``simulate_serving``: discrete-event continuous batching
    plan.py        the inverse questions: layout search, chips for a target, cost

Callers use the package's names (``predict.train_step``, ``predict.training_runs``); the
files behind them may move.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .efficiency import (
    Efficiencies,
    default_efficiencies,
    fit_efficiencies,
    gemm_efficiency,
    gemm_efficiency_curve,
    golden_section_min,
)
from .memory import (
    memory_parts,
)
from .runs import (
    ATTENTION_FLOPS,
    FLOP_COUNTS,
    FP8_RECIPES,
    MEASURED_UNITS,
    TrainingRun,
    measured_mfu,
    measured_tokens_per_s,
    model_flop_per_token,
    source_flop_per_token,
    training_runs,
)
from .train import (
    ADAM_BYTES_PER_PARAM,
    ATTENTION_EFFICIENCY,
    BACKWARD_SHARE,
    CALIBRATION_RUNS,
    COLLECTIVE_EFFICIENCY,
    CROSS_ENTROPY_BYTES_PER_LOGIT,
    FP8_CAST_BYTES,
    GEMM_EFFICIENCY,
    HIERARCHICAL_DP_VENDORS,
    LINK_LATENCY_S,
    SCALE_UP_LATENCY_S,
    SOFTMAX_BYTES_PER_SCORE,
    LayoutDoesNotFit,
    TrainStep,
    calibrate_gemm_efficiency,
    error_bars,
    fitted_efficiencies,
    format_budget,
    held_out_errors,
    held_out_summary,
    hiding_thresholds,
    loso_residuals,
    memory_bound_bytes_per_token,
    predict_run,
    residuals,
    source_groups,
    train_step,
)
from .train import (
    _accelerator as _accelerator,
)
from .train import (
    _model as _model,
)

__all__ = [
    "ADAM_BYTES_PER_PARAM",
    "ATTENTION_EFFICIENCY",
    "ATTENTION_FLOPS",
    "BACKWARD_SHARE",
    "CALIBRATION_RUNS",
    "COLLECTIVE_EFFICIENCY",
    "CROSS_ENTROPY_BYTES_PER_LOGIT",
    "FLOP_COUNTS",
    "FP8_CAST_BYTES",
    "FP8_RECIPES",
    "GEMM_EFFICIENCY",
    "HIERARCHICAL_DP_VENDORS",
    "LINK_LATENCY_S",
    "MEASURED_UNITS",
    "SCALE_UP_LATENCY_S",
    "SOFTMAX_BYTES_PER_SCORE",
    "Efficiencies",
    "LayoutDoesNotFit",
    "TrainStep",
    "TrainingRun",
    "calibrate_gemm_efficiency",
    "default_efficiencies",
    "error_bars",
    "fit_efficiencies",
    "fitted_efficiencies",
    "format_budget",
    "gemm_efficiency",
    "gemm_efficiency_curve",
    "golden_section_min",
    "held_out_errors",
    "held_out_summary",
    "hiding_thresholds",
    "loso_residuals",
    "measured_mfu",
    "measured_tokens_per_s",
    "memory_bound_bytes_per_token",
    "memory_parts",
    "model_flop_per_token",
    "predict_run",
    "residuals",
    "source_flop_per_token",
    "source_groups",
    "train_step",
    "training_runs",
]
