"""Chapter 3's autograder: the right answer passes, each typical slip gets its own hint.

The wrong implementations are written here independently of the ones the checks carry.
"""

import pytest

from llmphys import grading, units


def kv_right(n_layers, n_heads, n_kv_heads, head_dim, bytes_per_element):
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_element


def layer_right(d_model, n_heads, n_kv_heads, head_dim, d_ff):
    q_and_o = 2 * d_model * n_heads * head_dim
    k_and_v = 2 * d_model * n_kv_heads * head_dim
    return q_and_o + k_and_v + 3 * d_model * d_ff + 2 * d_model


def test_kv_reference_and_right_answer_pass():
    fb = grading.check_kv_bytes_per_token(kv_right)
    assert fb.passed and fb.n_cases == fb.n_matched == 12
    # Llama 3 8B: 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes (kv_cache doctest)
    assert kv_right(32, 32, 8, 128, 2.0) == 131_072


@pytest.mark.parametrize("wrong, hint", [
    (lambda n_layers, h, g, c, b: n_layers * g * c * b, "did you count both K and V?"),
    (lambda n_layers, h, g, c, b: 2 * n_layers * h * c * b, "you counted query heads"),
    (lambda n_layers, h, g, c, b: 2 * g * c * b, "every one of the n_layers layers"),
    (lambda n_layers, h, g, c, b: kv_right(n_layers, h, g, c, b) / 2**30, "not GiB"),
    (lambda n_layers, h, g, c, b: kv_right(n_layers, h, g, c, b) / 1e9, "asked in base units"),
    (lambda n_layers, h, g, c, b: 8 * kv_right(n_layers, h, g, c, b), "bits where bytes"),
    (lambda n_layers, h, g, c, b: 2 * n_layers * g * c * round(b), "do not round it"),
])
def test_kv_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_kv_bytes_per_token(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_kv_gib_hint_names_the_prefix():
    fb = grading.check_kv_bytes_per_token(
        lambda n_layers, h, g, c, b: kv_right(n_layers, h, g, c, b) / units.GiB)
    assert "2^30" in fb.message


def test_layer_reference_and_right_answer_pass():
    fb = grading.check_decoder_layer_params(layer_right)
    assert fb.passed and fb.n_cases == 12
    # Llama 3 8B: (8,030,261,248 - 2 x 128,256 x 4,096 - 4,096) / 32 = 218,112,000 per layer
    # (the HF safetensors total in data/models.toml, less embeddings, head and final norm).
    assert layer_right(4096, 32, 8, 128, 14336) == (8_030_261_248 - 2 * 128_256 * 4096 - 4096) / 32


@pytest.mark.parametrize("wrong, hint", [
    (lambda d, h, g, c, f: layer_right(d, h, g, c, f) - d * f, "three matrices"),
    (lambda d, h, g, c, f: layer_right(d, h, h, c, f), "query heads for K and V"),
    (lambda d, h, g, c, f: layer_right(d, h, g, c, f) - 2 * d, "RMSNorm gain"),
    (lambda d, h, g, c, f: layer_right(d, h, g, c, f) - d * h * c, "W_O"),
    (lambda d, h, g, c, f: 2 * d * d + 2 * d * g * c + 3 * d * f + 2 * d, "not d_model x d_model"),
])
def test_layer_typical_mistakes_get_their_hint(wrong, hint):
    fb = grading.check_decoder_layer_params(wrong)
    assert not fb.passed and hint in fb.message, fb.message


def test_stub_is_not_implemented_yet():
    def stub(*args):
        raise NotImplementedError

    for check in (grading.check_kv_bytes_per_token, grading.check_decoder_layer_params):
        fb = check(stub)
        assert not fb.passed and "not implemented yet" in fb.message


def test_not_callable_is_a_clear_error():
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_kv_bytes_per_token(131_072)
    with pytest.raises(TypeError, match="fn: pass the function itself"):
        grading.check_decoder_layer_params(layer_right(4096, 32, 8, 128, 14336))


def test_checks_are_registered():
    assert {"check_kv_bytes_per_token", "check_decoder_layer_params"} <= set(grading.checks())
