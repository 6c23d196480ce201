"""The book on a phone (390 px, an iPhone 12-15 in portrait; issue 32, item 34), in Debian's
chromium through Playwright, offline.

At 390 px a figure is drawn about 342 px wide and its labels 4-6 px tall: a tap must open it at
its full pixel size. A table or display equation wider than the column must scroll sideways
inside its own box (the page itself never scrolls sideways, so nothing is cut off) and show
that it does: the edge with hidden content fades (a CSS mask) and a scrollbar stays in view;
scrolled to its end, the fade moves to the other edge. Screenshots go to tests/site/artifacts/
for a person to look at.
"""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHAPTER_PAGES = sorted(f"chapters/{p.stem}.html" for p in (ROOT / "chapters").glob("*.ipynb"))
PHONE = {"width": 390, "height": 844}

# Figure images of the article, and the boxes that may be wider than the column.
FIGURES = "article.bd-article figure img, article.bd-article div.cell_output img"
WIDE = ("article.bd-article table, "
        "article.bd-article mjx-container[display='true']")


@pytest.fixture(scope="module")
def phone():
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is not installed: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True,
                                      has_touch=True)
        yield context
        context.close()
        browser.close()


def _open(phone, url):
    page = phone.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        "http://127.0.0.1") else route.abort())
    page.goto(url, wait_until="networkidle")
    # MathJax typesets after load, and reading.js marks the equations once it has
    page.evaluate("async () => { const s = window.MathJax && window.MathJax.startup;"
                  " if (s && s.promise) await s.promise; }")
    page.wait_for_function("() => [...document.querySelectorAll('article img')]"
                           ".every(e => e.complete)", timeout=30000)
    page.wait_for_timeout(200)
    return page, errors


def test_a_tap_on_a_figure_opens_it_at_full_size(phone, site_url):
    page, errors = _open(phone, f"{site_url}/chapters/04_memory_wall.html")
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
    page.close()


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


def test_wide_tables_and_equations_scroll_sideways_with_a_visible_cue(phone, site_url):
    wide = {"TABLE": 0, "MJX-CONTAINER": 0}
    for path in CHAPTER_PAGES:
        page, errors = _open(phone, f"{site_url}/{path}")
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
        page.close()
    # the book has both at 390 px (chapter 4's tables, chapter 3's equations): the checks ran
    assert wide["TABLE"] >= 3 and wide["MJX-CONTAINER"] >= 3, wide


@pytest.mark.parametrize("kind, selector", [
    ("table", ".pst-scrollable-table-container"), ("equation", "mjx-container")])
def test_the_cue_follows_the_scroll_and_is_photographed(phone, site_url, kind, selector):
    page, _ = _open(phone, f"{site_url}/chapters/04_memory_wall.html")
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
    page.close()
