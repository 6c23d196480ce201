"""Claims of the series overview, "is pretraining over?" (``002_1a663014a24a4105.txt``).

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields. The
helpers below compose library calls that a one-line expression cannot (the data pipeline's
stages are a subpackage, and several chapter computations take more than one step); each
reproduces the chapter cell named in its docstring, so the ledger and the glued prose agree.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import accounting, economics, mfu, moe, reliability, scaling_laws, specs, units
from ._core import Bound, Claim, Compare, Range, Verdict

SOURCE = "002_1a663014a24a4105.txt"
H100 = "specs.accelerator('h100_sxm')"
REFIT = "scaling_laws.parametric_law('besiroglu2024')"
L8 = "specs.model('llama3_8b')"
DSV3 = "specs.model('deepseek_v3')"


# -- helpers: the data chapter's pipeline and collapse runs -------------------------------------

@cache
def _crawl():
    from ..pipeline import crawl
    return crawl.generate_crawl(800, rng=np.random.default_rng(2))


@cache
def _pipeline():
    from ..pipeline import run
    return run.run(_crawl(), rng=np.random.default_rng(3))


def dedup_removals() -> tuple[int, int]:
    """Pages removed by exact dedup and, after it, by MinHash/LSH near-dedup (chapter 2, cell 19).

    The book's synthetic crawl of 800 pages, run through the whole pipeline.
    """
    a = _pipeline().alive
    return (int(np.sum(a["quality"] & ~a["exact dedup"])),
            int(np.sum(a["exact dedup"] & ~a["near dedup"])))


def near_over_exact() -> float:
    """How many pages near-dedup removes per page that exact dedup removed."""
    n_exact, n_near = dedup_removals()
    return n_near / n_exact


def lsh_candidate_probability(jaccard: float, *, n_bands: int = 14, n_rows: int = 8) -> float:
    """Probability that a pair of this Jaccard similarity becomes an LSH candidate (FineWeb's bands)."""
    from ..pipeline import dedup
    return float(dedup.s_curve(jaccard, n_bands=n_bands, n_rows=n_rows))


def decontam_recall(n: int, *, edited: bool = True) -> float:
    """Recall of an n-gram decontamination check on the crawl's leaking pages (chapter 2, cell 31).

    ``edited``: the leaking pages that quote a benchmark item with 15% of its words replaced;
    otherwise the verbatim quotes.
    """
    from ..pipeline import decontam
    web = _crawl()
    docs = web.documents
    leak = np.array([d.kind == "leak" for d in docs])
    truth = np.array([d.defect == ("edited" if edited else "verbatim") for d in docs]) & leak
    keep = truth | ~leak
    texts = [d.main_text for d, k in zip(docs, keep) if k]
    return float(decontam.sweep(texts, list(web.benchmark), truth[keep], [n])[n]["recall"])


def fertility_premium() -> float:
    """Worst language's tokens per word over English's, book BPE of 768 tokens (chapter 2, cell 38).

    The tokenizer is trained on 350 pages that survived the pipeline; fertility is measured on a
    fresh crawl of 120 clean pages.
    """
    from ..pipeline import bpe, crawl
    result = _pipeline()
    kept = np.flatnonzero(result.alive["decontam"])
    tok = bpe.BytePairTokenizer().train([result.texts[i] for i in kept[:350]],
                                        vocab_size=256 + 512)
    held_out = crawl.generate_crawl(120, rng=np.random.default_rng(4), kinds={"clean": 1.0})
    fert = {lang: bpe.corpus_fertility(tok.encode, [d.main_text for d in held_out.documents
                                                    if d.lang == lang])["tokens_per_word"]
            for lang in crawl.LANGUAGES}
    return float(max(fert.values()) / fert["en"])


@cache
def _collapse_survivors(mode: str) -> tuple[int, ...]:
    from ..pipeline import collapse
    q = collapse.categorical_recursion(collapse.zipf(2000), n_samples=20_000, n_generations=100,
                                       rng=np.random.default_rng(5), mode=mode)
    return tuple(int(x) for x in collapse.surviving_types(q))


def collapse_words_lost(mode: str) -> int:
    """Words of a 2,000-word Zipf unigram model lost over 100 generations (chapter 2, cell 47).

    Counted, as in the chapter, from what the model fitted on real data could produce to what
    the last generation can. ``mode``: ``"replace"`` (naive recursion on its own samples),
    ``"accumulate"``, ``"mix_real"`` or ``"verified"`` (a verifier that knows the truth).
    """
    return _collapse_survivors("replace")[0] - _collapse_survivors(mode)[-1]


def code_shares() -> tuple[float, float, float]:
    """Code's share of LLaMA's mixture, and code's and maths's shares of Llama 3's (cell 42)."""
    from ..pipeline import mixture
    return (mixture.LLAMA1_MIXTURE["GitHub"][0], mixture.LLAMA3_MIX["code"],
            mixture.LLAMA3_MIX["math_reasoning"])


# -- helpers: architecture, training, economics -------------------------------------------------

def modern_feature_counts() -> tuple[int, int, int, int]:
    """Registry models released since 2023 with RoPE, RMSNorm, SwiGLU, shared K/V (GQA or MLA).

    Chapter 3, cell 6.
    """
    modern = [m for m in specs.models().values() if m.release_year >= 2023]
    return (sum(m.position == "rope" for m in modern), sum(m.norm == "rmsnorm" for m in modern),
            sum(m.mlp == "swiglu" for m in modern),
            sum(m.n_kv_heads < m.n_heads or m.mla is not None for m in modern))


def n_modern_models() -> int:
    """How many registry models were released in 2023 or later."""
    return sum(m.release_year >= 2023 for m in specs.models().values())


def n_moe_modern() -> int:
    """How many registry models released in 2023 or later are mixtures of experts."""
    return sum(m.release_year >= 2023 and m.moe is not None for m in specs.models().values())


def kv_cache_reduction(context_tokens: int = 128_000) -> tuple[float, float]:
    """Llama 3 70B's KV cache with MHA over the cache with GQA-8 and with MLA (chapter 3, cell 21)."""
    from .. import kv_cache
    llama70 = specs.model("llama3_70b")
    size = {v: kv_cache.kv_cache_bytes(kv_cache.with_attention(llama70, v),
                                       n_tokens=context_tokens) for v in ("mha", "gqa", "mla")}
    return size["mha"] / size["gqa"], size["mha"] / size["mla"]


def all_to_all_over_compute(fabric: str) -> float:
    """DeepSeek-V3's expert all-to-all time over its expert compute on 64 H100s (chapter 3, cell 37).

    4,096 tokens per MoE layer; ``fabric`` is ``"scale_up"`` (NVLink) or ``"scale_out"`` (the
    400 Gb/s network card).
    """
    t = moe.moe_layer_times_s(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
                              n_tokens=4096, n_devices=64, fabric=fabric)
    return t["all_to_all_s"] / t["compute_s"]


def doubling_gain_ratio(model_key: str, law_key: str = "besiroglu2024") -> float:
    """Loss gained by doubling a model's training tokens over that gained by doubling its size.

    Uses the model's published parameter and token counts in the fitted Chinchilla law; both
    doublings cost the same FLOP (6ND doubles either way). Above 1, tokens buy more.

    >>> round(doubling_gain_ratio("chinchilla_70b"), 2)
    0.96
    """
    law, m = scaling_laws.parametric_law(law_key), specs.model(model_key)
    n, d = m.published_n_params, m.n_training_tokens
    base = scaling_laws.loss(law, n_params=n, n_tokens=d)
    return ((base - scaling_laws.loss(law, n_params=n, n_tokens=2 * d))
            / (base - scaling_laws.loss(law, n_params=2 * n, n_tokens=d)))


def job_mtbf_hours(n_gpus: float) -> float:
    """Mean time between job interruptions at Llama 3's per-GPU failure rate (chapter 4, cell 51)."""
    r = reliability.LLAMA3_405B_INTERRUPTIONS
    gpu_mtbf = reliability.gpu_mtbf_from_run_s(r["n_unexpected"], n_gpus=r["n_gpus"],
                                               duration_s=r["duration_s"])
    return reliability.job_mtbf_s(n_gpus, gpu_mtbf_s=gpu_mtbf) / units.HOUR


def published_mfu_range() -> tuple[float, float]:
    """Lowest and highest MFU (percent) recomputed for published runs (chapter 4, cells 47-48).

    The lowest is the run-level figure of Llama 3.1 405B or DeepSeek-V3 (total FLOP over
    GPU-hours, BF16 peak); the highest is PaLM 540B's, from its measured throughput.
    """
    h100 = specs.accelerator("h100_sxm")
    palm, l3 = mfu.PUBLISHED_RUNS["palm_540b"], mfu.PUBLISHED_RUNS["llama3_405b"]
    f_palm = mfu.palm_flop_per_token(palm["n_params"], n_layers=palm["n_layers"],
                                     n_heads=palm["n_heads"], d_head=palm["d_head"],
                                     seq_len=palm["seq_len"])
    high = mfu.mfu_from_throughput(palm["tokens_per_s"], flop_per_token=f_palm,
                                   n_chips=palm["n_chips"],
                                   peak_flop_per_s=specs.accelerator("tpu_v4").peak_bf16_flop_per_s)
    run_l3 = mfu.mfu_from_chip_hours(l3["train_flop"], chip_hours=l3["gpu_hours"],
                                     peak_flop_per_s=h100.peak_bf16_flop_per_s)
    ds = mfu.PUBLISHED_RUNS["deepseek_v3"]
    flop_ds = 3 * accounting.forward_flop_per_token(specs.model("deepseek_v3"),
                                                   context_tokens=(4096 + 1) / 2)
    run_ds = mfu.mfu_from_chip_hours(flop_ds * ds["n_tokens"], chip_hours=ds["gpu_hours"],
                                     peak_flop_per_s=h100.peak_bf16_flop_per_s)
    return 100 * min(run_l3, run_ds), 100 * high


def _owned_h100_kwargs() -> dict:
    p = economics.price
    return dict(capex_usd=p("capex_usd_per_gpu.h100_sxm").value, life_years=5, utilization=0.8,
                power_w=p("system_power_w_per_gpu.h100_sxm").value,
                pue=p("pue.ai_datacentre").value,
                usd_per_kwh=p("electricity_usd_per_kwh.us_industrial").value,
                cost_of_capital_per_year=p("cost_of_capital.per_year").value)


def capital_over_energy() -> tuple[float, float]:
    """An owned H100's capital charge over its electricity, per used hour (chapter 6, cell 66).

    First at the recorded central values (5-year life, 80% utilisation, cost of capital), then
    at the least favourable corner of the recorded ranges (cheapest hardware, dearest power,
    worst PUE, no cost of capital, 6-year life).
    """
    p, kw = economics.price, _owned_h100_kwargs()
    own = economics.usd_per_gpu_hour_owned(**kw)
    corners = [economics.usd_per_gpu_hour_owned(**{**kw, "capex_usd": c, "usd_per_kwh": e,
                                                   "pue": q, "cost_of_capital_per_year": 0.0,
                                                   "life_years": 6})
               for c in p("capex_usd_per_gpu.h100_sxm").range
               for e in p("electricity_usd_per_kwh.us_industrial").range
               for q in p("pue.ai_datacentre").range]
    return (own["capital"] / own["energy"],
            min(c["capital"] / c["energy"] for c in corners))


def economic_life_years() -> tuple[float, float]:
    """Years an H100 stays worth running: earnings at rental prices above electricity (cell 68).

    Earnings per hour fall as GPU price-performance doubles, at the two ends of the recorded
    doubling-time range.
    """
    p = economics.price
    energy = economics.usd_per_gpu_hour_owned(**_owned_h100_kwargs())["energy"]
    rent = p("gpu_hour_usd.h100_sxm").value
    lo, hi = p("price_performance_doubling_years.gpu").range
    return tuple(economics.economic_life_years(usd_per_hour_new=rent, opex_usd_per_hour=energy,
                                               doubling_years=d) for d in (lo, hi))


def value_left_after(age_years: float) -> float:
    """Share (percent) of an H100's economic value left at ``age_years``, discounted at 8%."""
    p = economics.price
    energy = economics.usd_per_gpu_hour_owned(**_owned_h100_kwargs())["energy"]
    o = energy / p("gpu_hour_usd.h100_sxm").value
    return 100 * economics.remaining_value_fraction(
        age_years, opex_fraction=o, doubling_years=p("price_performance_doubling_years.gpu").value,
        discount_rate_per_year=0.08)


def deepseek_usd_m(model: str = "deepseek_v3") -> float:
    """Training bill in million USD at the DeepSeek-V3 report's 2 USD per GPU-hour (cell 71)."""
    p = economics.price
    hours = {"deepseek_v3": "training_gpu_hours.deepseek_v3_total",
             "llama31_405b": "training_gpu_hours.llama31_405b"}[model]
    return p(hours).value * p("gpu_hour_usd.h800_deepseek").value / units.MEGA


CLAIMS: list[Claim] = [
    Claim(
        id="O01", source=SOURCE, where="Opening (Sutskever's 'fossil fuel' remark)",
        claim="Training compute keeps growing while the stock of usable text does not; the one "
              "public internet has largely been consumed by training already.",
        stated="one internet, most of it already used",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-scaling-laws-repeated-data",
        note="Nothing in the book's registries measures the stock of public text, so no "
             "computation here settles it. It would be settled by an estimate of the stock of "
             "usable human-written tokens set against the largest training sets, as "
             "Villalobos et al. attempt. The overview itself goes on to argue that repetition, "
             "synthesis and other modalities move this wall (O10 to O14).",
        refs=("villalobos2024run",),
    ),
    Claim(
        id="O02", source=SOURCE, where="1. Foundations",
        claim="Perplexity is the exponential of the per-token cross-entropy, and bits per byte "
              "is the same loss re-expressed in base 2 per byte of raw text; so 1 bit per byte "
              "is perplexity 2 at one byte per token and 16 at four.",
        stated="perplexity = exp(loss); bits per byte the same quantity",
        check=Compare(expr="(objective.perplexity(objective.loss_nats_from_bits_per_byte("
                           "1.0, bytes_per_token=1.0)), objective.perplexity("
                           "objective.loss_nats_from_bits_per_byte(1.0, bytes_per_token=4.0)))",
                      target=("2", "16"), fmt="{:.3g}"),
        verdict=Verdict.EXACT, section="sec-foundations-objective-currencies",
        note="'The same quantity' holds only up to the tokenizer: bits per byte divides the "
             "code length by the text's bytes, so one bits-per-byte figure maps to different "
             "perplexities for tokenizers of different bytes per token. That is why only bits "
             "per byte compares models across tokenizers.",
        glue=("01_foundations", ("ppl_1byte", "ppl_4byte")),
        refs=("gao2020pile", "deletang2023compression"),
    ),
    Claim(
        id="O03", source=SOURCE, where="1. Foundations (the residual stream)",
        claim="The residual stream is a shared blackboard that some seventy layers write on in "
              "turn.",
        stated="seventy layers",
        check=Compare(expr="specs.model('llama3_70b').n_layers", target="70", fmt="{:.0f}",
                      unit="layers"),
        verdict=Verdict.APPROX, section="sec-foundations-residual-stream",
        note="A figure of speech: Llama 3 70B has 80 blocks, each writing twice (attention "
             "and MLP), [[2 * specs.model('llama3_70b').n_layers|d]] writes in all; Llama 3.1 "
             "405B has [[specs.model('llama31_405b').n_layers|d]] blocks.",
        glue=("01_foundations", ("writes_llama70",)), glue_scale=0.5,
    ),
    Claim(
        id="O04", source=SOURCE, where="1. Foundations (a training step)",
        claim="The number of tokens a model has trained on, more than its parameter count, is "
              "what buys capability: doubling the tokens of a frontier model lowers its loss "
              "more than doubling its size.",
        stated="token count, more than wall clock or parameter count alone",
        check=Bound(expr="overview.doubling_gain_ratio('llama3_70b')", op=">", threshold=1.0,
                    fmt="{:.2f}", unit="(token gain / size gain)"),
        verdict=Verdict.DISPUTED, section="sec-foundations-cost-training-step",
        note="Under the refit Chinchilla law, doubling Llama 3 70B's [[specs.model('llama3_70b').n_training_tokens / 1e12|.0f]]T tokens lowers its loss "
             "only [[overview.doubling_gain_ratio('llama3_70b')|.2f]] times as much as doubling "
             "its parameters, although both cost the same 6ND FLOP; at Chinchilla's own 20 "
             "tokens per parameter the two are nearly equal "
             "([[overview.doubling_gain_ratio('chinchilla_70b')|.2f]]), as they must be at the "
             "compute-optimal point. Tokens and parameters are bought from one budget; for "
             "today's heavily overtrained models the next doubling is worth more in parameters.",
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla"),
    ),
    Claim(
        id="O05", source=SOURCE, where="1. What next token prediction actually learns",
        claim="A next-token model most likely learns some genuine structure alongside a large "
              "number of shallow heuristics stored in superposition, in a ratio that shifts "
              "with scale.",
        stated="some real structure together with a large number of heuristics",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-foundations-view-against-consensus",
        note="No loss figure settles it: in the chapter's toy the rarest contexts carry a "
             "small share of the tokens but a large share of the model's excess loss, so a "
             "good average is weak evidence for either camp. Interpretability "
             "work measuring whether one mechanism or many narrow ones handle a capability "
             "across its rare cases would settle it.",
        refs=("elhage2022superposition", "nikankin2024heuristics"),
    ),
    Claim(
        id="O06", source=SOURCE, where="2. Data (the pipeline)",
        claim="Exact deduplication only catches verbatim copies; approximate deduplication with "
              "MinHash and locality-sensitive hashing catches the near copies it misses, and "
              "removes more.",
        stated="exact dedup catches the obvious copies, MinHash/LSH the near copies",
        check=Bound(expr="overview.near_over_exact()", op=">", threshold=1.0, fmt="{:.2f}",
                    unit="near / exact removals"),
        verdict=Verdict.ASSUMPTION, section="sec-data-exact-near-duplicate",
        assumptions="the book's synthetic 800-page crawl, whose mix of exact and edited copies "
                    "is set by its generator, with FineWeb's 14 bands of 8 rows.",
        note="Exact dedup removes [[overview.dedup_removals()[0]|d]] pages and MinHash/LSH "
             "another [[overview.dedup_removals()[1]|d]]. The near-dedup threshold is a choice: "
             "with FineWeb's banding a pair at Jaccard 0.5 becomes a candidate with probability "
             "only [[overview.lsh_candidate_probability(0.5)|.3f]], so heavily edited "
             "syndicated copies survive. How much dedup 'matters' for model quality is not "
             "measured here.",
        refs=("broder1997resemblance", "penedo2024fineweb"),
    ),
    Claim(
        id="O07", source=SOURCE, where="2. Data (tokenization)",
        claim="A tokenizer's fertility, the tokens it spends per unit of text, is a lasting tax: "
              "a language it encodes poorly costs more context and more compute per word for "
              "the model's whole life.",
        stated="fertility taxes the context window and the training bill",
        check=Bound(expr="overview.fertility_premium()", op=">", threshold=1.0, fmt="{:.2f}",
                    unit="x English tokens per word"),
        verdict=Verdict.ASSUMPTION, section="sec-data-tokenization-tax",
        assumptions="the book's 768-token byte-level BPE trained on the pipeline's output (half "
                    "English), measured on a fresh synthetic crawl of six languages.",
        note="The worst language costs [[overview.fertility_premium()|.2f]] times English's "
             "tokens per word, so an 8,192-token context holds that many times fewer of its "
             "words, and each of them costs that multiple of the 2N (serving) or 6N (training) "
             "FLOP per token. Production vocabularies of 100,000+ tokens narrow the gap without "
             "closing it.",
        glue=("02_data", ("premium_worst",)),
        refs=("rust2021tokenizer", "petrov2023unfairness"),
    ),
    Claim(
        id="O08", source=SOURCE, where="2. Data (the mixture)",
        claim="Code and mathematics make up a growing share of pretraining mixtures, even for "
              "models not meant mainly for coding.",
        stated="code and math are rising as a share",
        check=Bound(expr="overview.code_shares()[1] / overview.code_shares()[0]", op=">",
                    threshold=1.0, fmt="{:.1f}", unit="x (Llama 3 code share / LLaMA's)"),
        verdict=Verdict.EXACT, section="sec-data-mixtures-epochs-annealing",
        note="Code was [[100 * overview.code_shares()[0]|.1f]]% of LLaMA's mixture and is "
             "[[100 * overview.code_shares()[1]|.0f]]% of Llama 3's final one, with a further "
             "[[100 * overview.code_shares()[2]|.0f]]% maths and reasoning. Two models are a "
             "trend only by the series' reading. The overview's companion remark, that the best "
             "data is saved for an annealing phase as the learning rate decays, matches Llama "
             "3's published recipe.",
        refs=("touvron2023llama", "dubey2024llama3"),
    ),
    Claim(
        id="O09", source=SOURCE, where="2. Data (the mixture)",
        claim="Reasoning learned from code transfers: training on code makes a model better at "
              "tasks that are not code.",
        stated="training on code seems to make a model better at tasks that are not code",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-data-view-against-consensus",
        note="The book computes the shift in mixtures (O08), not a transfer effect. Ablations "
             "that train matched models with and without code and score them on non-code "
             "reasoning benchmarks would settle it.",
        refs=("dubey2024llama3",),
    ),
    Claim(
        id="O10", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Training for about four epochs on repeated data costs almost nothing in loss "
              "compared with the same number of fresh tokens.",
        stated="roughly four epochs ... almost no penalty",
        check=Bound(expr="100 * data_constrained.repetition_penalty(n_params=8.67e9, "
                         "n_tokens=178e9, epochs=4) / data_constrained.loss(n_params=8.67e9, "
                         "n_tokens=178e9, n_unique_tokens=178e9)", op="<", threshold=1.0,
                    fmt="{:.2f}", unit="% higher loss"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-repeated-data",
        assumptions="Muennighoff et al.'s fitted decay constants and their Figure 1 model "
                    "(8.67B parameters, 178B tokens); 'almost no penalty' read as under 1% of "
                    "the loss.",
        note="The loss rises by [[data_constrained.repetition_penalty(n_params=8.67e9, "
             "n_tokens=178e9, epochs=4)|.4f]] nats. The fits reach 9B parameters and 900B "
             "tokens; that the constants hold at frontier scale is an extrapolation.",
        see_also=("O11",),
        glue=("05_scaling_laws", ("four_pen_pct",)),
        refs=("muennighoff2023dataconstrained",),
    ),
    Claim(
        id="O11", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Four epochs of repetition is a large amount of headroom: a pool of unique tokens "
              "supports about four times its size in training.",
        stated="four epochs is a large amount of headroom",
        check=Compare(expr="data_constrained.effective_tokens(n_unique_tokens=1.0, "
                           "n_tokens=4.0)", target="4", fmt="{:.2f}",
                      unit="fresh-token equivalents"),
        verdict=Verdict.EXACT, section="sec-scaling-laws-repeated-data",
        note="Four passes are worth what the call gives in fresh passes, as if "
             "[[100 * (1 - data_constrained.effective_tokens(n_unique_tokens=1.0, "
             "n_tokens=4.0) / 4)|.0f]]% of the tokens had been thrown away. The headroom is "
             "bounded: no amount of repetition is worth more than "
             "[[1 + data_constrained.repetition_constants().r_d_star|.1f]] fresh epochs, so "
             "repetition moves the data wall by a factor of a few rather than removing it.",
        see_also=("O10",),
        glue=("05_scaling_laws", ("four_epochs",)),
        refs=("muennighoff2023dataconstrained",),
    ),
    Claim(
        id="O12", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Text is finite but video and audio are effectively unbounded and richer in "
              "physical-world structure; the binding constraint is the compute to process data "
              "and the judgment to filter it, not the supply of tokens.",
        stated="video and audio effectively unbounded; compute and judgment bind",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-data-view-against-consensus",
        note="Nothing here measures video or audio in the same currency as text (useful "
             "information per token or per FLOP), nor the stock of either. Measured stocks of "
             "usable multimodal tokens, and scaling laws fitted on them, would settle it.",
    ),
    Claim(
        id="O13", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Model collapse is real for naive recursion: a model trained generation after "
              "generation on its own unfiltered output loses the tails of the distribution.",
        stated="the mechanism holds for naive recursive self training",
        check=Bound(expr="overview.collapse_words_lost('replace')", op=">", threshold=0,
                    fmt="{:.0f}", unit="words lost"),
        verdict=Verdict.ASSUMPTION, section="sec-data-wall-collapse",
        assumptions="the chapter's toy: a unigram model over a 2,000-word Zipf vocabulary, "
                    "20,000 tokens per generation, 100 generations, real data replaced.",
        note="Of the [[overview._collapse_survivors('replace')[0]|d]] words the model fitted "
             "on real data can produce, [[overview._collapse_survivors('replace')[-1]|d]] are "
             "left after 100 generations. Keeping the real data and adding the synthetic "
             "instead loses [[overview.collapse_words_lost('accumulate')|d]].",
        see_also=("O14",),
        glue=("02_data", ("alive_lost",)),
        refs=("shumailov2024collapse", "gerstgrasser2024collapse"),
    ),
    Claim(
        id="O14", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Synthetic data from a model, filtered and verified before training, does not "
              "collapse; the filter makes the difference between collapse and improvement.",
        stated="the difference between collapse and improvement is the filter",
        check=Bound(expr="overview.collapse_words_lost('verified')", op="<=", threshold=0,
                    fmt="{:.0f}", unit="words lost"),
        verdict=Verdict.ASSUMPTION, section="sec-data-wall-collapse",
        assumptions="a verifier that knows the true distribution (accepting a sample with "
                    "probability min(1, p/q)) and a generator that gives 10% of its "
                    "probability to uniform exploration.",
        note="The verified run keeps every word and then some "
             "([[overview._collapse_survivors('verified')[-1]|d]] at the end). It works "
             "because the verifier brings outside information and the generator keeps "
             "proposing unseen words; a 'quality' filter that kept only the most likely "
             "samples would cut the tails faster than no filter.",
        see_also=("O13",),
        refs=("shumailov2024collapse",),
    ),
    Claim(
        id="O15", source=SOURCE, where="2. Why the data wall and model collapse are misdiagnosed",
        claim="Part of measured benchmark capability is memorisation that leaks through "
              "imperfect decontamination.",
        stated="a meaningful slice ... leaking through imperfect decontamination",
        check=Bound(expr="overview.decontam_recall(13)", op="<", threshold=1.0, fmt="{:.2f}",
                    unit="recall on reworded items"),
        verdict=Verdict.ASSUMPTION, section="sec-data-decontamination",
        assumptions="GPT-3's 13-gram overlap check, applied to benchmark items quoted with 15% "
                    "of their words replaced, on the book's synthetic crawl.",
        note="The check finds every verbatim quote "
             "([[overview.decontam_recall(13, edited=False)|.2f]]) but only the share the call "
             "gives of the lightly reworded ones. How large a slice of real benchmark scores "
             "this leak explains is not measured here; held-out, freshly written evaluations "
             "compared with public ones would measure it.",
        glue=("02_data", ("dc_e13",)),
        refs=("brown2020gpt3",),
    ),
    Claim(
        id="O16", source=SOURCE, where="3. Why frontier models converge on one design",
        claim="Frontier models have converged on one design: decoder-only with rotary "
              "positions, RMSNorm, SwiGLU and shared keys and values (grouped-query or latent "
              "attention).",
        stated="almost all ... rotary embeddings, RMSNorm, SwiGLU, grouped query or latent",
        check=Bound(expr="overview.modern_feature_counts()", op=">=", threshold=9,
                    fmt="{:.0f}", unit="of the models since 2023 (RoPE / RMSNorm / SwiGLU / "
                                        "shared KV)"),
        verdict=Verdict.EXACT, section="sec-architecture-shape",
        note="Out of [[overview.n_modern_models()|d]] registry models released since 2023 "
             "('almost all' read as all but one). Every registry model is decoder-only; "
             "mixtures of experts are [[overview.n_moe_modern()|d]] of them, so 'increasingly' "
             "is as far as the registry goes. The registry is a sample of open-weight models, "
             "not a census.",
        glue=("03_architecture", ("n_modern_rope", "n_modern_rms", "n_modern_swiglu",
                                  "n_modern_shared_kv")),
        refs=("dubey2024llama3", "deepseek2024v3"),
    ),
]
