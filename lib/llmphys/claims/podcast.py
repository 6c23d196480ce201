"""Claims of Reiner Pope's podcast, in the statement digest ``003_08ad06ea090836a4.txt``.

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields. The
helpers below repeat, call for call, the multi-step computations of the economics chapter
(``chapters/06_economics.ipynb``) so that a claim's expression stays one readable call and its
value equals the number the chapter glues into its prose.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from llmphys import compute_split, inference, parallelism, roofline, scale_up, specs, units

from . import recompute
from ._core import Bound, Claim, Compare, Verdict, half_unit
from .recompute import CHIPS, DTYPE, usd_per_chip_hour

SOURCE = "003_08ad06ea090836a4.txt"
LLAMA, DSV3 = "specs.model('llama3_70b')", "specs.model('deepseek_v3')"
H100, B200 = "specs.accelerator('h100_sxm')", "specs.accelerator('b200')"



def chip_cost_spread() -> float:
    """Dearest over cheapest chip for a Llama 3 70B token (1K context, largest batch, 8 GPUs).

    >>> round(chip_cost_spread(), 2)
    1.33
    """
    llama, cost = specs.model("llama3_70b"), []
    for k in CHIPS:
        a = specs.accelerator(k)
        b = inference.max_batch_by_memory(llama, a, context_tokens=1024, n_chips=8)
        cost.append(inference.cost_per_token_usd(llama, a, batch_size=b, context_tokens=1024,
                                                 n_chips=8, usd_per_chip_hour=usd_per_chip_hour(k)))
    return max(cost) / min(cost)


def weight_byte_share(model_key: str, chip_key: str, *, batch_size: float,
                      context_tokens: float) -> float:
    """Share of a decode step's HBM bytes that are weights (the rest is KV cache).

    >>> round(weight_byte_share("llama3_70b", "h100_sxm", batch_size=1, context_tokens=1024), 3)
    0.998
    """
    m, dt = specs.model(model_key), DTYPE[model_key]
    s = inference.decode_step(m, specs.accelerator(chip_key), batch_size=batch_size,
                              context_tokens=context_tokens, n_chips=8, weight_dtype=dt)
    return s["weight_bytes"] / (s["weight_bytes"] + s["kv_bytes"])


def slope_ratio(model_key: str, chip_key: str, *, context_tokens: float) -> float:
    """Compute time over memory time that one more sequence adds to a decode step.

    Measured as the step's increments from batch 1 to batch 2; the dense weight read does
    not change, so only the cache read and the per-sequence FLOP remain. 1 at T_bal.

    >>> round(slope_ratio("llama3_70b", "h100_sxm", context_tokens=4096), 2)
    0.38
    """
    m, a = specs.model(model_key), specs.accelerator(chip_key)
    s1, s2 = (inference.decode_step(m, a, batch_size=b, context_tokens=context_tokens,
                                    n_chips=8, weight_dtype=DTYPE[model_key]) for b in (1, 2))
    return ((s2["compute_time_s"] - s1["compute_time_s"])
            / (s2["memory_time_s"] - s1["memory_time_s"]))


def no_overlap_margin(multiple: float) -> float:
    """Cost of a step with no memory/compute overlap over its compute floor, at multiple x B*.

    Llama 3 70B on eight H100s at zero context, as in the chapter: 1 + 1 / multiple.

    >>> no_overlap_margin(1.0)
    2.0
    """
    llama, h100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    s = inference.decode_step(llama, h100, batch_size=multiple * inference.balance_batch(
        llama, h100), context_tokens=0, n_chips=8)
    return (s["memory_time_s"] + s["compute_time_s"]) / s["compute_time_s"]


def drain_time_ms(statistic: str) -> float:
    """Capacity over bandwidth (ms) across the registry: "min", "median" or "max".

    >>> round(drain_time_ms("min"), 1)
    19.5
    """
    t = [inference.hbm_drain_time_s(a) / units.MS for a in specs.accelerators().values()]
    stats = {"min": np.min, "median": np.median, "max": np.max}
    if statistic not in stats:
        raise ValueError(f"statistic must be min, median or max, got {statistic!r}")
    return float(stats[statistic](t))


def balance_batch_spread(*, context_tokens: float) -> float:
    """Largest over smallest balance batch of Llama 3 8B, 70B and 3.1 405B on an H100."""
    b = [inference.balance_batch(specs.model(k), specs.accelerator("h100_sxm"),
                                 context_tokens=context_tokens)
         for k in ("llama3_8b", "llama3_70b", "llama31_405b")]
    return max(b) / min(b)


def domain_growth(quantity: str) -> float:
    """Growth of a scale-up domain from an HGX H100 server (8 GPUs) to a GB200 NVL72 rack.

    quantity: "gpus", "hbm_bandwidth" or "hbm_capacity" (summed over the domain), or
    "link" (one GPU's scale-up bandwidth, one way).

    >>> domain_growth("gpus"), domain_growth("link")
    (9.0, 2.0)
    """
    h100, gb200 = specs.accelerator("h100_sxm"), specs.accelerator("gb200")
    if quantity == "link":
        return (gb200.scale_up_bytes_per_s_per_direction
                / h100.scale_up_bytes_per_s_per_direction)
    per_gpu = {"gpus": lambda a: 1.0, "hbm_bandwidth": lambda a: a.hbm_bytes_per_s,
               "hbm_capacity": lambda a: a.hbm_bytes}
    if quantity not in per_gpu:
        raise ValueError(f"quantity must be gpus, hbm_bandwidth, hbm_capacity or link, "
                         f"got {quantity!r}")
    f = per_gpu[quantity]
    return (gb200.scale_up_domain_size * f(gb200)) / (h100.scale_up_domain_size * f(h100))


def pipeline_product_needed(chip_key: str) -> float:
    """Smallest k_e x L_stage for which a pipeline boundary hides behind the expert traffic.

    ``scale_up.pipeline_boundary_slack`` is 2 k_e L_stage W_out / W_up; the product that
    makes it 1 is W_up / (2 W_out).

    >>> pipeline_product_needed("h100_sxm")
    4.5
    """
    dsv3 = specs.model("deepseek_v3")
    return dsv3.moe.n_experts_per_token / scale_up.pipeline_boundary_slack(
        dsv3, specs.accelerator(chip_key), layers_per_stage=1)


@cache
def _split_grid() -> tuple[tuple[float, float], ...]:
    grid = [compute_split.lifetime_optimum(target_loss=2.0, inference_tokens=d)
            for d in np.logspace(12, 16, 41)]
    return tuple((g["overtraining"], g["cost_ratio"]) for g in grid)


def cost_ratio_for_overtraining(factor: float) -> float:
    """Lifetime inference over pretraining cost at the optimum that is ``factor`` overtrained.

    Interpolated in log-log on the chapter's grid of optima (target loss 2.0, 1e12 to 1e16
    served tokens).
    """
    over, ratio = zip(*_split_grid())
    return float(np.exp(np.interp(np.log(factor), np.log(over), np.log(ratio))))


def cost_ratio_range() -> tuple[float, float]:
    """Least and greatest inference/pretraining cost ratio over the chapter's grid of optima."""
    ratios = [r for _, r in _split_grid()]
    return min(ratios), max(ratios)


def rl_token_share_pct(mode: str) -> float:
    """RL tokens buyable with pretraining's budget, as % of DeepSeek-V3's pretraining tokens.

    Rollouts decode on eight H200s at 2,048 tokens of context, at the largest batch that fits
    (``mode="slow"``) or at batch 16 (``"fast"``); training at 40% MFU.
    """
    dsv3, h200 = specs.model("deepseek_v3"), specs.accelerator("h200")
    n8 = inference.min_chips(dsv3, h200, weight_dtype="fp8")
    batch = {"slow": inference.max_batch_by_memory(dsv3, h200, context_tokens=2048, n_chips=n8,
                                                   weight_dtype="fp8"), "fast": 16}[mode]
    st = inference.decode_step(dsv3, h200, batch_size=batch, context_tokens=2048, n_chips=n8,
                               weight_dtype="fp8")
    rl = compute_split.rl_tokens_for_equal_cost(
        pretrain_tokens=dsv3.n_training_tokens, train_mfu=0.4,
        decode_efficiency=st["compute_time_s"] / st["step_time_s"])
    return rl / dsv3.n_training_tokens * 100


def prefill_decode_bounds() -> tuple[float, float]:
    """Llama 3 70B on eight H100s: a 4K prompt's compute/memory time, and decode's memory/compute.

    Decode runs at the largest batch that fits at 4,096 + 512 tokens (the chapter's
    input-versus-output example). Both above 1: prefill compute-bound, decode memory-bound.
    """
    llama, h100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    p = inference.prefill(llama, h100, prompt_tokens=4096, n_chips=8)
    b = inference.max_batch_by_memory(llama, h100, context_tokens=4096 + 512, n_chips=8)
    d = inference.decode_step(llama, h100, batch_size=b, context_tokens=4096 + 512, n_chips=8)
    return p["compute_time_s"] / p["memory_time_s"], d["memory_time_s"] / d["compute_time_s"]


def activation_gb(recompute: str) -> float:
    """Activation GB per GPU on Llama 3.1 405B's first pipeline stage (chapter 4's example).

    8,192-token sequences, micro-batch 1, TP 8, PP 16 with 1F1B (16 micro-batches in flight).
    """
    m, pp = specs.model("llama31_405b"), 16
    per_layer = parallelism.activation_bytes_per_layer(
        seq_len=8192, micro_batch=1, d_model=m.d_model, n_heads=m.n_heads, tp=8,
        recompute=recompute)
    layers_per_stage = m.n_layers / pp
    return per_layer * layers_per_stage * pp / units.GB  # p micro-batches on the first stage


# Thresholds that come from the library, not from the source.
_H100_RIDGE = roofline.ridge_point(specs.accelerator("h100_sxm"))
_ABOUT_300 = 300 + half_unit("300")  # "approximately 300" read to its stated precision
_MARGIN_AT_BSTAR = no_overlap_margin(1.0)
_PEAK_GROWTH = recompute.registry_growth("peak_bf16")
GB200 = "specs.accelerator('gb200')"
_FLOOR = "recompute.rack_floor_ms('{m}')"
_LONG = "recompute.long_context('{m}', context_tokens={t}, what='usd_per_mtok')"

CLAIMS: list[Claim] = [
    Claim(
        id="P01", source=SOURCE, where="1:52",
        claim="Of the choices that set what a generated token costs, the batch size moves it "
              "the most: more than the choice of chip.",
        stated="the big effect is batch size",
        check=Bound(expr="recompute.batch1_penalty_range()[0] / podcast.chip_cost_spread()",
                    op=">", threshold=1.0, fmt="{:.0f}", unit="x"),
        verdict=Verdict.EXACT, section="sec-economics-decode-step-roofline",
        note="The smallest batch-1 penalty in the chapter's grid, "
             "[[recompute.batch1_penalty_range()[0]|.0f]]x, against a spread of "
             "[[podcast.chip_cost_spread()|.2f]]x between H100, H200 and B200 for a Llama 3 70B "
             "token at the largest batch (1K context, rental prices). Context length is the "
             "other large lever: from 1K to 128K tokens a Llama 3 70B token on eight B200s gets "
             f"[[{_LONG.format(m='llama3_70b', t=131072)} / "
             f"{_LONG.format(m='llama3_70b', t=1024)}|.0f]] times dearer.",
        see_also=("P02",),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P02", source=SOURCE, where="4:39",
        claim="Serving users one at a time instead of batching them makes each token about a "
              "thousand times more expensive.",
        stated="like a thousand times worse",
        check=Compare(expr="recompute.batch1_penalty_range()", target=("1000", "1000"),
                      fmt="{:.0f}", unit="x"),
        verdict=Verdict.DISPUTED, section="sec-economics-decode-step-roofline",
        note="Batch 1 over the largest batch whose cache fits, for Llama 3 70B (BF16) and "
             "DeepSeek-V3 (FP8) on H100, H200 and B200 at 1K context: "
             "[[recompute.batch1_penalty_range()[0]|.0f]]x to "
             "[[recompute.batch1_penalty_range()[1]|.0f]]x. The order of magnitude is right, "
             "the number is not: for a dense model at short context the penalty approaches "
             "the chip's ridge point, and it shrinks as the context grows. Only a DeepSeek-V3 "
             "step that read every expert at batch 1 would cost "
             "[[recompute.batch1_penalty('deepseek_v3', 'h100_sxm') * inference.weight_bytes_read("
             f"{DSV3}, batch_size=1e6, weight_bytes_per_param=1.0) / inference.weight_bytes_read("
             f"{DSV3}, batch_size=1, weight_bytes_per_param=1.0)|,.0f]]x on an H100; a kernel "
             "that reads only the routed experts does not.",
        see_also=("P01", "P08"),
        glue=("06_economics", ("penalty_min", "penalty_max")),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P03", source=SOURCE, where="7:18",
        claim="When a new token attends over its cached history, the time goes mostly to "
              "reading the cache, not to the arithmetic.",
        stated="mostly dominated by memory fetches",
        check=Bound(expr=f"(kv_cache.decode_attention_intensity({LLAMA}), "
                         f"kv_cache.decode_attention_intensity({DSV3}))",
                    op="<", threshold=_H100_RIDGE, fmt="{:.0f}", unit="FLOP/B"),
        verdict=Verdict.EXACT, section="sec-architecture-decode-attention-roofline",
        note="Decode attention does 8 FLOP per cached byte for Llama 3 70B's grouped-query "
             "attention (its group size) and "
             f"[[kv_cache.decode_attention_intensity({DSV3})|.0f]] for DeepSeek-V3's absorbed "
             f"MLA, both left of the H100's ridge at [[roofline.ridge_point({H100})|.0f]] "
             "FLOP/B. The MLA kernel is close to balance, and on an H200 (ridge "
             "[[roofline.ridge_point(specs.accelerator('h200'))|.0f]]) it is compute-bound: "
             "'mostly' holds for multi-head and grouped-query attention, not for every design.",
        glue=("03_architecture", ("int_gqa", "int_ds")),
        refs=("pope2023efficiently", "ainslie2023gqa", "deepseek2024v2"),
    ),
    Claim(
        id="P04", source=SOURCE, where="10:28",
        claim="A token cannot be produced faster than the time it takes to stream every "
              "parameter of the model out of memory.",
        stated="read all of my total parameters",
        check=Compare(expr=f"inference.weight_bytes_read({DSV3}, batch_size=256, "
                           "weight_bytes_per_param=1.0) / inference.weight_bytes_read("
                           f"{DSV3}, batch_size=1e6, weight_bytes_per_param=1.0)",
                      target="1", tol=0.01, fmt="{:.4f}", unit="of all weights"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-latency-floor",
        assumptions="a dense model, or a mixture-of-experts batch large enough to touch every "
                    "expert: 256 tokens touch "
                    f"[[inference.experts_touched({DSV3}, batch_size=256)|.1f]] of DeepSeek-V3's "
                    "256 experts per layer.",
        note="A single DeepSeek-V3 user reads only the routed experts: on a GB200 NVL72 rack "
             "the bandwidth floor is "
             f"[[{_FLOOR.format(m='deepseek_v3')}|.3f]] ms per token, against "
             f"[[inference.weight_bytes_read({DSV3}, batch_size=1e6, weight_bytes_per_param=1.0)"
             f" / (72 * {GB200}.hbm_bytes_per_s) / units.MS|.2f]] ms to read all weights. "
             f"Llama 3 70B's floor there is [[{_FLOOR.format(m='llama3_70b')}|.2f]] ms.",
        refs=("pope2023efficiently", "deepseek2024v3"),
    ),
    Claim(
        id="P05", source=SOURCE, where="11:17",
        claim="As the context grows, the cache reads of a decode step outgrow its arithmetic, "
              "and the step turns from compute-limited to memory-limited.",
        stated="a transition from compute limited to memory limited",
        check=Bound(expr=f"(inference.balanced_context_tokens({LLAMA}, {H100}), "
                         f"inference.balanced_context_tokens({DSV3}, {H100}, weight_dtype='fp8'))",
                    op="<", threshold=8192, fmt="{:,.0f}", unit="tokens"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="Beyond the balanced context no batch makes a decode step compute-bound. On an "
             "H100 it lies below an ordinary 8,192-token conversation for both Llama 3 70B and "
             "DeepSeek-V3; on an H200 DeepSeek-V3's is "
             f"[[inference.balanced_context_tokens({DSV3}, specs.accelerator('h200'), "
             "weight_dtype='fp8')|,.0f]] tokens.",
        glue=("06_economics", ("tbal_llama_h100", "tbal_dsv3_h100")),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P06", source=SOURCE, where="11:39",
        claim="The context length at which one more sequence adds as much memory time as "
              "compute time is a good place to operate: both resources are used in full.",
        stated="slopes match: equally memory and compute bound",
        check=Compare(expr="podcast.slope_ratio('llama3_70b', 'h100_sxm', context_tokens="
                           f"inference.balanced_context_tokens({LLAMA}, {H100}))",
                      target="1", tol=0.01, fmt="{:.4f}", unit="compute / memory slope"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="At Llama 3 70B's balanced context on an H100, "
             f"[[inference.balanced_context_tokens({LLAMA}, {H100})|,.0f]] tokens, the compute "
             "and cache-read time one more sequence adds are equal. The weights still add a "
             "fixed memory time, so a whole step is balanced only in the limit of a large "
             "batch; and the place is a property of the chip-model pair, not a choice: at "
             "4,096 tokens the ratio is already "
             "[[podcast.slope_ratio('llama3_70b', 'h100_sxm', context_tokens=4096)|.2f]].",
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P07", source=SOURCE, where="12:29",
        claim="Attention that looks at only part of the history grows with the context far "
              "more slowly than full attention.",
        stated="scales much better",
        check=Bound(expr=f"kv_cache.kv_cache_bytes(kv_cache.with_attention({LLAMA}, 'gqa'), "
                         "n_tokens=128_000) / kv_cache.kv_cache_bytes(kv_cache.with_attention("
                         f"{LLAMA}, 'swa'), n_tokens=128_000)",
                    op=">", threshold=1.0, fmt="{:.1f}", unit="x smaller cache"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-attention-variants",
        assumptions="sparse attention taken as Mistral's 4,096-token sliding window on Llama 3 "
                    "70B's shape, at 128,000 tokens of context; the window's cache stops "
                    "growing at the window while the dense one grows linearly.",
        note="The dense grouped-query cache is "
             f"[[kv_cache.kv_cache_bytes(kv_cache.with_attention({LLAMA}, 'gqa'), "
             "n_tokens=128_000) / units.GB|.1f]] GB per sequence at 128,000 tokens, the window's "
             f"[[kv_cache.kv_cache_bytes(kv_cache.with_attention({LLAMA}, 'swa'), "
             "n_tokens=128_000) / units.GB|.2f]] GB. What it costs in quality is P37.",
        see_also=("P37",),
        refs=("beltagy2020longformer", "jiang2023mistral"),
    ),
    Claim(
        id="P08", source=SOURCE, where="15:04",
        claim="At very small batches a token is expensive because the weight reads, paid once "
              "per step, are shared by too few sequences.",
        stated="weight fetches which are not amortized",
        check=Bound(expr="podcast.weight_byte_share('llama3_70b', 'h100_sxm', batch_size=1, "
                         "context_tokens=1024)",
                    op=">", threshold=0.5, fmt="{:.1%}", unit="of bytes are weights"),
        verdict=Verdict.EXACT, section="sec-economics-decode-step-roofline",
        note="A batch-1 decode step of Llama 3 70B on eight H100s at 1K context reads almost "
             "nothing but weights, so its cost per token falls as 1/B until the balance batch "
             f"([[inference.balance_batch({LLAMA}, {H100})|.0f]] at zero context). The size of "
             "the effect is P02.",
        see_also=("P02",),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P09", source=SOURCE, where="19:17",
        claim="To stop wasting the multipliers, a decode batch must exceed roughly 300 times "
              "the model's sparsity (total over active weights).",
        stated="approximately 300 times sparsity",
        check=Bound(expr="recompute.balance_batch_range('llama3_70b')",
                    op="<=", threshold=_ABOUT_300, fmt="{:.0f}", unit="x sparsity"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-balance-batch",
        assumptions="no KV-cache traffic (zero context), perfect overlap of memory and compute, "
                    "and every expert read; then the balance batch is the ridge point times "
                    "the sparsity, here for sparsity 1 on H100, H200, B200 and GB200.",
        note="'300' is the H100's ridge, "
             f"[[roofline.ridge_point({H100})|.0f]]; the H200, with the same multipliers and "
             "faster memory, needs only "
             "[[roofline.ridge_point(specs.accelerator('h200'))|.0f]], the GB200 "
             f"[[roofline.ridge_point({GB200})|.1f]], so '~300' holds to its stated precision "
             "and over-asks on the H200. DeepSeek-V3 (sparsity "
             "[[recompute.sparsity('deepseek_v3')|.1f]]) needs "
             "[[recompute.balance_batch_range('deepseek_v3')[0]|,.0f]] to "
             "[[recompute.balance_batch_range('deepseek_v3')[1]|,.0f]] sequences. A KV cache "
             "raises it (P11).",
        see_also=("P14",),
        glue=("06_economics", ("bstar_dense_lo", "bstar_dense_hi")),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P10", source=SOURCE, where="19:51",
        claim="In practice one should run two or three times the balance batch.",
        stated="double it or triple it",
        check=Bound(expr="(podcast.no_overlap_margin(2), podcast.no_overlap_margin(3))",
                    op="<", threshold=_MARGIN_AT_BSTAR, fmt="{:.2f}", unit="x compute floor"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-balance-batch",
        assumptions="memory and compute do not overlap at all (step time = memory time + "
                    "compute time), so the cost per token over its floor is 1 + B*/B: "
                    "[[podcast.no_overlap_margin(1.0)|.0f]] at B*.",
        note="Under the max-roofline the cost per token is already at its floor at B*, and the "
             "margin buys nothing but 2-3 times longer steps. It pays only as insurance "
             "against imperfect overlap.",
        glue=("06_economics", ("margin_2", "margin_3")),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P11", source=SOURCE, where="20:15",
        claim="Cache reads compete with the weight reads for bandwidth, so a longer cache "
              "raises the batch needed to amortise the weights.",
        stated="need to grow ... the batch size more",
        check=Bound(expr=f"inference.balance_batch({LLAMA}, {H100}, context_tokens=1024) / "
                         f"inference.balance_batch({LLAMA}, {H100})",
                    op=">", threshold=1.0, fmt="{:.2f}", unit="x"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="A 1K-token cache raises Llama 3 70B's balance batch on an H100 from "
             f"[[inference.balance_batch({LLAMA}, {H100})|.0f]] to "
             f"[[inference.balance_batch({LLAMA}, {H100}, context_tokens=1024)|.0f]]; past the "
             f"balanced context, [[inference.balanced_context_tokens({LLAMA}, {H100})|,.0f]] "
             "tokens, no batch is enough.",
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P12", source=SOURCE, where="23:35",
        claim="If a batch leaves every 20 ms, a request can wait up to 40 ms from arrival to "
              "the end of its step.",
        stated="40 milliseconds",
        check=Compare(expr="recompute.schedule_max_latency_ms()[0]", target="40", fmt="{:.1f}",
                      unit="ms"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-batch-schedule-train",
        assumptions="each step fills its whole 20 ms interval (service time = interval) and "
                    "every departure has room for all who wait; the worst case is then interval "
                    "+ service (simulated: Poisson arrivals at 5,000 per second).",
        note="The mean is "
             "[[batching.schedule_latency_closed_form(interval_s=20 * units.MS)['mean_s'] / "
             "units.MS|.0f]] ms. With 104 seats per departure (load "
             "[[5000 * 20 * units.MS / 104|.2f]]) the worst request waits "
             "[[recompute.schedule_max_latency_ms()[1]|.1f]] ms, and a step shorter than "
             "its interval gives less than twice the interval.",
        glue=("06_economics", ("sim_max_ms",)),
        refs=("bailey1954bulk",),
    ),
    Claim(
        id="P13", source=SOURCE, where="24:10",
        claim="An accelerator's memory capacity divided by its memory bandwidth is typically "
              "about 20 ms.",
        stated="tends to be 20 milliseconds",
        check=Compare(expr="(podcast.drain_time_ms('min'), podcast.drain_time_ms('max'))",
                      target=("20", "20"), fmt="{:.1f}", unit="ms"),
        verdict=Verdict.DISPUTED, section="sec-economics-latency-floor",
        note="Across the registry's chips capacity over bandwidth runs from "
             "[[podcast.drain_time_ms('min')|.1f]] to [[podcast.drain_time_ms('max')|.1f]] "
             "ms, median [[podcast.drain_time_ms('median')|.1f]] ms: 20 ms is the low end, "
             "not the typical value. Hopper and Blackwell SXM parts sit near it (H100 "
             f"[[inference.hbm_drain_time_s({H100}) / units.MS|.1f]], B200 "
             f"[[inference.hbm_drain_time_s({B200}) / units.MS|.1f]] ms), the H200 and MI325X "
             "well above ([[inference.hbm_drain_time_s(specs.accelerator('h200')) / "
             "units.MS|.1f]] and [[inference.hbm_drain_time_s(specs.accelerator('mi325x')) / "
             "units.MS|.1f]] ms). "
             "It is the step time of a deployment whose HBM is full, not a latency floor.",
        glue=("06_economics", ("drain_min", "drain_max")),
        refs=("nvidia2024h100datasheet", "nvidia2024b200", "google2024tpudocs",
              "amd2023mi300x"),
    ),
    Claim(
        id="P14", source=SOURCE, where="26:04",
        claim="The balance batch depends on the model's sparsity only, not on its size.",
        stated="only depends on sparsity, not on scale",
        check=Compare(expr="podcast.balance_batch_spread(context_tokens=0)", target="1",
                      tol=1e-6, fmt="{:.3f}", unit="largest / smallest"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-balance-batch",
        assumptions="no KV cache (zero context): Llama 3 8B, 70B and 3.1 405B then share one "
                    "balance batch on an H100.",
        note="The cache bytes per token do not scale with the weights. At 1,024 tokens of "
             "context the 8B model has no balance batch at all "
             "([[inference.balance_batch(specs.model('llama3_8b'), "
             f"{H100}, context_tokens=1024)|,.0f]]), the 70B needs "
             f"[[inference.balance_batch({LLAMA}, {H100}, context_tokens=1024)|,.0f]] and the "
             "405B [[inference.balance_batch(specs.model('llama31_405b'), "
             f"{H100}, context_tokens=1024)|,.0f]].",
        see_also=("P09",),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P15", source=SOURCE, where="31:06",
        claim="Within the batching arithmetic, a sparser model costs nothing extra per token; "
              "its only price is more concurrent users, so sparsity pays until users run out.",
        stated="pure win ... until you run out of available users",
        check=Compare(expr=f"inference.balance_batch({DSV3}, {H100}, weight_dtype='fp8') / "
                           f"inference.balance_batch({LLAMA}, {H100}) / "
                           "recompute.sparsity('deepseek_v3')",
                      target="1", tol=0.001, fmt="{:.4f}", unit="B* ratio / sparsity ratio"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-sparsity-scale-up",
        assumptions="the talk's model up to that point: zero context, weights that fit in the "
                    "scale-up domain and expert traffic hidden under compute. The balance "
                    "batch then grows exactly with sparsity, and at or above it a token costs "
                    "the compute of its active weights alone.",
        note="DeepSeek-V3 needs "
             f"[[inference.balance_batch({DSV3}, {H100}, weight_dtype='fp8')|,.0f]] sequences "
             f"on an H100 against Llama 3 70B's [[inference.balance_batch({LLAMA}, {H100})|.0f]]. "
             "Outside the batching arithmetic sparsity is not free: the domain's memory caps "
             "the total parameters (P19), and experts spread beyond it pay in all-to-all "
             "time (P16).",
        see_also=("P16",),
        refs=("pope2023efficiently", "deepseek2024v3"),
    ),
    Claim(
        id="P16", source=SOURCE, where="36:41",
        claim="One rack (one scale-up domain) bounds how large an expert layer can be.",
        stated="one rack is actually the bounds",
        check=Bound(expr="(recompute.expert_all_to_all_over_compute('h100_sxm', "
                         "fabric='scale_out'), recompute.expert_all_to_all_over_compute("
                         "'h100_sxm', fabric='scale_out', destinations_per_token=4))",
                    op=">", threshold=1.0, fmt="{:.2f}", unit="x compute"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-sparsity-scale-up",
        assumptions="the expert all-to-all must hide under a compute-bound step (batch at or "
                    "above the balance batch). Below it the step is memory-bound and the "
                    "traffic can hide under the weight reads.",
        note="Once experts sit beyond an 8-GPU H100 node, DeepSeek-V3's all-to-all over "
             "InfiniBand takes longer than its FP8 compute at every batch, even with each "
             "token's experts on at most four nodes; inside the node it takes "
             "[[recompute.expert_all_to_all_over_compute('h100_sxm', fabric='scale_up')|.2f]] "
             "of it. A price, "
             "not a hard bound: DeepSeek decodes with experts spread over "
             "[[economics.price('deployment_n_gpus.deepseek_v3_decode').value|.0f]] GPUs in 40 "
             "nodes, overlapping two micro-batches below the balance batch.",
        see_also=("P15", "P19", "P26"),
        glue=("06_economics", ("a2a_ib", "a2a_ib4")),
        refs=("deepseek2024v3", "lepikhin2021gshard"),
    ),
    Claim(
        id="P17", source=SOURCE, where="39:35",
        claim="A GPU's scale-out network is about eight times slower than its scale-up links.",
        stated="about eight times slower",
        check=Compare(expr=f"(scale_up.scale_up_to_out_ratio({H100}), "
                           f"scale_up.scale_up_to_out_ratio({B200}))",
                      target=("8", "8"), fmt="{:.0f}", unit="x"),
        verdict=Verdict.DISPUTED, section="sec-memory-wall-scale-up-versus",
        note="Per direction per GPU, NVLink over one 400 Gb/s NIC is "
             f"[[scale_up.scale_up_to_out_ratio({H100})|.0f]]x on Hopper (eight is "
             "approximately right), [[scale_up.scale_up_to_out_ratio(specs.accelerator("
             "'a100_sxm'))|.0f]]x on the A100 and "
             f"[[scale_up.scale_up_to_out_ratio({B200})|.0f]]x on Blackwell, whose NVLink "
             "doubled while the reference NIC did not. DeepSeek measured "
             "[[economics.price('link_bytes_per_s.h800_nvlink_achieved').value / "
             "economics.price('link_bytes_per_s.h800_infiniband').value|.1f]]x on its "
             "export-limited H800s.",
        see_also=("P20",),
        glue=("06_economics", ("ratio_hopper", "ratio_blackwell")),
        refs=("nvidia2024h100datasheet", "nvidia2024b200", "deepseek2024v3"),
    ),
    Claim(
        id="P18", source=SOURCE, where="41:41",
        claim="The newest rack-scale scale-up domains are at least four times larger than the "
              "previous generation's, bought with a much harder rack design.",
        stated="at least a genuine 4x increase",
        check=Bound(expr="(podcast.domain_growth('gpus'), podcast.domain_growth('hbm_bandwidth'))",
                    op=">=", threshold=4.0, fmt="{:.1f}", unit="x"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="From an HGX H100 server to a GB200 NVL72 rack the domain grows "
             "[[podcast.domain_growth('gpus')|.0f]]x in GPUs and "
             "[[podcast.domain_growth('hbm_bandwidth')|.1f]]x in HBM bandwidth "
             "([[podcast.domain_growth('hbm_capacity')|.1f]]x in capacity); each GPU's "
             "scale-up link only [[podcast.domain_growth('link')|.0f]]x.",
        see_also=("P27",),
        refs=("nvidia2024h100datasheet", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="P19", source=SOURCE, where="47:02",
        claim="Compute cost limits a model's active parameters; the memory of the scale-up "
              "domain limits its total parameters.",
        stated="total parameters is limited by the scale up size",
        check=Bound(expr=f"accounting.n_params({DSV3}) / scale_up.max_total_params({GB200}, "
                         "n_chips=72, weight_bytes_per_param=1.0)",
                    op="<", threshold=1.0, fmt="{:.2f}", unit="of the NVL72 cap"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="With FP8 weights filling half the HBM, a GB200 NVL72 rack caps the total at "
             f"[[scale_up.max_total_params({GB200}, n_chips=72, weight_bytes_per_param=1.0) / "
             "units.TERA|.1f]]T parameters, an HGX H100 box at "
             f"[[scale_up.max_total_params({H100}, n_chips=8, weight_bytes_per_param=1.0) / "
             "units.GIGA|.0f]]B. DeepSeek-V3's "
             f"[[accounting.n_params({DSV3}) / units.GIGA|.0f]]B fit the rack, not the H100 "
             "box, which is why DeepSeek serves it across nodes at the price of P16. Active "
             "parameters set the FLOP per token, hence the compute-bound cost.",
        see_also=("P16",),
        refs=("deepseek2024v3", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="P20", source=SOURCE, where="52:56",
        claim="A pipeline-stage boundary costs nothing extra when the active experts per token "
              "times the MoE layers per stage exceeds eight.",
        stated="the product ... bigger than eight",
        check=Compare(expr="(podcast.pipeline_product_needed('h100_sxm'), "
                           "podcast.pipeline_product_needed('gb200'))",
                      target=("8", "8"), fmt="{:.1f}", unit="experts x layers"),
        verdict=Verdict.DISPUTED, section="sec-economics-sparsity-scale-up",
        note="A boundary sends d values per token over scale-out; the stage's MoE layers send "
             "2 k_e d per token per layer (dispatch and combine) over scale-up, so the "
             "boundary hides when 2 k_e L_stage is at least the up/out bandwidth ratio: "
             "k_e L_stage of [[podcast.pipeline_product_needed('h100_sxm')|.1f]] on Hopper, "
             "[[podcast.pipeline_product_needed('gb200')|.0f]] on Blackwell. The talk's 8 is "
             "the Hopper ratio without the factor 2: twice too strict there, slightly too "
             "lax on Blackwell. DeepSeek-V3 (8 experts) with one MoE layer per stage has "
             "slack [[scale_up.pipeline_boundary_slack("
             f"{DSV3}, {H100}, layers_per_stage=1)|.2f]] on Hopper and "
             f"[[scale_up.pipeline_boundary_slack({DSV3}, {GB200}, layers_per_stage=1)|.2f]] "
             "on GB200.",
        see_also=("P17",),
        glue=("06_economics", ("ratio_hopper", "ratio_blackwell")), glue_scale=0.5,
        refs=("deepseek2024v3", "huang2019gpipe"),
    ),
    Claim(
        id="P21", source=SOURCE, where="55:35",
        claim="Pipelining an inference deployment saves neither memory time nor compute time "
              "per token.",
        stated="saving on memory time or compute time? Not really",
        check=Compare(expr="(recompute.pipelining_ratio('token_latency_s'), "
                           "recompute.pipelining_ratio('tokens_per_s_per_chip'))",
                      target=("1", "1"), tol=1e-9, fmt="{:.2f}", unit="x (4 stages / 1)"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Llama 3 70B on stages of eight H100s, micro-batches of 32 at 8,192 tokens: with "
             "four stages each does a quarter of the step for four micro-batches in flight, so "
             "a token's latency and each chip's tokens per second are those of one stage.",
        see_also=("P24",),
        refs=("huang2019gpipe", "pope2023efficiently"),
    ),
    Claim(
        id="P22", source=SOURCE, where="56:04",
        claim="Pipelining greatly relieves the memory-capacity limit of one rack.",
        stated="massively reduce that bottleneck",
        check=Bound(expr="recompute.pipelining_ratio('weight_bytes_per_chip')", op="<",
                    threshold=1.0, fmt="{:.2f}", unit="x weights per chip (4 stages / 1)"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Four stages divide the weights each chip holds by four; the cache per chip does "
             "not change (P25). With Llama 3 70B at 8,192 tokens and micro-batches of 32, each "
             "H100 of four stages holds "
             "[[scale_up.pipelined_decode(specs.model('llama3_70b'), specs.accelerator("
             "'h100_sxm'), n_stages=4, chips_per_stage=8, batch_size=32, context_tokens=8192)"
             "['weight_bytes_per_chip'] / units.GB|.1f]] GB of weights and "
             "[[scale_up.pipelined_decode(specs.model('llama3_70b'), specs.accelerator("
             "'h100_sxm'), n_stages=4, chips_per_stage=8, batch_size=32, context_tokens=8192)"
             "['kv_bytes_per_chip'] / units.GB|.1f]] GB of cache: the relief is for the "
             "weights only.",
        refs=("huang2019gpipe",),
    ),
    Claim(
        id="P23", source=SOURCE, where="59:58",
        claim="For how fast training converges, a smaller batch is always better.",
        stated="smaller is always better",
        check=Bound(expr="critical_batch.examples(500.0, min_examples=1.0, critical_batch=1000.0)"
                         " / critical_batch.examples(1000.0, min_examples=1.0, "
                         "critical_batch=1000.0)",
                    op="<", threshold=1.0, fmt="{:.2f}", unit="x tokens (B/2 vs B)"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-batch-size",
        assumptions="convergence counted in training tokens (or FLOP) to a given loss, "
                    "E = E_min (1 + B / B_crit), which rises with B at every batch size; "
                    "shown here halving a batch at the critical batch.",
        note="Counted in optimizer steps, and so in hours on a fixed cluster, halving the "
             "batch there takes "
             "[[critical_batch.steps(500.0, min_steps=1.0, critical_batch=1000.0) / "
             "critical_batch.steps(1000.0, min_steps=1.0, critical_batch=1000.0)|.1f]] times "
             "the steps: smaller is better for data and FLOP, worse for wall-clock time.",
        refs=("mccandlish2018largebatch",),
    ),
    Claim(
        id="P24", source=SOURCE, where="1:00:59",
        claim="For inference, pipelining leaves batch size and latency where they were.",
        stated="neutral",
        check=Compare(expr="(recompute.pipelining_ratio('kv_bytes_per_chip'), "
                           "recompute.pipelining_ratio('token_latency_s'))",
                      target=("1", "1"), tol=1e-9, fmt="{:.2f}", unit="x (4 stages / 1)"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Per chip the cache of the batch and the per-token latency are unchanged by four "
             "stages; keeping the stages busy takes S micro-batches in flight, so S times the "
             "chips serve S times the sequences.",
        see_also=("P21", "P25"),
        refs=("huang2019gpipe", "pope2023efficiently"),
    ),
    Claim(
        id="P25", source=SOURCE, where="1:12:51",
        claim="Spreading a model over pipeline stages does not shrink the KV cache each chip "
              "must hold.",
        stated="can't shard it across pipeline stages",
        check=Compare(expr="recompute.pipelining_ratio('kv_bytes_per_chip')", target="1",
                      tol=1e-9, fmt="{:.2f}", unit="x cache per chip (4 stages / 1)"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Each chip keeps the cache of its L/S layers for all S micro-batches in flight: "
             "S B T k / (S c) = B T k / c, as without pipelining.",
        see_also=("P24",),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P26", source=SOURCE, where="1:13:10",
        claim="Serve a large MoE with expert parallelism across the whole scale-up domain and "
              "only a little pipelining.",
        stated="expert parallelism up to your scale up domain size",
        check=Bound(expr="(recompute.expert_all_to_all_over_compute('h100_sxm', "
                         "fabric='scale_up'), recompute.expert_all_to_all_over_compute('gb200', "
                         "fabric='scale_up'))",
                    op="<", threshold=1.0, fmt="{:.2f}", unit="x compute"),
        verdict=Verdict.EXACT, section="sec-economics-sparsity-scale-up",
        note="Inside the scale-up domain DeepSeek-V3's all-to-all hides under its FP8 compute "
             "(HGX H100 and GB200 NVL72); outside it, it does not (P16). Pipelining is then "
             "needed only to fit the weights, and changes nothing else (P21, P24).",
        see_also=("P16",),
        glue=("06_economics", ("a2a_nvlink", "a2a_nvl72")),
        refs=("deepseek2024v3", "lepikhin2021gshard"),
    ),
    Claim(
        id="P27", source=SOURCE, where="1:18:23",
        claim="The memory bandwidth of a scale-up domain has grown about eightfold since "
              "Hopper.",
        stated="a factor of eight",
        check=Compare(expr="(podcast.domain_growth('gpus'), "
                           "podcast.domain_growth('hbm_bandwidth'))",
                      target=("8", "8"), fmt="{:.1f}", unit="x"),
        verdict=Verdict.DISPUTED, section="sec-economics-sparsity-scale-up",
        note="'From Hopper' has no single reading. HGX H100 to GB200 NVL72: "
             "[[podcast.domain_growth('gpus')|.0f]]x the GPUs (approximately eight), "
             "[[podcast.domain_growth('hbm_bandwidth')|.1f]]x the domain's HBM bandwidth, "
             "[[podcast.domain_growth('hbm_capacity')|.1f]]x its capacity, "
             "[[podcast.domain_growth('link')|.0f]]x each GPU's scale-up link. The reading "
             "that matches the words, memory bandwidth of the domain, is "
             "[[podcast.domain_growth('hbm_bandwidth') / 8|.1f]] times the stated factor.",
        see_also=("P18",),
        refs=("nvidia2024h100datasheet", "nvidia2024gb200nvl72"),
    ),
    Claim(
        id="P28", source=SOURCE, where="1:20:53",
        claim="A combined training-and-serving budget is cheapest where its parts cost the "
              "same.",
        stated="the minimum tends to be where the costs are equalized",
        check=Compare(expr="podcast.cost_ratio_for_overtraining(100.0)", target="1",
                      fmt="{:.2f}", unit="x pretraining cost"),
        verdict=Verdict.DISPUTED, section="sec-economics-compute-split",
        note="Under the Chinchilla law (Besiroglu et al.'s refit, target loss 2.0) the "
             "lifetime optimum's inference-to-pretraining cost ratio is not pinned at 1: over "
             "1e12 to 1e16 served tokens it runs from "
             "[[podcast.cost_ratio_range()[0]|.2f]] to [[podcast.cost_ratio_range()[1]|.1f]]. "
             "Equal costs are optimal only where the two loss terms stand as beta : 2 alpha. "
             "The talk's own 100x overtraining (P31) is optimal where inference costs the "
             "value shown times pretraining, not the same.",
        see_also=("P29", "P31"),
        glue=("06_economics", ("ratio_for_100x",)),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla", "sardana2024beyond"),
    ),
    Claim(
        id="P29", source=SOURCE, where="1:24:16",
        claim="A reasonable split of compute is a third each to pretraining, RL and inference.",
        stated="33% split between each of them",
        check=Compare(expr="(100 * compute_split.cost_minimising_shares([1.0, 1.0, 1.0])).tolist()",
                      target=("33", "33", "33"), fmt="{:.1f}", unit="%"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-compute-split",
        assumptions="the three uses of compute enter the outcome with equal elasticities; "
                    "cost-minimising shares equal the elasticities' shares.",
        note="Nothing fixes the elasticities at equal. With pretraining and inference alone, "
             "equal spending under the Chinchilla law is the optimum of a model overtrained "
             "only [[compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)"
             "['overtraining']|.1f]]x ([[compute_split.optimum_at_cost_ratio(target_loss=2.0, "
             "cost_ratio=1.0)['tokens_per_param']|.0f]] tokens per parameter), which "
             "contradicts the talk's 100x (P31).",
        see_also=("P28", "P31"),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla"),
    ),
    Claim(
        id="P30", source=SOURCE, where="1:28:31",
        claim="For RL to take as long as pretraining, it must use fewer tokens than "
              "pretraining did.",
        stated="fewer tokens",
        check=Bound(expr="(podcast.rl_token_share_pct('slow'), podcast.rl_token_share_pct('fast'))",
                    op="<", threshold=100.0, fmt="{:.0f}", unit="% of pretraining tokens"),
        verdict=Verdict.EXACT, section="sec-economics-compute-split",
        note="An RL token costs a rollout at decode efficiency plus a training step. Rolled out "
             "on eight H200s at 2,048 tokens of context, DeepSeek-V3's pretraining budget buys "
             "[[podcast.rl_token_share_pct('slow')|.0f]]% as many RL tokens at the largest "
             "batch that fits and [[podcast.rl_token_share_pct('fast')|.0f]]% at batch 16 "
             "(training at 40% MFU).",
        glue=("06_economics", ("rl_share", "rl_share_fast")),
        refs=("deepseek2024v3",),
    ),
    Claim(
        id="P31", source=SOURCE, where="1:32:19",
        claim="The frontier model under discussion is trained on about a hundred times the "
              "Chinchilla-optimal tokens.",
        stated="a factor of 100 overtrained",
        check=Compare(expr="compute_split.optimum_at_cost_ratio(target_loss=2.0, "
                           "cost_ratio=1.0)['overtraining']",
                      target="100", fmt="{:.1f}", unit="x Chinchilla"),
        verdict=Verdict.DISPUTED, section="sec-economics-compute-split",
        note="The value is the overtraining that is lifetime-optimal when inference and "
             "pretraining cost the same, as the talk's equal split (P29) has it. A hundredfold "
             "is optimal only when inference costs "
             "[[podcast.cost_ratio_for_overtraining(100.0)|.2f]] times pretraining; the two "
             "numbers cannot both hold under the Chinchilla law. Of the registered models only "
             "the small Llama 3 8B is overtrained about a hundredfold "
             "([[specs.model('llama3_8b').n_training_tokens / accounting.n_active_params("
             "specs.model('llama3_8b')) / compute_split.CHINCHILLA_TOKENS_PER_PARAM|.0f]]x).",
        see_also=("P28", "P29"),
        glue=("06_economics", ("over_at_equal",)),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla", "sardana2024beyond"),
    ),
    Claim(
        id="P32", source=SOURCE, where="1:45:11",
        claim="Prefill is limited by compute, decode by memory bandwidth.",
        stated="prefill is compute limited and decode is memory bandwidth limited",
        check=Bound(expr="podcast.prefill_decode_bounds()", op=">", threshold=1.0,
                    fmt="{:.1f}", unit="x (binding / other roof)"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-prefill-decode",
        assumptions="a prompt of thousands of tokens (4,096 here) and a decode context past "
                    "the balanced context "
                    f"([[inference.balanced_context_tokens({LLAMA}, {H100})|,.0f]] tokens for "
                    "Llama 3 70B on an H100).",
        note="The usual case, not a law: a 64-token prompt prefills memory-bound (compute over "
             f"memory time [[inference.prefill({LLAMA}, {H100}, prompt_tokens=64, n_chips=8)"
             "['compute_time_s'] / inference.prefill("
             f"{LLAMA}, {H100}, prompt_tokens=64, n_chips=8)['memory_time_s']|.2f]]), and a "
             "decode batch above the balance batch at short context is compute-bound.",
        refs=("patel2024splitwise", "pope2023efficiently"),
    ),
    Claim(
        id="P33", source=SOURCE, where="1:52:24",
        claim="The arithmetic that grows with context in attention only becomes noticeable "
              "at around a million tokens.",
        stated="up in the millions of tokens",
        check=Compare(expr=f"(0.1 * inference.linear_flop_per_token({LLAMA}) / "
                           f"inference.decode_attention_flop_per_context_token({LLAMA}), "
                           f"0.1 * inference.linear_flop_per_token({DSV3}) / "
                           f"inference.decode_attention_flop_per_context_token({DSV3}))",
                      target=("1000000", "1000000"), fmt="{:,.0f}", unit="tokens"),
        verdict=Verdict.DISPUTED, section="sec-economics-context-length",
        note="Shown: the context at which attention adds 10% to the matmul FLOP per token, for "
             "Llama 3 70B and DeepSeek-V3's absorbed MLA. They equal the matmuls at "
             f"[[inference.linear_flop_per_token({LLAMA}) / "
             f"inference.decode_attention_flop_per_context_token({LLAMA})|,.0f]] and "
             f"[[inference.linear_flop_per_token({DSV3}) / "
             f"inference.decode_attention_flop_per_context_token({DSV3})|,.0f]] tokens: two to "
             "three orders of magnitude before a million. What binds first is bandwidth and "
             "capacity (P34).",
        glue=("06_economics", ("attn10_llama3_70b", "attn10_deepseek_v3")),
        refs=("pope2023efficiently", "deepseek2024v2"),
    ),
    Claim(
        id="P34", source=SOURCE, where="1:53:02",
        claim="What mainly stands in the way of very long contexts is memory bandwidth and "
              "memory capacity.",
        stated="memory bandwidth, memory capacity",
        check=Bound(expr="(recompute.long_context('llama3_70b', context_tokens=131072, "
                         "what='memory_over_compute'), recompute.long_context('deepseek_v3', "
                         "context_tokens=131072, what='memory_over_compute'))",
                    op=">", threshold=1.0, fmt="{:.1f}", unit="x memory / compute time"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="At 128K tokens, at the largest batch whose cache fits on eight B200s, a decode "
             "step of Llama 3 70B or DeepSeek-V3 is memory-bound by the factor shown, and HBM "
             "capacity holds the batch far below the balance batch. A token there costs "
             f"[[{_LONG.format(m='llama3_70b', t=131072)} / "
             f"{_LONG.format(m='llama3_70b', t=1024)}|.0f]] (Llama) and "
             f"[[{_LONG.format(m='deepseek_v3', t=131072)} / "
             f"{_LONG.format(m='deepseek_v3', t=1024)}|.0f]] (DeepSeek-V3) times one at 1K.",
        see_also=("P35",),
        refs=("pope2023efficiently",),
    ),
    Claim(
        id="P35", source=SOURCE, where="1:54:23",
        claim="Pushing context windows far past about 100,000 tokens would cost too much.",
        stated="going massively beyond that would be cost prohibitive",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-economics-context-length",
        note="'Prohibitive' is a judgement of what users will pay, which no roofline fixes. "
             "What the roofline gives: past the balanced context a token's cost grows about in "
             "proportion to its context. On eight B200s a token at 1,048,576 tokens costs "
             f"[[{_LONG.format(m='llama3_70b', t=1048576)} / "
             f"{_LONG.format(m='llama3_70b', t=131072)}|.1f]] (Llama 3 70B) and "
             f"[[{_LONG.format(m='deepseek_v3', t=1048576)} / "
             f"{_LONG.format(m='deepseek_v3', t=131072)}|.1f]] (DeepSeek-V3) times one at "
             f"131,072, [[{_LONG.format(m='llama3_70b', t=1048576)}|.0f]] and "
             f"[[{_LONG.format(m='deepseek_v3', t=1048576)}|.0f]] USD per million output "
             "tokens at rental prices. List prices and usage of million-token windows, which "
             "data/prices.toml does not record, would settle it.",
        see_also=("P34", "P36"),
    ),
    Claim(
        id="P36", source=SOURCE, where="1:54:40",
        claim="High-bandwidth memory is not improving fast enough to remove the memory cost of "
              "long contexts.",
        stated="not getting hugely better",
        check=Bound(expr="(recompute.registry_growth('hbm_bandwidth'), "
                         "recompute.registry_growth('hbm_capacity'))",
                    op="<", threshold=_PEAK_GROWTH, fmt="{:.2f}", unit="x per 2 years"),
        verdict=Verdict.EXACT, section="sec-memory-wall-growth",
        note="Across the registry HBM bandwidth and capacity per chip grow by the factors "
             "shown every two years, slower than dense BF16 compute "
             "([[recompute.registry_growth('peak_bf16')|.2f]]x), so the ridge keeps rising. In "
             "absolute terms HBM is not standing still: bandwidth grows about "
             "[[100 * (recompute.registry_growth('hbm_bandwidth') ** 0.5 - 1)|.0f]]% a year. "
             "'Not hugely' holds against compute and against a cache that grows linearly "
             "with context, not as stagnation.",
        see_also=("P35",),
        glue=("04_memory_wall", ("g_hbm_bandwidth", "g_hbm_capacity")),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="P37", source=SOURCE, where="1:54:55",
        claim="Attention made too sparse loses model quality.",
        stated="if you go too sparse you lose too much quality",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-architecture-attention-variants",
        note="The library prices a sparse pattern's cache and bandwidth (P07), not its quality. "
             "Long-context retrieval and reasoning benchmarks comparing sparse and dense "
             "attention at equal compute would settle it.",
        see_also=("P07",),
        refs=("beltagy2020longformer",),
    ),
    Claim(
        id="P38", source=SOURCE, where="2:08:05",
        claim="A tiny change to a neural network's input can completely change its output.",
        stated="a very, very small perturbation ... totally changes the output",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-foundations-heuristics-view",
        note="A documented property of trained networks (adversarial examples: imperceptible "
             "perturbations that flip an image classifier). Nothing in this book measures it; "
             "adversarial-robustness benchmarks do.",
        refs=("szegedy2014intriguing",),
    ),
    Claim(
        id="P39", source=SOURCE, where="2:12:58",
        claim="A reversible network need not store activations for training: the backward pass "
              "reconstructs them from the layer outputs.",
        stated="I don't need to store this at all",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-memory-wall-memory-training-run",
        note="Exact invertibility is a mathematical property of reversible blocks, so the "
             "activation memory no longer grows with depth; the price is recomputing each "
             "block's forward pass during the backward pass, plus floating-point round-off in "
             "the inversion. The library models recomputation, not reversible layers: full "
             "recomputation already cuts Llama 3.1 405B's activations on its first pipeline "
             "stage from [[podcast.activation_gb('none')|,.0f]] GB to "
             "[[podcast.activation_gb('full')|.1f]] GB per GPU, the layer inputs it still "
             "keeps; a reversible network would not need even those. Memory measured on a "
             "reversible transformer would settle the rest.",
        see_also=("P40",),
        refs=("gomez2017reversible", "korthikanti2022activation"),
    ),
    Claim(
        id="P40", source=SOURCE, where="2:13:35",
        claim="On today's hardware, spending memory to avoid recomputation usually pays.",
        stated="generally profitable",
        check=Bound(expr="recompute.kv_keep_hours('host DRAM')", op=">", threshold=1.0,
                    fmt="{:.1f}", unit="h"),
        verdict=Verdict.EXACT, section="sec-economics-idle-cache",
        note="Keeping a 32K-token Llama 3 70B cache (eight H100s) in host DRAM beats "
             "recomputing it for the idle hours shown, in flash for "
             "[[recompute.kv_keep_hours('NVMe') / 24|.0f]] days, longer than the hour that "
             "providers keep prompt caches. In HBM, the dearest memory, only "
             "[[recompute.kv_keep_hours('HBM') * 3600|.0f]] s.",
        see_also=("P39",),
        glue=("06_economics", ("dram_keep_h",)),
        refs=("kwon2023vllm",),
    ),
]
