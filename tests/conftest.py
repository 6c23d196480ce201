"""Shared fixtures. Figures render off screen; randomness is seeded explicitly.

``LLMPHYS_STRICT=1`` (set by `make test`) turns a missing input that a test needs (the source
documents here, the built site in tests/site) into a failure instead of a skip, so `make test`
either runs every test or fails; a plain `pytest` on a bare clone skips them with the reason.
"""

import dataclasses
import os
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from llmphys import specs

ROOT = Path(__file__).resolve().parents[1]


def _find_seeds() -> Path | None:
    """The source documents (shared/seeds/): $LLMPHYS_SEEDS, else shared/seeds in the clone or in
    any folder above it (CI puts shared/ beside the clone; a git worktree sits one level lower)."""
    if os.environ.get("LLMPHYS_SEEDS"):
        return Path(os.environ["LLMPHYS_SEEDS"])
    for folder in (ROOT, *ROOT.parents):
        if (folder / "shared" / "seeds").is_dir():
            return folder / "shared" / "seeds"
    return None


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The folder of source documents; fails under LLMPHYS_STRICT when it cannot be found."""
    found = _find_seeds()
    if found is None or not found.is_dir():
        why = (f"no source documents: set LLMPHYS_SEEDS or put shared/seeds beside the clone "
               f"(looked for {os.environ.get('LLMPHYS_SEEDS') or 'shared/seeds'} from {ROOT})")
        if os.environ.get("LLMPHYS_STRICT"):
            pytest.fail(why)
        pytest.skip(why)
    return found


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def h100() -> specs.Accelerator:
    return specs.accelerator("h100_sxm")


@pytest.fixture
def tiny_gqa() -> specs.Model:
    """A two-layer GQA model small enough to instantiate: 4 query heads share 2 KV heads."""
    return dataclasses.replace(specs.model("llama3_8b"), key="tiny_gqa", n_layers=2, d_model=16,
                               n_heads=4, n_kv_heads=2, d_head=4, d_ff=24, vocab_size=64)
