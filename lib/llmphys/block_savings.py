"""What a parallel attention+MLP block and tied embeddings save, counted on a model's shape.

Serial (pre-norm) block:    y = x + MLP(N2(x + Attn(N1(x))))
Parallel block (GPT-J, Wang and Komatsuzaki 2021; PaLM, Chowdhery et al. 2022, sec. 2):
                            y = x + MLP(N(x)) + Attn(N(x))

Per layer the parallel block has one norm instead of two (d gain parameters for RMSNorm, 2d
for LayerNorm), one norm kernel and one residual add fewer per token (2d + 3d elements read
and written when each runs as its own kernel, as
:func:`llmphys.accounting.elementwise_bytes_per_token` counts them), and the attention and
MLP input projections read the same input, so they fuse into one matmul of width
(h + 2g) c + n d_ff (n = 2 for a gated MLP). Under tensor parallelism the two branch outputs
are partial sums that can be added before one all-reduce, so the forward pass does one
all-reduce per layer instead of two (Megatron-LM, Shoeybi et al. 2019, sec. 3, counts two).
FLOP do not change.

Tied embeddings (Press and Wolf 2017, arXiv:1608.05859) use the input embedding matrix as the
output head: V d parameters fewer, and nothing fewer in FLOP (the head's matmul still runs).

Home: chapters/03_architecture.ipynb, section "Parallel blocks and tied embeddings".
"""

from __future__ import annotations

import dataclasses

from . import accounting, units
from .specs import Model

SERIAL_ALLREDUCES_PER_LAYER = 2
"""Forward all-reduces per layer under Megatron tensor parallelism, serial block (sec. 3)."""

PARALLEL_ALLREDUCES_PER_LAYER = 1
"""The same for a parallel block: both branches' partial sums are added, then reduced once."""

PALM_PARALLEL_SPEEDUP_PCT = 15.0
"""PaLM's "roughly 15% faster training speed at large scales" from the parallel formulation,
with "a small quality degradation at 8B scale but no quality degradation at 62B scale"
(Chowdhery et al. 2022, arXiv:2204.02311, sec. 2)."""

RESIDUAL_ADD_ELEMENTS = 3.0
"""Elements moved by an unfused residual add per width: read two streams, write one."""

NORM_ELEMENTS = 2.0
"""Elements moved by an unfused norm per width: read one stream, write one."""


def parallel_block_savings(model: Model, *, bytes_per_element: float = 2.0) -> dict[str, float]:
    """What making every layer of ``model`` a parallel block saves (its serial form assumed).

    norm_params: one norm's gains per layer (a count); elementwise_bytes: HBM bytes per token
    of one norm and one residual add per layer; elementwise_share: that over the unfused
    non-matmul bytes of the serial model; allreduces_per_layer: forward all-reduces saved
    under tensor parallelism; fused_input_width: output width of the fused input matmul.

    >>> from llmphys import specs
    >>> s = parallel_block_savings(specs.model("llama3_8b"))
    >>> int(s["norm_params"]), int(s["fused_input_width"])  # 32 x 4096; 6144 + 2 x 14336
    (131072, 34816)
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    if model.n_norms_per_layer != 2:
        raise ValueError(
            f"model {model.key!r} has {model.n_norms_per_layer} norms per layer; the count "
            "assumes a pre-norm serial block with two"
        )
    L, d = model.n_layers, model.d_model
    per_norm = 2 * d if model.norm == "layernorm" else d
    moved = L * (NORM_ELEMENTS + RESIDUAL_ADD_ELEMENTS) * d * b
    serial = sum(accounting.elementwise_bytes_per_token(model, bytes_per_element=b).values())
    qkv = (model.n_heads + 2 * model.n_kv_heads) * model.d_head
    up = (2 if model.mlp in ("swiglu", "geglu") else 1) * model.d_ff
    return {
        "norm_params": float(L * per_norm),
        "elementwise_bytes": float(moved),
        "elementwise_share": float(moved / serial),
        "allreduces_per_layer": float(SERIAL_ALLREDUCES_PER_LAYER - PARALLEL_ALLREDUCES_PER_LAYER),
        "fused_input_width": float(qkv + up),
    }


def tying_savings(model: Model) -> dict[str, float]:
    """Parameters that tying the output head to the input embeddings saves, and their share of
    the untied model (count; dimensionless), for ``model``'s shape whether or not it is tied.

    >>> from llmphys import specs
    >>> s = tying_savings(specs.model("llama3_8b"))
    >>> int(s["params"]), round(100 * s["share"], 2)  # 128,256 x 4,096
    (525336576, 6.54)
    """
    untied = dataclasses.replace(model, tied_embeddings=False)
    tied = dataclasses.replace(model, tied_embeddings=True)
    saved = accounting.n_params(untied) - accounting.n_params(tied)
    return {"params": float(saved), "share": float(saved / accounting.n_params(untied))}
