"""MFU of published runs, recomputed from their own numbers."""

import pytest

from llmphys import accounting, mfu, specs


def test_palm_540b_mfu_is_46_point_2_percent():
    # Chowdhery et al. 2022: 46.2% from 238.3K tokens/s on 6144 TPU v4 (275 TFLOP/s).
    r = mfu.training_run("palm_540b")
    f = mfu.palm_flop_per_token(r.n_params, n_layers=r.n_layers, n_heads=r.n_heads,
                                d_head=r.d_head, seq_len=r.seq_len)
    peak = specs.accelerator(r.accelerator).peak_bf16_flop_per_s
    got = mfu.mfu_from_throughput(r.tokens_per_s, flop_per_token=f, n_chips=r.n_chips,
                                  peak_flop_per_s=peak)
    assert got == pytest.approx(r.reported_mfu, abs=5e-4)  # the paper's rounding
    assert mfu.palm_540b_mfu() == got


def test_palm_attention_term_is_about_one_percent_of_6n():
    f = mfu.palm_flop_per_token(540.35e9, n_layers=118, n_heads=48, d_head=256, seq_len=2048)
    assert f / (6 * 540.35e9) == pytest.approx(1.011, abs=1e-3)


def test_llama3_table4_mfu_is_tflops_over_the_dense_bf16_peak():
    # Table 4 quotes whole percents; 400/989.4 = 40.4% is printed as 41%, so allow 1 point.
    r = mfu.training_run("llama3_405b")
    peak = specs.accelerator(r.accelerator).peak_bf16_flop_per_s
    for tflops, reported in zip(r.tflop_per_s_per_gpu, r.reported_mfu, strict=True):
        assert tflops * 1e12 / peak == pytest.approx(reported, abs=0.01)


def test_run_level_mfu_is_below_step_level_mfu():
    # the run's FLOP (models.toml) over its GPU-hours (prices.toml) charges every stall
    run = mfu.run_level_mfu("llama3_405b")
    assert 0.30 < run < min(mfu.training_run("llama3_405b").reported_mfu)


def test_deepseek_v3_run_level_mfu_against_bf16_and_fp8_peaks():
    # DeepSeek-AI 2024: 14.8T tokens (models.toml) in 2.664M H800 GPU-hours (prices.toml)
    model = specs.model("deepseek_v3")
    flop = 3 * accounting.forward_flop_per_token(model, context_tokens=(4096 + 1) / 2)
    assert accounting.deepseek_v3_train_flop() == pytest.approx(flop * 14.8e12, rel=1e-12)
    bf16 = mfu.run_level_mfu("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    fp8 = bf16 * h100.peak_bf16_flop_per_s / h100.peak_fp8_flop_per_s
    assert 0.35 < bf16 < 0.45 and fp8 == pytest.approx(bf16 / 2, rel=1e-3)


def test_training_runs_registry_names_unknown_runs():
    with pytest.raises(KeyError, match="palm_540b"):
        mfu.training_run("gpt4")


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="tokens_per_s"):
        mfu.mfu_from_throughput(0.0, flop_per_token=1.0, n_chips=1, peak_flop_per_s=1.0)
    with pytest.raises(ValueError, match="chip_hours"):
        mfu.mfu_from_chip_hours(1.0, chip_hours=-1.0, peak_flop_per_s=1.0)
