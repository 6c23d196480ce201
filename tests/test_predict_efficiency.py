"""GEMM efficiency by shape, the sourced per-chip fractions, and the one fitted constant.

Tolerances: closed forms to float rounding; the stored fitted constant to its printed two
digits (0.005).
"""

import dataclasses
import math

import pytest

from llmphys import predict, specs

E = predict.default_efficiencies()
H100 = specs.accelerator("h100_sxm")


def test_a_large_gemm_runs_at_the_large_gemm_fraction():
    assert predict.gemm_efficiency(8192, 28672, 4096, acc=H100, dtype="bf16", eff=E) == E.gemm_bf16


def test_tile_quantization_is_the_padded_share():
    # 4096 x 4096 x 4160: k padded to 4224 (33 tiles of 128), so 4160/4224 of the large fraction
    got = predict.gemm_efficiency(4096, 4096, 4160, acc=H100, dtype="bf16", eff=E)
    assert got == pytest.approx(E.gemm_bf16 * 4160 / 4224, rel=1e-12)


def test_a_skinny_gemm_is_memory_bound_on_the_roofline():
    # m = 128 tokens against a 4096 x 4096 weight: intensity 2mnk/(2(mk+kn)+2mn) FLOP/B
    m, n, k = 128, 4096, 4096
    intensity = 2 * m * n * k / (2 * (m * k + k * n) + 2 * m * n)
    ridge = H100.peak_bf16_flop_per_s * E.gemm_bf16 / (H100.hbm_bytes_per_s * E.hbm)
    got = predict.gemm_efficiency(m, n, k, acc=H100, dtype="bf16", eff=E)
    assert got == pytest.approx(E.gemm_bf16 * intensity / ridge, rel=1e-12)
    # 120 FLOP/B against a ridge of ~215 FLOP/B (989 TFLOP/s x eta / (3.35 TB/s x 0.85)):
    # memory-bound, so the achieved fraction is well under the large-GEMM one
    assert intensity < ridge
    assert got < 0.6 * E.gemm_bf16


def test_fp8_fractions_come_from_the_published_sweeps():
    # vLLM's DeepGEMM sweep on H100: 969.8 of 1,979 TFLOP/s; Megatron's GB200 guide 2,672 of 5,000
    assert E.gemm_fraction("h100_sxm", "fp8") == pytest.approx(969.8 / 1978.9, abs=0.005)
    assert E.gemm_fraction("gb200", "fp8") == pytest.approx(2672 / 5000, abs=0.005)
    assert E.gemm_fraction("b200", "fp8") == E.gemm_fp8  # no published sweep: the default


def test_attention_runs_at_flashattention2s_published_rate_for_its_length():
    # Dao 2023, Figs. 4 and 7, head dim 128, causal, forward + backward: each printed point
    # comes back as that TFLOP/s over the measured chip's BF16 dense peak (float rounding)
    a100 = specs.accelerator("a100_sxm").peak_bf16_flop_per_s
    h100 = H100.peak_bf16_flop_per_s
    for chip, peak, causal in (("h100_sxm", h100, [163, 221, 265, 294, 308, 328]),
                               ("a100_sxm", a100, [99, 133, 155, 173, 182, 189])):
        for n, tflops in zip([512, 1024, 2048, 4096, 8192, 16384], causal, strict=True):
            got = E.attention_fraction(chip, n)
            assert got == pytest.approx(tflops * 1e12 / peak, rel=1e-12), (chip, n)
    # the full (unmasked) kernel is faster at every length: 335 against 308 TFLOP/s at 8K
    assert E.attention_fraction("h100_sxm", 8192, causal=False) == pytest.approx(335e12 / h100)
    # between points: linear in log2 of the length (6K sits 0.585 of the way from 4K to 8K);
    # beyond the table: its last point, held flat
    w = math.log2(6144 / 4096)
    assert E.attention_fraction("h100_sxm", 6144) == pytest.approx(
        (294 + w * (308 - 294)) * 1e12 / h100, rel=1e-12)
    assert E.attention_fraction("h100_sxm", 262_144) == E.attention_fraction("h100_sxm", 16_384)
    assert E.attention_fraction("h100_sxm", 256) == E.attention_fraction("h100_sxm", 512)
    # the power-limited H100 reuses the fraction; a chip with no curve gets the default
    assert E.attention_fraction("h100_sxm_hbm2e_500w", 8192) == E.attention_fraction(
        "h100_sxm", 8192)
    assert E.attention_fraction("tpu_v5e", 8192) == E.attention
    # a flat override wins over the curve (the implied-rate diagnostic uses it)
    flat = dataclasses.replace(E, chip_attention=(("h100_sxm", 0.2),))
    assert flat.attention_fraction("h100_sxm", 8192) == 0.2


def test_the_stored_fitted_constant_equals_a_refit():
    assert predict.fitted_efficiencies().gemm_bf16 == pytest.approx(E.gemm_bf16, abs=0.005)


def test_bad_efficiencies_and_shapes_are_named():
    with pytest.raises(ValueError, match=r"Efficiencies.gemm_bf16 must be in \(0, 1\]"):
        dataclasses.replace(E, gemm_bf16=1.5)
    with pytest.raises(ValueError, match="m must be positive"):
        predict.gemm_efficiency(0, 1, 1, acc=H100, dtype="bf16", eff=E)


def test_cudnn_attention_on_h100_combines_the_published_forward_and_backward_bars():
    # Shah et al. 2024 (FlashAttention-3), cuDNN at 16K, head dim 128: forward 539 causal /
    # 595 unmasked, backward 516 unmasked; the causal backward takes the forward's mask cost.
    # Exact to rounding: the curve is those numbers over the H100's BF16 peak.
    peak = H100.peak_bf16_flop_per_s / 1e12
    full = 3.5 / (1 / 595 + 2.5 / 516)
    causal = 3.5 / (1 / 539 + 2.5 / (516 * 539 / 595))
    got_c = E.attention_fraction("h100_sxm", 16384, kernel="cudnn")
    got_f = E.attention_fraction("h100_sxm", 16384, causal=False, kernel="cudnn")
    assert got_c * peak == pytest.approx(causal, rel=1e-9)
    assert got_f * peak == pytest.approx(full, rel=1e-9)
    # about 1.5x FlashAttention-2's causal rate at that length (328 TFLOP/s, Dao 2023)
    assert got_c / E.attention_fraction("h100_sxm", 16384) == pytest.approx(486 / 328, rel=0.01)
    # a chip without a cuDNN curve falls back to its FlashAttention-2 curve
    assert E.attention_fraction("a100_sxm", 4096, kernel="cudnn") == E.attention_fraction(
        "a100_sxm", 4096
    )
    with pytest.raises(ValueError, match="kernel='fa3' is not known"):
        E.attention_fraction("h100_sxm", 4096, kernel="fa3")


def test_a_flat_override_for_a_chip_and_kernel_comes_before_the_chips_own():
    # the chapter's "one best-case rate per chip" variant keeps each kernel's own best point
    flat = dataclasses.replace(E, chip_attention=(("h100_sxm", 0.3), ("h100_sxm.cudnn", 0.5)))
    assert flat.attention_fraction("h100_sxm", 4096, kernel="cudnn") == 0.5
    assert flat.attention_fraction("h100_sxm", 4096) == 0.3
