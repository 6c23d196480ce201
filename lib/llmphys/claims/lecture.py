"""Claims of the written summary of Reiner Pope's blackboard lecture (``004_35a9eea2bc47d51c.txt``).

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields. Most of
the numbers are derived in chapter 6 (inference economics); the helpers below repeat that
chapter's own multi-step computations, with its choices (Llama 3 70B served in BF16, DeepSeek-V3
in FP8, rental prices from ``data/prices.toml``), so that ledger and prose agree.
"""

from __future__ import annotations

from .. import accounting, economics, inference, kv_tiers, roofline, scale_up, specs, trends, units
from ._core import Bound, Claim, Compare, Range, Verdict

SOURCE = "004_35a9eea2bc47d51c.txt"

#: How chapter 6 serves each model: Llama in BF16, DeepSeek-V3 in FP8.
DTYPE = {"llama3_70b": "bf16", "deepseek_v3": "fp8"}
#: The chips chapter 6 compares (the GB200 joins them for the balance batch).
CHIPS = ("h100_sxm", "h200", "b200")

LLAMA, DSV3 = "specs.model('llama3_70b')", "specs.model('deepseek_v3')"
H100, H200, GB200 = ("specs.accelerator('h100_sxm')", "specs.accelerator('h200')",
                     "specs.accelerator('gb200')")


def usd_per_chip_hour(chip: str) -> float:
    """The rental price per GPU-hour that chapter 6 charges for ``chip``.

    >>> usd_per_chip_hour("h100_sxm") > 0
    True
    """
    return economics.price(f"gpu_hour_usd.{chip}").value


def sparsity(model_key: str) -> float:
    """Weights read once every expert is touched over weights one token multiplies.

    Chapter 6's definition: total over active parameters, both without the embedding table.

    >>> round(sparsity("llama3_70b"), 6), round(sparsity("deepseek_v3"), 1)
    (1.0, 18.3)
    """
    m = specs.model(model_key)
    emb = accounting.embedding_params(m)
    return (accounting.n_params(m) - emb) / (accounting.n_active_params(m) - emb)


def batch1_penalty_range() -> tuple[float, float]:
    """Least and greatest ratio of the cost per token at batch 1 to that at the largest batch.

    Chapter 6's table: Llama 3 70B and DeepSeek-V3 on the fewest H100s, H200s or B200s that
    hold the weights, 1,024 tokens of context, the largest batch whose cache still fits.

    >>> lo, hi = batch1_penalty_range()
    >>> 100 < lo < hi < 1000
    True
    """
    ratios = []
    for key, dt in DTYPE.items():
        m = specs.model(key)
        for chip in CHIPS:
            a = specs.accelerator(chip)
            n = inference.min_chips(m, a, weight_dtype=dt)
            kw = dict(context_tokens=1024, n_chips=n, usd_per_chip_hour=usd_per_chip_hour(chip),
                      weight_dtype=dt)
            b_max = inference.max_batch_by_memory(m, a, context_tokens=1024, n_chips=n,
                                                  weight_dtype=dt)
            ratios.append(inference.cost_per_token_usd(m, a, batch_size=1, **kw)
                          / inference.cost_per_token_usd(m, a, batch_size=b_max, **kw))
    return min(ratios), max(ratios)


def balance_batch_ranges() -> tuple[float, float, float, float]:
    """Balance batch B* at zero context over H100, H200, B200 and GB200.

    Returns (dense low, dense high, MoE low, MoE high): Llama 3 70B in BF16 and DeepSeek-V3 in
    FP8, as chapter 6 tabulates them.

    >>> [round(b) for b in balance_batch_ranges()]
    [206, 312, 3771, 5717]
    """
    out = []
    for key, dt in DTYPE.items():
        bs = [inference.balance_batch(specs.model(key), specs.accelerator(chip), weight_dtype=dt)
              for chip in (*CHIPS, "gb200")]
        out += [min(bs), max(bs)]
    return tuple(out)


def ridge_growth_bf16() -> float:
    """How much the BF16 ridge point rose per two years across the registry (chapter 4).

    Growth of dense BF16 peak over growth of HBM bandwidth, each a log-linear fit against launch
    year over every registered accelerator, rounded to three places as chapter 4 glues it.

    >>> ridge_growth_bf16() > 1
    True
    """
    accs = sorted(specs.accelerators().values(), key=lambda a: (a.launch_year, a.key))
    return round(trends.registry_growth(accs, "peak_bf16")
                 / trends.registry_growth(accs, "hbm_bandwidth"), 3)


def long_context_penalty(model_key: str, context_tokens: int) -> float:
    """Cost per generated token at ``context_tokens`` over that at 1,024 tokens, on B200s.

    Chapter 6's setup: the fewest B200s that hold the weights, the largest batch whose cache
    fits at each context, rental prices.

    >>> round(long_context_penalty("llama3_70b", 131072))
    94
    """
    m, a, dt = specs.model(model_key), specs.accelerator("b200"), DTYPE[model_key]
    n = inference.min_chips(m, a, weight_dtype=dt)
    cost = []
    for t in (1024, context_tokens):
        b = inference.max_batch_by_memory(m, a, context_tokens=t, n_chips=n, weight_dtype=dt)
        cost.append(inference.cost_per_token_usd(m, a, batch_size=b, context_tokens=t, n_chips=n,
                                                 usd_per_chip_hour=usd_per_chip_hour("b200"),
                                                 weight_dtype=dt))
    return cost[1] / cost[0]


def pipelining_per_chip_ratios(n_stages: int = 4) -> tuple[float, float]:
    """Weights and KV cache per chip with ``n_stages`` pipeline stages, relative to one stage.

    Chapter 6's table: Llama 3 70B on stages of 8 H100s, 32 sequences per micro-batch, 8,192
    tokens of context.

    >>> pipelining_per_chip_ratios(4)
    (0.25, 1.0)
    """
    one, many = (scale_up.pipelined_decode(specs.model("llama3_70b"),
                                           specs.accelerator("h100_sxm"), n_stages=s,
                                           chips_per_stage=8, batch_size=32, context_tokens=8192)
                 for s in (1, n_stages))
    return (many["weight_bytes_per_chip"] / one["weight_bytes_per_chip"],
            many["kv_bytes_per_chip"] / one["kv_bytes_per_chip"])


def pipelining_latency_ratio(n_stages: int = 4) -> float:
    """Time per token with ``n_stages`` pipeline stages over that without (chapter 6's setup).

    >>> pipelining_latency_ratio(4)
    1.0
    """
    one, many = (scale_up.pipelined_decode(specs.model("llama3_70b"),
                                           specs.accelerator("h100_sxm"), n_stages=s,
                                           chips_per_stage=8, batch_size=32, context_tokens=8192)
                 for s in (1, n_stages))
    return many["token_latency_s"] / one["token_latency_s"]


def idle_cache_tiers(context_tokens: int = 32768) -> dict[str, dict[str, float]]:
    """Chapter 6's tier costs for an idle Llama 3 70B conversation on 8 H100s.

    HBM priced at the GPU-hour over its capacity, host DRAM and NVMe flash at their purchase
    price over their life, restores over eight PCIe 5 or NVMe links; a ``recompute`` row too.

    >>> round(idle_cache_tiers()["HBM"]["breakeven_idle_s"])
    90
    """
    p = economics.price
    life = p("storage_life_years.memory_and_flash").value
    dram = kv_tiers.storage_usd_per_byte_s(usd_per_byte=p("host_dram_usd_per_byte.ddr5_rdimm").value,
                                           life_years=life)
    flash = kv_tiers.storage_usd_per_byte_s(usd_per_byte=p("nvme_usd_per_byte.datacentre_tlc").value,
                                            life_years=life)
    pcie, nvme = p("host_link_bytes_per_s.pcie5_x16").value, p("nvme_bytes_per_s.gen5_ssd").value
    a, price = specs.accelerator("h100_sxm"), usd_per_chip_hour("h100_sxm")
    hbm = kv_tiers.hbm_usd_per_byte_s(a, usd_per_chip_hour=price)
    tiers = {"HBM": (float("inf"), hbm, 8), "host DRAM": (pcie, dram, 8), "NVMe": (nvme, flash, 8)}
    return kv_tiers.tier_costs(specs.model("llama3_70b"), a, context_tokens=context_tokens,
                               n_chips=8, weight_dtype="bf16", usd_per_chip_hour=price,
                               tiers=tiers)


def tier_ladder() -> tuple[float, float]:
    """How much longer each cheaper tier is worth keeping an idle cache in than the one above.

    Break-even idle time of host DRAM over that of HBM, and of NVMe over that of host DRAM
    (:func:`idle_cache_tiers`). Both above 1 means the order HBM, DRAM, flash is the right one.

    >>> all(r > 1 for r in tier_ladder())
    True
    """
    t = {k: r["breakeven_idle_s"] for k, r in idle_cache_tiers().items()}
    return t["host DRAM"] / t["HBM"], t["NVMe"] / t["host DRAM"]


API_MODELS = ("deepseek_v3", "claude_sonnet_4", "gpt_4o")


def cached_input_pct() -> tuple[float, float]:
    """Least and greatest list price of a cached input token, in % of an uncached one.

    >>> cached_input_pct()
    (10.0, 50.0)
    """
    p = economics.price
    r = [p(f"api_usd_per_mtok.{k}.cached_input").value / p(f"api_usd_per_mtok.{k}.input").value
         for k in API_MODELS]
    return min(r) * 100, max(r) * 100


def output_over_input() -> tuple[float, float, float]:
    """Output-token cost over input-token cost: on the roofline, then the list-price range.

    The first value is chapter 6's: Llama 3 70B on 8 H100s, a 4,096-token prompt priced at the
    prefill roofline, against output tokens at the largest batch that fits at 4,608 tokens.

    >>> [round(r, 1) for r in output_over_input()]
    [4.0, 4.0, 5.0]
    """
    m, a = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    price = usd_per_chip_hour("h100_sxm")
    s_in, t_out = 4096, 4096 + 512
    p = inference.prefill(m, a, prompt_tokens=s_in, n_chips=8)
    cost_in = 8 * price / units.HOUR * p["time_s"] / s_in
    b = inference.max_batch_by_memory(m, a, context_tokens=t_out, n_chips=8)
    cost_out = inference.cost_per_token_usd(m, a, batch_size=b, context_tokens=t_out, n_chips=8,
                                            usd_per_chip_hour=price)
    api = [economics.price(f"api_usd_per_mtok.{k}.output").value
           / economics.price(f"api_usd_per_mtok.{k}.input").value for k in API_MODELS]
    return cost_out / cost_in, min(api), max(api)


def slow_mode_batch() -> int:
    """The slow-mode batch of chapter 6: DeepSeek-V3 on 8 H200s in FP8 at 2,048 tokens.

    It is the largest batch whose cache fits beside the weights.

    >>> slow_mode_batch() > 2000
    True
    """
    m, a = specs.model("deepseek_v3"), specs.accelerator("h200")
    n = inference.min_chips(m, a, weight_dtype="fp8")
    return inference.max_batch_by_memory(m, a, context_tokens=2048, n_chips=n, weight_dtype="fp8")


def slow_mode_ratios() -> tuple[float, float]:
    """Fast (batch 16) over slow mode cost per token, and slow over fast time per token.

    >>> price, latency = slow_mode_ratios()
    >>> price > 10 and latency > 1
    True
    """
    m, a = specs.model("deepseek_v3"), specs.accelerator("h200")
    n = inference.min_chips(m, a, weight_dtype="fp8")
    out = {}
    for label, b in (("fast", 16), ("slow", slow_mode_batch())):
        kw = dict(batch_size=b, context_tokens=2048, n_chips=n, weight_dtype="fp8")
        out[label] = (inference.decode_step(m, a, **kw)["step_time_s"],
                      inference.cost_per_token_usd(m, a, usd_per_chip_hour=usd_per_chip_hour("h200"),
                                                   **kw))
    return out["fast"][1] / out["slow"][1], out["slow"][0] / out["fast"][0]


def expert_all_to_all_share(over: str = "infiniband", nodes_per_token: int | None = None) -> float:
    """DeepSeek-V3's expert all-to-all time over its FP8 compute time per decode step.

    Chapter 6's setup: 320 H100s, 4,096 sequences, FP8 dispatch and BF16 combine; ``over`` is
    ``"nvlink"`` (every chip on the fast link) or ``"infiniband"`` (8-GPU nodes joined by one
    400 Gb/s NIC per GPU, at most ``nodes_per_token`` nodes per token if given).

    >>> expert_all_to_all_share("nvlink") < 1 < expert_all_to_all_share("infiniband")
    True
    """
    m, a = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    if over == "nvlink":
        bw, per_domain = a.scale_up_bytes_per_s_per_direction, 1
    elif over == "infiniband":
        bw, per_domain = a.scale_out_bytes_per_s_per_direction, 8
    else:
        raise ValueError(f"over must be 'nvlink' or 'infiniband', got {over!r}")
    c = scale_up.expert_all_to_all(m, batch_size=4096, n_chips=320, link_bytes_per_s=bw,
                                   chips_per_domain=per_domain,
                                   destinations_per_token=nodes_per_token)["time_s"]
    comp = inference.decode_step(m, a, batch_size=4096, context_tokens=0, n_chips=320,
                                 weight_dtype="fp8")["compute_time_s"]
    return c / comp


CLAIMS: list[Claim] = []
