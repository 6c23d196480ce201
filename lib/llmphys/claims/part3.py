"""Claims of part 3 of the series, the essay on the memory wall (``000_8c51ff0cbb022c04.txt``).

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields. The
ids follow the essay's order, except that M01-M03 (the roofline figure) were written first and
kept: the essay's growth-rate section, which precedes the roofline, is M04-M08.

A few claims need more than one library call; the helpers below compose them exactly as the
chapters do, so that the ledger's value equals the chapter's glued value.
"""

from __future__ import annotations

import numpy as np

from llmphys import mfu, specs

from ._core import Bound, Claim, Compare, Range, Verdict

__all__ = ["SOURCE", "CLAIMS", "cache_fractions", "palm_mfu", "unscaled_flush_pct"]

SOURCE = "000_8c51ff0cbb022c04.txt"
H100 = "specs.accelerator('h100_sxm')"
A100 = "specs.accelerator('a100_sxm')"
ACCS = "specs.accelerators().values()"
L70 = "specs.model('llama3_70b')"
IB = f"{H100}.scale_out_bytes_per_s_per_direction"
NVL = f"{H100}.scale_up_bytes_per_s_per_direction"
# The series' data-parallel setting, as chapter 4 reads it: 70B, 4M tokens, 45% MFU, H100 peak.
DP = f"n_params=70e9, tokens_per_step=4e6, peak_flop_per_s={H100}.peak_bf16_flop_per_s, mfu=0.45"


def growth(metric: str) -> str:
    """The expression for a registry growth rate per two years, rounded as chapter 4 glues it."""
    return f"recompute.registry_growth('{metric}')"


def mha_or(variant: str) -> str:
    """The expression for Llama 3 70B with its attention swapped for ``variant``."""
    return f"kv_cache.with_attention({L70}, '{variant}')"


def cache_fractions(variants: tuple[str, ...], *, n_tokens: int = 128_000) -> list[float]:
    """Llama 3 70B's KV cache under each attention ``variant``, as a fraction of full MHA's.

    >>> cache_fractions(("gqa",))
    [0.125]
    """
    from llmphys import kv_cache

    base = specs.model("llama3_70b")
    mha = kv_cache.kv_cache_bytes(kv_cache.with_attention(base, "mha"), n_tokens=n_tokens)
    return [kv_cache.kv_cache_bytes(kv_cache.with_attention(base, v), n_tokens=n_tokens) / mha
            for v in variants]


def palm_mfu() -> float:
    """PaLM 540B's MFU recomputed from its published throughput (chapter 4, sec. MFU).

    The highest model FLOP utilisation among the published runs the book recomputes.

    >>> round(100 * palm_mfu(), 1)
    46.2
    """
    r = mfu.PUBLISHED_RUNS["palm_540b"]
    flop = mfu.palm_flop_per_token(r["n_params"], n_layers=r["n_layers"], n_heads=r["n_heads"],
                                   d_head=r["d_head"], seq_len=r["seq_len"])
    return mfu.mfu_from_throughput(r["tokens_per_s"], flop_per_token=flop,
                                   n_chips=r["n_chips"],
                                   peak_flop_per_s=specs.accelerator("tpu_v4").peak_bf16_flop_per_s)


def unscaled_flush_pct(fmt: str, *, rms: float = 1e-4, n: int = 100_000, seed: int = 0) -> float:
    """Percent of normally distributed values of RMS ``rms`` that round to zero in ``fmt``.

    No scaling is applied, as when a gradient tensor is cast to FP8 directly.

    >>> unscaled_flush_pct("e4m3") > unscaled_flush_pct("e5m2")
    True
    """
    from llmphys import precision

    x = rms * np.random.default_rng(seed).standard_normal(n)
    return 100 * precision.flushed_fraction(x, precision.fake_quantize(x, fmt, scaled=False))


CLAIMS: list[Claim] = [
    Claim(
        id="M01", source=SOURCE, where="The roofline model",
        claim="The ridge point of an H100-class chip (dense BF16 peak over HBM bandwidth) is "
              "about 296 FLOP per byte.",
        stated="about 296 FLOP/B",
        check=Compare(expr=f"990 * units.TERA / {H100}.hbm_bytes_per_s", target="296",
                      fmt="{:.1f}", unit="FLOP/B"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-roofline",
        assumptions="the H100 SXM's dense BF16 peak rounded up to 990 TFLOP/s, with the "
                    "datasheet's 3.35 TB/s.",
        note="With the registry's unrounded peak the ridge is "
             f"[[roofline.ridge_point({H100})|.1f]] FLOP/B, which rounds to 295.",
        refs=("nvidia2024h100datasheet",),
    ),
    Claim(
        id="M02", source=SOURCE, where="The roofline model",
        claim="A batch-1 decode step has arithmetic intensity 1 and so runs at about 0.3% of "
              "the H100's peak.",
        stated="three tenths of one percent",
        check=Compare(expr=f"100 * roofline.fraction_of_peak({H100}, roofline.matmul_intensity("
                           "1, 8192, 8192, bytes_per_element=2))", target="0.3",
                      fmt="{:.2f}", unit="%"),
        verdict=Verdict.EXACT, section="sec-memory-wall-roofline",
        note="A BF16 matrix-vector product does 2 FLOP per 2-byte weight, hence intensity "
             "[[roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2)|.2f]] FLOP/B. "
             "The essay restates it a paragraph later as \"a third of a percent\".",
        see_also=("M10",),
        glue=("04_memory_wall", ("decode_pct",)),
        refs=("williams2009roofline", "nvidia2024h100datasheet"),
    ),
    Claim(
        id="M03", source=SOURCE, where="The roofline model",
        claim="A training matmul, thousands of tokens through one weight matrix, has "
              "arithmetic intensity above 5000 FLOP/B.",
        stated="above 5000 FLOP/B",
        check=Bound(expr="roofline.matmul_intensity(16_384, 16_384, 16_384, "
                         "bytes_per_element=2)", op=">", threshold=5000, fmt="{:,.0f}",
                    unit="FLOP/B"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-roofline",
        assumptions="a 16,384-wide square layer (Llama 3.1 405B) fed 16,384 tokens in BF16.",
        note="A 4096-wide layer, as in most 7-8B models, gives "
             "[[roofline.matmul_intensity(16_384, 4096, 4096, bytes_per_element=2)|,.0f]] "
             "FLOP/B: still far right of the ridge, but not above 5000.",
        glue=("04_memory_wall", ("train_i",)),
    ),
    Claim(
        id="M04", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="The memory wall was named by Wulf and McKee in 1995 and taken up for deep "
              "learning by Gholami and co-authors.",
        stated="Wulf and McKee, 1995; Gholami et al.",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-memory-wall-growth",
        note="A bibliographic fact rather than a number the library computes. The cited papers "
             "bear it out: \"Hitting the memory wall\" appeared in Computer Architecture News "
             "in 1995, and Gholami et al.'s \"AI and Memory Wall\" in IEEE Micro in 2024.",
        refs=("wulf1995hitting", "gholami2024memorywall"),
    ),
    Claim(
        id="M05", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="Top-end accelerators' peak FLOP/s grows about threefold per two years.",
        stated="roughly 3x per two years",
        check=Compare(expr=growth("peak_headline"), target="3", fmt="{:.2f}",
                      unit="x per 2 years"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-growth",
        assumptions="peak compute counted at the narrowest precision each chip supports "
                    "natively (FP8 or FP4 peaks against earlier chips' BF16), fitted across "
                    f"the [[{ACCS}.__len__()|d]] registered chips of 2020-2024.",
        note="At one fixed precision, BF16, the registry's peak grew only "
             f"[[{growth('peak_bf16')}|.2f]]-fold per two years: much of the tripling is "
             "narrower number formats counted as more compute. The essay's figure is "
             "Gholami et al.'s 20-year rate of 3.0.",
        glue=("04_memory_wall", ("g_peak_headline",)),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="M06", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="Memory bandwidth grows by about one and a half times every two years.",
        stated="about 1.5x per two years",
        check=Compare(expr=growth("hbm_bandwidth"), target="1.5", fmt="{:.2f}",
                      unit="x per 2 years"),
        verdict=Verdict.APPROX, section="sec-memory-wall-growth",
        note="HBM bandwidth grew faster than the essay says across the 2020-2024 registry "
             "(HBM3 and HBM3E arrived in that window), and faster than Gholami et al.'s "
             "20-year 1.6 for DRAM. The direction of the argument survives: the BF16 peak grew "
             f"[[{growth('peak_bf16')}|.2f]]-fold, so the ridge still rises.",
        glue=("04_memory_wall", ("g_hbm_bandwidth",)),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="M07", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="Bandwidth between chips grows more slowly still than memory bandwidth.",
        stated="slower still",
        check=Bound(expr=f"[{growth('scale_up')} / {growth('hbm_bandwidth')}, "
                         f"{growth('scale_out')} / {growth('hbm_bandwidth')}]",
                    op="<", threshold=1.0, fmt="{:.2f}", unit="(link / HBM growth)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-growth",
        note=f"Per two years the scale-up fabric grew [[{growth('scale_up')}|.2f]]-fold and "
             f"the network card [[{growth('scale_out')}|.2f]]-fold, against "
             f"[[{growth('hbm_bandwidth')}|.2f]]-fold for HBM; the values are the ratios.",
        see_also=("M33",),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="M08", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="Because compute outgrows bandwidth, each generation's ridge point sits further "
              "right: the chips become more data-starved.",
        stated="the exponentials diverge",
        check=Bound(expr="recompute.ridge_growth_bf16()", op=">",
                    threshold=1.0, fmt="{:.2f}", unit="x per 2 years"),
        verdict=Verdict.EXACT, section="sec-memory-wall-growth",
        note="The BF16 ridge rises slowly: at this rate it doubles in "
             f"[[trends.years_to_grow(2.0, {growth('peak_bf16')} / {growth('hbm_bandwidth')})"
             "|.1f]] years, not the two years the essay's 3 and 1.5 imply. Counting the "
             "headline (narrowest-precision) peak, it rises "
             f"[[{growth('peak_headline')} / {growth('hbm_bandwidth')}|.2f]]-fold per two "
             "years.",
        glue=("04_memory_wall", ("ridge_growth_bf16",)),
    ),
    Claim(
        id="M09", source=SOURCE, where="Bandwidth grows slower than compute",
        claim="Tensor cores spend most of their time waiting: even training runs leave more than "
              "half of the peak unused.",
        stated="the most idle part",
        check=Bound(expr="100 * part3.palm_mfu()", op="<", threshold=50.0, fmt="{:.1f}",
                    unit="% MFU (best published run)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-mfu",
        note="We read \"most idle\" as under half the peak in use. The best run the book "
             "recomputes, PaLM 540B, uses the value shown; Llama 3.1 405B over its whole run "
             "uses [[100 * mfu.mfu_from_chip_hours(mfu.PUBLISHED_RUNS['llama3_405b']"
             "['train_flop'], chip_hours=mfu.PUBLISHED_RUNS['llama3_405b']['gpu_hours'], "
             f"peak_flop_per_s={H100}.peak_bf16_flop_per_s)|.1f]]%. Decode at small batch "
             "uses far less (M02).",
        see_also=("M11",),
        glue=("04_memory_wall", ("mfu_high",)),
        refs=("chowdhery2022palm", "dubey2024llama3"),
    ),
    Claim(
        id="M10", source=SOURCE, where="The roofline model",
        claim="On the roofline, the training matmul is bounded by the full compute peak, and "
              "the batch-1 decode step by a third of a percent of it.",
        stated="the full compute peak",
        check=Compare(expr=f"100 * roofline.fraction_of_peak({H100}, roofline.matmul_intensity("
                           "16_384, 16_384, 16_384, bytes_per_element=2))", target="100",
                      tol=0.5, fmt="{:.0f}", unit="% of peak (roofline bound)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-roofline",
        note="This is the roofline's upper bound, not what a run achieves (M11). The decode "
             "half restates M02.",
        see_also=("M02", "M11"),
        glue=("04_memory_wall", ("train_pct",)),
        refs=("williams2009roofline",),
    ),
    Claim(
        id="M11", source=SOURCE, where="The roofline model",
        claim="In training, the chip's full rated compute is in use.",
        stated="a hundred percent",
        check=Compare(expr="100 * part3.palm_mfu()", target="100", tol=0.5, fmt="{:.1f}",
                      unit="% MFU (best published run)"),
        verdict=Verdict.DISPUTED, section="sec-memory-wall-mfu",
        note="A hundred percent is the roofline bound of one matmul (M10). Whole training runs "
             "measure much less: the best published model FLOP utilisation the book "
             "recomputes is PaLM's, shown here, and Llama 3.1 405B's run-level figure is "
             "[[100 * mfu.mfu_from_chip_hours(mfu.PUBLISHED_RUNS['llama3_405b']['train_flop'],"
             " chip_hours=mfu.PUBLISHED_RUNS['llama3_405b']['gpu_hours'], "
             f"peak_flop_per_s={H100}.peak_bf16_flop_per_s)|.0f]]%.",
        see_also=("M09", "M10"),
        glue=("04_memory_wall", ("mfu_high",)),
        refs=("chowdhery2022palm", "dubey2024llama3"),
    ),
    Claim(
        id="M12", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="A 70B-class model with full multi-head attention needs a 312 GB key-value cache "
              "for one 128,000-token sequence.",
        stated="312 gigabytes",
        check=Compare(expr=f"kv_cache.kv_cache_bytes({mha_or('mha')}, n_tokens=128_000) "
                           "/ units.GiB", target="312", fmt="{:.1f}", unit="GiB"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-attention-variants",
        assumptions="Llama 3 70B's shape (80 layers, 64 heads of width 128) with every head "
                    "keeping its own keys and values in BF16, exactly 128,000 tokens, and "
                    "binary gibibytes labelled GB.",
        note="In decimal gigabytes the cache is "
             f"[[kv_cache.kv_cache_bytes({mha_or('mha')}, n_tokens=128_000) / units.GB|.1f]]"
             " GB; at 2^17 = 131,072 tokens it is "
             f"[[kv_cache.kv_cache_bytes({mha_or('mha')}, n_tokens=131_072) / units.GiB|.0f]]"
             " GiB.",
        glue=("03_architecture", ("mha_gib",)),
        refs=("dubey2024llama3", "vaswani2017attention"),
    ),
    Claim(
        id="M13", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="That multi-head cache does not fit in the memory of any single accelerator.",
        stated="does not fit on one accelerator",
        check=Bound(expr=f"kv_cache.kv_cache_bytes({mha_or('mha')}, n_tokens=128_000) / "
                         f"np.max([a.hbm_bytes for a in {ACCS}])", op=">", threshold=1.0,
                    fmt="{:.2f}", unit="x the largest HBM"),
        verdict=Verdict.EXACT, section="sec-architecture-attention-variants",
        note="The value is the cache over the largest HBM capacity in the registry "
             f"([[np.max([a.hbm_bytes for a in {ACCS}]) / units.GB|.0f]] GB); against an H100's "
             f"[[{H100}.hbm_bytes / units.GB|.0f]] GB it is "
             f"[[kv_cache.kv_cache_bytes({mha_or('mha')}, n_tokens=128_000) / "
             f"{H100}.hbm_bytes|.1f]] times too large.",
    ),
    Claim(
        id="M14", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="Reading that cache for every generated token limits decoding to about ten "
              "tokens/s.",
        stated="near ten tokens per second",
        check=Compare(expr=f"kv_cache.decode_tokens_per_s({mha_or('mha')}, {H100}, "
                           "context_tokens=128_000, include_weights=False)", target="10",
                      tol=0.5, fmt="{:.1f}", unit="tokens/s"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-attention-variants",
        assumptions="one H100 SXM's 3.35 TB/s streams the cache alone; the weights, which a "
                    "decoder must also read every step, are left out.",
        note="Counting Llama 3 70B's BF16 weights as well, the ceiling is "
             f"[[kv_cache.decode_tokens_per_s({mha_or('mha')}, {H100}, context_tokens=128_000)"
             "|.1f]] tokens/s.",
        glue=("03_architecture", ("mha_tps",)),
        refs=("nvidia2024h100datasheet",),
    ),
    Claim(
        id="M15", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="Sharing keys and values across groups of query heads (GQA) cuts that cache "
              "to 39 GB.",
        stated="39 gigabytes",
        check=Compare(expr=f"kv_cache.kv_cache_bytes({mha_or('gqa')}, n_tokens=128_000) "
                           "/ units.GiB", target="39", fmt="{:.1f}", unit="GiB"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-attention-variants",
        assumptions="Llama 3 70B's 8 key/value heads, exactly 128,000 tokens, binary "
                    "gibibytes labelled GB.",
        note="In decimal gigabytes: "
             f"[[kv_cache.kv_cache_bytes({mha_or('gqa')}, n_tokens=128_000) / units.GB|.1f]]"
             " GB.",
        glue=("03_architecture", ("gqa_gib",)),
        refs=("ainslie2023gqa", "dubey2024llama3"),
    ),
    Claim(
        id="M16", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="GQA's smaller cache lets one chip decode up to about 80 tokens/s.",
        stated="eighty tokens per second",
        check=Compare(expr=f"kv_cache.decode_tokens_per_s({mha_or('gqa')}, {H100}, "
                           "context_tokens=128_000, include_weights=False)", target="80",
                      tol=0.5, fmt="{:.1f}", unit="tokens/s"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-attention-variants",
        assumptions="one H100 SXM streams the cache alone, weights left out.",
        note="With the BF16 weights counted the ceiling falls to "
             f"[[kv_cache.decode_tokens_per_s({mha_or('gqa')}, {H100}, context_tokens=128_000)"
             "|.1f]] tokens/s; on an H200 the cache-only ceiling would be "
             f"[[kv_cache.decode_tokens_per_s({mha_or('gqa')}, specs.accelerator('h200'), "
             "context_tokens=128_000, include_weights=False)|.0f]].",
        glue=("03_architecture", ("gqa_tps",)),
        refs=("ainslie2023gqa", "nvidia2024h100datasheet"),
    ),
    Claim(
        id="M17", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="Caching one compressed latent per layer instead (DeepSeek's MLA) shrinks the "
              "70B-class cache below 10 GB.",
        stated="under ten gigabytes",
        check=Bound(expr=f"kv_cache.kv_cache_bytes({mha_or('mla')}, n_tokens=128_000) "
                         "/ units.GiB", op="<", threshold=10.0, fmt="{:.1f}", unit="GiB"),
        verdict=Verdict.APPROX, section="sec-architecture-attention-variants",
        note="With DeepSeek's 576 cached values per layer (512 latent + 64 rotary) and the "
             "70B-class model's 80 layers the cache is "
             f"[[kv_cache.kv_cache_bytes({mha_or('mla')}, n_tokens=128_000) / units.GB|.1f]]"
             " GB, just over ten. \"Under ten\" holds for DeepSeek-V3 itself, with 61 layers: "
             "[[kv_cache.kv_cache_bytes(specs.model('deepseek_v3'), n_tokens=128_000) "
             "/ units.GB|.1f]] GB.",
        glue=("03_architecture", ("mla_gib",)),
        refs=("deepseek2024v2", "deepseek2024v3"),
    ),
    Claim(
        id="M18", source=SOURCE, where="The KV cache sets a limit on generation speed",
        claim="MQA, GQA, MLA and sliding windows each make the cache smaller than full multi-head "
              "attention's.",
        stated="bandwidth reductions",
        check=Bound(expr="part3.cache_fractions(('mqa', 'gqa', 'mla', 'swa'))", op="<",
                    threshold=1.0, fmt="{:.3f}",
                    unit="of the MHA cache (MQA / GQA / MLA / window)"),
        verdict=Verdict.EXACT, section="sec-architecture-attention-variants",
        note="Each variant also raises decode attention's FLOP per cache byte, from "
             f"[[kv_cache.decode_attention_intensity({mha_or('mha')})|.0f]] for MHA to "
             f"[[kv_cache.decode_attention_intensity({L70})|.0f]] for Llama 3 70B's GQA and "
             "[[kv_cache.decode_attention_intensity(specs.model('deepseek_v3'))|.0f]] for "
             "DeepSeek-V3's MLA. \"The last five years\" is loose: multi-query attention dates "
             "from 2019.",
        refs=("shazeer2019mqa", "ainslie2023gqa", "deepseek2024v2", "beltagy2020longformer"),
    ),
    Claim(
        id="M19", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="Training and serving precision is moving from 16 bits to 8 and now to 4: the "
              "newest accelerators multiply FP4 natively.",
        stated="16 to 8 to 4 bits",
        check=Bound(expr=f"np.sum(['fp4' in a.matrix_dtypes for a in {ACCS}])", op=">=",
                    threshold=1, fmt="{:.0f}", unit="registered chips with FP4 matrix units"),
        verdict=Verdict.EXACT, section="sec-memory-wall-precision-fp8-fp4",
        note=f"Of the [[{ACCS}.__len__()|d]] registered chips, "
             f"[[np.sum(['fp8' in a.matrix_dtypes for a in {ACCS}])|d]] have FP8 matrix units and "
             "the value shown have FP4 ones, all launched in "
             f"[[np.min([a.launch_year for a in {ACCS} if 'fp4' in a.matrix_dtypes])|d]] or later.",
        refs=("ocp2023mx", "nvidia2024b200"),
    ),
    Claim(
        id="M20", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="E4M3 has a 3-bit mantissa.",
        stated="three mantissa bits",
        check=Compare(expr="precision.float_format('e4m3').mantissa_bits", target="3",
                      fmt="{:.0f}", unit="bits"),
        verdict=Verdict.EXACT, section="sec-memory-wall-precision-fp8-fp4",
        note="Rounding to three mantissa bits has a relative error of at most "
             "[[2.0 ** -(precision.float_format('e4m3').mantissa_bits + 1)|.4f]].",
        refs=("ocp2023ofp8", "micikevicius2022fp8"),
    ),
    Claim(
        id="M21", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="E4M3 cannot represent magnitudes beyond a few hundred, a narrow window that values "
              "must be scaled into.",
        stated="in the low hundreds",
        check=Range(expr="precision.float_format('e4m3').max_value", lo=100, hi=400,
                    fmt="{:.0f}"),
        verdict=Verdict.APPROX, section="sec-memory-wall-precision-fp8-fp4",
        note="We read \"low hundreds\" as 100 to 400; the OCP format's maximum, 448, is just "
             "above. The window is small either way: from the smallest subnormal to the "
             "largest value E4M3 spans "
             "[[np.log2(precision.float_format('e4m3').max_value / "
             "precision.float_format('e4m3').min_subnormal)|.1f]] binades, against "
             "[[np.log2(precision.float_format('bf16').max_value / "
             "precision.float_format('bf16').min_subnormal)|.0f]] for BF16.",
        refs=("ocp2023ofp8", "micikevicius2022fp8"),
    ),
    Claim(
        id="M22", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="Training in E4M3 needs per-tensor or per-block scaling; without it values fall "
              "out of the representable window.",
        stated="per-tensor or per-block scaling",
        check=Bound(expr="part3.unscaled_flush_pct('e4m3')", op=">", threshold=50.0,
                    fmt="{:.1f}", unit="% of 1e-4-scale gradients flushed to zero"),
        verdict=Verdict.EXACT, section="sec-memory-wall-precision-fp8-fp4",
        note="Gradient-sized values (RMS 1e-4) lie below E4M3's smallest subnormal, "
             "[[precision.float_format('e4m3').min_subnormal|.5f]], and vanish when cast "
             "unscaled; E5M2 loses [[part3.unscaled_flush_pct('e5m2')|.1f]]%, which is why "
             "E5M2 is kept for gradients. With a per-tensor scale the loss disappears. That "
             "a run without scaling diverges is not computed here.",
        refs=("micikevicius2022fp8", "deepseek2024v3"),
    ),
    Claim(
        id="M23", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="One byte per FP8 number: four times fewer than FP32 and two times fewer than BF16.",
        stated="1/4 of FP32, 1/2 of BF16",
        check=Compare(expr="[units.bytes_per_element('fp32') / units.bytes_per_element('fp8'),"
                           " units.bytes_per_element('bf16') / units.bytes_per_element('fp8')]",
                      target=("4", "2"), tol=0.0, fmt="{:.0f}",
                      unit="x the FP8 bytes (FP32 / BF16)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-precision-fp8-fp4",
        refs=("ocp2023ofp8",),
    ),
    Claim(
        id="M24", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="A kernel limited by memory traffic runs about twice as fast when its operands go "
              "from BF16 to FP8.",
        stated="close to the byte factor",
        check=Compare(expr=f"precision.precision_speedup({H100}, m=1, n=8192, k=8192)"
                           "['speedup']", target="2", tol=0.05, fmt="{:.2f}",
                      unit="x (batch-1 GEMV, BF16 to FP8)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-bandwidth-effect",
        note="The roofline speed-up of a batch-1 matrix-vector product; real kernels gain "
             "somewhat less, since scales, amax reductions and casts cost time.",
        see_also=("M26",),
        refs=("williams2009roofline",),
    ),
    Claim(
        id="M25", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="Most serving work, and much of training, is limited by memory bandwidth rather "
              "than arithmetic.",
        stated="most of serving, much of training",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-architecture-hardware-lottery",
        note="The serving half follows from M02 and the KV-cache claims. For training the "
             "library counts FLOP, not time: matmuls, which are compute-bound at training "
             "batch sizes, are "
             "[[100 * accounting.matmul_flop_share(specs.model('llama3_70b'), "
             "context_tokens=8192)|.2f]]% of Llama 3 70B's FLOP at 8K context. What share of "
             "a step's time the memory-bound kernels (norms, activations, optimizer update, "
             "communication waits) take would need a kernel-level profile of a real "
             "training step.",
    ),
    Claim(
        id="M26", source=SOURCE, where="FP8 as a bandwidth reduction",
        claim="Because bytes, not arithmetic, bind, FP8's gain exceeds the ratio of its FLOP rate "
              "to BF16's.",
        stated="more than the FLOP count predicts",
        check=Bound(expr=f"precision.precision_speedup({A100}, m=1, n=8192, k=8192)['speedup']"
                         f" / precision.precision_speedup({A100}, m=1, n=8192, k=8192)"
                         "['peak_ratio']", op=">", threshold=1.0, fmt="{:.2f}",
                    unit="speed-up / FLOP-rate ratio"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-bandwidth-effect",
        assumptions="a chip without FP8 matrix units (an A100), with weights stored in FP8 and "
                    "widened on chip, running a memory-bound kernel.",
        note="On a chip with FP8 units FP8 also doubles the peak, so the roofline speed-up "
             "equals the FLOP-rate ratio at every intensity: on an H100 the speed-up over the "
             "ratio is "
             f"[[precision.precision_speedup({H100}, m=1, n=8192, k=8192)['speedup'] / "
             f"precision.precision_speedup({H100}, m=1, n=8192, k=8192)['peak_ratio']|.2f]] "
             "for a batch-1 GEMV and "
             f"[[precision.precision_speedup({H100}, m=8192, n=8192, k=8192)['speedup'] / "
             f"precision.precision_speedup({H100}, m=8192, n=8192, k=8192)['peak_ratio']"
             "|.2f]] for a training GEMM.",
        see_also=("M24",),
        refs=("micikevicius2022fp8",),
    ),
    Claim(
        id="M27", source=SOURCE, where="The communication cost of splitting a model",
        claim="Splitting a model across chips raises a bandwidth problem worse than the one "
              "inside a chip: the network link is far narrower than HBM.",
        stated="a second, worse bandwidth problem",
        check=Bound(expr=f"{H100}.hbm_bytes_per_s / {IB}", op=">", threshold=1.0,
                    fmt="{:.0f}", unit="x (HBM over network per direction, H100)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-dp",
        note="The network's ridge, peak FLOP/s per byte/s of link, is "
             f"[[{H100}.peak_bf16_flop_per_s / {IB}|,.0f]] FLOP/B for an H100 with one "
             f"400 Gb/s NIC, against an HBM ridge of [[roofline.ridge_point({H100})|.0f]].",
    ),
    Claim(
        id="M28", source=SOURCE, where="The communication cost of splitting a model",
        claim="A ring all-reduce's traffic per GPU is almost independent of the GPU count.",
        stated="barely changes",
        check=Bound(expr=f"comms.ring_all_reduce_time_s(140e9, 16_384, link_bytes_per_s={IB}) "
                         f"/ comms.ring_all_reduce_time_s(140e9, 64, link_bytes_per_s={IB})",
                    op="<", threshold=1.05, fmt="{:.3f}", unit="x (16,384 vs 64 GPUs)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-alpha-beta-model",
        note="Each GPU sends 2(N-1)/N times the buffer, which tends to 2. The latency term, "
             "2(N-1) hops, does grow with N: at 5 us per hop it adds "
             f"[[comms.ring_all_reduce_time_s(140e9, 16_384, link_bytes_per_s={IB}, "
             f"latency_s=5e-6) - comms.ring_all_reduce_time_s(140e9, 16_384, "
             f"link_bytes_per_s={IB})|.2f]] s at 16,384 GPUs to a "
             f"[[comms.ring_all_reduce_time_s(140e9, 16_384, link_bytes_per_s={IB})|.1f]] s "
             "exchange of 70B BF16 gradients.",
        refs=("patarasuk2009bandwidth",),
    ),
    Claim(
        id="M29", source=SOURCE, where="The communication cost of splitting a model",
        claim="Over an NVLink-class fabric, data-parallel gradient traffic for a 70B model "
              "(4M-token batch) is negligible however many GPUs take part.",
        stated="a rounding error at any scale",
        check=Bound(expr=f"100 * comms.dp_comm_share(16_384, link_bytes_per_s={NVL}, {DP})",
                    op="<", threshold=1.0, fmt="{:.1f}", unit="% of the step at 16,384 GPUs"),
        verdict=Verdict.DISPUTED, section="sec-memory-wall-dp",
        note="We read \"rounding error\" as under 1% of the step. With the H100's NVLink "
             "bandwidth, in the same setting that reproduces M30, the share is "
             f"[[100 * comms.dp_comm_share(8, link_bytes_per_s={NVL}, {DP})|.2f]]% on one "
             f"8-GPU node and [[100 * comms.dp_comm_share(72, link_bytes_per_s={NVL}, {DP})"
             "|.1f]]% on a 72-GPU rack, but "
             f"[[100 * comms.dp_comm_share(512, link_bytes_per_s={NVL}, {DP})|.1f]]% at 512 "
             "GPUs and the value shown at 16,384. A faster link only moves the curve to the "
             "right, and no NVLink domain spans thousands of GPUs.",
        see_also=("M30",),
        glue=("04_memory_wall", ("share_nvl_16k",)),
        refs=("nvidia2024h100datasheet",),
    ),
    Claim(
        id="M30", source=SOURCE, where="The communication cost of splitting a model",
        claim="On an InfiniBand-class fabric the same exchange takes 9% of the step at 64 "
              "GPUs, 43% at 512 and 96% at 16,384.",
        stated="9% / 43% / 96%",
        check=Compare(expr=f"(100 * comms.dp_comm_share(np.array([64, 512, 16_384]), "
                           f"link_bytes_per_s={IB}, {DP})).tolist()", target=("9", "43", "96"),
                      fmt="{:.1f}", unit="%"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-dp",
        assumptions="BF16 gradients, a flat ring over one 400 Gb/s link per GPU (50 GB/s each "
                    "way), no overlap, and 45% MFU on the H100's dense BF16 peak; the essay "
                    "states none of these.",
        note="Inverting the formula, the three quoted points imply MFU "
             f"[[comms.implied_mfu(0.09, 64, n_params=70e9, tokens_per_step=4e6, "
             f"peak_flop_per_s={H100}.peak_bf16_flop_per_s, link_bytes_per_s={IB})|.3f]], "
             f"[[comms.implied_mfu(0.43, 512, n_params=70e9, tokens_per_step=4e6, "
             f"peak_flop_per_s={H100}.peak_bf16_flop_per_s, link_bytes_per_s={IB})|.3f]] and "
             f"[[comms.implied_mfu(0.96, 16_384, n_params=70e9, tokens_per_step=4e6, "
             f"peak_flop_per_s={H100}.peak_bf16_flop_per_s, link_bytes_per_s={IB})|.3f]] with "
             "BF16 gradients; with FP32 gradients they would imply half that. A hierarchical "
             "all-reduce (NVLink inside each node) cuts the 512-GPU share to "
             f"[[100 * comms.dp_comm_share(512, link_bytes_per_s={IB}, "
             f"intra_node_bytes_per_s={NVL}, {DP})|.1f]]%.",
        see_also=("M29",),
        glue=("04_memory_wall", ("share_ib_64", "share_ib_512", "share_ib_16k")),
        refs=("patarasuk2009bandwidth",),
    ),
    Claim(
        id="M31", source=SOURCE, where="The communication cost of splitting a model",
        claim="Leaving the fast-fabric domain (the pod) costs a large factor in per-chip "
              "bandwidth.",
        stated="bandwidth drops sharply",
        check=Bound(expr="[a.scale_up_bytes_per_s_per_direction / "
                         "a.scale_out_bytes_per_s_per_direction for a in "
                         "[specs.accelerator('a100_sxm'), specs.accelerator('h100_sxm'), "
                         "specs.accelerator('b200')]]", op=">", threshold=5.0,
                    fmt="{:.0f}", unit="x (scale-up over scale-out: A100 / H100 / B200)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-scale-up-versus",
        note="We read \"sharply\" as more than fivefold. For a TPU v5p the ratio of torus "
             "links to the data-centre network is "
             "[[specs.accelerator('tpu_v5p').scale_up_bytes_per_s_per_direction / "
             "specs.accelerator('tpu_v5p').scale_out_bytes_per_s_per_direction|.0f]], but its "
             "pod spans thousands of chips.",
        glue=("04_memory_wall", ("ratio_a100_sxm", "ratio_h100_sxm", "ratio_b200")),
        refs=("nvidia2024h100datasheet", "nvidia2024b200"),
    ),
    Claim(
        id="M32", source=SOURCE, where="The communication cost of splitting a model",
        claim="Keeping the heavy dimensions in the fast domain and overlapping the gradient "
              "exchange with the backward pass hides it under compute.",
        stated="hides under compute",
        check=Bound(expr=f"100 * comms.dp_comm_share(128, link_bytes_per_s={IB}, overlap=2 / 3,"
                         " n_params=accounting.n_params(specs.model('llama31_405b')), "
                         f"tokens_per_step=16 * 2**20, peak_flop_per_s={H100}"
                         ".peak_bf16_flop_per_s, mfu=0.4)", op="<", threshold=1.0,
                    fmt="{:.1f}", unit="% of the step exposed"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-dp",
        assumptions="Llama 3 405B's layout: 8-way tensor and 16-way pipeline parallelism "
                    "inside and across nodes, a data-parallel degree of 128, a 16M-token "
                    "batch, 40% MFU, and the all-reduce overlapped with the backward pass "
                    "(two thirds of the step).",
        note="Before overlap the same exchange is "
             f"[[100 * comms.dp_comm_share(128, link_bytes_per_s={IB}, "
             "n_params=accounting.n_params(specs.model('llama31_405b')), "
             f"tokens_per_step=16 * 2**20, peak_flop_per_s={H100}.peak_bf16_flop_per_s, "
             "mfu=0.4)|.1f]]% of the step. Pure data parallelism over 16,384 GPUs stays "
             "exposed even hierarchical and overlapped: "
             f"[[100 * comms.dp_comm_share(16_384, link_bytes_per_s={IB}, "
             f"intra_node_bytes_per_s={NVL}, overlap=2 / 3, {DP})|.0f]]%.",
        glue=("04_memory_wall", ("share_dp128_ov",)),
        refs=("dubey2024llama3", "narayanan2021efficient"),
    ),
    Claim(
        id="M33", source=SOURCE, where="The communication cost of splitting a model",
        claim="Interconnect bandwidth is the slowest-growing of the hardware exponentials.",
        stated="the slowest exponential",
        check=Bound(expr=f"np.max([{growth('scale_up')}, {growth('scale_out')}]) / "
                         f"np.min([{growth('peak_bf16')}, {growth('hbm_bandwidth')}, "
                         f"{growth('hbm_capacity')}])", op="<", threshold=1.0, fmt="{:.2f}",
                    unit="(fastest link growth / slowest other)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-growth",
        note="The faster-growing link, the scale-up fabric at "
             f"[[{growth('scale_up')}|.2f]]x per two years, grows more slowly than the "
             f"slowest other metric, HBM capacity at [[{growth('hbm_capacity')}|.2f]]x. Over "
             "four years and twelve chips these are estimates with wide error bars.",
        see_also=("M07",),
        refs=("gholami2024memorywall",),
    ),
    Claim(
        id="M34", source=SOURCE, where="Packaging and memory supply as the bottleneck",
        claim="Wafers are not the scarce input; HBM stacks and the advanced packaging that "
              "bonds them to the logic die (TSMC's CoWoS) have gated accelerator output.",
        stated="HBM and CoWoS are the chokepoints",
        check=None, verdict=Verdict.UNCHECKABLE,
        section="sec-memory-wall-packaging-memory-supply",
        note="Industry reporting, plausible and widely repeated, but nothing in the book's "
             "data measures capacity or queues. TSMC's stated CoWoS capacity against "
             "accelerator shipments per quarter, and its logic-wafer utilisation at the same "
             "nodes, would settle it.",
    ),
    Claim(
        id="M35", source=SOURCE, where="Packaging and memory supply as the bottleneck",
        claim="HBM has just three volume suppliers: SK hynix, Samsung and Micron.",
        stated="three companies",
        check=None, verdict=Verdict.UNCHECKABLE,
        section="sec-memory-wall-packaging-memory-supply",
        note="A market-structure fact the book's registries do not hold. Market-share "
             "reports (e.g. TrendForce) or the three makers' filings, and the absence of "
             "volume HBM shipments by anyone else, would settle it.",
    ),
    Claim(
        id="M36", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Depreciation, not electricity, is the dominant cost of owning the hardware.",
        stated="depreciation ahead of electricity",
        check=Bound(expr="recompute.capital_over_energy()", op=">",
                    threshold=1.0, fmt="{:.1f}",
                    unit="x (capital / electricity: central / least favourable)"),
        verdict=Verdict.EXACT, section="sec-economics-capital",
        note="An owned H100 at 80% utilisation costs "
             "[[recompute.owned_h100_hour()['total']|.2f]] USD per used hour, of which "
             "[[recompute.owned_h100_hour()['capital']|.2f]] is capital and "
             "[[recompute.owned_h100_hour()['energy']|.2f]] electricity. The second value is the "
             "least favourable corner of the recorded price ranges.",
        glue=("06_economics", ("cap_over_energy", "cap_over_energy_min")),
        refs=("eia2024electric", "uptime2024survey"),
    ),
    Claim(
        id="M37", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Value lost to obsolescence outpaces the evenly amortised sticker price.",
        stated="ahead of even amortisation",
        check=Bound(expr="recompute.value_left_pct(2.0)", op="<", threshold=100 * (1 - 2 / 6),
                    fmt="{:.0f}", unit="% of value left at two years"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-capital",
        assumptions="a six-year straight-line schedule as the even amortisation (67% left at "
                    "two years), GPU price-performance doubling every 2.5 years, discounting "
                    "at 8% a year.",
        note="A chip's hours are repriced to what new chips charge for the same work; the "
             "economic value is front-loaded. Its economic life, while earnings exceed "
             "electricity, is still long, "
             "[[economics.economic_life_years(usd_per_hour_new=economics.price("
             "'gpu_hour_usd.h100_sxm').value, opex_usd_per_hour=recompute.owned_h100_hour()"
             "['energy'], doubling_years=economics.price("
             "'price_performance_doubling_years.gpu').value)|.0f]] years.",
        see_also=("M38",),
        glue=("06_economics", ("value_2y",)),
        refs=("hobbhahn2022gpu", "microsoft2023tenk", "meta2024tenk"),
    ),
    Claim(
        id="M38", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Because cost per operation keeps falling, a two-year-old accelerator earns much "
              "less per hour than a new one, whether or not it was ever run.",
        stated="a two-year-old chip loses value",
        check=Bound(expr="100 * economics.earning_power_fraction(2.0, doubling_years="
                         "economics.price('price_performance_doubling_years.gpu').value)",
                    op="<", threshold=100 * 2 / 3, fmt="{:.0f}",
                    unit="% of a new chip's hourly earnings"),
        verdict=Verdict.EXACT, section="sec-economics-capital",
        note="We read \"loses value\" as earning under two thirds of what it did new. Across "
             "the recorded range of doubling times (2.1 to 2.95 years) it earns "
             "[[100 * economics.earning_power_fraction(2.0, doubling_years=economics.price("
             "'price_performance_doubling_years.gpu').range[0])|.0f]]% to "
             "[[100 * economics.earning_power_fraction(2.0, doubling_years=economics.price("
             "'price_performance_doubling_years.gpu').range[1])|.0f]]%.",
        see_also=("M37",),
        glue=("06_economics", ("earn_2y",)),
        refs=("hobbhahn2022gpu",),
    ),
    Claim(
        id="M39", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Jensen's law: the relevant accelerator performance improves faster than Moore's "
              "law cadence of doubling every two years.",
        stated="faster than Moore's law",
        check=Bound(expr=f"[{growth('peak_headline')}, {growth('peak_bf16')}]", op=">",
                    threshold=2.0, fmt="{:.2f}", unit="x per 2 years (headline / BF16 peak)"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-growth",
        assumptions="performance read as peak FLOP/s per chip, fitted across the 2020-2024 "
                    "registry.",
        note="Per dollar, which is what drives depreciation, GPU price-performance doubles "
             "every [[economics.price('price_performance_doubling_years.gpu').value|.1f]] "
             "years (Hobbhahn and Besiroglu), slower than Moore's two. Per chip the BF16 peak "
             "only just beats the cadence; memory bandwidth "
             f"([[{growth('hbm_bandwidth')}|.2f]]x) does not.",
        glue=("04_memory_wall", ("g_peak_headline", "g_peak_bf16")),
        refs=("hobbhahn2022gpu",),
    ),
    Claim(
        id="M40", source=SOURCE, where="Depreciation as the dominant cost",
        claim="The maker of the scarce chips invests in the companies that buy them (circular "
              "financing).",
        stated="circular financing",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-economics-capital",
        note="A claim about deal structure, which the essay itself calls reported rather than "
             "audited. The investors' and investees' filings (equity stakes, purchase "
             "commitments) would settle it; no number in the book bears on it.",
    ),
    Claim(
        id="M41", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Labs train small models on many more tokens than the Chinchilla rule prescribes.",
        stated="far past Chinchilla",
        check=Bound(expr="specs.model('llama3_8b').n_training_tokens / accounting."
                         "n_active_params(specs.model('llama3_8b')) / compute_split."
                         "CHINCHILLA_TOKENS_PER_PARAM", op=">", threshold=10.0,
                    fmt="{:.0f}", unit="x Chinchilla's 20 tokens per parameter"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-compute-split",
        assumptions="a small model, Llama 3 8B, and \"far past\" read as more than tenfold.",
        note="The frontier-scale registered models are overtrained less: Llama 3 70B "
             "[[specs.model('llama3_70b').n_training_tokens / accounting.n_active_params("
             "specs.model('llama3_70b')) / compute_split.CHINCHILLA_TOKENS_PER_PARAM|.0f]]x, "
             "Llama 3.1 405B "
             "[[specs.model('llama31_405b').n_training_tokens / accounting.n_active_params("
             "specs.model('llama31_405b')) / compute_split.CHINCHILLA_TOKENS_PER_PARAM|.1f]]x.",
        glue=("06_economics", ("llama8_over",)),
        refs=("hoffmann2022chinchilla", "dubey2024llama3"),
    ),
    Claim(
        id="M42", source=SOURCE, where="Depreciation as the dominant cost",
        claim="Overtraining pays because a smaller model is cheaper to serve: counting serving, "
              "the cost-minimising model is smaller and trained on more tokens than Chinchilla.",
        stated="amortised over the serving fleet",
        check=Bound(expr="compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)"
                         "['overtraining']", op=">", threshold=1.0, fmt="{:.1f}",
                    unit="x Chinchilla at equal training and serving cost"),
        verdict=Verdict.EXACT, section="sec-economics-compute-split",
        note="Under the Chinchilla loss law (Besiroglu et al.'s refit), a model that will "
             "spend as much on serving as on pretraining is optimally overtrained by the value "
             "shown ([[compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)"
             "['tokens_per_param']|.0f]] tokens per parameter); 100x overtraining is optimal "
             "only when serving costs several times the pretraining.",
        glue=("06_economics", ("over_at_equal",)),
        refs=("sardana2024beyond", "besiroglu2024chinchilla", "hoffmann2022chinchilla"),
    ),
]
