"""Chapter 1's Implement check (foundations-ex-step-flop): a right training-step count passes,
and each typical slip gets its own hint. The wrong versions are written here, independently of
the mistakes the check knows, the way a student would write them."""

import numpy as np
import pytest

from llmphys import accounting, grading, specs


def right(n_params, n_layers, n_heads, d_head, batch_size, seq_len):
    mean_keys = (seq_len + 1) / 2  # causal: token t attends to t keys
    attention = n_layers * n_heads * 2 * (2 * d_head) * mean_keys  # QK^T and AV, forward
    return 3 * batch_size * seq_len * (2 * n_params + attention)


def test_a_correct_count_passes():
    fb = grading.check_train_step_flop(right)
    assert fb.passed and fb.n_matched == fb.n_cases == 16
    assert str(fb).startswith("PASS foundations-ex-step-flop (right): all 16 cases match")


def test_the_count_carries_the_chapter_attention_share_for_llama31_405b():
    # The chapter glues attention_share at (8192 + 1)/2 keys: 4.2% over the weight matmuls.
    m = specs.model("llama31_405b")
    n = accounting.n_active_params(m) - accounting.embedding_params(m)
    ratio = right(n, m.n_layers, m.n_heads, m.d_head, 2048, 8192) / (6 * n * 2048 * 8192)
    share = accounting.attention_share(m, context_tokens=(8192 + 1) / 2)
    assert ratio - 1 == pytest.approx(share, rel=1e-12)


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (
            lambda n, L, h, d, b, t: right(n, L, h, d, b, t) / 3,
            "the backward pass costs twice",
        ),
        (
            lambda n, L, h, d, b, t: right(n, L, h, d, b, t) / (b * t),
            "the cost of one token",
        ),
        (
            lambda n, L, h, d, b, t: right(n, L, h, d, 1, t),
            "did you multiply by batch_size",
        ),
        (lambda n, L, h, d, b, t: 6 * n * b * t, "6ND alone"),
        (
            lambda n, L, h, d, b, t: 6 * n * b * t + 12 * L * h * d * t * b * t,
            "(T + 1)/2 on average",
        ),
        # mean keys T/2 instead of (T + 1)/2: the diagonal of the causal mask forgotten
        (
            lambda n, L, h, d, b, t: 3 * b * t * (2 * n + 2 * L * h * d * t),
            "undercounts by half a key",
        ),
        (
            lambda n, L, h, d, b, t: b * t * (6 * n + 2 * L * h * d * (t + 1)),
            "triples the attention",
        ),
        (
            lambda n, L, h, d, b, t: 3 * b * t * (2 * n + L * h * d * (t + 1)),
            "two matmuls per layer",
        ),
    ],
)
def test_each_typical_slip_fails_with_its_hint(wrong, hint):
    fb = grading.check_train_step_flop(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_one_flop_per_multiply_add_gets_the_generic_factor_of_two_hint():
    fb = grading.check_train_step_flop(lambda *a: right(*a) / 2)
    assert not fb.passed and "off by a factor of 2" in fb.message


def test_teraflop_where_flop_was_asked_gets_the_prefix_hint():
    fb = grading.check_train_step_flop(lambda *a: right(*a) / 1e12)
    assert not fb.passed and "off by 1/10^12" in fb.message


def test_a_stub_is_not_implemented_yet():
    def train_step_flop(n_params, n_layers, n_heads, d_head, batch_size, seq_len):
        raise NotImplementedError

    fb = grading.check_train_step_flop(train_step_flop)
    assert "NOT YET foundations-ex-step-flop (train_step_flop): not implemented yet" in str(fb)


def test_passing_a_value_instead_of_the_function_is_a_clear_error():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_train_step_flop(6e9)


def _logit_gradient_right(z, t):
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    return (p - np.eye(z.shape[-1])[t]) / t.size


def test_logit_gradient_check_passes_the_stable_closed_form():
    assert grading.check_logit_gradient(_logit_gradient_right).passed


def test_logit_gradient_check_names_the_sum_and_the_sign():
    fb = grading.check_logit_gradient(lambda z, t: _logit_gradient_right(z, t) * t.size)
    assert not fb.passed and "mean over all tokens" in fb.message
    fb = grading.check_logit_gradient(lambda z, t: -_logit_gradient_right(z, t))
    assert not fb.passed and "sign is flipped" in fb.message


def test_logit_gradient_check_catches_the_unshifted_softmax():
    def unshifted(z, t):
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        return (p - np.eye(z.shape[-1])[t]) / t.size

    fb = grading.check_logit_gradient(unshifted)
    assert not fb.passed and "+-1000" in fb.message


def _top_p_right(probs, top_p):
    order = np.argsort(-probs)
    mass_above = np.cumsum(probs[order]) - probs[order]
    q = np.zeros_like(probs)
    kept = order[mass_above < top_p]
    q[kept] = probs[kept]
    return q / q.sum()


def test_top_p_check_passes_a_nucleus_and_names_the_crossing_token():
    assert grading.check_top_p(_top_p_right).passed

    def excludes_crossing(probs, top_p):
        order = np.argsort(-probs)
        kept = order[: max(1, int(np.sum(np.cumsum(probs[order]) <= top_p)))]
        q = np.zeros_like(probs)
        q[kept] = probs[kept]
        return q / q.sum()

    fb = grading.check_top_p(excludes_crossing)
    assert not fb.passed and "reaches" in fb.message
    fb = grading.check_top_p(lambda p, t: np.where(_top_p_right(p, t) > 0, p, 0.0))
    assert not fb.passed and "renormalised" in fb.message


# --- foundations-ex-mup-lr: muP's per-tensor learning-rate multipliers


def mup_right(name, width_mult):
    hidden = name.split(".")[-1] in ("wq", "wk", "wv", "wo", "w1", "w2")
    return 1.0 / width_mult if hidden else 1.0


def test_a_correct_mup_multiplier_passes():
    fb = grading.check_mup_lr_multiplier(mup_right)
    assert fb.passed and fb.n_matched == fb.n_cases == 40


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (lambda n, m: 1.0, "standard parametrisation"),
        (lambda n, m: 1.0 / m, "only the hidden matrices"),
        (lambda n, m: 1.0 / m if n == "unembed" else mup_right(n, m), "count the width twice"),
        (lambda n, m: mup_right(n, m) ** 0.5, "not 1/sqrt(m)"),
        (lambda n, m: 1.0 / mup_right(n, m), "the *smaller* rate"),
    ],
)
def test_each_typical_mup_slip_gets_its_hint(wrong, hint):
    fb = grading.check_mup_lr_multiplier(wrong)
    assert not fb.passed and hint in fb.message
