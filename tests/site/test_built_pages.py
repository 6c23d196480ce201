"""Checks of the built site's HTML against its sources, without a browser: the numbers the
numbering rule gives (_ext/chapter_numbers.py), the glossary anchors the reader edition links
to, and the Colab launch buttons' ref. They need `make book`'s output, so they live here and
run after the build in `make test` (step 5), not with the unit tests, where they could only
skip."""

import json
import re
from pathlib import Path

import pytest
import reader_edition
from test_release import _ref_in_use

ROOT = Path(__file__).resolve().parents[2]

READER = ROOT / "reader" / "chapters"


@pytest.fixture(scope="module")
def index():
    return reader_edition.build_index()


def _html_numbers(page: Path) -> dict[str, str]:
    """{id: number} of every numbered exercise and figure on a built page."""
    html = page.read_text(encoding="utf-8")
    found = {}
    for m in re.finditer(r'<(?:div class="exercise admonition"|figure[^>]*?) id="([^"]+)"[^>]*>'
                         r'(.*?)<span class="caption-number">(?:Exercise|Fig\.) ([0-9A-Z.]+)',
                         html, re.S):
        found[m.group(1)] = m.group(3)
    return found


def test_built_pages_show_the_numbers_the_rule_gives(built_html, index):
    for doc in reader_edition.chapter_notebooks(index):
        expected = {i: n for i, (d, _t, n) in index.items.items() if d == doc}
        shown = _html_numbers(built_html / f"{doc}.html")
        assert shown == expected, doc


def test_the_built_instructor_guide_names_exercises_by_those_numbers(built_html, index):
    html = (built_html / "chapters" / "instructor_guide.html").read_text(encoding="utf-8")
    links = re.findall(r'href="[^"#]*#([a-z]+-ex-[a-z0-9-]+)"><span class="std std-numref">'
                       r"Exercise ([0-9.]+)</span>", html)
    assert len(links) >= 40
    for label_, number in links:
        assert index.items[label_][2] == number, label_


def test_reader_edition_glossary_links_hit_anchors_of_the_built_glossary(built_html):
    page = built_html / "chapters" / "glossary.html"
    ids = set(re.findall(r'id="(term-[^"]+)"', page.read_text(encoding="utf-8")))
    used = set()
    for nb_path in READER.glob("*.ipynb"):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        text = "\n\n".join("".join(c["source"]) for c in nb["cells"]
                           if c["cell_type"] == "markdown")
        used |= set(re.findall(r"glossary\.html#(term-[^)\s]+)\)", text))
    assert used and used <= ids, sorted(used - ids)


def test_built_launch_buttons_open_the_reader_edition_at_that_ref(built_html):
    (ref,) = _ref_in_use()
    for nb in (ROOT / "chapters").glob("*.ipynb"):
        page = built_html / "chapters" / f"{nb.stem}.html"
        links = set(re.findall(r'https://colab\.research\.google\.com/github/[^"\s)]+',
                               page.read_text(encoding="utf-8")))
        assert links == {"https://colab.research.google.com/github/llmphys/downstream-of-the-fab"
                         f"/blob/{ref}/reader/chapters/{nb.name}"}, (nb.name, links)
