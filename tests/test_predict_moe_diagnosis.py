"""Diagnostics of the MoE rows' misses, against the published figures and closed forms."""

import pytest

from llmphys.predict import default_efficiencies, moe_diagnosis, training_runs, validation


def test_routing_gap_is_the_published_figures_difference_per_token():
    # 237 dropless against 295 forced TFLOP/s per GPU at 16K: F (1/237 - 1/295) per token,
    # F the causal model FLOP per token; exact to float rounding
    from llmphys.predict.runs import model_flop_per_token
    from llmphys.predict.train import _model

    r = training_runs()["mcore_qwen3_235b_16k"]
    f = model_flop_per_token(_model(r.model), seq_len=r.seq_len, attention_flops="causal")
    want = f * (1 / 237 - 1 / 295) / 1e12
    assert moe_diagnosis.routing_gap_s_per_token(r) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="forced_balance_value"):
        moe_diagnosis.routing_gap_s_per_token("mcore_qwen3_235b_row1")


def test_the_routing_gap_does_not_grow_with_context():
    # expert work is per token, attention per token grows with length: the gap stays within 5%
    # from 16K to 128K (the published figures: 173 and 170 us per token)
    g16 = moe_diagnosis.routing_gap_s_per_token("mcore_qwen3_235b_16k")
    g128 = moe_diagnosis.routing_gap_s_per_token("mcore_qwen3_235b_128k")
    assert g128 == pytest.approx(g16, rel=0.05)


def test_expert_gemm_time_per_token_is_the_closed_form():
    # 4 passes (recomputed) x 2 x 94 layers x top-8 x 3 x 4,096 x 1,536 FLOP at 0.66 of 989.4
    # TFLOP/s (the H100's dense BF16 peak): exact to float rounding
    e = default_efficiencies()
    want = 4 * 2 * 94 * 8 * 3 * 4096 * 1536 / (989.4e12 * e.gemm_bf16)
    got = moe_diagnosis.expert_gemm_s_per_token("mcore_qwen3_235b_16k", efficiencies=e)
    assert got == pytest.approx(want, rel=1e-3)  # the peak is 989.4 to its printed digits


def test_layer_passes_count_forward_and_backward_of_each_layer_and_micro_batch():
    # row 5: 256 micro-batches per replica, 94 layers over 8 stages, forward and backward
    eff = validation.fitted_efficiencies("megatron_moe_zoo")
    pred, meas, n = moe_diagnosis.layer_pass_times_s("mcore_qwen3_235b_row5", efficiencies=eff)
    assert n == 2 * 256 * 94 / 8
    assert meas * n == pytest.approx(29.0, rel=1e-9)  # the published step time
    assert pred < meas  # the row is over-predicted (the miss this diagnoses)
