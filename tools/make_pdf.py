"""Build the printable book: one PDF of every page of the built site, in table-of-contents order.

``make pdf`` runs this after ``make book``. Debian's Chromium (driven by Playwright, never a
downloaded browser) prints one HTML document that holds every page's article, so page numbers run
on across chapters and cross-references between pages become links inside the PDF. The document
carries:

- a title page with the version (``llmphys.__version__``), the build date (UTC) and the commit;
- a table of contents with page numbers: the document is printed twice, and the second print
  fills in the pages on which the first one put each chapter and section (read from the outline
  Chromium writes, through pypdf), with placeholders of the same width so nothing moves;
- chapter-numbered figures and exercises exactly as the site numbers them (the HTML is the site's);
- page numbers in the footer, a PDF outline (bookmarks) and the version and date in the PDF's
  metadata.

Code the site folds away (a cell's hidden input) is left out too. Widgets print the setting they
open with.

Two books come out of one site (issue 32, item 32):

- the default, the **student book** (``make pdf``: ``_build/pdf/downstream-of-the-fab.pdf``):
  every page but the instructor guide, and no solutions. A printed handout without answers is
  what a course hands out; the worked solutions stay on the site and in the reader edition.
- ``--instructor``, the **instructor's book** (``downstream-of-the-fab-instructor.pdf``): the
  same with the instructor guide and every worked solution printed under its exercise.

Instructions that only make sense on the web are left out of both: the "*Run this chapter:*
open it in Google Colab" line (``_ext/downloads.py`` marks it and ``_assets/reading.css`` hides it
in print) and every phrase of ``WEB_ONLY`` (the rocket menu "above"); the title page says instead
where the notebooks are. A link to a page that the book leaves out goes to that page on the site.
Each PDF is also copied into the built site (``_build/html/downloads/``), where every page's
download menu links the student book.

Usage: ``python tools/make_pdf.py [--instructor] [--html _build/html] [--out <name>.pdf]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import html
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "_ext"))  # downloads sorts above reader_edition, which adds it too
import downloads  # noqa: E402  (_ext/downloads.py: where the site links the PDF, the version line)
from reader_edition import toc_docs  # noqa: E402  (the one reading order)

HTML_DIR = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf" / "downstream-of-the-fab.pdf"
INSTRUCTOR_OUT = OUT.with_name("downstream-of-the-fab-instructor.pdf")
INSTRUCTOR_ONLY = ("chapters/instructor_guide",)  # pages only the instructor's book prints
# Phrases that point at the web page's controls; print drops them (tests/site/test_pdf.py checks
# that no "rocket" survives). The "Run this chapter" line goes whole, by its class.
WEB_ONLY = [
    (re.compile(r"\s*<em>\s*\(or use the rocket menu above\)\.?\s*</em>"), ""),
    (re.compile(r"\s*\(the rocket icon above\)"), ""),
]
COMBINED = "chapters/_print_book.html"  # inside the build, so every relative path still works
PLACEHOLDER = "000"

PRINT_CSS = """
@page { size: A4; margin: 16mm 15mm 18mm 15mm; }
html { font-size: 9.5pt !important; }  /* the theme sizes everything in rem */
html, body { background: #fff !important; }
body { line-height: 1.4; }
.print-book, .print-book .bd-article { width: auto !important; max-width: none !important;
  margin: 0 !important; padding: 0 !important; overflow: visible !important; }
.admonition, div.cell, .cell_output, table { max-width: 100% !important; box-sizing: border-box; }
h1 { font-size: 2rem !important; } h2 { font-size: 1.6rem !important; }
h3 { font-size: 1.3rem !important; }
.llmphys-discuss, .llmphys-web-only, .headerlink, .copybtn, .bd-header-article, .prev-next-area,
.llmphys-explore-note, .toggle-details__summary .tb-icon,
details.above-input, details.below-input { display: none !important; }
.print-page { break-before: page; }
.print-cover { break-after: page; text-align: center; padding-top: 30%; }
.print-cover .book-title { font-size: 28pt; font-weight: 600; margin-bottom: 0.3em; }
.print-cover .meta { margin-top: 3em; font-size: 11pt; color: #333; }
.print-toc { break-after: page; }
.print-toc ol { list-style: none; padding-left: 0; }
.print-toc li { display: flex; gap: 0.4em; margin: 0.15em 0; }
.print-toc li.chap { font-weight: 600; margin-top: 0.6em; }
.print-toc li.sec { padding-left: 1.6em; font-size: 9pt; }
.print-toc .fill { flex: 1; border-bottom: 1px dotted #999; margin-bottom: 0.3em; }
.print-toc .pg { font-variant-numeric: tabular-nums; min-width: 2.2em; text-align: right; }
h1, h2, h3, h4 { break-after: avoid; }
.print-page h1 { display: block !important; margin: 0 0 0.8em; }
figure, img, table, .cell_output, .admonition, .exercise { break-inside: avoid; }
img { max-width: 100% !important; height: auto; }
pre { white-space: pre-wrap; word-break: break-word; font-size: 8pt; }
a { color: inherit !important; text-decoration: none !important; }
"""

STUDENT_CSS = ".solution { display: none !important; }"

FOOTER = ('<div style="width:100%;font-size:8px;color:#555;text-align:center;">'
          '<span class="pageNumber"></span></div>')


class PdfError(RuntimeError):
    pass


def _article(page: str, doc: str) -> tuple[str, str, list[tuple[str, str]]]:
    """(title, article HTML, [(section id, section title)]) of one built page."""
    a, b = page.find("<article"), page.find("</article>")
    if a < 0 or b < 0:
        raise PdfError(f"{doc}.html: no <article> (is the site built?)")
    body = page[page.index(">", a) + 1:b]
    m = re.search(r"<h1>(.*?)</h1>", body, re.S)
    if not m:
        raise PdfError(f"{doc}.html: no <h1> title")
    title = _text(m.group(1))
    # a section's own id repeats across pages ("try-it"); its label (a <span id>) does not
    sections = [(label or sid, _text(h)) for sid, label, h in re.findall(
        r'<section id="([^"]+)">\s*(?:<span id="([^"]*)"></span>)?(?:\s*<span id="[^"]*"></span>)*'
        r'\s*<h2>(.*?)</h2>', body, re.S)]
    return title, body, sections


def _text(fragment: str) -> str:
    fragment = re.sub(r'<a class="headerlink".*?</a>', "", fragment, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _local_links(body: str, docs: list[str], site: str = "", html_dir: Path = HTML_DIR) -> str:
    """Links to another page of the book become links inside the one document; links to a page
    of the site that this book leaves out (the instructor guide) go to the published site."""
    names = {Path(d).name: d for d in docs if d.startswith("chapters/")}

    def fix(m: re.Match[str]) -> str:
        target, anchor = m.group(1), m.group(2)
        if target not in names:
            if site and (html_dir / "chapters" / f"{target}.html").is_file():
                return f'href="{site}chapters/{target}.html{"#" + anchor if anchor else ""}"'
            return m.group(0)
        return f'href="#{anchor}"' if anchor else f'href="#print-{Path(names[target]).name}"'

    return re.sub(r'href="([A-Za-z0-9_]+)\.html(?:#([^"]*))?"', fix, body)


def _toc_html(entries: list[tuple[str, str, str, str]], pages: dict[int, int] | None) -> str:
    rows = []
    for i, (kind, anchor, title, _doc) in enumerate(entries):
        pg = str(pages[i]) if pages and i in pages else (
            "\u2013" if pages else PLACEHOLDER)
        rows.append(f'<li class="{kind}"><a href="#{anchor}">{html.escape(title)}</a>'
                    f'<span class="fill"></span><span class="pg">{pg}</span></li>')
    return '<section class="print-toc"><h2>Contents</h2><ol>' + "".join(rows) + "</ol></section>"


def web_only_removed(body: str) -> str:
    """``body`` without the phrases of ``WEB_ONLY``.

    >>> web_only_removed("live; in Colab (the rocket icon above) the cell runs")
    'live; in Colab the cell runs'
    """
    for pattern, repl in WEB_ONLY:
        body = pattern.sub(repl, body)
    return body


def book_docs(*, instructor: bool = False) -> list[str]:
    """The pages a book prints, in the table of contents' order."""
    docs = toc_docs(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    return docs if instructor else [d for d in docs if d not in INSTRUCTOR_ONLY]


def combined_html(html_dir: Path, meta: dict[str, str], pages: dict[int, int] | None = None, *,
                  instructor: bool = False) -> tuple[str, list[tuple[str, str, str, str]]]:
    """The whole book as one HTML page, and its contents entries (kind, anchor, title, doc)."""
    docs = book_docs(instructor=instructor)
    first = (html_dir / f"{docs[1] if len(docs) > 1 else docs[0]}.html").read_text(encoding="utf-8")
    head = first[first.index("<head>") + 6:first.index("</head>")]
    # keep stylesheets, MathJax and the widgets' script; drop the theme's navigation scripts
    keep = re.findall(r"<link[^>]*rel=\"stylesheet\"[^>]*>|<script>window\.MathJax.*?</script>|"
                      r"<script[^>]*mathjax/startup\.js[^>]*></script>|"
                      r"<script[^>]*explore\.js[^>]*></script>", head, re.S)
    parts, entries = [], []
    for doc in docs:
        title, body, sections = _article((html_dir / f"{doc}.html").read_text(encoding="utf-8"),
                                         doc)
        anchor = f"print-{Path(doc).name}"
        entries.append(("chap", anchor, title, doc))
        entries += [("sec", sid, stitle, doc) for sid, stitle in sections]
        body = web_only_removed(_local_links(body, docs, meta["url"], html_dir))
        parts.append(f'<div class="print-page" id="{anchor}">{body}</div>')
    version = downloads.version_line(meta["version"])
    edition = ("<p>The instructor's edition: with the instructor guide, and every worked solution "
               "printed under its exercise.</p>" if instructor else
               "<p>Solutions are omitted from the printed edition. They are folded under each "
               "exercise on the website and in the reader notebooks.</p>")
    cover = (f'<section class="print-cover"><p class="book-title">{html.escape(meta["title"])}</p>'
             f'<p>{html.escape(meta["subtitle"])}</p><div class="meta">'
             f'<p>{html.escape(version)}; built {meta["date"]}'
             f'{" from commit " + meta["commit"] if meta["commit"] else ""}</p>'
             f'<p>{html.escape(meta["author"])}</p>{edition}'
             "<p>Every chapter is a notebook you can run: open its page on the website and follow "
             "its Colab link, or take reader/chapters/ from the repository.</p>"
             f'<p>{html.escape(meta["url"])}</p><p>{html.escape(meta["repository"])}</p>'
             "</div></section>")
    doc_html = (f'<!DOCTYPE html><html lang="en" data-theme="light" data-mode="light"><head>'
                f'<meta charset="utf-8"><title>{html.escape(meta["title"])}</title>'
                f'{"".join(keep)}<style>{PRINT_CSS}{"" if instructor else STUDENT_CSS}</style>'
                f'</head><body>'
                f'<div class="print-book"><article class="bd-article">'
                f'{cover}{_toc_html(entries, pages)}{"".join(parts)}'
                "</article></div></body></html>")
    return doc_html, entries


def _serve(directory: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _print(browser, url: str, out: Path) -> None:
    page = browser.new_page()
    page.goto(url, wait_until="load", timeout=180_000)
    # MathJax typesets asynchronously; wait for it (pages without math resolve at once)
    page.wait_for_function(
        "() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise)",
        timeout=120_000)
    page.evaluate("() => window.MathJax && window.MathJax.startup.promise")
    page.evaluate("() => document.fonts.ready")  # the theme's icon font, for admonition titles
    page.emulate_media(media="print")
    page.pdf(path=str(out), format="A4", print_background=False, outline=True, tagged=True,
             display_header_footer=True, header_template="<span></span>",
             footer_template=FOOTER, margin={"top": "16mm", "bottom": "18mm",
                                             "left": "15mm", "right": "15mm"})
    page.close()


def _outline(pdf: Path) -> list[tuple[str, int]]:
    """[(heading text, 1-based page)] of the outline Chromium wrote, in document order."""
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    found: list[tuple[str, int]] = []

    def walk(items):
        for it in items:
            if isinstance(it, list):
                walk(it)
            else:
                found.append((" ".join(it.title.split()),
                              reader.get_destination_page_number(it) + 1))

    walk(reader.outline)
    return found


def page_map(entries: list[tuple[str, str, str, str]],
             outline: list[tuple[str, int]]) -> dict[int, int]:
    """{entry index: page} for the contents, matching entries to outline items in order (titles such
    as "Exercises" repeat, so each entry takes the next matching item after the last one).

    >>> page_map([("chap", "a", "A", "d"), ("sec", "x", "Ex", "d"), ("chap", "b", "B", "e"),
    ...           ("sec", "y", "Ex", "e")], [("A", 3), ("Ex", 4), ("B", 6), ("Ex", 9)])
    {0: 3, 1: 4, 2: 6, 3: 9}
    """
    pages: dict[int, int] = {}
    pos = 0

    def key(text: str) -> str:  # Chromium drops the space where a long heading wraps
        return "".join(text.split())

    for i, (kind, _anchor, title, doc) in enumerate(entries):
        want = key(title)
        hit = next((j for j in range(pos, len(outline)) if key(outline[j][0]) == want), None)
        if hit is None:
            if kind == "chap":
                raise PdfError(f"{doc}: its title {title!r} is not in the PDF outline")
            continue
        pages[i] = outline[hit][1]
        pos = hit + 1
    return pages


def metadata() -> dict[str, str]:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sys.path.insert(0, str(ROOT / "lib"))
    import llmphys

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    return {"title": config["title"], "author": config.get("author", ""),
            "subtitle": "The physics and economics of large-language-model pretraining and serving",
            "version": llmphys.__version__,
            "date": dt.datetime.now(dt.UTC).date().isoformat(), "commit": commit,
            "url": (config.get("html") or {}).get("baseurl", ""),
            "repository": (config.get("repository") or {}).get("url", "")}


def _quiet_pypdf() -> None:
    import logging

    # Chromium's PDFs declare a trailer size a little short of their object count; pypdf
    # reads them correctly and warns on every open.
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def build(html_dir: Path = HTML_DIR, out: Path = OUT, *, instructor: bool = False) -> Path:
    """Print the book (``instructor``: the instructor's book) to ``out`` and copy it into the
    built site's ``downloads/``."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    _quiet_pypdf()
    if not (html_dir / "index.html").is_file():
        raise PdfError(f"{html_dir}: no built site; run `make book` first")
    chromium = shutil.which("chromium")
    if not chromium:
        raise PdfError("Debian's chromium is needed (make chromium installs it)")
    meta = metadata()
    out.parent.mkdir(parents=True, exist_ok=True)
    target = html_dir / COMBINED
    first_pass = out.with_suffix(".pass1.pdf")
    server = _serve(html_dir)
    url = f"http://127.0.0.1:{server.server_address[1]}/{COMBINED}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            doc_html, entries = combined_html(html_dir, meta, instructor=instructor)
            target.write_text(doc_html, encoding="utf-8")
            _print(browser, url, first_pass)
            pages = page_map(entries, _outline(first_pass))
            doc_html, _ = combined_html(html_dir, meta, pages, instructor=instructor)
            target.write_text(doc_html, encoding="utf-8")
            _print(browser, url, out)
            browser.close()
    finally:
        server.shutdown()
        target.unlink(missing_ok=True)
        first_pass.unlink(missing_ok=True)
    writer = PdfWriter(clone_from=PdfReader(str(out)))
    title = meta["title"] + (" (instructor's edition)" if instructor else "")
    writer.add_metadata({"/Title": title, "/Author": meta["author"],
                         "/Subject": f"{meta['subtitle']}. Version {meta['version']}, built "
                                     f"{meta['date']}",
                         "/Keywords": f"version {meta['version']}; built {meta['date']}"})
    with out.open("wb") as fh:
        writer.write(fh)
    published = html_dir / Path(downloads.PDF).parent / out.name
    published.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out, published)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=HTML_DIR, help="the built site")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"the PDF to write (default {OUT.relative_to(ROOT)}, or "
                             f"{INSTRUCTOR_OUT.relative_to(ROOT)} with --instructor)")
    parser.add_argument("--instructor", action="store_true",
                        help="the instructor's book: with the instructor guide and the solutions")
    args = parser.parse_args(argv)
    out = args.out or (INSTRUCTOR_OUT if args.instructor else OUT)
    try:
        path = build(args.html, out, instructor=args.instructor)
    except PdfError as exc:
        print(f"make_pdf: {exc}", file=sys.stderr)
        return 2
    from pypdf import PdfReader

    print(f"{path}: {len(PdfReader(str(path)).pages)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
