"""Expert all-to-all, the parameter bound of a scale-up domain, and pipelining."""

import pytest

from llmphys import economics, inference, scale_up, specs
from llmphys.studies import scale_up as study_scale_up

DSV3 = specs.model("deepseek_v3")
LLAMA = specs.model("llama3_70b")


@pytest.mark.parametrize("key,ratio", [("h100_sxm", 9.0), ("h200", 9.0), ("b200", 18.0),
                                       ("gb200", 18.0)])
def test_scale_up_to_scale_out_ratio_per_generation(key, ratio):
    # NVLink 4: 450 GB/s each way, NVLink 5: 900; one 400 Gb/s (50 GB/s) NIC per GPU in both.
    assert scale_up.scale_up_to_out_ratio(specs.accelerator(key)) == pytest.approx(ratio)


def test_deepseek_reports_a_ratio_of_about_three_on_h800():
    # DeepSeek-V3 report sec. 3.2.2: NVLink 160 GB/s achieved vs IB 50 GB/s, "roughly 3.2 times".
    p = economics.prices()
    ratio = (p["link_bytes_per_s.h800_nvlink_achieved"].value
             / p["link_bytes_per_s.h800_infiniband"].value)
    assert ratio == pytest.approx(3.2)


def test_all_to_all_over_compute_does_not_depend_on_batch(h100):
    ratios = []
    for b in (512, 4096, 32768):
        comm = scale_up.expert_all_to_all(DSV3, batch_size=b, n_chips=64, link_bytes_per_s=450e9,
                                          chips_per_domain=1)["time_s"]
        comp = inference.decode_step(DSV3, h100, batch_size=b, context_tokens=0, n_chips=64,
                                     weight_dtype="fp8")["compute_time_s"]
        ratios.append(comm / comp)
    assert ratios[0] == pytest.approx(ratios[1], rel=1e-9) == pytest.approx(ratios[2], rel=1e-9)


def test_all_to_all_bytes_by_hand():
    # (4096 / 8) tokens x 8 experts x 7168 x 3 bytes x 58 layers x 7/8 off-chip.
    r = scale_up.expert_all_to_all(DSV3, batch_size=4096, n_chips=8, link_bytes_per_s=1.0)
    assert r["bytes_per_chip"] == pytest.approx(512 * 8 * 7168 * 3 * 58 * 7 / 8)
    inside = scale_up.expert_all_to_all(DSV3, batch_size=4096, n_chips=8, link_bytes_per_s=1.0,
                                        chips_per_domain=8)
    assert inside["bytes_per_chip"] == 0.0  # nothing leaves a domain that holds every expert


def test_one_nvl72_rack_bounds_an_fp8_model_near_seven_trillion_parameters():
    gb200 = specs.accelerator("gb200")
    n = scale_up.max_total_params(gb200, n_chips=gb200.scale_up_domain_size,
                                  weight_bytes_per_param=1.0)
    # Half of 72 GPUs' usable HBM (186 GiB each, estimated in the registry) at 1 byte/param.
    assert n == pytest.approx(0.5 * 72 * 186 * 2**30)
    h100 = specs.accelerator("h100_sxm")
    box = scale_up.max_total_params(h100, n_chips=8, weight_bytes_per_param=1.0,
                                    weight_fraction=1.0)
    # DeepSeek-V3's 671B parameters in FP8 fill one HGX H100 box's usable HBM (8 x 81,559 MiB,
    # nvidia-smi) to within 2-3%: nothing is left for a KV cache, activations or the CUDA context.
    assert 1.0 < box / 671e9 < 1.03


def test_pipelining_divides_weights_but_not_kv_latency_or_throughput(h100):
    runs = [scale_up.pipelined_decode(LLAMA, h100, n_stages=s, chips_per_stage=8, batch_size=32,
                                      context_tokens=8192) for s in (1, 2, 4)]
    for s, r in zip((1, 2, 4), runs, strict=True):
        assert r["weight_bytes_per_chip"] == pytest.approx(runs[0]["weight_bytes_per_chip"] / s)
        for k in ("kv_bytes_per_chip", "token_latency_s", "tokens_per_s_per_chip"):
            assert r[k] == pytest.approx(runs[0][k], rel=1e-12)


def test_pipeline_boundary_slack_formula(h100):
    assert scale_up.pipeline_boundary_slack(DSV3, h100, layers_per_stage=4) == pytest.approx(
        2 * 8 * 4 / 9)


def test_bad_arguments_are_named(h100):
    with pytest.raises(ValueError, match="dense"):
        scale_up.expert_all_to_all(LLAMA, batch_size=1, n_chips=8, link_bytes_per_s=1.0)
    with pytest.raises(ValueError, match="chips_per_domain"):
        scale_up.expert_all_to_all(DSV3, batch_size=1, n_chips=8, link_bytes_per_s=1.0,
                                   chips_per_domain=16)
    with pytest.raises(ValueError, match="weight_fraction"):
        scale_up.max_total_params(h100, n_chips=8, weight_bytes_per_param=1.0, weight_fraction=2.0)


def test_scale_out_gap_is_the_datasheet_ratio_per_system():
    # NVLink 4 (H100) 450 GB/s each way over ConnectX-7, 400 Gb/s = 50 GB/s: 9x. NVLink 5
    # (B200) 900 GB/s over ConnectX-8, 800 Gb/s = 100 GB/s: 9x; over ConnectX-7: 18x. NVLink 3
    # (A100) 300 GB/s over 200 Gb/s (25 GB/s): 12x. DeepSeek-V3 sec. 3.2.2: 160 / 50 = 3.2.
    h100, b200, a100 = (specs.accelerator(k) for k in ("h100_sxm", "b200", "a100_sxm"))
    gap = study_scale_up.scale_out_gap(hopper=h100, blackwell=b200, ampere=a100)
    assert gap == pytest.approx({"hopper": 9.0, "blackwell_800g": 9.0, "b200_400g": 18.0,
                                 "a100": 12.0, "h800_measured": 3.2})


def test_pipelining_against_one_wide_stage_is_the_weight_term_spread_four_ways():
    # Both layouts are memory-bound at 8,192 tokens; per chip they hold the same cache, so the
    # latency ratio is (W + 32 k) / (W / 4 + 32 k), W the weight bytes, k one sequence's cache.
    gb200 = specs.accelerator("gb200")
    w = inference.weight_bytes_read(LLAMA, batch_size=128)
    k = inference.decode_step(LLAMA, gb200, batch_size=1, context_tokens=8192,
                              n_chips=8)["kv_bytes"]
    latency = study_scale_up.pipelining_against_wide(LLAMA, gb200, "token_latency_s")
    assert latency == pytest.approx((w + 32 * k) / (w / 4 + 32 * k), rel=1e-9)
    kv = study_scale_up.pipelining_against_wide(LLAMA, gb200, "kv_bytes_per_chip")
    assert kv == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n_stages"):
        study_scale_up.pipelining_against_wide(LLAMA, gb200, "token_latency_s", n_stages=0)


def test_expert_all_to_all_over_compute_is_the_closed_form_ratio_at_any_batch():
    # Closed form (module docstring): all-to-all time over compute time does not depend on the
    # batch; at DeepSeek-V3's 320-GPU decode deployment (sec. 3.4.2), 8-GPU H100 nodes over
    # InfiniBand, it is the mechanism's two times at batch 4,096 divided (rel. 1e-12: float
    # order of operations).
    dsv3, h100 = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    n = int(economics.price("deployment_n_gpus.deepseek_v3_decode").value)
    comm = scale_up.expert_all_to_all(
        dsv3, batch_size=4096, n_chips=n, chips_per_domain=8,
        link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
    )["time_s"]
    comp = inference.decode_step(
        dsv3, h100, batch_size=4096, context_tokens=0, n_chips=n, weight_dtype="fp8"
    )["compute_time_s"]
    got = study_scale_up.expert_all_to_all_over_compute(dsv3, h100, n_chips=n, fabric="scale_out")
    assert got == pytest.approx(comm / comp, rel=1e-12)
    assert got > 1  # across InfiniBand the exchange outlasts the FP8 compute
    with pytest.raises(ValueError, match="fabric must be"):
        study_scale_up.expert_all_to_all_over_compute(dsv3, h100, n_chips=n, fabric="nvlink")
