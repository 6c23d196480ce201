"""The chapter recomputations that more than one document's claims need, each written once.

These functions repeat a chapter's own cell calls, argument for argument and in the same order,
so that the ledger's values equal the chapter's glued values bit for bit. Each docstring names
the chapter section (its MyST label) that it mirrors. Claim expressions call them by the bare
module name (``recompute.sparsity('deepseek_v3')``), as :func:`llmphys.claims.evaluate` resolves
every module of ``llmphys.claims``.

A helper that only one document needs stays in that document's module. Note that
:func:`llmphys.claims.overview.all_to_all_over_compute` is a different quantity from
:func:`expert_all_to_all_over_compute` here: chapter 3's MoE layer on 64 H100s in training,
against chapter 6's decode step on 320 chips.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from llmphys import (accounting, batching, economics, inference, kv_tiers, scale_up, specs,
                     trends, units)

__all__ = ["DTYPE", "CHIPS", "usd_per_chip_hour", "sparsity", "batch1_penalty",
           "batch1_penalty_range", "balance_batch_range", "schedule_max_latency_ms",
           "expert_all_to_all_over_compute", "pipelining_ratio", "long_context",
           "long_context_penalty", "rack_floor_ms", "idle_cache_tiers", "kv_keep_hours",
           "registry_growth", "ridge_growth_bf16", "owned_h100_hour", "capital_over_energy",
           "value_left_pct"]

#: How chapter 6 serves each model: Llama 3 70B in BF16, DeepSeek-V3 in FP8.
DTYPE = {"llama3_70b": "bf16", "deepseek_v3": "fp8"}
#: The chips chapter 6 compares (the GB200 joins them for the balance batch).
CHIPS = ("h100_sxm", "h200", "b200")


# -- chapter 6 (inference economics) -------------------------------------------------------------

def usd_per_chip_hour(chip: str) -> float:
    """The recorded on-demand rental price per GPU-hour that chapter 6 charges for ``chip``.

    ``data/prices.toml``, as every cost cell of ``chapters/06_economics.ipynb`` reads it.

    >>> usd_per_chip_hour("h100_sxm") > 0
    True
    """
    return economics.price(f"gpu_hour_usd.{chip}").value


def sparsity(model_key: str) -> float:
    """Weights read once every expert is touched over weights one token multiplies.

    Chapter 6's definition (sec-economics-sparsity-scale-up): total over active parameters,
    both without the embedding table.

    >>> round(sparsity("llama3_70b"), 6), round(sparsity("deepseek_v3"), 1)
    (1.0, 18.3)
    """
    m = specs.model(model_key)
    emb = accounting.embedding_params(m)
    return (accounting.n_params(m) - emb) / (accounting.n_active_params(m) - emb)


def batch1_penalty(model_key: str, chip_key: str, *, context_tokens: float = 1024) -> float:
    """Cost per token at batch 1 over the cost at the largest batch whose cache fits.

    Chapter 6 (sec-economics-decode-step-roofline): the model in its serving dtype on the fewest
    8-GPU servers that hold its weights, rental prices.

    >>> round(batch1_penalty("llama3_70b", "h100_sxm"))
    290
    """
    m, a, dt = specs.model(model_key), specs.accelerator(chip_key), DTYPE[model_key]
    n = inference.min_chips(m, a, weight_dtype=dt)
    kw = dict(context_tokens=context_tokens, n_chips=n,
              usd_per_chip_hour=usd_per_chip_hour(chip_key), weight_dtype=dt)
    b_max = inference.max_batch_by_memory(m, a, context_tokens=context_tokens, n_chips=n,
                                          weight_dtype=dt)
    return (inference.cost_per_token_usd(m, a, batch_size=1, **kw)
            / inference.cost_per_token_usd(m, a, batch_size=b_max, **kw))


def batch1_penalty_range() -> tuple[float, float]:
    """Least and greatest batch-1 penalty over Llama 3 70B and DeepSeek-V3 on H100/H200/B200.

    Chapter 6's table (sec-economics-decode-step-roofline), 1,024 tokens of context.

    >>> lo, hi = batch1_penalty_range()
    >>> 100 < lo < hi < 1000
    True
    """
    r = [batch1_penalty(m, a) for m in DTYPE for a in CHIPS]
    return min(r), max(r)


def balance_batch_range(model_key: str) -> tuple[float, float]:
    """Least and greatest zero-context balance batch over H100, H200, B200 and GB200.

    The model in its serving dtype, as chapter 6 tabulates it (sec-economics-balance-batch).

    >>> [round(b) for b in balance_batch_range("llama3_70b")]
    [206, 312]
    """
    m = specs.model(model_key)
    b = [inference.balance_batch(m, specs.accelerator(k), weight_dtype=DTYPE[model_key])
         for k in (*CHIPS, "gb200")]
    return min(b), max(b)


@cache
def schedule_max_latency_ms() -> tuple[float, float]:
    """Worst simulated arrival-to-token latency (ms) of chapter 6's 20 ms batch timetable.

    Sec-economics-batch-schedule-train: Poisson arrivals at 5,000 per second over 2 s, a batch
    departing every 20 ms and finishing 20 ms later; first with unlimited seats, then with 104
    seats (load 0.96). The generator is seeded and drawn in the chapter's order, so both values
    equal the chapter's.

    >>> free, tight = schedule_max_latency_ms()
    >>> round(free), tight > free
    (40, True)
    """
    rng = np.random.default_rng(2026)
    kw = dict(rate_per_s=5000.0, interval_s=20 * units.MS, horizon_s=2.0)
    free = batching.simulate_schedule(rng, **kw)
    tight = batching.simulate_schedule(rng, seats=104, **kw)
    return (float(free["latency_s"].max()) / units.MS, float(tight["latency_s"].max()) / units.MS)


def expert_all_to_all_over_compute(chip_key: str = "h100_sxm", *, fabric: str,
                                   destinations_per_token: float | None = None) -> float:
    """DeepSeek-V3's expert all-to-all time over its FP8 compute time per decode step.

    Chapter 6 (sec-economics-sparsity-scale-up): batch 4,096 on 320 chips, FP8 dispatch and
    BF16 combine. ``fabric="scale_up"``: every chip reaches every expert over its scale-up
    links; ``"scale_out"``: 8-GPU nodes joined by one NIC per GPU, at most
    ``destinations_per_token`` nodes per token if given.

    >>> round(expert_all_to_all_over_compute("h100_sxm", fabric="scale_up"), 2)
    0.6
    """
    if fabric not in ("scale_up", "scale_out"):
        raise ValueError(f"fabric must be 'scale_up' or 'scale_out', got {fabric!r}")
    dsv3, a = specs.model("deepseek_v3"), specs.accelerator(chip_key)
    up = fabric == "scale_up"
    c = scale_up.expert_all_to_all(
        dsv3, batch_size=4096, n_chips=320,
        link_bytes_per_s=(a.scale_up_bytes_per_s_per_direction if up
                          else a.scale_out_bytes_per_s_per_direction),
        chips_per_domain=1 if up else 8, destinations_per_token=destinations_per_token)["time_s"]
    comp = inference.decode_step(dsv3, a, batch_size=4096, context_tokens=0, n_chips=320,
                                 weight_dtype="fp8")["compute_time_s"]
    return c / comp


def pipelining_ratio(quantity: str, *, n_stages: int = 4) -> float:
    """A pipelined decode's ``quantity`` with ``n_stages`` stages over its value with one.

    Chapter 6's table (sec-economics-sparsity-scale-up): Llama 3 70B, stages of 8 H100s,
    micro-batches of 32 at 8,192 tokens. ``quantity`` is a key of
    :func:`llmphys.scale_up.pipelined_decode` (``"weight_bytes_per_chip"``,
    ``"kv_bytes_per_chip"``, ``"token_latency_s"``, ``"tokens_per_s_per_chip"``, ...).

    >>> pipelining_ratio("weight_bytes_per_chip"), pipelining_ratio("kv_bytes_per_chip")
    (0.25, 1.0)
    """
    llama, h100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    p1, ps = (scale_up.pipelined_decode(llama, h100, n_stages=s, chips_per_stage=8,
                                        batch_size=32, context_tokens=8192)[quantity]
              for s in (1, n_stages))
    return ps / p1


def _long_context_step(model_key: str, context_tokens: float) -> tuple:
    """Model, B200, and the decode-step arguments at the largest batch that fits."""
    m, b200, dt = specs.model(model_key), specs.accelerator("b200"), DTYPE[model_key]
    n = inference.min_chips(m, b200, weight_dtype=dt)
    b = inference.max_batch_by_memory(m, b200, context_tokens=context_tokens, n_chips=n,
                                      weight_dtype=dt)
    return m, b200, dict(batch_size=b, context_tokens=context_tokens, n_chips=n, weight_dtype=dt)


def _long_context_usd_per_token(model_key: str, context_tokens: float) -> float:
    m, b200, kw = _long_context_step(model_key, context_tokens)
    return inference.cost_per_token_usd(m, b200, usd_per_chip_hour=usd_per_chip_hour("b200"),
                                        **kw)


def long_context(model_key: str, *, context_tokens: float, what: str) -> float:
    """A decode step at the largest batch that fits on the fewest 8-B200 servers.

    Chapter 6 (sec-economics-context-length). what: ``"memory_over_compute"`` (time ratio) or
    ``"usd_per_mtok"`` (at the recorded B200 price).

    >>> long_context("llama3_70b", context_tokens=131072, what="memory_over_compute") > 1
    True
    """
    if what == "memory_over_compute":
        m, b200, kw = _long_context_step(model_key, context_tokens)
        s = inference.decode_step(m, b200, **kw)
        return s["memory_time_s"] / s["compute_time_s"]
    if what == "usd_per_mtok":
        return _long_context_usd_per_token(model_key, context_tokens) * units.MEGA
    raise ValueError(f"what must be 'memory_over_compute' or 'usd_per_mtok', got {what!r}")


def long_context_penalty(model_key: str, context_tokens: int) -> float:
    """Cost per generated token at ``context_tokens`` over that at 1,024 tokens, on B200s.

    Chapter 6 (sec-economics-context-length): the fewest B200s that hold the weights, the
    largest batch whose cache fits at each context, rental prices.

    >>> round(long_context_penalty("llama3_70b", 131072))
    94
    """
    return (_long_context_usd_per_token(model_key, context_tokens)
            / _long_context_usd_per_token(model_key, 1024))


def rack_floor_ms(model_key: str) -> float:
    """Bandwidth floor (ms per token) of one user alone on a GB200 NVL72 rack (72 GPUs).

    Chapter 6 (sec-economics-latency-floor): batch 1, zero context, weights in the serving
    precision.

    >>> rack_floor_ms("deepseek_v3") < rack_floor_ms("llama3_70b") < 1
    True
    """
    return inference.decode_step(specs.model(model_key), specs.accelerator("gb200"),
                                 batch_size=1, context_tokens=0, n_chips=72,
                                 weight_dtype=DTYPE[model_key])["step_time_s"] / units.MS


def idle_cache_tiers(context_tokens: int = 32768) -> dict[str, dict[str, float]]:
    """Chapter 6's tier costs for an idle Llama 3 70B conversation on 8 H100s.

    Sec-economics-idle-cache: HBM priced at the GPU-hour over its capacity, host DRAM and NVMe
    flash at their purchase price over their life, restores over eight PCIe 5 or NVMe links;
    a ``recompute`` row too.

    >>> round(idle_cache_tiers()["HBM"]["breakeven_idle_s"])
    90
    """
    p = economics.price
    life = p("storage_life_years.memory_and_flash").value
    dram = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("host_dram_usd_per_byte.ddr5_rdimm").value, life_years=life)
    flash = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("nvme_usd_per_byte.datacentre_tlc").value, life_years=life)
    pcie, nvme = p("host_link_bytes_per_s.pcie5_x16").value, p("nvme_bytes_per_s.gen5_ssd").value
    a, price = specs.accelerator("h100_sxm"), usd_per_chip_hour("h100_sxm")
    hbm = kv_tiers.hbm_usd_per_byte_s(a, usd_per_chip_hour=price)
    tiers = {"HBM": (float("inf"), hbm, 8), "host DRAM": (pcie, dram, 8), "NVMe": (nvme, flash, 8)}
    return kv_tiers.tier_costs(specs.model("llama3_70b"), a, context_tokens=context_tokens,
                               n_chips=8, weight_dtype="bf16", usd_per_chip_hour=price,
                               tiers=tiers)


def kv_keep_hours(tier: str) -> float:
    """Idle hours for which keeping a 32K-token Llama 3 70B cache in ``tier`` beats recomputing.

    ``tier`` is "HBM", "host DRAM" or "NVMe" (:func:`idle_cache_tiers`, sec-economics-idle-cache).

    >>> kv_keep_hours("NVMe") > kv_keep_hours("host DRAM") > kv_keep_hours("HBM")
    True
    """
    return idle_cache_tiers()[tier]["breakeven_idle_s"] / units.HOUR


# -- chapter 6, capital (sec-economics-capital) ----------------------------------------------------

def _owned_h100_inputs() -> dict[str, float]:
    """Chapter 6's central inputs for an owned H100: 5-year life, 80% use, recorded prices."""
    p = economics.price
    return dict(capex_usd=p("capex_usd_per_gpu.h100_sxm").value, life_years=5, utilization=0.8,
                power_w=p("system_power_w_per_gpu.h100_sxm").value,
                pue=p("pue.ai_datacentre").value,
                usd_per_kwh=p("electricity_usd_per_kwh.us_industrial").value,
                cost_of_capital_per_year=p("cost_of_capital.per_year").value)


def owned_h100_hour() -> dict[str, float]:
    """USD per used hour of an owned H100 (capital, energy, total), chapter 6's central inputs.

    Sec-economics-capital: five-year life, 80% utilisation, and the central values of
    ``data/prices.toml``.

    >>> c = owned_h100_hour()
    >>> c["capital"] > c["energy"] > 0
    True
    """
    return economics.usd_per_gpu_hour_owned(**_owned_h100_inputs())


def capital_over_energy() -> tuple[float, float]:
    """An owned H100's capital charge over its electricity, per used hour.

    Sec-economics-capital: first at the recorded central values (5-year life, 80% utilisation,
    cost of capital), then at the least favourable corner of the recorded ranges (cheapest
    hardware, dearest power, worst PUE, no cost of capital, 6-year life).

    >>> central, worst = capital_over_energy()
    >>> central > worst > 1
    True
    """
    p, kw = economics.price, _owned_h100_inputs()
    own = economics.usd_per_gpu_hour_owned(**kw)
    corners = [economics.usd_per_gpu_hour_owned(**{**kw, "capex_usd": c, "usd_per_kwh": e,
                                                   "pue": q, "cost_of_capital_per_year": 0.0,
                                                   "life_years": 6})
               for c in p("capex_usd_per_gpu.h100_sxm").range
               for e in p("electricity_usd_per_kwh.us_industrial").range
               for q in p("pue.ai_datacentre").range]
    return (own["capital"] / own["energy"],
            min(c["capital"] / c["energy"] for c in corners))


def value_left_pct(age_years: float) -> float:
    """Percent of an H100's economic value left at ``age_years``, as chapter 6 computes it.

    Sec-economics-capital: price-performance doubling at the recorded central rate,
    electricity as the only operating cost (relative to the on-demand rental price),
    discounting at 8% a year.

    >>> 0 < value_left_pct(2.0) < 100
    True
    """
    p = economics.price
    opex = owned_h100_hour()["energy"] / p("gpu_hour_usd.h100_sxm").value
    return 100 * economics.remaining_value_fraction(
        age_years, opex_fraction=opex,
        doubling_years=p("price_performance_doubling_years.gpu").value,
        discount_rate_per_year=0.08)


# -- chapter 4 (the memory wall), sec-memory-wall-growth -----------------------------------------

def _registry_fit(metric: str) -> float:
    """Chapter 4's ``growth[metric]``: the unrounded fit over the registry, sorted by launch."""
    accs = sorted(specs.accelerators().values(), key=lambda a: (a.launch_year, a.key))
    return trends.registry_growth(accs, metric)


def registry_growth(metric: str) -> float:
    """Growth per two years of ``metric`` across the registry, rounded as chapter 4 glues it.

    Sec-memory-wall-growth: a log-linear fit against launch year over every registered
    accelerator, glued as ``g_<metric>`` to three places.

    >>> registry_growth("peak_bf16") > registry_growth("hbm_bandwidth") > 1
    True
    """
    return round(_registry_fit(metric), 3)


def ridge_growth_bf16() -> float:
    """How much the BF16 ridge point rose per two years across the registry (chapter 4).

    Sec-memory-wall-growth: growth of dense BF16 peak over growth of HBM bandwidth, both
    unrounded, the ratio rounded to three places as chapter 4 glues ``ridge_growth_bf16``.

    >>> ridge_growth_bf16() > 1
    True
    """
    return round(_registry_fit("peak_bf16") / _registry_fit("hbm_bandwidth"), 3)
