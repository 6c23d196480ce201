"""MFU: one ratio, model FLOP over chip-seconds times the dense peak, per second or per run."""

import pytest

from llmphys import mfu, training


def test_palm_540b_mfu_from_its_throughput_is_46_point_2_percent():
    # Chowdhery et al. 2022, app. B: 238.3K tokens/s on 6,144 TPU v4 (275 TFLOP/s) is 46.2%
    f = mfu.palm_flop_per_token(540.35e9, n_layers=118, n_heads=48, d_head=256, seq_len=2048)
    got = mfu.mfu_from_throughput(238.3e3, flop_per_token=f, n_chips=6144, peak_flop_per_s=275e12)
    assert got == pytest.approx(0.462, abs=5e-4)  # the paper's rounding


def test_palm_attention_term_is_about_one_percent_of_6n():
    f = mfu.palm_flop_per_token(540.35e9, n_layers=118, n_heads=48, d_head=256, seq_len=2048)
    assert f / (6 * 540.35e9) == pytest.approx(1.011, abs=1e-3)


def test_every_entry_point_is_the_one_ratio():
    # a cluster running R tokens/s of F FLOP for one hour does R F 3600 model FLOP in
    # n x 1 chip-hours: all three forms give the same number (exact, the same operations)
    r, f, n, p = 1.0e5, 3.0e12, 1000, 989.4e12
    one = mfu.utilisation(r * f, chip_s=n, peak_flop_per_s=p)
    assert mfu.mfu_from_throughput(r, flop_per_token=f, n_chips=n, peak_flop_per_s=p) == one
    assert mfu.mfu_from_chip_hours(r * f * 3600, chip_hours=n, peak_flop_per_s=p) == pytest.approx(
        one, rel=1e-15
    )
    assert training.model_flop_utilization(
        r * f * 3600, time_s=3600, n_chips=n, peak_flop_per_s=p
    ) == pytest.approx(one, rel=1e-15)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="tokens_per_s"):
        mfu.mfu_from_throughput(0.0, flop_per_token=1.0, n_chips=1, peak_flop_per_s=1.0)
    with pytest.raises(ValueError, match="chip_hours"):
        mfu.mfu_from_chip_hours(1.0, chip_hours=-1.0, peak_flop_per_s=1.0)
    with pytest.raises(ValueError, match="peak_flop_per_s"):
        mfu.utilisation(1.0, chip_s=1.0, peak_flop_per_s=0.0)
