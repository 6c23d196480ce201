"""Release files: one version, copied consistently; a citation file; licences for code and prose."""

import json
import re
from pathlib import Path

import llmphys

ROOT = Path(__file__).resolve().parents[1]
VERSION = llmphys.__version__


def test_version_is_semantic():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)


def test_citation_file_carries_the_version_and_its_changelog_date():
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M)
    assert re.search(rf'^version: "{re.escape(VERSION)}"$', cff, re.M)
    date = re.search(r'^date-released: "(\d{4}-\d{2}-\d{2})"$', cff, re.M).group(1)
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert first.groups() == (VERSION, date), "the newest CHANGELOG entry is this version"
    for field in ("title:", "authors:", "license:", "repository-code:"):
        assert field in cff


def test_colab_cells_and_launch_buttons_are_pinned_to_the_release_tag():
    tag = f"v{VERSION}"
    for nb in (ROOT / "chapters").glob("*.ipynb"):
        first = next(c for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "code")
        assert f'os.environ.get("LLMPHYS_REF", "{tag}")' in "".join(first["source"]), nb.name
        links = re.findall(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/([^/]+)/",
                           nb.read_text(encoding="utf-8"))
        assert set(links) <= {tag}, (nb.name, set(links))
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(rf"^  branch: {re.escape(tag)}\b", config, re.M)


def test_code_and_prose_licences_are_present_and_named():
    mit = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License") and "The llmphys authors" in mit
    prose = (ROOT / "LICENSE-CONTENT").read_text(encoding="utf-8")
    assert "Creative Commons Attribution 4.0 International" in prose
    assert "Section 3 -- License Conditions" in prose or "Section 3" in prose
    pyproject = (ROOT / "lib" / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = { text = "MIT" }' in pyproject
