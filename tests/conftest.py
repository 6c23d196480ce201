"""Shared fixtures. Figures render off screen; randomness is seeded explicitly."""

import dataclasses

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from llmphys import specs  # noqa: E402


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
