"""What a reader downloads from the built site, and which version it says it is (issue 32,
items 31 and 33; _ext/downloads.py).

Every chapter page's download menu gives the reader edition (numbers filled in), not the MyST
source with its glue placeholders; the student edition (no solutions); both as zips; and the
book's PDF. Every page's footer says the version as the library does. The "Run this chapter"
line, which only makes sense on the web, is hidden when a page is printed.
"""

import html.parser
import json
import re
import zipfile
from pathlib import Path

import downloads
import pytest

import llmphys

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"

CHAPTERS = sorted(p.stem for p in (ROOT / "reader" / "chapters").glob("*.ipynb"))
PAGES = sorted(p.relative_to(HTML).as_posix() for p in (HTML / "chapters").glob("*.html")
               if p.name != "_print_book.html") if HTML.is_dir() else []


class _Menu(html.parser.HTMLParser):
    """The links of the page's download menu: [(label class, href)]."""

    def __init__(self):
        super().__init__()
        self.depth, self.links = 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and "dropdown-download-buttons" in (a.get("class") or ""):
            self.depth = 1
        elif self.depth and tag == "div":
            self.depth += 1
        if self.depth and tag == "a":
            label = next((c for c in (a.get("class") or "").split()
                          if c.startswith("btn-download-")), "")
            self.links.append((label.removeprefix("btn-"), a.get("href")))

    def handle_endtag(self, tag):
        if self.depth and tag == "div":
            self.depth -= 1


def _menu(page: str) -> dict[str, str]:
    p = _Menu()
    p.feed((HTML / page).read_text(encoding="utf-8"))
    return dict(p.links)


@pytest.fixture(scope="module")
def built(site_url):  # site_url skips (or fails under make test) without a built site
    return HTML


@pytest.mark.parametrize("stem", CHAPTERS)
def test_notebook_download_is_the_reader_edition_not_the_source(built, stem):
    menu = _menu(f"chapters/{stem}.html")
    assert menu["download-reader-button"] == f"../reader/chapters/{stem}.ipynb", menu
    assert not any("_sources/" in href for href in menu.values()), menu
    served = HTML / "reader" / "chapters" / f"{stem}.ipynb"
    assert served.read_bytes() == (ROOT / "reader" / "chapters" / f"{stem}.ipynb").read_bytes()
    text = "".join("".join(c["source"]) for c in json.loads(served.read_text("utf-8"))["cells"])
    assert "{glue" not in text and "{term}" not in text  # what the source download held
    # the student edition sits beside it, without the solutions
    assert menu["download-student-button"] == f"../student/chapters/{stem}.ipynb", menu
    student = json.loads((HTML / "student" / "chapters" / f"{stem}.ipynb").read_text("utf-8"))
    reader = json.loads(served.read_text("utf-8"))

    def solutions(nb):  # the folded solutions' code cells and their <details> prose
        return [c for c in nb["cells"] if "".join(c["source"]).startswith("#@title Solution to")
                or "<summary>Solution" in "".join(c["source"])]
    assert not solutions(student)
    if stem not in ("claims_ledger",):  # every chapter has exercises; the ledger has none
        assert solutions(reader), stem


def test_every_page_links_the_pdf_and_both_zips_and_they_hold_every_chapter(built):
    for page in PAGES:
        menu = _menu(page)
        assert menu.get("download-pdf-button") == f"../{downloads.PDF}", (page, menu)
        assert menu.get("download-reader-zip-button") == f"../{downloads.ZIPS['reader']}", page
        assert menu.get("download-student-zip-button") == f"../{downloads.ZIPS['student']}", page
    for edition, zip_path in downloads.ZIPS.items():
        with zipfile.ZipFile(HTML / zip_path) as zf:
            names = sorted(Path(n).stem for n in zf.namelist())
        assert names == CHAPTERS, (edition, names)


def test_the_pdf_the_site_links_is_there(built):
    # make_pdf.py copies the book into the site; `make test` runs it before these tests
    pdf = HTML / downloads.PDF
    if not pdf.is_file():
        import os
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail(f"{pdf} missing: tools/make_pdf.py writes it after `make book`")
        pytest.skip("no PDF in the built site: run `make pdf`")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert pdf.read_bytes() == (ROOT / "_build" / "pdf" / pdf.name).read_bytes()


def test_every_page_says_which_version_it_is(built):
    want = downloads.version_line(llmphys.__version__)
    assert downloads.book_version() == llmphys.__version__
    for page in PAGES:
        text = (HTML / page).read_text(encoding="utf-8")
        assert f'<p class="llmphys-version">{want}</p>' in text, page
    if downloads.is_development(llmphys.__version__):
        assert "current main, not a tagged release" in want


def test_the_run_this_chapter_line_is_marked_web_only(built):
    for stem in CHAPTERS:
        text = (HTML / "chapters" / f"{stem}.html").read_text(encoding="utf-8")
        marked = re.findall(r'<p class="llmphys-web-only"><em>Run this (?:chapter|page|appendix):',
                            text)
        assert len(marked) == 1, stem


@pytest.mark.parametrize("path", ["chapters/04_memory_wall.html"])  # grouped with its load
def test_web_only_lines_do_not_print(loaded_page, path):
    # the page's one load in the session's browser (tests/site/conftest.py), put back on screen
    page = loaded_page(path).page
    line = page.locator("p.llmphys-web-only")
    assert line.is_visible()
    page.emulate_media(media="print")
    try:
        assert not line.is_visible()
    finally:
        page.emulate_media(media="screen")
    assert line.is_visible()
