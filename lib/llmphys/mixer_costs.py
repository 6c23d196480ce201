"""What a sequence mixer keeps and does per generated token: attention against recurrent state.

Per sequence, all layers, at a context of T tokens (b bytes per element):

    attention            KV cache  T * kv_bytes_per_token           mixer FLOP  F_attn * T
    cross-layer KV (s)   layers share a cache in groups of s: ceil(L / s) / L of attention's
    linear attention     state     L h d_k d_v b                    FLOP  5 L h d_k d_v
    Mamba-style SSM      state     L d_in (N + d_conv - 1) b        FLOP  L d_in (5 N + 2 d_conv)
    hybrid (1 in p)      attention in ceil(L / p) layers, the SSM in the others

F_attn is :func:`llmphys.kv_cache.decode_attention_flop_per_context_token`. The linear
recurrence S <- a S + k v^T, y = S^T q costs d_k d_v for the decay, 2 d_k d_v for the update
and 2 d_k d_v for the read-out per head (:mod:`llmphys.linear_recurrence`); the selective
scan h <- a h + B x, y = C h likewise 5 N per inner channel, plus a causal convolution of
width d_conv (Gu and Dao 2023, arXiv:2312.00752, sec. 3.4), d_in = expand * d_model. The
projections into and out of each mixer are left out: they are weight matmuls, counted with
the rest of the weights. Cross-layer attention: Brandon et al. 2024 (arXiv:2405.12981);
hybrids: Jamba (Lieber et al. 2024, arXiv:2403.19887), one attention layer in eight.

Home: chapters/03_architecture.ipynb, section "Beyond attention: recurrent state".
"""

from __future__ import annotations

import math

import numpy as np

from . import kv_cache, units
from .specs import Model

LINEAR_FLOP_PER_STATE_ELEMENT = 5.0
"""Decay (1), outer-product update (2) and read-out (2) per state element per token."""

CONV_FLOP_PER_TAP = 2.0
"""One multiply-add per tap of the SSM's causal convolution, per inner channel."""


def _groups(n_layers: int, every: int) -> int:
    if isinstance(every, bool) or int(every) != every or every < 1:
        raise ValueError(f"the layer period must be a whole number >= 1, got {every!r}")
    return math.ceil(n_layers / int(every))


def attention_cache_bytes(
    model: Model, *, context_tokens: float, share_every: int = 1, bytes_per_element: float = 2.0
) -> float:
    """KV cache of one sequence, with K/V shared by groups of ``share_every`` layers (bytes).

    >>> from llmphys import specs
    >>> attention_cache_bytes(specs.model("llama3_8b"), context_tokens=1, share_every=2)
    65536.0
    """
    kv = kv_cache.kv_bytes_per_token(model, bytes_per_element=bytes_per_element)
    shared = _groups(model.n_layers, share_every) / model.n_layers
    return kv * shared * units.check_positive("context_tokens", context_tokens)


def linear_attention_state_bytes(model: Model, *, bytes_per_element: float = 2.0) -> float:
    """State of one sequence if every layer's heads were linear attention, L h d^2 b (bytes).

    >>> from llmphys import specs, units
    >>> linear_attention_state_bytes(specs.model("llama3_8b")) / units.MiB  # 32 32 128^2 2
    32.0
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    return float(model.n_layers * model.n_heads * model.d_head**2 * b)


def ssm_state_bytes(
    model: Model, *, d_state: int, expand: int = 2, d_conv: int = 4, bytes_per_element: float = 2.0
) -> float:
    """State of one sequence if every layer were a Mamba-style SSM, L d_in (N + d_conv - 1) b.

    >>> from llmphys import specs
    >>> ssm_state_bytes(specs.model("llama3_8b"), d_state=16) / 32  # one layer, 8192 x 19 x 2
    311296.0
    """
    b = units.check_positive("bytes_per_element", bytes_per_element)
    d_in = expand * model.d_model
    return float(model.n_layers * d_in * (d_state + d_conv - 1) * b)


def hybrid_state_bytes(
    model: Model,
    *,
    context_tokens: float,
    attention_every: int,
    d_state: int,
    expand: int = 2,
    d_conv: int = 4,
    bytes_per_element: float = 2.0,
) -> float:
    """Attention in ceil(L / p) of the layers, an SSM in the rest: their caches and states.

    >>> from llmphys import specs
    >>> m = specs.model("mixtral_8x7b")
    >>> hybrid_state_bytes(m, context_tokens=8, attention_every=1, d_state=16) == 8 * 131072
    True
    """
    n_attn = _groups(model.n_layers, attention_every)
    frac = n_attn / model.n_layers
    kv = kv_cache.kv_bytes_per_token(model, bytes_per_element=bytes_per_element) * context_tokens
    ssm = ssm_state_bytes(
        model, d_state=d_state, expand=expand, d_conv=d_conv, bytes_per_element=bytes_per_element
    )
    return float(frac * kv + (1 - frac) * ssm)


def mixer_flop_per_token(
    model: Model,
    kind: str,
    *,
    context_tokens: float = 0.0,
    d_state: int = 16,
    expand: int = 2,
    d_conv: int = 4,
    attention_every: int = 8,
) -> float:
    """Sequence-mixer FLOP to generate one token, all layers, projections excluded (FLOP).

    ``kind``: "attention" (F_attn T), "linear" (5 L h d^2), "ssm" (L d_in (5 N + 2 d_conv)),
    "hybrid" (attention in ceil(L / p) layers, SSM in the rest).

    >>> from llmphys import specs
    >>> mixer_flop_per_token(specs.model("llama3_8b"), "linear") / 1e6  # 5 32 32 128^2
    83.88608
    """
    t = float(context_tokens)
    attn = kv_cache.decode_attention_flop_per_context_token(model) * t
    linear = LINEAR_FLOP_PER_STATE_ELEMENT * model.n_layers * model.n_heads * model.d_head**2
    d_in = expand * model.d_model
    ssm = (
        model.n_layers
        * d_in
        * (LINEAR_FLOP_PER_STATE_ELEMENT * d_state + CONV_FLOP_PER_TAP * d_conv)
    )
    if kind == "attention":
        return float(attn)
    if kind == "linear":
        return float(linear)
    if kind == "ssm":
        return float(ssm)
    if kind == "hybrid":
        frac = _groups(model.n_layers, attention_every) / model.n_layers
        return float(frac * attn + (1 - frac) * ssm)
    raise ValueError(f"kind must be attention, linear, ssm or hybrid, got {kind!r}")


def mixer_study(
    model: Model,
    *,
    contexts: np.ndarray,
    d_state: int = 16,
    expand: int = 2,
    d_conv: int = 4,
    attention_every: int = 8,
    share_every: int = 2,
) -> dict[str, dict[str, np.ndarray]]:
    """State bytes per sequence and mixer FLOP per token against context, per mixer: the
    model's attention, cross-layer KV sharing, a hybrid, linear attention, an SSM (BF16).

    >>> from llmphys import specs
    >>> s = mixer_study(specs.model("mixtral_8x7b"), contexts=np.array([1.0, 2.0]))
    >>> list(s)
    ['attention', 'cross-layer KV', 'hybrid', 'linear attention', 'SSM']
    """
    t = np.asarray(contexts, dtype=np.float64)
    ssm_kw = {"d_state": d_state, "expand": expand, "d_conv": d_conv}
    attn_flop = np.array([mixer_flop_per_token(model, "attention", context_tokens=x) for x in t])
    return {
        "attention": {
            "bytes": np.array([attention_cache_bytes(model, context_tokens=x) for x in t]),
            "flop": attn_flop,
        },
        "cross-layer KV": {
            "bytes": np.array(
                [attention_cache_bytes(model, context_tokens=x, share_every=share_every) for x in t]
            ),
            "flop": attn_flop.copy(),  # every layer still attends, over a shared cache
        },
        "hybrid": {
            "bytes": np.array(
                [
                    hybrid_state_bytes(
                        model, context_tokens=x, attention_every=attention_every, **ssm_kw
                    )
                    for x in t
                ]
            ),
            "flop": np.array(
                [
                    mixer_flop_per_token(
                        model, "hybrid", context_tokens=x, attention_every=attention_every, **ssm_kw
                    )
                    for x in t
                ]
            ),
        },
        "linear attention": {
            "bytes": np.full(t.shape, linear_attention_state_bytes(model)),
            "flop": np.full(t.shape, mixer_flop_per_token(model, "linear")),
        },
        "SSM": {
            "bytes": np.full(t.shape, ssm_state_bytes(model, **ssm_kw)),
            "flop": np.full(t.shape, mixer_flop_per_token(model, "ssm", **ssm_kw)),
        },
    }
