"""The numpy decoder against the book's formulas and against itself.

Every variant is a registry model shrunk by ``transformer.tiny``, so the same
``Model`` drives the closed forms (accounting, kv_cache) and the instantiated
arrays. Computations run in float64: incremental and full passes differ only by
summation order, about 1e-15 relative, so 1e-10 is a loose but failing bound.
"""

import dataclasses

import numpy as np
import pytest
from model_variants import variants

from llmphys import accounting, kv_cache, specs, transformer

VARIANTS = variants()


@pytest.fixture(params=list(VARIANTS), scope="module")
def built(request):
    model = transformer.tiny(VARIANTS[request.param])
    params = transformer.init_params(model, np.random.default_rng(1))
    tokens = np.random.default_rng(2).integers(0, model.vocab_size, 11)
    return model, params, tokens


def test_parameter_count_of_the_instance_equals_the_formula(built):
    model, params, _ = built
    assert transformer.count_params(params) == accounting.n_params(model)


def test_cache_bytes_of_the_instance_equal_the_formula(built):
    model, params, tokens = built
    _, cache = transformer.forward(params, model, tokens)
    assert cache.nbytes == kv_cache.kv_cache_bytes(model, n_tokens=tokens.size, bytes_per_element=8)


def test_incremental_decoding_with_the_cache_equals_full_recomputation(built):
    model, params, tokens = built
    full, _ = transformer.forward(params, model, tokens)
    steps, cache = transformer.forward_incremental(params, model, tokens, n_prefill=4)
    np.testing.assert_allclose(steps, full, rtol=1e-10, atol=1e-10)
    assert cache.n_tokens == tokens.size


def test_a_later_token_cannot_change_earlier_logits(built):
    model, params, tokens = built
    before, _ = transformer.forward(params, model, tokens)
    changed = tokens.copy()
    changed[7] = (changed[7] + 1) % model.vocab_size
    after, _ = transformer.forward(params, model, changed)
    np.testing.assert_allclose(after[:7], before[:7], rtol=1e-12, atol=1e-12)
    assert np.abs(after[7:] - before[7:]).max() > 1e-3  # the change does reach position 7 on


def test_sliding_window_information_travels_at_most_layers_times_window_minus_one():
    # Each layer sees W positions (itself and W - 1 back); L layers reach L(W - 1) back.
    model = transformer.tiny(specs.model("mistral_7b"))  # L = 2, W = 4: reach 6
    params = transformer.init_params(model, np.random.default_rng(3))
    tokens = np.arange(12) % model.vocab_size
    before, _ = transformer.forward(params, model, tokens)
    changed = tokens.copy()
    changed[0] += 1
    after, _ = transformer.forward(params, model, changed)
    reach = model.n_layers * (model.sliding_window_tokens - 1)
    assert np.abs(after[reach] - before[reach]).max() > 1e-6
    np.testing.assert_array_equal(after[reach + 1:], before[reach + 1:])


def test_tiny_keeps_the_architectural_switches():
    assert transformer.tiny(specs.model("llama2_7b")).n_kv_heads == 4  # MHA stays MHA
    ds = transformer.tiny(specs.model("deepseek_v3"))
    assert ds.mla.q_lora_rank > 0 and ds.moe.n_shared_experts == 1 and ds.moe.n_dense_layers == 1


def test_greedy_decode_matches_argmax_of_full_passes():
    model = transformer.tiny(specs.model("llama3_8b"))
    params = transformer.init_params(model, np.random.default_rng(4))
    prompt = np.array([3, 14, 15, 92])
    out, cache = transformer.greedy_decode(params, model, prompt, 5)
    seq = list(prompt)
    for _ in range(5):
        seq.append(int(np.argmax(transformer.forward(params, model, seq)[0][-1])))
    assert out.tolist() == seq[len(prompt):] and cache.n_tokens == len(prompt) + 4


def test_float32_cache_is_half_the_float64_bytes():
    model = transformer.tiny(specs.model("llama3_8b"))
    params = transformer.init_params(model, np.random.default_rng(5), dtype=np.float32)
    _, cache = transformer.forward(params, model, np.arange(6))
    assert cache.nbytes == kv_cache.kv_cache_bytes(model, n_tokens=6, bytes_per_element=4)


@pytest.mark.parametrize("change,name", [({"position": "learned"}, "position"),
                                         ({"linear_bias": True}, "linear_bias"),
                                         ({"n_kv_heads": 3}, "n_kv_heads")])
def test_unsupported_configs_are_rejected_by_name(change, name):
    model = dataclasses.replace(transformer.tiny(specs.model("llama3_8b")), **change)
    with pytest.raises(ValueError, match=name):
        transformer.init_params(model, np.random.default_rng(0))


def test_out_of_vocabulary_tokens_are_rejected():
    model = transformer.tiny(specs.model("llama3_8b"))
    params = transformer.init_params(model, np.random.default_rng(0))
    with pytest.raises(ValueError, match="tokens"):
        transformer.forward(params, model, [model.vocab_size])
