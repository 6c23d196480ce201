"""The communication roofline against its closed forms and the ring formulas of comms."""

import pytest

from llmphys import comm_roofline as cr
from llmphys import comms, specs

H100 = specs.accelerator("h100_sxm")


def test_h100_ridges_nvlink_and_infiniband():
    # 989.4 TFLOP/s over 450 GB/s (NVLink 4, per direction) and 50 GB/s (400 Gb/s NIC).
    assert cr.network_ridge(H100.peak_bf16_flop_per_s, H100.scale_up_bytes_per_s_per_direction) \
        == pytest.approx(2198.7, abs=0.1)
    assert cr.network_ridge(H100.peak_bf16_flop_per_s, H100.scale_out_bytes_per_s_per_direction) \
        == pytest.approx(19_788, abs=1)


def test_tp_intensity_is_the_closed_form_and_batch_free():
    n_l, d, t = 12 * 4096**2, 4096, 4
    want = 6 * n_l / (8 * (t - 1) * d * 2.0)
    assert cr.tp_layer_intensity(n_l, d, tp=t, bytes_per_element=2.0) == pytest.approx(want)


def test_dp_intensity_matches_comms_step_times():
    # Step FLOP over the all-reduce's bytes, from comms' own functions: I = t_compute P /
    # (t_comm B). Any model size and peak give the same ratio.
    n, t, p, bw, peak = 7e9, 4 * 8192, 16, 50e9, 1e15
    t_comm = comms.ring_all_reduce_time_s(2.0 * n, p, link_bytes_per_s=bw)
    flop = 6 * n * t
    assert cr.dp_intensity(t, dp=p, bytes_per_element=2.0) == pytest.approx(
        flop / (t_comm * bw), rel=1e-12)
    assert peak > 0


def test_attainable_fraction_is_capped_at_one():
    assert cr.attainable_fraction(1e6, peak_flop_per_s=1e15, link_bytes_per_s=50e9) == 1.0


def test_one_rank_is_rejected():
    with pytest.raises(ValueError, match="tp"):
        cr.tp_layer_intensity(1e6, 1024, tp=1, bytes_per_element=2.0)
    with pytest.raises(ValueError, match="dp"):
        cr.dp_intensity(1e4, dp=1, bytes_per_element=2.0)
