"""The bibliography: unique keys, and every citation in the book resolves."""

import json
import re
from collections import Counter
from pathlib import Path

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
BIB = CHAPTERS / "references.bib"
CITE = re.compile(r"\{(?:cite|cite:p|cite:t|cite:ps|cite:ts|footcite)\}`([^`]+)`")


def _bib_keys() -> list[str]:
    return re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.MULTILINE)


def _cited_keys() -> set[str]:
    texts = [p.read_text(encoding="utf-8") for p in CHAPTERS.glob("*.md")]
    for nb in CHAPTERS.glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return {key.strip() for text in texts for group in CITE.findall(text)
            for key in group.split(",")}


def test_bibliography_keys_are_unique():
    dupes = [k for k, n in Counter(_bib_keys()).items() if n > 1]
    assert not dupes, dupes


def test_every_citation_has_an_entry():
    missing = _cited_keys() - set(_bib_keys())
    assert not missing, sorted(missing)


def test_the_citation_pattern_finds_citations():
    assert "williams2009roofline" in _cited_keys()
