"""Tile and wave quantisation against hand counts: 4,096 divides into 128-wide tiles, 4,000 does
not; 1,024 tiles on 132 SMs take 8 waves, the last one 1,024 - 7 x 132 = 100 tiles."""

import numpy as np
import pytest

from llmphys import waves


def test_tile_counts_round_up():
    assert waves.gemm_tiles(4096, 4096, tile_m=128, tile_n=128) == 32 * 32
    assert waves.gemm_tiles(4000, 4096, tile_m=128, tile_n=256) == 32 * 16  # 31.25 -> 32
    assert waves.gemm_tiles(1, 1, tile_m=128, tile_n=128) == 1


def test_waves_and_wave_efficiency_by_hand():
    e = waves.quantisation_efficiency(4096, 4096, tile_m=128, tile_n=128, n_sms=132)
    assert e["waves"] == 8 and e["tiles"] == 1024
    assert e["wave"] == pytest.approx(1024 / (8 * 132))  # 7 full waves and one of 100 tiles
    assert e["tile"] == 1.0


def test_width_4000_pays_the_padding_of_4096():
    kw = dict(tile_m=128, tile_n=128, n_sms=132)
    e4000 = waves.quantisation_efficiency(4000, 4000, **kw)
    e4096 = waves.quantisation_efficiency(4096, 4096, **kw)
    assert e4000["waves"] == e4096["waves"]  # same time
    assert e4000["total"] / e4096["total"] == pytest.approx((4000 / 4096) ** 2)  # fewer FLOP


def test_one_full_wave_is_perfect_and_one_tile_more_nearly_halves_it():
    # 132 tiles = 12 x 11 tiles of 128: exactly one wave; one more row of tiles spills over.
    e = waves.quantisation_efficiency(12 * 128, 11 * 128, tile_m=128, tile_n=128, n_sms=132)
    assert e["total"] == 1.0
    e2 = waves.quantisation_efficiency(13 * 128, 11 * 128, tile_m=128, tile_n=128, n_sms=132)
    assert e2["waves"] == 2 and e2["total"] == pytest.approx(143 / 264)


def test_curve_is_at_most_one_and_matches_pointwise():
    widths = np.arange(3800, 4400, 8)
    curve = waves.efficiency_curve(8192, widths, tile_m=128, tile_n=256, n_sms=132)
    assert curve.max() <= 1.0 and curve.min() > 0.5
    e = waves.quantisation_efficiency(8192, 4000, tile_m=128, tile_n=256, n_sms=132)["total"]
    assert curve[list(widths).index(4000)] == pytest.approx(e)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="tile_m"):
        waves.gemm_tiles(10, 10, tile_m=0, tile_n=8)
    with pytest.raises(ValueError, match="n_sms"):
        waves.gemm_waves(10, 10, tile_m=8, tile_n=8, n_sms=1.5)
