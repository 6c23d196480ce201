"""Release files: one version, copied consistently; a citation file; licences for code and prose."""

import json
import re
import subprocess
from pathlib import Path

import pytest

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


def _ref_in_use() -> set[str]:
    """Every ref the chapters' first cells, their Colab links and the launch buttons name."""
    refs = set()
    for nb in (ROOT / "chapters").glob("*.ipynb"):
        first = next(c for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "code")
        m = re.search(r'os\.environ\.get\("LLMPHYS_REF", "([^"]+)"\)', "".join(first["source"]))
        assert m, f"{nb.name}: the first cell has no default LLMPHYS_REF"
        refs.add(m.group(1))
        refs |= set(re.findall(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/([^/]+)/",
                               nb.read_text(encoding="utf-8")))
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    refs.add(re.search(r"^  branch: (\S+)", config, re.M).group(1))
    return refs


def test_colab_cells_links_and_launch_buttons_open_one_ref_main_or_the_release_tag():
    refs = _ref_in_use()
    assert len(refs) == 1, f"first cells, Colab links and _config.yml name different refs: {refs}"
    assert refs <= {"main", f"v{VERSION}"}


def test_the_ref_they_open_exists_in_the_repository():
    # A Colab link to a tag that was never made opens an error page (issue 13: v1.0.0 was
    # linked while `git tag` was empty). In a clone the branch may exist only as origin/<ref>.
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no refs to resolve")
    (ref,) = _ref_in_use()
    candidates = [f"refs/tags/{ref}", f"refs/heads/{ref}", f"refs/remotes/origin/{ref}"]
    found = [c for c in candidates if subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", c + "^{commit}"],
        capture_output=True).returncode == 0]
    assert found, f"git rev-parse --verify finds none of {candidates}"


def test_colab_links_and_launch_buttons_open_the_reader_edition():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"^  path_to_book: reader\s*$", config, re.M), \
        "launch buttons must open reader/chapters/<page>.ipynb"
    for nb in (ROOT / "chapters").glob("*.ipynb"):
        paths = re.findall(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/([^)\s\"]+)",
                           nb.read_text(encoding="utf-8"))
        assert paths == [f"reader/chapters/{nb.name}"], (nb.name, paths)
        assert (ROOT / "reader" / "chapters" / nb.name).is_file(), nb.name


def test_code_and_prose_licences_are_present_and_named():
    mit = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert mit.startswith("MIT License") and "The llmphys authors" in mit
    prose = (ROOT / "LICENSE-CONTENT").read_text(encoding="utf-8")
    assert "Creative Commons Attribution 4.0 International" in prose
    assert "Section 3 -- License Conditions" in prose or "Section 3" in prose
    pyproject = (ROOT / "lib" / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = { text = "MIT" }' in pyproject
