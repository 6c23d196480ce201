"""Failures at scale: job MTBF, the optimal checkpoint interval, goodput, checkpoint bandwidth.

A synchronous training job stops when any of its N GPUs (or their hosts, links, switches)
fails. With independent exponential failures of per-GPU mean time between failures m, the
job's MTBF is M = m / N. Saving a checkpoint takes delta seconds, restarting R. Young
(1974, CACM 17(9), doi:10.1145/361147.361115) minimises the expected waste to first order:
tau = sqrt(2 delta M). Daly (2006, Future Gener. Comput. Syst. 22(3),
doi:10.1016/j.future.2004.11.016) gives the expected wall time of a job
needing T_s seconds of work, and a higher-order optimum:

    T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau,
    tau_opt = sqrt(2 delta M) [1 + (delta/2M)^(1/2) / 3 + (delta/2M) / 9] - delta  (delta < 2M).

Goodput is T_s / T_w. Every function takes its counts and times as arguments; the book's
anchor, a published run's interruption count (``data/scenarios.toml``, kind
``interruptions``), is read through ``studies.memory_wall.gpu_mtbf_s``.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import units


def job_mtbf_s(n_gpus: float | np.ndarray, *, gpu_mtbf_s: float) -> float | np.ndarray:
    """Seconds between failures of a job that stops when any of ``n_gpus`` fails: m / N.

    >>> round(job_mtbf_s(16_384, gpu_mtbf_s=5.8 * units.YEAR) / units.HOUR, 2)
    3.1
    """
    if np.any(np.asarray(n_gpus) < 1):
        raise ValueError(f"n_gpus must be >= 1, got {n_gpus!r}")
    return units.check_positive("gpu_mtbf_s", gpu_mtbf_s) / n_gpus


def gpu_mtbf_from_run_s(n_failures: int, *, n_gpus: float, duration_s: float) -> float:
    """Per-GPU MTBF in seconds implied by ``n_failures`` in ``duration_s`` on ``n_gpus``: N T / k.

    Charges every interruption to the GPUs, so it is the MTBF per GPU *slot* (GPU, host and
    network share included). 419 unexpected interruptions in 54 days on 16,384 GPUs:

    >>> round(gpu_mtbf_from_run_s(419, n_gpus=16_384, duration_s=54 * units.DAY) / units.YEAR, 2)
    5.78
    """
    units.check_positive("n_failures", n_failures)
    units.check_positive("n_gpus", n_gpus)
    return n_gpus * units.check_positive("duration_s", duration_s) / n_failures


def young_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Young's first-order optimal compute time between checkpoints, sqrt(2 delta M), in s.

    >>> young_interval_s(300.0, 86400.0) / 60  # 5-min dumps, 24 h MTBF
    120.0
    """
    return float(
        np.sqrt(
            2.0
            * units.check_positive("checkpoint_s", checkpoint_s)
            * units.check_positive("mtbf_s", mtbf_s)
        )
    )


def daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimal compute time between checkpoints, in s (Daly 2006).

    Daly's fig. 3 case (M = 24 h, delta = 5 min) predicts 117 min:

    >>> round(daly_interval_s(300.0, 86400.0) / 60)
    117
    """
    d = units.check_positive("checkpoint_s", checkpoint_s)
    m = units.check_positive("mtbf_s", mtbf_s)
    if d >= 2 * m:
        return m
    x = d / (2 * m)
    return float(np.sqrt(2 * d * m) * (1 + np.sqrt(x) / 3 + x / 9) - d)


def expected_wall_time_s(
    work_s: float, *, interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float
) -> float:
    """Expected seconds to finish ``work_s`` of computation with exponential failures.

    T_w = M e^(R/M) (e^((tau+delta)/M) - 1) T_s / tau (Daly 2006); failures may strike
    during computation, checkpointing and restart alike.

    >>> round(expected_wall_time_s(3600.0, interval_s=3600.0, checkpoint_s=1e-9,
    ...                            restart_s=0.0, mtbf_s=1e12), 3)
    3600.0
    """
    t_s = units.check_positive("work_s", work_s)
    tau = units.check_positive("interval_s", interval_s)
    m = units.check_positive("mtbf_s", mtbf_s)
    d, r = checkpoint_s, restart_s
    if d < 0 or r < 0:
        raise ValueError(f"checkpoint_s and restart_s must be >= 0, got {d!r}, {r!r}")
    return float(m * np.exp(r / m) * np.expm1((tau + d) / m) * t_s / tau)


def goodput(*, interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> float:
    """Fraction of wall-clock time spent on work that is kept: T_s / T_w (dimensionless).

    >>> round(goodput(interval_s=1800.0, checkpoint_s=60.0, restart_s=600.0,
    ...               mtbf_s=3 * 3600.0), 3)
    0.839
    """
    return 1.0 / expected_wall_time_s(
        1.0, interval_s=interval_s, checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s
    )


def optimal_goodput(
    n_gpus: float | np.ndarray, *, gpu_mtbf_s: float, checkpoint_s: float, restart_s: float
) -> float | np.ndarray:
    """Goodput of a job of ``n_gpus`` checkpointing at Daly's optimal interval (dimensionless).

    >>> round(optimal_goodput(16_384, gpu_mtbf_s=5.78 * units.YEAR, checkpoint_s=60.0,
    ...                       restart_s=600.0), 3)
    0.853
    """

    def one(n: float) -> float:
        m = float(job_mtbf_s(n, gpu_mtbf_s=gpu_mtbf_s))  # n is a scalar here
        return goodput(
            interval_s=daly_interval_s(checkpoint_s, m),
            checkpoint_s=checkpoint_s,
            restart_s=restart_s,
            mtbf_s=m,
        )

    out = np.vectorize(one)(np.asarray(n_gpus, dtype=float))
    return float(out) if out.ndim == 0 else out


def simulate_goodput(
    rng: np.random.Generator,
    *,
    n_segments: int,
    interval_s: float,
    checkpoint_s: float,
    restart_s: float,
    mtbf_s: float,
) -> float:
    """Monte-Carlo goodput of ``n_segments`` checkpointed segments under exponential failures.

    Each segment needs tau + delta seconds without a failure; a failure loses the time
    since the last checkpoint and costs a restart of R seconds, which can fail too.
    Converges to ``goodput`` (Daly's model) as ``n_segments`` grows.
    """
    units.check_positive("n_segments", n_segments)
    tau, d, r = interval_s, checkpoint_s, restart_s
    m = units.check_positive("mtbf_s", mtbf_s)
    wall = 0.0
    pending = int(n_segments)
    while pending:  # every attempt at a segment: success, or a failure then a restart
        x = rng.exponential(m, pending)
        ok = x >= tau + d
        wall += (tau + d) * ok.sum() + x[~ok].sum() + _restarts_s(rng, int((~ok).sum()), r, m)
        pending = int((~ok).sum())
    return n_segments * tau / wall


def _restarts_s(rng: np.random.Generator, n: int, restart_s: float, mtbf_s: float) -> float:
    """Total seconds spent on ``n`` restarts of ``restart_s``, each retried after a failure."""
    total, pending = 0.0, n
    while pending:
        y = rng.exponential(mtbf_s, pending)
        ok = y >= restart_s
        total += restart_s * ok.sum() + y[~ok].sum()
        pending = int((~ok).sum())
    return total


def checkpoint_bytes_per_param(
    *, weight_dtype: str = "bf16", save_weights: bool = True, optimizer: str = "adamw"
) -> float:
    """Bytes per parameter a training checkpoint saves: the training state minus gradients.

    Gradients are recomputed every step, so a restart needs only the weights, the FP32
    master weights and the optimizer moments: 2 + 4 + 8 = 14 bytes for mixed-precision Adam
    (``training.training_state_bytes_per_param`` less its gradients), or 12 when the 16-bit
    weights are not saved because they are re-derived from the FP32 master copy.

    >>> checkpoint_bytes_per_param(), checkpoint_bytes_per_param(save_weights=False)
    (14.0, 12.0)
    """
    from .training import training_state_bytes_per_param

    parts = training_state_bytes_per_param(weight_dtype=weight_dtype, optimizer=optimizer)
    if not save_weights and parts["master_weights"] == 0:
        raise ValueError("save_weights=False needs master weights to rebuild the weights from")
    return (
        (parts["weights"] if save_weights else 0.0)
        + parts["master_weights"]
        + parts["optimizer_states"]
    )


def checkpoint_bytes_per_s(
    n_params: float, *, checkpoint_s: float, bytes_per_param: float = 14.0
) -> float:
    """Storage write bandwidth in bytes/s to save the training state in ``checkpoint_s``.

    N x bytes_per_param / delta. 14 bytes per parameter: BF16 weights, FP32 master weights and
    Adam moments (``checkpoint_bytes_per_param``); gradients are not saved.

    >>> round(checkpoint_bytes_per_s(405e9, checkpoint_s=60.0) / 1e12, 4)  # TB/s
    0.0945
    """
    units.check_positive("n_params", n_params)
    units.check_positive("bytes_per_param", bytes_per_param)
    return n_params * bytes_per_param / units.check_positive("checkpoint_s", checkpoint_s)
