"""Where to keep an idle conversation's KV cache: HBM, host DRAM, NVMe, or nowhere.

Between two turns of a conversation its KV cache (T tokens x k bytes) can stay in
HBM, be copied to host DRAM or to flash, or be dropped and rebuilt by a second
prefill ("rematerialisation"). Each choice costs two things:

    restore  = bytes / bandwidth of the tier          (0 for HBM; a prefill for recompute)
    holding  = bytes x price per byte-second x idle time

A tier beats recomputation on speed when its bandwidth exceeds k times the prefill
rate in tokens/s, and on cost while the idle time is shorter than
recompute cost / holding cost per second. HBM's price per byte-second is the
GPU's hourly price over its capacity (the opportunity cost when memory is what
limits the batch); DRAM and flash are their purchase price over their life.
Ref: Pope et al. 2023 (arXiv:2211.05102) sec. 3 for the cache sizes; prompt
caching as sold by API providers is the product this prices.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from . import inference, kv_cache, predict, specs, units  # noqa: F401 (specs: doctests)
from .specs import Accelerator, Model


def conversation_kv_bytes(
    model: Model, *, context_tokens: int, kv_bytes_per_element: float = 2.0
) -> float:
    """Bytes of one conversation's KV cache after ``context_tokens`` tokens.

    >>> from llmphys import specs
    >>> round(conversation_kv_bytes(specs.model("llama3_70b"), context_tokens=32768) / 1e9, 2)
    10.74
    """
    return kv_cache.kv_cache_bytes(
        model, n_tokens=context_tokens, bytes_per_element=kv_bytes_per_element
    )


def restore_time_s(
    model: Model,
    *,
    context_tokens: int,
    bytes_per_s: float,
    n_links: int = 1,
    kv_bytes_per_element: float = 2.0,
) -> float:
    """Seconds to copy the cache back over ``n_links`` parallel links of ``bytes_per_s`` each.

    A cache sharded over n GPUs by attention head comes back over n PCIe links at once;
    a cache held whole by one GPU (data-parallel attention) over one.

    >>> from llmphys import specs
    >>> round(restore_time_s(specs.model("llama3_70b"), context_tokens=32768,
    ...                      bytes_per_s=63e9, n_links=8) * 1e3, 1)
    21.3
    """
    units.check_positive("bytes_per_s", bytes_per_s)
    units.check_positive("n_links", n_links)
    kv = conversation_kv_bytes(
        model, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element
    )
    return kv / (n_links * bytes_per_s)


def recompute_time_s(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: int,
    n_chips: int,
    weight_dtype: str = "bf16",
    efficiency: float | None = None,
) -> float:
    """Seconds to rebuild the cache by prefilling ``context_tokens`` again.

    The prefill (``inference.prefill``) priced as every prefill of chapter 6 is,
    ``predict.priced_time_s`` (the serving model's fitted GEMM efficiency on the FLOP time, its
    HBM efficiency on the byte time); or the roofline time over ``efficiency`` if given.

    >>> from llmphys import specs
    >>> round(recompute_time_s(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
    ...                        context_tokens=32768, n_chips=8), 2)
    1.57
    """
    p = inference.prefill(
        model, acc, prompt_tokens=context_tokens, n_chips=n_chips, weight_dtype=weight_dtype
    )
    if efficiency is None:
        return predict.priced_time_s(
            memory_time_s=p["memory_time_s"], compute_time_s=p["compute_time_s"]
        )
    units.check_fraction("efficiency", efficiency)
    return p["time_s"] / efficiency


def hbm_usd_per_byte_s(acc: Accelerator, *, usd_per_chip_hour: float) -> float:
    """Price of holding one byte in HBM for one second: hourly price / 3600 / capacity."""
    units.check_positive("usd_per_chip_hour", usd_per_chip_hour)
    return usd_per_chip_hour / units.HOUR / acc.hbm_bytes


def storage_usd_per_byte_s(*, usd_per_byte: float, life_years: float) -> float:
    """Price of holding one byte of purchased DRAM or flash for one second: price / life.

    >>> f"{storage_usd_per_byte_s(usd_per_byte=5e-9, life_years=5):.3g}"
    '3.17e-17'
    """
    units.check_positive("usd_per_byte", usd_per_byte)
    units.check_positive("life_years", life_years)
    return usd_per_byte / (life_years * units.YEAR)


def tier_costs(
    model: Model,
    acc: Accelerator,
    *,
    context_tokens: int,
    n_chips: int,
    usd_per_chip_hour: float,
    tiers: dict[str, tuple[float, float, int]],
    weight_dtype: str = "bf16",
    efficiency: float | None = None,
    kv_bytes_per_element: float = 2.0,
) -> dict[str, dict[str, float]]:
    """Restore time, restore cost, holding cost and break-even idle time for each tier.

    ``tiers`` maps a name to (bytes_per_s per link or inf for HBM, usd_per_byte_s,
    n_links). A "recompute" row is added. Restore cost charges the n chips for the
    restore time (they wait); break-even idle time = (recompute - restore cost) / holding.

    >>> from llmphys import specs
    >>> h100 = specs.accelerator("h100_sxm")
    >>> t = tier_costs(specs.model("llama3_70b"), h100, context_tokens=32768, n_chips=8,
    ...                usd_per_chip_hour=2.95,
    ...                tiers={"hbm": (float("inf"),
    ...                               hbm_usd_per_byte_s(h100, usd_per_chip_hour=2.95), 8)})
    >>> round(t["hbm"]["breakeven_idle_s"])  # HBM priced per usable byte (85.5 GB per H100)
    100
    """
    rate_usd_per_h = units.check_positive("usd_per_chip_hour", usd_per_chip_hour)
    gpu_usd_per_s = n_chips * rate_usd_per_h / units.HOUR
    kv = conversation_kv_bytes(
        model, context_tokens=context_tokens, kv_bytes_per_element=kv_bytes_per_element
    )
    t_re = recompute_time_s(
        model,
        acc,
        context_tokens=context_tokens,
        n_chips=n_chips,
        weight_dtype=weight_dtype,
        efficiency=efficiency,
    )
    recompute_usd = gpu_usd_per_s * t_re
    out = {}
    for name, (bw, usd_per_byte_s, n_links) in tiers.items():
        t = 0.0 if bw == float("inf") else kv / (n_links * bw)
        hold = kv * usd_per_byte_s
        out[name] = {
            "restore_s": t,
            "restore_usd": gpu_usd_per_s * t,
            "hold_usd_per_s": hold,
            "breakeven_idle_s": max(recompute_usd - gpu_usd_per_s * t, 0.0) / hold,
        }
    out["recompute"] = {
        "restore_s": t_re,
        "restore_usd": recompute_usd,
        "hold_usd_per_s": 0.0,
        "breakeven_idle_s": float("inf"),
    }
    return out
