"""Per-chapter numbers for exercises and figures ("Exercise 4.3", "Fig. 4.2").

Sphinx numbers every enumerable node (figures, sphinx-exercise's exercises, equations) with one
counter per type across the whole book, because the book's toctree is not numbered (a chapter's
number lives in its title, "4. The training run ..."). So chapter 4 showed Exercises 28 to 36.
This module holds the ONE rule that turns a page's items into per-chapter numbers,
:func:`number_items`, and a Sphinx extension that applies it to ``env.toc_fignumbers`` after
Sphinx has assigned its own numbers. ``tools/reader_edition.py`` and the tests call the same
function on the source files, so the site, the reader edition and the instructor guide agree.

The rule, in toc order:

- a page whose title starts with ``N.`` (a chapter) numbers its items ``N.1, N.2, ...``;
- a page without a number that comes before the first chapter (the preface, the notation page and
  the hardware tour, which is the book's chapter zero) uses ``0``;
- a page without a number after the chapters (the back matter) uses a letter, ``A``, ``B``, ...,
  in toc order, like an appendix;
- pages that share a prefix share its counters, in toc order; each item type (``figure``,
  ``exercise``, ``displaymath``, ...) has its own counter.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence

CHAPTER_TITLE = re.compile(r"^\s*(\d+)\.\s")
FRONT_PREFIX = "0"
BACK_PREFIXES = string.ascii_uppercase

Page = tuple[str, str, Mapping[str, Sequence[str]]]


def page_prefixes(pages: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The number prefix of each page, from ``(docname, title)`` pairs in toc order.

    >>> page_prefixes([("index", "Preface"), ("tour", "A tour"), ("c1", "1. Foundations"),
    ...                ("ledger", "Claims ledger"), ("guide", "Instructor guide")])
    {'index': '0', 'tour': '0', 'c1': '1', 'ledger': 'A', 'guide': 'B'}
    """
    prefixes: dict[str, str] = {}
    seen_chapter, n_back = False, 0
    for docname, title in pages:
        if not isinstance(title, str):
            raise ValueError(f"pages: the title of {docname!r} must be a string, got {title!r}")
        m = CHAPTER_TITLE.match(title)
        if m:
            seen_chapter = True
            prefixes[docname] = m.group(1)
        elif not seen_chapter:
            prefixes[docname] = FRONT_PREFIX
        else:
            if n_back >= len(BACK_PREFIXES):
                raise ValueError(f"pages: more than {len(BACK_PREFIXES)} back-matter pages")
            prefixes[docname] = BACK_PREFIXES[n_back]
            n_back += 1
    return prefixes


def number_items(pages: Sequence[Page]) -> dict[str, dict[str, dict[str, tuple[str, int]]]]:
    """Per-chapter numbers ``{docname: {item type: {id: (prefix, k)}}}`` for pages in toc order.

    Each page is ``(docname, title, {item type: [ids in document order]})``. The number shown is
    ``".".join(map(str, number))``, which is how Sphinx formats a figure number, so the tuples can
    replace Sphinx's own in ``env.toc_fignumbers``.

    >>> nums = number_items([("tour", "A tour", {"exercise": ["t-a", "t-b"]}),
    ...                      ("c4", "4. Memory", {"exercise": ["m-a"], "figure": ["f1", "f2"]})])
    >>> nums["tour"]["exercise"], nums["c4"]["figure"]["f2"]
    ({'t-a': ('0', 1), 't-b': ('0', 2)}, ('4', 2))
    """
    prefixes = page_prefixes([(doc, title) for doc, title, _ in pages])
    counters: dict[tuple[str, str], int] = {}
    numbers: dict[str, dict[str, dict[str, tuple[str, int]]]] = {}
    for docname, _title, items in pages:
        prefix = prefixes[docname]
        for figtype, ids in items.items():
            if len(set(ids)) != len(ids):
                raise ValueError(f"pages: {docname!r} lists a {figtype} id twice: {list(ids)}")
            for item_id in ids:
                k = counters[prefix, figtype] = counters.get((prefix, figtype), 0) + 1
                numbers.setdefault(docname, {}).setdefault(figtype, {})[item_id] = (prefix, k)
    return numbers


def label(number: tuple[str, int]) -> str:
    """The number as the page shows it: ``("4", 3)`` is ``"4.3"``.

    >>> label(("4", 3))
    '4.3'
    """
    return ".".join(map(str, number))


# --- the Sphinx extension ---------------------------------------------------------------------

def _toc_order(env) -> list[str]:
    """Every document reachable from the root, depth first, in toctree order."""
    order: list[str] = []

    def walk(doc: str) -> None:
        if doc in order:
            return
        order.append(doc)
        for child in env.toctree_includes.get(doc, []):
            walk(child)

    walk(env.config.root_doc)
    return order


def _renumber(app, env) -> list[str]:
    """Replace Sphinx's book-wide numbers by per-chapter ones (runs after Sphinx assigns them)."""
    pages = []
    for doc in _toc_order(env):
        title = env.titles[doc].astext() if doc in env.titles else ""
        fig = env.toc_fignumbers.get(doc, {})
        # Sphinx's numbers follow the document order, so sorting by them gives that order.
        items = {t: sorted(ids, key=ids.__getitem__) for t, ids in fig.items()}
        pages.append((doc, title, items))
    new = number_items(pages)
    changed = []
    for doc, types in new.items():
        if env.toc_fignumbers.get(doc) != types:
            env.toc_fignumbers[doc] = types
            changed.append(doc)
    return changed


def setup(app):
    # After the toctree collector (priority 500) has assigned Sphinx's own numbers.
    app.connect("env-get-updated", _renumber, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
