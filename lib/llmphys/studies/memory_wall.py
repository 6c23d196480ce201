"""Chapter 4's worked cases: Llama 3 405B's layout, the series' data-parallel case, run MFU.

Each function takes a case from ``data/scenarios.toml`` (``specs.scenario(key)``): a
:class:`~llmphys.specs.TrainingRunCase` names a ``training_runs.toml`` row, whose layout
(TP, PP, DP, sequence length, global batch) is read from the row, never retyped; a
:class:`~llmphys.specs.DataParallelCase` gives a dense model's size, batch and MFU; a
:class:`~llmphys.specs.ClusterCase` a model trained on a cluster for recorded GPU-hours; an
:class:`~llmphys.specs.InterruptionsCase` a run's counted job interruptions.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from .. import accounting, comms, economics, mfu, parallelism, predict, reliability, specs
from ..predict import TrainingRun
from ..specs import ClusterCase, DataParallelCase, InterruptionsCase, TrainingRunCase


class StepInputs(TypedDict):
    """A data-parallel step's inputs, the keywords ``comms.dp_comm_share`` takes."""

    n_params: float
    tokens_per_step: float
    peak_flop_per_s: float
    mfu: float


def layout(case: TrainingRunCase) -> TrainingRun:
    """The published run a training case names (its ``training_runs.toml`` row).

    >>> r = layout(specs.scenario("llama3_405b"))
    >>> r.n_chips, r.tp, r.pp, r.dp
    (16384, 8, 16, 128)
    """
    if not isinstance(case, TrainingRunCase):
        raise TypeError(f"case must be a training_run scenario, got {type(case).__name__}")
    return predict.training_runs()[case.run]


def gpu_mtbf_s(case: InterruptionsCase) -> float:
    """Per-GPU-slot MTBF in seconds implied by a run's unexpected interruptions, N T / k.

    N is the run's GPU count (its ``training_runs.toml`` row), T and k the case's period and
    unexpected interruptions (:func:`llmphys.reliability.gpu_mtbf_from_run_s`). Llama 3 405B's
    419 in 54 days on 16,384 GPUs (Dubey et al. 2024, sec. 3.3.4):

    >>> round(gpu_mtbf_s(specs.scenario("llama3_405b_interruptions")) / (365.25 * 86400), 2)
    5.78
    """
    if not isinstance(case, InterruptionsCase):
        raise TypeError(f"case must be an interruptions scenario, got {type(case).__name__}")
    n_gpus = predict.training_runs()[case.run].n_chips
    return reliability.gpu_mtbf_from_run_s(
        case.n_unexpected, n_gpus=n_gpus, duration_s=case.duration_s
    )


def step_inputs(case: TrainingRunCase | DataParallelCase) -> StepInputs:
    """The keyword arguments of ``comms.dp_compute_time_s`` and ``comms.dp_comm_share``.

    ``n_params`` (FLOP-counting parameters), ``tokens_per_step``, ``peak_flop_per_s`` (dense
    BF16) and ``mfu``, from the run's row and model for a training run, or from the case.

    >>> s = step_inputs(specs.scenario("series_dp"))
    >>> s["n_params"], s["tokens_per_step"], s["mfu"]
    (70000000000.0, 4000000.0, 0.45)
    """
    if isinstance(case, TrainingRunCase):
        run = layout(case)
        n_params = accounting.n_params(specs.model_spec(run.model))
        tokens, chip = run.global_batch_tokens, run.accelerator
    elif isinstance(case, DataParallelCase):
        n_params, tokens, chip = case.n_params, case.global_batch_tokens, case.accelerator
    else:
        raise TypeError(f"case must be a training_run or data_parallel scenario, got {case!r}")
    return StepInputs(
        n_params=n_params,
        tokens_per_step=tokens,
        peak_flop_per_s=specs.accelerator(chip).peak_bf16_flop_per_s,
        mfu=case.mfu,
    )


def step_compute_s(case: TrainingRunCase) -> float:
    """Seconds of compute in one step of a training run's layout: 6 N B / (n P u).

    >>> round(step_compute_s(specs.scenario("llama3_405b")), 1)
    6.3
    """
    run = layout(case)
    return float(comms.dp_compute_time_s(n_gpus=run.tp * run.pp * run.dp, **step_inputs(case)))


def tp_bytes_per_step(case: TrainingRunCase) -> float:
    """Tensor-parallel bytes one GPU sends in one step of a run's layout.

    Each of a data-parallel rank's B / (T DP) sequences crosses the L / PP layers of its stage,
    each layer moving :func:`~llmphys.parallelism.tp_bytes_per_layer` (two all-reduces forward,
    two backward).

    >>> round(tp_bytes_per_step(specs.scenario("llama3_405b")) / 1e9)
    237
    """
    run = layout(case)
    m = specs.model_spec(run.model)
    per_layer = parallelism.tp_bytes_per_layer(tokens=run.seq_len, d_model=m.d_model, tp=run.tp)
    return per_layer * (m.n_layers / run.pp) * (run.global_batch_tokens / run.seq_len / run.dp)


def tp_time_over_step(case: TrainingRunCase, *, link: str) -> float:
    """Tensor-parallel traffic time over step compute in a run's layout (dimensionless).

    :func:`tp_bytes_per_step` over the link's bandwidth, over :func:`step_compute_s`. ``link``
    is ``"scale_up"`` (NVLink) or ``"scale_out"`` (the network card). For Llama 3 405B's layout
    (its ``training_runs.toml`` row; Dubey et al. 2024, arXiv:2407.21783, sec. 3.3):

    >>> case = specs.scenario("llama3_405b")
    >>> (round(tp_time_over_step(case, link="scale_out"), 2),
    ...  round(tp_time_over_step(case, link="scale_up"), 3))
    (0.75, 0.084)
    """
    if link not in ("scale_up", "scale_out"):
        raise ValueError(f"link must be 'scale_up' or 'scale_out', got {link!r}")
    acc = specs.accelerator(layout(case).accelerator)
    traffic = tp_bytes_per_step(case)
    bw = {
        "scale_up": acc.scale_up_bytes_per_s_per_direction,
        "scale_out": acc.scale_out_bytes_per_s_per_direction,
    }[link]
    return float(traffic / bw / step_compute_s(case))


def first_stage_activation_bytes(case: TrainingRunCase, *, recompute: str) -> float:
    """Activation bytes per GPU on a run's first pipeline stage (1F1B), its own layer shape.

    The first stage holds p micro-batches of its L / p layers
    (:func:`~llmphys.parallelism.activation_bytes_per_layer` with the model's GQA, SwiGLU and
    no dropout; GPT-3's formula would give more than twice as much).

    >>> case = specs.scenario("llama3_405b")
    >>> (first_stage_activation_bytes(case, recompute="full")
    ...  < first_stage_activation_bytes(case, recompute="none"))
    True
    """
    run = layout(case)
    m = specs.model_spec(run.model)
    per_layer = parallelism.activation_bytes_per_layer(
        seq_len=run.seq_len,
        micro_batch=run.micro_batch_size,
        d_model=m.d_model,
        n_heads=m.n_heads,
        tp=run.tp,
        recompute=recompute,
        n_kv_heads=m.n_kv_heads,
        d_ff=m.d_ff,
        gated_mlp=True,
        dropout=False,
    )  # a Llama layer: GQA, SwiGLU, no dropout
    return per_layer * (m.n_layers / run.pp) * run.pp


def cluster_flop_per_token(case: ClusterCase) -> float:
    """Training FLOP per token: 3 x forward FLOP at the mean position of a training sequence
    (backward = 2 x forward; DeepSeek-AI 2024, arXiv:2412.19437, for DeepSeek-V3).

    >>> round(cluster_flop_per_token(specs.scenario("deepseek_v3_cluster")) / 1e9)
    250
    """
    m = specs.model_spec(case.model)
    return 3 * accounting.forward_flop_per_token(m, context_tokens=(case.seq_len + 1) / 2)


def cluster_train_flop(case: ClusterCase) -> float:
    """A cluster case's training FLOP counted from its architecture over its recorded tokens.

    >>> f"{cluster_train_flop(specs.scenario('deepseek_v3_cluster')):.2e}"
    '3.71e+24'
    """
    tokens = specs.recorded(specs.model_spec(case.model), "n_training_tokens")
    return cluster_flop_per_token(case) * tokens


def run_level_mfu(case: TrainingRunCase | ClusterCase, *, dtype: str = "bf16") -> float:
    """A whole run's MFU: its model FLOP over its recorded GPU-hours at the dense peak (fraction).

    A training-run case uses the model's published training FLOP (``models.toml``); a cluster
    case counts it from the architecture (:func:`cluster_train_flop`). ``dtype`` names the
    peak (:func:`~llmphys.mfu.mfu_from_chip_hours`).

    >>> round(100 * run_level_mfu(specs.scenario("llama3_405b")), 1)
    34.6
    """
    if isinstance(case, TrainingRunCase):
        run = layout(case)
        flop = specs.recorded(specs.model_spec(run.model), "published_train_flop")
        chip = run.accelerator
    elif isinstance(case, ClusterCase):
        flop, chip = cluster_train_flop(case), case.accelerator
    else:
        raise TypeError(f"case must be a training_run or cluster scenario, got {case!r}")
    return mfu.mfu_from_chip_hours(
        flop,
        chip_hours=economics.price(case.gpu_hours).value,
        peak_flop_per_s=specs.accelerator(chip).peak_flop_per_s(dtype),
    )


def published_mfu_range(
    whole_runs: Sequence[TrainingRunCase | ClusterCase], measured: TrainingRun
) -> tuple[float, float]:
    """Lowest whole-run MFU of ``whole_runs`` and the MFU of ``measured`` (fractions).

    The high end is one run's measured throughput under PaLM's own count (full attention,
    ``predict.measured_mfu``); the low end charges whole runs for everything their chips did.

    >>> lo, hi = published_mfu_range([specs.scenario("llama3_405b")],
    ...                              predict.training_runs()["palm_540b"])
    >>> round(100 * lo), round(100 * hi, 1)
    (35, 46.2)
    """
    low = min(run_level_mfu(c) for c in whole_runs)
    return low, predict.measured_mfu(measured, attention_flops="full")


def dp_comm_share(
    case: TrainingRunCase | DataParallelCase, n_gpus, *, link_bytes_per_s: float, **kwargs
):
    """``comms.dp_comm_share`` for a case's step (:func:`step_inputs`), a fraction per n_gpus.

    >>> h100 = specs.accelerator("h100_sxm")
    >>> round(100 * dp_comm_share(specs.scenario("series_dp"), 512,
    ...                           link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction), 1)
    43.1
    """
    return comms.dp_comm_share(
        n_gpus, link_bytes_per_s=link_bytes_per_s, **step_inputs(case), **kwargs
    )
