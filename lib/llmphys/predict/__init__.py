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

from .train import (
    ADAM_BYTES_PER_PARAM,
    ATTENTION_EFFICIENCY,
    BACKWARD_SHARE,
    CALIBRATION_RUNS,
    COLLECTIVE_EFFICIENCY,
    ELEMENTWISE_BYTES_PER_H,
    FLOP_COUNTS,
    GEMM_EFFICIENCY,
    HIERARCHICAL_DP_VENDORS,
    LINK_LATENCY_S,
    MEASURED_UNITS,
    SCALE_UP_LATENCY_S,
    SOFTMAX_BYTES_PER_SCORE,
    LayoutDoesNotFit,
    TrainingRun,
    TrainStep,
    calibrate_gemm_efficiency,
    format_budget,
    golden_section_min,
    held_out_errors,
    held_out_summary,
    hiding_thresholds,
    measured_mfu,
    measured_tokens_per_s,
    model_flop_per_token,
    predict_run,
    residuals,
    source_flop_per_token,
    train_step,
    training_runs,
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
    "BACKWARD_SHARE",
    "CALIBRATION_RUNS",
    "COLLECTIVE_EFFICIENCY",
    "ELEMENTWISE_BYTES_PER_H",
    "FLOP_COUNTS",
    "GEMM_EFFICIENCY",
    "HIERARCHICAL_DP_VENDORS",
    "LINK_LATENCY_S",
    "MEASURED_UNITS",
    "SCALE_UP_LATENCY_S",
    "SOFTMAX_BYTES_PER_SCORE",
    "LayoutDoesNotFit",
    "TrainStep",
    "TrainingRun",
    "calibrate_gemm_efficiency",
    "format_budget",
    "golden_section_min",
    "held_out_errors",
    "held_out_summary",
    "hiding_thresholds",
    "measured_mfu",
    "measured_tokens_per_s",
    "model_flop_per_token",
    "predict_run",
    "residuals",
    "source_flop_per_token",
    "train_step",
    "training_runs",
]

# ---------------------------------------------------------------- issue 29: planner and cost
# (plan_serve.py is not re-exported yet: it imports deploy, which imports this package; once
# deploy is predict/serve.py, add `from .plan_serve import ServingPlan, plan_serving`.)
from .cost import chip_hour_price, price_line, serving_cost, training_cost
from .plan import (
    MAX_CP,
    MAX_INTERLEAVE,
    MAX_MICRO_BATCH,
    ZERO_STAGES,
    Layout,
    TrainingPlan,
    chip_counts,
    fewest_chips,
    legal_layouts,
    plan_training,
    published_rank,
    tp_degrees,
)

__all__ += [
    "MAX_CP",
    "MAX_INTERLEAVE",
    "MAX_MICRO_BATCH",
    "ZERO_STAGES",
    "Layout",
    "TrainingPlan",
    "chip_counts",
    "chip_hour_price",
    "fewest_chips",
    "legal_layouts",
    "plan_training",
    "price_line",
    "published_rank",
    "serving_cost",
    "tp_degrees",
    "training_cost",
]
# ---------------------------------------------------------------- end of issue 29's block
