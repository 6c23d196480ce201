"""KV-cache bytes: the formula against published per-token sizes and against the
bytes of caches actually built with numpy for small configs."""

import dataclasses

import numpy as np
import pytest

from llmphys import kv_cache, specs, units


def test_llama3_8b_caches_128_kib_per_token_in_bf16():
    # 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072 B, exactly.
    assert kv_cache.kv_bytes_per_token(specs.model("llama3_8b")) == 128 * units.KiB


def test_deepseek_v3_mla_caches_576_values_per_layer():
    # DeepSeek-V2/V3: the cache holds c_KV (512) and the RoPE key (64) per layer:
    # 61 x 576 x 2 bytes = 70,272 B per token.
    assert kv_cache.kv_bytes_per_token(specs.model("deepseek_v3")) == 61 * 576 * 2


def test_gqa_cache_is_mha_cache_times_kv_fraction():
    mha = specs.model("llama2_70b")
    gqa = dataclasses.replace(mha, n_kv_heads=mha.n_heads)
    ratio = kv_cache.kv_bytes_per_token(gqa) / kv_cache.kv_bytes_per_token(mha)
    assert ratio == mha.n_heads / mha.n_kv_heads == 8


def _numpy_cache(model, n_tokens, dtype, rng):
    """Run the K/V (or latent) projections of every layer over n_tokens random hidden
    states and keep what a decoder would keep: the whole cache, or the last W rows."""
    x = rng.standard_normal((n_tokens, model.d_model)).astype(dtype)
    keep = slice(-model.sliding_window_tokens, None) if model.sliding_window_tokens else slice(None)
    cache = []
    for _ in range(model.n_layers):
        if model.mla is not None:
            w_dkv = rng.standard_normal((model.d_model, model.mla.kv_lora_rank)).astype(dtype)
            w_kr = rng.standard_normal((model.d_model, model.mla.qk_rope_head_dim)).astype(dtype)
            cache += [(x @ w_dkv)[keep], (x @ w_kr)[keep]]  # c_KV and the shared RoPE key
        else:
            width = model.n_kv_heads * model.d_head
            w_k, w_v = (rng.standard_normal((model.d_model, width)).astype(dtype) for _ in "kv")
            cache += [(x @ w_k)[keep], (x @ w_v)[keep]]
    return sum(a.nbytes for a in cache)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_formula_equals_bytes_of_an_actual_gqa_cache(tiny_gqa, dtype, rng):
    b = np.dtype(dtype).itemsize
    built = _numpy_cache(tiny_gqa, 7, dtype, rng)
    assert kv_cache.kv_cache_bytes(tiny_gqa, n_tokens=7, bytes_per_element=b) == built


def test_formula_equals_bytes_of_an_actual_mla_cache(rng):
    tiny = dataclasses.replace(specs.model("deepseek_v3"), n_layers=2, d_model=32, n_heads=4,
                               mla=dataclasses.replace(specs.model("deepseek_v3").mla,
                                                       kv_lora_rank=8, qk_rope_head_dim=4))
    built = _numpy_cache(tiny, 5, np.float32, rng)
    assert kv_cache.kv_cache_bytes(tiny, n_tokens=5, bytes_per_element=4) == built


def test_formula_equals_bytes_of_an_actual_sliding_window_cache(tiny_gqa, rng):
    tiny = dataclasses.replace(tiny_gqa, sliding_window_tokens=4)
    built = _numpy_cache(tiny, 11, np.float32, rng)
    assert kv_cache.kv_cache_bytes(tiny, n_tokens=11, bytes_per_element=4) == built
    assert kv_cache.cached_positions(tiny, n_tokens=11) == 4


def test_cache_scales_with_batch_and_tokens():
    m = specs.model("llama3_70b")
    one = kv_cache.kv_cache_bytes(m, n_tokens=1000)
    assert kv_cache.kv_cache_bytes(m, n_tokens=2000, batch_size=3) == 6 * one


@pytest.mark.parametrize("kwargs,name", [({"n_tokens": -1}, "n_tokens"),
                                         ({"n_tokens": 2.5}, "n_tokens"),
                                         ({"n_tokens": 8, "batch_size": 0}, "batch_size"),
                                         ({"n_tokens": 8, "bytes_per_element": 0}, "bytes_per_element")])
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        kv_cache.kv_cache_bytes(specs.model("llama3_8b"), **kwargs)
