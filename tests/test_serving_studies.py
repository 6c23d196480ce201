"""What chapter 6 reads from the serving validation (llmphys.predict.serving_studies)."""

import pytest

from llmphys import predict
from llmphys.predict import serving_studies as st


def test_deepseek_decode_pool_is_read_per_node_and_streams_each_weight_twice():
    # The day-6 figure is per H800 node of eight GPUs, 14,800 output tokens/s (the source's
    # wording, quoted in the row), and Little's law puts 88 sequences on each GPU. With two
    # micro-batches every weight is streamed twice a step: at 12,672 tokens a half-batch still
    # touches every expert, so the weight time is exactly twice one batch's (float rounding).
    d = st.deepseek_decode_study()
    assert d["measured_per_node"] == 14_800.0
    assert round(d["batch_per_gpu"]) == 88
    assert d["weights_s"] == pytest.approx(2 * d["weights_one_batch_s"], rel=1e-12)
    assert d["all_to_all_s"] < d["step_s"]  # hidden behind the compute of the other micro-batch


@pytest.mark.parametrize("osl", [2048, 4096])
def test_qwen3_long_decodes_imply_one_step_on_h100_and_h200_at_batches_twofold_apart(osl):
    # TensorRT-LLM's Qwen3-235B table, 128 tokens in: at the batch the engine's cache and
    # limits give (no fitted constant enters it), the published rates imply the same step on
    # both chips within 2 % (measured: 1 % at 2,048 out, 0.3 % at 4,096), although the H200
    # holds more than twice the sequences: a per-step floor the model's terms do not have.
    h100 = st.implied_step(f"trtllm_qwen3_235b_a22b_h100_tp8_128_{osl}")
    h200 = st.implied_step(f"trtllm_qwen3_235b_a22b_h200_tp8_128_{osl}")
    assert h200["batch"] / h100["batch"] > 2.1
    assert h100["implied_step_s"] == pytest.approx(h200["implied_step_s"], rel=0.02)
    # the model's H100 step is short: 0.83 and 0.80 of the implied one at 2,048 and 4,096 out
    assert h100["predicted_step_s"] < 0.85 * h100["implied_step_s"]


def test_implied_step_is_the_batch_over_the_measured_rate():
    r = predict.serving_runs()["trtllm_qwen3_235b_a22b_h100_tp8_500_2000"]
    s = predict.predict_serve(r)
    fed = s.output_tokens_per_s * s.step_s  # replicas x fed batch x tokens a step
    got = st.implied_step(r.key)["implied_step_s"]
    assert got == pytest.approx(fed / r.measured_output_tokens_per_s, rel=1e-12)


def test_the_two_step_overheads_agree_per_layer_not_per_step():
    # Fitted on each source's row alone, the step overhead is 5.5 ms on NIM's 80-layer Llama 3.3
    # 70B (TensorRT-LLM, one user) and 2.5 ms on vLLM's 36-layer Qwen3-8B (four users): 2.2x
    # apart per step, within 2 % per layer. Chapter 6 states this as a hypothesis (the form was
    # found by looking at these two rows), so the test guards the sentence, not the model.
    r = {x["source"]: x for x in predict.overhead_by_source()}
    nim, vllm = r["nvidia_nim_benchmarking"], r["gpustack_performance_lab"]
    assert (nim["n_layers"], vllm["n_layers"]) == (80, 36)
    assert nim["overhead_s"] / vllm["overhead_s"] > 2.0
    assert nim["overhead_per_layer_s"] == pytest.approx(vllm["overhead_per_layer_s"], rel=0.02)
