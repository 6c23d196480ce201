"""The whole pipeline in order, with every stage scored against the crawl's ground truth.

    extract -> language ID -> quality rules -> exact dedup -> MinHash-LSH dedup -> decontamination

Each stage sees only the documents that survived the previous ones, as in production
(FineWeb runs the same order: Penedo et al. 2024, arXiv:2406.17557, fig. 1).

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import crawl as crawl_mod
from . import decontam, dedup, extract, langid, quality

STAGES = ("crawled", "extracted", "language ID", "quality", "exact dedup", "near dedup", "decontam")


@dataclasses.dataclass(frozen=True)
class Result:
    """Outputs of every stage; ``alive[stage]`` marks the documents still in after it."""

    texts: list[str]
    langs: list[str]
    lang_probs: np.ndarray
    rule_fails: np.ndarray
    rule_names: list[str]
    signatures: np.ndarray
    candidate_pairs: np.ndarray
    alive: dict[str, np.ndarray]


def run(
    crawl: crawl_mod.Crawl,
    *,
    rng: np.random.Generator,
    n_bands: int = 14,
    n_rows: int = 8,
    shingle_words: int = 5,
    decontam_n: int = 8,
    min_lang_confidence: float = 0.5,
) -> Result:
    """Run all stages over ``crawl`` with FineWeb's dedup setting by default (b=14, r=8)."""
    docs = crawl.documents
    texts = [extract.extract_text(d.html) for d in docs]
    alive = {"crawled": np.ones(len(docs), dtype=bool)}
    alive["extracted"] = np.array([bool(t.strip()) for t in texts])
    langs, probs = langid.identify(texts, min_confidence=min_lang_confidence)
    alive["language ID"] = alive["extracted"] & np.isin(langs, list(crawl_mod.LANGUAGES))
    fails, names = quality.rule_table(texts, langs)
    alive["quality"] = alive["language ID"] & ~fails.any(axis=1)
    idx = np.flatnonzero(alive["quality"])
    exact = np.zeros(len(docs), dtype=bool)
    exact[idx] = dedup.exact_duplicates([texts[i] for i in idx])
    alive["exact dedup"] = alive["quality"] & ~exact
    idx = np.flatnonzero(alive["exact dedup"])
    flat, offsets = dedup.shingles([texts[i] for i in idx], k=shingle_words)
    sig = dedup.signatures(flat, offsets, dedup.permutations(n_bands * n_rows, rng=rng))
    pairs = dedup.candidate_pairs(sig, n_bands=n_bands, n_rows=n_rows)
    near = np.zeros(len(docs), dtype=bool)
    near[idx] = dedup.duplicates_to_remove(dedup.clusters(idx.size, pairs))
    alive["near dedup"] = alive["exact dedup"] & ~near
    idx = np.flatnonzero(alive["near dedup"])
    dirty = np.zeros(len(docs), dtype=bool)
    dirty[idx] = decontam.contaminated([texts[i] for i in idx], list(crawl.benchmark), n=decontam_n)
    alive["decontam"] = alive["near dedup"] & ~dirty
    return Result(
        texts, langs, probs, fails, names, sig, idx_pairs(pairs, alive["exact dedup"]), alive
    )


def idx_pairs(pairs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Map pairs of positions among the ``mask``-selected documents back to document ids."""
    return np.flatnonzero(mask)[pairs] if len(pairs) else pairs


def funnel(crawl: crawl_mod.Crawl, result: Result) -> dict[str, list[int]]:
    """Documents of each true kind alive after each stage: kind -> counts in STAGES order."""
    kinds = np.array([d.kind for d in crawl.documents])
    return {
        k: [int(np.sum(result.alive[s] & (kinds == k))) for s in STAGES] for k in crawl_mod.KINDS
    }


def stage_scores(crawl: crawl_mod.Crawl, result: Result) -> dict[str, tuple[float, float]]:
    """(precision, recall) of what each filtering stage removed, against what it should remove.

    Quality should remove spam and low-quality pages; the two dedup stages together every
    page after the first of its cluster; decontamination every page that quotes an item.
    """
    kinds = np.array([d.kind for d in crawl.documents])
    a = result.alive
    removed_q = a["language ID"] & ~a["quality"]
    removed_d = a["quality"] & ~a["near dedup"]
    removed_c = a["near dedup"] & ~a["decontam"]
    leak = np.array([bool(d.benchmark_items) for d in crawl.documents])
    dup = crawl_mod.should_remove_as_duplicate(crawl)
    bad = np.isin(kinds, ["spam", "low_quality"])
    return {
        "quality": dedup.precision_recall(removed_q, bad & a["language ID"]),
        "dedup": dedup.precision_recall(removed_d, dup & a["quality"]),
        "decontam": dedup.precision_recall(removed_c, leak & a["near dedup"]),
    }
