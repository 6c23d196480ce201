"""Parameter and FLOP counts against published totals.

Tolerances: where the official checkpoint exists, its safetensors total is an
exact integer and our count must equal it (the config fully determines the
shapes). GPT-3, Gopher and Chinchilla were published only as rounded figures
(175B, 280B, 70B), so we allow 0.5%: the rounding of the last quoted digit.
"""

import pytest

from llmphys import accounting, specs

EXACT = ["llama2_7b", "llama2_70b", "llama3_8b", "llama3_70b", "llama31_405b", "mistral_7b",
         "mixtral_8x7b", "mixtral_8x22b", "qwen25_72b"]


@pytest.mark.parametrize("key", EXACT)
def test_n_params_equals_the_checkpoint_count_exactly(key):
    m = specs.model(key)
    assert accounting.n_params(m) == m.published_n_params


@pytest.mark.parametrize("key", ["gpt3_175b", "chinchilla_70b", "gopher_280b"])
def test_n_params_matches_rounded_paper_figures(key):
    m = specs.model(key)
    assert accounting.n_params(m) == pytest.approx(m.published_n_params, rel=0.005)


def test_gopher_needs_its_relative_position_projections_to_reach_280b():
    # 12 L d^2 + embeddings gives ~258B; Transformer-XL's per-layer W_R adds L d^2.
    import dataclasses
    gopher = specs.model("gopher_280b")
    without = dataclasses.replace(gopher, position="rope")  # same shapes, no W_R
    assert accounting.n_params(without) / 1e9 == pytest.approx(258.2, abs=0.1)
    assert accounting.n_params(gopher) / 1e9 == pytest.approx(279.7, abs=0.1)


def test_deepseek_v3_total_is_671b():
    # DeepSeek-V3 report: 671B total, excluding the 14B multi-token-prediction module.
    # The published figure is rounded to 1B: 0.1%.
    m = specs.model("deepseek_v3")
    assert accounting.n_params(m) == pytest.approx(671e9, rel=1e-3)


def test_deepseek_v3_active_without_input_embedding_is_36_6b():
    # The weights README counts 36.6B activated parameters without the input embedding
    # (the report rounds to 37B). Rounded to 0.1B: tolerance 0.2%.
    m = specs.model("deepseek_v3")
    active = accounting.n_active_params(m) - m.vocab_size * m.d_model
    assert active == pytest.approx(36.6e9, rel=2e-3)


@pytest.mark.parametrize("key,active_b", [("mixtral_8x7b", 12.9), ("mixtral_8x22b", 39.0)])
def test_mixtral_active_params_match_the_announcement(key, active_b):
    # Mistral AI quotes 12.9B and 39B active; 39B is rounded to 1B, so 1.5%.
    assert accounting.n_active_params(specs.model(key)) / 1e9 == pytest.approx(active_b, rel=0.015)


def test_dense_models_use_every_parameter(tiny_gqa):
    assert accounting.n_active_params(tiny_gqa) == accounting.n_params(tiny_gqa)


def test_breakdown_sums_to_total():
    m = specs.model("deepseek_v3")
    assert sum(accounting.param_breakdown(m).values()) == accounting.n_params(m)


def test_tiny_model_count_by_hand(tiny_gqa):
    # d=16, h=4, g=2, c=4, d_ff=24, V=64, 2 layers, RMSNorm, SwiGLU, untied.
    attn = 16 * 4 * 4 + 2 * 16 * 2 * 4 + 4 * 4 * 16  # Q + K,V + O = 256 + 256 + 256
    mlp = 3 * 16 * 24
    per_layer = attn + mlp + 2 * 16
    expected = 2 * per_layer + 16 + 2 * 64 * 16
    assert accounting.n_params(tiny_gqa) == expected


def test_train_flop_reproduces_gpt3_and_llama31_405b():
    # GPT-3 paper Table D.1: 3.14e23 FLOP (175B params, 300B tokens).
    gpt3 = specs.model("gpt3_175b")
    c = accounting.train_flop(gpt3.published_n_params, gpt3.n_training_tokens)
    assert c == pytest.approx(3.14e23, rel=0.01)
    # Llama 3 paper: 3.8e25 FLOP for 405B trained on 15.6T tokens; 6ND = 3.80e25.
    llama = specs.model("llama31_405b")
    c = accounting.train_flop(accounting.n_params(llama), llama.n_training_tokens)
    assert c == pytest.approx(3.8e25, rel=0.01)


def test_forward_flop_is_about_twice_the_parameters_at_short_context():
    m = specs.model("llama3_70b")
    f = accounting.forward_flop_per_token(m, context_tokens=1)
    # 2N minus the embedding look-up, plus a negligible attention term.
    assert f == pytest.approx(2 * (accounting.n_params(m) - m.vocab_size * m.d_model), rel=1e-4)


def test_attention_term_grows_linearly_with_context_until_the_window():
    m = specs.model("mistral_7b")
    a1 = accounting.attention_flop_per_token(m, context_tokens=1024)
    a2 = accounting.attention_flop_per_token(m, context_tokens=2048)
    assert a2 == pytest.approx(2 * a1)
    w = m.sliding_window_tokens
    assert accounting.attention_flop_per_token(m, context_tokens=4 * w) == \
        accounting.attention_flop_per_token(m, context_tokens=w)


@pytest.mark.parametrize("kwargs,name", [({"n_params": 0, "n_tokens": 1}, "n_params"),
                                         ({"n_params": 1, "n_tokens": -5}, "n_tokens")])
def test_train_flop_rejects_non_positive_inputs(kwargs, name):
    with pytest.raises(ValueError, match=name):
        accounting.train_flop(**kwargs)


def test_negative_context_is_rejected():
    with pytest.raises(ValueError, match="context_tokens"):
        accounting.forward_flop_per_token(specs.model("llama3_8b"), context_tokens=-1)


# ----------------------------------------------------------------- architecture chapter

def test_attention_rivals_weights_near_six_d_model_for_gpt3():
    # MHA with d_ff = 4d: 2 x 12 L d^2 = 4 L d T  =>  T* = 6d. GPT-3's tied head and
    # biases add 0.4%, so 1% is the tolerance.
    gpt3 = specs.model("gpt3_175b")
    t = accounting.attention_rivals_params_context_tokens(gpt3)
    assert t == pytest.approx(6 * gpt3.d_model, rel=0.01)


@pytest.mark.parametrize("key", ["llama3_70b", "deepseek_v3", "mixtral_8x7b"])
def test_at_the_rival_context_attention_equals_the_weight_flop(key):
    m = specs.model(key)
    t = accounting.attention_rivals_params_context_tokens(m)
    parts = accounting.flop_breakdown_per_token(m, context_tokens=t)
    assert parts["attention matmuls"] == pytest.approx(parts["weight matmuls"], rel=1e-12)


def test_sliding_window_means_attention_never_rivals_the_weights():
    mistral = specs.model("mistral_7b")
    assert accounting.attention_rivals_params_context_tokens(mistral) == float("inf")


def test_matmul_parts_of_the_breakdown_are_the_forward_flop():
    m = specs.model("deepseek_v3")
    parts = accounting.flop_breakdown_per_token(m, context_tokens=4096)
    total = accounting.forward_flop_per_token(m, context_tokens=4096)
    assert parts["weight matmuls"] + parts["attention matmuls"] == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_over_99_percent_of_flop_are_matmuls_even_if_elementwise_costs_are_10x(monkeypatch, scale):
    monkeypatch.setattr(accounting, "ELEMENTWISE_FLOP",
                        {k: v * scale for k, v in accounting.ELEMENTWISE_FLOP.items()})
    for m in specs.models().values():
        share = accounting.matmul_flop_share(m, context_tokens=8192)
        assert share > (0.99 if scale == 1.0 else 0.97), m.key


def test_llama2_7b_width_is_eight_thirds_d_rounded_up_to_256():
    # Llama's FeedForward: hidden = 2/3 * 4d, rounded up to a multiple of 256 -> 11008.
    m = specs.model("llama2_7b")
    assert -(-accounting.swiglu_matched_d_ff(m.d_model) // 256) * 256 == m.d_ff
    # parameter match with a 4d GELU MLP: 3 d (8d/3) = 8 d^2
    assert (3 * m.d_model * accounting.swiglu_matched_d_ff(m.d_model)
            == pytest.approx(8 * m.d_model**2))


def test_layernorm_costs_one_extra_vector_per_norm():
    import dataclasses
    m = specs.model("llama3_70b")
    ln = dataclasses.replace(m, norm="layernorm")
    assert accounting.n_params(ln) - accounting.n_params(m) == (2 * m.n_layers + 1) * m.d_model


def test_attention_share_of_llama31_405b_at_8k_is_the_closed_form():
    # Llama 3.1 405B (126 layers, 128 heads x 128 dims, untied): attention is 2 L h (2 d_head) T
    # FLOP per token over 2 N_matmul, N_matmul = N - embeddings. At the 8K pre-training length
    # the average token sees (8192 + 1) / 2 keys: about 4.2%, the one figure chapter 1 states.
    m = specs.model("llama31_405b")
    t = (8192 + 1) / 2
    n_matmul = accounting.n_params(m) - accounting.embedding_params(m)
    expected = 2 * 126 * 128 * 256 * t / (2 * n_matmul)
    got = accounting.attention_share(m, context_tokens=t)
    assert got == pytest.approx(expected, rel=1e-12)
    assert 0.041 < got < 0.043


def test_attention_share_is_linear_in_context_and_one_at_the_rival_context():
    m = specs.model("llama3_70b")
    s1 = accounting.attention_share(m, context_tokens=1000.0)
    assert accounting.attention_share(m, context_tokens=4000.0) == pytest.approx(4 * s1, rel=1e-12)
    t = accounting.attention_rivals_params_context_tokens(m)
    assert accounting.attention_share(m, context_tokens=t) == pytest.approx(1.0, rel=1e-12)


def test_checkpoint_weight_bytes_counts_deepseek_v3_in_fp8_and_llama_in_bf16():
    # FP8: 1 byte per weight but the BF16 embedding and head (2 x 129,280 x 7,168 at 2 bytes).
    ds = specs.model("deepseek_v3")
    wide = 2 * 129_280 * 7_168
    assert accounting.checkpoint_weight_bytes(ds) == pytest.approx(
        (accounting.n_params(ds) - wide) + 2 * wide, rel=1e-12)
    assert 670e9 < accounting.checkpoint_weight_bytes(ds) < 675e9
    m = specs.model("llama3_70b")
    assert accounting.checkpoint_weight_bytes(m) == 2 * accounting.n_params(m)


def test_attention_term_is_twice_kaplans_qk_only_count():
    # Kaplan et al. 2020 table 1: 2 n_layer n_ctx d_attn (QK^T only); the library adds the
    # equal AV product, as Hoffmann et al. 2022 appendix F do.
    m = specs.model("gpt3_175b")
    kaplan = 2 * m.n_layers * 2048 * m.n_heads * m.d_head
    assert accounting.attention_flop_per_token(m, context_tokens=2048) == 2 * kaplan


def test_unfused_elementwise_bytes_of_llama3_70b_by_hand():
    # Per token, BF16: 161 norms read+write 8,192; 80 SwiGLUs read 2 x 28,672 and write one;
    # 80 x (64 + 8) heads of 128 rotated (read+write); 160 residual adds read 2d, write d.
    m = specs.model("llama3_70b")
    got = accounting.elementwise_bytes_per_token(m)
    assert got["norms"] == 2 * 161 * 8192 * 2
    assert got["activations"] == 3 * 80 * 28_672 * 2
    assert got["rope"] == 2 * 80 * 72 * 128 * 2
    assert got["residual adds"] == 3 * 160 * 8192 * 2


def test_elementwise_work_costs_hundreds_of_times_more_in_bytes_than_in_flop():
    # "Tiny in FLOP but not in time": at the H100's ridge (~295 FLOP/B) an op of a few FLOP
    # per byte-pair runs ~100x below the ridge, so its HBM time dwarfs its FLOP time.
    t = accounting.elementwise_roofline_s_per_token(
        specs.model("llama3_70b"), specs.accelerator("h100_sxm"), context_tokens=8192)
    assert t["elementwise_hbm_s"] > 100 * t["elementwise_flop_s"]
    assert 0.03 < t["elementwise_hbm_s"] / t["matmul_s"] < 0.1
