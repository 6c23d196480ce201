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
    "book_crawl",
    "book_run",
    "code_shares",
    "collapse_survivors",
    "collapse_words_lost",
    "decontam_recall",
    "dedup_removals",
    "fertility_premium",
    "lsh_candidate_probability",
    "near_over_exact",
]


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


def lsh_candidate_probability(jaccard: float, *, n_bands: int = 14, n_rows: int = 8) -> float:
    """Probability that a pair of this Jaccard similarity becomes an LSH candidate.

    FineWeb's banding by default, 14 bands of 8 rows: 1 - (1 - s^r)^b.

    >>> round(lsh_candidate_probability(0.5), 3)
    0.053
    """
    return float(dedup.s_curve(jaccard, n_bands=n_bands, n_rows=n_rows))


@cache
def decontam_recall(case: CrawlCase, n: int, *, edited: bool = True) -> float:
    """Recall of an n-gram decontamination check on :func:`book_crawl`'s leaking pages.

    ``edited``: the leaking pages that quote a benchmark item with 15% of its words replaced;
    otherwise the verbatim quotes. Clean pages are kept, so false alarms are possible.
    """
    web = book_crawl(case)
    docs = web.documents
    leak = np.array([d.kind == "leak" for d in docs])
    truth = np.array([d.defect == ("edited" if edited else "verbatim") for d in docs]) & leak
    keep = truth | ~leak
    texts = [d.main_text for d, k in zip(docs, keep, strict=True) if k]
    return float(decontam.sweep(texts, list(web.benchmark), truth[keep], [n])[n]["recall"])


@cache
def fertility_premium(case: CrawlCase) -> float:
    """Worst language's tokens per word over English's, for the book's 768-token BPE.

    The tokenizer is trained on 350 pages that survived :func:`book_run`; fertility is
    measured on a fresh crawl of 120 clean pages (seed 4).
    """
    result = book_run(case)
    kept = np.flatnonzero(result.alive["decontam"])
    tok = bpe.BytePairTokenizer().train([result.texts[i] for i in kept[:350]], vocab_size=256 + 512)
    held_out = crawl.generate_crawl(120, rng=np.random.default_rng(4), kinds={"clean": 1.0})
    fert = {
        lang: bpe.corpus_fertility(
            tok.encode, [d.main_text for d in held_out.documents if d.lang == lang]
        )["tokens_per_word"]
        for lang in crawl.LANGUAGES
    }
    return float(max(fert.values()) / fert["en"])


@cache
def collapse_survivors(case: CrawlCase, mode: str) -> tuple[int, ...]:
    """Words a Zipf model of ``zipf_vocab`` words can still produce, per generation of 100
    (seed ``collapse_seed``).

    Each generation is fitted on 20,000 samples of the last
    (:func:`collapse.categorical_recursion`); ``mode`` is ``"replace"``, ``"accumulate"``,
    ``"mix_real"`` or ``"verified"``.
    """
    q = collapse.categorical_recursion(
        collapse.zipf(case.zipf_vocab),
        n_samples=20_000,
        n_generations=100,
        rng=np.random.default_rng(case.collapse_seed),
        mode=mode,
    )
    return tuple(int(x) for x in collapse.surviving_types(q))


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
