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
        assert ap.flop_per_key(m) == accounting.attention_flop_per_token(m, context_tokens=1.0)


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
