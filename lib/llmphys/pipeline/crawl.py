"""A deterministic synthetic web crawl in which every page carries its ground truth.

Real crawls cannot be shipped with a book, and their labels (which text is boilerplate,
which page copies which) are unknown. This generator writes HTML pages whose content
is drawn word by word from the unigram frequencies of six languages, as shipped inside
the ``wordfreq`` package (Speer 2022; offline, no sentences from anywhere), wraps them
in site boilerplate (navigation, cookie banners, related links, share bars, footers,
scripts), and plants the defects a pipeline must remove:

    exact_dup    the same article on a second site, or a mirror of the same page
    near_dup     a syndicated copy with a small fraction of words edited
    templated    pages generated from one template with a few slots changed
    spam         keyword stuffing
    low_quality  too short, hashtag/ellipsis-heavy, bullet lists, numeric tables
    leak         a clean page that quotes one benchmark item (verbatim or edited)

Word salad has the right statistics for every stage here (word lengths, stop words,
n-gram collisions, bytes per character), not the meaning of real text; a quality
classifier trained on meaning could not be tested on it.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import sites
from .words import sample_words

LANGUAGES = {"en": 0.50, "de": 0.12, "fr": 0.10, "es": 0.10, "ru": 0.10, "hi": 0.08}
KINDS = {
    "clean": 0.50,
    "exact_dup": 0.08,
    "near_dup": 0.10,
    "templated": 0.07,
    "spam": 0.04,
    "low_quality": 0.15,
    "leak": 0.06,
}
DEFECTS = ("short", "symbols", "bullets", "numeric")
_END = {"hi": "।"}  # the danda ends a Hindi sentence


@dataclasses.dataclass(frozen=True, kw_only=True)
class Document:
    """One crawled page and what it really is."""

    doc_id: int
    url: str
    html: str
    main_text: str  # the text the page's author wrote, blocks joined by newlines
    lang: str
    kind: str  # one of KINDS
    defect: str = ""  # for low_quality/spam: which defect; for leak: verbatim/edited
    cluster: int  # doc_id of the page this one copies (itself when original)
    benchmark_items: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Crawl:
    documents: tuple[Document, ...]
    benchmark: tuple[str, ...]


def sentence(lang: str, rng: np.random.Generator, *, mean_words: float = 12.0) -> str:
    w = sample_words(lang, 4 + rng.poisson(mean_words - 4), rng)
    return w[0].capitalize() + " " + " ".join(w[1:]) + _END.get(lang, ".")


def paragraph(lang: str, rng: np.random.Generator, *, mean_words: float = 12.0) -> str:
    """Two or more sentences; all their words are drawn in one call."""
    lengths = 4 + rng.poisson(mean_words - 4, size=2 + rng.poisson(2))
    w = sample_words(lang, int(lengths.sum()), rng)
    ends = np.cumsum(lengths)
    end = _END.get(lang, ".")
    return " ".join(
        " ".join([w[a].capitalize(), *w[a + 1 : b]]) + end
        for a, b in zip(ends - lengths, ends, strict=True)
    )


def article_blocks(lang: str, rng: np.random.Generator) -> list[tuple[str, str]]:
    """(tag, text) blocks of an article: a title, paragraphs, sometimes subheadings."""
    blocks = [("h1", " ".join(sample_words(lang, 3 + rng.poisson(2), rng)).capitalize())]
    for i in range(2 + rng.poisson(3)):
        if i and rng.random() < 0.3:
            heading = " ".join(sample_words(lang, 2 + rng.poisson(2), rng))
            blocks.append(("h2", heading.capitalize()))
        blocks.append(("p", paragraph(lang, rng)))
    return blocks


def benchmark_items(n_items: int, rng: np.random.Generator) -> tuple[str, ...]:
    """``n_items`` English evaluation items, 20 to 40 words each, drawn like the crawl."""
    return tuple(
        " ".join(sample_words("en", int(rng.integers(20, 41)), rng)) for _ in range(n_items)
    )


def edit_words(text: str, rate: float, lang: str, rng: np.random.Generator) -> str:
    """Replace each word with probability ``rate`` by a fresh word of ``lang``."""
    w = text.split(" ")
    hit = np.flatnonzero(rng.random(len(w)) < rate)
    for i, new in zip(hit, sample_words(lang, hit.size, rng), strict=True):
        w[i] = new
    return " ".join(w)


def defect_blocks(defect: str, lang: str, rng: np.random.Generator) -> list[tuple[str, str]]:
    """Blocks of a low-quality or spam page with the named defect."""
    title = ("h1", " ".join(sample_words(lang, 3, rng)).capitalize())
    if defect == "short":
        return [title, ("p", sentence(lang, rng) + " " + sentence(lang, rng))]
    if defect == "symbols":
        tags = sample_words(lang, 60, rng)
        return [title] + [
            ("p", " ".join(f"#{t}" for t in tags[i : i + 6]) + " ...") for i in range(0, 60, 6)
        ]
    if defect == "bullets":
        return [title] + [
            ("li", "• " + " ".join(sample_words(lang, 2 + rng.poisson(2), rng)))
            for _ in range(25 + rng.poisson(10))
        ]
    if defect == "numeric":
        rows = rng.integers(0, 10_000, size=(30, 5))
        return [title] + [("p", " ".join(f"{x:04d}" for x in r)) for r in rows]
    if defect == "keyword_stuffing":
        keys = sample_words(lang, 4, rng)
        stuffed = [keys[i] for i in rng.integers(0, 4, size=180)]
        return [title] + [("p", " ".join(stuffed[i : i + 30])) for i in range(0, 180, 30)]
    raise ValueError(
        f"defect={defect!r} is not known; allowed: {', '.join(DEFECTS)}, keyword_stuffing"
    )


def template_pages(
    lang: str, n_pages: int, rng: np.random.Generator
) -> list[list[tuple[str, str]]]:
    """``n_pages`` pages from one template: shared paragraphs with one slot each filled per page."""
    skeleton = [paragraph(lang, rng).split(" ") for _ in range(4)]
    pages = []
    for _ in range(n_pages):
        blocks = [("h1", " ".join(sample_words(lang, 3, rng)).capitalize())]
        for words in skeleton:
            w = list(words)
            w[int(rng.integers(len(w)))] = sample_words(lang, 1, rng)[0]
            blocks.append(("p", " ".join(w)))
        pages.append(blocks)
    return pages


def generate_crawl(
    n_docs: int,
    *,
    rng: np.random.Generator,
    n_benchmark: int = 40,
    kinds: dict[str, float] | None = None,
) -> Crawl:
    """A crawl of about ``n_docs`` labelled pages (templates round the count a little).

    >>> c = generate_crawl(60, rng=np.random.default_rng(0))
    >>> len(c.documents) >= 55, c.documents[0].doc_id
    (True, 0)
    """
    if int(n_docs) != n_docs or n_docs < 10:
        raise ValueError(f"n_docs must be an integer >= 10, got {n_docs!r}")
    kinds = dict(KINDS if kinds is None else kinds)
    if set(kinds) - set(KINDS) or not np.isclose(sum(kinds.values()), 1.0):
        raise ValueError(f"kinds must map a subset of {list(KINDS)} to fractions summing to 1")
    bench = benchmark_items(n_benchmark, rng)
    site_pool = sites.make_sites(max(12, n_docs // 25), LANGUAGES, rng=rng)
    langs = list(LANGUAGES)
    lang_p = np.array(list(LANGUAGES.values()))
    counts = {k: round(f * n_docs) for k, f in kinds.items()}
    pages: list[dict] = []  # provisional records; cluster refers to an index in `pages`

    def add(blocks, lang, kind, defect="", cluster=None, items=(), site=None):
        site = site or sites.pick_site(site_pool, lang, rng)
        pages.append(
            dict(
                blocks=blocks,
                lang=lang,
                kind=kind,
                defect=defect,
                site=site,
                cluster=len(pages) if cluster is None else cluster,
                items=tuple(items),
            )
        )

    def lang_draw():
        return langs[int(rng.choice(len(langs), p=lang_p))]

    for _ in range(counts.get("clean", 0)):
        lang = lang_draw()
        add(article_blocks(lang, rng), lang, "clean")
    originals = [i for i, p in enumerate(pages) if p["kind"] == "clean"] or [0]
    for i in range(counts.get("leak", 0)):
        item = int(rng.integers(len(bench)))
        verbatim = i % 2 == 0
        quote = bench[item] if verbatim else edit_words(bench[item], 0.15, "en", rng)
        blocks = article_blocks("en", rng)
        blocks.insert(1 + int(rng.integers(len(blocks) - 1)), ("p", quote))
        add(blocks, "en", "leak", "verbatim" if verbatim else "edited", items=(item,))
    for _ in range(counts.get("spam", 0)):
        lang = lang_draw()
        add(defect_blocks("keyword_stuffing", lang, rng), lang, "spam", "keyword_stuffing")
    for i in range(counts.get("low_quality", 0)):
        lang = lang_draw()
        add(
            defect_blocks(DEFECTS[i % len(DEFECTS)], lang, rng),
            lang,
            "low_quality",
            DEFECTS[i % len(DEFECTS)],
        )
    left = counts.get("templated", 0)
    while left > 0:
        lang, n = lang_draw(), min(left, 3 + int(rng.integers(4)))
        site, first = sites.pick_site(site_pool, lang, rng), len(pages)
        for blocks in template_pages(lang, n, rng):
            add(blocks, lang, "templated", cluster=first, site=site)
        left -= n
    for _ in range(counts.get("exact_dup", 0)):
        src = pages[originals[int(rng.integers(len(originals)))]]
        mirror = rng.random() < 0.5
        add(
            src["blocks"],
            src["lang"],
            "exact_dup",
            "mirror" if mirror else "other_site",
            cluster=src["cluster"],
            site=src["site"] if mirror else None,
        )
    for _ in range(counts.get("near_dup", 0)):
        src = pages[originals[int(rng.integers(len(originals)))]]
        rate = float(rng.uniform(0.005, 0.05))
        blocks = [(t, edit_words(x, rate, src["lang"], rng)) for t, x in src["blocks"]]
        add(blocks, src["lang"], "near_dup", cluster=src["cluster"])
    return _finalise(pages, bench, rng)


def _finalise(pages: list[dict], bench: tuple[str, ...], rng: np.random.Generator) -> Crawl:
    """Shuffle into crawl order, number the pages, render their HTML."""
    order = rng.permutation(len(pages))
    new_id = np.empty(len(pages), dtype=np.int64)
    new_id[order] = np.arange(len(pages))
    docs = []
    for doc_id, i in enumerate(order):
        p = pages[i]
        docs.append(
            Document(
                doc_id=doc_id,
                url=sites.url(p["site"], doc_id),
                lang=p["lang"],
                kind=p["kind"],
                html=sites.render(p["site"], p["blocks"], rng),
                defect=p["defect"],
                main_text="\n".join(text for _, text in p["blocks"]),
                cluster=int(new_id[p["cluster"]]),
                benchmark_items=p["items"],
            )
        )
    return Crawl(tuple(docs), bench)


def should_remove_as_duplicate(crawl: Crawl) -> np.ndarray:
    """Ground truth for dedup: True for each page after the first of its cluster, in crawl order."""
    seen: set[int] = set()
    out = np.zeros(len(crawl.documents), dtype=bool)
    for d in crawl.documents:
        out[d.doc_id] = d.cluster in seen
        seen.add(d.cluster)
    return out
