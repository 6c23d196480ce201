"""HTML to main text: drop navigation, banners, related links and footers, keep the article.

The extractor follows the idea of Arc90's Readability (and of trafilatura, Barbaresi 2021,
doi:10.18653/v1/2021.acl-demo.15) rather than trusting tag names, because half the web
is "div soup": text blocks that are mostly words rather than links vote for the element
that contains them (their parent gets their word count, their grandparent half of it);
the element with the most votes is the main content, and every block inside it whose
link density is low enough is kept. Scripts and styles never count.

Scored word by word against the generator's labels: precision is the share of extracted
words that belong to the article, recall the share of the article's words extracted
(bag-of-words overlap, the metric of the trafilatura benchmark).

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import collections
import dataclasses
import html as html_lib
import re

from . import text as text_mod

BLOCK_TAGS = frozenset(
    "address article aside blockquote body button div dl dd dt footer form "
    "h1 h2 h3 h4 h5 h6 header html li main nav ol p pre section table td "
    "th tr ul".split()
)


@dataclasses.dataclass(frozen=True)
class Block:
    """A run of text between two block-level tags."""

    text: str
    n_words: int
    n_link_words: int
    path: tuple[int, ...]  # ids of the enclosing elements, outermost first

    @property
    def link_density(self) -> float:
        return self.n_link_words / max(self.n_words, 1)


# One alternative per kind of token: comment, doctype, a whole script/style element, a tag, text.
# Enough for well-formed pages such as the generator's; production extractors use a
# tolerant parser (trafilatura uses lxml), which is slower and forgives broken markup.
_TOKENS = re.compile(
    r"<!--.*?-->|<![^>]*>|<(script|style|noscript|template)\b[^>]*>.*?</\1\s*>"
    r"|<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*>|([^<]+)",
    re.S | re.I,
)


class _Blocks:
    """Walks the tag stream, cutting text into blocks at every block-level tag."""

    def __init__(self):
        self.stack: list[tuple[str, int]] = []
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.link_words = self.in_link = self.next_id = 0

    def flush(self):
        t = " ".join(" ".join(self.parts).split())
        if t:
            n = len(text_mod.words(t))
            path = tuple(i for _, i in self.stack)
            self.blocks.append(Block(t, n, min(self.link_words, n), path))
        self.parts, self.link_words = [], 0

    def tag(self, name: str, closing: bool):
        if name == "a":
            self.in_link = max(self.in_link + (-1 if closing else 1), 0)
        elif name in BLOCK_TAGS and not closing:
            self.flush()
            self.stack.append((name, self.next_id))
            self.next_id += 1
        elif name in BLOCK_TAGS and any(t == name for t, _ in self.stack):
            self.flush()
            while self.stack and self.stack.pop()[0] != name:  # close unclosed children too
                pass

    def data(self, text: str):
        text = html_lib.unescape(text)
        self.parts.append(text)
        if self.in_link:
            self.link_words += len(text_mod.words(text))


def blocks(html: str) -> list[Block]:
    """The page's text blocks in document order, scripts and styles excluded.

    >>> [b.text for b in blocks("<div><p>Hi <a href=x>there</a></p><script>x=1</script></div>")]
    ['Hi there']
    """
    walker = _Blocks()
    for m in _TOKENS.finditer(html):
        if m.group(3):
            walker.tag(m.group(3).lower(), bool(m.group(2)))
        elif m.group(4):
            walker.data(m.group(4))
    walker.flush()
    return walker.blocks


def extract_text(html: str, *, max_link_density: float = 0.5, min_vote_words: int = 5) -> str:
    """The main text of ``html``: kept blocks joined by newlines (Readability-style voting).

    >>> page = ("<body><div><a href=a>Home</a> <a href=b>News</a></div><div>"
    ...         "<p>One two three four five six seven.</p><p>Eight nine ten eleven twelve.</p>"
    ...         "</div><div><p>All rights reserved.</p></div></body>")
    >>> extract_text(page)
    'One two three four five six seven.\\nEight nine ten eleven twelve.'
    """
    bs = blocks(html)
    votes: collections.defaultdict[int, float] = collections.defaultdict(float)  # halves
    for b in bs:
        if b.n_words >= min_vote_words and b.link_density <= max_link_density and len(b.path) >= 2:
            votes[b.path[-2]] += b.n_words - b.n_link_words
            if len(b.path) >= 3:
                votes[b.path[-3]] += (b.n_words - b.n_link_words) / 2
    if not votes:
        return ""
    top = max(votes, key=lambda k: (votes[k], -k))  # ties: the outermost candidate
    return "\n".join(b.text for b in bs if top in b.path and b.link_density <= max_link_density)


def naive_text(html: str) -> str:
    """Every visible text block, boilerplate included: the baseline an extractor must beat."""
    return "\n".join(b.text for b in blocks(html))


def word_precision_recall(extracted: str, truth: str) -> tuple[float, float]:
    """(precision, recall) of the extracted words against the true main text, as multisets.

    >>> word_precision_recall("a b c d", "a b c e")
    (0.75, 0.75)
    """
    got = collections.Counter(text_mod.words(extracted))
    want = collections.Counter(text_mod.words(truth))
    hit = sum((got & want).values())
    precision = hit / sum(got.values()) if got else (1.0 if not want else 0.0)
    recall = hit / sum(want.values()) if want else 1.0
    return precision, recall
