"""The grading machinery: a right answer passes, typical slips get their named hint."""

import pytest

from llmphys import grading, units
from llmphys.grading import Case, Mistake, check_function


def kv_bytes(layers, kv_heads, head_dim, tokens, bytes_per_element):
    return 2 * layers * kv_heads * head_dim * tokens * bytes_per_element


CASES = [Case(args=(80, 8, 128, t, 2)) for t in (1, 4096, 131_072)]
FORGOT_V = Mistake(implementation=lambda layers, h, d, t, b: layers * h * d * t * b,
                   message="did you count both K and V?")


def check(fn, **kw):
    return check_function(fn, exercise="demo", reference=kv_bytes, cases=CASES, **kw)


def test_reference_passes():
    fb = check(kv_bytes)
    assert fb.passed and bool(fb) and fb.n_matched == 3
    assert str(fb).startswith("PASS demo (kv_bytes): all 3 cases match")


def test_named_mistake_wins_over_generic_factor():
    fb = check(lambda layers, h, d, t, b: layers * h * d * t * b, mistakes=[FORGOT_V])
    assert not fb.passed and "did you count both K and V?" in fb.message


def test_factor_two_without_mistake():
    fb = check(lambda layers, h, d, t, b: layers * h * d * t * b)
    assert "off by a factor of 2" in fb.message and "0 of 3 cases match" in fb.message


def test_gib_where_gb():
    def in_gib(layers, h, d, t, b):
        return kv_bytes(layers, h, d, t, b) / units.GiB

    fb = check_function(in_gib, exercise="demo", cases=CASES,
                        reference=lambda *a: kv_bytes(*a) / units.GB)
    assert "GiB" in fb.message and "GB" in fb.message


def test_unknown_constant_factor_is_reported_as_such():
    fb = check(lambda layers, h, d, t, b: 3 * kv_bytes(layers, h, d, t, b))
    assert "3 times the reference" in fb.message


def test_not_implemented_and_exceptions():
    def stub(*a):
        raise NotImplementedError

    assert "not implemented yet" in check(stub).message
    fb = check(lambda *a: 1 / 0)
    assert "ZeroDivisionError" in fb.message and "80, 8, 128, 1, 2" in fb.message


def test_edge_case_only_failure_names_the_case():
    fb = check(lambda layers, h, d, t, b: kv_bytes(layers, h, d, max(t, 2), b))
    assert "2 of 3 cases match" in fb.message and "expected 327680, got 655360" in fb.message


def test_bad_arguments():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        check(kv_bytes(80, 8, 128, 1, 2))
    with pytest.raises(ValueError, match="cases"):
        check_function(kv_bytes, exercise="demo", reference=kv_bytes, cases=[])


def test_checks_registry_lists_only_check_functions():
    assert all(name.startswith("check_") for name in grading.checks())
    assert "check_function" not in grading.checks()
