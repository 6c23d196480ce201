"""Fixtures for tests of the built site: the build, a local HTTP server over it, one browser.

One headless Chromium (Debian's, never a download) serves the whole session, and each page is
loaded once per viewport width and shared by every test that only reads it. A test file that
checks pages in a browser uses these fixtures instead of starting its own:

``built_html``   the folder ``_build/html`` (a missing build fails under LLMPHYS_STRICT, which
                 `make test` sets after building, and skips a plain `pytest` otherwise);
``site_url``     ``http://127.0.0.1:PORT``, a quiet local server over that folder;
``browser``      the session's Playwright ``Browser``;
``phone``        the session's phone: a context of that browser at PHONE (390 x 844 CSS px, 3
                 device pixels per CSS pixel, touch, mobile), where every 390-px page opens;
``loaded_page``  ``loaded_page(path, width=1280)``: a ``Loaded`` (``.page``, ``.failures``,
                 ``.errors``) for ``path`` relative to the site root, loaded once: the page has
                 reached "networkidle", been scrolled to its end (so lazy resources are in) and
                 settled again. ``failures`` lists every local request that failed or answered
                 400 and up, ``errors`` every uncaught script error, over the page's life. Read
                 it, screenshot it, hover; do not change what another test would read (a
                 test that moves a widget control puts it back);
``open_page``    ``open_page(path, width=1280)``: a fresh ``Loaded`` of its own, for a test that
                 clicks or types its way into another state; the test closes ``.page``.

Every request that is not to the local server is aborted (the site must work offline).
Browser tests parametrised by ``path`` (a page, ``chapters/x.html``) or ``chapter`` (a
notebook stem) run grouped by page, so that a page's checks follow one another and its one
load serves them all while only the last few pages stay open: a test of one page takes it as
a one-value ``path`` parameter for that reason. Tests marked ``after_pages`` run after all of
them.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OPEN_PAGES = 6  # loaded pages kept open at once (each holds its images and MathJax)
PHONE = {"width": 390, "height": 844}  # an iPhone 12-15 in portrait, in CSS pixels


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


def _page_of(item) -> str:
    """The page a parametrised test checks ("" for the others), for grouping by page."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "path" in params:
        return str(params["path"])
    if "chapter" in params:
        return f"chapters/{params['chapter']}.html"
    return ""


def pytest_collection_modifyitems(session, config, items):
    # Stable: unparametrised tests first in file order, then each page's tests in file order.
    here = Path(__file__).resolve().parent
    mine = [i for i in items if here in Path(str(i.path)).resolve().parents]
    if not mine:
        return
    first, chosen = items.index(mine[0]), set(mine)
    rest = [i for i in items if i not in chosen]
    # a test marked after_pages reads what the page tests found: it goes last
    mine.sort(key=lambda i: (i.get_closest_marker("after_pages") is not None, _page_of(i)))
    items[:] = rest[:first] + mine + rest[first:]


@pytest.fixture(scope="session")
def built_html() -> Path:
    if not (HTML / "index.html").is_file():
        # `make test` builds the site first and sets LLMPHYS_STRICT, so there a missing build
        # is an error; a plain `pytest` on a fresh clone skips the site tests instead.
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail("no built site: run `make book` first")
        pytest.skip("no built site in _build/html: run `make book` to test it")
    return HTML


@pytest.fixture(scope="session")
def site_url(built_html):
    handler = functools.partial(_QuietHandler, directory=str(built_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is not installed: `make test` installs it with apt-get")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@dataclasses.dataclass
class Loaded:
    """A page open in the session's browser, with what went wrong while it loaded and since."""

    page: object  # playwright.sync_api.Page
    failures: list[str]
    errors: list[str]


def _local(url: str) -> bool:
    return url.startswith("http://127.0.0.1")


@pytest.fixture(scope="session")
def phone(browser):
    """The phone's context in the session's browser: every page at PHONE's width opens here."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=3, is_mobile=True,
                                  has_touch=True)
    yield context
    context.close()


def _open(browser, phone, url: str, width: int) -> Loaded:
    if width == PHONE["width"]:
        page = phone.new_page()
    else:
        page = browser.new_page(viewport={"width": width, "height": 900})
    out = Loaded(page, [], [])
    page.route("**/*", lambda route: route.continue_() if _local(route.request.url)
               else route.abort())
    page.on("requestfailed", lambda r: out.failures.append(r.url) if _local(r.url) else None)
    page.on("response", lambda r: out.failures.append(f"{r.status} {r.url}")
            if r.status >= 400 and _local(r.url) else None)
    page.on("pageerror", lambda e: out.errors.append(str(e)))
    page.goto(url, wait_until="networkidle")
    return out


@pytest.fixture(scope="session")
def open_page(browser, phone, site_url):
    """``open_page(path, width=1280)``: a fresh page of its own; the caller closes it."""
    return lambda path, width=1280: _open(browser, phone, f"{site_url}/{path}", width)


@pytest.fixture(scope="session")
def loaded_page(browser, phone, site_url):
    """``loaded_page(path, width=1280)``: the session's one load of ``path`` at ``width``."""
    cache: collections.OrderedDict[tuple[str, int], Loaded] = collections.OrderedDict()

    def get(path: str, width: int = 1280) -> Loaded:
        key = (path, width)
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        loaded = _open(browser, phone, f"{site_url}/{path}", width)
        loaded.page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        loaded.page.wait_for_load_state("networkidle")
        cache[key] = loaded
        while len(cache) > OPEN_PAGES:
            cache.popitem(last=False)[1].page.close()
        return loaded

    yield get
    for loaded in cache.values():
        loaded.page.close()
