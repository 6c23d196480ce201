"""KV-cache bytes: the formula against published per-token sizes and against the
bytes of caches actually built with numpy for small configs."""

import dataclasses

import numpy as np
import pytest

from llmphys import accounting, kv_cache, specs, units


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
                                         ({"n_tokens": 8, "bytes_per_element": 0},
                                          "bytes_per_element")])
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        kv_cache.kv_cache_bytes(specs.model("llama3_8b"), **kwargs)


# ----------------------------------------------------------------- architecture chapter
# The series: a 70B-class model at "128 thousand tokens": MHA "312 gigabytes", GQA "39",
# latent attention "under ten"; ceilings "near ten" and "eighty" tokens/s.

def _llama70(variant):
    return kv_cache.with_attention(specs.model("llama3_70b"), variant)


def test_series_312_gb_is_gib_at_128000_tokens_in_bf16():
    mha = kv_cache.kv_cache_bytes(_llama70("mha"), n_tokens=128_000)
    assert mha / units.GiB == pytest.approx(312.5)  # exact: 80 x 64 x 128 x 2 x 2 x 128000
    assert mha / units.GB == pytest.approx(335.54, abs=0.01)  # what "GB" would really be
    assert (kv_cache.kv_cache_bytes(_llama70("gqa"), n_tokens=128_000) / units.GiB
            == pytest.approx(39.0625))


def test_under_ten_gb_mla_holds_for_deepseek_but_not_for_80_layers():
    assert kv_cache.kv_cache_bytes(specs.model("deepseek_v3"), n_tokens=131_072) < 10 * units.GB
    assert kv_cache.kv_cache_bytes(_llama70("mla"), n_tokens=128_000) > 10 * units.GB


def test_variant_caches_scale_with_stored_width():
    mha = kv_cache.kv_bytes_per_token(_llama70("mha"))
    assert kv_cache.kv_bytes_per_token(_llama70("mqa")) == mha / 64
    assert kv_cache.kv_bytes_per_token(_llama70("gqa")) == mha / 8
    assert kv_cache.kv_bytes_per_token(_llama70("mla")) == 80 * (512 + 64) * 2
    assert kv_cache.kv_cache_bytes(_llama70("swa"), n_tokens=128_000) == \
        kv_cache.kv_cache_bytes(_llama70("gqa"), n_tokens=4096)


def test_mla_variant_counts_like_deepseek_attention():
    # with_attention("mla") must give the shapes accounting counts for DeepSeek's MLA.
    m = _llama70("mla")
    d, h = m.d_model, m.n_heads
    expected = d * h * 192 + d * 576 + 512 + 512 * h * 256 + h * 128 * d
    assert accounting.attention_params_per_layer(m) == expected


@pytest.mark.parametrize("variant,intensity", [("mha", 1.0), ("gqa", 8.0), ("mqa", 64.0)])
def test_decode_attention_intensity_is_twice_the_group_size_over_bytes(variant, intensity):
    m = _llama70(variant)
    assert kv_cache.decode_attention_intensity(m) == intensity
    # cross-check: attention FLOP per token over the KV bytes it reads, at any context
    flop = accounting.attention_flop_per_token(m, context_tokens=1000)
    assert flop / (kv_cache.kv_bytes_per_token(m) * 1000) == pytest.approx(intensity)


def test_absorbed_mla_attention_sits_near_the_h100_ridge(h100):
    # DeepSeek-V3: 2 x 128 x (2 x 512 + 64) / (576 x 2) = 241.8 FLOP/B vs a ridge of 295.
    from llmphys import roofline
    i = kv_cache.decode_attention_intensity(specs.model("deepseek_v3"))
    assert i == pytest.approx(241.78, abs=0.01)
    assert 0.5 < i / roofline.ridge_point(h100) < 1.0


def test_unknown_variant_is_rejected():
    with pytest.raises(ValueError, match="variant"):
        kv_cache.with_attention(specs.model("llama3_8b"), "linear")


def test_mla_naive_and_absorbed_flop_count_the_matmuls_they_name(rng):
    # Shrink DeepSeek-V3's MLA, build the two computations with numpy, check that (1) they give
    # the same scores and (2) the formula's FLOP are 2 m n k of the matmuls actually performed.
    m = dataclasses.replace(specs.model("deepseek_v3"), n_heads=4)
    a = dataclasses.replace(m.mla, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
                            v_head_dim=8)
    m = dataclasses.replace(m, mla=a)
    h, r, dn, dv = m.n_heads, a.kv_lora_rank, a.qk_nope_head_dim, a.v_head_dim
    c = rng.standard_normal((1, r))                  # one cached latent position
    w_uk, w_uv = rng.standard_normal((r, h, dn)), rng.standard_normal((r, h, dv))
    q = rng.standard_normal((h, dn))
    k_naive = np.einsum("tr,rhd->thd", c, w_uk)      # up-projection: 2 r h dn per position
    naive_scores = np.einsum("hd,thd->ht", q, k_naive)
    q_absorbed = np.einsum("hd,rhd->hr", q, w_uk)    # once per step, not per position
    assert np.allclose(np.einsum("hr,tr->ht", q_absorbed, c), naive_scores)
    p = rng.random((h, 1))                           # attention weights over the one position
    naive_out = np.einsum("ht,thd->hd", p, np.einsum("tr,rhd->thd", c, w_uv))
    assert np.allclose(np.einsum("hr,rhd->hd", p @ c, w_uv), naive_out)  # W_UV after the sum
    f = kv_cache.mla_decode_flop_per_position(m)
    assert f["naive_up_projection"] == 2 * r * h * dn + 2 * r * h * dv  # W_UK and W_UV
    assert f["absorbed_attention"] == 2 * h * (r + a.qk_rope_head_dim) + 2 * h * r  # scores + sum
    assert f["naive_attention"] == 2 * h * (dn + a.qk_rope_head_dim) + 2 * h * dv


def test_deepseek_v3_naive_mla_costs_120_times_the_absorbed_attention():
    # 2 x 512 x 128 x (128 + 128) = 33.55 MFLOP against 2 x 128 x (2 x 512 + 64) = 0.279 MFLOP.
    f = kv_cache.mla_decode_flop_per_position(specs.model("deepseek_v3"))
    assert f["naive_up_projection"] == 33_554_432
    assert f["naive_up_projection"] / f["absorbed_attention"] == pytest.approx(120.47, abs=0.01)


def test_mla_flop_of_a_model_without_mla_is_an_error():
    with pytest.raises(ValueError, match="mla"):
        kv_cache.mla_decode_flop_per_position(specs.model("llama3_8b"))


def test_sliding_window_cuts_bytes_not_decode_intensity():
    # A window bounds how many positions are read, not how many FLOP each byte feeds: Llama 3 70B
    # with a 4,096-token window keeps GQA's 8 FLOP/B (64 query heads over 8 K/V heads, BF16).
    m = specs.model("llama3_70b")
    swa = kv_cache.with_attention(m, "swa")
    assert kv_cache.decode_attention_intensity(swa) == kv_cache.decode_attention_intensity(m) == 8.0
    long = 131_072
    assert (kv_cache.kv_cache_bytes(swa, n_tokens=long)
            < kv_cache.kv_cache_bytes(m, n_tokens=long) / 30)
