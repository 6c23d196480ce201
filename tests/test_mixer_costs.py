"""Mixer state and FLOP per token: closed forms checked against counts and an actual state."""

import numpy as np
import pytest

from llmphys import kv_cache, linear_recurrence, specs, units
from llmphys import mixer_costs as mc


def test_linear_attention_state_equals_the_kv_cache_of_h_d_over_2g_tokens():
    # L h d^2 b = T* 2 L g d b  =>  T* = h d / (2 g): 32 x 128 / 16 = 256 tokens for Llama 3 8B
    m = specs.model("llama3_8b")
    t_star = mc.linear_attention_state_bytes(m) / kv_cache.kv_bytes_per_token(m)
    assert t_star == m.n_heads * m.d_head / (2 * m.n_kv_heads) == 256


def test_state_formula_matches_the_bytes_of_an_actual_state():
    # one head's state from the numpy recurrence, float64: d_k d_v x 8 bytes
    rng = np.random.default_rng(0)
    q = k = rng.random((16, 128))
    _, state = linear_recurrence.recurrent_form(q, k, rng.random((16, 128)))
    m = specs.model("llama3_8b")
    per_head = mc.linear_attention_state_bytes(m, bytes_per_element=8.0) / (m.n_layers * m.n_heads)
    assert state.nbytes == per_head


def test_mamba_state_per_layer_is_d_in_times_n_plus_conv():
    m = specs.model("mixtral_8x7b")  # d = 4096: d_in = 8192, N = 16, conv 4: 8192 x 19 x 2 bytes
    assert mc.ssm_state_bytes(m, d_state=16) == 32 * 8192 * 19 * 2


def test_cross_layer_sharing_halves_and_hybrid_keeps_one_layer_in_eight():
    m = specs.model("mixtral_8x7b")
    full = mc.attention_cache_bytes(m, context_tokens=262_144)
    assert mc.attention_cache_bytes(m, context_tokens=262_144, share_every=2) == full / 2
    hyb = mc.hybrid_state_bytes(m, context_tokens=262_144, attention_every=8, d_state=16)
    assert hyb == pytest.approx(full / 8 + 7 / 8 * mc.ssm_state_bytes(m, d_state=16), rel=1e-15)
    assert full / units.GiB == 32.0  # 2 x 32 x 8 x 128 x 2 bytes x 2^18 tokens


def test_attention_flop_grow_with_context_and_recurrent_flop_do_not():
    m = specs.model("llama3_8b")
    a1 = mc.mixer_flop_per_token(m, "attention", context_tokens=1000)
    assert mc.mixer_flop_per_token(m, "attention", context_tokens=2000) == 2 * a1
    assert mc.mixer_flop_per_token(m, "linear") == 5 * 32 * 32 * 128**2
    assert mc.mixer_flop_per_token(m, "ssm", d_state=16) == 32 * 8192 * (5 * 16 + 2 * 4)


def test_study_returns_flat_recurrent_curves_and_rising_attention():
    s = mc.mixer_study(specs.model("mixtral_8x7b"), contexts=np.array([1024.0, 4096.0]))
    assert s["attention"]["bytes"][1] == 4 * s["attention"]["bytes"][0]
    assert s["SSM"]["bytes"][0] == s["SSM"]["bytes"][1]


@pytest.mark.parametrize("call, match", [
    (lambda: mc.mixer_flop_per_token(specs.model("llama3_8b"), "rwkv"), "kind"),
    (lambda: mc.attention_cache_bytes(specs.model("llama3_8b"), context_tokens=1, share_every=0),
     "period"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
