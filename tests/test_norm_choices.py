"""QK-norm and soft-capping against their bounds, on the tiny decoder's own q and k."""

import numpy as np
import pytest

from llmphys import flash_attention as fa
from llmphys import norm_choices as nc
from llmphys import specs, transformer


@pytest.fixture
def qk():
    m = transformer.tiny(specs.model("llama3_70b"))
    p = transformer.init_params(m, np.random.default_rng(0))
    q, k, _ = fa.decoder_qkv(p, m, np.arange(64) % m.vocab_size, head=1)
    return q, k


def test_raw_logits_grow_as_the_square_of_the_weight_scale(qk):
    g = nc.logit_growth(*qk, scales=(1.0, 4.0, 16.0))
    np.testing.assert_allclose(g["max_logit"] / g["max_logit"][0], [1.0, 16.0, 256.0], rtol=1e-12)
    assert g["entropy_bits"][2] < 0.1 < 1.0 < g["entropy_bits"][0]  # softmax collapses


def test_qk_norm_bounds_logits_by_sqrt_c_and_ignores_the_scale(qk):
    # Cauchy-Schwarz: |q_hat . k_hat| <= |q_hat||k_hat| = c, over sqrt(c).
    g = nc.logit_growth(*qk, scales=(1.0, 10.0, 1000.0), qk_norm=True)
    c = qk[0].shape[-1]
    assert np.all(g["max_logit"] <= np.sqrt(c) + 1e-12)
    # RMSNorm adds eps = 1e-6 to mean squares of order 1: a relative shift of about 1e-6.
    np.testing.assert_allclose(g["entropy_bits"], g["entropy_bits"][0], rtol=1e-5)


def test_softcap_is_identity_for_small_logits_and_bounded_by_the_cap():
    x = np.array([-1e6, -1.0, 0.0, 0.5, 1e6])
    y = nc.softcap(x, nc.GEMMA2_ATTENTION_SOFTCAP)
    assert np.all(np.abs(y) <= 50.0)
    assert y[3] == pytest.approx(0.5, rel=1e-4)  # tanh(u)/u = 1 - u^2/3: 3e-5 at u = 0.01
    assert (nc.GEMMA2_ATTENTION_SOFTCAP, nc.GEMMA2_FINAL_SOFTCAP) == (50.0, 30.0)  # Gemma 2 sec. 2


def test_capped_logits_never_exceed_the_cap_on_the_decoder(qk):
    g = nc.logit_growth(*qk, scales=(1.0, 100.0), cap=50.0)
    assert g["max_logit"][0] == pytest.approx(nc.logit_growth(*qk, scales=(1.0,))["max_logit"][0],
                                              rel=1e-2)
    assert g["max_logit"][1] <= 50.0


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="q and k"):
        nc.attention_logit_stats(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="cap"):
        nc.softcap(np.ones(2), 0.0)
    with pytest.raises(ValueError, match="scales"):
        nc.logit_growth(np.ones((2, 2)), np.ones((2, 2)), scales=(0.0,))
