"""The data chapter's fixed-seed runs of the pipeline, as functions both it and the ledger call.

The book's synthetic crawl through every stage, the decontamination sweep on its leaking pages, a
BPE tokenizer trained on the survivors, and the model-collapse recursion of a Zipf unigram model.
Sizes and seeds are a case of ``data/scenarios.toml`` (``specs.scenario("crawl_800")``: 800
pages, seed 2; the pipeline, seed 3; 2,000 words, seed 5), passed in. The runs are cached: they
are deterministic, take seconds, and several claims read the same run.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import specs  # noqa: F401 (the doctests)
from ..specs import CrawlCase
from . import bpe, collapse, crawl, decontam, dedup, mixture, run

__all__ = [
    "BPE_VOCAB",
    "FINEWEB_N_BANDS",
    "FINEWEB_N_ROWS",
    "N_COLLAPSE_GENERATIONS",
    "N_COLLAPSE_SAMPLES",
    "book_crawl",
    "book_run",
    "book_tokenizer",
    "code_shares",
    "collapse_run",
    "collapse_survivors",
    "collapse_words_lost",
    "decontam_sweep",
    "dedup_removals",
    "fertility_premium",
    "held_out_crawl",
    "lsh_candidate_probability",
    "near_over_exact",
    "tokenizer_texts",
]

# FineWeb's MinHash banding: 14 bands of 8 rows, 112 hashes (Penedo et al. 2024, 'The FineWeb
# Datasets', sec. 3.3, arXiv:2406.17557; https://arxiv.org/abs/2406.17557).
FINEWEB_N_BANDS, FINEWEB_N_ROWS = 14, 8
# The book's small tokenizer: 256 byte tokens and 512 merges, trained on the first 350 pages the
# pipeline keeps; fertility is measured on a fresh crawl of 120 clean pages (seed 4).
BPE_VOCAB = 256 + 512
N_TOKENIZER_PAGES = 350
N_HELD_OUT_PAGES, HELD_OUT_SEED = 120, 4
# The model-collapse toy: each generation is fitted on 20,000 samples of the last, 100 times.
N_COLLAPSE_SAMPLES, N_COLLAPSE_GENERATIONS = 20_000, 100


@cache
def book_crawl(case: CrawlCase) -> crawl.Crawl:
    """A case's synthetic crawl: ``n_pages`` pages from ``np.random.default_rng(crawl_seed)``."""
    return crawl.generate_crawl(case.n_pages, rng=np.random.default_rng(case.crawl_seed))


@cache
def book_run(case: CrawlCase) -> run.Result:
    """:func:`book_crawl` through the whole pipeline, drawing from ``default_rng(run_seed)``."""
    return run.run(book_crawl(case), rng=np.random.default_rng(case.run_seed))


def dedup_removals(result: run.Result) -> tuple[int, int]:
    """Pages removed by exact dedup and, after it, by MinHash/LSH near-dedup (counts).

    >>> n_exact, n_near = dedup_removals(book_run(specs.scenario("crawl_800")))
    >>> n_near > n_exact > 0
    True
    """
    a = result.alive
    return (
        int(np.sum(a["quality"] & ~a["exact dedup"])),
        int(np.sum(a["exact dedup"] & ~a["near dedup"])),
    )


def near_over_exact(case: CrawlCase) -> float:
    """Pages near-dedup removes per page that exact dedup removed, on :func:`book_run`."""
    n_exact, n_near = dedup_removals(book_run(case))
    return n_near / n_exact


def lsh_candidate_probability(
    jaccard: float, *, n_bands: int = FINEWEB_N_BANDS, n_rows: int = FINEWEB_N_ROWS
) -> float:
    """Probability that a pair of this Jaccard similarity becomes an LSH candidate.

    FineWeb's banding by default, 14 bands of 8 rows: 1 - (1 - s^r)^b.

    >>> round(lsh_candidate_probability(0.5), 3)
    0.053
    """
    return float(dedup.s_curve(jaccard, n_bands=n_bands, n_rows=n_rows))


@cache
def decontam_sweep(case: CrawlCase, ns: tuple[int, ...], *, edited: bool = True) -> dict:
    """An n-gram decontamination check on :func:`book_crawl`'s leaking pages, for each n of ``ns``.

    ``edited``: the leaking pages that quote a benchmark item with 15% of its words replaced;
    otherwise the verbatim quotes. Clean pages are kept, so false alarms are possible. Returns
    :func:`decontam.sweep`'s ``{n: {"recall", "false_positive_rate", "n_flagged"}}``; each n's
    row does not depend on the others in ``ns``. Cached: do not mutate the result.

    >>> case = specs.scenario("crawl_800")
    >>> decontam_sweep(case, (13,), edited=False)[13]["recall"]
    1.0
    """
    web = book_crawl(case)
    docs = web.documents
    leak = np.array([d.kind == "leak" for d in docs])
    truth = np.array([d.defect == ("edited" if edited else "verbatim") for d in docs]) & leak
    keep = truth | ~leak
    texts = [d.main_text for d, k in zip(docs, keep, strict=True) if k]
    return decontam.sweep(texts, list(web.benchmark), truth[keep], list(ns))


def tokenizer_texts(case: CrawlCase) -> list[str]:
    """The first ``N_TOKENIZER_PAGES`` pages that survive :func:`book_run` (a fresh list)."""
    result = book_run(case)
    kept = np.flatnonzero(result.alive["decontam"])
    return [result.texts[i] for i in kept[:N_TOKENIZER_PAGES]]


@cache
def book_tokenizer(case: CrawlCase) -> bpe.BytePairTokenizer:
    """The book's ``BPE_VOCAB``-token byte-level BPE, trained on :func:`tokenizer_texts`."""
    return bpe.BytePairTokenizer().train(tokenizer_texts(case), vocab_size=BPE_VOCAB)


@cache
def held_out_crawl() -> crawl.Crawl:
    """A fresh crawl of ``N_HELD_OUT_PAGES`` clean pages (seed ``HELD_OUT_SEED``) to measure on."""
    return crawl.generate_crawl(
        N_HELD_OUT_PAGES, rng=np.random.default_rng(HELD_OUT_SEED), kinds={"clean": 1.0}
    )


@cache
def fertility_premium(case: CrawlCase) -> float:
    """Worst language's tokens per word over English's, for :func:`book_tokenizer`.

    Fertility is measured on :func:`held_out_crawl`, language by language.
    """
    tok, held_out = book_tokenizer(case), held_out_crawl()
    fert = {
        lang: bpe.corpus_fertility(
            tok.encode, [d.main_text for d in held_out.documents if d.lang == lang]
        )["tokens_per_word"]
        for lang in crawl.LANGUAGES
    }
    return float(max(fert.values()) / fert["en"])


@cache
def collapse_run(case: CrawlCase, mode: str) -> np.ndarray:
    """A Zipf model of ``zipf_vocab`` words refitted generation after generation (seed
    ``collapse_seed``): its probabilities, one row per generation (read-only).

    Each generation is fitted on ``N_COLLAPSE_SAMPLES`` samples of the last, for
    ``N_COLLAPSE_GENERATIONS`` generations (:func:`collapse.categorical_recursion`); ``mode`` is
    ``"replace"``, ``"accumulate"``, ``"mix_real"`` or ``"verified"``.
    """
    q = collapse.categorical_recursion(
        collapse.zipf(case.zipf_vocab),
        n_samples=N_COLLAPSE_SAMPLES,
        n_generations=N_COLLAPSE_GENERATIONS,
        rng=np.random.default_rng(case.collapse_seed),
        mode=mode,
    )
    q.flags.writeable = False
    return q


@cache
def collapse_survivors(case: CrawlCase, mode: str) -> tuple[int, ...]:
    """Words :func:`collapse_run`'s model can still produce, per generation."""
    return tuple(int(x) for x in collapse.surviving_types(collapse_run(case, mode)))


def collapse_words_lost(case: CrawlCase, mode: str) -> int:
    """Words lost over 100 generations: from what the model fitted on real data could produce
    (generation 0 of ``"replace"``) to what the last generation of ``mode`` can."""
    return collapse_survivors(case, "replace")[0] - collapse_survivors(case, mode)[-1]


def code_shares() -> tuple[float, float, float]:
    """Code's share of LLaMA's mixture, and code's and maths's shares of Llama 3's (fractions).

    >>> code_shares()[1] > code_shares()[0]
    True
    """
    return (
        mixture.LLAMA1_MIXTURE["GitHub"][0],
        mixture.LLAMA3_MIX["code"],
        mixture.LLAMA3_MIX["math_reasoning"],
    )
