"""Release files: one version, copied consistently; a citation file; licences for code and prose."""

import json
import re
import subprocess
from pathlib import Path

import pytest

import llmphys

ROOT = Path(__file__).resolve().parents[1]
VERSION = llmphys.__version__


DEV = ".dev" in VERSION  # a development version: what main holds between releases


def test_version_is_a_release_or_a_development_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", VERSION), VERSION


def _changelog_entries() -> list[tuple[str, str | None]]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)


def test_citation_file_carries_the_version_and_its_changelog_date():
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M)
    assert re.search(rf'^version: "{re.escape(VERSION)}"$', cff, re.M)
    first = _changelog_entries()[0]
    date = re.search(r'^date-released: "(\d{4}-\d{2}-\d{2})"$', cff, re.M)
    if DEV:
        # the changes since the last release sit under [Unreleased]; nothing was released
        # on a date, so the citation names none
        assert first == ("Unreleased", ""), (
            f"a development version opens with [Unreleased]: {first}")
        assert date is None, "a development version has no release date"
    else:
        assert date and first == (VERSION, date.group(1)), (
            "the newest CHANGELOG entry is this version")
    for field in ("title:", "authors:", "license:", "repository-code:"):
        assert field in cff


def test_the_development_version_comes_after_every_release_in_the_changelog():
    released = [tuple(int(x) for x in v.split(".")) for v, d in _changelog_entries() if d]
    mine = tuple(int(x) for x in VERSION.split(".dev")[0].split("."))
    assert all(r < mine if DEV else r <= mine for r in released), (VERSION, released)


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


def test_colab_cells_links_and_launch_buttons_open_one_ref_the_versions():
    # main for a development version, the version's tag for a release: never a release tag
    # while main says dev, never main while the version claims to be released (issue 32)
    refs = _ref_in_use()
    assert len(refs) == 1, f"first cells, Colab links and _config.yml name different refs: {refs}"
    assert refs == {"main" if DEV else f"v{VERSION}"}, (VERSION, refs)


# Pages that tell a reader which ref the Colab cell clones: none may promise a release tag while
# the version is a development one (the preface and the guide said "the release tag this site
# was built from" when no tag existed).
REF_CLAIMS = re.compile(r"clones the book at the\s+release tag|pins the release|"
                        r"clones the `v\d+\.\d+\.\d+` tag|the release tag \(`v` \+")


def test_no_page_promises_a_release_tag_that_the_cell_does_not_clone():
    pages = [ROOT / "README.md", ROOT / "chapters" / "index.md",
             ROOT / "chapters" / "instructor_guide.md"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    unreleased = changelog.split("\n## [", 2)[1] if DEV else ""
    texts = {p.name: p.read_text(encoding="utf-8") for p in pages}
    texts["CHANGELOG.md [Unreleased]"] = unreleased
    assert REF_CLAIMS.search("the first cell clones the book at the release tag this site")
    if DEV:
        hits = {name: m.group(0) for name, t in texts.items() if (m := REF_CLAIMS.search(t))}
        assert not hits, hits


def test_reader_notebooks_say_which_ref_their_setup_cell_installs():
    (ref,) = _ref_in_use()
    want = "current `main`: the development version" if ref == "main" else f"release `{ref}`"
    for nb in (ROOT / "reader" / "chapters").glob("*.ipynb"):
        first = "".join(json.loads(nb.read_text(encoding="utf-8"))["cells"][0]["source"])
        assert want in first, nb.name


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
        paths = re.findall(r"colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/"
                           r"([^)\s\"]+)", nb.read_text(encoding="utf-8"))
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
