"""kv_offload: the tiers of one node, their fetch times, and where each is the cheapest place to
keep a returning conversation's cache."""

import math

import numpy as np
import pytest

from llmphys import economics, kv_offload, specs, units

LLAMA, H100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
ROWS = kv_offload.node_tiers(LLAMA, H100, context_tokens=32768)
# Llama 3 70B caches 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 327,680 bytes a token
# (Dubey et al. 2024, Table 3 shapes); 32,768 tokens make 10.74 GB.
KV_BYTES = 2 * 80 * 8 * 128 * 2 * 32768


def test_llama3_70b_32k_ddr5_fetch_is_its_cache_over_eight_pcie5_links():
    # 63 GB/s per direction per PCIe 5 x16 link (PCI-SIG 5.0), one link per GPU; exact arithmetic.
    assert ROWS["DDR5 (PCIe 5)"]["fetch_s"] == pytest.approx(KV_BYTES / (8 * 63e9), rel=1e-12)
    assert ROWS["Grace LPDDR5X (NVLink-C2C)"]["fetch_s"] == pytest.approx(
        KV_BYTES / (8 * 450e9), rel=1e-12
    )


def test_a_dgx_h100s_flash_holds_2861_conversations_of_32k_tokens():
    # 8 x 3.84 TB of NVMe (DGX BasePOD reference architecture) over 10.74 GB per conversation.
    assert ROWS["NVMe"]["conversations"] == math.floor(30.72e12 / KV_BYTES) == 2861


def test_hbm_costs_its_rental_per_gb_month():
    # 2.95 USD per H100-hour over the chip's usable HBM, for a month of 1/12 of a Julian year.
    want = 2.95 / units.HOUR / H100.hbm_bytes * units.GB * units.YEAR / 12
    assert ROWS["HBM"]["usd_per_gb_month"] == pytest.approx(want, rel=1e-12)
    # and is hundreds of times dearer than the DRAM that holds the same byte
    assert ROWS["HBM"]["usd_per_gb_month"] / ROWS["DDR5 (PCIe 5)"]["usd_per_gb_month"] > 100


def test_every_copy_is_faster_than_recomputing_the_prefill():
    t = {k: r["fetch_s"] for k, r in ROWS.items()}
    assert t["HBM"] < t["Grace LPDDR5X (NVLink-C2C)"] < t["DDR5 (PCIe 5)"] < t["NVMe"]
    assert t["NVMe"] < t["recompute"] / 10


def test_cheapest_bands_match_a_brute_force_argmin_over_reuse_intervals():
    bands = kv_offload.tier_bands(ROWS)
    tau = np.logspace(-3, 9, 2001)
    names = list(ROWS)
    costs = np.array(
        [
            [
                kv_offload.reuse_cost_usd(
                    restore_usd=ROWS[n]["restore_usd"],
                    hold_usd_per_s=ROWS[n]["hold_usd_per_s"],
                    reuse_interval_s=x,
                )
                for x in tau
            ]
            for n in names
        ]
    )
    best = [names[i] for i in costs.argmin(axis=0)]
    for x, b in zip(tau, best, strict=True):
        lo, hi = bands[b]
        # within a grid step of a band's edge the two lines are equal to rounding
        assert lo / 1.02 <= x <= hi * 1.02, (x, b, bands[b])


def test_the_crossing_is_where_two_tiers_cost_the_same():
    a, b = ROWS["HBM"], ROWS["NVMe"]
    tau = kv_offload.crossover_s(
        (a["restore_usd"], a["hold_usd_per_s"]), (b["restore_usd"], b["hold_usd_per_s"])
    )
    ca = a["restore_usd"] + a["hold_usd_per_s"] * tau
    cb = b["restore_usd"] + b["hold_usd_per_s"] * tau
    assert ca == pytest.approx(cb, rel=1e-9)


def test_on_a_dgx_node_without_grace_memory_ddr5_pays_between_hbm_and_flash():
    dgx = {k: r for k, r in ROWS.items() if not k.startswith("Grace")}
    assert list(kv_offload.tier_bands(dgx)) == ["HBM", "DDR5 (PCIe 5)", "NVMe", "recompute"]


def test_the_prices_it_reads_carry_sources():
    for key in (
        "node_memory_bytes.dgx_h100_ddr5",
        "node_flash_bytes.dgx_h100_nvme",
        "host_link_bytes_per_s.nvlink_c2c",
        "host_memory_bytes.gh200_lpddr5x",
    ):
        p = economics.price(key)
        assert "http" in p.source and p.as_of.year >= 2024


@pytest.mark.parametrize(
    "bad",
    [
        dict(fast=(0.0, 1e-6), slow=(1.0, 1e-3)),
        dict(fast=(0.0, 1e-6), slow=(1.0, 1e-6)),
    ],
)
def test_crossover_rejects_a_fast_tier_that_is_not_dearer_to_hold(bad):
    with pytest.raises(ValueError, match="fast must hold"):
        kv_offload.crossover_s(**bad)


def test_reuse_cost_rejects_a_negative_interval():
    with pytest.raises(ValueError, match="reuse_interval_s"):
        kv_offload.reuse_cost_usd(restore_usd=0.0, hold_usd_per_s=1.0, reuse_interval_s=-1.0)


def test_hbm_gives_way_to_ddr5_after_one_gpus_hbm_streams_over_its_pcie_link():
    # Both HBM's holding cost (rental / HBM bytes) and a copy's restore (rental x copy time) are
    # the chip's rental, so the crossing is tau = hbm_bytes / link bandwidth, independent of the
    # price, the model and the context, less DDR5's own holding cost (about 0.3% of HBM's at the
    # recorded prices; the 1% tolerance covers it).
    dgx = {k: r for k, r in ROWS.items() if not k.startswith("Grace")}
    tau = kv_offload.tier_bands(dgx)["HBM"][1]
    assert tau == pytest.approx(H100.hbm_bytes / 63e9, rel=0.01)
    other = kv_offload.node_tiers(specs.model("llama3_8b"), H100, context_tokens=4096)
    other = {k: r for k, r in other.items() if not k.startswith("Grace")}
    assert kv_offload.tier_bands(other)["HBM"][1] == pytest.approx(tau, rel=0.01)
