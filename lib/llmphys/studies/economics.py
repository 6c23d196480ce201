"""Chapter 6's economics studies: an owned GPU's hour, a run's bill, list prices, cache tiers.

Each function takes the chip or model it prices (a registry key or spec) and reads the
recorded figures of ``data/prices.toml``; the formulas are :mod:`llmphys.economics` and
:mod:`llmphys.kv_tiers`.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from .. import economics, kv_tiers, specs, units  # noqa: F401 (specs, units: the doctests)
from ..economics import price
from ..specs import Accelerator, ConversationCase, Model

# -- an owned GPU, at the recorded central values -------------------------------------------------


def owned_inputs(chip_key: str) -> dict[str, float]:
    """An owned ``chip_key`` GPU's inputs to ``economics.usd_per_gpu_hour_owned``: a 5-year
    life, 80% use, and the recorded central prices of ``data/prices.toml``.

    >>> owned_inputs("h100_sxm")["life_years"]
    5
    """
    p = price
    return dict(
        capex_usd=p(f"capex_usd_per_gpu.{chip_key}").value,
        life_years=5,
        utilization=0.8,
        power_w=p(f"system_power_w_per_gpu.{chip_key}").value,
        pue=p("pue.ai_datacentre").value,
        usd_per_kwh=p("electricity_usd_per_kwh.us_industrial").value,
        cost_of_capital_per_year=p("cost_of_capital.per_year").value,
    )


def owned_hour(chip_key: str, **overrides: float) -> dict[str, float]:
    """USD per used hour of an owned GPU: ``capital``, ``energy``, ``total``.

    ``economics.usd_per_gpu_hour_owned`` at :func:`owned_inputs`; keyword ``overrides``
    replace any of those inputs.

    >>> c = owned_hour("h100_sxm")
    >>> c["capital"] > c["energy"] > 0
    True
    """
    return economics.usd_per_gpu_hour_owned(**{**owned_inputs(chip_key), **overrides})


def capital_over_energy(chip_key: str) -> tuple[float, float]:
    """An owned GPU's capital charge over its electricity per used hour (dimensionless).

    First at the recorded central values, then at the least favourable corner of the recorded
    ranges (cheapest hardware, dearest power, worst PUE, no cost of capital, 6-year life).

    >>> central, worst = capital_over_energy("h100_sxm")
    >>> central > worst > 1
    True
    """
    own = owned_hour(chip_key)
    corners = [
        owned_hour(
            chip_key, capex_usd=c, usd_per_kwh=e, pue=q, cost_of_capital_per_year=0.0, life_years=6
        )
        for c in price(f"capex_usd_per_gpu.{chip_key}").range
        for e in price("electricity_usd_per_kwh.us_industrial").range
        for q in price("pue.ai_datacentre").range
    ]
    return (own["capital"] / own["energy"], min(c["capital"] / c["energy"] for c in corners))


def value_left(chip_key: str, age_years: float) -> float:
    """Fraction of a GPU's economic value left at ``age_years``
    (``economics.remaining_value_fraction``).

    Price-performance doubling at the recorded central rate, electricity as the only operating
    cost (as a fraction of the on-demand rental price), discounting at 8% a year.

    >>> 0 < value_left("h100_sxm", 2.0) < 1
    True
    """
    opex = owned_hour(chip_key)["energy"] / price(f"gpu_hour_usd.{chip_key}").value
    return economics.remaining_value_fraction(
        age_years,
        opex_fraction=opex,
        doubling_years=price("price_performance_doubling_years.gpu").value,
        discount_rate_per_year=0.08,
    )


def economic_life_range(chip_key: str) -> tuple[float, float]:
    """Years a GPU stays worth running, at both ends of the recorded doubling-time range.

    ``economics.economic_life_years`` with the GPU's rental price new and the owned GPU's
    electricity per used hour as the operating cost.

    >>> lo, hi = economic_life_range("h100_sxm")
    >>> 0 < lo < hi
    True
    """
    energy = owned_hour(chip_key)["energy"]
    rent = price(f"gpu_hour_usd.{chip_key}").value
    lo, hi = price("price_performance_doubling_years.gpu").range
    short, long = (
        economics.economic_life_years(
            usd_per_hour_new=rent, opex_usd_per_hour=energy, doubling_years=d
        )
        for d in (lo, hi)
    )
    return short, long


def training_bill_usd(gpu_hours: str, *, usd_per_gpu_hour: str) -> float:
    """A run's recorded GPU-hours at a recorded rental price, USD (both ``prices.toml`` keys).

    >>> round(training_bill_usd("training_gpu_hours.deepseek_v3_total",
    ...                         usd_per_gpu_hour="gpu_hour_usd.h800_deepseek") / units.MEGA, 3)
    5.576
    """
    return price(gpu_hours).value * price(usd_per_gpu_hour).value


#: The API models whose list prices the chapter compares (``prices.toml`` api_usd_per_mtok.*).
API_MODELS = ("deepseek_v3", "claude_sonnet_4", "gpt_4o")


def api_output_over_input() -> dict[str, float]:
    """List price of an output token over that of an input token, per API model (dimensionless).

    >>> max(api_output_over_input().values())
    5.0
    """
    return {
        k: price(f"api_usd_per_mtok.{k}.output").value / price(f"api_usd_per_mtok.{k}.input").value
        for k in API_MODELS
    }


def cached_input_fraction() -> tuple[float, float]:
    """Least and greatest list price of a cached input token, as a fraction of an uncached one.

    >>> cached_input_fraction()
    (0.1, 0.5)
    """
    r = [
        price(f"api_usd_per_mtok.{k}.cached_input").value
        / price(f"api_usd_per_mtok.{k}.input").value
        for k in API_MODELS
    ]
    return min(r), max(r)


def idle_cache_tiers(
    model: Model,
    acc: Accelerator,
    *,
    n_chips: int = 8,
    weight_dtype: str = "bf16",
    n_links: int = 8,
    context_tokens: int,
) -> dict[str, dict[str, float]]:
    """``kv_tiers.tier_costs`` for an idle conversation at the recorded prices.

    HBM priced at the chip's rental price over its capacity; host DRAM and NVMe flash at their
    purchase price over their recorded life; restores over ``n_links`` PCIe 5 x16 or NVMe
    links. The rows are ``"HBM"``, ``"host DRAM"``, ``"NVMe"`` and ``"recompute"``.

    >>> round(idle_cache_tiers(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                        context_tokens=32768)["HBM"]["breakeven_idle_s"])
    100
    """
    p = price
    life = p("storage_life_years.memory_and_flash").value
    dram = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("host_dram_usd_per_byte.ddr5_rdimm").value, life_years=life
    )
    flash = kv_tiers.storage_usd_per_byte_s(
        usd_per_byte=p("nvme_usd_per_byte.datacentre_tlc").value, life_years=life
    )
    pcie, nvme = p("host_link_bytes_per_s.pcie5_x16").value, p("nvme_bytes_per_s.gen5_ssd").value
    usd = p(f"gpu_hour_usd.{acc.key}").value
    hbm = kv_tiers.hbm_usd_per_byte_s(acc, usd_per_chip_hour=usd)
    tiers = {
        "HBM": (float("inf"), hbm, n_links),
        "host DRAM": (pcie, dram, n_links),
        "NVMe": (nvme, flash, n_links),
    }
    return kv_tiers.tier_costs(
        model,
        acc,
        context_tokens=context_tokens,
        n_chips=n_chips,
        weight_dtype=weight_dtype,
        usd_per_chip_hour=usd,
        tiers=tiers,
    )


def _conversation_tiers(case: ConversationCase) -> dict[str, dict[str, float]]:
    """:func:`idle_cache_tiers` for an idle conversation case (8 chips, BF16, 8 links)."""
    if not isinstance(case, ConversationCase):
        raise TypeError(f"case must be a conversation scenario, got {type(case).__name__}")
    return idle_cache_tiers(
        specs.model(case.model),
        specs.accelerator(case.accelerator),
        context_tokens=case.context_tokens,
    )


def kv_keep_s(case: ConversationCase, tier: str) -> float:
    """Idle seconds for which keeping the case's cache in ``tier`` beats recomputing it.

    ``tier`` is "HBM", "host DRAM" or "NVMe" (:func:`idle_cache_tiers`, 8 chips, BF16).

    >>> c = specs.scenario("idle_conversation_32k")
    >>> kv_keep_s(c, "NVMe") > kv_keep_s(c, "host DRAM") > kv_keep_s(c, "HBM")
    True
    """
    rows = _conversation_tiers(case)
    if tier not in rows or tier == "recompute":
        raise ValueError(f"tier must be 'HBM', 'host DRAM' or 'NVMe', got {tier!r}")
    return rows[tier]["breakeven_idle_s"]


def tier_ladder(case: ConversationCase) -> tuple[float, float]:
    """How much longer each cheaper tier is worth keeping an idle cache in than the one above.

    Break-even idle time of host DRAM over that of HBM, and of NVMe over that of host DRAM
    (:func:`idle_cache_tiers`); both above 1 means HBM, DRAM, flash is the right order.

    >>> all(r > 1 for r in tier_ladder(specs.scenario("idle_conversation_32k")))
    True
    """
    t = {k: r["breakeven_idle_s"] for k, r in _conversation_tiers(case).items()}
    return t["host DRAM"] / t["HBM"], t["NVMe"] / t["host DRAM"]
