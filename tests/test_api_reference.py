"""The API reference page: generated from the docstrings, current, and in the book."""

import importlib
import inspect
from pathlib import Path

import api_reference

ROOT = Path(__file__).resolve().parents[1]


def test_the_page_is_current():
    page = api_reference.PAGE.read_text(encoding="utf-8")
    assert page == api_reference.render(), "stale: run python tools/api_reference.py"


def test_every_public_name_exists_and_has_a_docstring():
    for module, names in api_reference.PUBLIC.values():
        mod = importlib.import_module(module)
        for name in names:
            assert inspect.getdoc(getattr(mod, name)), f"{module}.{name}: no docstring"


def test_the_page_is_in_the_back_matter():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "- file: chapters/api_reference" in toc.split("caption: Back matter", 1)[1]
