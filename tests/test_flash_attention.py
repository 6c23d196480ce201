"""Naive and tiled attention: same outputs, and HBM bytes that match Dao et al. 2022's counts."""

import math

import numpy as np
import pytest

from llmphys import attention, specs, transformer, units
from llmphys import flash_attention as fa


@pytest.mark.parametrize("n, d, sram", [(37, 8, 512), (64, 16, 2048), (50, 4, 100)])
@pytest.mark.parametrize("causal", [True, False])
def test_tiled_output_equals_naive_and_the_reference_kernel(rng, n, d, sram, causal):
    # Exact attention (Dao et al. 2022, theorem 1): only round-off separates the two.
    # float64 sums of ~n terms: 1e-12 relative is ~1e3 ulps.
    q, k, v = rng.standard_normal((3, n, d))
    naive, _ = fa.naive_attention(q, k, v, causal=causal)
    tiled, _ = fa.flash_attention(q, k, v, sram_bytes=sram * 8, causal=causal)
    np.testing.assert_allclose(tiled, naive, rtol=1e-12, atol=1e-12)
    if causal:  # and both equal the decoder's own kernel
        pos = np.arange(n)
        ref = attention.attend(q[:, None], k[:, None], v[:, None], pos, pos)[:, 0]
        np.testing.assert_allclose(naive, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n, d, sram_elems", [(37, 8, 512), (64, 16, 2048), (128, 8, 100)])
def test_measured_bytes_equal_the_closed_forms_of_algorithms_0_and_1(rng, n, d, sram_elems):
    # Dao et al. 2022 alg. 0: 4Nd + 4N^2 elements; alg. 1: 3Nd + 2N + T_c (3Nd + 4N).
    q, k, v = rng.standard_normal((3, n, d)).astype(np.float32)
    sram = sram_elems * 4.0
    _, naive = fa.naive_attention(q, k, v)
    _, tiled = fa.flash_attention(q, k, v, sram_bytes=sram)
    assert naive["total_bytes"] == 4 * (4 * n * d + 4 * n * n)
    assert naive["total_bytes"] == fa.naive_hbm_bytes(n, d, bytes_per_element=4.0)
    bc = math.ceil(sram_elems / (4 * d))
    assert tiled["total_bytes"] == 4 * (3 * n * d + 2 * n + math.ceil(n / bc) * (3 * n * d + 4 * n))
    assert tiled["total_bytes"] == fa.flash_hbm_bytes(n, d, sram_bytes=sram, bytes_per_element=4.0)


def test_tiled_bytes_approach_theorem_2s_n2_d2_over_m():
    # Theorem 2: Theta(N^2 d^2 / M). The leading term is T_c 3Nd b with T_c -> 4Nd/M, so the
    # ratio to b N^2 d^2 / M tends to 12; at N = 2^20 the lower-order terms are < 2%.
    d, b, sram = 128, 2.0, fa.H100_SRAM_PER_SM_BYTES
    m = sram / b
    n = 2**20
    ratio = fa.flash_hbm_bytes(n, d, sram_bytes=sram, bytes_per_element=b) / (b * n * n * d * d / m)
    assert ratio == pytest.approx(12.0, rel=0.02)
    # and naive traffic is quadratic in N: doubling N quadruples it in the limit
    r = fa.naive_hbm_bytes(2 * n, d) / fa.naive_hbm_bytes(n, d)
    assert r == pytest.approx(4.0, rel=1e-3)


def test_h100_block_sizes_follow_algorithm_1_line_1():
    # B_c = ceil(M / 4d) with M = 228 KiB / 2 B = 116,736 elements, d = 128: 228; B_r = min(B_c, d).
    assert fa.block_sizes(128, sram_bytes=228 * 1024, bytes_per_element=2.0) == (128, 228)


def test_tiled_attention_raises_intensity_at_8k_context():
    # Same 4 N^2 d FLOP; fewer bytes. Naive at N = 8192, d = 128 in BF16: 34.4 GFLOP over
    # 545 MB is 63 FLOP/byte, below an H100's ~295 FLOP/byte ridge.
    f = fa.attention_flop(8192, 128)
    naive = f / fa.naive_hbm_bytes(8192, 128)
    tiled = f / fa.flash_hbm_bytes(8192, 128, sram_bytes=fa.H100_SRAM_PER_SM_BYTES)
    assert naive == pytest.approx(63.0, abs=0.5)
    assert tiled > 2 * naive


def test_decoder_qkv_reproduces_the_decoders_attention_output(rng):
    # Feeding decoder_qkv's head through attend must match the head's slice of the layer.
    model = transformer.tiny(specs.model("llama3_8b"))
    params = transformer.init_params(model, rng)
    tokens = rng.integers(0, model.vocab_size, 20)
    q, k, v = fa.decoder_qkv(params, model, tokens, head=3)
    pos = np.arange(20)
    heads = []
    for h in range(model.n_heads):
        qh, kh, vh = fa.decoder_qkv(params, model, tokens, head=h)
        heads.append(attention.attend(qh[:, None], kh[:, None], vh[:, None], pos, pos)[:, 0])
    layer = params["layers"][0]
    x = transformer._norm(params["embed"][tokens], layer["attn_norm"])
    full = attention.gqa_attention(x, layer["attn"], model, pos, {})
    np.testing.assert_allclose(np.concatenate(heads, axis=1) @ layer["attn"]["w_o"], full,
                               rtol=1e-12, atol=1e-12)
    tiled, _ = fa.flash_attention(q, k, v, sram_bytes=64 * 8 * 8)
    np.testing.assert_allclose(tiled, heads[3], rtol=1e-12, atol=1e-12)


def test_bad_inputs_name_the_argument(rng):
    q = rng.standard_normal((8, 4))
    with pytest.raises(ValueError, match="q must be a 2-D"):
        fa.naive_attention(q[None], q, q)
    with pytest.raises(ValueError, match="sram_bytes"):
        fa.flash_attention(q, q, q, sram_bytes=8.0)
    with pytest.raises(ValueError, match="n_tokens"):
        fa.naive_hbm_bytes(0, 4)
    with pytest.raises(ValueError, match="MLA"):
        m = transformer.tiny(specs.model("deepseek_v3"))
        fa.decoder_qkv(transformer.init_params(m, rng), m, [1, 2])
    with pytest.raises(ValueError, match="head"):
        m = transformer.tiny(specs.model("llama3_8b"))
        fa.decoder_qkv(transformer.init_params(m, rng), m, [1, 2], head=9)
    assert units.KiB == 1024  # the SRAM constant is in binary kilobytes


def test_score_matrix_bytes_match_the_array_naive_attention_stores():
    # Independent check: the bytes of the S array a float64 naive pass would hold.
    n = 64
    assert fa.score_matrix_bytes(n, bytes_per_element=8.0) == np.zeros((n, n)).nbytes
    # One layer of Llama 3 70B's 64 heads at 128K tokens in BF16: 2.2 TB, while one head's
    # 34.4 GB fits in an H100's 80 GB (so "a single head exceeds the chip" is false).
    assert fa.score_matrix_bytes(131_072, n_heads=64) / 1e12 == pytest.approx(2.199, rel=1e-3)
    assert fa.score_matrix_bytes(131_072) < 80e9
    with pytest.raises(ValueError, match="n_heads"):
        fa.score_matrix_bytes(8, n_heads=0)
