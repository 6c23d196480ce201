"""Diagnostics of the expert-parallel runs' misses: quantities read off a run and the model,
to say where a miss lives, never charged by ``train_step``.

* ``layer_pass_times_s``: the step divided into layer passes (one layer's forward or
  backward for one micro-batch on one GPU), predicted and measured. A cost paid once per pass
  shows where passes are short.
* ``routing_gap_s_per_token``: a source that measures the same layout with routing forced to
  balance and dropless gives the time the trained router's imbalance costs per token.
* ``expert_gemm_s_per_token``: the expert GEMMs' time per token at the large-GEMM rate, the
  scale to hold that gap against.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

from .. import accounting, units
from .efficiency import Efficiencies
from .runs import TrainingRun, measured_mfu, model_flop_per_token, training_runs
from .train import _accelerator, _model, predict_run


def _run(run: TrainingRun | str) -> TrainingRun:
    return training_runs()[run] if isinstance(run, str) else run


def layer_pass_times_s(
    run: TrainingRun | str, *, efficiencies: Efficiencies
) -> tuple[float, float, float]:
    """(predicted, measured) seconds per layer pass and the number of passes, 2 m L / p.

    A GPU of a p-stage pipeline runs L / p layers forward and backward for each of its m
    micro-batches; the step's time over those passes is the mean time of one. The zoo's
    intra-node row 4 (32 stages, 512 micro-batches a replica):

    >>> from llmphys.predict import validation
    >>> pred, meas, n = layer_pass_times_s("mcore_qwen3_235b_row4",
    ...     efficiencies=validation.fitted_efficiencies("megatron_moe_zoo"))
    >>> int(n), round(1e3 * pred, 1), round(1e3 * meas, 1)
    (3008, 5.8, 8.0)
    """
    r = _run(run)
    step = predict_run(r, efficiencies=efficiencies)
    passes = 2.0 * step.n_microbatches * _model(r.model).n_layers / r.pp
    measured_s = step.step_time_s * step.mfu / measured_mfu(r)
    return step.step_time_s / passes, measured_s / passes, passes


def routing_gap_s_per_token(run: TrainingRun | str) -> float:
    """Seconds per token on one GPU that dropless routing costs over forced balance, from a
    run published both ways: F (1/R_dropless - 1/R_forced), F the causal model FLOP per token,
    R each figure in TFLOP/s per GPU. The zoo's 16K row (237 dropless, 295 forced):

    >>> round(1e6 * routing_gap_s_per_token("mcore_qwen3_235b_16k"))
    173
    """
    r = _run(run)
    if r.forced_balance_value is None or r.measured_unit != "tflop_per_s_per_chip":
        raise ValueError(
            f"run {r.key!r} needs a forced_balance_value and a measured_unit of "
            f"'tflop_per_s_per_chip', got {r.forced_balance_value!r}, {r.measured_unit!r}"
        )
    f = model_flop_per_token(_model(r.model), seq_len=r.seq_len, attention_flops="causal")
    return f * (1.0 / r.measured_value - 1.0 / r.forced_balance_value) / units.TERA


def expert_gemm_s_per_token(run: TrainingRun | str, *, efficiencies: Efficiencies) -> float:
    """Seconds per token on one GPU of the routed experts' GEMMs at the large-GEMM rate:
    passes x 2 x L_moe x k x 3 d f_e / (P eta), passes = 3 (forward, backward) plus 1 when
    the run recomputes its MoE layers. Qwen3-235B's 94 MoE layers, top-8, 4,096 x 1,536
    experts, recomputed, on an H100 at the default large-GEMM fraction:

    >>> from llmphys.predict import default_efficiencies
    >>> round(1e6 * expert_gemm_s_per_token("mcore_qwen3_235b_16k",
    ...                                     efficiencies=default_efficiencies()))
    188
    """
    r = _run(run)
    mdl = _model(r.model)
    if mdl.moe is None:
        raise ValueError(f"run {r.key!r}: model {mdl.key!r} has no experts")
    moe = mdl.moe
    again = r.recompute == "full" or (r.recompute == "selective" and r.selective_policy == "moe")
    passes = 3.0 + (1.0 if again else 0.0)
    flop = 2.0 * accounting.n_moe_layers(mdl) * moe.n_experts_per_token * 3 * mdl.d_model
    flop *= moe.d_ff_expert
    acc = _accelerator(r.accelerator)
    rate = acc.peak_flop_per_s("bf16") * efficiencies.gemm_fraction(acc.key, "bf16")
    return passes * flop / rate


def expert_wgrad_factor(
    run: TrainingRun | str, *, efficiencies: Efficiencies | None = None
) -> tuple[float, float]:
    """(rows per local expert in a micro-batch, a padded last tile run full, and the
    weight-gradient GEMM's rate over the forward's) for a run's expert up-projection, as the GEMM
    term charges it (``terms.expert_gemm_rows``)
    (``terms.wgrad_roofline_factor``): the weight gradient adds each n x k product into FP32 main
    gradients, so an expert with few rows is memory-bound in its backward. The zoo's row 5:

    >>> m_e, f = expert_wgrad_factor("mcore_qwen3_235b_row5")
    >>> int(m_e), round(f, 2)
    (512, 0.56)
    """
    from . import terms, validation

    c = validation.run_context(run, efficiencies=efficiencies)
    moe = c.mdl.moe
    if moe is None:
        raise ValueError(f"run={getattr(run, 'key', run)!r} is not a MoE run (no routed experts)")
    m_e = terms.expert_gemm_rows(c, terms.expert_gemm_factors(c)[1])
    g = 2.0 if c.mdl.mlp in accounting.GATED_MLPS else 1.0
    dt = "fp8" if c.dtype == "fp8" else "bf16"
    return m_e, terms.wgrad_roofline_factor(c, m_e, g * moe.d_ff_expert, c.mdl.d_model, dt)
