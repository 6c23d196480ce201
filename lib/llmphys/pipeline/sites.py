"""Web sites for the synthetic crawl: each renders article blocks into a full HTML page.

Half of the sites mark their layout up semantically (``<nav>``, ``<article>``, ``<footer>``);
the other half are "div soup" with meaningless class names, so an extractor cannot rely
on tags. Some sites put an English consent notice or a share bar inside the article
(extraction keeps them: a precision loss), and some continue the article in a second
container after a related-links box (extraction may drop it: a recall loss). All the
boilerplate wording below was written for this book.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses
import html

import numpy as np

from .words import sample_words

COOKIE_BANNER = (
    "We and our partners store small files on your device to count visits and "
    "remember your choices. You can accept them all or pick which ones to allow."
)
INLINE_NOTICE = (
    "This story includes media hosted by another company. Showing it may place "
    "files on your device, and you can change that choice in your privacy settings."
)
SHARE_BAR = "Share: Mail Print Copy link"
TRACKER_JS = "window.q=window.q||[];function tk(){q.push(arguments)}tk('page',location.href);"


@dataclasses.dataclass(frozen=True)
class Site:
    name: str
    lang: str
    semantic: bool  # semantic HTML5 tags, or div soup with random class names
    cookie_banner: bool
    inline_notice: bool  # consent notice inside the article
    share_bar: bool  # share bar inside the article
    split_article: float  # probability that a page continues after the related box
    nav: tuple[str, ...]
    classes: tuple[str, ...]


def make_sites(
    n_sites: int, languages: dict[str, float], *, rng: np.random.Generator
) -> list[Site]:
    """``n_sites`` sites, at least one per language, the rest drawn by language weight."""
    langs = list(languages)
    p = np.array(list(languages.values()))
    extra = rng.choice(len(langs), size=max(0, n_sites - len(langs)), p=p)
    chosen = langs + [langs[i] for i in extra]
    out = []
    for lang in chosen:
        name = "".join(sample_words("en", 2, rng)).lower()
        out.append(
            Site(
                name=name,
                lang=lang,
                semantic=bool(rng.random() < 0.5),
                cookie_banner=bool(rng.random() < 0.6),
                inline_notice=bool(rng.random() < 0.25),
                share_bar=bool(rng.random() < 0.3),
                split_article=0.4 if rng.random() < 0.3 else 0.0,
                nav=tuple(w.capitalize() for w in sample_words(lang, 6, rng)),
                classes=tuple(f"c{x:04x}" for x in rng.integers(0, 2**16, size=8)),
            )
        )
    return out


def pick_site(pool: list[Site], lang: str, rng: np.random.Generator) -> Site:
    same = [s for s in pool if s.lang == lang]
    return same[int(rng.integers(len(same)))]


def url(site: Site, doc_id: int) -> str:
    return f"https://{site.name}.example/{site.lang}/{doc_id}"


def _open(site: Site, semantic_tag: str, slot: int, *, tag: str = "") -> tuple[str, str]:
    tag = (tag or semantic_tag) if site.semantic else "div"
    attr = f' class="{semantic_tag}"' if site.semantic else f' class="{site.classes[slot]}"'
    return f"<{tag}{attr}>", f"</{tag}>"


def _blocks_html(blocks: list[tuple[str, str]]) -> str:
    out, in_list = [], False
    for tag, text in blocks:
        if tag == "li" and not in_list:
            out.append("<ul>")
        if tag != "li" and in_list:
            out.append("</ul>")
        in_list = tag == "li"
        out.append(f"<{tag}>{_escape(text)}</{tag}>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)


def _links(words: list[str]) -> str:
    return "".join(f'<a href="/{w.lower()}">{_escape(w)}</a> ' for w in words)


def render(site: Site, blocks: list[tuple[str, str]], rng: np.random.Generator) -> str:
    """A full HTML page around ``blocks``; the random draws pick related links and the split."""
    head = (
        f'<!DOCTYPE html>\n<html lang="{site.lang}"><head><meta charset="utf-8">'
        f"<title>{_escape(blocks[0][1])} | {site.name}</title>"
        f"<script>{TRACKER_JS}</script><style>body{{margin:0}}</style></head>\n<body>"
    )
    parts = [head]
    if site.cookie_banner:
        o, c = _open(site, "cookie-banner", 0, tag="div")
        parts.append(
            f"{o}<p>{COOKIE_BANNER}</p><button>Accept all</button><button>Choose</button>{c}"
        )
    o, c = _open(site, "header", 1)
    parts.append(f'{o}<a href="/">{site.name.capitalize()}</a>{c}')
    o, c = _open(site, "nav", 2)
    parts.append(f"{o}{_links(list(site.nav))}{c}")
    split = len(blocks) > 3 and rng.random() < site.split_article
    body, rest = (blocks[:-1], blocks[-1:]) if split else (blocks, [])
    main_o, main_c = _open(site, "main", 3)
    art_o, art_c = _open(site, "article", 4)
    parts.append(main_o + art_o)
    if site.inline_notice:
        parts.append(f"<p>{INLINE_NOTICE}</p>")
    parts.append(_blocks_html(body))
    if site.share_bar:
        parts.append(f"<div>{SHARE_BAR}</div>")
    parts.append(art_c)
    related = [" ".join(sample_words(site.lang, 5, rng)).capitalize() for _ in range(5)]
    o, c = _open(site, "aside", 5)
    parts.append(
        o
        + "<ul>"
        + "".join(f'<li><a href="/r{i}">{_escape(t)}</a></li>' for i, t in enumerate(related))
        + "</ul>"
        + c
    )
    if rest:
        o, c = _open(site, "section", 6)
        parts.append(o + _blocks_html(rest) + c)
    parts.append(main_c)
    o, c = _open(site, "footer", 7)
    parts.append(
        f"{o}<p>© 2024 {site.name.capitalize()}. All rights reserved.</p>"
        f"{_links(['Privacy', 'Terms', 'Contact'])}{c}"
    )
    parts.append("</body></html>")
    return "\n".join(parts)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)
