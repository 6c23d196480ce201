"""Chapter 2's Implement checks: a right answer passes, each typical slip gets its own hint.

The wrong implementations are written out here, independently of the ones inside
``llmphys.grading.data``, the way a student would get them wrong.
"""

import math
from collections import Counter

import pytest

from llmphys import grading
from llmphys.grading import data as gdata

# ------------------------------------------------------------------ data-ex-scurve


def s_curve(s, n_bands, n_rows):
    return 1 - (1 - s**n_rows) ** n_bands


def test_s_curve_reference_passes():
    fb = grading.check_lsh_candidate_probability(s_curve)
    assert fb.passed and fb.n_matched == fb.n_cases == 16
    assert str(fb).startswith("PASS data-ex-scurve (s_curve)")


def test_s_curve_cases_hold_fineweb_anchor():
    # FineWeb: b = 14 bands of r = 8 (Penedo et al. 2024, sec. 3.4); 1 - (1 - 0.8^8)^14 = 0.9235
    ref = gdata._s_curve(0.8, 14, 8)
    assert ref == pytest.approx(1 - (1 - 0.8**8) ** 14, rel=1e-12)
    assert round(ref, 4) == 0.9235


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (lambda s, n_bands, n_rows: 1 - (1 - s**n_bands) ** n_rows, "bands and rows swapped"),
        (lambda s, n_bands, n_rows: 1 - (1 - s**n_bands) ** n_bands, "s^b where s^r belongs"),
        (lambda s, n_bands, n_rows: s ** (n_rows * n_bands), "every row of every band"),
        (lambda s, n_bands, n_rows: s**n_rows, "one band's chance"),
        (lambda s, n_bands, n_rows: min(1.0, n_bands * s**n_rows), "adding the b bands"),
        (lambda s, n_bands, n_rows: (1 - (1 - s) ** n_rows) ** n_bands, "AND and OR"),
    ],
    ids=["swapped", "s_to_the_b", "all_bands", "one_band", "union_bound", "and_or"],
)
def test_s_curve_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_lsh_candidate_probability(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_s_curve_factor_two_is_named():
    fb = grading.check_lsh_candidate_probability(
        lambda s, n_bands, n_rows: 2 * s_curve(s, n_bands, n_rows))
    assert not fb.passed and "factor of 2" in fb.message


# ------------------------------------------------------------------ data-ex-jaccard


def grams(text, k):
    w = text.split()
    return [" ".join(w[i : i + k]) for i in range(len(w) - k + 1)]


def jaccard(a, b, k):
    ga, gb = set(grams(a, k)), set(grams(b, k))
    return len(ga & gb) / len(ga | gb) if ga | gb else 1.0


def test_jaccard_reference_passes():
    fb = grading.check_shingle_jaccard(jaccard)
    assert fb.passed and fb.n_matched == fb.n_cases == 14


def test_jaccard_hashed_reference_equals_exact_sets():
    # the reference hashes shingles to 32 bits; on these few-dozen-shingle cases no two collide,
    # so it equals the exact set computation to the last bit
    for case in gdata._jaccard_cases():
        assert gdata._jaccard(*case.args) == jaccard(*case.args), case.describe()
    # a closed-form anchor: "the model reads the text/token", k = 3 share 2 of 4 distinct 3-grams
    assert gdata._jaccard("the model reads the text", "the model reads the token", 3) == 0.5


def multiset(a, b, k):
    ca, cb = Counter(grams(a, k)), Counter(grams(b, k))
    return sum((ca & cb).values()) / sum((ca | cb).values()) if ca or cb else 1.0


def characters(a, b, k):
    ga = {a[i : i + k] for i in range(len(a) - k + 1)}
    gb = {b[i : i + k] for i in range(len(b) - k + 1)}
    return len(ga & gb) / len(ga | gb)


def words_only(a, b, k):
    return len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split()))


def dice(a, b, k):
    ga, gb = set(grams(a, k)), set(grams(b, k))
    return 2 * len(ga & gb) / (len(ga) + len(gb)) if ga or gb else 1.0


def containment(a, b, k):
    ga, gb = set(grams(a, k)), set(grams(b, k))
    if not ga:
        return 0.0 if gb else 1.0
    return len(ga & gb) / len(ga)


@pytest.mark.parametrize(
    ("wrong", "hint"),
    [
        (multiset, "counted more than once"),
        (characters, "character k-grams"),
        (words_only, "whatever k is"),
        (dice, "Dice coefficient"),
        (containment, "containment"),
    ],
    ids=["multiset", "characters", "words", "dice", "containment"],
)
def test_jaccard_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_shingle_jaccard(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_jaccard_division_by_zero_is_reported_with_the_case():
    def no_convention(a, b, k):
        ga, gb = set(grams(a, k)), set(grams(b, k))
        return len(ga & gb) / len(ga | gb)

    fb = grading.check_shingle_jaccard(no_convention)
    assert not fb.passed and "ZeroDivisionError" in fb.message and "'web text', 3" in fb.message


# ------------------------------------------------------------------ data-ex-filter-pr


def precision_recall(removed, truth):
    tp = sum(p and t for p, t in zip(removed, truth, strict=True))
    precision = tp / sum(removed) if any(removed) else 1.0
    recall = tp / sum(truth) if any(truth) else 1.0
    return precision, recall


def test_precision_recall_reference_passes():
    fb = grading.check_removal_precision_recall(precision_recall)
    assert fb.passed and fb.n_matched == fb.n_cases == 14


def test_precision_recall_anchor():
    # 2 of the 5 removed pages should go, of 4 that should: precision 2/5, recall 2/4
    removed = [True, True, True, True, True, False, False, False]
    truth = [True, True, False, False, False, True, True, False]
    assert gdata._precision_recall(removed, truth) == (0.4, 0.5)


def test_precision_recall_swapped_gets_its_hint():
    fb = grading.check_removal_precision_recall(lambda r, t: precision_recall(r, t)[::-1])
    assert not fb.passed and "swapped" in fb.message, fb.message


def test_precision_recall_over_all_pages_gets_its_hint():
    def over_all(removed, truth):
        tp = sum(p and t for p, t in zip(removed, truth, strict=True))
        return tp / len(truth), tp / sum(truth) if any(truth) else 1.0

    fb = grading.check_removal_precision_recall(over_all)
    assert not fb.passed and "not by every page" in fb.message, fb.message


def test_precision_recall_zero_convention_gets_its_hint():
    def zero_if_empty(removed, truth):
        tp = sum(p and t for p, t in zip(removed, truth, strict=True))
        return (tp / sum(removed) if any(removed) else 0.0, tp / sum(truth) if any(truth) else 0.0)

    fb = grading.check_removal_precision_recall(zero_if_empty)
    assert not fb.passed and "removes nothing" in fb.message, fb.message
    assert fb.n_matched == fb.n_cases - 2  # only the two empty-denominator cases differ


# ------------------------------------------------------------------ every check


CHECKS = [
    grading.check_lsh_candidate_probability,
    grading.check_shingle_jaccard,
    grading.check_removal_precision_recall,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_stub_is_not_implemented_yet(check):
    def stub(*args, **kwargs):
        raise NotImplementedError

    fb = check(stub)
    assert not fb.passed and "not implemented yet" in fb.message
    assert str(fb).startswith("NOT YET data-ex-")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_not_callable_is_a_clear_error(check):
    with pytest.raises(TypeError, match="pass the function itself"):
        check(0.5)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_feedback_is_deterministic(check):
    # the chapter stores this text; seeded cases make two runs print the same
    wrong = {
        "check_lsh_candidate_probability": lambda s, n_bands, n_rows: math.sqrt(s),
        "check_shingle_jaccard": lambda a, b, k: 0.5,
        "check_removal_precision_recall": lambda r, t: (0.5, 0.5),
    }[check.__name__]
    assert str(check(wrong)) == str(check(wrong))


def test_checks_are_listed_for_the_course_kit():
    assert {
        "check_lsh_candidate_probability",
        "check_shingle_jaccard",
        "check_removal_precision_recall",
    } <= set(grading.checks())
