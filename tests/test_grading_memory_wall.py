"""Chapter 4's Implement checks: the library's reference passes, the typical wrong
implementations (written out here, independently of the check's own list) fail with the hint
that names the slip, and a non-function is refused.

Closed forms: ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054, fig. 1) keeps 2 + 2 + 12 bytes per
parameter and shards the 12, then the gradients, then the weights; a ring all-reduce takes
2(p-1) alpha + 2(p-1)/p n / beta (Patarasuk and Yuan 2009).
"""

import pytest

from llmphys import comms, grading, parallelism

# --- ZeRO bytes per parameter ---------------------------------------------------------------

def zero_right(stage, n_dp):
    state = {0: (2, 2, 12), 1: (2, 2, 12 / n_dp), 2: (2, 14 / n_dp, 0), 3: (16 / n_dp, 0, 0)}
    return float(sum(state[stage]))


def zero_weights_at_stage_1(stage, n_dp):
    if stage == 1:
        return 2 + (2 + 12) / n_dp
    return zero_right(stage, n_dp)


def zero_one_stage_ahead(stage, n_dp):
    return zero_right(min(stage + 1, 3), n_dp)


def zero_sixteen_byte_optimizer(stage, n_dp):
    return {0: 20.0, 1: 4 + 16 / n_dp, 2: 2 + 18 / n_dp, 3: 20 / n_dp}[stage]


def zero_no_master_copy(stage, n_dp):
    return {0: 12.0, 1: 4 + 8 / n_dp, 2: 2 + 10 / n_dp, 3: 12 / n_dp}[stage]


def zero_fp32_weights_and_gradients(stage, n_dp):
    return {0: 20.0, 1: 8 + 12 / n_dp, 2: 4 + 16 / n_dp, 3: 20 / n_dp}[stage]


def test_zero_reference_and_hand_written_pass():
    assert zero_right(1, 64) == pytest.approx(4.1875)  # 4 + 12/64: ZeRO fig. 1, 31.4 GB / 7.5B
    for fn in (parallelism.zero_bytes_per_param, zero_right):
        fb = grading.check_zero_bytes_per_param(fn)
        assert fb.passed, fb
        assert str(fb).startswith("PASS mw-ex-zero")


@pytest.mark.parametrize("wrong, hint", [
    (zero_weights_at_stage_1, "stage 1 does not shard the weights"),
    (zero_one_stage_ahead, "shards one thing too many"),
    (zero_sixteen_byte_optimizer, "12 bytes per parameter"),
    (zero_no_master_copy, "master copy"),
    (zero_fp32_weights_and_gradients, "BF16 (2 bytes each)"),
])
def test_zero_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_zero_bytes_per_param(wrong)
    assert not fb.passed and fb.n_matched < fb.n_cases
    assert hint in fb.message, fb.message


def test_zero_stage_3_everything_in_gib():
    # A student who returns GiB-scaled bytes gets the generic unit hint, not a ZeRO one
    fb = grading.check_zero_bytes_per_param(lambda s, n: zero_right(s, n) * 1e9 / 2**30)
    assert not fb.passed and "GiB" in fb.message


def test_zero_stub_and_not_callable():
    def stub(stage, n_dp):
        raise NotImplementedError

    fb = grading.check_zero_bytes_per_param(stub)
    assert str(fb).startswith("NOT YET mw-ex-zero") and "not implemented yet" in fb.message
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_zero_bytes_per_param(zero_right(1, 8))


# --- ring all-reduce ------------------------------------------------------------------------

def ring_right(n_bytes, n_ranks, link_bits_per_s, latency_s):
    beta = link_bits_per_s / 8
    steps = 2 * (n_ranks - 1)
    return steps * latency_s + steps * (n_bytes / n_ranks) / beta


def test_ring_hand_written_passes_and_matches_the_chapter():
    # 140 GB of BF16 gradients on 512 GPUs at 400 Gb/s: 5.59 s (comms doctest, the chapter)
    assert ring_right(140e9, 512, 400e9, 0.0) == pytest.approx(5.589, rel=1e-3)
    assert ring_right(140e9, 512, 400e9, 0.0) == pytest.approx(
        comms.ring_all_reduce_time_s(140e9, 512, link_bytes_per_s=50e9), rel=1e-12)
    fb = grading.check_ring_all_reduce_s(ring_right)
    assert fb.passed and str(fb).startswith("PASS mw-ex-ring"), fb


@pytest.mark.parametrize("wrong, hint", [
    # reduce-scatter only: the factor 2 dropped
    (lambda n, p, b, a: (p - 1) * a + (p - 1) * n / p / (b / 8), "reduce-scatter followed"),
    # p in place of p - 1 everywhere
    (lambda n, p, b, a: 2 * p * a + 2 * p * n / p / (b / 8), "p-1 steps per phase"),
    # bandwidth term 2 n / beta, latency right
    (lambda n, p, b, a: 2 * (p - 1) * a + 2 * n / (b / 8), "large-p limit"),
    # Gb/s read as GB/s
    (lambda n, p, b, a: 2 * (p - 1) * (a + n / p / b), "bits per second"),
    # latency once
    (lambda n, p, b, a: a + 2 * (p - 1) * n / p / (b / 8), "2(p-1) steps"),
])
def test_ring_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_ring_all_reduce_s(wrong)
    assert not fb.passed
    assert hint in fb.message, fb.message


def test_ring_unit_slip_gets_the_generic_hint():
    # milliseconds where seconds were asked: every answer 10^3 times the reference
    fb = grading.check_ring_all_reduce_s(lambda n, p, b, a: 1e3 * ring_right(n, p, b, a))
    assert not fb.passed and "off by 10^3" in fb.message


def test_ring_exception_is_reported_with_its_case():
    fb = grading.check_ring_all_reduce_s(lambda n, p, b, a: n / (p - 1))
    assert not fb.passed and "ZeroDivisionError" in fb.message and "1" in fb.message
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_ring_all_reduce_s("ring_right")


def test_checks_are_exported():
    checks = grading.checks()
    assert {"check_zero_bytes_per_param", "check_ring_all_reduce_s"} <= set(checks)
