"""Copy the book's version from its one home into the files that must repeat it.

The version lives in ``lib/llmphys/__init__.py`` (``__version__``). A release needs it in three
more places, which this script writes and ``tests/test_release.py`` checks:

- ``CITATION.cff``: ``version`` and ``date-released`` (the date of the version's CHANGELOG entry);
- every chapter's first cell: the default ``LLMPHYS_REF``, the ref Colab clones, and every
  "open it in Google Colab" link in the chapters' text;
- ``_config.yml``: ``repository.branch``, so the launch buttons open the same ref;
- ``CHANGELOG.md`` must already have a ``## [<version>] - YYYY-MM-DD`` entry (written by hand).

The ref is the release tag ``v<version>`` only when that tag exists in this repository
(``git rev-parse --verify refs/tags/v<version>``); otherwise it is ``main``: a link to a tag that
was never pushed opens nothing. After writing, the reader edition is regenerated, since its setup
cells copy the chapters' first cells.

Usage: ``python tools/set_version.py [NEW_VERSION]``. With an argument it first rewrites
``__version__``. To release: tag the release commit ``v<version>``, push the tag, run this
again (the ref becomes the tag) and commit.
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
SEMVER = re.compile(r"\d+\.\d+\.\d+")


def read_version() -> str:
    return VERSION.search(INIT.read_text(encoding="utf-8")).group(1)


def changelog_date(version: str) -> str:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    m = re.search(rf"^## \[{re.escape(version)}\] - (\d{{4}}-\d{{2}}-\d{{2}})$", text, re.M)
    if not m:
        raise SystemExit(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' entry; write it first")
    return m.group(1)


def release_ref(version: str) -> str:
    """``v<version>`` if that tag is in the repository, else ``main``."""
    tag = f"v{version}"
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet",
                            f"refs/tags/{tag}"], capture_output=True)
    return tag if found.returncode == 0 else "main"


def main(argv: list[str]) -> None:
    if argv:
        if not SEMVER.fullmatch(argv[0]):
            raise SystemExit(f"version must look like 1.2.3, got {argv[0]!r}")
        INIT.write_text(VERSION.sub(f'__version__ = "{argv[0]}"',
                                    INIT.read_text(encoding="utf-8")), encoding="utf-8")
    version = read_version()
    date = changelog_date(version)
    cff = ROOT / "CITATION.cff"
    text = re.sub(r'^version: .*$', f'version: "{version}"', cff.read_text(encoding="utf-8"),
                  flags=re.M)
    cff.write_text(re.sub(r'^date-released: .*$', f'date-released: "{date}"', text, flags=re.M),
                   encoding="utf-8")
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
    print(f"version {version} ({date}) written; notebooks, links and launch buttons open {ref!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
