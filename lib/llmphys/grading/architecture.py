"""Checks for the Implement exercises of chapter 3, architecture (see ``llmphys.grading``).

Each reference is the library's own count, called on a registry model (Llama 3 8B) whose shape
is replaced by the case's numbers, so a check and the chapter agree by construction.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from llmphys import accounting, kv_cache, specs, units
from llmphys.grading._core import Case, Feedback, Mistake, check_function

__all__: list[str] = ["check_decoder_layer_params", "check_kv_bytes_per_token"]

_SEED = 3  # every case list below is drawn once from this seed


def _gqa_model(
    *,
    n_layers: int = 1,
    d_model: int | None = None,
    n_heads: int,
    n_kv_heads: int,
    head_dim: int,
    d_ff: int | None = None,
) -> specs.Model:
    """Llama 3 8B with the given shape; a width left out keeps the registry's."""
    base = specs.model("llama3_8b")  # RoPE, RMSNorm, SwiGLU, no biases: the plain decoder
    return dataclasses.replace(
        base,
        n_layers=int(n_layers),
        d_model=int(base.d_model if d_model is None else d_model),
        n_heads=int(n_heads),
        n_kv_heads=int(n_kv_heads),
        d_head=int(head_dim),
        d_ff=int(base.d_ff if d_ff is None else d_ff),
        attention="mha" if n_kv_heads == n_heads else "gqa",
        mla=None,
        moe=None,
        sliding_window_tokens=0,
    )


def _shapes(rng: np.random.Generator, n: int) -> list[tuple[int, int, int]]:
    """(n_heads, n_kv_heads, head_dim) with n_kv_heads dividing n_heads and < n_heads."""
    out = []
    for _ in range(n):
        h = int(rng.choice([16, 32, 64, 128]))
        g = int(rng.choice([g for g in (1, 2, 4, 8) if g < h]))
        out.append((h, g, int(rng.choice([64, 128, 256]))))
    return out


# ---------------------------------------------------------------- KV cache per token
def _kv_ref(n_layers, n_heads, n_kv_heads, head_dim, bytes_per_element):
    m = _gqa_model(n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim)
    return kv_cache.kv_bytes_per_token(m, bytes_per_element=bytes_per_element)


def _kv_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED)
    cases = [
        Case(args=(int(rng.integers(8, 129)), h, g, c, float(rng.choice([0.5, 1.0, 2.0, 4.0]))))
        for h, g, c in _shapes(rng, 8)
    ]
    cases += [
        Case(args=(1, 32, 8, 128, 2.0), label="one layer (GQA-8, BF16)"),
        Case(args=(32, 32, 32, 128, 2.0), label="MHA: as many KV heads as query heads"),
        Case(args=(80, 64, 1, 128, 1.0), label="MQA: one KV head, FP8"),
        Case(args=(61, 128, 8, 128, 0.5), label="FP4 cache: half a byte per element"),
    ]
    return cases


_KV_MISTAKES = [
    Mistake(
        implementation=lambda n_l, h, g, c, b: n_l * g * c * b,
        message="off by a factor of 2: did you count both K and V? Each layer caches a key "
        "and a value vector per KV head",
    ),
    Mistake(
        implementation=lambda n_l, h, g, c, b: 2 * n_l * h * c * b,
        message="you counted query heads: in GQA and MQA only the n_kv_heads key/value heads "
        "are cached, shared by their group of query heads",
    ),
    Mistake(
        implementation=lambda n_l, h, g, c, b: 2 * g * c * b,
        message="this is one layer's cache: every one of the n_layers layers "
        "caches its own K and V",
    ),
    Mistake(
        implementation=lambda n_l, h, g, c, b: 2 * n_l * g * c * b / units.GiB,
        message="the answer is asked in bytes, not GiB (2^30 bytes)",
    ),
    Mistake(
        implementation=lambda n_l, h, g, c, b: 2 * n_l * g * c * int(b),
        message="bytes_per_element can be fractional (FP4 is 0.5 byte): "
        "do not round it to an integer",
    ),
]


def check_kv_bytes_per_token(fn: Any) -> Feedback:
    """Check ``fn(n_layers, n_heads, n_kv_heads, head_dim, bytes_per_element)``: the KV cache
    one token adds to one sequence, in bytes, 2 n_layers n_kv_heads head_dim bytes_per_element
    (reference ``kv_cache.kv_bytes_per_token``).

    >>> print(check_kv_bytes_per_token(lambda n_l, h, g, c, b: 2 * n_l * g * c * b))
    PASS arch-ex-kv-bytes (<lambda>): all 12 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="arch-ex-kv-bytes",
        reference=_kv_ref,
        cases=_kv_cases(),
        mistakes=_KV_MISTAKES,
    )


# ---------------------------------------------------------------- one decoder layer's weights
def _layer_ref(d_model, n_heads, n_kv_heads, head_dim, d_ff):
    m = _gqa_model(
        d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim, d_ff=d_ff
    )
    norms = m.n_norms_per_layer * m.d_model  # one RMSNorm gain vector per norm
    return (
        accounting.attention_params_per_layer(m) + accounting.ffn_params_per_layer(m, 0)[0] + norms
    )


def _layer_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED + 1)
    cases = []
    for h, g, c in _shapes(rng, 8):
        d = h * c if rng.random() < 0.5 else int(rng.choice([2048, 3072, 4096]))  # h c != d too
        d_ff = int(rng.choice([8, 16, 32])) * 256
        cases.append(Case(args=(d, h, g, c, d_ff)))
    l8, l70 = specs.model("llama3_8b"), specs.model("llama3_70b")
    cases += [
        Case(
            args=(l8.d_model, l8.n_heads, l8.n_kv_heads, l8.d_head, l8.d_ff),
            label="Llama 3 8B's layer",
        ),
        Case(
            args=(l70.d_model, l70.n_heads, l70.n_heads, l70.d_head, l70.d_ff),
            label="MHA: as many KV heads as query heads",
        ),
        Case(args=(l8.d_model, l8.n_heads, 1, l8.d_head, l8.d_ff), label="MQA: one KV head"),
        Case(args=(3584, 16, 8, 256, 14336), label="Gemma 2 9B shape: n_heads head_dim != d_model"),
    ]
    return cases


def _attn(d, h, g, c):
    return 2 * d * h * c + 2 * d * g * c


_LAYER_MISTAKES = [
    Mistake(
        implementation=lambda d, h, g, c, f: _attn(d, h, g, c) + 2 * d * f + 2 * d,
        message="SwiGLU has three matrices (gate, up and down), not two: "
        "3 d_model d_ff for the MLP",
    ),
    Mistake(
        implementation=lambda d, h, g, c, f: _attn(d, h, h, c) + 3 * d * f + 2 * d,
        message="you counted query heads for K and V: their projections are "
        "d_model x (n_kv_heads head_dim)",
    ),
    Mistake(
        implementation=lambda d, h, g, c, f: _attn(d, h, g, c) + 3 * d * f,
        message="almost: add the two RMSNorm gain vectors (d_model each)",
    ),
    Mistake(
        implementation=lambda d, h, g, c, f: d * h * c + 2 * d * g * c + 3 * d * f + 2 * d,
        message="the attention output projection W_O ((n_heads head_dim) x d_model) is missing",
    ),
    Mistake(
        implementation=lambda d, h, g, c, f: 2 * d * d + 2 * d * g * c + 3 * d * f + 2 * d,
        message="W_Q and W_O are d_model x (n_heads head_dim), which is not d_model x d_model "
        "when n_heads head_dim != d_model",
    ),
]


def check_decoder_layer_params(fn: Any) -> Feedback:
    """Check ``fn(d_model, n_heads, n_kv_heads, head_dim, d_ff)``: the parameters of one
    pre-norm decoder layer with grouped-query attention, a SwiGLU MLP, two RMSNorms and no
    biases, 2 d h c + 2 d g c + 3 d d_ff + 2 d (reference ``accounting``'s per-layer counts).

    >>> def layer(d, h, g, c, f):
    ...     return 2 * d * h * c + 2 * d * g * c + 3 * d * f + 2 * d
    >>> check_decoder_layer_params(layer).passed
    True
    """
    return check_function(
        fn,
        exercise="arch-ex-layer-params",
        reference=_layer_ref,
        cases=_layer_cases(),
        mistakes=_LAYER_MISTAKES,
    )
