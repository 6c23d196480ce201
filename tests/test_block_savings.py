"""Parallel blocks and tied embeddings: savings against closed forms and recounts."""

import dataclasses

import pytest

from llmphys import accounting, specs
from llmphys import block_savings as bs


def test_parallel_block_saves_one_rmsnorm_gain_per_layer_and_that_is_the_recount():
    m = specs.model("llama3_8b")
    s = bs.parallel_block_savings(m)
    one_norm = dataclasses.replace(m, n_norms_per_layer=1)
    assert s["norm_params"] == accounting.n_params(m) - accounting.n_params(one_norm) == 32 * 4096


def test_layernorm_models_save_gain_and_bias():
    m = specs.model("gpt3_175b")
    assert bs.parallel_block_savings(m)["norm_params"] == 96 * 2 * 12288


def test_elementwise_bytes_are_one_norm_and_one_residual_add_per_layer():
    m = specs.model("llama3_70b")
    s = bs.parallel_block_savings(m)
    assert s["elementwise_bytes"] == 80 * (2 + 3) * 8192 * 2.0
    total = sum(accounting.elementwise_bytes_per_token(m).values())
    assert s["elementwise_share"] == pytest.approx(s["elementwise_bytes"] / total, rel=1e-15)
    assert 0 < s["elementwise_share"] < 0.5


def test_fused_input_width_is_qkv_plus_gate_and_up():
    s = bs.parallel_block_savings(specs.model("llama3_8b"))
    assert s["fused_input_width"] == (32 + 2 * 8) * 128 + 2 * 14336
    assert s["allreduces_per_layer"] == 1


def test_tying_saves_v_times_d_and_nothing_for_a_tied_model():
    s = bs.tying_savings(specs.model("llama3_8b"))
    assert s["params"] == 128_256 * 4096
    # Llama 3 8B: 8,030,261,248 parameters untied (data/models.toml); the head is 6.54% of them
    assert s["share"] == pytest.approx(128_256 * 4096 / 8_030_261_248, rel=1e-15)
    gpt3 = specs.model("gpt3_175b")  # tied in the registry: replace() unties it for the count
    assert bs.tying_savings(gpt3)["params"] == 50_257 * 12_288


def test_a_model_with_four_norms_per_layer_is_refused():
    m = dataclasses.replace(specs.model("llama3_8b"), n_norms_per_layer=4)
    with pytest.raises(ValueError, match="norms per layer"):
        bs.parallel_block_savings(m)
