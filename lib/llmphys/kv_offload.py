"""KV offload tiers priced per node: what each tier holds, how fast it gives a cache back, and
the range of reuse intervals over which it is the cheapest place to keep a conversation.

A conversation that returns after a reuse interval tau can find its KV cache (k bytes) in a
tier that charges h USD per second to hold it and r USD to bring it back (the chips wait for
the copy: r = n_chips x price per chip-second x k / bandwidth), or rebuild it with a prefill
(r = the prefill's chip time, h = 0). Serving it costs

    c(tau) = r + h tau,

a straight line per tier. The cheapest tier at each tau is the lower envelope of the lines;
tier A (faster, dearer to hold) beats tier B up to the crossing

    tau_AB = (r_B - r_A) / (h_A - h_B),

so each tier pays over one band of reuse intervals. HBM is priced at the chip's rental over
its capacity (the batch the cache displaces), DRAM and flash at purchase price over their
life, as in ``kv_tiers``. Ref: Pope et al. 2023 (arXiv:2211.05102) sec. 3 for the cache size;
the tiering of CachedAttention (Gao et al. 2024, USENIX ATC, arXiv:2403.19708) and of
Mooncake (Qin et al. 2025, FAST, arXiv:2407.00079) is the design this prices.

Home: chapters/06_economics.ipynb, section "KV offload tiers priced".
"""

from __future__ import annotations

import math

from . import accounting, economics, kv_tiers, units
from .specs import Accelerator, Model

MONTH_S = units.YEAR / 12


def reuse_cost_usd(*, restore_usd: float, hold_usd_per_s: float, reuse_interval_s: float) -> float:
    """USD to serve a returning conversation from a tier after ``reuse_interval_s``: r + h tau.

    >>> reuse_cost_usd(restore_usd=0.01, hold_usd_per_s=1e-4, reuse_interval_s=60.0)
    0.016
    """
    if reuse_interval_s < 0:
        raise ValueError(f"reuse_interval_s must be >= 0, got {reuse_interval_s!r}")
    return restore_usd + hold_usd_per_s * reuse_interval_s


def crossover_s(fast: tuple[float, float], slow: tuple[float, float]) -> float:
    """Reuse interval (s) where two tiers cost the same; ``fast`` and ``slow`` are
    (restore_usd, hold_usd_per_s), the fast tier dearer to hold:
    (r_slow - r_fast) / (h_fast - h_slow).

    >>> crossover_s((0.0, 1e-3), (0.01, 1e-5))  # 0.01 USD saved per restore, 0.99e-3 USD/s more
    10.1
    """
    (r_f, h_f), (r_s, h_s) = fast, slow
    if not h_f > h_s:
        raise ValueError(f"fast must hold at a higher cost than slow, got {h_f!r} <= {h_s!r}")
    return round(max(r_s - r_f, 0.0) / (h_f - h_s), 12)


def cheapest_bands(tiers: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """For each tier that is ever cheapest, the reuse intervals (lo_s, hi_s) where it is.

    ``tiers`` maps a name to (restore_usd, hold_usd_per_s). The lower envelope of the lines
    r + h tau, walked from tau = 0: at each step the next tier is the one whose crossing with
    the current one comes first. A tier never cheapest is absent.

    >>> cheapest_bands({"hbm": (0.0, 1e-3), "dram": (1e-3, 1e-6), "recompute": (0.1, 0.0)})
    {'hbm': (0.0, 1.001001001001), 'dram': (1.001001001001, 99000.0), 'recompute': (99000.0, inf)}
    """
    if not tiers:
        raise ValueError("tiers must name at least one tier")
    left = dict(tiers)
    cur = min(left, key=lambda k: (left[k][0], -left[k][1]))  # cheapest at tau = 0
    lo, out = 0.0, {}
    while True:
        r, h = left.pop(cur)
        nxt = [
            ((rr - r) / (h - hh), k)
            for k, (rr, hh) in left.items()
            if hh < h and (rr - r) / (h - hh) >= lo
        ]
        if not nxt:
            out[cur] = (lo, math.inf)
            return out
        tau, k = min(nxt)
        out[cur] = (lo, round(tau, 12))
        lo, cur = round(tau, 12), k


def node_tiers(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: int,
    n_chips: int = 8,
    weight_dtype: str = "bf16",
    kv_bytes_per_element: float = 2.0,
) -> dict[str, dict[str, float]]:
    """Each KV tier of an ``n_chips`` node serving ``model``, for a ``context_tokens`` conversation.

    Tiers, at the recorded figures of data/prices.toml: "HBM" (the chips' memory left by the
    weights, rented), "Grace LPDDR5X (NVLink-C2C)" (a GH200-style CPU memory per GPU),
    "DDR5 (PCIe 5)" and "NVMe" (a DGX H100's host memory and drives), and "recompute".
    Per tier: ``capacity_bytes`` per node, ``conversations`` held, ``usd_per_gb_month`` to hold,
    ``link_bytes_per_s`` into the node's GPUs, ``fetch_s``, ``restore_usd``, ``hold_usd_per_s``.
    Restores come back over one link per chip (the cache is sharded by head). A smaller
    ``kv_bytes_per_element`` (an FP8 cache: 1.0) shrinks every copy tier's r and h alike, but
    not the prefill that recomputes it.

    >>> from llmphys import specs
    >>> t = node_tiers(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                context_tokens=32768)
    >>> round(t["DDR5 (PCIe 5)"]["fetch_s"] * 1e3, 1), round(t["recompute"]["fetch_s"], 2)
    (21.3, 1.57)
    """
    p = economics.price
    kv = kv_tiers.conversation_kv_bytes(
        model, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element
    )
    gpu_usd_h = p(f"gpu_hour_usd.{acc.key}").value
    chip_usd_s = n_chips * gpu_usd_h / units.HOUR
    life = p("storage_life_years.memory_and_flash").value
    dram = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("host_dram_usd_per_byte.ddr5_rdimm").value, life_years=life
    )
    flash = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("nvme_usd_per_byte.datacentre_tlc").value, life_years=life
    )
    weights = accounting.n_params(model) * units.bytes_per_element(weight_dtype)
    spec = {  # name: (capacity per node, USD per byte-second, bytes/s per link, links)
        "HBM": (
            n_chips * acc.hbm_bytes - weights,
            kv_tiers.hbm_usd_per_byte_s(acc, usd_per_chip_hour=gpu_usd_h),
            math.inf,
            n_chips,
        ),
        "Grace LPDDR5X (NVLink-C2C)": (
            n_chips * p("host_memory_bytes.gh200_lpddr5x").value,
            dram,
            p("host_link_bytes_per_s.nvlink_c2c").value,
            n_chips,
        ),
        "DDR5 (PCIe 5)": (
            p("node_memory_bytes.dgx_h100_ddr5").value,
            dram,
            p("host_link_bytes_per_s.pcie5_x16").value,
            n_chips,
        ),
        "NVMe": (
            p("node_flash_bytes.dgx_h100_nvme").value,
            flash,
            p("nvme_bytes_per_s.gen5_ssd").value,
            n_chips,
        ),
    }
    out = {}
    for name, (cap, usd_b_s, bw, links) in spec.items():
        t = 0.0 if bw == math.inf else kv / (links * bw)
        out[name] = {
            "capacity_bytes": cap,
            "conversations": math.floor(cap / kv),
            "usd_per_gb_month": usd_b_s * units.GB * MONTH_S,
            "link_bytes_per_s": links * bw,
            "fetch_s": t,
            "restore_usd": chip_usd_s * t,
            "hold_usd_per_s": kv * usd_b_s,
        }
    t_re = kv_tiers.recompute_time_s(
        model, acc, context_tokens=context_tokens, n_chips=n_chips, weight_dtype=weight_dtype
    )
    out["recompute"] = {
        "capacity_bytes": math.inf,
        "conversations": math.inf,
        "usd_per_gb_month": 0.0,
        "link_bytes_per_s": math.nan,
        "fetch_s": t_re,
        "restore_usd": chip_usd_s * t_re,
        "hold_usd_per_s": 0.0,
    }
    return out


def tier_bands(rows: dict[str, dict[str, float]]) -> dict[str, tuple[float, float]]:
    """:func:`cheapest_bands` of :func:`node_tiers`' rows: where each tier pays, in seconds."""
    return cheapest_bands({k: (r["restore_usd"], r["hold_usd_per_s"]) for k, r in rows.items()})
