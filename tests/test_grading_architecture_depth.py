"""Chapter 3's second-pass autograder: the right answer passes, each typical slip gets its hint.

The wrong implementations are written here independently of the ones the checks carry.
"""

import math

import numpy as np
import pytest

from llmphys import grading


def paged_right(lengths, block_tokens):
    return sum(math.ceil(n / block_tokens) * block_tokens for n in lengths)


def test_paged_reference_and_right_answer_pass():
    fb = grading.check_paged_kv_slots(paged_right)
    assert fb.passed and fb.n_cases == fb.n_matched == 12
    # 17 tokens in blocks of 16: two blocks, 32 slots (Kwon et al. 2023, sec. 4.2's block table)
    assert paged_right([17], 16) == 32


@pytest.mark.parametrize("wrong, hint", [
    (lambda ls, b: sum(n // b * b for n in ls), "rounding down"),
    (lambda ls, b: sum((n // b + 1) * b for n in ls), "one too many"),
    (lambda ls, b: sum(math.ceil(n / b) for n in ls), "number of blocks"),
    (lambda ls, b: math.ceil(sum(ls) / b) * b, "not shared between sequences"),
])
def test_paged_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_paged_kv_slots(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_stubs_are_not_implemented_yet():
    def stub(*args):
        raise NotImplementedError

    for check in (grading.check_paged_kv_slots, grading.check_dropped_share,
                  grading.check_linear_attention_recurrent):
        fb = check(stub)
        assert not fb.passed and "not implemented yet" in fb.message


def dropped_right(expert_ids, n_experts, capacity):
    over = sum(max(0, expert_ids.count(e) - capacity) for e in range(n_experts))
    return over / len(expert_ids)


def test_dropped_reference_and_right_answer_pass():
    fb = grading.check_dropped_share(dropped_right)
    assert fb.passed and fb.n_cases == fb.n_matched == 12
    assert dropped_right([0, 0, 0, 1], 2, 2) == 0.25  # the moe_capacity doctest's case


@pytest.mark.parametrize("wrong, hint", [
    (lambda ids, e, c: sum(max(0, ids.count(x) - c) for x in range(e)), "number of dropped"),
    (lambda ids, e, c: sum(max(0, ids.count(x) - c + 1) for x in range(e)) / len(ids),
     "off by one"),
    (lambda ids, e, c: max(0, len(ids) - e * c) / len(ids), "per expert"),
])
def test_dropped_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_dropped_share(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def linear_right(q, k, v, decay):
    state, out = np.zeros((q.shape[1], v.shape[1])), []
    for t in range(q.shape[0]):
        state = decay[t] * state + np.outer(k[t], v[t])
        out.append(state.T @ q[t])
    return np.array(out)


def test_linear_reference_and_right_answer_pass():
    fb = grading.check_linear_attention_recurrent(linear_right)
    assert fb.passed and fb.n_cases == fb.n_matched == 8


def _linear_wrong(q, k, v, decay, mode):
    state, out = np.zeros((q.shape[1], v.shape[1])), []
    for t in range(q.shape[0]):
        before = q[t] @ state
        if mode == "after":
            state = decay[t] * (state + np.outer(k[t], v[t]))
        else:
            state = (1.0 if mode == "nodecay" else decay[t]) * state + np.outer(k[t], v[t])
        out.append(before if mode == "first" else q[t] @ state)
    return np.array(out)


@pytest.mark.parametrize("mode, hint", [
    ("first", "before adding the current token"),
    ("after", "multiplies the old state only"),
    ("nodecay", "decay is missing"),
])
def test_linear_typical_mistakes_get_their_hint(mode, hint):
    fb = grading.check_linear_attention_recurrent(
        lambda q, k, v, a: _linear_wrong(q, k, v, a, mode))
    assert not fb.passed and hint in fb.message, fb.message


def test_parallel_bytes_reference_and_right_answer_pass():
    fb = grading.check_parallel_block_bytes(lambda n, d, b: n * (2 * d + 3 * d) * b)
    assert fb.passed and fb.n_cases == 8


@pytest.mark.parametrize("wrong, hint", [
    (lambda n, d, b: n * 2 * d * b, "norm only"),
    (lambda n, d, b: n * 3 * d * b, "residual add only"),
    (lambda n, d, b: 5 * d * b, "that is one layer"),
    (lambda n, d, b: n * 5 * d * b / 1e6, "base units"),
])
def test_parallel_bytes_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_parallel_block_bytes(wrong)
    assert not fb.passed and hint in fb.message, fb.message
