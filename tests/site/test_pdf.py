"""The printable book (`make pdf`, tools/make_pdf.py): every page of the site but the instructor
guide in one PDF with a table of contents whose page numbers are right, the glued numbers in its
text, the version and build date on its title page and in its metadata, no solutions and no
instruction that only the web page can follow. `make test` prints this student book once; the
instructor's book (--instructor) is checked as the HTML it would print."""

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import make_pdf
import pytest
import reader_edition as re_ed
import yaml
from course_kit import exercises

import llmphys

ROOT = Path(__file__).resolve().parents[2]

PDF = make_pdf.OUT
CHAPTERS = ["hardware_tour", "01_foundations", "02_data", "03_architecture",
            "04_memory_wall", "05_scaling_laws", "06_economics"]
GLUE_REF = re.compile(r"\{glue(?::text)?\}`([^`]+)`")


def _flat(text):
    return " ".join(text.replace("\u00ad", "").split())


@pytest.fixture(scope="module")
def pages():
    if not PDF.is_file():
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail("no PDF: run `make pdf` first")
        pytest.skip("no PDF in _build/pdf: run `make pdf` to test it")
    if not shutil.which("pdftotext"):
        pytest.fail("pdftotext (Debian's poppler-utils) is needed; `make chromium` installs it")
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(PDF), "-"], check=True,
                         capture_output=True, text=True).stdout
    return [_flat(p) for p in out.split("\f")[:-1]]


@pytest.fixture(scope="module")
def chapter_pages():
    """{doc: first page} from the final PDF's own outline."""
    make_pdf._quiet_pypdf()
    _, entries = make_pdf.combined_html(make_pdf.HTML_DIR, make_pdf.metadata())
    found = make_pdf.page_map(entries, make_pdf._outline(PDF))
    return {entries[i][3]: (entries[i][2], p) for i, p in found.items() if entries[i][0] == "chap"}


def test_page_count_and_every_page_present(pages, chapter_pages):
    toc = make_pdf.book_docs()  # the table of contents without the instructor guide
    assert set(chapter_pages) == set(toc)
    every = re_ed.toc_docs(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    assert set(every) - set(toc) == set(make_pdf.INSTRUCTOR_ONLY)
    starts = [chapter_pages[d][1] for d in toc]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    # The whole book: a cover, the contents and about 250 A4 pages (250 on 2 December 2026);
    # far fewer means pages went missing, far more that print styles broke.
    assert 120 <= len(pages) <= 400, len(pages)
    for doc, (title, page) in chapter_pages.items():
        assert _flat(title) in pages[page - 1], f"{doc} does not start on page {page}"


def test_contents_page_numbers_are_the_real_ones(pages, chapter_pages):
    first = min(page for _, page in chapter_pages.values())
    contents = " ".join(pages[1:first - 1])  # from page 2 to the page before the first chapter
    assert contents.startswith("Contents")
    for doc, (title, page) in chapter_pages.items():
        # pdftotext puts a title's leader and number after it, sometimes after the next title
        assert _flat(title) in contents, doc
        assert re.search(rf"\b{page}\b", contents), (doc, page)


def test_footer_numbers_every_page(pages):
    # only the bottom 50 pt of each A4 page (595 x 842 pt), where the footer prints
    out = subprocess.run(["pdftotext", "-x", "0", "-y", "792", "-W", "595", "-H", "50", str(PDF),
                          "-"], check=True, capture_output=True, text=True).stdout
    feet = [_flat(p) for p in out.split("\f")[:-1]]
    assert len(feet) == len(pages)
    for i, text in enumerate(feet, start=1):
        assert re.search(rf"(?:^| ){i}$", text), f"page {i} has no page number at its foot"


def test_title_page_carries_version_and_build_date():
    first = subprocess.run(["pdftotext", "-f", "1", "-l", "1", str(PDF), "-"], check=True,
                           capture_output=True, text=True).stdout
    m = re.search(r"Version (\S+?)[:,;].*?built (\d{4}-\d{2}-\d{2})", _flat(first))
    assert m and m.group(1) == llmphys.__version__, first[:300]
    if ".dev" in llmphys.__version__:  # a development version says so (issue 32, item 33)
        assert "the repository's current main, not a tagged release" in _flat(first)
    built = dt.date.fromisoformat(m.group(2))
    assert built <= dt.datetime.now(dt.UTC).date()
    info = subprocess.run(["pdfinfo", str(PDF)], check=True, capture_output=True,
                          text=True).stdout
    assert f"Version {llmphys.__version__}, built {m.group(2)}" in info


def _glued(stem):
    """Formatted glue values the chapter's prose shows outside its solutions."""
    nb = json.loads((ROOT / "chapters" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    in_solution = {i for e in exercises(stem, nb) for i in e.solution}
    ctx = re_ed.Context(re_ed.build_index(), f"chapters/{stem}", re_ed.glue_values(nb))
    values = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown" or i in in_solution:
            continue
        for ref in GLUE_REF.findall("".join(cell["source"])):
            text = re_ed._glue(ctx, "glue:text", ref)
            if re.search(r"\d", text) and len(text) >= 3:
                values.append(_flat(text))
    return values


@pytest.mark.parametrize("stem", CHAPTERS)
def test_glued_numbers_are_in_the_text(pages, chapter_pages, stem):
    toc_order = sorted(chapter_pages.values(), key=lambda t: t[1])
    start = chapter_pages[f"chapters/{stem}"][1]
    end = next((p for _, p in toc_order if p > start), len(pages) + 1)
    text = " ".join(pages[start - 1:end - 1])
    values = _glued(stem)
    assert len(values) >= 10, stem
    missing = [v for v in values if v not in text]
    # Every glued number of the prose is printed; a few sit in a caption or table that
    # pdftotext splits across lines, hence 95%, not 100%.
    assert len(missing) <= 0.05 * len(values), (
        f"{stem}: {len(missing)} of {len(values)}: {missing[:8]}")


def test_solutions_are_omitted(pages):
    text = " ".join(pages)
    assert "Solution to Exercise" not in text
    assert "Exercise 4.1" in text  # the exercises themselves are printed


# Instructions that only the web page can follow (issue 32, item 32): the book printed "use the
# rocket menu above", and every page's "Discuss this page" link.
WEB_ONLY = re.compile(r"rocket (?:menu|icon) above|Run this (?:chapter|page|appendix):|"
                      r"click the|Discuss this page", re.I)


def test_student_book_leaves_out_the_instructor_guide_and_web_only_instructions(pages):
    text = " ".join(pages)
    hits = [text[max(0, m.start() - 60):m.end() + 40] for m in WEB_ONLY.finditer(text)]
    assert not hits, hits
    guide = make_pdf._article((make_pdf.HTML_DIR / "chapters" / "instructor_guide.html")
                              .read_text(encoding="utf-8"), "chapters/instructor_guide")[0]
    assert _flat(guide) not in " ".join(p[:200] for p in pages), "the guide has a page of its own"


def test_web_only_filter_and_detector_see_what_they_must():
    for text in ("(or use the rocket menu above).", "in Colab (the rocket icon above) the cell",
                 "Run this chapter: open it", "Questions? Discuss this page"):
        assert WEB_ONLY.search(text), text
    body = "live; in Colab (the rocket icon above) the cell calls the library live"
    assert not WEB_ONLY.search(make_pdf.web_only_removed(body))


def test_instructor_book_prints_the_guide_and_the_solutions():
    # the HTML the instructor's PDF prints (printing it too would double `make test`'s PDF time)
    meta = make_pdf.metadata()
    student, s_entries = make_pdf.combined_html(make_pdf.HTML_DIR, meta)
    teacher, t_entries = make_pdf.combined_html(make_pdf.HTML_DIR, meta, instructor=True)
    docs = {e[3] for e in t_entries if e[0] == "chap"}
    assert "chapters/instructor_guide" in docs
    assert "chapters/instructor_guide" not in {e[3] for e in s_entries if e[0] == "chap"}
    assert make_pdf.STUDENT_CSS in student and make_pdf.STUDENT_CSS not in teacher
    on_site = sum((make_pdf.HTML_DIR / f"{d}.html").read_text(encoding="utf-8")
                  .count('<div class="solution') for d in make_pdf.book_docs(instructor=True))
    assert on_site >= 50 and teacher.count('<div class="solution') == on_site  # every one
    assert "instructor's edition" in teacher and "instructor's edition" not in student
    # the student book links the guide on the site instead of to a page it does not have
    assert 'href="#print-instructor_guide"' not in student
    assert f'href="{meta["url"]}chapters/instructor_guide.html' in student
