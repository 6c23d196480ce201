"""The built website, checked as a reader's browser sees it (Debian's chromium, offline).

Every page loads with no failed request (a 404 of any kind, fonts included) and no
JavaScript error, figures and math render, each chapter has a Colab launch link, and no
internal link is broken. The table of contents opens and closes from its toggle on a
phone (390 px) and on a desktop; no page shows raw MyST role text or unparsed ``$$``;
a chapter page loads at most 3 MB; every figure has an alt text that says what it
shows; the tour's widget is live. Screenshots of the tour and of a chapter at 390 px are saved to
tests/site/artifacts/ for a person to look at.
"""

import html.parser
import re
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).as_posix().startswith(("_static", "_sources")))
CHAPTER_PAGES = sorted(p.with_suffix(".html").relative_to(HTML.parent.parent).as_posix()
                       for p in (HTML.parent.parent / "chapters").glob("*.ipynb"))
CONFIG = (ROOT / "_config.yml").read_text(encoding="utf-8")
REPO_URL = re.search(r"^  url: (\S+)$", CONFIG, flags=re.MULTILINE).group(1)
# main or a release tag:
BRANCH = re.search(r"^  branch: (\S+)", CONFIG, flags=re.MULTILINE).group(1)
BOOK_PATH = re.search(r"^  path_to_book: (\S*)", CONFIG, flags=re.MULTILINE).group(1)  # reader
# where it is published:
SITE_URL = re.search(r"^  baseurl: (\S+)$", CONFIG, flags=re.MULTILINE).group(1)


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_site_has_every_page_of_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    files = re.findall(r"^\s*(?:root|- file):\s*(\S+)", toc, flags=re.MULTILINE)
    assert len(files) >= 5
    missing = [f for f in files if f"{f}.html" not in PAGES]
    assert not missing, missing


def test_the_published_address_is_configured_once_and_used():
    # _config.yml's html.baseurl is the one place; the README shows it, every page links it.
    assert re.fullmatch(r"https://\S+/", SITE_URL), SITE_URL
    assert SITE_URL in (ROOT / "README.md").read_text(encoding="utf-8")
    index = (HTML / "chapters" / "index.html").read_text(encoding="utf-8")
    assert f'<link rel="canonical" href="{SITE_URL}chapters/index.html"' in index


def test_no_internal_link_is_broken():
    parsed = {page: _parse(HTML / page) for page in PAGES}
    broken = []
    for page, links in parsed.items():
        for href in links.hrefs:
            url = urlparse(href)
            if url.scheme or href.startswith(("mailto:", "javascript:")):
                continue
            target, anchor = urldefrag(href)
            target_path = (HTML / page).parent / unquote(target) if target else HTML / page
            target_path = target_path.resolve()
            if not target_path.exists():
                broken.append(f"{page}: {href} (no such file)")
                continue
            rel = target_path.relative_to(HTML.resolve()).as_posix()
            if anchor and rel in parsed and anchor not in parsed[rel].ids:
                broken.append(f"{page}: {href} (no element with id {anchor!r})")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_failed_requests_or_script_errors(loaded_page, path):
    loaded = loaded_page(path)
    assert loaded.page.title()
    assert not loaded.failures, loaded.failures
    assert not loaded.errors, loaded.errors


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_chapter_renders_figures_math_and_a_colab_launch_link(loaded_page, path):
    page = loaded_page(path).page
    # On a loaded 2-core machine "networkidle" can fire before the last images decode: wait.
    page.wait_for_function("() => { const i = document.querySelectorAll('div.cell_output img');"
                           " return i.length > 0 && [...i].every(e => e.complete); }",
                           timeout=20000)
    widths = page.eval_on_selector_all("div.cell_output img", "els => els.map(e => e.naturalWidth)")
    assert widths and min(widths) > 100, f"figures did not render: {widths}"
    page.wait_for_selector("mjx-container", timeout=15000)  # MathJax typeset, served locally
    # MathJax loads TeX packages on demand (_ext/page_weight.py): none may be missing.
    assert page.locator("mjx-merror").count() == 0, page.locator("mjx-merror").all_inner_texts()
    notebook = f"{BOOK_PATH}/{path}".lstrip("/").replace(".html", ".ipynb")  # the reader edition
    repo = REPO_URL.split("github.com/")[1]
    expected = f"https://colab.research.google.com/github/{repo}/blob/{BRANCH}/{notebook}"
    launch = page.locator("ul.dropdown-menu a[href*='colab.research.google.com']")
    assert launch.count() == 1 and launch.get_attribute("href") == expected
    assert not launch.is_visible()  # inside the closed launch menu
    page.hover("button[aria-label='Launch interactive content']")
    launch.wait_for(state="visible", timeout=5000)
    page.mouse.move(0, 0)  # and the menu closes again: the shared page is left as it was


@pytest.mark.parametrize("path", ["chapters/hardware_tour.html"])  # grouped with its load
def test_tour_shows_its_numbers_and_saves_a_screenshot(loaded_page, path):
    page = loaded_page(path).page
    text = page.inner_text("main")
    assert "ridge sits at 295 FLOP per byte" in text  # glued from the library
    assert "0.34% of its dense BF16 peak" in text
    # The widget is the library's precomputed grid, wired by explore.js (test_widgets.py).
    page.wait_for_selector(".llmphys-explore-live", timeout=15000)
    assert "intensity 63.4 FLOP/B" in page.inner_text(".llmphys-explore-output")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "hardware_tour.png"), full_page=True)
    assert (ARTIFACTS / "hardware_tour.png").stat().st_size > 50_000


# --- Navigation on a phone and on a desktop ------------------------------------------

TOC_LINK = "nav.bd-links a.reference.internal"  # a link of the primary sidebar's table of contents


def _visible_toggle(page):
    """The one primary-sidebar toggle a reader can see and press at this width."""
    toggles = page.locator("button.primary-toggle")
    visible = [toggles.nth(i) for i in range(toggles.count()) if toggles.nth(i).is_visible()]
    assert len(visible) == 1, f"{len(visible)} visible primary-sidebar toggles"
    return visible[0]


def test_phone_toggle_opens_and_closes_the_table_of_contents(open_page):
    # 390 px is an iPhone 12-15 in portrait. pydata-sphinx-theme >= 0.17 under
    # sphinx-book-theme 1.3 binds its handler to a hidden duplicate toggle
    # (pydata/pydata-sphinx-theme#2451): this press then does nothing.
    loaded = open_page("chapters/01_foundations.html", width=390)  # its own: the test clicks
    page, errors = loaded.page, loaded.errors
    link = page.locator(TOC_LINK).first
    assert not link.is_visible()  # the sidebar starts closed on a phone
    _visible_toggle(page).click()
    link.wait_for(state="visible", timeout=5000)
    page.keyboard.press("Escape")  # the drawer is a modal dialog: Escape closes it
    link.wait_for(state="hidden", timeout=5000)
    _visible_toggle(page).click()  # and it opens again
    link.wait_for(state="visible", timeout=5000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "toc_open_390px.png"))
    assert not errors, errors
    page.close()


def test_desktop_toggle_hides_and_shows_the_table_of_contents(open_page):
    loaded = open_page("chapters/01_foundations.html", width=1280)  # its own: the test clicks
    page, errors = loaded.page, loaded.errors
    link = page.locator(TOC_LINK).first
    assert link.is_visible()  # open by default on a wide screen
    _visible_toggle(page).click()
    link.wait_for(state="hidden", timeout=5000)
    _visible_toggle(page).click()
    link.wait_for(state="visible", timeout=5000)
    assert not errors, errors
    page.close()


# --- Markup that did not render ------------------------------------------------------

# A role or directive that MyST did not parse reaches the page as its source text; an
# unparsed display-math fence reaches it as "$$" (dollarmath turns parsed ones into \[ \]).
RAW_MARKUP = re.compile(r"\{(term|cite(:[a-z]+)?|glue(:[a-z]+)?|numref|doc|ref|eq|math)\}`?"
                        r"|\{glue|\{cite|\$\$")


class _VisibleText(html.parser.HTMLParser):
    """Text a reader sees as prose: everything outside code, scripts and styles."""
    SKIP = frozenset({"script", "style", "pre", "code", "kbd", "samp", "textarea"})

    def __init__(self):
        super().__init__()
        self.depth, self.chunks = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.chunks.append(data)


def _visible_text(path: Path) -> str:
    p = _VisibleText()
    p.feed(path.read_text(encoding="utf-8"))
    return "".join(p.chunks)


def test_raw_markup_detector_finds_what_it_must():
    # The detector itself: each of these reached a page once, or would if a role broke.
    for text in ("see {term}`HBM`", "as {cite:t}`kaplan2020` found", "{glue:text}`x:.1f`",
                 "{numref}`fig-roofline`", "{doc}`notation`", "{ref}`sec-x`", "$$ C = 6ND"):
        assert RAW_MARKUP.search(text), text
    for text in ("costs $3 per hour", "a set {1, 2}", "C = 6ND"):
        assert not RAW_MARKUP.search(text), text


@pytest.mark.parametrize("path", PAGES)
def test_page_shows_no_raw_role_text_or_unparsed_math(path):
    text = _visible_text(HTML / path)
    hits = [text[max(0, m.start() - 60):m.end() + 40].replace("\n", " ")
            for m in RAW_MARKUP.finditer(text)]
    assert not hits, "\n".join(hits)


# --- Page weight, figures ------------------------------------------------------------

MAX_PAGE_BYTES = 3_000_000  # issue 13: at most 3 MB per chapter page, uncompressed


def _loaded_bytes(loaded, site_url, path):
    """Bytes (uncompressed, as served from _build/html) of every resource the page loaded; the
    shared page was scrolled to its end, so anything loaded lazily is counted too."""
    urls = loaded.page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    total, sizes = (HTML / path).stat().st_size, {}
    for url in set(urls):
        local = urlparse(url)
        if not url.startswith(site_url):
            continue
        f = HTML / unquote(local.path).lstrip("/")
        if f.is_file():
            sizes[local.path] = f.stat().st_size
    total += sum(sizes.values())
    return total, sizes


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_chapter_page_loads_at_most_3_mb_and_nothing_fails(loaded_page, site_url, path):
    loaded = loaded_page(path)
    total, sizes = _loaded_bytes(loaded, site_url, path)
    failures, errors = loaded.failures, loaded.errors
    biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    print(f"{path}: {total / 1e6:.2f} MB in {len(sizes) + 1} files; largest {biggest}")
    assert total <= MAX_PAGE_BYTES, f"{total / 1e6:.2f} MB > 3 MB: largest {biggest}"
    assert not failures, failures  # no 404 (font, image, script, anything local)
    assert not errors, errors


# myst-nb's fallback alt text is the image's own path: a 64-hex-digit hash.
HASHED = re.compile(r"[0-9a-f]{32,}|\.(png|svg|jpe?g)$")


class _Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.images = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


@pytest.mark.parametrize("path", PAGES)
def test_every_figure_has_an_alt_text_that_says_what_it_shows(path):
    p = _Images()
    p.feed((HTML / path).read_text(encoding="utf-8"))
    figures = [a for a in p.images if "_images/" in a.get("src", "")]
    bad = [(a["src"], a.get("alt")) for a in figures
           if not a.get("alt") or HASHED.search(a["alt"]) or len(a["alt"].split()) < 5]
    assert not bad, bad


@pytest.mark.parametrize("path", ["chapters/04_memory_wall.html"])  # grouped with its load
def test_figures_are_high_dpi_for_a_phone(loaded_page, path):
    # At 390 px a 6.4-inch figure is shown about 360 CSS px wide. It stays sharp on a
    # phone (2-3 device pixels per CSS pixel) when its bitmap has at least two pixels per
    # CSS pixel there; a 100-dpi PNG has 1.8.
    page = loaded_page(path, width=390).page
    page.wait_for_function("() => [...document.querySelectorAll('div.cell_output img')]"
                           ".every(e => e.complete)", timeout=20000)
    ratios = page.eval_on_selector_all(
        "div.cell_output img", "els => els.map(e => e.naturalWidth / e.clientWidth)")
    ARTIFACTS.mkdir(exist_ok=True)
    # the phone's screen (3 device pixels per CSS pixel) on the first figure: a whole-page
    # picture of the chapter at that density would be some 200,000 pixels tall
    page.locator("div.cell_output img").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "memory_wall_390px.png"))
    assert ratios and min(ratios) >= 2, ratios


@pytest.mark.parametrize("path", ["chapters/01_foundations.html"])  # grouped with its load
def test_theme_icons_draw_from_the_web_fonts_without_font_awesome_js(loaded_page, path):
    # _ext/page_weight.py drops fontawesome.js; the stylesheet's web fonts must draw the icons.
    loaded = loaded_page(path)
    page, failures, errors = loaded.page, loaded.failures, loaded.errors
    assert page.locator("script[src*='fontawesome.js']").count() == 0
    page.wait_for_function("document.fonts.ready.then(() => true)")
    # The icons on view in the header (the rest sit in closed menus): each draws a glyph.
    icons = page.evaluate("""() => [...document.querySelectorAll('.bd-header-article i')]
        .filter(i => i.checkVisibility())
        .map(i => [i.className, getComputedStyle(i, '::before').content,
                   getComputedStyle(i).fontFamily, i.getBoundingClientRect().width])""")
    assert len(icons) >= 3, icons  # launch, download, fullscreen, ...
    bad = [i for i in icons if i[1] in ("none", "normal", '""') or i[3] < 8
           or "Font Awesome" not in i[2]]
    assert not bad, bad
    loaded = page.evaluate("[...document.fonts].filter(f => f.family.includes('Font Awesome')"
                           " && f.status === 'loaded').length")
    assert loaded >= 1
    assert not failures and not errors, (failures, errors)
