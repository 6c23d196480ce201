"""Chapter 6's serving studies: a model at the largest batch that fits, penalties, racks."""

import pytest

from llmphys import inference, serving, specs, units
from llmphys.studies import serving as study_serving

LLAMA, H100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")


def test_the_largest_batch_that_fits_is_the_largest():
    # the cache of one more sequence must not fit beside the weights (inference.max_batch_by_memory)
    s = study_serving.at_max_batch("llama3_70b", "h100_sxm", context_tokens=1024)
    m, a = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    assert s["n_chips"] == inference.min_chips(m, a)
    assert s["batch_size"] == inference.max_batch_by_memory(
        m, a, context_tokens=1024, n_chips=s["n_chips"]
    )


def test_batch1_penalty_is_cost_at_one_over_cost_at_the_largest_batch():
    p = study_serving.batch1_penalty("deepseek_v3", "h200")
    assert p["penalty"] == pytest.approx(p["usd_per_token_batch1"] / p["usd_per_token_max_batch"])
    assert p["penalty"] > 1


def test_no_overlap_margin_is_one_plus_one_over_the_multiple():
    # above B* the step is compute-bound: (t_mem + t_comp) / t_comp = 1 + B*/B (zero context)
    for k in (1.0, 2.0, 3.0):
        assert study_serving.no_overlap_margin(LLAMA, H100, k)["margin"] == pytest.approx(
            1 + 1 / k, rel=1e-9
        )


def test_step_time_grows_in_proportion_above_the_balance_batch():
    assert study_serving.step_time_growth(LLAMA, H100, 2.0) == pytest.approx(2.0, rel=1e-9)
    assert study_serving.step_time_growth(LLAMA, H100, 3.0) == pytest.approx(3.0, rel=1e-9)


def test_rack_floor_is_the_weights_over_the_racks_bandwidth():
    # batch 1 at zero context reads the touched weights once: bytes / (72 x 8 TB/s)
    m, gb200 = specs.model("llama3_70b"), specs.accelerator("gb200")
    w = inference.weight_bytes_read(m, batch_size=1, weight_bytes_per_param=2.0)
    rack = specs.scenario("nvl72")  # 72 GB200s: the chip's scale-up domain
    assert study_serving.rack_floor_s("llama3_70b", rack) == pytest.approx(
        w / (72 * gb200.hbm_bytes_per_s), rel=1e-6
    )


def test_reading_every_deepseek_expert_on_a_rack_takes_about_a_millisecond():
    # DeepSeek-V3's published 671B parameters at one byte (FP8) over 72 x 8 TB/s of HBM:
    # 671e9 / 576e12 s = 1.165 ms; the library's own count of the weights a step reads differs
    # from the published total by well under 1%
    rack = specs.scenario("nvl72")
    t = study_serving.rack_all_weights_s("deepseek_v3", rack)
    assert t == pytest.approx(671e9 / (72 * 8e12), rel=0.01)
    assert t > study_serving.rack_floor_s("deepseek_v3", rack)  # batch 1 reads only routed experts


def test_longer_context_costs_more_per_token():
    assert (
        study_serving.long_context_penalty("llama3_70b", "b200", 131072)
        > study_serving.long_context_penalty("llama3_70b", "b200", 8192)
        > 1
    )


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="what"):
        study_serving.long_context("llama3_70b", "b200", context_tokens=1024, what="cost")
    with pytest.raises(ValueError, match="statistic"):
        study_serving.drain_time_s("mean")
    with pytest.raises(KeyError):
        study_serving.at_max_batch("llama3_8b", "h100_sxm", context_tokens=1024)  # no serving dtype


def test_expert_parallel_batch1_penalty_prices_the_one_expert_per_chip_floor():
    # Same largest batch, same rack; only the batch-1 step time differs: the floor of
    # batch1_latency_floor_s (experts whole on chips) against the routed weights over the rack's
    # summed bandwidth. At batch 1 and 1K context both steps are memory-bound.
    spread = study_serving.batch1_penalty("deepseek_v3", "gb200", n_chips=72)
    ep = study_serving.batch1_penalty("deepseek_v3", "gb200", n_chips=72, expert_parallel=True)
    dsv3, gb200 = specs.model("deepseek_v3"), specs.accelerator("gb200")
    step = inference.decode_step(
        dsv3, gb200, batch_size=1, context_tokens=1024, n_chips=72, weight_dtype="fp8"
    )
    floor = serving.batch1_latency_floor_s(dsv3, gb200, n_chips=72, weight_dtype="fp8")
    kv_s = step["kv_bytes"] / (72 * gb200.hbm_bytes_per_s)
    assert ep["usd_per_token_max_batch"] == spread["usd_per_token_max_batch"]
    assert ep["penalty"] / spread["penalty"] == pytest.approx(
        (floor["weights_s"] + kv_s) / step["step_time_s"], rel=1e-9
    )
    assert 1000 < ep["penalty"] < 2000
    with pytest.raises(ValueError, match="expert_parallel"):
        study_serving.batch1_penalty("llama3_70b", "h100_sxm", expert_parallel=True)


def test_rl_token_share_is_larger_in_slow_mode():
    # at the largest batch decode runs nearer the compute roof, so pretraining's budget buys
    # more RL tokens than at batch 16 (compute_split.rl_tokens_for_equal_cost)
    slow = study_serving.at_max_batch("deepseek_v3", "h200", context_tokens=2048)["batch_size"]
    fast = study_serving.rl_token_share("deepseek_v3", "h200", batch_size=16)
    assert 0 < fast < study_serving.rl_token_share("deepseek_v3", "h200", batch_size=slow) < 1


def test_drain_time_is_seconds_across_the_registry():
    # capacity over bandwidth: 21 ms for the fastest-draining chip (inference.hbm_drain_time_s)
    assert study_serving.drain_time_s("min") / units.MS == pytest.approx(21.0, abs=0.05)
    assert study_serving.drain_time_s("min") < study_serving.drain_time_s("median")
