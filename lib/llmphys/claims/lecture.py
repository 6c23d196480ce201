"""Claims of the summary of Reiner Pope's blackboard lecture (``004_35a9eea2bc47d51c.txt``).

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields. Most of
the numbers are derived in chapter 6 (inference economics); the helpers below repeat that
chapter's own multi-step computations, with its choices (Llama 3 70B served in BF16, DeepSeek-V3
in FP8, rental prices from ``data/prices.toml``), so that ledger and prose agree.
"""

from __future__ import annotations

from .. import accounting, economics, inference, scale_up, specs, units
from . import recompute
from ._core import Bound, Claim, Compare, Range, Verdict
from .recompute import usd_per_chip_hour

SOURCE = "004_35a9eea2bc47d51c.txt"

LLAMA, DSV3 = "specs.model('llama3_70b')", "specs.model('deepseek_v3')"
H100, H200, GB200 = ("specs.accelerator('h100_sxm')", "specs.accelerator('h200')",
                     "specs.accelerator('gb200')")


def size_over_domain_hbm(model_key: str, chip: str = "h100_sxm") -> float:
    """A model's FP8 weights over the whole HBM of one scale-up domain of ``chip``.

    One byte per parameter against every byte of HBM in the domain (8 GPUs for an HGX H100).

    >>> round(size_over_domain_hbm("deepseek_v3"), 2)
    1.05
    """
    a = specs.accelerator(chip)
    return accounting.n_params(specs.model(model_key)) / scale_up.max_total_params(
        a, n_chips=a.scale_up_domain_size, weight_bytes_per_param=1.0, weight_fraction=1.0)


def tier_ladder() -> tuple[float, float]:
    """How much longer each cheaper tier is worth keeping an idle cache in than the one above.

    Break-even idle time of host DRAM over that of HBM, and of NVMe over that of host DRAM
    (:func:`~llmphys.claims.recompute.idle_cache_tiers`). Both above 1 means the order HBM,
    DRAM, flash is the right one.

    >>> all(r > 1 for r in tier_ladder())
    True
    """
    t = {k: r["breakeven_idle_s"] for k, r in recompute.idle_cache_tiers().items()}
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
        usd = inference.cost_per_token_usd(m, a, usd_per_chip_hour=usd_per_chip_hour("h200"), **kw)
        out[label] = (inference.decode_step(m, a, **kw)["step_time_s"], usd)
    return out["fast"][1] / out["slow"][1], out["slow"][0] / out["fast"][0]


def step_time_growth(multiple: float = 2.0) -> float:
    """Decode step time at ``multiple`` times the balance batch over that at the balance batch.

    Llama 3 70B on 8 H100s at zero context, as in chapter 6's margin table.

    >>> step_time_growth(2.0)
    2.0
    """
    m, a = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    b = inference.balance_batch(m, a)
    t = [inference.decode_step(m, a, batch_size=x * b, context_tokens=0, n_chips=8)["step_time_s"]
         for x in (1.0, multiple)]
    return t[1] / t[0]


CLAIMS: list[Claim] = [
    Claim(
        id="L01", source=SOURCE, where="The Roofline Analysis: The Mechanics of the Batch",
        claim="Sharing each weight read among thousands of users makes a generated token far "
              "cheaper than serving one user at a time.",
        stated="vastly more economical",
        check=Bound(expr="recompute.batch1_penalty_range()", op=">", threshold=10,
                    fmt="{:.0f}", unit="x"),
        verdict=Verdict.EXACT, section="sec-economics-decode-step-roofline",
        note="Cost per token at batch 1 over that at the largest batch whose cache fits, for "
             "Llama 3 70B and DeepSeek-V3 on H100, H200 and B200 at 1,024 tokens of context. "
             "We read 'vastly' as more than tenfold; the library gives "
             "[[recompute.batch1_penalty_range()[0]|.0f]] to "
             "[[recompute.batch1_penalty_range()[1]|.0f]] times.",
        glue=("06_economics", ("penalty_min", "penalty_max")),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="L02", source=SOURCE, where="The Roofline Analysis: The Mechanics of the Batch",
        claim="However much compute is available, a token cannot come faster than a read of the "
              "whole model from HBM, and on a Blackwell cluster that read takes 15 to 20 ms.",
        stated="roughly 15 to 20 milliseconds",
        check=Range(expr="inference.weight_bytes_read(" + DSV3 + ", batch_size=1e6, "
                         "weight_bytes_per_param=1.0) / (72 * " + GB200 + ".hbm_bytes_per_s) "
                         "/ units.MS", lo=15, hi=20, fmt="{:.2f}", unit="ms"),
        verdict=Verdict.DISPUTED, section="sec-economics-latency-floor",
        note="Reading all of DeepSeek-V3's FP8 weights (every expert) with the 72 GPUs of a "
             "GB200 NVL72 rack in parallel takes the value shown, more than ten times below the "
             "stated floor. What does come out near 20 ms is a single chip's capacity over "
             "bandwidth, [[inference.hbm_drain_time_s(" + GB200 + ") / units.MS|.1f]] ms for "
             "one GB200 GPU: the step time of a deployment that fills its HBM, not a lower bound "
             "on latency.",
        see_also=("L03", "L07"),
        glue=("06_economics", ("rack_all_dsv3_ms",)),
        refs=("nvidia2024gb200nvl72", "deepseek2024v3"),
    ),
    Claim(
        id="L03", source=SOURCE,
        where="The Roofline Analysis: The Mechanics of the Batch (also Q1, the train schedule)",
        claim="If a batch leaves every 20 ms whether or not it is full, the worst wait of a "
              "request is twice that interval.",
        stated="double the departure interval (2 x 20 ms)",
        check=Compare(expr="recompute.schedule_max_latency_ms()[0]", target="40", tol=1.0,
                      fmt="{:.1f}", unit="ms"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-batch-schedule-train",
        assumptions="the step takes as long as the interval (S = T = 20 ms), every batch has "
                    "room for everyone waiting, and the 'delay' runs from arrival to the end of "
                    "the step.",
        note="In closed form the worst case is T + S, here "
             "[[batching.schedule_latency_closed_form(interval_s=0.02)['worst_s'] / units.MS"
             "|.0f]] ms; the queueing delay proper, the wait for the next departure, is at "
             "most T. A 5 ms step gives "
             "[[batching.schedule_latency_closed_form(interval_s=0.02, service_s=0.005)"
             "['worst_s'] / units.MS|.0f]] ms. With 104 seats at a load of 0.96 the worst "
             "simulated request waits [[recompute.schedule_max_latency_ms()[1]|.1f]] ms, "
             "beyond twice the interval.",
        see_also=("L02",),
        glue=("06_economics", ("sim_max_ms",)),
        refs=("bailey1954bulk",),
    ),
    Claim(
        id="L04", source=SOURCE, where="The Roofline Analysis: The Mechanics of the Batch",
        claim="The batch that balances memory and compute is the chip's FLOP-per-byte ratio "
              "times the model's sparsity.",
        stated="compute/bandwidth ratio x sparsity",
        check=Compare(expr="inference.balance_batch(" + DSV3 + ", " + H100 + ", "
                           "weight_dtype='fp8') / (roofline.ridge_point(" + H100 + ") * "
                           "recompute.sparsity('deepseek_v3'))", target="1", tol=0.001,
                      fmt="{:.4f}", unit="(B* over ridge x sparsity)"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-balance-batch",
        assumptions="no KV-cache traffic (zero context), perfect overlap of memory and compute, "
                    "a batch large enough to touch every expert, and weights stored in the "
                    "precision the multipliers run at.",
        note="For DeepSeek-V3 on an H100 the balance batch is "
             "[[inference.balance_batch(" + DSV3 + ", " + H100 + ", weight_dtype='fp8')|,.0f]] "
             "sequences against a ridge of [[roofline.ridge_point(" + H100 + ")|.0f]] FLOP/B "
             "times a sparsity of [[recompute.sparsity('deepseek_v3')|.1f]]. The cache breaks the "
             "rule: at 1,024 tokens of context Llama 3 70B balances at "
             "[[inference.balance_batch(" + LLAMA + ", " + H100 + ", context_tokens=1024)|,.0f]] "
             "instead of [[inference.balance_batch(" + LLAMA + ", " + H100 + ")|.0f]].",
        see_also=("L05", "L06", "L09", "L26"),
        refs=("williams2009roofline", "pope2023efficiently"),
    ),
    Claim(
        id="L05", source=SOURCE,
        where="The Roofline Analysis: The Mechanics of the Batch (also Highlights)",
        claim="For most current hardware the best batch is about 2,000 to 3,000 tokens.",
        stated="2,000 to 3,000 tokens",
        check=Range(expr="recompute.balance_batch_range('llama3_70b') + "
                         "recompute.balance_batch_range('deepseek_v3')", lo=2000, hi=3000,
                    fmt="{:,.0f}",
                    unit="sequences"),
        verdict=Verdict.DISPUTED, section="sec-economics-balance-batch",
        note="The balance batch over H100, H200, B200 and GB200 is "
             "[[recompute.balance_batch_range('llama3_70b')[0]|.0f]] to "
             "[[recompute.balance_batch_range('llama3_70b')[1]|.0f]] for the dense Llama 3 70B and "
             "[[recompute.balance_batch_range('deepseek_v3')[0]|,.0f]] to "
             "[[recompute.balance_batch_range('deepseek_v3')[1]|,.0f]] for DeepSeek-V3: the "
             "number follows "
             "the model's sparsity, not the hardware. On an H100, 2,000 to 3,000 is the balance "
             "batch of a model with sparsity [[2000 / roofline.ridge_point(" + H100 + ")|.1f]] "
             "to [[3000 / roofline.ridge_point(" + H100 + ")|.1f]], which neither model is.",
        see_also=("L04", "L26", "L27"),
        glue=("06_economics", ("bstar_dense_lo", "bstar_dense_hi", "bstar_moe_lo",
                               "bstar_moe_hi")),
    ),
    Claim(
        id="L06", source=SOURCE, where="The Roofline Analysis: The Mechanics of the Batch",
        claim="Below the balance batch a step is held back by memory; well above it the "
              "arithmetic dominates and the time per step grows with the batch.",
        stated="latency spikes above it",
        check=Bound(expr="lecture.step_time_growth(2.0)", op=">", threshold=1, fmt="{:.2f}",
                    unit="x step time at 2 B*"),
        verdict=Verdict.EXACT, section="sec-economics-balance-batch",
        note="Doubling the batch past B* doubles the step time (Llama 3 70B, 8 H100s, zero "
             "context): the growth is linear, not a spike. What a batch below B* wastes is the "
             "multipliers, idle while the weights stream in; the memory system is busy either "
             "way, but each byte it moves serves fewer tokens.",
        see_also=("L04",),
    ),
    Claim(
        id="L07", source=SOURCE, where="Digging Deeper: paying 100x more for 100x speed",
        claim="Even a whole rack devoted to one user must wait about 20 ms per token to read "
              "the weights, so more money cannot buy a much faster token.",
        stated="~20 ms",
        check=Compare(expr="(recompute.rack_floor_ms('llama3_70b'), "
                           "recompute.rack_floor_ms('deepseek_v3'))", target=("20", "20"),
                      fmt="{:.3f}", unit="ms"),
        verdict=Verdict.DISPUTED, section="sec-economics-latency-floor",
        note="At batch 1 on a GB200 NVL72 rack the bandwidth floor is the value shown for "
             "Llama 3 70B and DeepSeek-V3 (which reads only its routed experts): about "
             "[[20 / recompute.rack_floor_ms('deepseek_v3')|.0f]] times below 20 ms for "
             "DeepSeek-V3. What keeps single-user latency in milliseconds is communication "
             "latency per collective, which this roofline leaves out, and the choice to batch.",
        see_also=("L02",),
        glue=("06_economics", ("rack_floor_llama_ms", "rack_floor_dsv3_ms")),
        refs=("nvidia2024gb200nvl72",),
    ),
    Claim(
        id="L08", source=SOURCE,
        where="Digging Deeper: the memory wall (also Key Takeaways)",
        claim="Compute keeps growing faster than memory bandwidth, so the gap between them "
              "widens.",
        stated="compute gets cheaper faster than memory gets faster",
        check=Bound(expr="recompute.ridge_growth_bf16()", op=">", threshold=1, fmt="{:.3f}",
                    unit="x ridge per 2 years"),
        verdict=Verdict.EXACT, section="sec-memory-wall-growth",
        note="Across the registry, dense BF16 peak grows "
             "[[recompute.registry_growth('peak_bf16')|.2f]]-fold and HBM bandwidth "
             "[[recompute.registry_growth('hbm_bandwidth')|.2f]]-fold per two years. The "
             "registry holds chip rates, not prices, so 'cheaper' is read as more FLOP/s per "
             "chip; the widening is modest at fixed precision and larger if FP8 and FP4 "
             "count as more compute.",
        glue=("04_memory_wall", ("ridge_growth_bf16",)),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="L09", source=SOURCE, where="Digging Deeper: sparsity and mixture of experts",
        claim="A mixture of experts cuts the arithmetic per token but not the weights to read, "
              "so it needs a larger batch to use the chip well.",
        stated="forces larger batch sizes",
        check=Bound(expr="inference.balance_batch(" + DSV3 + ", " + H100 + ", "
                         "weight_dtype='fp8') / inference.balance_batch(" + LLAMA + ", " + H100 +
                         ")", op=">", threshold=1, fmt="{:.1f}", unit="x the dense B*"),
        verdict=Verdict.EXACT, section="sec-economics-balance-batch",
        note="Once every expert is touched DeepSeek-V3 reads "
             "[[inference.weight_bytes_read(" + DSV3 + ", batch_size=1e6, "
             "weight_bytes_per_param=1.0) / inference.weight_bytes_read(" + DSV3 +
             ", batch_size=1, weight_bytes_per_param=1.0)|.1f]] times the weights a single "
             "token multiplies, and its balance batch on the same chip is larger by the same "
             "factor.",
        see_also=("L04",),
        refs=("deepseek2024v3",),
    ),
    Claim(
        id="L10", source=SOURCE, where="The Physical Reality of the GPU Rack",
        claim="An NVL72 rack joins 72 GPUs in one NVLink domain, where NVIDIA's previous "
              "servers joined 8.",
        stated="8-GPU trays to 72-GPU racks",
        check=Compare(expr="(" + H100 + ".scale_up_domain_size, " + GB200 +
                           ".scale_up_domain_size)", target=("8", "72"), fmt="{:.0f}",
                      unit="GPUs"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="The domain grew [[" + GB200 + ".scale_up_domain_size / " + H100 +
             ".scale_up_domain_size|.0f]]-fold in GPUs and "
             "[[72 * " + GB200 + ".hbm_bytes_per_s / (8 * " + H100 + ".hbm_bytes_per_s)|.0f]]-"
             "fold in HBM bandwidth; each GPU's NVLink only doubled.",
        refs=("nvidia2024h100datasheet", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="L11", source=SOURCE, where="The Physical Reality of the GPU Rack: cables and weight",
        claim="Copper cable density, bend radius and the weight of the rack, rather than the "
              "silicon, now limit how many GPUs one rack can join.",
        stated="bend radius and rack weight are the new bottlenecks",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-economics-sparsity-scale-up",
        note="The registries hold no cable counts, bend radii, rack masses or floor ratings, "
             "and whether these rather than power, cooling or NVLink switch radix set the "
             "72-GPU limit is an engineering judgement. It would be settled by vendor "
             "mechanical data (cable count and mass of the NVLink spine, rack mass) set against "
             "data-centre floor load ratings, and by whether larger NVLink domains (NVLink 5 "
             "allows up to 576 GPUs) ship as single racks or as several.",
        see_also=("L13",),
        refs=("nvidia2024gb200nvl72",),
    ),
    Claim(
        id="L12", source=SOURCE, where="The Physical Reality of the GPU Rack: the interconnect",
        claim="Traffic that leaves the rack over the scale-out network runs about eight times "
              "slower than over the scale-up fabric.",
        stated="typically 8x slower",
        check=Compare(expr="(scale_up.scale_up_to_out_ratio(" + H100 + "), "
                           "scale_up.scale_up_to_out_ratio(specs.accelerator('b200')))",
                      target=("8", "8"), fmt="{:.0f}", unit="x"),
        verdict=Verdict.DISPUTED, section="sec-economics-sparsity-scale-up",
        note="Per direction, NVLink over one 400 Gb/s NIC per GPU is the value shown for "
             "Hopper and for Blackwell, the generation the passage is about: eight fits "
             "Hopper roughly and understates Blackwell twofold. DeepSeek measured "
             "[[economics.price('link_bytes_per_s.h800_nvlink_achieved').value / "
             "economics.price('link_bytes_per_s.h800_infiniband').value|.1f]] on its "
             "export-limited H800s.",
        see_also=("L24",),
        glue=("06_economics", ("ratio_hopper", "ratio_blackwell")),
        refs=("nvidia2024h100datasheet", "nvidia2024b200", "deepseek2024v3"),
    ),
    Claim(
        id="L13", source=SOURCE, where="Digging Deeper: why not a 1,000-GPU rack",
        claim="One NVL72 rack draws about 120 kW.",
        stated="~120 kW",
        check=Compare(expr="72 * economics.price('system_power_w_per_gpu.b200').value "
                           "/ units.KILO", target="120", fmt="{:.1f}", unit="kW"),
        verdict=Verdict.APPROX, section="sec-economics-capital",
        note="The registries have no rack power, and NVIDIA's NVL72 page prints none. Our "
             "estimate gives each of the 72 GPUs what a DGX B200 draws per GPU at maximum load "
             "(CPUs, NICs, fans and conversion included); the GPUs alone at their "
             "[[" + GB200 + ".tdp_w|,.0f]] W GB200 setting draw "
             "[[72 * " + GB200 + ".tdp_w / units.KILO|.1f]] kW. Trade-press figures of about "
             "120 kW lie between the two, so the figure is plausible; a measured or "
             "vendor-stated rack power would settle it. The comparisons with a "
             "neighbourhood and with floor loading are not checkable here.",
        see_also=("L11",),
        refs=("nvidia2024b200", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="L14", source=SOURCE,
        where="The KV Cache and the Memory Wall: the persistent cost of context (also Q7)",
        claim="The cache of a long conversation is not shared across users and grows with "
              "every token, so a context of millions of tokens, like Gemini's 2 million, makes "
              "each generated token far dearer.",
        stated="2 million tokens, incredibly expensive",
        check=Bound(expr="(recompute.long_context_penalty('llama3_70b', 2_000_000), "
                         "recompute.long_context_penalty('deepseek_v3', 2_000_000))", op=">",
                    threshold=10, fmt="{:,.0f}", unit="x the cost at 1K context"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-context-length",
        assumptions="Gemini's architecture is unpublished; Llama 3 70B (GQA cache) and "
                    "DeepSeek-V3 (MLA cache) stand in, on the fewest B200s that hold their "
                    "weights, each at the largest batch whose caches fit.",
        note="At 2 million tokens one Llama 3 70B conversation caches "
             "[[kv_cache.kv_bytes_per_token(" + LLAMA + ") * 2_000_000 / units.GB|.0f]] GB, "
             "and a cache grows linearly with context. Already at 128K tokens a token costs "
             "[[recompute.long_context_penalty('llama3_70b', 131072)|.0f]] and "
             "[[recompute.long_context_penalty('deepseek_v3', 131072)|.0f]] times what it costs "
             "at 1K.",
        see_also=("L19",),
        refs=("geminiteam2024gemini15", "google2024geminilongcontext"),
    ),
    Claim(
        id="L15", source=SOURCE, where="The KV Cache and the Memory Wall: pipelining",
        claim="Splitting a model over four pipeline stages puts a quarter of the weights on "
              "each, but the four times as many sequences in flight leave the cache per GPU "
              "unchanged.",
        stated="25% of the weights; KV per GPU constant",
        check=Compare(expr="(recompute.pipelining_ratio('weight_bytes_per_chip'), "
                           "recompute.pipelining_ratio('kv_bytes_per_chip'))", target=("0.25", "1"),
                      fmt="{:.2f}", unit="x one stage (weights, KV)"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Per chip the cache is S B T k / (S c) = B T k / c for S stages of c chips with B "
             "sequences per micro-batch, whatever S (Llama 3 70B, stages of 8 H100s, 32 "
             "sequences, 8,192 tokens).",
        see_also=("L25",),
        refs=("huang2019gpipe", "pope2023efficiently"),
    ),
    Claim(
        id="L16", source=SOURCE, where="The KV Cache and the Memory Wall: memory tiers",
        claim="An active conversation's cache belongs in HBM, an idle one's in host DRAM and, "
              "for longer idleness, in flash.",
        stated="HBM, then DDR, then flash",
        check=Bound(expr="lecture.tier_ladder()", op=">", threshold=1, fmt="{:.0f}",
                    unit="x (DRAM over HBM, flash over DRAM break-even)"),
        verdict=Verdict.EXACT, section="sec-economics-idle-cache",
        note="For a 32K-token Llama 3 70B conversation on 8 H100s, keeping the cache beats "
             "recomputing it while the idle time is below "
             "[[recompute.idle_cache_tiers()['HBM']['breakeven_idle_s']|.0f]] s in HBM, "
             "[[recompute.idle_cache_tiers()['host DRAM']['breakeven_idle_s'] / units.HOUR|.0f]] "
             "h in DRAM and [[recompute.idle_cache_tiers()['NVMe']['breakeven_idle_s'] / "
             "units.DAY|.0f]] days on flash. The summary's gloss of flash as 'spinning disk' is "
             "wrong: flash is solid-state.",
        see_also=("L17",),
    ),
    Claim(
        id="L17", source=SOURCE, where="The KV Cache and the Memory Wall: memory tiers",
        claim="A cache miss forces the prompt to be processed again, which is why providers "
              "price cached input below fresh input.",
        stated="different rates for cached and fresh input",
        check=Bound(expr="lecture.cached_input_pct()", op="<", threshold=100, fmt="{:.0f}",
                    unit="% of the uncached price"),
        verdict=Verdict.EXACT, section="sec-economics-idle-cache",
        note="Restoring a cache from DRAM costs the GPUs about "
             "[[recompute.idle_cache_tiers()['host DRAM']['restore_usd'] / "
             "recompute.idle_cache_tiers()['recompute']['restore_usd'] * 100|.1f]]% of "
             "recomputing it; the list prices of DeepSeek, Anthropic and OpenAI charge cached "
             "input at the fractions shown.",
        see_also=("L16",),
        glue=("06_economics", ("cached_lo", "cached_hi")),
        refs=("deepseek2025pricing", "anthropic2025pricing", "openai2024pricing"),
    ),
    Claim(
        id="L18", source=SOURCE, where="Digging Deeper: input versus output prices",
        claim="Input tokens cost less than output tokens because prefill is limited by "
              "arithmetic and decode by reading the weights.",
        stated="prefill cheaper than decode",
        check=Bound(expr="lecture.output_over_input()", op=">", threshold=1, fmt="{:.1f}",
                    unit="x (roofline; list prices low, high)"),
        verdict=Verdict.EXACT, section="sec-economics-prefill-decode",
        note="On the roofline an output token of Llama 3 70B on 8 H100s costs the first value "
             "times an input token; list prices charge the other two. The mechanism is the "
             "usual case, not a law: a 64-token prompt is memory-bound (compute over memory "
             "time [[inference.prefill(" + LLAMA + ", " + H100 + ", prompt_tokens=64, "
             "n_chips=8)['compute_time_s'] / inference.prefill(" + LLAMA + ", " + H100 +
             ", prompt_tokens=64, n_chips=8)['memory_time_s']|.2f]]), and a decode batch "
             "above the balance batch at short context is compute-bound. A decode step reads "
             "the weights once for the whole batch, not once per generated token.",
        glue=("06_economics", ("io_ratio", "api_ratio_lo", "api_ratio_hi")),
        refs=("patel2024splitwise", "deepseek2025pricing", "anthropic2025pricing",
              "openai2024pricing"),
    ),
    Claim(
        id="L19", source=SOURCE, where="Digging Deeper: will context lengths keep growing",
        claim="At long contexts the cost of the KV cache overtakes the cost of the arithmetic.",
        stated="KV cost exceeds compute cost",
        check=Bound(expr="(inference.balanced_context_tokens(" + LLAMA + ", " + H100 + "), "
                         "inference.balanced_context_tokens(" + DSV3 + ", " + H100 +
                         ", weight_dtype='fp8'))", op="<", threshold=131072, fmt="{:,.0f}",
                    unit="tokens"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="Beyond the balanced context shown (Llama 3 70B, DeepSeek-V3 on an H100) a "
             "decode step reads more bytes of cache per sequence than the chip can match with "
             "arithmetic, at any batch: well inside the 128K tokens both models serve. It is "
             "the cache's bandwidth, more than its storage, that overtakes the compute.",
        see_also=("L14",),
        glue=("06_economics", ("tbal_llama_h100", "tbal_dsv3_h100")),
    ),
    Claim(
        id="L20", source=SOURCE, where="Key Takeaways (also The Physical Reality of the GPU Rack)",
        claim="Frontier model sizes have settled near the most that one scale-up domain of "
              "current hardware can hold.",
        stated="sizes represent the maximum scale-up domain",
        check=Bound(expr="(lecture.size_over_domain_hbm('llama31_405b'), "
                         "lecture.size_over_domain_hbm('deepseek_v3'))", op="<=", threshold=1,
                    fmt="{:.2f}", unit="x an HGX H100's HBM (FP8)"),
        verdict=Verdict.APPROX, section="sec-economics-sparsity-scale-up",
        note="In FP8, Llama 3.1 405B fills the value shown of an 8-GPU H100 domain's HBM and "
             "DeepSeek-V3 slightly more than all of it. With half the HBM left for cache, the "
             "domain caps a model at [[scale_up.max_total_params(" + H100 + ", n_chips=8, "
             "weight_bytes_per_param=1.0) / units.GIGA|.0f]] B parameters, which both exceed, "
             "and DeepSeek decodes over [[economics.price('deployment_n_gpus.deepseek_v3_"
             "decode').value|.0f]] GPUs: the domain puts a price on size, not a cap. A GB200 "
             "NVL72 would hold [[scale_up.max_total_params(" + GB200 + ", n_chips=72, "
             "weight_bytes_per_param=1.0) / units.TERA|.1f]] T. That data is not the limit is "
             "not something these numbers test.",
        see_also=("L24",),
        refs=("dubey2024llama3", "deepseek2024v3"),
    ),
    Claim(
        id="L21", source=SOURCE, where="Key Takeaways: the 33% equilibrium (also Highlights)",
        claim="The cheapest way to reach a frontier model is to spend about a third of the "
              "compute each on pretraining, RL and serving.",
        stated="one-third each",
        check=Compare(expr="(100 * compute_split.cost_minimising_shares([1.0, 1.0, 1.0])).tolist()",
                      target=("33", "33", "33"), fmt="{:.1f}", unit="%"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-compute-split",
        assumptions="output is a product of the three spends with equal elasticities; only "
                    "then are equal shares cost-minimising.",
        note="Under the Chinchilla loss the optimal split between pretraining and serving is "
             "not a constant: it follows the demand for inference, and equal costs correspond "
             "to overtraining by [[compute_split.optimum_at_cost_ratio(target_loss=2.0, "
             "cost_ratio=1.0)['overtraining']|.1f]]x.",
        see_also=("L22",),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla", "sardana2024beyond"),
    ),
    Claim(
        id="L22", source=SOURCE, where="Key Takeaways: overtraining",
        claim="Training past the Chinchilla point is a deliberate trade: a smaller model costs "
              "less to serve over its lifetime.",
        stated="over-training is deliberate",
        check=Bound(expr="compute_split.optimum_at_cost_ratio(target_loss=2.0, "
                         "cost_ratio=1.0)['overtraining']", op=">", threshold=1,
                    fmt="{:.1f}", unit="x Chinchilla tokens per parameter"),
        verdict=Verdict.EXACT, section="sec-economics-compute-split",
        note="When serving costs as much as pretraining, the lifetime optimum trains "
             "[[compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)"
             "['tokens_per_param']|.0f]] tokens per parameter, the overtraining shown. Llama 3 "
             "8B is overtrained about [[specs.model('llama3_8b').n_training_tokens / "
             "accounting.n_active_params(specs.model('llama3_8b')) / "
             "compute_split.CHINCHILLA_TOKENS_PER_PARAM|.0f]]x.",
        see_also=("L21",),
        glue=("06_economics", ("over_at_equal",)),
        refs=("hoffmann2022chinchilla", "sardana2024beyond"),
    ),
    Claim(
        id="L23", source=SOURCE, where="Q&A, Q2: DeepSeek's efficiency",
        claim="DeepSeek-V3 uses 37B of its 670B parameters per token.",
        stated="37B active of 670B total",
        check=Compare(expr="((accounting.n_active_params(" + DSV3 + ") - "
                           "accounting.embedding_params(" + DSV3 + ")) / units.GIGA, "
                           "accounting.n_params(" + DSV3 + ") / units.GIGA)",
                      target=("37", "670"), fmt="{:.1f}", unit="B"),
        verdict=Verdict.EXACT, section="sec-architecture-mixture-experts-memory",
        note="The report says 671B and 37B; the active count excludes the input-embedding "
             "lookup, as the report's 36.6B does.",
        glue=("03_architecture", ("ds_active", "ds_n")),
        refs=("deepseek2024v3",),
    ),
    Claim(
        id="L24", source=SOURCE,
        where="Q&A, Q3: the scale-up domain (also The Physical Reality of the GPU Rack)",
        claim="Experts spread beyond the NVLink domain make the all-to-all traffic the "
              "bottleneck of a mixture of experts.",
        stated="communication overhead prohibitively slow",
        check=Bound(expr="(recompute.expert_all_to_all_over_compute('h100_sxm', "
                         "fabric='scale_out'), recompute.expert_all_to_all_over_compute("
                         "'h100_sxm', fabric='scale_out', destinations_per_token=4))",
                    op=">", threshold=1, fmt="{:.2f}", unit="x FP8 compute time"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="For DeepSeek-V3 over InfiniBand the all-to-all takes the values shown (all "
             "experts off-node; at most four nodes per token) times the FP8 compute of a step, "
             "against [[recompute.expert_all_to_all_over_compute('h100_sxm', "
             "fabric='scale_up')|.2f]] over NVLink. "
             "'Prohibitive' overstates it: DeepSeek decodes over "
             "[[economics.price('deployment_n_gpus.deepseek_v3_decode').value|.0f]] GPUs by "
             "limiting nodes per token and overlapping micro-batches.",
        see_also=("L12", "L20"),
        glue=("06_economics", ("a2a_ib", "a2a_ib4")),
        refs=("deepseek2024v3", "lepikhin2021gshard"),
    ),
    Claim(
        id="L25", source=SOURCE, where="Q&A, Q4: why not pipeline everything",
        claim="Pipelining saves weight memory but lengthens the time per token and leaves "
              "GPUs idle in bubbles during training.",
        stated="increases latency",
        check=Bound(expr="recompute.pipelining_ratio('token_latency_s')", op=">=", threshold=1.05,
                    approx=0.0, fmt="{:.2f}", unit="x time per token (4 stages over 1)"),
        verdict=Verdict.DISPUTED, section="sec-economics-sparsity-scale-up",
        note="We test for at least 5% more time per token. In decode a token passes through "
             "every stage, each holding 1/S of the layers on the same chips, so its time is "
             "the unpipelined step time (plus microsecond hops between stages). Only against "
             "spreading the same S times as many chips over every layer is it slower. The "
             "training bubble is real: [[100 * parallelism.pipeline_bubble_fraction(16, 64)"
             "|.0f]]% of the time with 16 stages and 64 micro-batches.",
        see_also=("L15",),
        refs=("huang2019gpipe", "narayanan2021efficient"),
    ),
    Claim(
        id="L26", source=SOURCE, where="Q&A, Q5: the dimensionless constant",
        claim="Current GPUs can do about 300 operations per byte they read from memory.",
        stated="roughly 300",
        check=Compare(expr="(roofline.ridge_point(" + H100 + "), roofline.ridge_point(" + H200 +
                           "), roofline.ridge_point(specs.accelerator('b200')), "
                           "roofline.ridge_point(" + GB200 + "))",
                      target=("300", "300", "300", "300"), approx=0.35, fmt="{:.0f}",
                      unit="FLOP/B (H100, H200, B200, GB200)"),
        verdict=Verdict.APPROX, section="sec-economics-balance-batch",
        note="Dense BF16 peak over HBM bandwidth. The H100, B200 and GB200 lie within 50 of "
             "300; the H200, with the H100's compute and faster memory, sits about 30% lower, "
             "so we allow 35% for 'roughly'. In FP8 each ridge doubles, e.g. "
             "[[roofline.ridge_point(" + H100 + ", 'fp8')|.0f]] for the H100.",
        see_also=("L04", "L05"),
        refs=("nvidia2024h100datasheet", "nvidia2024b200", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="L27", source=SOURCE, where="Q&A, Q6: slow modes",
        claim="A slow mode lets the provider wait for a full batch of 2,000 or more users and "
              "charge less in exchange for latency.",
        stated="2,000+ users",
        check=Bound(expr="lecture.slow_mode_batch()", op=">=", threshold=2000, fmt="{:,.0f}",
                    unit="sequences"),
        verdict=Verdict.EXACT, section="sec-economics-batch-schedule-train",
        note="DeepSeek-V3 on 8 H200s at 2,048 tokens fits the batch shown; against a batch of "
             "16 it makes a token [[lecture.slow_mode_ratios()[0]|.0f]] times cheaper and "
             "[[lecture.slow_mode_ratios()[1]|.1f]] times slower.",
        see_also=("L05",),
    ),
]
