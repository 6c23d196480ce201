"""Chapter 2's mixture-search and Viterbi Implement checks: a right answer passes, each slip
gets its hint."""

import numpy as np
import pytest

from llmphys import grading
from llmphys.grading import data_choices as dc


def optimal_mixture(beta, eps):
    b = -np.asarray(beta, dtype=float)
    active = np.ones(b.size, dtype=bool) & (b > 0)
    while True:  # water-filling: drop the domains whose weight would be negative, re-solve
        lam = b[active].sum() / (1 + active.sum() * eps)
        w = np.where(active, b / lam - eps, 0.0)
        if np.all(w >= 0):
            return w
        active &= w > 0


def test_mixture_reference_passes():
    fb = grading.check_optimal_mixture(optimal_mixture)
    assert fb.passed and fb.n_matched == fb.n_cases == 12, fb.message


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [(dc._no_eps, "only when"), (dc._no_clip, "negative"), (dc._renormalised_clip, "water")],
    ids=["no_eps", "no_clip", "renormalised_clip"],
)
def test_mixture_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_optimal_mixture(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def viterbi(word, log_probs):
    best, back = [0.0] + [-np.inf] * len(word), [0] * (len(word) + 1)
    for j in range(1, len(word) + 1):
        for i in range(j):
            lp = log_probs.get(word[i:j])
            if lp is not None and best[i] + lp > best[j]:
                best[j], back[j] = best[i] + lp, i
    out, j = [], len(word)
    while j:
        out.append(word[back[j]:j])
        j = back[j]
    return out[::-1]


def test_viterbi_reference_passes_and_keeps_the_students_name():
    fb = grading.check_viterbi_segment(viterbi)
    assert fb.passed and fb.n_matched == fb.n_cases == 14, fb.message
    assert str(fb).startswith("PASS data-ex-viterbi (viterbi)")


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [(dc._longest_match, "longest match"), (dc._fewest_pieces, "number of pieces"),
     (dc._most_probable_pieces, "greedy: a choice")],
    ids=["longest_match", "fewest_pieces", "most_probable_piece"],
)
def test_viterbi_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_viterbi_segment(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_a_stub_is_reported_as_not_implemented():
    def viterbi_segment(word, log_probs):
        raise NotImplementedError
    assert "not implemented yet" in grading.check_viterbi_segment(viterbi_segment).message
