"""The weights a step streams from memory: dense weights always, routed experts as touched.

A decode or prefill step reads every weight some token multiplies. For a dense model that is
every parameter but the looked-up input embedding; for a mixture of experts, the routed
experts that at least one of the B tokens is sent to: E (1 - (1 - k/E)^B) of E per MoE layer
under uniform routing. :func:`streamed_params` is the book's one count of streamed weights;
``inference``, ``predict.serve`` and the grading checks read it (``inference`` re-exports
these functions, so ``inference.weight_bytes_read`` is this one).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import accounting, moe, units
from .specs import Model


def _positive_array(name: str, value) -> np.ndarray:
    x = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(x)) or np.any(x <= 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return x


def _out(x: np.ndarray):
    return float(x) if np.ndim(x) == 0 else x


def experts_touched(model: Model, *, batch_size) -> float | np.ndarray:
    """Expected routed experts per MoE layer that at least one of B tokens uses.

    E (1 - (1 - k/E)^B) (:func:`~llmphys.moe.expected_experts_touched` for the model's E and
    k), assuming each token picks k of E experts uniformly
    (DeepSeek-V3's auxiliary-loss-free balancing aims at this; sec. 2.1.2).

    >>> from llmphys import specs
    >>> round(experts_touched(specs.model("deepseek_v3"), batch_size=64), 1)
    222.4
    """
    b = _positive_array("batch_size", batch_size)
    if model.moe is None:
        raise ValueError(f"{model.key} is dense: it has no routed experts")
    return _out(
        np.asarray(
            moe.expected_experts_touched(
                n_experts=model.moe.n_experts, k=model.moe.n_experts_per_token, n_tokens=b
            )
        )
    )


def _expert_params(model: Model) -> float:
    assert model.moe is not None, "called for MoE models only"
    return accounting.mlp_params(model, model.moe.d_ff_expert)


def _n_moe_layers(model: Model) -> int:
    """Kept for callers outside this module: :func:`llmphys.accounting.n_moe_layers`."""
    return accounting.n_moe_layers(model)


def streamed_params(model: Model, *, batch_size) -> dict[str, float | np.ndarray]:
    """Parameters one step of B tokens reads from memory, split into the dense part and the
    routed experts.

    dense: every weight each token multiplies but the routed experts (attention, dense FFN,
    shared experts, norms, router, output head); the input embedding is looked up, not
    streamed, but a table tied to the output head is read once as the head.
    experts: L_moe E (1 - (1 - k/E)^B) expert FFNs (:func:`experts_touched`), each read once
    however many of the step's tokens it serves. The one count of streamed weights:
    :func:`weight_bytes_read`, ``predict.serve`` and the grading checks use it.

    >>> from llmphys import specs
    >>> r = streamed_params(specs.model("deepseek_v3"), batch_size=1)
    >>> round(r["dense"] / 1e9, 2), round(r["experts"] / 1e9, 2)  # B params: 8 experts x 58
    (16.19, 20.43)
    """
    batch = _positive_array("batch_size", batch_size)
    lookup = accounting.embedding_params(model) - (
        model.vocab_size * model.d_model if model.tied_embeddings else 0.0
    )
    n_moe = accounting.n_moe_layers(model)
    routed = n_moe * model.moe.n_experts * _expert_params(model) if model.moe else 0.0
    dense = accounting.n_params(model) - lookup - routed
    if model.moe is None:
        return {"dense": dense, "experts": _out(0.0 * batch)}
    touched = n_moe * np.asarray(experts_touched(model, batch_size=batch))
    return {"dense": dense, "experts": _out(touched * _expert_params(model))}


def weight_bytes_read(model: Model, *, batch_size, weight_bytes_per_param: float = 2.0):
    """Bytes of weights one decode step of B tokens reads: :func:`streamed_params` times the
    bytes per parameter.

    Dense: every weight a token multiplies. MoE: all but the routed experts no token uses,
    under uniform routing (:func:`experts_touched`). Input embeddings are looked up, not
    streamed. ``inference.decode_step`` and ``inference.decode_tokens_per_s`` use it.

    >>> from llmphys import specs
    >>> round(weight_bytes_read(specs.model("llama3_70b"), batch_size=1) / 1e9, 1)
    139.0
    """
    b = units.check_positive("weight_bytes_per_param", weight_bytes_per_param)
    r = streamed_params(model, batch_size=batch_size)
    return _out(b * (r["dense"] + np.asarray(r["experts"])))


def weight_bytes_stored(model: Model, *, weight_dtype: str = "bf16") -> float:
    """Bytes to hold every parameter, embedding included: N b."""
    return accounting.n_params(model) * units.bytes_per_element(weight_dtype)
