"""Checks for the Implement exercises of chapter 5, scaling laws (see ``llmphys.grading``).

* :func:`check_size_at_ratio` (``scaling-ex-size``): N and D for a compute budget at a fixed
  tokens-per-parameter ratio, against :func:`llmphys.scaling_laws.size_at_ratio`;
* :func:`check_chinchilla_loss` (``scaling-ex-loss``): the parametric loss
  E + A/N^alpha + B/D^beta, against :func:`llmphys.scaling_laws.loss`;
* :func:`check_verifier_plateau` (``scaling-ex-verifier``): the large-n accuracy of verifier
  selection, against :func:`llmphys.best_of_n.verifier_precision`;
* :func:`check_prescribed_batch` (``scaling-ex-batch-fit``): the batch in sequences that DeepSeek
  LLM's fit prescribes for a model shape and token count, against
  :func:`llmphys.batch_scaling.optimal_batch_tokens`;
* :func:`check_task_accuracy` (``scaling-ex-task-sigmoid``): a task's accuracy from the loss,
  floor + gap / (1 + exp(k (L - L0))), against :func:`llmphys.downstream.accuracy_from_loss`;
* :func:`check_moe_breakeven` (``scaling-ex-moe-breakeven``): the effective-parameter
  multiplier a slower-training MoE needs, against
  :func:`llmphys.moe_scaling.breakeven_multiplier_throughput`.

Longer than 400 lines because it holds one check per Implement exercise of chapter 5, each
with its mistakes; splitting would scatter one chapter's autograder over several files.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from llmphys import batch_scaling, best_of_n, downstream, moe_scaling, scaling_laws, specs
from llmphys.grading._core import Case, Feedback, Mistake, check_function, common_factors

__all__ = [
    "check_chinchilla_loss",
    "check_moe_breakeven",
    "check_prescribed_batch",
    "check_size_at_ratio",
    "check_task_accuracy",
    "check_verifier_plateau",
]


def _short(x: float) -> float:
    """A seeded draw to 4 significant digits, so the feedback names a case a reader can type."""
    return float(f"{float(x):.4g}")


def _size_reference(train_flop: float, tokens_per_param: float) -> np.ndarray:
    return np.asarray(
        scaling_laws.size_at_ratio(train_flop=train_flop, tokens_per_param=tokens_per_param)
    )


def _as_pair(fn: Any) -> Any:
    """``fn`` with its (N, D) answer as an array, so the feedback prints 6 significant digits."""
    if not callable(fn):
        return fn  # check_function names the argument

    @functools.wraps(fn)
    def wrapped(*args: Any) -> Any:
        out = fn(*args)
        try:
            return np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            return out

    return wrapped


def _size_cases() -> list[Case]:
    rng = np.random.default_rng(505)
    flop = 10.0 ** rng.uniform(18, 26, size=6)
    ratio = rng.uniform(10, 200, size=6)
    cases = [Case(args=(_short(c), _short(r))) for c, r in zip(flop, ratio, strict=True)]
    # Chinchilla was trained on Gopher's budget (Hoffmann et al. 2022, sec. 3)
    budget = specs.recorded(specs.model("gopher_280b"), "published_train_flop")
    return [
        *cases,
        Case(
            args=(budget, 20.0),
            label=f"Chinchilla's budget, {budget / 1e23:g}e23 FLOP at 20 tokens/param",
        ),
        Case(args=(120.0, 20.0), label="C = 120 FLOP at 20 tokens/param (N = 1)"),
        Case(args=(7.2e23, 1868.0), label="Llama 3 8B-like: 7.2e23 FLOP at 1868 tokens/param"),
    ]


_SIZE_MISTAKES = [
    Mistake(
        implementation=lambda c, r: np.array([(c / (2 * r)) ** 0.5, r * (c / (2 * r)) ** 0.5]),
        message="did you use C = 2ND? That is the forward pass only; training also runs the "
        "backward pass (about twice the forward), so C = 6ND",
    ),
    Mistake(
        # (r N*, N*) is also what N = r D gives: sqrt(C r / 6) parameters on sqrt(C / (6 r)) tokens
        implementation=lambda c, r: np.array([r * (c / (6 * r)) ** 0.5, (c / (6 * r)) ** 0.5]),
        message="N and D are swapped, or the ratio is read as N / D: tokens_per_param is D / N, "
        "so D = r N and there are more tokens than parameters; return (n_params, n_tokens)",
    ),
    Mistake(
        implementation=lambda c, r: np.array([(c / 120) ** 0.5, 20 * (c / 120) ** 0.5]),
        message="the answer is right only at 20 tokens per parameter: use the tokens_per_param "
        "argument, not a fixed 20",
    ),
]


def check_size_at_ratio(fn: Any) -> Feedback:
    """Check ``fn(train_flop, tokens_per_param) -> (n_params, n_tokens)`` (scaling-ex-size).

    Nine cases: six seeded (C from 1e18 to 1e26 FLOP, r from 10 to 200) and three edges
    (Chinchilla's budget, N = 1, a heavily overtrained ratio). Swapping N and D and reading
    the ratio as N = r D give the same numbers, so one hint names both.

    >>> def size(train_flop, tokens_per_param):
    ...     n = (train_flop / (6 * tokens_per_param)) ** 0.5
    ...     return n, tokens_per_param * n
    >>> check_size_at_ratio(size).passed
    True
    """
    return check_function(
        _as_pair(fn),
        exercise="scaling-ex-size",
        reference=_size_reference,
        cases=_size_cases(),
        mistakes=_SIZE_MISTAKES,
        factors=common_factors(quantity="count"),
    )


def _loss_reference(
    n_params: float, n_tokens: float, E: float, A: float, B: float, alpha: float, beta: float
) -> float:
    law = scaling_laws.ParametricLaw(
        key="student", name="student", E=E, A=A, B=B, alpha=alpha, beta=beta
    )
    return float(scaling_laws.loss(law, n_params=n_params, n_tokens=n_tokens))


def _loss_cases() -> list[Case]:
    rng = np.random.default_rng(2022)
    cases = []
    for _ in range(6):
        n, d = 10.0 ** rng.uniform(7, 12), 10.0 ** rng.uniform(9, 14)
        e, a, b = rng.uniform(1.5, 2.0), rng.uniform(300, 600), rng.uniform(400, 2500)
        alpha, beta = rng.uniform(0.25, 0.40), rng.uniform(0.25, 0.40)
        cases.append(Case(args=tuple(_short(x) for x in (n, d, e, a, b, alpha, beta))))
    chinchilla_tokens = specs.recorded(specs.model("chinchilla_70b"), "n_training_tokens")
    for key in ("hoffmann2022", "besiroglu2024"):
        law = scaling_laws.parametric_law(key)
        cases.append(
            Case(
                args=(70e9, chinchilla_tokens, law.E, law.A, law.B, law.alpha, law.beta),
                label=f"Chinchilla (70B, 1.4T tokens) under {key}",
            )
        )
    law = scaling_laws.parametric_law("besiroglu2024")
    cases.append(
        Case(
            args=(1e9, 1e9, law.E, law.A, law.B, law.alpha, law.beta),
            label="N = D = 1e9 under besiroglu2024",
        )
    )
    return cases


_LOSS_MISTAKES = [
    Mistake(
        implementation=lambda n, d, e, a, b, al, be: e + a / n**be + b / d**al,
        message="the exponents are swapped: alpha belongs to the parameter term A/N^alpha, "
        "beta to the data term B/D^beta",
    ),
    Mistake(
        implementation=lambda n, d, e, a, b, al, be: a / n**al + b / d**be,
        message="the irreducible loss E is missing: the two power laws fall to E, not to 0",
    ),
    Mistake(
        implementation=lambda n, d, e, a, b, al, be: e + a * n**al + b * d**be,
        message="the powers have the wrong sign: loss falls with N and D, A/N^alpha = A N^-alpha",
    ),
    Mistake(
        implementation=lambda n, d, e, a, b, al, be: e + b / n**al + a / d**be,
        message="A and B are swapped: A multiplies the parameter term, B the data term",
    ),
]


def check_chinchilla_loss(fn: Any) -> Feedback:
    """Check ``fn(n_params, n_tokens, E, A, B, alpha, beta) -> loss`` (exercise scaling-ex-loss).

    Nine cases: six seeded laws and sizes, Chinchilla under the printed and refit constants,
    and N = D.

    >>> check_chinchilla_loss(lambda n, d, E, A, B, a, b: E + A / n**a + B / d**b).passed
    True
    """
    return check_function(
        fn,
        exercise="scaling-ex-loss",
        reference=_loss_reference,
        cases=_loss_cases(),
        mistakes=_LOSS_MISTAKES,
        factors=common_factors(quantity="loss"),
    )


# ---------------------------------------------------------------------------------------------
# scaling-ex-verifier: p s_tp / (p s_tp + (1 - p) s_fp)


def _plateau(p: float, true_accept: float, false_accept: float) -> float:
    return float(
        best_of_n.verifier_precision(p, true_accept=true_accept, false_accept=false_accept)
    )


def _plateau_cases() -> list[Case]:
    rng = np.random.default_rng(20_05_07)
    cases = [
        Case(args=(0.1, 0.9, 0.1), label="p=0.1, true_accept=0.9, false_accept=0.1"),
        Case(args=(0.5, 1.0, 0.0), label="p=0.5, a perfect verifier"),
        Case(args=(0.02, 0.99, 0.01), label="p=0.02, true_accept=0.99, false_accept=0.01"),
    ]
    for _ in range(9):
        p, tp, fp = (
            _short(rng.uniform(0.01, 0.9)),
            _short(rng.uniform(0.5, 1.0)),
            _short(rng.uniform(0.001, 0.4)),
        )
        cases.append(Case(args=(p, tp, fp), label=f"p={p}, true_accept={tp}, false_accept={fp}"))
    return cases


_PLATEAU_MISTAKES = (
    Mistake(
        implementation=lambda p, tp, fp: 1 - (1 - p) ** 1_000,
        message="this is coverage at large n, the chance that some sample is right; the verifier "
        "must also pick it out from the wrong samples it accepts",
    ),
    Mistake(
        implementation=lambda p, tp, fp: p * tp,
        message="p s_tp is the chance that one sample is right and accepted; condition on the "
        "sample being accepted at all: divide by p s_tp + (1 - p) s_fp",
    ),
    Mistake(
        implementation=lambda p, tp, fp: p * tp / (p * tp + fp),
        message="a wrong sample occurs with probability 1 - p before the verifier can accept "
        "it: the false acceptances are (1 - p) s_fp",
    ),
    Mistake(
        implementation=lambda p, tp, fp: tp,
        message="the verifier's true-acceptance rate is not its precision: with many wrong "
        "samples, even a small false-acceptance rate lets wrong answers through",
    ),
)


def check_verifier_plateau(fn: Any) -> Feedback:
    """Check ``fn(p, true_accept, false_accept)``: the accuracy (a probability) that best-of-n
    selection with a verifier reaches as n grows, p s_tp / (p s_tp + (1 - p) s_fp).

    >>> print(check_verifier_plateau(lambda p, tp, fp: p * tp / (p * tp + (1 - p) * fp)))
    PASS scaling-ex-verifier (<lambda>): all 12 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="scaling-ex-verifier",
        reference=_plateau,
        cases=_plateau_cases(),
        mistakes=_PLATEAU_MISTAKES,
        factors=common_factors(quantity="probability"),
    )


# ---------------------------------------------------------------------------------------------
# scaling-ex-batch-fit: 0.2920 (M D)^0.3271 / l_seq, M = 72 n d^2 + 6 n d l_seq


def _batch_reference(n_layers: int, d_model: int, seq_len: int, n_tokens: float) -> float:
    m = batch_scaling.non_embedding_flop_per_token(
        n_layers=n_layers, d_model=d_model, seq_len=seq_len
    )
    fit = batch_scaling.batch_fit()
    return batch_scaling.optimal_batch_tokens(fit, train_flop=m * n_tokens) / seq_len


def _batch_cases() -> list[Case]:
    rng = np.random.default_rng(5_31)
    cases = [
        Case(args=(30, 4096, 4096, 2.0e12), label="DeepSeek LLM 7B: 30 x 4096, 4K context, 2T"),
        Case(args=(95, 8192, 4096, 2.0e12), label="DeepSeek LLM 67B: 95 x 8192, 4K context, 2T"),
        Case(args=(2, 64, 8192, 1e9), label="a tiny model with a long context (attention-heavy)"),
    ]
    for _ in range(6):
        n = int(rng.integers(4, 100))
        d = int(128 * rng.integers(4, 96))
        seq = int(2 ** rng.integers(10, 15))
        tokens = _short(10.0 ** rng.uniform(9, 13))
        cases.append(Case(args=(n, d, seq, tokens), label=f"{n} x {d}, {seq} context, {tokens:g}"))
    return cases


_FIT = (0.2920, 0.3271)
_BATCH_MISTAKES = (
    Mistake(
        implementation=lambda n, d, seq, t: _FIT[0] * (72 * n * d**2 * t) ** _FIT[1] / seq,
        message="M leaves out attention: DeepSeek's M = 72 n d^2 + 6 n d l_seq counts the "
        "score and value matmuls, which grow with the context length",
    ),
    Mistake(
        implementation=lambda n, d, seq, t: (
            _FIT[0] * ((72 * n * d**2 + 6 * n * d * seq) * t) ** _FIT[1]
        ),
        message="this is the batch in tokens; divide by the sequence length for sequences",
    ),
    Mistake(
        implementation=lambda n, d, seq, t: (
            _FIT[0] * ((72 * n * d**2 + 6 * n * d * seq) * t) ** 0.3271 / seq / _FIT[0]
        ),
        message="the fit has a coefficient: B_opt = 0.2920 C^0.3271",
    ),
    Mistake(
        implementation=lambda n, d, seq, t: (
            _FIT[0] * ((24 * n * d**2 + 2 * n * d * seq) * t) ** _FIT[1] / seq
        ),
        message="C counts forward and backward: M is three times the forward pass "
        "(72 n d^2, not 24 n d^2)",
    ),
)


def check_prescribed_batch(fn: Any) -> Feedback:
    """Check ``fn(n_layers, d_model, seq_len, n_tokens)``: the batch in sequences (a float,
    not rounded) that DeepSeek LLM's fit B_opt = 0.2920 C^0.3271 tokens prescribes, with
    C = M D and M = 72 n_layers d_model^2 + 6 n_layers d_model seq_len.

    >>> ref = lambda n, d, l, t: 0.2920 * ((72 * n * d**2 + 6 * n * d * l) * t) ** 0.3271 / l
    >>> print(check_prescribed_batch(ref))
    PASS scaling-ex-batch-fit (<lambda>): all 9 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="scaling-ex-batch-fit",
        reference=_batch_reference,
        cases=_batch_cases(),
        mistakes=_BATCH_MISTAKES,
        factors=common_factors(quantity="batch"),
    )


# ---------------------------------------------------------------------------------------------
# scaling-ex-task-sigmoid: floor + gap / (1 + exp(k (L - L0)))


def _task_accuracy(loss: float, floor: float, gap: float, k: float, l0: float) -> float:
    return float(downstream.accuracy_from_loss(loss, floor=floor, gap=gap, k=k, l0=l0))


def _task_cases() -> list[Case]:
    rng = np.random.default_rng(5_2024)
    cases = [
        Case(args=(3.0, 0.25, 0.5, 4.0, 3.0), label="at L0: half-way, 0.5"),
        Case(args=(6.0, 0.25, 0.6, 3.0, 3.2), label="high loss: near the chance floor 0.25"),
        Case(args=(2.2, 0.0, 0.8, 2.5, 3.0), label="generative task (floor 0), low loss"),
    ]
    for _ in range(7):
        args = (
            _short(rng.uniform(2.0, 6.0)),
            _short(rng.choice([0.0, 0.25, 0.5])),
            _short(rng.uniform(0.2, 0.5)),
            _short(rng.uniform(0.5, 6.0)),
            _short(rng.uniform(2.5, 4.0)),
        )
        cases.append(Case(args=args, label="L={}, floor={}, gap={}, k={}, L0={}".format(*args)))
    return cases


_TASK_MISTAKES = (
    Mistake(
        implementation=lambda x, f, g, k, l0: f + g / (1 + np.exp(-k * (x - l0))),
        message="the sign of the exponent is flipped: accuracy must rise as the loss falls, so "
        "use exp(+k (L - L0)) with k > 0",
    ),
    Mistake(
        implementation=lambda x, f, g, k, l0: g / (1 + np.exp(k * (x - l0))),
        message="the chance floor is missing: a model that has learned nothing still scores "
        "the floor (0.25 on four-way multiple choice)",
    ),
    Mistake(
        implementation=lambda x, f, g, k, l0: f + g * np.exp(-k * (x - l0)),
        message="this is an exponential, which grows without bound as the loss falls; the "
        "sigmoid saturates at floor + gap",
    ),
    Mistake(
        implementation=lambda x, f, g, k, l0: f + (g - f) / (1 + np.exp(k * (x - l0))),
        message="gap is the rise above the floor, not the ceiling: the top is floor + gap",
    ),
)


def check_task_accuracy(fn: Any) -> Feedback:
    """Check ``fn(loss, floor, gap, k, l0)``: a task's accuracy (a probability) at a loss,
    floor + gap / (1 + exp(k (L - L0))), the sigmoid of OLMo's model ladder.

    >>> fb = check_task_accuracy(lambda x, f, g, k, l0: f + g / (1 + np.exp(k * (x - l0))))
    >>> fb.passed, fb.n_cases
    (True, 10)
    """
    return check_function(
        fn,
        exercise="scaling-ex-task-sigmoid",
        reference=_task_accuracy,
        cases=_task_cases(),
        mistakes=_TASK_MISTAKES,
        factors=common_factors(quantity="probability"),
    )


# ---------------------------------------------------------------------------------------------
# scaling-ex-moe-breakeven: m = [N^-alpha + (B/A)(D^-beta - (eta D)^-beta)]^(-1/alpha) / N


def _moe_reference(n, d, eta, a, b, alpha, beta) -> float:
    law = scaling_laws.ParametricLaw(key="x", name="x", E=0.0, A=a, B=b, alpha=alpha, beta=beta)
    return float(
        moe_scaling.breakeven_multiplier_throughput(
            law, n_active=n, n_tokens=d, throughput_ratio=eta
        )
    )


def _moe_cases() -> list[Case]:
    rng = np.random.default_rng(5_2025)
    epoch = (482.01, 2085.43, 0.3478, 0.3658)
    dsv3 = specs.model("deepseek_v3")
    dsv3_active = specs.recorded(dsv3, "published_n_active_params")  # 37B
    dsv3_tokens = specs.recorded(dsv3, "n_training_tokens")  # 14.8T
    cases = [
        Case(args=(7e9, 1.4e11, 0.7, *epoch), label="7B on 140B tokens at 70% speed, refit law"),
        Case(args=(7e9, 1.4e11, 1.0, *epoch), label="full speed: the multiplier is 1"),
        Case(
            args=(dsv3_active, dsv3_tokens, 0.5, *epoch),
            label="37B active on 14.8T tokens at half speed",
        ),
    ]
    for _ in range(6):
        n = _short(10.0 ** rng.uniform(8, 11))
        d = _short(n * rng.uniform(5, 200))
        eta = _short(rng.uniform(0.5, 0.95))
        cases.append(Case(args=(n, d, eta, *epoch), label=f"N={n:g}, D={d:g}, eta={eta}"))
    return cases


_MOE_MISTAKES = (
    Mistake(
        implementation=lambda n, d, eta, a, b, al, be: (
            (n**-al + (b / a) * (d**-be - (eta * d) ** -be)) ** (-1 / al)
        ),
        message="this is N_eff in parameters; the multiplier is N_eff / N_act",
    ),
    Mistake(
        implementation=lambda n, d, eta, a, b, al, be: (
            (n**-al + (b / a) * ((eta * d) ** -be - d**-be)) ** (-1 / al) / n
        ),
        message="the data term has the wrong sign: the MoE sees fewer tokens (eta D), so its "
        "parameter term must be smaller than the dense model's, and m > 1",
    ),
    Mistake(
        implementation=lambda n, d, eta, a, b, al, be: 1.0 / eta,
        message="slower training does not cost parameters one for one: solve "
        "A (m N)^-alpha + B (eta D)^-beta = A N^-alpha + B D^-beta for m",
    ),
    Mistake(
        implementation=lambda n, d, eta, a, b, al, be: (
            (n**-al + (a / b) * (d**-be - (eta * d) ** -be)) ** (-1 / al) / n
        ),
        message="A and B are swapped in the ratio: the data term's change is B (...), divided "
        "by the parameter term's constant A",
    ),
)


def check_moe_breakeven(fn: Any) -> Feedback:
    """Check ``fn(n_active, n_tokens, eta, A, B, alpha, beta)``: the multiplier N_eff / N_act
    that an MoE training at ``eta`` of the dense model's speed needs to match it in the same
    time, under L = E + A/N^alpha + B/D^beta.

    >>> def ref(n, d, e, a, b, al, be):
    ...     return (n**-al + b / a * (d**-be - (e * d) ** -be)) ** (-1 / al) / n
    >>> check_moe_breakeven(ref).passed
    True
    """
    return check_function(
        fn,
        exercise="scaling-ex-moe-breakeven",
        reference=_moe_reference,
        cases=_moe_cases(),
        mistakes=_MOE_MISTAKES,
        factors=common_factors(quantity="ratio"),
    )
