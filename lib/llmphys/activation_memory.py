"""Activation memory: the bytes a forward pass keeps for backward, with and without recomputation.

Measured on the tiny model of ``tinylm`` by adding up the arrays its forward pass
hands to the backward pass, and predicted in closed form. Per block, on a batch of B
windows of T tokens, width d, H heads and MLP width F, the backward pass reads

    x, x_hat (RMSNorm output and normalised input)   2 B T d, and r: B T
    q, k, v                                           3 B T d
    attention weights                                 B H T^2
    o (heads merged)                                  B T d
    y, y_hat, r (second RMSNorm)                      2 B T d + B T
    u, z (MLP pre- and post-activation)               2 B T F

that is B T (8 d + 2 F + 2) + B H T^2 elements per block, plus 2 B T d + B T for
the final norm and B T V for the logits. Activation checkpointing (Chen et al. 2016,
arXiv:1604.06174) keeps only each block's input, B T d, and recomputes one block at a
time during backward, so the peak is L B T d + one block's set: memory O(L) smaller
for one extra forward pass. At real scale ``parallelism.activation_bytes_per_layer``
gives Korthikanti et al. 2022's 16-bit count.

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import tinylm, units


def _nbytes(obj) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    return sum(_nbytes(x) for x in obj)


def measured_bytes(
    params: dict[str, np.ndarray], inputs: np.ndarray, *, checkpoint: bool = False
) -> dict[str, float]:
    """Bytes of the arrays the tiny model's forward pass keeps for its backward pass.

    Parts: ``blocks`` (every block's saved tensors, or with ``checkpoint`` only the block
    inputs), ``recompute`` (one block's tensors rebuilt during backward under
    ``checkpoint``, else 0), ``head`` (final norm and logits) and ``total`` (the peak).

    >>> p = tinylm.init_params(vocab_size=8, context_tokens=8, rng=np.random.default_rng(0))
    >>> x = np.zeros((4, 8), dtype=np.int64)
    >>> [measured_bytes(p, x, checkpoint=c)["total"] for c in (False, True)]
    [224512.0, 137984.0]
    """
    inputs = np.atleast_2d(np.asarray(inputs))
    logits, cache = tinylm.forward(params, inputs, checkpoint=checkpoint)
    head = float(_nbytes(cache["final"]) + logits.nbytes)
    if not checkpoint:
        blocks, recompute = float(_nbytes(cache["layers"])), 0.0
    else:
        blocks = float(_nbytes(cache["layer_inputs"]))
        recompute = float(
            max(_nbytes(tinylm.block(params, i, h)[0]) for i, h in enumerate(cache["layer_inputs"]))
        )
    return {
        "blocks": blocks,
        "recompute": recompute,
        "head": head,
        "total": blocks + recompute + head,
    }


def tinylm_activation_bytes(
    *,
    batch_size: int,
    context_tokens: int,
    d_model: int,
    n_heads: int,
    d_ff: int,
    n_layers: int,
    vocab_size: int,
    bytes_per_element: float = 8.0,
    checkpoint: bool = False,
) -> dict[str, float]:
    """Closed form of ``measured_bytes``: the parts, in bytes, for the tiny model's shapes.

    Per block B T (8 d + 2 F + 2) + B H T^2 elements; head 2 B T d + B T + B T V; under
    checkpointing the blocks keep L B T d and one block is rebuilt at a time.

    >>> tinylm_activation_bytes(batch_size=4, context_tokens=8, d_model=32, n_heads=2,
    ...                         d_ff=64, n_layers=2, vocab_size=8)["total"]
    224512.0
    """
    for name, v in (
        ("batch_size", batch_size),
        ("context_tokens", context_tokens),
        ("d_model", d_model),
        ("n_heads", n_heads),
        ("d_ff", d_ff),
        ("n_layers", n_layers),
        ("vocab_size", vocab_size),
        ("bytes_per_element", bytes_per_element),
    ):
        units.check_positive(name, v)
    bt, b = batch_size * context_tokens, bytes_per_element
    one_block = b * (bt * (8 * d_model + 2 * d_ff + 2) + batch_size * n_heads * context_tokens**2)
    head = b * (bt * (2 * d_model + 1) + bt * vocab_size)
    if checkpoint:
        blocks, recompute = b * n_layers * bt * d_model, one_block
    else:
        blocks, recompute = n_layers * one_block, 0.0
    return {
        "blocks": float(blocks),
        "recompute": float(recompute),
        "head": float(head),
        "total": float(blocks + recompute + head),
    }


REVERSIBLE_RTOL = 1e-12
"""Relative error under which a rebuilt block input counts as the stored one (float64 round-off
over a few dozen blocks is about 1e-15; a wrong inverse is off by order 1)."""


def reversible_reconstruction(
    *, n_blocks: int = 8, d_model: int = 64, n_tokens: int = 32, seed: int = 0
) -> dict[str, float]:
    """Run a stack of reversible (RevNet) blocks forward, then rebuild every block's input from
    the last output alone, as the backward pass of a reversible network does.

    Each block splits the stream into halves (x1, x2) and computes y1 = x1 + F(x2),
    y2 = x2 + G(y1), with F and G small tanh MLPs; the inverse is x2 = y2 − G(y1),
    x1 = y1 − F(x2) (Gomez et al. 2017, "The Reversible Residual Network", eqs. 1–2; Reformer,
    Kitaev et al. 2020, uses the same coupling). Float64 throughout.

    Returns ``max_rel_error`` (largest |rebuilt − stored| / |stored| over every block input: the
    round-off the inversion adds; it differs between CPUs in its last digits), ``n_rebuilt``
    (blocks whose input is rebuilt within :data:`REVERSIBLE_RTOL`), ``stored_bytes_plain``
    (every block input kept, as a plain residual stack keeps them for its backward pass),
    ``stored_bytes_reversible`` (the last output only) and ``extra_forward_flop_share`` (the
    inversion recomputes F and G once per block: one extra forward pass, the price of the
    saving).

    >>> r = reversible_reconstruction(n_blocks=4)
    >>> r["max_rel_error"] < 1e-12, r["stored_bytes_plain"] / r["stored_bytes_reversible"]
    (True, 5.0)
    """
    for name, v in (("n_blocks", n_blocks), ("d_model", d_model), ("n_tokens", n_tokens)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: a positive integer, got {v!r}")
    if d_model % 2:
        raise ValueError(f"d_model: even (the stream is split in two halves), got {d_model}")
    rng = np.random.default_rng(seed)
    h = d_model // 2
    weights = [
        tuple(rng.normal(0.0, 1.0 / np.sqrt(h), size=(h, h)) for _ in range(4))
        for _ in range(n_blocks)
    ]

    def mlp(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.tanh(x @ a) @ b

    x1, x2 = rng.normal(size=(n_tokens, h)), rng.normal(size=(n_tokens, h))
    inputs = []
    for f1, f2, g1, g2 in weights:
        inputs.append((x1, x2))
        y1 = x1 + mlp(x2, f1, f2)
        x2 = x2 + mlp(y1, g1, g2)
        x1 = y1
    err, n_ok = 0.0, 0
    for (f1, f2, g1, g2), (s1, s2) in zip(reversed(weights), reversed(inputs), strict=True):
        x2 = x2 - mlp(x1, g1, g2)
        x1 = x1 - mlp(x2, f1, f2)
        e = max(
            float(np.max(np.abs(x1 - s1)) / np.max(np.abs(s1))),
            float(np.max(np.abs(x2 - s2)) / np.max(np.abs(s2))),
        )
        err, n_ok = max(err, e), n_ok + (e < REVERSIBLE_RTOL)
    block_bytes = 2 * n_tokens * h * 8
    return {
        "max_rel_error": err,
        "n_rebuilt": float(n_ok),
        "stored_bytes_plain": float((n_blocks + 1) * block_bytes),
        "stored_bytes_reversible": float(block_bytes),
        "extra_forward_flop_share": 1.0,
    }
