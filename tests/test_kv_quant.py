"""Quantised KV caches: bytes with scales, and the rounding error against its closed form."""

import numpy as np
import pytest

from llmphys import kv_cache, kv_quant, specs


def test_bytes_per_element_include_the_scales():
    assert kv_quant.bytes_per_element("bf16") == 2.0
    assert kv_quant.bytes_per_element("fp8") == 1.0  # one scale per tensor: negligible
    assert kv_quant.bytes_per_element("int8") == 1.0 + 2.0 / 128
    assert kv_quant.bytes_per_element("int4") == 0.5 + 2.0 / 32


def test_int4_cache_of_llama3_70b_is_9_over_32_of_bf16():
    m = specs.model("llama3_70b")
    ratio = (kv_cache.kv_cache_bytes(m, n_tokens=131_072,
                                     bytes_per_element=kv_quant.bytes_per_element("int4"))
             / kv_cache.kv_cache_bytes(m, n_tokens=131_072))
    assert ratio == 0.5625 / 2.0


def test_int8_error_on_uniform_data_is_half_a_step_over_root_three():
    # x ~ U(-1, 1), one group: step s = 1/127, error rms s/sqrt(12), signal rms 1/sqrt(3),
    # so relative error 1/254. 2^16 samples: within 2% (amax < 1 and sampling).
    x = np.random.default_rng(0).uniform(-1, 1, size=(1, 2**16))
    x_hat = kv_quant.int_fake_quantize(x, bits=8, group_size=2**16)
    err = np.linalg.norm(x_hat - x) / np.linalg.norm(x)
    assert err == pytest.approx(1 / 254, rel=0.02)


def test_values_on_the_grid_are_exact_and_zeros_stay_zero():
    x = np.array([[-7.0, 0.0, 3.0, 7.0]])
    assert np.array_equal(kv_quant.int_fake_quantize(x, bits=4, group_size=4), x)
    assert np.array_equal(kv_quant.int_fake_quantize(np.zeros((2, 8)), bits=4, group_size=4),
                          np.zeros((2, 8)))


def test_per_channel_groups_beat_per_head_groups_on_outlier_keys():
    k = kv_quant.synthetic_keys(np.random.default_rng(0))
    assert kv_quant.cache_error(k, "int4_channel") < 0.7 * kv_quant.cache_error(k, "int4")
    assert kv_quant.cache_error(k, "int8") < kv_quant.cache_error(k, "int4_channel")
    assert kv_quant.cache_error(k, "bf16") == 0.0


@pytest.mark.parametrize("call, match", [
    (lambda: kv_quant.bytes_per_element("int3"), "allowed"),
    (lambda: kv_quant.int_fake_quantize(np.ones(6), bits=4, group_size=4), "divisor"),
    (lambda: kv_quant.int_fake_quantize(np.ones(4), bits=5, group_size=4), "bits"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()
