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
from . import recompute
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
    """Probability that a pair of this Jaccard similarity becomes an LSH candidate.

    FineWeb's banding by default: 14 bands of 8 rows.
    """
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
    """Llama 3 70B's KV cache with MHA over that with GQA-8 and with MLA (chapter 3, cell 21)."""
    from .. import kv_cache
    llama70 = specs.model("llama3_70b")
    size = {v: kv_cache.kv_cache_bytes(kv_cache.with_attention(llama70, v),
                                       n_tokens=context_tokens) for v in ("mha", "gqa", "mla")}
    return size["mha"] / size["gqa"], size["mha"] / size["mla"]


def all_to_all_over_compute(fabric: str) -> float:
    """DeepSeek-V3's all-to-all time over its expert compute on 64 H100s (chapter 3, cell 37).

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
    """Hours between job interruptions at Llama 3's per-GPU failure rate (chapter 4, cell 51)."""
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


def economic_life_years() -> tuple[float, float]:
    """Years an H100 stays worth running: earnings at rental prices above electricity (cell 68).

    Earnings per hour fall as GPU price-performance doubles, at the two ends of the recorded
    doubling-time range.
    """
    p = economics.price
    energy = recompute.owned_h100_hour()["energy"]
    rent = p("gpu_hour_usd.h100_sxm").value
    lo, hi = p("price_performance_doubling_years.gpu").range
    return tuple(economics.economic_life_years(usd_per_hour_new=rent, opex_usd_per_hour=energy,
                                               doubling_years=d) for d in (lo, hi))


def deepseek_usd_m(model: str = "deepseek_v3") -> float:
    """Training bill in million USD at the DeepSeek-V3 report's 2 USD per GPU-hour (cell 71)."""
    p = economics.price
    hours = {"deepseek_v3": "training_gpu_hours.deepseek_v3_total",
             "llama31_405b": "training_gpu_hours.llama31_405b"}[model]
    return p(hours).value * p("gpu_hour_usd.h800_deepseek").value / units.MEGA


def tp_time_over_step(link: str) -> float:
    """Tensor-parallel traffic time over step compute, Llama 3 405B's layout (chapter 4, cell 39).

    TP 8, PP 16, DP 128 on 16,384 H100s, 16M-token steps of 8,192-token sequences at 40% MFU;
    ``link`` is ``"scale_up"`` (NVLink) or ``"scale_out"`` (a 400 Gb/s network card).
    """
    from .. import comms, parallelism
    h100, m = specs.accelerator("h100_sxm"), specs.model("llama31_405b")
    tp, pp, dp, tokens = 8, 16, 128, 16 * 2**20
    per_layer = parallelism.tp_bytes_per_layer(tokens=8192, d_model=m.d_model, tp=tp)
    traffic = per_layer * (m.n_layers / pp) * (tokens / 8192 / dp)
    bw = {"scale_up": h100.scale_up_bytes_per_s_per_direction,
          "scale_out": h100.scale_out_bytes_per_s_per_direction}[link]
    step = comms.dp_compute_time_s(n_gpus=tp * pp * dp, n_params=accounting.n_params(m),
                                   tokens_per_step=tokens,
                                   peak_flop_per_s=h100.peak_bf16_flop_per_s, mfu=0.4)
    return traffic / bw / step


def llama3_goodput(checkpoint_s: float = 60.0, restart_s: float = 600.0) -> float:
    """Goodput (percent) at Llama 3's scale and failure rate (chapter 4, cell 54)."""
    mtbf = job_mtbf_hours(reliability.LLAMA3_405B_INTERRUPTIONS["n_gpus"]) * units.HOUR
    tau = reliability.daly_interval_s(checkpoint_s, mtbf)
    return 100 * reliability.goodput(interval_s=tau, checkpoint_s=checkpoint_s,
                                     restart_s=restart_s, mtbf_s=mtbf)


def llama_over_deepseek_flop() -> float:
    """Llama 3.1 405B's published training FLOP over DeepSeek-V3's counted FLOP (cell 71)."""
    ds = specs.model("deepseek_v3")
    ds_flop = (3 * accounting.forward_flop_per_token(ds, context_tokens=(4096 + 1) / 2)
               * ds.n_training_tokens)
    return specs.model("llama31_405b").published_train_flop / ds_flop


def isoflop_waste_pct(size_factor: float, train_flop: float = 5.76e23,
                      law_key: str = "besiroglu2024") -> float:
    """Compute wasted (percent) by a model ``size_factor`` times the compute-optimal size.

    At a fixed budget the off-optimum model reaches a higher loss; the compute-optimal
    allocation reaches that loss with less compute, and the difference is the waste.

    >>> isoflop_waste_pct(1.0) < 1e-6
    True
    """
    law = scaling_laws.parametric_law(law_key)
    n_opt = scaling_laws.compute_optimal(law, train_flop=train_flop)["n_params"]
    loss = scaling_laws.isoflop_loss(law, train_flop=train_flop, n_params=size_factor * n_opt)
    return 100 * (1 - scaling_laws.flop_for_loss(law, target_loss=float(loss)) / train_flop)


def max_context_tokens() -> int:
    """The longest trained context among the registry's models."""
    return max(m.max_context_tokens for m in specs.models().values())


CLAIMS: list[Claim] = [
    Claim(
        id="O01", source=SOURCE, where="Opening (Sutskever's 'fossil fuel' remark)",
        claim="The supply of usable text has stopped growing with compute: nearly all of the "
              "public web has already gone into training sets.",
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
        claim="A frontier model's residual stream is written by about seventy layers in "
              "succession.",
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
        note="Under the refit Chinchilla law, doubling Llama 3 70B's "
             "[[specs.model('llama3_70b').n_training_tokens / 1e12|.0f]]T tokens lowers its loss "
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
        claim="What next-token training produces is partly a real model of the data's structure "
              "and partly many narrow heuristics packed in superposition, with the mix changing "
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
        claim="Code in the pretraining mix improves a model on non-coding tasks, because "
              "reasoning carries over.",
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
        claim="Being able to repeat data four times roughly quadruples the usable size of a "
              "fixed corpus, which is ample headroom.",
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
        claim="Synthetic data that is filtered and verified before training does not collapse; "
              "what separates the two outcomes is the filtering.",
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
    Claim(
        id="O17", source=SOURCE, where="3. Why frontier models converge on one design",
        claim="The transformer's arithmetic is almost all dense matrix multiplication, the "
              "operation GPUs do best, so it won partly by suiting the hardware of its day.",
        stated="above all, a machine for large dense matrix multiplications",
        check=Bound(expr="100 * accounting.matmul_flop_share(specs.model('llama3_70b'), "
                         "context_tokens=8192)", op=">", threshold=90.0, fmt="{:.2f}",
                    unit="% of forward FLOP in matmuls"),
        verdict=Verdict.EXACT, section="sec-architecture-hardware-lottery",
        note="Llama 3 70B at 8K context; 'above all' read as more than 90%. The remainder "
             "(softmax, norms, activations) is tiny in FLOP but memory-bound, which is why "
             "production kernels fuse it into the matmuls. That the silicon shaped the choice "
             "'as much as merit' is a historical judgment no number settles.",
        glue=("03_architecture", ("mm_share_8k",)),
        refs=("hooker2021lottery",),
    ),
    Claim(
        id="O18", source=SOURCE, where="3. Why frontier models converge on one design",
        claim="A mixture of experts trades memory for compute: sparse activation cuts the "
              "arithmetic per token, but every parameter must still be held.",
        stated="cuts the floating point work per token, expands the parameter memory",
        check=Bound(expr=f"100 * (accounting.n_active_params({DSV3}) - "
                         f"accounting.embedding_params({DSV3})) / accounting.n_params({DSV3})",
                    op="<", threshold=100.0, fmt="{:.1f}",
                    unit="% of parameters active per token"),
        verdict=Verdict.EXACT, section="sec-architecture-mixture-experts-memory",
        note="DeepSeek-V3 computes with about a twentieth of the "
             f"[[accounting.n_params({DSV3}) / 1e9|.0f]]B parameters it holds. At serving "
             "batches of a few hundred tokens a step touches nearly every expert, so the bytes "
             "read per step approach a dense model's of the full size while the FLOP stay "
             "those of the active part.",
        see_also=("O19",),
        glue=("03_architecture", ("ds_active_pct",)),
        refs=("deepseek2024v3", "fedus2022switch"),
    ),
    Claim(
        id="O19", source=SOURCE, where="3. Why frontier models converge on one design",
        claim="Spreading experts over many chips is only worthwhile where the chips are joined "
              "by a fast interconnect.",
        stated="MoE makes sense only with fast interconnect",
        check=Bound(expr="overview.all_to_all_over_compute('scale_out')", op=">",
                    threshold=1.0, fmt="{:.2f}", unit="x expert compute (over the network)"),
        verdict=Verdict.ASSUMPTION, section="sec-architecture-mixture-experts-memory",
        assumptions="DeepSeek-V3 in BF16 on 64 H100s, 4,096 tokens per layer, every token's "
                    "experts reached over the 400 Gb/s network.",
        note="Inside the NVLink domain the all-to-all takes only "
             "[[overview.all_to_all_over_compute('scale_up')|.2f]] of the expert compute and "
             "hides under it; over the network it takes the multiple the call gives. 'Only' is "
             "too strong: DeepSeek-V3 serves experts across 40 nodes over InfiniBand by "
             "dispatching in FP8, capping each token at four nodes and overlapping micro-batches, "
             "so a slow network is a price rather than a wall.",
        see_also=("O18",),
        glue=("03_architecture", ("a2a_out",)),
        refs=("deepseek2024v3", "lepikhin2021gshard"),
    ),
    Claim(
        id="O20", source=SOURCE, where="3. Why frontier models converge on one design",
        claim="GQA and MLA exist to cut the bytes of KV cache read per generated token, not to "
              "raise accuracy.",
        stated="attacks on the memory bandwidth cost of the key value cache",
        check=Bound(expr="overview.kv_cache_reduction()", op=">", threshold=1.0, fmt="{:.0f}",
                    unit="x smaller cache than MHA (GQA-8 / MLA)"),
        verdict=Verdict.EXACT, section="sec-architecture-attention-variants",
        note="For Llama 3 70B at 128K context the cache falls from "
             "[[kv_cache.kv_cache_bytes(kv_cache.with_attention(specs.model('llama3_70b'), 'mha'), "
             "n_tokens=128_000) / units.GB|.0f]] GB with MHA by the factors the call gives, "
             "and decode attention's "
             "intensity rises with the number of query heads sharing each cached head. The "
             "bandwidth half is right; 'not accuracy' is contested: DeepSeek-V2 reports that "
             "MLA beats MHA in its ablations, while the GQA paper frames its method as "
             "recovering MHA's quality at close to MQA's speed.",
        refs=("ainslie2023gqa", "deepseek2024v2"),
    ),
    Claim(
        id="O21", source=SOURCE, where="4. The training run as a semiconductor problem",
        claim="Pipeline parallelism leaves stages idle while micro-batches fill and drain the "
              "pipeline, a bubble that must be fought with more micro-batches.",
        stated="the bubble of idle time at the seams",
        check=Bound(expr="(parallelism.pipeline_bubble_fraction(16, 16), "
                         "parallelism.pipeline_bubble_fraction(16, 16, n_chunks=4))", op=">",
                    threshold=0.05, fmt="{:.2f}", unit="idle fraction (v = 1 / v = 4)"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-pipeline-bubble",
        assumptions="Llama 3 405B's layout: 16 pipeline stages and 16 micro-batches per "
                    "replica (a 16M-token batch over 128 data-parallel ranks), with and without "
                    "4 interleaved chunks per stage; 'fighting' read as an idle fraction above "
                    "5%.",
        note="The micro-batches come out of the global batch, which optimisation limits, so "
             "the batch size caps how far a pipeline can be stretched.",
        refs=("huang2019gpipe", "narayanan2021efficient"),
    ),
    Claim(
        id="O22", source=SOURCE, where="4. The training run as a semiconductor problem",
        claim="How a run combines its parallelism dimensions is dictated by the cluster's "
              "topology and the bandwidth of its links.",
        stated="dictated by the topology ... and the bandwidth of the wires",
        check=Bound(expr="overview.tp_time_over_step('scale_out')", op=">", threshold=0.5,
                    fmt="{:.2f}", unit="x step compute (TP traffic over the network)"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-3d-traffic",
        assumptions="Llama 3 405B's published layout (TP 8, PP 16, DP 128) at 40% MFU.",
        note="Tensor parallelism's activation all-reduces over NVLink take "
             "[[overview.tp_time_over_step('scale_up')|.2f]] of a step's compute; over the "
             "network card they would take the share the call gives. That is why the "
             "tensor-parallel degree stops at the scale-up domain and the slower dimensions "
             "(pipeline, data) cross the network.",
        refs=("dubey2024llama3", "shoeybi2019megatron"),
    ),
    Claim(
        id="O23", source=SOURCE, where="4. Numerical precision",
        claim="Halving the bytes per number, BF16 to FP8, doubles the effective memory "
              "bandwidth.",
        stated="halving the bytes ... doubles the effective bandwidth",
        check=Compare(expr=f"precision.precision_speedup({H100}, m=1, n=8192, k=8192)"
                           "['speedup']", target="2", fmt="{:.2f}",
                      unit="x (memory-bound GEMV, H100)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-bandwidth-effect",
        note="A memory-bound kernel's time is bytes over bandwidth, so halving the bytes "
             "halves it. Real kernels gain somewhat less: scales, amax reductions and casts "
             "cost time and some tensors stay in BF16.",
        see_also=("O24",),
        refs=("micikevicius2022fp8",),
    ),
    Claim(
        id="O24", source=SOURCE, where="4. Numerical precision",
        claim="Training reaches the memory-bandwidth limit well before the compute limit, which "
              "makes FP8 mainly a bandwidth gain rather than a numerics one.",
        stated="memory bandwidth bound long before it is compute bound",
        check=Bound(expr="roofline.matmul_intensity(16_384, 16_384, 16_384, "
                         f"bytes_per_element=2) / roofline.ridge_point({H100})", op="<",
                    threshold=1.0, fmt="{:.1f}", unit="x the ridge point"),
        verdict=Verdict.DISPUTED, section="sec-memory-wall-bandwidth-effect",
        note="A training matmul of Llama 3.1 405B's width with 16,384 tokens sits far right of "
             "the H100's ridge: compute-bound. Its FP8 speed-up on the roofline is still "
             f"[[precision.precision_speedup({H100}, m=8192, n=8192, k=8192)['speedup']|.1f]]x,"
             " but it comes from the FP8 multipliers (peak ratio "
             f"[[precision.precision_speedup({H100}, m=8192, n=8192, k=8192)['peak_ratio']"
             "|.0f]]), not from bandwidth. The memory-bound parts of training are elementwise "
             "kernels, a fraction of a percent of the FLOP (O17). FP8 is a bandwidth gain for "
             "serving; for training matmuls it is a compute gain.",
        see_also=("O23",),
        refs=("micikevicius2022fp8", "nvidia2024h100datasheet"),
    ),
    Claim(
        id="O25", source=SOURCE, where="4. Stability and reliability",
        claim="Above a few thousand accelerators hardware fails so often that checkpointing "
              "and restart, and the storage bandwidth behind them, become load-bearing.",
        stated="above a few thousand accelerators ... hardware fails constantly",
        check=Bound(expr="overview.job_mtbf_hours(16_384)", op="<", threshold=24.0,
                    fmt="{:.2f}", unit="h between interruptions (16,384 GPUs)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-failures-checkpoints-goodput",
        note="From Llama 3's 419 unexpected interruptions in 54 days: a job interruption every "
             "few hours at 16,384 GPUs, about every [[overview.job_mtbf_hours(2048)|.0f]] h at "
             "2,048 and every [[60 * overview.job_mtbf_hours(100_000)|.0f]] min at 100,000. "
             "With one-minute checkpoints and ten-minute restarts the goodput at Llama 3's "
             "scale is [[overview.llama3_goodput()|.0f]]%: failures cost such a run more "
             "than its data-parallel communication does.",
        glue=("04_memory_wall", ("job_mtbf_h",)),
        refs=("dubey2024llama3",),
    ),
    Claim(
        id="O26", source=SOURCE, where="4. Stability and reliability",
        claim="How much of peak compute a run turns into model FLOP (MFU) is the measure of a "
              "training team's competence.",
        stated="the number that separates a competent training team from an expensive one",
        check=Bound(expr="overview.published_mfu_range()", op="<", threshold=50.0,
                    fmt="{:.1f}", unit="% MFU (lowest / highest published run)"),
        verdict=Verdict.EXACT, section="sec-memory-wall-mfu",
        note="Every published frontier run recomputed here uses under half of its chips' peak; "
             "the spread between the lowest and highest is a "
             "[[overview.published_mfu_range()[1] / overview.published_mfu_range()[0]|.2f]]x "
             "difference in cost for the same FLOP. Whether that spread reflects the team "
             "rather than the model and hardware is not something MFU alone shows.",
        glue=("04_memory_wall", ("mfu_low", "mfu_high")),
        refs=("chowdhery2022palm", "dubey2024llama3", "deepseek2024v3"),
    ),
    Claim(
        id="O27", source=SOURCE, where="4. The DeepSeek result",
        claim="DeepSeek-V3 was reportedly trained for a small fraction of the hundreds of "
              "millions of dollars assumed for a frontier run.",
        stated="a small fraction of the assumed cost",
        check=Bound(expr="overview.deepseek_usd_m()", op="<", threshold=100.0, fmt="{:.3f}",
                    unit="million USD"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-capital",
        assumptions="the report's own 2 USD per H800-hour rental price and its count of the "
                    "final run's GPU-hours (pre-training, context extension, post-training).",
        note="At the same price Llama 3.1 405B's 30.84M GPU-hours would be "
             "[[overview.deepseek_usd_m('llama31_405b')|.0f]] million USD. Llama used "
             "[[overview.llama_over_deepseek_flop()|.0f]]x the FLOP for "
             "[[overview.deepseek_usd_m('llama31_405b') / overview.deepseek_usd_m()|.0f]]x the "
             "bill: the saving is a sparse model's smaller FLOP count, not cheaper FLOP.",
        see_also=("O28", "O29"),
        glue=("06_economics", ("ds_usd_m",)),
        refs=("deepseek2024v3",),
    ),
    Claim(
        id="O28", source=SOURCE, where="4. The DeepSeek result",
        claim="Reported training costs leave out research, failed runs, salaries and the "
              "hardware itself, so the true cost is much larger than the headline.",
        stated="often exclude research, failed runs, and salaries",
        check=Bound(expr="2048 * economics.price('capex_usd_per_gpu.h100_sxm').value / "
                         "units.MEGA / overview.deepseek_usd_m()", op=">", threshold=1.0,
                    fmt="{:.1f}", unit="x the headline (cluster purchase alone)"),
        verdict=Verdict.ASSUMPTION, section="sec-economics-capital",
        assumptions="an all-in capital cost of "
                    "[[economics.price('capex_usd_per_gpu.h100_sxm').value|,.0f]] USD per GPU "
                    "for DeepSeek's 2,048-GPU cluster (our H100 assumption; H800 prices are not "
                    "published).",
        note="The report itself says the figure excludes prior research and ablations. The "
             "cluster's purchase alone, on the order of "
             "[[2048 * economics.price('capex_usd_per_gpu.h100_sxm').value / 1e6|.0f]] million "
             "USD, is many times the headline; salaries and failed runs are not published.",
        see_also=("O27",),
        refs=("deepseek2024v3",),
    ),
    Claim(
        id="O29", source=SOURCE, where="4. The DeepSeek result",
        claim="The belief that frontier training is too costly for newcomers was more "
              "incumbents' narrative than physical necessity; what protects a lab is its data "
              "recipe, know-how and the number of attempts it can fund.",
        stated="the cost moat was a story ... the real moat is the data recipe",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-economics-capital",
        note="Motives and moats are not numbers. What the numbers do show (O27) is that "
             "DeepSeek-V3's cost per FLOP was about Llama 3.1's: its bill was lower because a "
             "sparse model needs fewer FLOP, which is physics working as expected. Published "
             "counts of ablation and failed runs per lab would test the 'iterations' half.",
        see_also=("O27", "O43"),
    ),
    Claim(
        id="O30", source=SOURCE, where="4. The chip supply chain (restated in 8)",
        claim="Advanced packaging (CoWoS) and HBM supply, not wafer starts, are the binding "
              "constraints on frontier pretraining, and HBM comes from only three companies.",
        stated="CoWoS capacity and HBM stacks from only three companies worldwide",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-memory-wall-packaging-memory-supply",
        note="Industry reporting (SK hynix, Samsung and Micron make HBM in volume; CoWoS "
             "capacity gated accelerator output through the recent build-out), plausible and "
             "widely repeated, but nothing in the book's data measures supply. Capacity "
             "figures for CoWoS and HBM set against accelerator shipments would settle it. "
             "What the registry shows is the demand side: HBM capacity per accelerator grows "
             "[[recompute.registry_growth('hbm_capacity')|.2f]]x "
             "per two years.",
    ),
    Claim(
        id="O31", source=SOURCE, where="4. The economics",
        claim="A training run's dominant cost is the depreciation of its hardware, not "
              "electricity.",
        stated="the depreciation of hardware ... rather than electricity",
        check=Bound(expr="recompute.capital_over_energy()", op=">", threshold=1.0,
                    fmt="{:.1f}", unit="x capital over energy (central / least favourable)"),
        verdict=Verdict.EXACT, section="sec-economics-capital",
        note="An owned H100 used 80% of the time, 5-year life, recorded prices and PUE; the "
             "second value is the least favourable corner of the recorded ranges (cheapest "
             "hardware, dearest power, worst PUE, 6-year life, free capital). A 2-3 year life "
             "would raise the ratio further.",
        see_also=("O32",),
        glue=("06_economics", ("cap_over_energy", "cap_over_energy_min")),
        refs=("hobbhahn2022gpu",),
    ),
    Claim(
        id="O32", source=SOURCE, where="4. The economics",
        claim="Frontier GPUs will be obsolete in two or three years.",
        stated="obsolete in two or three years",
        check=Range(expr="overview.economic_life_years()", lo=2.0, hi=3.0, fmt="{:.1f}",
                    unit="years worth running"),
        verdict=Verdict.DISPUTED, section="sec-economics-capital",
        note="A chip stays worth running while its earnings (falling as price-performance "
             "doubles every "
             "[[economics.price('price_performance_doubling_years.gpu').range[0]|.2g]] to "
             "[[economics.price('price_performance_doubling_years.gpu').range[1]|.3g]] years) "
             "exceed its electricity: the economic life is "
             "the range the call gives, an upper bound since only power counts as operating "
             "cost. What is right is that the value goes early: a two-year-old H100 earns "
             "[[100 * economics.earning_power_fraction(2.0, doubling_years=economics.price("
             "'price_performance_doubling_years.gpu').value)|.0f]]% of what it did new and, "
             "discounted at 8%, keeps [[recompute.value_left_pct(2.0)|.0f]]% of its economic "
             "value.",
        see_also=("O31",),
        glue=("06_economics", ("life_lo", "life_hi")),
        refs=("hobbhahn2022gpu",),
    ),
    Claim(
        id="O33", source=SOURCE, where="5. Scaling laws",
        claim="For a fixed compute budget the optimal balance of model size and data lands near "
              "twenty training tokens per parameter.",
        stated="near twenty tokens of training data per parameter",
        check=Compare(expr=f"scaling_laws.compute_optimal({REFIT}, train_flop=5.76e23)"
                           "['tokens_per_param']", target="20", fmt="{:.1f}",
                      unit="tokens per parameter"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-chinchilla-refit",
        assumptions="the Besiroglu et al. refit of the Chinchilla runs (or the paper's "
                    "Approaches 1 and 2), at Chinchilla's budget of 5.76e23 FLOP.",
        note="The Approach 3 constants printed in the Chinchilla paper give "
             "[[scaling_laws.compute_optimal(scaling_laws.parametric_law('hoffmann2022'), "
             "train_flop=5.76e23)['tokens_per_param']|.0f]] at the same budget. Unless the two "
             "exponents are equal the optimal ratio drifts with the budget: at 1e25 FLOP the "
             f"refit gives [[scaling_laws.compute_optimal({REFIT}, train_flop=1e25)"
             "['tokens_per_param']|.1f]].",
        see_also=("O34", "O36"),
        glue=("05_scaling_laws", ("chin_tpp_refit",)),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla"),
    ),
    Claim(
        id="O34", source=SOURCE, where="5. Scaling laws",
        claim="Straying far from the compute-optimal ratio in either direction, too large a "
              "model or too small, wastes part of the budget.",
        stated="wastes compute that should have gone to data, and the reverse",
        check=Bound(expr="(overview.isoflop_waste_pct(2.0), overview.isoflop_waste_pct(0.5))",
                    op=">", threshold=0.0, fmt="{:.1f}",
                    unit="% of the budget wasted (2x too large / 2x too small)"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-mechanism",
        assumptions="the refit Chinchilla law at Chinchilla's budget, a model twice or half "
                    "the compute-optimal size.",
        note="Right, and not small: the IsoFLOP curve looks flat in loss, but a factor of two "
             "off the optimum costs the share of the budget the call gives, and four times too "
             "large wastes [[overview.isoflop_waste_pct(4.0)|.0f]]%. Deliberate overtraining "
             "(O36) pays this training-side price to save at inference.",
        see_also=("O33",),
        refs=("hoffmann2022chinchilla", "besiroglu2024chinchilla"),
    ),
    Claim(
        id="O35", source=SOURCE, where="5. Why compute optimal no longer holds in practice",
        claim="A deployed model spends most of its lifetime compute on inference rather than "
              "on its one-off training.",
        stated="the large majority of its lifetime compute on inference",
        check=Bound(expr=f"100 * inference_optimal.training_share_at_optimum({REFIT}, "
                         f"n_params={L8}.published_n_params, n_tokens={L8}.n_training_tokens)",
                    op="<", threshold=50.0, fmt="{:.0f}", unit="% of lifetime compute in training"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-inference-optimal",
        assumptions="Llama 3 8B serving the demand at which its overtraining is lifetime-optimal "
                    "under the refit law (about "
                    f"[[inference_optimal.break_even_inference_tokens({REFIT}, "
                    f"n_params={L8}.published_n_params, n_tokens={L8}.n_training_tokens) / 1e12"
                    "|.0f]]T tokens).",
        note="How many tokens real deployments serve is not published, so the library can only "
             "say what a model's training implies: at the demand that justifies it, training is "
             "the share the call gives. A model served less than that spends most of its "
             "lifetime compute in training.",
        see_also=("O36", "O37"),
        glue=("05_scaling_laws", ("l8_share",)),
        refs=("sardana2024beyond",),
    ),
    Claim(
        id="O36", source=SOURCE, where="5. Why compute optimal no longer holds in practice",
        claim="Counting inference flips the optimisation: overtraining a smaller model past "
              "the Chinchilla point lowers the whole-lifetime compute for the same loss.",
        stated="deliberately overtraining a smaller model",
        check=Bound(expr="100 * inference_optimal.versus_chinchilla(scaling_laws.parametric_law("
                         "'sardana2024'), n_params=13e9, n_inference_tokens=2e12)"
                         "['saving_fraction']", op=">", threshold=0.0, fmt="{:.1f}",
                    unit="% lifetime FLOP saved"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-inference-optimal",
        assumptions="Sardana et al.'s example: a 13B model of Chinchilla-optimal data against "
                    "the lifetime optimum at 2T tokens of inference, with their three-digit "
                    "exponents.",
        note="The lifetime optimum is a "
             "[[inference_optimal.versus_chinchilla(scaling_laws.parametric_law('sardana2024'), "
             "n_params=13e9, n_inference_tokens=2e12)['opt_n_params'] / 1e9|.1f]]B model. How "
             "far to overtrain follows from the demand: Llama 3 8B is "
             f"[[inference_optimal.overtraining_factor({REFIT}, n_params={L8}.published_n_params,"
             f" n_tokens={L8}.n_training_tokens)|.0f]]x past its compute-optimal data under the "
             "refit law, but only "
             "[[inference_optimal.overtraining_factor(scaling_laws.parametric_law('hoffmann2022'),"
             f" n_params={L8}.published_n_params, n_tokens={L8}.n_training_tokens)|.0f]]x under "
             "the printed constants.",
        see_also=("O33", "O35", "O37"),
        glue=("05_scaling_laws", ("sard_pct",)),
        refs=("sardana2024beyond",),
    ),
    Claim(
        id="O37", source=SOURCE, where="5. Why compute optimal no longer holds in practice",
        claim="Each additional dollar put into overtraining comes back several-fold in "
              "inference savings.",
        stated="repaid many times over",
        check=Bound(expr=f"1e15 / inference_optimal.break_even_inference_tokens({REFIT}, "
                         f"n_params={L8}.published_n_params, n_tokens={L8}.n_training_tokens)",
                    op=">", threshold=2.0, fmt="{:.1f}", unit="inference FLOP saved per FLOP"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-inference-optimal",
        assumptions="Llama 3 8B under the refit law serving a quadrillion (1e15) tokens in its "
                    "life; 'many times' read as more than twice.",
        note="The marginal return of one more training FLOP is the real demand over the "
             "demand at which the model is lifetime-optimal. It is large only for a model "
             "trained short of its demand's optimum; at the optimum it is exactly 1 by "
             "definition, and past it below 1. So 'every extra dollar' is wrong at the margin "
             "that an optimising lab actually works at.",
        see_also=("O35", "O36"),
        glue=("05_scaling_laws", ("l8_return",)),
        refs=("sardana2024beyond",),
    ),
    Claim(
        id="O38", source=SOURCE, where="5. Why compute optimal no longer holds in practice",
        claim="Test-time compute partly substitutes for pretraining scale and moves hardware "
              "demand toward low-latency inference fleets built for memory bandwidth.",
        stated="capability can now be bought at inference time",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-economics-decode-step-roofline",
        note="The substitution rate between test-time and pretraining compute is not in any "
             "registry here; published curves of benchmark accuracy against both budgets would "
             "settle it. The hardware half is consistent with the roofline: a batch-1 decode "
             "step uses "
             f"[[100 * roofline.fraction_of_peak({H100}, roofline.matmul_intensity(1, 8192, "
             "8192, bytes_per_element=2))|.2f]]% of an H100's peak, so serving is bound by "
             "memory bandwidth.",
    ),
    Claim(
        id="O39", source=SOURCE, where="5. Why emergence is probably a measurement artifact",
        claim="Emergent abilities look sudden only because they are scored with discontinuous "
              "metrics such as exact match; a smooth metric shows the same gradual curve.",
        stated="discontinuous only because they are measured with discontinuous metrics",
        check=Bound(expr="np.log10(emergence.threshold_n_params(answer_tokens=20) / "
                         "emergence.threshold_n_params(answer_tokens=1))", op=">",
                    threshold=1.0, fmt="{:.1f}",
                    unit="decades the 'emergence' size moves (20- vs 1-token answers)"),
        verdict=Verdict.ASSUMPTION, section="sec-scaling-laws-emergence",
        assumptions="a per-token loss falling as a power law in model size with the chapter's "
                    "illustrative constants (exponent "
                    "[[emergence.ILLUSTRATIVE_ALPHA|.1f]]).",
        note="Exact match on an L-token answer is the one-token curve shifted right by "
             "L^(1/alpha), not a steeper one; the apparent threshold moves by the decades the "
             "call gives with answer length alone, which no real capability threshold would "
             "do. A 100-item test set adds a floor that reads every model below about 1% as "
             "zero.",
        see_also=("O40",),
        refs=("schaeffer2023mirage", "wei2022emergent"),
    ),
    Claim(
        id="O40", source=SOURCE, where="5. Why emergence is probably a measurement artifact",
        claim="A real puzzle survives the metric argument: grokking, an abrupt late "
              "generalisation, reproduces, and although loss is predictable, capabilities are "
              "not yet predictable from it.",
        stated="strong predictive theory for the loss, almost none for the capabilities",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-scaling-laws-emergence",
        note="A claim about the state of the science. A law that predicts which abilities "
             "appear at which loss, tested on models trained after the fit, would refute its "
             "second half.",
        see_also=("O39",),
        refs=("power2022grokking",),
    ),
    Claim(
        id="O41", source=SOURCE, where="6. The industry",
        claim="Almost every frontier lab has moved or is moving to mixtures of experts, FP8 "
              "training is becoming mainstream, and pretraining has blurred into mid-training "
              "(long-context extension and annealing).",
        stated="almost everyone has moved or is moving to mixture of experts",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-architecture-shape",
        note="Closed labs do not publish these choices. The registry is a sample of open "
             "models up to 2024, in which [[overview.n_moe_modern()|d]] of "
             "[[overview.n_modern_models()|d]] released since 2023 are mixtures of experts "
             "and DeepSeek-V3 is the one trained mostly in FP8; Llama 3.1 405B extended its "
             "context from 8K to 128K in continued pre-training. A census of 2025-26 frontier "
             "releases with their training precision would settle it.",
        refs=("deepseek2024v3", "dubey2024llama3"),
    ),
    Claim(
        id="O42", source=SOURCE, where="6. The industry",
        claim="Context windows have grown into the hundreds of thousands of tokens.",
        stated="into the hundreds of thousands of tokens and beyond",
        check=Bound(expr="overview.max_context_tokens()", op=">=", threshold=100_000,
                    fmt="{:,.0f}", unit="tokens (longest in the registry)"),
        verdict=Verdict.EXACT, section="sec-economics-context-length",
        note="Llama 3.1 405B, Qwen 2.5 72B and DeepSeek-V3 are registered at 128K. 'And "
             "beyond' is outside the registry. What a long context costs at serving time is "
             "the subject of the cited section.",
        refs=("dubey2024llama3", "deepseek2024v3"),
    ),
    Claim(
        id="O43", source=SOURCE, where="6. Why competition shifted from architecture to data",
        claim="Competition has moved from architecture and scale to data and post-training: "
              "open weights are common but open recipes are not, and matching a frontier "
              "architecture is quick while matching its data pipeline is slow.",
        stated="open weights are now common, while open recipes are not",
        check=None, verdict=Verdict.UNCHECKABLE, section="sec-architecture-view-against-consensus",
        note="A judgment about where labs compete. That architectures have converged is "
             "checked (O16); that the differentiation lies in data and post-training would be "
             "settled by controlled comparisons of models sharing an architecture but not a "
             "recipe.",
        see_also=("O29",),
    ),
    Claim(
        id="O44", source=SOURCE, where="7. Academia and the open source counterweight",
        claim="Academic labs with about a hundred accelerators work in a field whose frontier "
              "runs on clusters of about a hundred thousand.",
        stated="a hundred chips ... a hundred thousand",
        check=Bound(expr="training.training_time_s(accounting.train_flop(accounting.n_params("
                         "specs.model('llama31_405b')), specs.model('llama31_405b')"
                         f".n_training_tokens), n_chips=100, peak_flop_per_s={H100}"
                         ".peak_bf16_flop_per_s, mfu=0.4) / units.YEAR", op=">",
                    threshold=1.0, fmt="{:.0f}",
                    unit="years for 100 H100s to redo Llama 3.1 405B"),
        verdict=Verdict.ASSUMPTION, section="sec-foundations-cost-training-step",
        assumptions="100 H100s at 40% MFU, uninterrupted, redoing Llama 3.1 405B's 6ND.",
        note="A hundred thousand of the same chips would take "
             "[[training.training_time_s(accounting.train_flop(accounting.n_params(specs.model("
             "'llama31_405b')), specs.model('llama31_405b').n_training_tokens), n_chips=100_000,"
             f" peak_flop_per_s={H100}.peak_bf16_flop_per_s, mfu=0.4) / units.DAY|.0f]] days. "
             "A frontier pretraining run is out of a small lab's reach by three orders of "
             "magnitude; what it can do in a month is a small model or a fine-tune.",
    ),
]
