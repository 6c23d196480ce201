"""Chips as published training runs ran them: the registry's products plus run-specific variants.

A run's chip is not always the product on the datasheet: torchtitan's H100s ran at a 500 W power
limit with HBM2e (its own benchmark page says so), slower than the 700 W HBM3 part of
``data/accelerators.toml``. Such variants live in ``data/run_accelerators.toml`` with the same
schema and a source, like ``data/run_models.toml`` for models; ``accelerator_spec`` resolves a
key in either file, the products first. The book's hardware tables list only the products.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import functools

from .. import specs
from ..specs import Accelerator


@functools.cache
def run_accelerators() -> dict[str, Accelerator]:
    """The chip variants of ``data/run_accelerators.toml``, keyed by registry key.

    >>> a = run_accelerators()["h100_sxm_hbm2e_500w"]
    >>> a.hbm_bytes_per_s / 1e12, a.tdp_w
    (2.4, 500.0)
    """
    raw = specs.registry_table("run_accelerators.toml")
    return {
        key: specs.build_spec(Accelerator, entry, f"run_accelerators.toml[{key}]", key=key)
        for key, entry in raw.items()
    }


def accelerator_spec(key: str) -> Accelerator:
    """An accelerator by key, from accelerators.toml or, failing that, run_accelerators.toml.

    The variant's dense BF16 peak lies between the H100 NVL's and the SXM's, as its source says:

    >>> round(accelerator_spec("h100_sxm_hbm2e_500w").peak_bf16_flop_per_s / 1e12, 1)
    912.5
    >>> accelerator_spec("h100_sxm").tdp_w
    700.0
    """
    known = {**run_accelerators(), **specs.accelerators()}
    if key not in known:
        raise KeyError(f"unknown accelerator {key!r}; known: {', '.join(sorted(known))}")
    return known[key]
