"""Every reader-edition notebook, run top to bottom as Colab runs it.

Issue 13: Colab stopped at the second cell of every chapter (`from myst_nb import glue`), and
the bootstrap test could not see it because it ran only the first cell. Here a fresh virtual
environment gets only what a stock Colab runtime has for this book (numpy, scipy, matplotlib,
ipywidgets 7.x, ipykernel, nbconvert: no myst-nb, no Sphinx, no llmphys), a file:// clone of
this checkout stands in for GitHub (LLMPHYS_REPO/LLMPHYS_REF), and nbconvert executes each
notebook of reader/chapters/ in one working directory outside the repository, so the first
notebook clones and installs the library and the others reuse that clone, as Colab reuses a
runtime. Needs git and the PyPI registry. The table printed at the end gives each notebook's
time (`pytest -s` shows it); a chapter should run in under a minute.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READER = ROOT / "reader" / "chapters"
# What a stock Colab runtime provides for the book (Colab ships ipywidgets 7.7).
COLAB_STACK = ["numpy>=2", "scipy", "matplotlib", "ipywidgets>=7.7,<8", "ipykernel", "nbconvert"]
TIMES: dict[str, float] = {}


def _toc_notebooks() -> list[str]:
    sys.path.insert(0, str(ROOT / "tools"))
    import reader_edition
    return [Path(d).name + ".ipynb"
            for d in reader_edition.chapter_notebooks(reader_edition.build_index())]


NOTEBOOKS = _toc_notebooks()


@pytest.fixture(scope="module")
def origin(tmp_path_factory):
    """A clone of this checkout's HEAD on a named branch, standing in for GitHub."""
    path = tmp_path_factory.mktemp("origin") / "book"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-B", "under-test"], check=True)
    return path


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """(python, env) of a fresh venv holding only the stock Colab stack."""
    env_dir = tmp_path_factory.mktemp("colab-stack") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LLMPHYS_DATA", "VIRTUAL_ENV", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "MPLBACKEND")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", *COLAB_STACK],
                             env=env, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    for absent in ("llmphys", "myst_nb", "sphinx"):
        probe = subprocess.run([str(python), "-c", f"import {absent}"], env=env,
                               capture_output=True)
        assert probe.returncode != 0, f"a stock Colab runtime has no {absent}"
    return python, env


@pytest.fixture(scope="module")
def content(tmp_path_factory):
    """Colab's working directory, outside the repository; shared by every notebook."""
    path = tmp_path_factory.mktemp("content")
    assert ROOT not in path.parents
    return path


def test_every_toc_chapter_has_a_reader_notebook():
    assert NOTEBOOKS and sorted(p.name for p in READER.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_reader_notebook_runs_every_cell_in_a_stock_colab_stack(name, origin, colab, content):
    python, env = colab
    env = dict(env, LLMPHYS_REPO=f"file://{origin}", LLMPHYS_REF="under-test")
    shutil.copy(READER / name, content / name)
    out = content / "executed"
    start = time.perf_counter()
    run = subprocess.run(
        [str(python), "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=300", "--ExecutePreprocessor.kernel_name=python3",
         "--output-dir", str(out), name],
        cwd=content, env=env, capture_output=True, text=True, timeout=900)
    TIMES[name] = time.perf_counter() - start
    assert run.returncode == 0, run.stderr[-4000:]
    executed = json.loads((out / name).read_text(encoding="utf-8"))
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in code), "every code cell ran"
    errors = [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert not errors
    assert (content / "downstream-of-the-fab" / "data").is_dir(), "the setup cell cloned the book"
    source = json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))
    n_figures = sum(1 for c in source["cells"] if "figure" in c["metadata"].get("mystnb", {}))
    n_images = sum(1 for c in code for o in c["outputs"] if "image/png" in o.get("data", {}))
    assert n_images >= n_figures, f"{n_images} images for {n_figures} figures"


def test_print_the_time_each_reader_notebook_took():
    if not TIMES:
        pytest.skip("no reader notebook ran")
    print("\nreader notebook                 seconds (stock Colab stack, fresh venv)")
    for name, seconds in TIMES.items():
        print(f"{name:30} {seconds:7.1f}")
    print(f"{'total':30} {sum(TIMES.values()):7.1f}  (the first includes clone and install)")
