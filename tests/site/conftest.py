"""Fixtures for tests of the built site: a local HTTP server over _build/html."""

import functools
import os
import http.server
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def site_url():
    if not (HTML / "index.html").is_file():
        # `make test` builds the site first and sets LLMPHYS_STRICT, so there a missing build
        # is an error; a plain `pytest` on a fresh clone skips the browser tests instead.
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail("no built site: run `make book` first")
        pytest.skip("no built site in _build/html: run `make book` to test it")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
