"""The book on a phone (390 px, an iPhone 12-15 in portrait; issue 32, item 34), in Debian's
chromium through Playwright, offline.

At 390 px a figure is drawn about 342 px wide and its labels 4-6 px tall: a tap must open it at
its full pixel size. A table or display equation wider than the column must scroll sideways
inside its own box (the page itself never scrolls sideways, so nothing is cut off) and show
that it does: the edge with hidden content fades (a CSS mask) and a scrollbar stays in view;
scrolled to its end, the fade moves to the other edge. Screenshots go to tests/site/artifacts/
for a person to look at.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHAPTER_PAGES = sorted(f"chapters/{p.stem}.html" for p in (ROOT / "chapters").glob("*.ipynb"))
PHONE = {"width": 390, "height": 844}

# Figure images of the article, and the boxes that may be wider than the column.
FIGURES = "article.bd-article figure img, article.bd-article div.cell_output img"
WIDE = ("article.bd-article table, "
        "article.bd-article mjx-container[display='true']")


MEMORY_WALL = ["chapters/04_memory_wall.html"]  # a parameter: grouped with that page's load


def _ready(loaded_page, path):
    """The session's one load of ``path`` on the phone (tests/site/conftest.py), typeset."""
    loaded = loaded_page(path, width=PHONE["width"])
    page = loaded.page
    # MathJax typesets after load, and reading.js marks the equations once it has
    page.evaluate("async () => { const s = window.MathJax && window.MathJax.startup;"
                  " if (s && s.promise) await s.promise; }")
    page.wait_for_function("() => [...document.querySelectorAll('article img')]"
                           ".every(e => e.complete)", timeout=30000)
    page.wait_for_timeout(200)
    return page, loaded.errors


@pytest.mark.parametrize("path", MEMORY_WALL)
def test_a_tap_on_a_figure_opens_it_at_full_size(loaded_page, path):
    page, errors = _ready(loaded_page, path)
    img = page.locator(FIGURES).first
    img.scroll_into_view_if_needed()
    shown, natural = img.evaluate("e => [e.clientWidth, e.naturalWidth]")
    assert shown <= PHONE["width"], shown  # the inline figure fits the phone's column
    assert page.locator(".llmphys-zoom").count() == 0
    img.tap()
    overlay = page.locator(".llmphys-zoom")
    overlay.wait_for(state="visible", timeout=5000)
    big = overlay.locator("img")
    width, big_natural, box = big.evaluate(
        "e => [e.clientWidth, e.naturalWidth, e.parentElement.scrollWidth]")
    # full size: one CSS pixel per image pixel, 2.5x and more the inline size; the labels of a
    # 6.4-inch chart go from about 5 px to about 13 px, and the overlay pans across the rest
    assert big_natural == natural and width == natural, (width, natural)
    assert width >= 2.5 * shown, (width, shown)
    assert box > PHONE["width"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "figure_full_size_390px.png"))
    page.locator(".llmphys-zoom-close").tap()
    overlay.wait_for(state="detached", timeout=5000)
    img.tap()  # and again, closed by Escape this time
    overlay.wait_for(state="visible", timeout=5000)
    page.keyboard.press("Escape")
    overlay.wait_for(state="detached", timeout=5000)
    assert not errors, errors


def _boxes(page):
    """Every table and display equation of the article: how wide it is against its column,
    and the box that scrolls it, with its overflow, classes and mask."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(sel)].map(el => {
        let box = el;
        while (box && !box.classList.contains('llmphys-scrolls') &&
               box.tagName !== 'ARTICLE') box = box.parentElement;
        const marked = box && box.tagName !== 'ARTICLE';
        const cs = marked ? getComputedStyle(box) : null;
        // the width it has: its scroll box's, or (unmarked) its parent's
        const col = marked ? box.clientWidth : el.parentElement.clientWidth;
        return {tag: el.tagName, width: el.scrollWidth, col: col,
                scrolls: marked, overflow: cs ? cs.overflowX : '',
                mask: cs ? (cs.maskImage || cs.webkitMaskImage || 'none') : 'none',
                classes: cs ? box.className : '',
                text: el.textContent.slice(0, 60)};
    })""", WIDE)


WIDE_FOUND: dict[str, dict[str, int]] = {}  # {page: {tag: wide boxes}}, filled by the test below


def _check_wide(loaded_page, path):
    page, errors = _ready(loaded_page, path)
    wide = {"TABLE": 0, "MJX-CONTAINER": 0}
    # the page itself never scrolls sideways: what is wider scrolls in its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
    for b in _boxes(page):
        if b["width"] <= b["col"] + 1:
            continue
        wide[b["tag"]] += 1
        where = f"{path}: {b['tag']} {b['width']} px in a {b['col']} px column ({b['text']!r})"
        assert b["scrolls"] and b["overflow"] in ("auto", "scroll"), where
        assert "llmphys-more-right" in b["classes"], where
        assert b["mask"] not in ("", "none"), where  # the faded right edge
    assert not errors, (path, errors)
    WIDE_FOUND[path] = wide


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_wide_tables_and_equations_scroll_sideways_with_a_visible_cue(loaded_page, path):
    _check_wide(loaded_page, path)


@pytest.mark.after_pages
def test_the_wide_boxes_checked_include_tables_and_equations(loaded_page):
    # the book has both at 390 px (chapter 4's tables, chapter 3's equations): the checks ran.
    # Runs after every page's tests (conftest.py), so it reads what they found; a page they
    # did not check (a run of this test alone) is checked here.
    for path in CHAPTER_PAGES:
        if path not in WIDE_FOUND:
            _check_wide(loaded_page, path)
    wide = {tag: sum(w[tag] for w in WIDE_FOUND.values()) for tag in ("TABLE", "MJX-CONTAINER")}
    assert wide["TABLE"] >= 3 and wide["MJX-CONTAINER"] >= 3, wide


@pytest.mark.parametrize("path", MEMORY_WALL)
@pytest.mark.parametrize("kind, selector", [
    ("table", ".pst-scrollable-table-container"), ("equation", "mjx-container")])
def test_the_cue_follows_the_scroll_and_is_photographed(loaded_page, path, kind, selector):
    page, _ = _ready(loaded_page, path)
    box = page.locator(f"article.bd-article {selector}.llmphys-more-right").first.element_handle()
    box.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"wide_{kind}_390px.png"))
    assert box.evaluate("e => getComputedStyle(e).scrollbarWidth") == "thin"
    assert not box.evaluate("e => e.classList.contains('llmphys-more-left')")
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; e.dispatchEvent(new Event('scroll')); }")
    page.wait_for_function("e => e.classList.contains('llmphys-more-left') && "
                           "!e.classList.contains('llmphys-more-right')", arg=box, timeout=5000)
    page.screenshot(path=str(ARTIFACTS / f"wide_{kind}_scrolled_390px.png"))
    # and back, leaving the shared page as it was
    box.evaluate("e => { e.scrollLeft = 0; e.dispatchEvent(new Event('scroll')); }")
    page.wait_for_function("e => e.classList.contains('llmphys-more-right') && "
                           "!e.classList.contains('llmphys-more-left')", arg=box, timeout=5000)
