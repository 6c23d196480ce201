"""Downstream accuracy from loss: the second step of a two-step scaling prediction.

A scaling law predicts the loss L of a run that has not been trained. Gadre et al. 2024
("Language models scale reliably with over-training and on downstream tasks",
arXiv:2403.08540; the form their released code fits) map that loss to the average top-1
error over a set of tasks with an exponential decay,

    Err(L) = E - a exp(-b L),

E the error of a model that has learned nothing the tasks test (high loss), falling
exponentially as the loss falls (the paper writes epsilon - k exp(-gamma L); as exp(-L) is
1/perplexity, it calls this a power law in perplexity). Bhagia et al. 2024 (OLMo's model
ladder, arXiv:2412.04403, sec. 3) fit a sigmoid from a task's loss (the loss on its correct
answers) to its accuracy,

    Acc(L) = floor + gap / (1 + exp(k (L - L0))),      k > 0,

chance-level accuracy ``floor`` at high loss, ``floor + gap`` at low loss, the steepest rise
at L0; here it is applied to the general loss, which is what the released runs have. Both are
fitted on small runs and used to predict larger ones; here the test is done on
Gadre et al.'s released evaluations of 104 models (11M to 6.9B parameters, three corpora,
46 tasks; ``data/gadre2024_downstream.csv``), fitted on the models up to 411M parameters
and judged on the 1.4B and 6.9B ones, which the fit never sees. (The paper's own default error
fit, ``fit_ds`` in github.com/mlfoundations/scaling, uses six runs per corpus: five of up to
411M parameters and the 1.4B run at 20 tokens per parameter; here every 1.4B run is held out.)

An average over many tasks is smooth in L; a single task often is not. A task scored
all-or-nothing that sits at chance for every small model gives the fit nothing to extrapolate
from: the same mechanism as ``emergence`` (Schaeffer et al. 2023), seen from the loss side.

Home: chapters/05_scaling_laws.ipynb, section "Predicting downstream accuracy from loss".
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy.optimize import curve_fit

from . import specs

RUNS_CSV = "gadre2024_downstream.csv"
TASKS_CSV = "gadre2024_tasks.csv"
_RUN_COLUMNS = ("dataset", "model", "n_params", "n_tokens", "token_multiplier", "loss_c4_val")


@dataclasses.dataclass(frozen=True, kw_only=True)
class DownstreamRuns:
    """Gadre et al.'s 104 runs: loss on C4 validation (nats per token) and per-task accuracy.

    ``accuracy`` has shape (n_runs, n_tasks), columns in the order of ``tasks``.
    """

    dataset: np.ndarray
    model: np.ndarray
    n_params: np.ndarray
    n_tokens: np.ndarray
    token_multiplier: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    tasks: tuple[str, ...]
    chance_accuracy: np.ndarray
    in_subset: np.ndarray


@functools.cache
def load_gadre_runs() -> DownstreamRuns:
    """The released evaluations of Gadre et al. 2024 (github.com/mlfoundations/scaling).

    >>> runs = load_gadre_runs()
    >>> runs.loss.size, len(runs.tasks), int(runs.in_subset.sum())
    (104, 46, 17)
    """
    _, task_rows = specs.registry_csv(TASKS_CSV)
    tasks = tuple(r["task"] for r in task_rows)
    header, rows = specs.registry_csv(RUNS_CSV)
    if header != _RUN_COLUMNS + tasks:
        raise ValueError(f"{RUNS_CSV}: columns must be {_RUN_COLUMNS}, then {TASKS_CSV}'s tasks")
    col = lambda name, kind=float: np.array([kind(r[name]) for r in rows])  # noqa: E731
    return DownstreamRuns(
        dataset=col("dataset", str),
        model=col("model", str),
        n_params=col("n_params"),
        n_tokens=col("n_tokens"),
        token_multiplier=col("token_multiplier"),
        loss=col("loss_c4_val"),
        accuracy=np.array([[float(r[t]) for t in tasks] for r in rows]),
        tasks=tasks,
        chance_accuracy=np.array([float(r["random_baseline_accuracy"]) for r in task_rows]),
        in_subset=np.array([r["in_17_task_subset"] == "1" for r in task_rows]),
    )


def mean_error(accuracy: np.ndarray, *, tasks: np.ndarray | None = None) -> np.ndarray:
    """Average top-1 error over tasks, 1 - mean accuracy, one value per run (Gadre et al.).

    ``tasks`` is a boolean mask over the columns (default: all).

    >>> mean_error(np.array([[0.25, 0.75], [0.5, 1.0]])).tolist()
    [0.5, 0.25]
    """
    acc = np.atleast_2d(np.asarray(accuracy, dtype=float))
    if tasks is not None:
        acc = acc[:, np.asarray(tasks, dtype=bool)]
    return 1.0 - acc.mean(axis=1)


def error_from_loss(loss, *, e: float, a: float, b: float):
    """Average top-1 error (a fraction) at loss L, E - a exp(-b L) (Gadre et al. 2024).

    >>> round(error_from_loss(3.0, e=0.86, a=2.2, b=0.71), 4)
    0.5986
    """
    out = e - a * np.exp(-b * np.asarray(loss, dtype=float))
    return float(out) if np.ndim(out) == 0 else out


def accuracy_from_loss(loss, *, floor: float, gap: float, k: float, l0: float):
    """Task accuracy (a fraction) at loss L, floor + gap / (1 + exp(k (L - L0))) (Bhagia et
    al. 2024, sec. 3, with k > 0 so that accuracy rises as the loss falls).

    >>> accuracy_from_loss(2.5, floor=0.25, gap=0.5, k=4.0, l0=2.5)
    0.5
    """
    if not k > 0:
        raise ValueError(f"k must be positive (accuracy rises as the loss falls), got {k}")
    out = floor + gap / (1.0 + np.exp(k * (np.asarray(loss, dtype=float) - l0)))
    return float(out) if np.ndim(out) == 0 else out


def fit_error_law(loss, error) -> dict[str, float]:
    """Least-squares fit of Err = E - a exp(-b L); returns {"e", "a", "b"}.

    Started from b = 1 with E and a from the linear fit at that b, so the result does not
    depend on a hand-picked start.
    """
    x, y = _pair(loss, error, "error")
    b0 = 1.0
    design = np.column_stack([np.ones_like(x), -np.exp(-b0 * x)])
    e0, a0 = np.linalg.lstsq(design, y, rcond=None)[0]
    p, _ = curve_fit(
        lambda t, e, a, b: e - a * np.exp(-b * t), x, y, p0=[e0, a0, b0], maxfev=20_000
    )
    return {"e": float(p[0]), "a": float(p[1]), "b": float(p[2])}


def fit_accuracy_sigmoid(loss, accuracy, *, floor: float) -> dict[str, float]:
    """Fit Acc = floor + gap / (1 + exp(k (L - L0))) with the floor fixed at chance.

    Fixing the floor at the task's chance accuracy leaves three free constants.
    Returns {"floor", "gap", "k", "l0"}.
    """
    x, y = _pair(loss, accuracy, "accuracy")
    gap0 = max(float(y.max() - floor), 1e-3) * 1.2
    p0 = [gap0, 2.0, float(np.median(x))]
    p, _ = curve_fit(
        lambda t, gap, k, l0: floor + gap / (1.0 + np.exp(k * (t - l0))),
        x,
        y,
        p0=p0,
        bounds=([0.0, 1e-3, 0.0], [1.0 - floor, 100.0, 20.0]),
        maxfev=20_000,
    )
    return {"floor": floor, "gap": float(p[0]), "k": float(p[1]), "l0": float(p[2])}


def heldout_by_scale(
    runs: DownstreamRuns, *, tasks: np.ndarray, max_fit_params: float = 5e8
) -> dict[str, np.ndarray]:
    """Fit the error law per corpus on runs up to ``max_fit_params`` parameters; predict the rest.

    Returns, over the held-out runs of all three corpora: ``dataset``, ``model``,
    ``token_multiplier``, ``loss``,
    ``measured`` and ``predicted`` average error (fractions), and ``fit_params`` (one row of
    e, a, b per corpus, in the order of ``corpora``).
    """
    err = mean_error(runs.accuracy, tasks=tasks)
    keys = ("dataset", "model", "token_multiplier", "loss", "measured", "predicted")
    keep: dict[str, list] = {k: [] for k in keys}
    corpora = sorted(set(runs.dataset.tolist()))
    params = []
    for ds in corpora:
        fit = (runs.dataset == ds) & (runs.n_params <= max_fit_params)
        held = (runs.dataset == ds) & (runs.n_params > max_fit_params)
        p = fit_error_law(runs.loss[fit], err[fit])
        params.append([p["e"], p["a"], p["b"]])
        keep["dataset"] += runs.dataset[held].tolist()
        keep["model"] += runs.model[held].tolist()
        keep["token_multiplier"] += runs.token_multiplier[held].tolist()
        keep["loss"] += runs.loss[held].tolist()
        keep["measured"] += err[held].tolist()
        keep["predicted"] += np.atleast_1d(error_from_loss(runs.loss[held], **p)).tolist()
    out = {k: np.array(v) for k, v in keep.items()}
    out["corpora"] = np.array(corpora)
    out["fit_params"] = np.array(params)
    return out


def per_task_heldout_error(runs: DownstreamRuns, *, max_fit_params: float = 5e8) -> np.ndarray:
    """Largest held-out miss of the error law fitted task by task, as an accuracy fraction.

    For each task, :func:`heldout_by_scale` on that task alone; returns one value per task
    (in the order of ``runs.tasks``): the largest |predicted - measured| accuracy over the
    held-out runs of the three corpora, NaN where the fit does not converge (a task on which
    every fitted run scores the same has no curve to fit).
    """
    out = np.full(len(runs.tasks), np.nan)
    for j in range(len(runs.tasks)):
        mask = np.zeros(len(runs.tasks), dtype=bool)
        mask[j] = True
        try:
            h = heldout_by_scale(runs, tasks=mask, max_fit_params=max_fit_params)
        except RuntimeError:  # curve_fit found no minimum
            continue
        out[j] = float(np.max(np.abs(h["predicted"] - h["measured"])))
    return out


def _pair(x, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 4:
        raise ValueError(
            f"loss and {name} must be 1-D of the same length >= 4, got {a.shape}, {b.shape}"
        )
    return a, b
