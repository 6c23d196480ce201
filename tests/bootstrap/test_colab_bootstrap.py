"""The first cell of every chapter, run as Colab would run it.

Colab starts a kernel without the book's library. The first cell must then clone
the repository, install `lib/` with a plain (not editable) pip install, and make
`data/` resolvable, all without a kernel restart. We stand in for Colab with a
fresh virtual environment with a stock Colab stack and no llmphys (conftest.py; the
reader-notebook test shares it, its clone and its working directory), and for GitHub
with a file:// clone of this checkout's HEAD. Needs git and the PyPI registry.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def _first_code_cell(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


def test_every_chapter_starts_with_the_same_bootstrap_cell():
    first = {p.name: _first_code_cell(p) for p in NOTEBOOKS}
    assert first, "no chapter notebooks found"
    assert len(set(first.values())) == 1, f"bootstrap cells differ: {sorted(first)}"
    cell = next(iter(first.values()))
    assert "import llmphys" in cell and '"install", "-q"' in cell and "-e" not in cell.split()
    assert "LLMPHYS_DATA" in cell and "LLMPHYS_REF" in cell and "LLMPHYS_REPO" in cell


def test_bootstrap_cell_installs_the_library_and_finds_the_data(fake_origin, colab, content):
    fresh_python, colab_env = colab
    cell = _first_code_cell(NOTEBOOKS[0])
    after = (
        "\nfrom llmphys import specs, roofline\n"
        "print('DATA', specs.data_dir())\n"
        "print('RIDGE', round(roofline.ridge_point(specs.accelerator('h100_sxm')), 1))\n"
        "print('FILE', llmphys.__file__)\n"
    )
    env = dict(colab_env, LLMPHYS_REPO=f"file://{fake_origin}", LLMPHYS_REF="under-test")
    # The cell and the follow-up run in ONE interpreter: no restart between them.
    run = subprocess.run([str(fresh_python), "-c", cell + after], cwd=content, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    clone = content / "downstream-of-the-fab"
    assert Path(out["DATA"]) == clone / "data"
    assert out["RIDGE"] == "295.3"
    assert "site-packages" in out["FILE"], "the install must be a plain one, not editable"
    # After a runtime restart the package is installed but the environment variable is
    # gone: the cell must skip the install and still point the library at the clone.
    again = subprocess.run([str(fresh_python), "-c", cell + after], cwd=content, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"DATA {clone / 'data'}" in again.stdout


@pytest.mark.parametrize("what", ["repository", "ref"])
def test_an_unreachable_repository_or_a_missing_ref_says_which_and_how_to_choose_another(
        what, fake_origin, bare_python, tmp_path):
    # Issue 13: a bad URL or a tag that does not exist must not end in a bare CalledProcessError.
    cell = _first_code_cell(NOTEBOOKS[0])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LLMPHYS_DATA")}
    if what == "repository":
        env.update(LLMPHYS_REPO=f"file://{tmp_path / 'no-such-repo'}", LLMPHYS_REF="main")
        expected = ["cannot reach the book's repository", "no-such-repo", "LLMPHYS_REPO"]
    else:
        env.update(LLMPHYS_REPO=f"file://{fake_origin}", LLMPHYS_REF="v0.0.0-missing")
        expected = ["has no branch or tag 'v0.0.0-missing'", "LLMPHYS_REF"]
    run = subprocess.run([str(bare_python), "-c", cell], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: ") and "CalledProcessError" not in run.stderr, last
    for words in expected:
        assert words in last, (words, last)
    assert not (tmp_path / "downstream-of-the-fab").exists(), "nothing half-cloned is left"
