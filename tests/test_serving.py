"""Serving studies against closed forms and invariants of the roofline decode step.

Per-operator balance, batch-1 floors and price ratios; and the compositions chapter 6 shows and
the claims ledger judges, so a change to one (the wrong chip count, dtype or batch) fails here.
"""

import dataclasses
import math

import pytest

from llmphys import economics, inference, serving, specs

DSV3, LLAMA = specs.model("deepseek_v3"), specs.model("llama3_70b")
H100, GB200 = specs.accelerator("h100_sxm"), specs.accelerator("gb200")


def test_deepseek_v3_routed_experts_need_a_batch_of_about_9451_on_an_h100():
    # ridge x E / k = (989.4e12 / 3.35e12) x 256 / 8 = 295.34 x 32 = 9,451 (FP8 weights and
    # FP8 math: the ridge doubles and the bytes halve); the dense operators need 295.
    b = serving.operator_balance_batch(DSV3, H100, weight_dtype="fp8")
    assert b["dense"] == pytest.approx(989.4e12 / 3.35e12, rel=1e-3)
    assert round(b["routed_experts"]) == 9451
    # The whole-step balance batch pools both and lies between them (5,404).
    whole = inference.balance_batch(DSV3, H100, weight_dtype="fp8")
    assert b["dense"] < whole < b["routed_experts"]
    assert set(serving.operator_balance_batch(LLAMA, H100)) == {"dense"}


def test_a_routed_expert_at_its_balance_batch_has_the_ridge_intensity():
    # Independent check: at B = B_expert each expert multiplies B k / E tokens, 2 FLOP per
    # weight per token, over b bytes per weight.
    b_e = serving.operator_balance_batch(DSV3, H100, weight_dtype="bf16")["routed_experts"]
    tokens_per_expert = b_e * DSV3.moe.n_experts_per_token / DSV3.moe.n_experts
    assert 2 * tokens_per_expert / 2.0 == pytest.approx(H100.peak_bf16_flop_per_s
                                                        / H100.hbm_bytes_per_s)


def test_expert_parallel_batch1_floor_reads_one_expert_per_layer():
    # 58 MoE layers x one 44.04M-parameter expert at 1 byte, plus the 16.2B non-routed
    # weights over 72 chips, at 8 TB/s: (2.554 + 0.225) GB / 8 TB/s = 0.347 ms.
    f = serving.batch1_latency_floor_s(DSV3, GB200, n_chips=72, weight_dtype="fp8")
    expert = 3 * 7168 * 2048
    assert f["weights_s"] == pytest.approx((58 * expert + 16.22e9 / 72) / 8e12, rel=2e-3)
    even = serving.batch1_latency_floor_s(DSV3, GB200, n_chips=72, weight_dtype="fp8",
                                          expert_parallel=False)["weights_s"]
    assert even == pytest.approx(inference.decode_step(
        DSV3, GB200, batch_size=1, context_tokens=0, n_chips=72, weight_dtype="fp8")["step_time_s"])
    assert f["weights_s"] / even == pytest.approx(5.4, abs=0.1)
    # Fewer chips than routed experts: some chip holds ceil(8 / 4) = 2 of the token's experts.
    four = serving.batch1_latency_floor_s(DSV3, GB200, n_chips=4, weight_dtype="fp8")
    assert four["weights_s"] > (58 * 2 * expert) / 8e12


def test_dense_floor_adds_two_all_reduces_per_layer():
    lat = economics.price("collective_latency_s.nvlink_small_all_reduce")
    f = serving.batch1_latency_floor_s(LLAMA, GB200, n_chips=72, collective_latency_s=lat.value)
    assert f["n_collectives"] == 160  # 80 layers
    assert f["collectives_s"] == pytest.approx(160 * lat.value)
    lo, hi = (160 * x for x in lat.range)
    assert 0.5e-3 < lo < hi < 4e-3  # 1-3 ms, against 0.24 ms of weight reads
    # 70.6B parameters less the 1.05B-row input embedding, BF16: 139.0 GB over 72 x 8 TB/s.
    assert f["weights_s"] == pytest.approx(139.0e9 / (72 * 8e12), rel=0.01)


def test_output_input_cost_ratio_grows_with_the_prompt():
    # Llama 3 70B on 8 H100s, 512 output tokens, 0.5K to 32K of prompt. The reviewers' 1.0, 2.2,
    # 4.0, 7.2, 22.7 (issue 15) used the 80 GB label; at the 85.5 GB the driver reports, the
    # larger batch that fits lowers the long-prompt ratios a little.
    def curve(acc, priced=False):
        return [round(serving.output_input_cost_ratio(LLAMA, acc, prompt_tokens=s,
                                                      output_tokens=512, n_chips=8,
                                                      priced=priced), 1)
                for s in (512, 2048, 4096, 8192, 32768)]
    assert curve(dataclasses.replace(H100, hbm_bytes=H100.hbm_bytes_nominal)) == [
        1.0, 2.2, 4.0, 7.2, 22.7]
    assert curve(H100) == [1.0, 2.2, 3.9, 7.1, 22.3]
    # as served (issue 32 item 24): the compute-bound prefill at the fitted GEMM efficiency (0.44)
    # and the memory-bound decode at the HBM efficiency (0.9) halve the long-prompt ratios (with
    # the constants refitted in issue 28's second round, 0.45 and a 2.2 ms step: 11.2 at 32K,
    # 10.9 before; pinned by two sources each in its fourth round, 0.48 and 3.0 ms: 11.9)
    assert curve(H100, priced=True) == [1.0, 1.2, 2.1, 3.8, 11.9]


def test_cost_at_max_batch_matches_the_roofline_cost():
    b = inference.max_batch_by_memory(LLAMA, H100, context_tokens=8192, n_chips=8)
    direct = inference.cost_per_token_usd(LLAMA, H100, batch_size=b, context_tokens=8192, n_chips=8,
                                          usd_per_chip_hour=2.95)
    assert serving.cost_per_token_at_max_batch_usd(LLAMA, H100, context_tokens=8192, n_chips=8,
                                                   usd_per_chip_hour=2.95) == direct


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="n_chips"):
        serving.batch1_latency_floor_s(LLAMA, H100, n_chips=0)
    with pytest.raises(ValueError, match="collective_latency_s"):
        serving.batch1_latency_floor_s(LLAMA, H100, n_chips=8, collective_latency_s=-1.0)
    with pytest.raises(ValueError, match="output_tokens"):
        serving.output_input_cost_ratio(LLAMA, H100, prompt_tokens=64, output_tokens=0, n_chips=8)
    with pytest.raises(ValueError, match="fits"):
        serving.cost_per_token_at_max_batch_usd(LLAMA, H100, context_tokens=1024, n_chips=1,
                                                usd_per_chip_hour=2.95)
    assert math.isfinite(serving.operator_balance_batch(DSV3, GB200)["dense"])


def test_decode_efficiency_is_one_above_the_balance_batch_and_falls_with_context():
    # No cache, B = 2 B*: compute-bound, eta = 1; at B = B*/2 the step is memory-bound and
    # eta = 1/2 exactly (compute time halves, memory time is flat).
    llama8 = specs.model("llama3_8b")
    b_star = inference.balance_batch(specs.model("llama3_8b"), H100)
    assert serving.decode_efficiency(llama8, H100, context_tokens=0, n_chips=1,
                                     batch_size=2 * b_star) == pytest.approx(1.0)
    assert serving.decode_efficiency(llama8, H100, context_tokens=0, n_chips=1,
                                     batch_size=b_star / 2) == pytest.approx(0.5, rel=1e-9)
    etas = [serving.decode_efficiency(llama8, H100, context_tokens=t, n_chips=1)
            for t in (1024, 2048, 8192)]
    assert etas == sorted(etas, reverse=True) and 0.3 < etas[0] < 0.33 and etas[-1] < 0.06
