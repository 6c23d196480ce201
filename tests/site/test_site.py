"""The built website, checked as a reader's browser sees it (Debian's chromium, offline).

Every page loads with no failed local request and no JavaScript error, figures and
math render, the widget renders from the locally served widget manager, each chapter
has a Colab launch link, and no internal link is broken. A screenshot of the tour
is saved to tests/site/artifacts/ for a person to look at.
"""

import html.parser
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).as_posix().startswith(("_static", "_sources")))
CHAPTER_PAGES = sorted(p.with_suffix(".html").relative_to(HTML.parent.parent).as_posix()
                       for p in (HTML.parent.parent / "chapters").glob("*.ipynb"))
CONFIG = (ROOT / "_config.yml").read_text(encoding="utf-8")
REPO_URL = re.search(r"^  url: (\S+)$", CONFIG, flags=re.MULTILINE).group(1)
BRANCH = re.search(r"^  branch: (\S+)", CONFIG, flags=re.MULTILINE).group(1)  # main or a release tag
BOOK_PATH = re.search(r"^  path_to_book: (\S*)", CONFIG, flags=re.MULTILINE).group(1)  # reader
FONTS = (".woff", ".woff2", ".ttf", ".eot")


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


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is not installed: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


def _open(browser, url, width=1280):
    """Open ``url`` with every non-local request blocked; return (page, failures, errors)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    failures, errors = [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        "http://127.0.0.1") else route.abort())
    # The widget manager asks for its icon fonts at a path it computes relative to the
    # page, where they are not; our controls use no icons, so those misses are cosmetic.
    def local_miss(url):
        return url.startswith("http://127.0.0.1") and not url.endswith(FONTS)
    page.on("requestfailed", lambda r: failures.append(r.url) if local_miss(r.url) else None)
    page.on("response", lambda r: failures.append(f"{r.status} {r.url}")
            if r.status >= 400 and local_miss(r.url) else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="networkidle")
    return page, failures, errors


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_failed_requests_or_script_errors(browser, site_url, path):
    page, failures, errors = _open(browser, f"{site_url}/{path}")
    assert page.title()
    assert not failures, failures
    assert not errors, errors
    page.close()


@pytest.mark.parametrize("path", CHAPTER_PAGES)
def test_chapter_renders_figures_math_and_a_colab_launch_link(browser, site_url, path):
    page, _, _ = _open(browser, f"{site_url}/{path}")
    # On a loaded 2-core machine "networkidle" can fire before the last images decode: wait.
    page.wait_for_function("() => { const i = document.querySelectorAll('div.cell_output img');"
                           " return i.length > 0 && [...i].every(e => e.complete); }",
                           timeout=20000)
    widths = page.eval_on_selector_all("div.cell_output img", "els => els.map(e => e.naturalWidth)")
    assert widths and min(widths) > 100, f"figures did not render: {widths}"
    page.wait_for_selector("mjx-container", timeout=15000)  # MathJax typeset, served locally
    notebook = f"{BOOK_PATH}/{path}".lstrip("/").replace(".html", ".ipynb")  # the reader edition
    repo = REPO_URL.split("github.com/")[1]
    expected = f"https://colab.research.google.com/github/{repo}/blob/{BRANCH}/{notebook}"
    launch = page.locator("ul.dropdown-menu a[href*='colab.research.google.com']")
    assert launch.count() == 1 and launch.get_attribute("href") == expected
    assert not launch.is_visible()  # inside the closed launch menu
    page.hover("button[aria-label='Launch interactive content']")
    launch.wait_for(state="visible", timeout=5000)
    page.close()


def test_tour_shows_its_numbers_widget_and_saves_a_screenshot(browser, site_url):
    page, _, _ = _open(browser, f"{site_url}/chapters/hardware_tour.html")
    text = page.inner_text("main")
    assert "ridge sits at 295 FLOP per byte" in text  # glued from the library
    assert "0.34% of its BF16 peak" in text
    page.wait_for_selector(".widget-dropdown select", timeout=15000)  # widget manager, offline
    # The widget manager typesets with MathJax 2's Hub.Queue; MathJax 3 must accept it.
    page.wait_for_function("typeof window.MathJax.typesetPromise === 'function'", timeout=15000)
    assert page.evaluate("typeof MathJax.Hub.Queue(['Typeset', MathJax.Hub, document.body])"
                         " === 'undefined'")
    # The widget's printed output is rendered asynchronously from the saved widget state.
    page.wait_for_function(
        "document.querySelector('main').innerText.includes('intensity 63.4 FLOP/B')",
        timeout=15000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "hardware_tour.png"), full_page=True)
    assert (ARTIFACTS / "hardware_tour.png").stat().st_size > 50_000
    page.close()
