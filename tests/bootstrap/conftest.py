"""One Colab stand-in for every bootstrap test: a file:// origin, a venv with a stock Colab stack,
and one working directory. Sharing them keeps `make test`'s last step to one pip install of the
stack and one clone and install of the library, as one Colab runtime would do.

The stack comes from the package index (PyPI, or $PIP_INDEX_URL). It is probed once per session
with a 5-second request; where it cannot be reached, every test that needs the stack skips and
says why (the others, which need only git, still run), so a plain `pytest` offline does not
error here. `make test` runs these with the network there, and then nothing skips.
"""

import functools
import os
import subprocess
import urllib.error
import urllib.request
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a stock Colab runtime provides for the book (Colab ships ipywidgets 7.7); no llmphys,
# no myst-nb, no Sphinx.
COLAB_STACK = ["numpy>=2", "scipy", "matplotlib", "ipywidgets>=7.7,<8", "ipykernel", "nbconvert"]


@pytest.fixture(scope="session")
def fake_origin(tmp_path_factory):
    """A clone of this checkout's HEAD on a named branch, standing in for GitHub."""
    origin = tmp_path_factory.mktemp("origin") / "book"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(origin)], check=True)
    subprocess.run(["git", "-C", str(origin), "checkout", "-q", "-B", "under-test"], check=True)
    return origin


INDEX_PROBE_TIMEOUT_S = 5.0  # one request; a reachable index answers in well under a second


@functools.cache
def index_unreachable() -> str | None:
    """Why the package index cannot be reached, or None when it answers (probed once)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/")
    url = f"{index}/pip/"
    try:
        with urllib.request.urlopen(url, timeout=INDEX_PROBE_TIMEOUT_S) as response:
            response.read(1)
    except (urllib.error.URLError, OSError) as e:
        return f"the package index cannot be reached ({url}: {e}); a Colab stack needs it"
    return None


@pytest.fixture(scope="session")
def colab(tmp_path_factory):
    """(python, env) of a fresh venv holding only the stock Colab stack (skips offline)."""
    why = index_unreachable()
    if why:
        pytest.skip(why)
    env_dir = tmp_path_factory.mktemp("colab") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LLMPHYS_DATA", "VIRTUAL_ENV", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "MPLBACKEND")}
    # PIP_COMPILE=0 (pip's --no-compile, for this install and the setup cell's): pip would
    # byte-compile every module of scipy, matplotlib and Jupyter, half this install's CPU;
    # Python compiles the modules a notebook imports when it imports them. What a notebook
    # can import, and so what this test can catch, is the same.
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_COMPILE="0")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", *COLAB_STACK],
                             env=env, capture_output=True, text=True, timeout=900, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    for absent in ("llmphys", "myst_nb", "sphinx"):
        probe = subprocess.run([str(python), "-c", f"import {absent}"], env=env,
                               capture_output=True, check=False)
        assert probe.returncode != 0, f"a stock Colab runtime has no {absent}"
    return python, env


@pytest.fixture(scope="session")
def content(tmp_path_factory):
    """Colab's working directory (/content), outside the repository; shared by every test."""
    path = tmp_path_factory.mktemp("content")
    assert ROOT not in path.parents
    return path


@pytest.fixture
def bare_python(tmp_path_factory):
    """A venv that never gets llmphys, for the failure paths (no pip needed: they stop first)."""
    env_dir = tmp_path_factory.mktemp("bare") / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    return env_dir / "bin" / "python"


NOTEBOOK_TIMES: dict[str, float] = {}


@pytest.fixture(scope="session")
def notebook_times() -> dict[str, float]:
    """{reader notebook: seconds it took}, printed at the end of the session."""
    return NOTEBOOK_TIMES


def pytest_terminal_summary(terminalreporter):
    """Each reader notebook's time in the stock Colab stack (a chapter should take under 60 s)."""
    if not NOTEBOOK_TIMES:
        return
    write = terminalreporter.write_line
    write("reader notebook                 seconds (stock Colab stack, fresh venv)")
    for name, seconds in NOTEBOOK_TIMES.items():
        write(f"{name:30} {seconds:7.1f}")
    write(f"{'total':30} {sum(NOTEBOOK_TIMES.values()):7.1f}  (the first notebook also clones "
          "and installs the library unless test_colab_bootstrap.py ran first)")
