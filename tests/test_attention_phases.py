"""Prefill against decode attention: FLOP, bytes and intensity per token, per variant."""

import numpy as np
import pytest

from llmphys import accounting, kv_cache, specs
from llmphys import attention_phases as ap


def _variants():
    m = specs.model("llama3_70b")
    return {v: kv_cache.with_attention(m, v) for v in kv_cache.VARIANTS}


@pytest.mark.parametrize("context", [1024, 8192, 131_072])
def test_decode_intensity_is_kv_caches_at_every_context(context):
    for v, m in _variants().items():
        got = ap.attention_per_token(m, phase="decode", context_tokens=context)["intensity"]
        assert got == pytest.approx(kv_cache.decode_attention_intensity(m), rel=1e-12), v


def test_flop_per_key_matches_accountings_attention_flop_for_the_gqa_family():
    # accounting: 2 L h (2c) T over T keys; an independent implementation of the same count.
    for v in ("mha", "gqa", "mqa"):
        m = _variants()[v]
        for phase in ap.PHASES:
            got = ap.flop_per_key(m, phase=phase)
            assert got == accounting.attention_flop_per_token(m, context_tokens=1.0)


def test_prefill_reuses_each_kv_tile_across_the_query_block():
    # For T >> B the intensity tends to B x the decode intensity (the +kv write fades).
    m = _variants()["gqa"]
    dec = kv_cache.decode_attention_intensity(m)
    long = ap.attention_per_token(m, phase="prefill", context_tokens=2**24)["intensity"]
    assert long == pytest.approx(128 * dec, rel=1e-3)
    short = ap.attention_per_token(m, phase="prefill", context_tokens=1)["intensity"]
    assert short < 2 * dec  # one token: no reuse to be had


def test_sliding_window_caps_the_keys_in_both_phases():
    m = _variants()["swa"]
    w = m.sliding_window_tokens
    d = ap.attention_per_token(m, phase="decode", context_tokens=4 * w)
    assert d["bytes"] == kv_cache.kv_bytes_per_token(m) * w
    t = 3 * w + 5
    mean_keys = np.minimum(np.arange(1, t + 1), w).mean()  # brute force over positions
    p = ap.attention_per_token(m, phase="prefill", context_tokens=t)
    assert p["flop"] == pytest.approx(ap.flop_per_key(m) * mean_keys, rel=1e-12)


def test_bad_phase_and_block_are_named():
    m = specs.model("llama3_8b")
    with pytest.raises(ValueError, match="phase"):
        ap.attention_per_token(m, phase="train", context_tokens=8)
    with pytest.raises(ValueError, match="query_block_tokens"):
        ap.attention_per_token(m, phase="prefill", context_tokens=8, query_block_tokens=0)


def test_mla_prefill_is_counted_expanded_and_decode_absorbed():
    # DeepSeek-V3: absorbed 2h(2r + r_R) = 2*128*1088 per key and layer; expanded
    # 2h(c_nope + r_R + c_v) = 2*128*320, the training count of accounting.
    ds = specs.model("deepseek_v3")
    assert ap.flop_per_key(ds, phase="decode") == 61 * 2 * 128 * (2 * 512 + 64)
    assert ap.flop_per_key(ds, phase="prefill") == 61 * 2 * 128 * (128 + 64 + 128)
    assert ap.flop_per_key(ds, phase="prefill") == accounting.attention_flop_per_token(
        ds, context_tokens=1.0
    )
    assert ap.flop_per_key(ds, phase="decode") / ap.flop_per_key(ds, phase="prefill") == (
        pytest.approx(1088 / 320, rel=1e-12)
    )


def test_expanded_mla_prefill_has_mhas_intensity():
    # Expanded MLA reads h (c_qk + c_v) elements per key for 2 h (c_qk + c_v) FLOP, exactly
    # the FLOP per byte of MHA, so at a long prompt both tend to 2B/b = 128 FLOP/B.
    v = _variants()
    got = {k: ap.attention_per_token(v[k], phase="prefill", context_tokens=2**24)["intensity"]
           for k in ("mha", "mla")}
    assert got["mha"] == pytest.approx(128, rel=1e-3)
    assert got["mla"] == pytest.approx(128, rel=1e-3)
    # And 53.7 GFLOP a token at 32K for Llama 3 70B's shape with MLA, not the absorbed 182.5.
    p = ap.attention_per_token(v["mla"], phase="prefill", context_tokens=32_768)
    assert p["flop"] / 1e9 == pytest.approx(2 * 80 * 64 * (128 + 64 + 128) * 32_769 / 2 / 1e9)


def test_attainable_is_the_roofline_min_of_peak_and_intensity_times_bandwidth():
    m = _variants()["mha"]
    i = ap.attention_per_token(m, phase="prefill", context_tokens=32_768)["intensity"]
    assert ap.attainable_flop_per_s(m, phase="prefill", context_tokens=32_768,
                                    peak_flop_per_s=1e15, hbm_bytes_per_s=1e12) == i * 1e12
    assert ap.attainable_flop_per_s(m, phase="prefill", context_tokens=32_768,
                                    peak_flop_per_s=1e12, hbm_bytes_per_s=1e12) == 1e12
    with pytest.raises(ValueError, match="hbm_bytes_per_s"):
        ap.attainable_flop_per_s(m, phase="decode", context_tokens=8, peak_flop_per_s=1.0,
                                 hbm_bytes_per_s=0.0)
