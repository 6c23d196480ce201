"""Serving studies: the compositions chapter 6 shows and the claims ledger judges.

Each test states a closed form or an invariant of the roofline decode step that the composition
must obey, so a change to the composition (the wrong chip count, dtype or batch) fails here.
"""

import pytest

from llmphys import inference, serving, specs, units


def test_the_largest_batch_that_fits_is_the_largest():
    # the cache of one more sequence must not fit beside the weights (inference.max_batch_by_memory)
    s = serving.at_max_batch("llama3_70b", "h100_sxm", context_tokens=1024)
    m, a = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    assert s["n_chips"] == inference.min_chips(m, a)
    assert s["batch_size"] == inference.max_batch_by_memory(m, a, context_tokens=1024,
                                                            n_chips=s["n_chips"])


def test_batch1_penalty_is_cost_at_one_over_cost_at_the_largest_batch():
    p = serving.batch1_penalty("deepseek_v3", "h200")
    assert p["penalty"] == pytest.approx(p["usd_per_token_batch1"] / p["usd_per_token_max_batch"])
    assert p["penalty"] > 1


def test_no_overlap_margin_is_one_plus_one_over_the_multiple():
    # above B* the step is compute-bound: (t_mem + t_comp) / t_comp = 1 + B*/B (zero context)
    for k in (1.0, 2.0, 3.0):
        assert serving.no_overlap_margin(k)["margin"] == pytest.approx(1 + 1 / k, rel=1e-9)


def test_step_time_grows_in_proportion_above_the_balance_batch():
    assert serving.step_time_growth(2.0) == pytest.approx(2.0, rel=1e-9)
    assert serving.step_time_growth(3.0) == pytest.approx(3.0, rel=1e-9)


def test_rack_floor_is_the_weights_over_the_racks_bandwidth():
    # batch 1 at zero context reads the touched weights once: bytes / (72 x 8 TB/s)
    m, gb200 = specs.model("llama3_70b"), specs.accelerator("gb200")
    w = inference.weight_bytes_read(m, batch_size=1, weight_bytes_per_param=2.0)
    assert serving.rack_floor_ms("llama3_70b") == pytest.approx(
        w / (72 * gb200.hbm_bytes_per_s) / units.MS, rel=1e-6)


def test_longer_context_costs_more_per_token():
    assert serving.long_context_penalty("llama3_70b", 131072) > serving.long_context_penalty(
        "llama3_70b", 8192) > 1


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="what"):
        serving.long_context("llama3_70b", context_tokens=1024, what="cost")
    with pytest.raises(ValueError, match="statistic"):
        serving.drain_time_ms("mean")
    with pytest.raises(ValueError, match="mode"):
        serving.rl_token_share_pct("medium")
    with pytest.raises(KeyError):
        serving.at_max_batch("llama3_8b", "h100_sxm", context_tokens=1024)  # no serving dtype
