"""The book's prediction models: a training step and a deployment, from the book's own pieces.

A package with one file per part of the model (issues 26-29 agree on this layout):

    train.py       ``train_step``: the step time of a training layout as a sum of named terms
    elementwise.py the memory-bound (non-GEMM) term, fused or eager
    terms.py       those terms, one function each (GEMMs by shape, memory-bound work, links)
    validation.py  leave-one-source-out errors of ``train_step`` on the published runs
    hiding.py      when each dimension's traffic hides behind compute (closed forms)
    chips.py       chips as published runs ran them (``data/run_accelerators.toml``)
    memory.py      what one chip holds for a layout, as the frameworks lay it out
    efficiency.py  achieved fractions of a chip's peaks (GEMM by shape, bandwidth, links)
    runs.py        ``data/training_runs.toml``, one loader and one schema
    serve_model.py ``serve``: a deployment's step, throughput and latency terms (not serve.py:
                   a submodule named like the package's function ``serve`` would replace it
                   whenever an importer sets the package attribute, as pytest's doctests do)
    serve_terms.py the serving constants, layout and registries; serve_step.py one step's terms
    simulate.py    ``simulate_serving``: discrete-event continuous batching
    simulate_types.py the simulator's lengths, scheduler options and result
    simulate_load.py ``load_sweep``: latency against the arrival rate, the SLA-bound rate
    serving_rows.py the rows of ``data/serving_runs.toml``, one schema
    serving_data.py predicting those rows, calibration, leave-one-source-out errors
    serving_studies.py the LOSO table as text, the misses' subsets, DeepSeek-V3's decode pool
    serving_hypothesis.py the per-layer step-overhead hypothesis tested on a new source
    plan.py        the inverse questions: layout search, chips for a target, cost
    plan_runs.py   fewest chips for a token rate; published runs among the planner's layouts

Callers use the package's names (``predict.train_step``, ``predict.training_runs``); the
files behind them may move.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .chips import accelerator_spec, run_accelerators
from .dp import ADAM_BYTES_PER_PARAM, HIERARCHICAL_DP_VENDORS, ZERO3_COLLECTIVES
from .efficiency import (
    Efficiencies,
    default_efficiencies,
    fit_efficiencies,
    gemm_efficiency,
    gemm_efficiency_curve,
    golden_section_min,
)
from .elementwise import (
    CROSS_ENTROPY_BYTES_PER_LOGIT,
    FP8_CAST_BYTES,
    SOFTMAX_BYTES_PER_SCORE,
    memory_bound_bytes_per_token,
)
from .hiding import hiding_thresholds
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
    measured_step_s,
    measured_tokens_per_s,
    model_flop_per_token,
    source_flop_per_token,
    training_runs,
)
from .terms import (
    ATTENTION_EFFICIENCY,
    BACKWARD_SHARE,
    COLLECTIVE_EFFICIENCY,
    GEMM_EFFICIENCY,
    LINK_LATENCY_S,
    SCALE_UP_LATENCY_S,
)
from .train import (
    LayoutDoesNotFit,
    TrainStep,
    format_budget,
    predict_run,
    train_step,
)
from .train import (
    _accelerator as _accelerator,
)
from .train import (
    _model as _model,
)
from .validation import (
    ISSUE_BARS,
    bar_verdicts,
    calibrate_gemm_efficiency,
    error_bars,
    fitted_efficiencies,
    held_out_errors,
    held_out_summary,
    loso_residuals,
    residuals,
    source_groups,
)

# isort: split
# --- serving (serve_model.py, simulate.py, serving_data.py; issue 28) -----------------------
from .serve_model import (
    CHUNK_TOKENS,
    ENGINE_LIMITS,
    EXPERT_GEMM_CEILING,
    HBM_EFFICIENCY,
    KV_CACHE_FREE_FRACTION,
    Serve,
    ServeConstants,
    StepCost,
    expected_tokens_per_step,
    expert_load_imbalance,
    largest_batch_within_tpot,
    priced_time_s,
    serve,
    small_collective_latency_s,
    step_cost,
    weight_read_bytes,
)
from .serve_model import (
    CONSTANTS as SERVE_CONSTANTS,
)
from .serve_model import (
    Layout as ServingLayout,
)
from .serve_model import (
    format_budget as format_serve_budget,
)
from .serving_data import (
    SERVING_BARS,
    ServingRun,
    loso_summary,
    predict_figures,
    predict_serve,
    serving_runs,
)
from .serving_data import (
    calibrate as calibrate_serving,
)
from .serving_data import (
    calibration_runs as serving_calibration_runs,
)
from .serving_data import (
    residuals as serving_residuals,
)
from .serving_hypothesis import (
    overhead_hypothesis_summary,
    overhead_hypothesis_test,
)
from .serving_studies import (
    burst_diagnostics,
    constant_by_source,
    deepseek_decode_study,
    format_loso_table,
    implied_step,
    intake_study,
    miss_summary,
    moe_by_chip,
    multistep_rows,
    multistep_summary,
    overhead_by_source,
)
from .simulate import (
    LengthDistribution,
    Scheduler,
    Simulation,
    simulate_serving,
)
from .simulate_load import load_sweep, sla_rate_per_s

# --- end of serving block ----------------------------------------------------------------------

__all__ = [  # noqa: RUF022 (the serving names are a block of their own, for merging)
    "ADAM_BYTES_PER_PARAM",
    "ATTENTION_EFFICIENCY",
    "ATTENTION_FLOPS",
    "BACKWARD_SHARE",
    "COLLECTIVE_EFFICIENCY",
    "CROSS_ENTROPY_BYTES_PER_LOGIT",
    "FLOP_COUNTS",
    "FP8_CAST_BYTES",
    "FP8_RECIPES",
    "GEMM_EFFICIENCY",
    "HIERARCHICAL_DP_VENDORS",
    "ZERO3_COLLECTIVES",
    "LINK_LATENCY_S",
    "MEASURED_UNITS",
    "SCALE_UP_LATENCY_S",
    "SOFTMAX_BYTES_PER_SCORE",
    "Efficiencies",
    "LayoutDoesNotFit",
    "TrainStep",
    "TrainingRun",
    "accelerator_spec",
    "calibrate_gemm_efficiency",
    "default_efficiencies",
    "error_bars",
    "bar_verdicts",
    "ISSUE_BARS",
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
    "measured_step_s",
    "memory_bound_bytes_per_token",
    "memory_parts",
    "model_flop_per_token",
    "predict_run",
    "residuals",
    "run_accelerators",
    "source_flop_per_token",
    "source_groups",
    "train_step",
    "training_runs",
    # --- serving (issue 28) ---
    "ENGINE_LIMITS",
    "EXPERT_GEMM_CEILING",
    "HBM_EFFICIENCY",
    "KV_CACHE_FREE_FRACTION",
    "SERVE_CONSTANTS",
    "SERVING_BARS",
    "LengthDistribution",
    "ServingLayout",
    "CHUNK_TOKENS",
    "Scheduler",
    "Serve",
    "ServeConstants",
    "ServingRun",
    "Simulation",
    "StepCost",
    "calibrate_serving",
    "serving_calibration_runs",
    "moe_by_chip",
    "burst_diagnostics",
    "intake_study",
    "deepseek_decode_study",
    "implied_step",
    "expected_tokens_per_step",
    "expert_load_imbalance",
    "format_loso_table",
    "format_serve_budget",
    "largest_batch_within_tpot",
    "load_sweep",
    "loso_summary",
    "miss_summary",
    "multistep_rows",
    "multistep_summary",
    "overhead_by_source",
    "constant_by_source",
    "overhead_hypothesis_summary",
    "overhead_hypothesis_test",
    "predict_figures",
    "predict_serve",
    "priced_time_s",
    "serve",
    "serving_residuals",
    "serving_runs",
    "simulate_serving",
    "sla_rate_per_s",
    "small_collective_latency_s",
    "step_cost",
    "weight_read_bytes",
    # --- end of serving block ---
]

# ---------------------------------------------------------------- issue 29: planner and cost
from .cost import chip_hour_price, price_line, serving_cost, training_cost
from .plan import (
    MAX_CP,
    MAX_INTERLEAVE,
    MAX_MICRO_BATCH,
    ZERO_STAGES,
    TrainingPlan,
    legal_layouts,
    plan_training,
    tp_degrees,
)
from .plan import (
    Layout as TrainingLayout,
)
from .plan_runs import chip_counts, fewest_chips, outside_grid_reason, published_rank
from .plan_serve import ServingPlan, plan_serving

__all__ += [
    "MAX_CP",
    "MAX_INTERLEAVE",
    "MAX_MICRO_BATCH",
    "ZERO_STAGES",
    "ServingPlan",
    "TrainingLayout",
    "TrainingPlan",
    "chip_counts",
    "chip_hour_price",
    "fewest_chips",
    "legal_layouts",
    "outside_grid_reason",
    "plan_serving",
    "plan_training",
    "price_line",
    "published_rank",
    "serving_cost",
    "tp_degrees",
    "training_cost",
]
# ---------------------------------------------------------------- end of issue 29's block
