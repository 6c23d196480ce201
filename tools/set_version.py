"""Copy the book's version from its one home into the files that must repeat it.

The version lives in ``lib/llmphys/__init__.py`` (``__version__``). It is either a release,
``X.Y.Z``, or a development version, ``X.Y.Z.devN`` (PEP 440): what ``main`` holds between
releases. This script writes, and ``tests/test_release.py`` checks, that every other place agrees:

- the ref that every chapter's setup cell clones (the default ``LLMPHYS_REF``), every "open it
  in Google Colab" link in the chapters' text and ``repository.branch`` in ``_config.yml`` (the
  launch buttons): the tag ``vX.Y.Z`` for a release, ``main`` for a development version;
- ``CITATION.cff``: ``version``, and for a release ``date-released``, the date of its
  ``CHANGELOG.md`` entry (a development version has no release date, so the field is dropped);
- ``CHANGELOG.md``, written by hand, must open with ``## [X.Y.Z] - YYYY-MM-DD`` for a release and
  with ``## [Unreleased]`` for a development version.

The site's footer and the PDF's title page read ``__version__`` themselves (``_ext/downloads.py``).
After writing, the reader edition is regenerated, since its setup cells copy the chapters' first
cells and its first cell says which ref it installs.

Usage: ``python tools/set_version.py [NEW_VERSION]``. With an argument it first rewrites
``__version__``. To release X.Y.Z: date its CHANGELOG entry, run ``set_version.py X.Y.Z``, commit,
tag that commit ``vX.Y.Z`` and push both (``.github/workflows/publish.yml`` then attaches the PDF
and both notebook editions to the release); then open the next cycle with ``## [Unreleased]``
and ``set_version.py X.Y+1.0.dev0``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "lib" / "llmphys" / "__init__.py"
VERSION = re.compile(r'^__version__ = "([^"]+)"$', re.MULTILINE)
REF = re.compile(r'os\.environ\.get\(\\?"LLMPHYS_REF\\?", \\?"([^"\\]+)\\?"\)')
COLAB = re.compile(r"(colab\.research\.google\.com/github/[^/]+/[^/]+/blob/)[^/]+/")
SEMVER = re.compile(r"\d+\.\d+\.\d+(?:\.dev\d+)?")  # a release, or a development version


def read_version() -> str:
    return VERSION.search(INIT.read_text(encoding="utf-8")).group(1)


def is_development(version: str) -> bool:
    return ".dev" in version


def changelog_date(version: str) -> str | None:
    """The date of ``version``'s CHANGELOG entry; None for a development version, whose
    changes sit under ``## [Unreleased]``, the first entry."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    if is_development(version):
        if not first or first.group(1) != "Unreleased":
            raise SystemExit("a development version: CHANGELOG.md must open with '## [Unreleased]'")
        return None
    m = re.search(rf"^## \[{re.escape(version)}\] - (\d{{4}}-\d{{2}}-\d{{2}})$", text, re.MULTILINE)
    if not m or first.group(1) != version:
        raise SystemExit(f"CHANGELOG.md must open with '## [{version}] - YYYY-MM-DD'; "
                         "write it first")
    return m.group(1)


def release_ref(version: str) -> str:
    """``v<version>`` for a release, ``main`` for a development version."""
    return "main" if is_development(version) else f"v{version}"


def main(argv: list[str]) -> None:
    if argv:
        if not SEMVER.fullmatch(argv[0]):
            raise SystemExit(f"version must look like 1.2.3 or 1.3.0.dev0, got {argv[0]!r}")
        INIT.write_text(VERSION.sub(f'__version__ = "{argv[0]}"',
                                    INIT.read_text(encoding="utf-8")), encoding="utf-8")
    version = read_version()
    date = changelog_date(version)
    cff = ROOT / "CITATION.cff"
    text = re.sub(r'^version: .*$', f'version: "{version}"', cff.read_text(encoding="utf-8"),
                  flags=re.M)
    text = re.sub(r'^date-released: .*\n', "", text, flags=re.M)
    if date:
        text = re.sub(r'^(version: .*\n)', rf'\g<1>date-released: "{date}"\n', text, flags=re.M)
    cff.write_text(text, encoding="utf-8")
    ref = release_ref(version)
    config = ROOT / "_config.yml"
    config.write_text(re.sub(r"^  branch: \S+", f"  branch: {ref}",
                             config.read_text(encoding="utf-8"), flags=re.M), encoding="utf-8")
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        raw = nb.read_text(encoding="utf-8")
        new = REF.sub(lambda m: m.group(0).replace(m.group(1), ref), raw)
        new = COLAB.sub(rf"\g<1>{ref}/", new)
        if new != raw:
            json.loads(new)  # still a valid notebook
            nb.write_text(new, encoding="utf-8")
    subprocess.run([sys.executable, str(ROOT / "tools" / "reader_edition.py")], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"version {version} ({date or 'unreleased'}) written; notebooks, links and launch "
          f"buttons open {ref!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
