"""KV-cache tiers: restore times, holding prices and the break-even idle time."""

import pytest

from llmphys import inference, kv_cache, kv_tiers, specs, units

LLAMA = specs.model("llama3_70b")
DSV3 = specs.model("deepseek_v3")


def test_conversation_bytes_are_the_kv_cache_of_one_sequence():
    assert kv_tiers.conversation_kv_bytes(LLAMA, context_tokens=32768) == \
        kv_cache.kv_cache_bytes(LLAMA, n_tokens=32768)


def test_restore_time_is_bytes_over_aggregate_bandwidth():
    t1 = kv_tiers.restore_time_s(LLAMA, context_tokens=32768, bytes_per_s=63e9)
    t8 = kv_tiers.restore_time_s(LLAMA, context_tokens=32768, bytes_per_s=63e9, n_links=8)
    assert t1 == pytest.approx(32768 * 327_680 / 63e9, rel=1e-12) and t8 == pytest.approx(t1 / 8)


def test_recompute_is_the_prefill_time_over_the_efficiency(h100):
    p = inference.prefill(LLAMA, h100, prompt_tokens=8192, n_chips=8)["time_s"]
    assert kv_tiers.recompute_time_s(LLAMA, h100, context_tokens=8192, n_chips=8,
                                     efficiency=0.25) == pytest.approx(4 * p)


def test_mla_cache_is_far_cheaper_to_restore_than_to_recompute(h100):
    # 70 KB/token against 74 GFLOP/token. In GPU-seconds (16 GPUs recompute, one GPU's
    # PCIe link copies, as with data-parallel attention) the copy is ~140x cheaper.
    copy = kv_tiers.restore_time_s(DSV3, context_tokens=32768, bytes_per_s=63e9)
    redo = kv_tiers.recompute_time_s(DSV3, h100, context_tokens=32768, n_chips=16,
                                     weight_dtype="fp8")
    assert 16 * redo / copy > 50 and redo > copy


def test_at_the_break_even_idle_time_holding_plus_restore_equals_recompute(h100):
    price = 2.95
    tiers = {"dram": (63e9, kv_tiers.storage_usd_per_byte_s(usd_per_byte=5e-9, life_years=5), 8),
             "hbm": (float("inf"), kv_tiers.hbm_usd_per_byte_s(h100, usd_per_chip_hour=price), 8)}
    t = kv_tiers.tier_costs(LLAMA, h100, context_tokens=32768, n_chips=8, usd_per_chip_hour=price,
                            tiers=tiers)
    for name in tiers:
        row = t[name]
        total = row["hold_usd_per_s"] * row["breakeven_idle_s"] + row["restore_usd"]
        assert total == pytest.approx(t["recompute"]["restore_usd"], rel=1e-9)
    assert t["hbm"]["breakeven_idle_s"] < 300 < t["dram"]["breakeven_idle_s"]


def test_hbm_holding_price_is_the_hourly_price_per_byte_of_capacity(h100):
    assert kv_tiers.hbm_usd_per_byte_s(h100, usd_per_chip_hour=3.6) == pytest.approx(
        3.6 / units.HOUR / 80e9)


def test_bad_arguments_are_named(h100):
    with pytest.raises(ValueError, match="bytes_per_s"):
        kv_tiers.restore_time_s(LLAMA, context_tokens=10, bytes_per_s=0)
    with pytest.raises(ValueError, match="efficiency"):
        kv_tiers.recompute_time_s(LLAMA, h100, context_tokens=10, n_chips=8, efficiency=1.5)
    with pytest.raises(ValueError, match="life_years"):
        kv_tiers.storage_usd_per_byte_s(usd_per_byte=1e-9, life_years=0)
