"""Sphinx extension: what a reader downloads from the site, and which version it is (issue 32).

The theme's download menu offered each chapter's *source* notebook, whose prose is MyST with
unfilled ``{glue:text}`` placeholders, and a "PDF" that was the browser's print of one page.
Every page's menu now offers, instead:

- the chapter as a notebook for Colab or Jupyter: the reader edition
  (``reader/chapters/<name>.ipynb``, numbers filled in, solutions folded), copied into the built
  site at the same path;
- the same chapter in the student edition (``student/chapters/<name>.ipynb``, no solutions),
  generated into the built site by ``tools/reader_edition.py --student`` when the build finishes;
- every chapter of either edition in one zip (``downloads/``);
- the whole book as one PDF (``downloads/downstream-of-the-fab.pdf``), which ``make pdf``
  (``tools/make_pdf.py``) writes into the built site after ``make book``.

Paragraphs that only make sense on the web ("*Run this chapter:* open it in Google Colab (or use
the rocket menu above)") get the class ``llmphys-web-only``, which ``_assets/reading.css`` hides
in print. Every page's footer names the version (``__version__`` in ``lib/llmphys/__init__.py``)
and, for a development version, says that it is the current ``main``, not a tagged release.
``tests/site/test_downloads.py`` checks all of it on the built site.
"""

from __future__ import annotations

import re
import shutil
import sys
import zipfile
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
PDF = "downloads/downstream-of-the-fab.pdf"  # make_pdf writes it here, inside _build/html
ZIPS = {"reader": "downloads/downstream-of-the-fab-reader-notebooks.zip",
        "student": "downloads/downstream-of-the-fab-student-notebooks.zip"}
WEB_ONLY_CLASS = "llmphys-web-only"
RUN_LINE = re.compile(r"^Run this (?:chapter|page|appendix):")
_VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)


def book_version() -> str:
    """``__version__`` of the library, read from its one home without importing it."""
    return _VERSION.search((ROOT / "lib" / "llmphys" / "__init__.py")
                           .read_text(encoding="utf-8")).group(1)


def is_development(version: str) -> bool:
    """A PEP 440 development release (``1.1.0.dev0``): the current ``main``, never tagged.

    >>> is_development("1.1.0.dev0"), is_development("1.1.0")
    (True, False)
    """
    return ".dev" in version


def version_line(version: str) -> str:
    """What the footer (and the PDF's title page) says about the version."""
    if is_development(version):
        return (f"Version {version}: the development version, the repository's current main, "
                "not a tagged release")
    return f"Version {version}, the release tagged v{version}"


def _reader_notebook(pagename: str) -> bool:
    return (ROOT / "reader" / f"{pagename}.ipynb").is_file()


def _menu(app, pagename, templatename, context, doctree):
    buttons = context.get("header_buttons")
    if not buttons:
        return
    group = next((b for b in buttons if b.get("label") == "download-buttons"), None)
    if group is None:
        return
    pathto = context["pathto"]
    items = []
    if _reader_notebook(pagename):
        items += [
            {"type": "link", "url": pathto(f"reader/{pagename}.ipynb", 1),
             "text": ".ipynb (Colab, Jupyter)", "icon": "fas fa-code",
             "tooltip": "This chapter as a notebook, numbers filled in (the reader edition)",
             "label": "download-reader-button"},
            {"type": "link", "url": pathto(f"student/{pagename}.ipynb", 1),
             "text": ".ipynb without solutions", "icon": "fas fa-file",
             "tooltip": "This chapter in the student edition: the exercises without solutions",
             "label": "download-student-button"},
        ]
    items += [
        {"type": "link", "url": pathto(PDF, 1), "text": ".pdf (the whole book)",
         "icon": "fas fa-file-pdf", "tooltip": "The book as one PDF, without the solutions",
         "label": "download-pdf-button"},
        {"type": "link", "url": pathto(ZIPS["reader"], 1), "text": "every chapter (.zip)",
         "icon": "fas fa-file-zipper", "tooltip": "Every chapter's notebook (reader edition)",
         "label": "download-reader-zip-button"},
        {"type": "link", "url": pathto(ZIPS["student"], 1),
         "text": "every chapter, no solutions (.zip)", "icon": "fas fa-file-zipper",
         "tooltip": "Every chapter's notebook in the student edition",
         "label": "download-student-zip-button"},
    ]
    group["buttons"] = items
    group["tooltip"] = "Download this chapter or the book"


def _mark_web_only(app, doctree, docname):
    for para in doctree.findall(nodes.paragraph):
        if RUN_LINE.match(para.astext()):
            para["classes"].append(WEB_ONLY_CLASS)


def _footer(app, config):
    options = dict(config.html_theme_options or {})
    line = f'<p class="llmphys-version">{version_line(book_version())}</p>'
    options["extra_footer"] = (options.get("extra_footer") or "") + line
    config.html_theme_options = options


def _zip(folder: Path, target: Path, top: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*.ipynb")):
            # a fixed date: the same notebooks give the same zip
            info = zipfile.ZipInfo(f"{top}/{path.relative_to(folder).as_posix()}",
                                   (2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())


def write_editions(outdir: Path) -> None:
    """The reader and student editions, one notebook per chapter and one zip each, under
    ``outdir`` (the built site)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import reader_edition

    reader = outdir / "reader"
    shutil.rmtree(reader, ignore_errors=True)
    shutil.copytree(ROOT / "reader", reader)
    student = outdir / "student"
    shutil.rmtree(student, ignore_errors=True)
    reader_edition.generate(student, student=True)
    _zip(reader, outdir / ZIPS["reader"], "downstream-of-the-fab-reader")
    _zip(student, outdir / ZIPS["student"], "downstream-of-the-fab-student")


def _finished(app, exception):
    if exception is None and app.builder.format == "html":
        write_editions(Path(app.outdir))


def setup(app):
    app.connect("config-inited", _footer)
    app.connect("doctree-resolved", _mark_web_only)
    # after sphinx-book-theme's add_header_buttons (priority 501)
    app.connect("html-page-context", _menu, priority=502)
    app.connect("build-finished", _finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
