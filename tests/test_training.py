import pytest

from llmphys import accounting, specs, training


def test_mixed_precision_adam_needs_16_bytes_per_parameter():
    # ZeRO (Rajbhandari et al. 2020), sec. 3.1: 2 + 2 + 12 = 16 bytes per parameter.
    assert sum(training.training_state_bytes_per_param().values()) == 16.0


def test_fp32_sgd_without_master_copy():
    parts = training.training_state_bytes_per_param(weight_dtype="fp32", grad_dtype="fp32",
                                                    master_weights=False, optimizer="sgd")
    assert sum(parts.values()) == 8.0


def test_llama31_405b_run_time_is_consistent_with_its_paper():
    # Llama 3 paper: 3.8e25 FLOP on up to 16,384 H100s at 38-43% MFU (BF16), i.e. about
    # 8-9 weeks of compute. 6ND with the exact count gives the same FLOP.
    m, h100 = specs.model("llama31_405b"), specs.accelerator("h100_sxm")
    c = accounting.train_flop(accounting.n_params(m), m.n_training_tokens)
    days = training.training_time_s(c, n_chips=16_384, peak_flop_per_s=h100.peak_bf16_flop_per_s,
                                    mfu=0.40) / 86400
    assert 60 < days < 75


def test_mfu_inverts_training_time():
    t = training.training_time_s(1e24, n_chips=1000, peak_flop_per_s=1e15, mfu=0.37)
    assert training.model_flop_utilization(1e24, time_s=t, n_chips=1000,
                                           peak_flop_per_s=1e15) == pytest.approx(0.37)


@pytest.mark.parametrize("kwargs,name", [({"mfu": 1.2}, "mfu"), ({"mfu": 0}, "mfu"),
                                         ({"mfu": 0.5, "n_chips": 0}, "n_chips")])
def test_bad_arguments_name_themselves(kwargs, name):
    args = {"n_chips": 8, "peak_flop_per_s": 1e15} | kwargs
    with pytest.raises(ValueError, match=name):
        training.training_time_s(1e20, **args)


def test_unknown_optimizer_lists_the_known_ones():
    with pytest.raises(ValueError, match="adamw"):
        training.training_state_bytes_per_param(optimizer="lion")


@pytest.mark.parametrize("key", ["llama31_405b", "llama3_8b", "gpt3_175b"])
def test_step_flop_is_three_forward_passes_at_the_causal_mean_context(key):
    # Independent route: accounting.forward_flop_per_token counts the model matrix by matrix
    # (embedding excluded, output head included) plus attention at (T + 1) / 2 keys; a step
    # is 3 forward passes (backward = 2 x forward, Kaplan et al. 2020, sec. 2.1). Exact up to
    # float rounding, so 1e-12.
    m = specs.model(key)
    n_matmul = accounting.n_active_params(m) - accounting.embedding_params(m)
    if m.tied_embeddings:
        n_matmul += m.vocab_size * m.d_model
    seq = 2048
    got = training.step_flop(n_matmul, n_layers=m.n_layers, n_heads=m.n_heads, d_head=m.d_head,
                             batch_size=4, seq_len=seq)
    want = 3 * 4 * seq * accounting.forward_flop_per_token(m, context_tokens=(seq + 1) / 2)
    assert got == pytest.approx(want, rel=1e-12)


def test_step_flop_of_llama31_405b_exceeds_6nd_by_its_attention_share():
    # At 8,192 tokens attention adds 4.2% to the weight matmuls (the foundations chapter's
    # accounting.attention_share); the step count must carry the same 4.2% over 6ND.
    f = training.step_flop(403.8e9, n_layers=126, n_heads=128, d_head=128, batch_size=2048,
                           seq_len=8192)
    assert f / (6 * 403.8e9 * 2048 * 8192) == pytest.approx(1.0418, abs=5e-4)


def test_step_flop_rejects_a_zero_batch():
    with pytest.raises(ValueError, match="batch_size"):
        training.step_flop(1e9, n_layers=1, n_heads=1, d_head=64, batch_size=0, seq_len=8)
