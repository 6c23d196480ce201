"""Chapter 5's autograding: the references pass, the typical slips fail with their hint."""

import math

import pytest

from llmphys import grading, scaling_laws


def size(train_flop, tokens_per_param):
    # C = 6ND with D = r N  =>  N = sqrt(C / (6 r)); Chinchilla: 5.76e23 FLOP at 20 -> 69.3B
    n = (train_flop / (6 * tokens_per_param)) ** 0.5
    return n, tokens_per_param * n


def test_size_reference_passes_and_matches_chinchilla():
    # Hoffmann et al. 2022, table 3: 5.76e23 FLOP at ~20 tokens/param is a ~70B model on 1.4T
    # tokens; sqrt(5.76e23 / 120) = 6.93e10 exactly by the closed form.
    fb = grading.check_size_at_ratio(size)
    assert fb.passed and fb.n_cases == 9 and str(fb).startswith("PASS scaling-ex-size")
    n, d = scaling_laws.size_at_ratio(train_flop=5.76e23, tokens_per_param=20.0)
    assert n == pytest.approx(6.928e10, rel=1e-3) and d == pytest.approx(1.386e12, rel=1e-3)


def test_size_forward_only_flop_is_named():
    def forward_only(c, r):
        n = (c / (2 * r)) ** 0.5
        return n, r * n

    fb = grading.check_size_at_ratio(forward_only)
    assert not fb.passed and "C = 2ND" in fb.message and "C = 6ND" in fb.message


def test_size_swapped_outputs_are_named():
    fb = grading.check_size_at_ratio(lambda c, r: size(c, r)[::-1])
    assert not fb.passed and "swapped" in fb.message


def test_size_ratio_the_wrong_way_round_is_named():
    def inverted(c, r):
        n = (c * r / 6) ** 0.5  # N = r D, so C = 6 N^2 / r
        return n, n / r

    fb = grading.check_size_at_ratio(inverted)  # the same numbers as swapping N and D
    assert not fb.passed and "read as N / D" in fb.message


def test_size_fixed_twenty_is_named():
    def fixed(c, r):
        n = (c / 120) ** 0.5
        return n, 20 * n

    fb = grading.check_size_at_ratio(fixed)
    assert not fb.passed and "not a fixed 20" in fb.message and "2 of 9 cases match" in fb.message


def loss(n, d, E, A, B, alpha, beta):
    return E + A / n**alpha + B / d**beta


def test_loss_reference_passes_and_matches_the_printed_chinchilla_loss():
    # Hoffmann et al.'s eq. 10 constants give 1.937 nats for 70B on 1.4T tokens (the
    # library's doctest; E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28).
    fb = grading.check_chinchilla_loss(loss)
    assert fb.passed and str(fb).startswith("PASS scaling-ex-loss")
    law = scaling_laws.parametric_law("hoffmann2022")
    assert round(loss(70e9, 1.4e12, law.E, law.A, law.B, law.alpha, law.beta), 3) == 1.937


@pytest.mark.parametrize(("wrong", "hint"), [
    (lambda n, d, E, A, B, a, b: E + A / n**b + B / d**a, "exponents are swapped"),
    (lambda n, d, E, A, B, a, b: A / n**a + B / d**b, "irreducible loss E is missing"),
    (lambda n, d, E, A, B, a, b: E + A * n**a + B * d**b, "wrong sign"),
    (lambda n, d, E, A, B, a, b: E + B / n**a + A / d**b, "A and B are swapped"),
])
def test_loss_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_chinchilla_loss(wrong)
    assert not fb.passed and hint in fb.message


def test_stubs_and_bad_input():
    def stub(*args):
        raise NotImplementedError

    for check in (grading.check_size_at_ratio, grading.check_chinchilla_loss):
        fb = check(stub)
        assert not fb.passed and "not implemented yet" in str(fb) and str(fb).startswith("NOT YET")
        with pytest.raises(TypeError, match="fn"):
            check(3.0)


def test_failing_feedback_prints_six_significant_digits():
    fb = grading.check_size_at_ratio(lambda c, r: size(c, r)[::-1])
    # case C = 6.359e24 FLOP, r = 24.88: N = sqrt(C / (6 r)) = 2.063924e11
    assert "206392" not in fb.message.replace("2.063924e+11", "") and "2.063924e+11" in fb.message
    assert "6.359e+24, 24.88" in fb.message


def test_feedback_is_deterministic():
    # Seeded cases: two runs give the same text (the chapter stores it as output).
    wrong = lambda n, d, E, A, B, a, b: E + A / n**b + B / d**a  # noqa: E731
    assert str(grading.check_chinchilla_loss(wrong)) == str(grading.check_chinchilla_loss(wrong))


def test_size_at_ratio_rejects_bad_input():
    with pytest.raises(ValueError, match="tokens_per_param"):
        scaling_laws.size_at_ratio(train_flop=1e20, tokens_per_param=0.0)
    with pytest.raises(ValueError, match="train_flop"):
        scaling_laws.size_at_ratio(train_flop=-1.0, tokens_per_param=20.0)


# ------------------------------------------------------------------ scaling-ex-verifier


def plateau(p, true_accept, false_accept):
    return p * true_accept / (p * true_accept + (1 - p) * false_accept)


def test_verifier_plateau_reference_passes():
    fb = grading.check_verifier_plateau(plateau)
    assert fb.passed and fb.n_matched == fb.n_cases == 12


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda p, tp, fp: 1 - (1 - p) ** 1000, "coverage at large n"),
        (lambda p, tp, fp: p * tp, "condition on the"),
        (lambda p, tp, fp: p * tp / (p * tp + fp), "(1 - p) s_fp"),
        (lambda p, tp, fp: tp, "not its precision"),
    ],
    ids=["coverage", "joint", "no_one_minus_p", "tpr"],
)
def test_verifier_plateau_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_verifier_plateau(wrong)
    assert not fb.passed and hint in fb.message, fb.message


# ------------------------------------------------------------------ scaling-ex-batch-fit
def prescribed(n_layers, d_model, seq_len, n_tokens):
    # DeepSeek LLM eq. (1)-(2): 7B (30 x 4096, 4K, 2T tokens) -> about 2,200 sequences, the
    # paper's Table 2 batch is 2,304.
    m = 72 * n_layers * d_model**2 + 6 * n_layers * d_model * seq_len
    return 0.2920 * (m * n_tokens) ** 0.3271 / seq_len


def test_prescribed_batch_reference_passes_and_is_near_deepseeks_7b_batch():
    fb = grading.check_prescribed_batch(prescribed)
    assert fb.passed and str(fb).startswith("PASS scaling-ex-batch-fit")
    assert prescribed(30, 4096, 4096, 2e12) == pytest.approx(2304, rel=0.05)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda n, d, s, t: 0.292 * (72 * n * d**2 * t) ** 0.3271 / s, "leaves out attention"),
        (lambda n, d, s, t: 0.292 * ((72 * n * d**2 + 6 * n * d * s) * t) ** 0.3271, "in tokens"),
        (lambda n, d, s, t: ((72 * n * d**2 + 6 * n * d * s) * t) ** 0.3271 / s, "coefficient"),
        (lambda n, d, s, t: 0.292 * ((24 * n * d**2 + 2 * n * d * s) * t) ** 0.3271 / s,
         "forward and backward"),
    ],
)
def test_prescribed_batch_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_prescribed_batch(wrong)
    assert not fb.passed and hint in fb.message


# ------------------------------------------------------------------ scaling-ex-task-sigmoid
def task_accuracy(loss, floor, gap, k, l0):
    # Bhagia et al. 2024's step 2; at L = L0 the accuracy is half-way, floor + gap / 2.
    return floor + gap / (1 + math.exp(k * (loss - l0)))


def test_task_accuracy_reference_passes_and_is_half_way_at_l0():
    fb = grading.check_task_accuracy(task_accuracy)
    assert fb.passed and str(fb).startswith("PASS scaling-ex-task-sigmoid")
    assert task_accuracy(3.0, 0.25, 0.5, 4.0, 3.0) == 0.5


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda x, f, g, k, l0: f + g / (1 + math.exp(-k * (x - l0))), "sign of the exponent"),
        (lambda x, f, g, k, l0: g / (1 + math.exp(k * (x - l0))), "floor is missing"),
        (lambda x, f, g, k, l0: f + g * math.exp(-k * (x - l0)), "exponential"),
        (lambda x, f, g, k, l0: f + (g - f) / (1 + math.exp(k * (x - l0))), "not the ceiling"),
    ],
)
def test_task_accuracy_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_task_accuracy(wrong)
    assert not fb.passed and hint in fb.message


# ------------------------------------------------------------------ scaling-ex-moe-breakeven
def moe_breakeven(n, d, eta, a, b, alpha, beta):
    # A (m N)^-alpha + B (eta D)^-beta = A N^-alpha + B D^-beta, solved for m; with the
    # refit law a 7B MoE at 70% speed on 140B tokens needs m = 1.51 (moe_scaling doctest).
    bracket = n**-alpha + (b / a) * (d**-beta - (eta * d) ** -beta)
    return bracket ** (-1 / alpha) / n


def test_moe_breakeven_reference_passes_and_matches_the_library_doctest():
    fb = grading.check_moe_breakeven(moe_breakeven)
    assert fb.passed and str(fb).startswith("PASS scaling-ex-moe-breakeven")
    assert moe_breakeven(7e9, 1.4e11, 0.7, 482.01, 2085.43, 0.3478, 0.3658) == pytest.approx(
        1.51, abs=0.005)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda n, d, e, a, b, al, be: (n**-al + b / a * (d**-be - (e * d) ** -be)) ** (-1 / al),
         "N_eff in parameters"),
        (lambda n, d, e, a, b, al, be: (n**-al + b / a * ((e * d) ** -be - d**-be))
         ** (-1 / al) / n,
         "wrong sign"),
        (lambda n, d, e, a, b, al, be: 1 / e, "one for one"),
        (lambda n, d, e, a, b, al, be: (n**-al + a / b * (d**-be - (e * d) ** -be))
         ** (-1 / al) / n,
         "swapped"),
    ],
)
def test_moe_breakeven_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_moe_breakeven(wrong)
    assert not fb.passed and hint in fb.message
