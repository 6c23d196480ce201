"""Chapter 4's worked cases, computed from scenarios: Llama 3's layout, run-level MFU."""

import pytest

from llmphys import accounting, predict, specs
from llmphys.studies import memory_wall


def test_llama3_layout_is_read_from_the_training_runs_row():
    run = memory_wall.layout(specs.scenario("llama3_405b"))
    # Dubey et al. 2024, table 4 row 2: 16,384 GPUs, TP 8, PP 16, DP 128, 16M tokens
    assert (run.n_chips, run.tp, run.pp, run.dp) == (16_384, 8, 16, 128)
    assert run.global_batch_tokens == 16 * 2**20


def test_llama3_tp_traffic_hides_on_nvlink_but_not_on_the_nic():
    # NVLink is 9x the NIC on an H100 (accelerators.toml), so the two ratios are 9 apart
    case = specs.scenario("llama3_405b")
    out = memory_wall.tp_time_over_step(case, link="scale_out")
    up = memory_wall.tp_time_over_step(case, link="scale_up")
    assert out == pytest.approx(0.75, abs=0.005) and out / up == pytest.approx(9.0)
    with pytest.raises(ValueError, match="link"):
        memory_wall.tp_time_over_step(case, link="pcie")


def test_llama3_tp_bytes_per_step_match_megatrons_closed_form():
    # Shoeybi et al. 2019: 4 all-reduces of s h BF16 values per layer, each 2 (t-1)/t on a ring,
    # so 16 (t-1)/t s h bytes per layer and sequence; 126 layers over 16 stages, 16 sequences
    # per data-parallel rank (16M tokens / 8,192 / 128). Exact up to float rounding.
    s, h, t = 8192, 16384, 8
    closed = 16 * (t - 1) / t * s * h * (126 / 16) * 16
    got = memory_wall.tp_bytes_per_step(specs.scenario("llama3_405b"))
    assert got == pytest.approx(closed, rel=1e-12)


def test_the_series_case_needs_a_training_run_for_a_layout():
    with pytest.raises(TypeError, match="training_run"):
        memory_wall.layout(specs.scenario("series_dp"))


def test_palm_540b_mfu_from_its_throughput_is_46_point_2_percent():
    # Chowdhery et al. 2022, app. B: 46.2%; the recounted N (540.363B, not 540.35B) moves it by 1e-5
    lo, hi = memory_wall.published_mfu_range(
        [specs.scenario("llama3_405b")], predict.training_runs()["palm_540b"]
    )
    assert hi == pytest.approx(0.462, abs=5e-4)
    assert lo == memory_wall.run_level_mfu(specs.scenario("llama3_405b"))  # the one whole run


def test_run_level_mfu_is_below_step_level_mfu():
    # the run's FLOP (models.toml) over its GPU-hours (prices.toml) charges every stall
    case = specs.scenario("llama3_405b")
    run = memory_wall.run_level_mfu(case)
    table4 = [
        r.published_mfu for r in predict.training_runs().values() if r.source_group == "llama3"
    ]
    assert 0.30 < run < min(table4)


def test_deepseek_v3_run_level_mfu_against_bf16_and_fp8_peaks():
    # DeepSeek-AI 2024: 14.8T tokens (models.toml) in 2.664M H800 GPU-hours (prices.toml)
    case = specs.scenario("deepseek_v3_cluster")
    flop = 3 * accounting.forward_flop_per_token(
        specs.model("deepseek_v3"), context_tokens=(4096 + 1) / 2
    )
    assert memory_wall.cluster_train_flop(case) == pytest.approx(flop * 14.8e12, rel=1e-12)
    bf16 = memory_wall.run_level_mfu(case)
    fp8 = memory_wall.run_level_mfu(case, dtype="fp8")
    assert 0.35 < bf16 < 0.45 and fp8 == pytest.approx(bf16 / 2, rel=1e-3)


def test_series_dp_step_inputs_are_the_case_not_a_typed_copy():
    s = memory_wall.step_inputs(specs.scenario("series_dp"))
    assert s["peak_flop_per_s"] == specs.accelerator("h100_sxm").peak_bf16_flop_per_s
    assert (s["n_params"], s["tokens_per_step"], s["mfu"]) == (70e9, 4e6, 0.45)
