"""The H100's memory hierarchy against its sources, and the tiled-GEMM byte count against a
direct count of the panels each tile reads and against its closed-form limit."""

import math
import statistics

import pytest

from llmphys import memory_hierarchy as mh
from llmphys import roofline, specs

H = mh.hierarchies()["h100_sxm"]
LV = {lv.name: lv for lv in H.levels}
H100 = specs.accelerator("h100_sxm")


def test_hbm_level_is_the_registry_figure():
    assert LV["HBM"].bytes_per_s == H100.hbm_bytes_per_s
    assert LV["HBM"].capacity_bytes == H100.hbm_bytes


def test_whitepaper_capacities_per_sm():
    # 132 SMs x 64K 32-bit registers = 256 KiB each; up to 228 KiB of shared memory per SM;
    # 50 MB of L2 (NVIDIA H100 whitepaper, exact by definition).
    assert LV["registers"].capacity_bytes == 132 * 65_536 * 4
    assert LV["shared memory"].capacity_bytes == 132 * 228 * 1024
    assert LV["L2"].capacity_bytes == 50e6


def test_shared_memory_bandwidth_is_128_bytes_per_clock_per_sm():
    # 32 banks x 4 B per clock (CUDA guide) at the 1.83 GHz of the dense peak; the stored value
    # is rounded to three figures, so 0.5% covers it.
    assert LV["shared memory"].bytes_per_s == pytest.approx(132 * 128 * H.clock_hz, rel=5e-3)


def test_clock_reproduces_the_dense_bf16_peak():
    # 132 SMs x 4 tensor cores x 512 FMA x 2 FLOP x 1.83 GHz = 989.4 TFLOP/s (whitepaper, to its
    # one-decimal rounding: 1e-4).
    assert 132 * 4 * 512 * 2 * H.clock_hz == pytest.approx(H100.peak_bf16_flop_per_s, rel=1e-4)


def test_ridges_fall_from_hbm_to_registers_and_hbm_matches_roofline():
    r = mh.level_ridges(H100.peak_bf16_flop_per_s, H)
    assert list(r.values()) == sorted(r.values())
    assert r["HBM"] == pytest.approx(roofline.ridge_point(H100), rel=1e-12)
    assert r["shared memory"] == pytest.approx(32, abs=1)  # 4096 FLOP / 128 B per clock per SM


def test_tiled_bytes_match_a_count_of_panels():
    m, n, k, tm, tn = 1000, 700, 300, 128, 256
    tiles = [(i, j) for i in range(0, m, tm) for j in range(0, n, tn)]
    count = sum(min(tm, m - i) * k + k * min(tn, n - j) for i, j in tiles)  # real rows only
    # Edge tiles here read only their real rows, as the formula assumes.
    assert mh.tiled_gemm_hbm_bytes(m, n, k, tile_m=tm, tile_n=tn, bytes_per_element=2.0) == (
        2.0 * (count + m * n))


def test_intensity_tends_to_the_harmonic_limit_and_square_tile_t_over_b():
    big = mh.tiled_gemm_intensity(2**16, 2**16, 2**16, tile_m=128, tile_n=256, bytes_per_element=2)
    lim = mh.tile_intensity_limit(128, 256, bytes_per_element=2.0)
    assert big == pytest.approx(lim, rel=5e-3)  # the C write is 1/K of the traffic: 2e-3 here
    assert mh.tile_intensity_limit(128, 128, bytes_per_element=2.0) == 64.0
    assert mh.square_tile_for_intensity(64.0, bytes_per_element=2.0) == 128.0


def test_tile_limit_is_the_harmonic_mean_of_the_sides_over_b_not_twice_it():
    # 2 / (b (1/b_M + 1/b_N)) is the harmonic mean H = 2 / (1/b_M + 1/b_N) divided by b: for
    # 128 x 256 in BF16, H = 170.67 and I = 85.33 (exact in floating point to 1e-12).
    h = statistics.harmonic_mean([128, 256])
    assert mh.tile_intensity_limit(128, 256, bytes_per_element=2.0) == pytest.approx(h / 2.0,
                                                                                     rel=1e-12)


def test_one_tile_covering_the_matrix_is_the_untiled_best_case():
    m = n = k = 512
    one = mh.tiled_gemm_hbm_bytes(m, n, k, tile_m=512, tile_n=512, bytes_per_element=2.0)
    assert one == roofline.matmul_bytes(m, n, k, bytes_per_element=2.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="tile_n"):
        mh.tiled_gemm_hbm_bytes(8, 8, 8, tile_m=4, tile_n=0, bytes_per_element=2.0)
    with pytest.raises(ValueError, match="bytes_per_element"):
        mh.tile_intensity_limit(4, 4, bytes_per_element=-1.0)
    assert math.isfinite(mh.square_tile_for_intensity(1.0, bytes_per_element=0.5))


@pytest.mark.parametrize("edit,match", [
    (('bandwidth_kind = "measured"', 'bandwidth_kind = "guessed"'), "bandwidth_kind"),
    (('name = "L2"', 'name = "L2"\nlatency_s = 1e-7'), "unknown field"),
    (("bytes_per_s = 7.0e12", "bytes_per_s = 7.0e13"), "fastest first"),
])
def test_loader_rejects_bad_entries_naming_the_field(tmp_path, monkeypatch, edit, match):
    import shutil

    src = mh.specs.data_dir()
    shutil.copy(src / "accelerators.toml", tmp_path / "accelerators.toml")
    text = (src / "memory_hierarchy.toml").read_text(encoding="utf-8")
    assert edit[0] in text
    (tmp_path / "memory_hierarchy.toml").write_text(text.replace(edit[0], edit[1], 1),
                                                    encoding="utf-8")
    monkeypatch.setenv("LLMPHYS_DATA", str(tmp_path))
    mh.hierarchies.cache_clear()
    try:
        with pytest.raises(ValueError, match=match):
            mh.hierarchies()
    finally:
        mh.hierarchies.cache_clear()  # later tests see the book's own file again
