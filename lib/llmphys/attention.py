"""Causal self-attention in numpy: RoPE, MHA/MQA/GQA, sliding windows, MLA, a KV cache.

Teaching code for the tiny decoder in ``transformer.py``. Shapes are written
(T, h, c): T tokens, h heads, c dims per head. One attention function serves
every variant; what differs is *what is cached*:

    MHA   keys and values of every head            (g = h)
    GQA   g < h key/value heads, each shared by h/g query heads
    MQA   one key/value head                        (g = 1)
    MLA   one latent c_KV of width r and one shared RoPE key of width r_R
    SWA   any of the above, but only the last W positions

Refs: Vaswani et al. 2017 (arXiv:1706.03762) sec. 3.2; Shazeer 2019
(arXiv:1911.02150); Ainslie et al. 2023 (arXiv:2305.13245); Su et al. 2021
(RoPE, arXiv:2104.09864) sec. 3.4; DeepSeek-AI 2024 (MLA, arXiv:2405.04434)
sec. 2.1; Jiang et al. 2023 (Mistral sliding window, arXiv:2310.06825).

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .nn import rms_norm, softmax
from .specs import Model

ROPE_BASE = 10_000.0  # RoFormer's and Llama 2's base; Llama 3 uses 500,000


def apply_rope(x: np.ndarray, positions: np.ndarray, base: float = ROPE_BASE) -> np.ndarray:
    """Rotate each pair (x[2i], x[2i+1]) of x (T, heads, c) by angle m * base^(-2i/c).

    RoFormer sec. 3.4: the rotation makes <R_m q, R_n k> a function of q, k and m - n only.

    >>> q = np.ones((1, 1, 4)); k = np.ones((1, 1, 4))
    >>> a = apply_rope(q, np.array([5])) @ apply_rope(k, np.array([2]))[0, 0]
    >>> b = apply_rope(q, np.array([13])) @ apply_rope(k, np.array([10]))[0, 0]
    >>> bool(np.isclose(a, b).all())
    True
    """
    c = x.shape[-1]
    if c % 2:
        raise ValueError(f"RoPE needs an even head width, got {c}")
    inv_freq = base ** (-np.arange(0, c, 2) / c)  # (c/2,) one frequency per pair
    angle = np.asarray(positions, dtype=float)[:, None, None] * inv_freq  # (T, 1, c/2)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)  # keep fp32 fp32
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    q_pos: np.ndarray,
    k_pos: np.ndarray,
    window: int = 0,
    *,
    causal: bool = True,
    return_weights: bool = False,
):
    """softmax(q k^T / sqrt(c) + mask) v; q (..., Tq, h, c), k (..., Tk, g, c), v (..., Tk, g, c_v).

    The one attention of the library's numpy decoders (``transformer`` and ``tinylm``); any
    leading axes are a batch. Query head i reads key/value head i // (h/g): MHA, GQA and MQA
    differ only in g. The mask allows key position j for query position i iff j <= i (and
    j > i - W with a sliding window of W positions, the query's own included); ``causal=False``
    allows every j. Returns the output (..., Tq, h, c_v), and with ``return_weights`` also the
    attention weights (..., h, Tq, Tk).

    >>> q = k = v = np.eye(3)[:, None, :]  # three positions, one head
    >>> attend(q, k, v, np.arange(3), np.arange(3), return_weights=True)[1][0, 0].round(3)
    array([1., 0., 0.])
    """
    h, g = q.shape[-2], k.shape[-2]
    if h != g:  # share each K/V head among h/g query heads
        k, v = np.repeat(k, h // g, axis=-2), np.repeat(v, h // g, axis=-2)
    qh, kh, vh = (np.swapaxes(x, -2, -3) for x in (q, k, v))  # (..., h, T, c)
    scores = qh @ np.swapaxes(kh, -1, -2) / math.sqrt(q.shape[-1])  # a Python float keeps fp32
    allowed = np.ones((len(q_pos), len(k_pos)), dtype=bool)
    if causal:
        allowed &= k_pos[None, :] <= q_pos[:, None]
    if window:
        allowed &= k_pos[None, :] > q_pos[:, None] - window
    weights = softmax(np.where(allowed, scores, -np.inf))
    out = np.swapaxes(weights @ vh, -2, -3)
    return (out, weights) if return_weights else out


@dataclasses.dataclass
class KVCache:
    """Per-layer cached tensors plus their token positions; ``nbytes`` counts the tensors only."""

    layers: list[dict[str, np.ndarray]]
    n_tokens: int = 0  # tokens seen so far: the position of the next token

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for layer in self.layers for name, a in layer.items() if name != "pos")


def new_cache(model: Model) -> KVCache:
    """An empty cache with one slot per layer."""
    return KVCache(layers=[{} for _ in range(model.n_layers)])


def _append(slot: dict, window: int, pos: np.ndarray, **new: np.ndarray) -> dict:
    """Concatenate new rows onto the cached ones; keep only the last W rows afterwards."""
    full = {name: np.concatenate([slot[name], a]) if name in slot else a for name, a in new.items()}
    full["pos"] = np.concatenate([slot["pos"], pos]) if "pos" in slot else pos
    slot.clear()
    slot.update({name: a[-window:] if window else a for name, a in full.items()})
    return full  # attention of this step still sees every row, the mask applies the window


def gqa_attention(x: np.ndarray, p: dict, model: Model, pos: np.ndarray, slot: dict) -> np.ndarray:
    """MHA / GQA / MQA layer on x (T, d): project, rotate, cache K and V, attend, project out."""
    t, h, g, c = x.shape[0], model.n_heads, model.n_kv_heads, model.d_head
    q, k, v = x @ p["w_q"], x @ p["w_k"], x @ p["w_v"]
    if model.qkv_bias:
        q, k, v = q + p["b_q"], k + p["b_k"], v + p["b_v"]
    q = apply_rope(q.reshape(t, h, c), pos)
    k = apply_rope(k.reshape(t, g, c), pos)
    full = _append(slot, model.sliding_window_tokens, pos, k=k, v=v.reshape(t, g, c))
    out = attend(q, full["k"], full["v"], pos, full["pos"], model.sliding_window_tokens)
    return out.reshape(t, h * c) @ p["w_o"]


def mla_attention(x: np.ndarray, p: dict, model: Model, pos: np.ndarray, slot: dict) -> np.ndarray:
    """Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, sec. 2.1) on x (T, d).

    Cached per token: the normed latent c_KV (width r) and one RoPE key k_R (width r_R)
    shared by all heads. Per-head K_nope and V are re-expanded from c_KV at every
    step (the 'naive' form; production kernels absorb W_UK into the query instead).
    """
    a, t, h = model.mla, x.shape[0], model.n_heads
    assert a is not None, "called for MLA models only"
    nope, rope, r = a.qk_nope_head_dim, a.qk_rope_head_dim, a.kv_lora_rank
    if a.q_lora_rank:
        q = rms_norm(x @ p["w_dq"], p["q_norm"]) @ p["w_uq"]
    else:
        q = x @ p["w_q"]
    q = q.reshape(t, h, nope + rope)
    q = np.concatenate([q[..., :nope], apply_rope(q[..., nope:], pos)], axis=-1)
    ckv = x @ p["w_dkv"]  # (T, r + r_R): latent and decoupled RoPE key in one projection
    latent = rms_norm(ckv[:, :r], p["kv_norm"])
    k_rope = apply_rope(ckv[:, None, r:], pos)[:, 0]
    full = _append(slot, model.sliding_window_tokens, pos, c_kv=latent, k_rope=k_rope)
    kv = (full["c_kv"] @ p["w_ukv"]).reshape(-1, h, nope + a.v_head_dim)
    k_r = np.broadcast_to(full["k_rope"][:, None, :], (kv.shape[0], h, rope))
    k = np.concatenate([kv[..., :nope], k_r], axis=-1)
    out = attend(q, k, kv[..., nope:], pos, full["pos"], model.sliding_window_tokens)
    return out.reshape(t, h * a.v_head_dim) @ p["w_o"]
