"""The economics chapter's autograders: a right answer passes, each typical slip gets its hint.

Every implementation below is written independently of the library (plain arithmetic on the
exercise's formula), as a student would write it.
"""

import pytest

from llmphys import accounting, economics, grading, specs, units
from llmphys.studies import economics as study_economics

HOURS_PER_YEAR = 365.25 * 24  # the Julian year the exercise states


# -- econ-ex-owned-hour: capex * CRF / (8766 h * u) + P / 1000 * PUE * price --------------------

def owned(capex, life, r, u, p_w, pue, kwh):
    crf = r / (1 - (1 + r) ** -life) if r > 0 else 1 / life
    return capex * crf / (HOURS_PER_YEAR * u) + p_w / 1000 * pue * kwh


def test_owned_hour_reference_and_independent_solution_pass():
    fb = grading.check_owned_gpu_hour_usd(owned)
    assert fb.passed and fb.n_matched == fb.n_cases == 11
    assert str(fb).startswith("PASS econ-ex-owned-hour (owned): all 11 cases match")


def test_owned_hour_matches_the_chapter_owned_h100():
    # The independent formula reproduces the library at the chapter's central H100 inputs
    # (data/prices.toml), to float precision: the check's reference is that function.
    kw = study_economics.owned_inputs("h100_sxm")
    got = owned(kw["capex_usd"], kw["life_years"], kw["cost_of_capital_per_year"],
                kw["utilization"], kw["power_w"], kw["pue"], kw["usd_per_kwh"])
    assert got == pytest.approx(study_economics.owned_hour("h100_sxm")["total"], rel=1e-12)


@pytest.mark.parametrize("wrong, hint", [
    (lambda c, L, r, u, p, q, e: c / L / (HOURS_PER_YEAR * u) + p / 1000 * q * e,
     "straight-line depreciation"),
    (lambda c, L, r, u, p, q, e: c * (1 / L + r) / (HOURS_PER_YEAR * u) + p / 1000 * q * e,
     "interest on the whole capex"),
    (lambda c, L, r, u, p, q, e: owned(c, L, r, 1.0, p, q, e),
     "divide the capital charge by the utilisation"),
    (lambda c, L, r, u, p, q, e: owned(c, L, r, 1.0, p, q, e) / u,
     "electricity is drawn only while the GPU works"),
    (lambda c, L, r, u, p, q, e: owned(c, L, r, u, p, 1.0, e), "PUE"),
    (lambda c, L, r, u, p, q, e: owned(c, L, r, u, 1000 * p, q, e), "watts"),
    (lambda c, L, r, u, p, q, e: owned(c, L, r, u * 8760 / HOURS_PER_YEAR, p, q, e), "8760 hours"),
])
def test_owned_hour_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_owned_gpu_hour_usd(wrong)
    assert not fb.passed
    assert hint in fb.message
    assert "first failing case capex_usd=" in fb.message


def test_owned_hour_stub_and_bad_input():
    def owned_gpu_hour_usd(*args):
        raise NotImplementedError

    fb = grading.check_owned_gpu_hour_usd(owned_gpu_hour_usd)
    assert str(fb) == ("NOT YET econ-ex-owned-hour (owned_gpu_hour_usd): not implemented yet: "
                       "write the body of owned_gpu_hour_usd and run this cell again")
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_owned_gpu_hour_usd(owned(30e3, 5, 0.08, 0.8, 1275, 1.3, 0.081))


# -- econ-ex-cost-per-mtok: price / 3600 s / (u * tokens/s) * 1e6 -------------------------------

def per_mtok(price, rate, u):
    return price / 3600 / (rate * u) * 1_000_000


def test_cost_per_mtok_independent_solution_passes():
    fb = grading.check_usd_per_million_output_tokens(per_mtok)
    assert fb.passed and fb.n_matched == fb.n_cases == 11


def test_cost_per_mtok_anchor():
    # 3.6 USD/h at 1 token/s fully used is 3.6 / 3600 USD per token = 1,000 USD per 1e6 tokens;
    # at 50 % use each served token carries twice the hours.
    assert economics.usd_per_million_tokens(usd_per_chip_hour=3.6, n_chips=1, tokens_per_s=1.0,
                                            utilization=0.5) == pytest.approx(2e3)
    assert per_mtok(3.6, 1.0, 0.5) == pytest.approx(2e3)


@pytest.mark.parametrize("wrong, hint", [
    (lambda p, r, u: per_mtok(p, r, u) / 1000, "price of a thousand tokens"),
    (lambda p, r, u: per_mtok(p, r, 1.0), "idle hours are paid for too"),
    (lambda p, r, u: per_mtok(p, r, 1.0) * u, "the utilisation multiplies the price"),
    (lambda p, r, u: per_mtok(p, r, u) * 3600, "divide the hourly price by 3600 s"),
    (lambda p, r, u: per_mtok(p, r, u) * 3600 ** 2, "multiplied by 3600 where it should be"),
    (lambda p, r, u: per_mtok(p, r, u) * 60, "3600 seconds, not 60"),
])
def test_cost_per_mtok_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_usd_per_million_output_tokens(wrong)
    assert not fb.passed and hint in fb.message


def test_cost_per_mtok_unknown_factor_is_reported_as_a_factor():
    fb = grading.check_usd_per_million_output_tokens(lambda p, r, u: 1.7 * per_mtok(p, r, u))
    assert not fb.passed and "1.7 times the reference" in fb.message


def test_cost_per_mtok_bad_input_and_library_validation():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_usd_per_million_output_tokens("per_mtok")
    with pytest.raises(ValueError, match="utilization"):
        economics.usd_per_million_tokens(usd_per_chip_hour=3.0, n_chips=1, tokens_per_s=1.0,
                                         utilization=1.5)


def test_checks_are_registered():
    checks = grading.checks()
    assert {"check_owned_gpu_hour_usd", "check_usd_per_million_output_tokens",
            "check_batch1_decode_floor_s"} <= set(checks)


# -- econ-ex-decode-floor: (active - embedding params) * bytes / (n chips * HBM bandwidth) ------

def floor(model, acc, n_chips, bytes_per_param):
    streamed = accounting.n_active_params(model) - accounting.embedding_params(model)
    if model.tied_embeddings:  # the output head multiplies by the tied table every step
        streamed += model.vocab_size * model.d_model
    return streamed * bytes_per_param / (n_chips * acc.hbm_bytes_per_s)


def test_decode_floor_independent_solution_passes():
    fb = grading.check_batch1_decode_floor_s(floor)
    assert fb.passed and fb.n_matched == fb.n_cases == 11
    assert str(fb).startswith("PASS econ-ex-decode-floor (floor)")


def test_decode_floor_llama3_70b_on_one_h100_is_about_41_ms():
    # 70.6B parameters (Meta's model card), 1.05B of them the input embedding (128,256 x 8,192),
    # in BF16 over the H100 SXM's 3.35 TB/s (datasheet): 139 GB / 3.35 TB/s = 41.5 ms.
    t = floor(specs.model("llama3_70b"), specs.accelerator("h100_sxm"), 1, 2.0)
    assert t == pytest.approx((70.55e9 - 128_256 * 8192) * 2 / 3.35e12, rel=2e-3)
    assert t == pytest.approx(0.0415, rel=5e-3)


@pytest.mark.parametrize("wrong, hint", [
    (lambda m, a, n, b: accounting.n_params(m) * b / (n * a.hbm_bytes_per_s), "every parameter"),
    (lambda m, a, n, b: (accounting.n_active_params(m) - accounting.embedding_params(m)) * b
     / (n * a.hbm_bytes_per_s), "tied to the output head"),
    (lambda m, a, n, b: (accounting.n_params(m) - accounting.embedding_params(m)) * b
     / (n * a.hbm_bytes_per_s), "count the active parameters"),
    (lambda m, a, n, b: accounting.n_active_params(m) * b / (n * a.hbm_bytes_per_s),
     "input embedding table"),
    (lambda m, a, n, b: 2 * floor(m, a, 1, 1.0) * a.hbm_bytes_per_s
     / (n * a.peak_bf16_flop_per_s), "not to read them"),
    (lambda m, a, n, b: floor(m, a, 1, b), "divide by n_chips"),
    (lambda m, a, n, b: floor(m, a, n, b) * units.GB / units.GiB, "GiB"),
    (lambda m, a, n, b: floor(m, a, n, b) * 8, "bits where bytes"),
])
def test_decode_floor_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_batch1_decode_floor_s(wrong)
    assert not fb.passed and hint in fb.message


def test_decode_floor_bad_input():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_batch1_decode_floor_s(0.0415)
