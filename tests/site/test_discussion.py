"""Every page links to its discussion through the one configurable URL (issue 20):
``discussion_url`` in _config.yml, used by _ext/discussion.py on the site and by the reader
edition's first cell."""

import json
import os
from pathlib import Path
from urllib.parse import quote

import discussion
import pytest
import reader_edition as re_ed
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
URL = CONFIG["sphinx"]["config"]["discussion_url"]


def test_the_url_is_configured_once():
    assert URL.startswith("https://")
    assert CONFIG["html"]["use_issues_button"] is False  # no second, derived link
    assert discussion.discussion_href("https://x.org/new?title={page}", "4. A b") == (
        "https://x.org/new?title=4.%20A%20b")
    assert discussion.discussion_href("https://forum.example/c/book", "T") == (
        "https://forum.example/c/book")


def test_every_built_page_links_to_its_discussion():
    if not (HTML / "index.html").is_file():
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail("no built site: run `make book` first")
        pytest.skip("no built site in _build/html")
    index = re_ed.build_index()
    for doc in index.docs:
        page = (HTML / f"{doc}.html").read_text(encoding="utf-8")
        prefix = URL.split("{page}")[0].replace("&", "&amp;")
        assert f'class="{discussion.LINK_CLASS}"><a href="{prefix}' in page, doc
        assert quote(index.titles[doc].split(":")[0], safe="") in page, doc


def test_reader_notebooks_carry_the_same_link():
    for nb_path in (ROOT / "reader" / "chapters").glob("*.ipynb"):
        first = "".join(json.loads(nb_path.read_text(encoding="utf-8"))["cells"][0]["source"])
        assert "discuss this page](" + URL.split("{page}")[0] in first, nb_path.name
