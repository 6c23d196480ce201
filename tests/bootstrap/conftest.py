"""One Colab stand-in for every bootstrap test: a file:// origin, a venv with a stock Colab stack,
and one working directory. Sharing them keeps `make test`'s last step to one pip install of the
stack and one clone and install of the library, as one Colab runtime would do."""

import os
import subprocess
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


@pytest.fixture(scope="session")
def colab(tmp_path_factory):
    """(python, env) of a fresh venv holding only the stock Colab stack."""
    env_dir = tmp_path_factory.mktemp("colab") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LLMPHYS_DATA", "VIRTUAL_ENV", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "MPLBACKEND")}
    env.update(PATH=f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
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
