"""FlashAttention as memory engineering: the HBM bytes of naive and tiled attention, counted.

Both versions below run on a simulated two-level memory. Arrays in "HBM" may only
be touched through ``Hbm.load`` and ``Hbm.store``, which count the bytes they move;
anything between a load and a store is on-chip (SRAM, registers) and free. For one
head with N queries and keys of width d (elements of b bytes):

    naive (Dao et al. 2022, alg. 0)   load Q, K; write S = QK^T/sqrt(d); read S; write
                                      P = softmax(S); read P, V; write O = PV
                                      b (4 N d + 4 N^2)                     Theta(N d + N^2)
    tiled (Dao et al. 2022, alg. 1)   outer loop over T_c key/value blocks of B_c rows,
                                      inner loop over query blocks of B_r rows; the online
                                      softmax keeps a running max m and sum l per row
                                      b (3 N d + 2 N + T_c (3 N d + 4 N))  Theta(N^2 d^2 / M)

with B_c = ceil(M / 4d), B_r = min(B_c, d) and T_c = ceil(N / B_c) for an SRAM of M
elements (Dao et al. 2022, arXiv:2205.14135, alg. 1 and theorem 2). The tiled
version never stores an N x N array, and its output equals the naive one to
round-off (tests/test_flash_attention.py). Both do 4 N^2 d FLOP of matrix products
(no masked tile is skipped), so the bytes alone move the intensity on the roofline.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import attention, nn, transformer, units
from .specs import Model

# Shared memory per SM of an H100: "up to 228 KB" (NVIDIA H100 Tensor Core GPU
# Architecture whitepaper, 2022, sec. "H100 SM architecture"), taken as KiB.
H100_SRAM_PER_SM_BYTES = 228 * units.KiB


class Hbm:
    """A byte counter standing for off-chip memory: every load and store is tallied."""

    def __init__(self) -> None:
        self.read_bytes = 0
        self.write_bytes = 0

    def load(self, a: np.ndarray) -> np.ndarray:
        """Copy ``a`` on chip, counting its bytes as read."""
        self.read_bytes += a.nbytes
        return a.copy()

    def store(self, dst: np.ndarray, index, value: np.ndarray) -> None:
        """Write ``value`` into ``dst[index]``, counting its bytes as written."""
        value = np.asarray(value, dtype=dst.dtype)
        dst[index] = value
        self.write_bytes += value.nbytes

    def traffic(self) -> dict[str, float]:
        return {
            "read_bytes": float(self.read_bytes),
            "write_bytes": float(self.write_bytes),
            "total_bytes": float(self.read_bytes + self.write_bytes),
        }


def _check_qkv(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
    for name, a in (("q", q), ("k", k), ("v", v)):
        if np.ndim(a) != 2:
            raise ValueError(
                f"{name} must be a 2-D (tokens, width) array of one head, got shape {np.shape(a)}"
            )
    if not q.shape == k.shape or v.shape[0] != k.shape[0]:
        raise ValueError(
            f"q and k must have equal shapes (N, d) and v N rows; got "
            f"{q.shape}, {k.shape}, {v.shape}"
        )


def _causal(s: np.ndarray, q_pos: np.ndarray, k_pos: np.ndarray) -> np.ndarray:
    return np.where(k_pos[None, :] <= q_pos[:, None], s, -np.inf)


def naive_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, *, causal: bool = True
) -> tuple[np.ndarray, dict[str, float]]:
    """Causal attention of one head as three HBM round trips; returns (output, traffic bytes).

    Dao et al. 2022, alg. 0: S and P, each N x N, are written to HBM and read back.

    >>> x = np.ones((16, 4), dtype=np.float32)
    >>> naive_attention(x, x, x)[1]["total_bytes"] == naive_hbm_bytes(16, 4, bytes_per_element=4)
    True
    """
    _check_qkv(q, k, v)
    n, d = q.shape
    hbm, pos = Hbm(), np.arange(n)
    s_hbm = np.empty((n, n), q.dtype)
    p_hbm = np.empty((n, n), q.dtype)
    out = np.empty((n, v.shape[1]), q.dtype)
    s = hbm.load(q) @ hbm.load(k).T / math.sqrt(d)
    hbm.store(s_hbm, ..., _causal(s, pos, pos) if causal else s)
    hbm.store(p_hbm, ..., nn.softmax(hbm.load(s_hbm)))
    hbm.store(out, ..., hbm.load(p_hbm) @ hbm.load(v))
    return out, hbm.traffic()


def block_sizes(d_head: int, *, sram_bytes: float, bytes_per_element: float) -> tuple[int, int]:
    """(B_r, B_c): query and key rows per tile, B_c = ceil(M / 4d), B_r = min(B_c, d).

    M = sram_bytes / bytes_per_element elements (Dao et al. 2022, alg. 1, line 1).

    >>> block_sizes(128, sram_bytes=H100_SRAM_PER_SM_BYTES, bytes_per_element=2.0)
    (128, 228)
    """
    units.check_positive("d_head", d_head)
    m = units.check_positive("sram_bytes", sram_bytes) / units.check_positive(
        "bytes_per_element", bytes_per_element
    )
    if m < 4 * d_head:
        raise ValueError(
            f"sram_bytes={sram_bytes!r} holds {m:.0f} elements; a tile needs at "
            f"least 4 d_head = {4 * d_head}"
        )
    bc = math.ceil(m / (4 * d_head))
    return min(bc, int(d_head)), bc


def flash_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, *, sram_bytes: float, causal: bool = True
) -> tuple[np.ndarray, dict[str, float]]:
    """Tiled attention with an online softmax (Dao et al. 2022, alg. 1); returns (output, traffic).

    For each key/value block j and query block i: m~ = rowmax(S_ij), P~ = exp(S_ij - m~),
    l~ = rowsum(P~), m' = max(m, m~), l' = e^(m - m') l + e^(m~ - m') l~,
    O_i <- (l e^(m - m') O_i + e^(m~ - m') P~ V_j) / l'. Only O, l and m go back to HBM.

    >>> x = np.ones((16, 4), dtype=np.float32)
    >>> t = flash_attention(x, x, x, sram_bytes=256)[1]["total_bytes"]
    >>> t == flash_hbm_bytes(16, 4, sram_bytes=256, bytes_per_element=4)
    True
    """
    _check_qkv(q, k, v)
    n, d = q.shape
    br, bc = block_sizes(d, sram_bytes=sram_bytes, bytes_per_element=q.itemsize)
    hbm, pos = Hbm(), np.arange(n)
    out = np.empty((n, v.shape[1]), q.dtype)
    l_hbm, m_hbm = np.empty(n, q.dtype), np.empty(n, q.dtype)
    hbm.store(out, ..., np.zeros_like(out))  # alg. 1, line 2
    hbm.store(l_hbm, ..., np.zeros(n))
    hbm.store(m_hbm, ..., np.full(n, -np.inf))
    for j in range(0, n, bc):
        kj, vj = hbm.load(k[j : j + bc]), hbm.load(v[j : j + bc])
        for i in range(0, n, br):
            rows = slice(i, i + br)
            qi, oi, li, mi = (hbm.load(a[rows]) for a in (q, out, l_hbm, m_hbm))
            s = qi @ kj.T / math.sqrt(d)
            if causal:
                s = _causal(s, pos[rows], pos[j : j + bc])
            m_tile = s.max(axis=1)
            with np.errstate(invalid="ignore"):  # a fully masked row: exp(-inf) = 0
                p = np.exp(s - np.where(np.isinf(m_tile), 0.0, m_tile)[:, None])
                m_new = np.maximum(mi, m_tile)
                old, new = np.exp(mi - m_new), np.exp(m_tile - m_new)
            old, new = np.nan_to_num(old), np.nan_to_num(new)
            l_new = old * li + new * p.sum(axis=1)
            hbm.store(
                out, rows, ((li * old)[:, None] * oi + new[:, None] * (p @ vj)) / l_new[:, None]
            )
            hbm.store(l_hbm, rows, l_new)
            hbm.store(m_hbm, rows, m_new)
    return out, hbm.traffic()


def naive_hbm_bytes(n_tokens: int, d_head: int, *, bytes_per_element: float = 2.0) -> float:
    """Bytes naive attention moves for one head: b (4 N d + 4 N^2) (Dao et al. 2022, alg. 0).

    >>> round(naive_hbm_bytes(8192, 128) / units.MB, 1)  # decimal MB, one BF16 head at 8K
    545.3
    """
    n, d = units.check_positive("n_tokens", n_tokens), units.check_positive("d_head", d_head)
    return units.check_positive("bytes_per_element", bytes_per_element) * (4 * n * d + 4 * n * n)


def flash_hbm_bytes(
    n_tokens: int, d_head: int, *, sram_bytes: float, bytes_per_element: float = 2.0
) -> float:
    """Bytes tiled attention moves for one head: b (3 N d + 2 N + T_c (3 N d + 4 N)).

    T_c = ceil(N / B_c) key/value blocks; for N >> B_c this is about 12 b N^2 d^2 / M
    (Dao et al. 2022, theorem 2), M = SRAM elements.

    >>> round(flash_hbm_bytes(8192, 128, sram_bytes=H100_SRAM_PER_SM_BYTES) / units.MB, 1)
    235.2
    """
    n, d = units.check_positive("n_tokens", n_tokens), units.check_positive("d_head", d_head)
    _, bc = block_sizes(int(d), sram_bytes=sram_bytes, bytes_per_element=bytes_per_element)
    t_c = math.ceil(n / bc)
    return bytes_per_element * (3 * n * d + 2 * n + t_c * (3 * n * d + 4 * n))


def attention_flop(n_tokens: int, d_head: int) -> float:
    """FLOP of one head's two matrix products, QK^T and PV, over the full N x N square: 4 N^2 d.

    >>> attention_flop(1024, 64) / 2**28
    1.0
    """
    n, d = units.check_positive("n_tokens", n_tokens), units.check_positive("d_head", d_head)
    return 4.0 * n * n * d


def score_matrix_bytes(n_tokens: int, *, n_heads: int = 1, bytes_per_element: float = 2.0) -> float:
    """Bytes of the N x N score matrix S that naive attention stores, for ``n_heads`` heads.

    The softmax weights P are another array of the same size; FlashAttention stores neither.

    >>> round(score_matrix_bytes(131_072) / 1e9, 1)  # one BF16 head at 128K tokens, GB
    34.4
    >>> round(score_matrix_bytes(131_072, n_heads=64) / 1e12, 1)  # one layer of 64 heads, TB
    2.2
    """
    n = units.check_positive("n_tokens", n_tokens)
    h = units.check_positive("n_heads", n_heads)
    b = units.check_positive("bytes_per_element", bytes_per_element)
    return h * n * n * b


def decoder_qkv(
    params: dict, model: Model, tokens, *, head: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rotated q, k and v (N, c) of one head of the first layer of ``transformer``'s decoder.

    The same projections as ``attention.gqa_attention`` (MHA, GQA, MQA models only).
    """
    if model.mla is not None:
        raise ValueError(f"model {model.key!r} uses MLA; decoder_qkv covers MHA, GQA and MQA")
    if not 0 <= head < model.n_heads:
        raise ValueError(f"head must lie in [0, {model.n_heads}), got {head!r}")
    tokens = np.asarray(tokens)
    layer, pos = params["layers"][0], np.arange(tokens.size)
    x = transformer._norm(params["embed"][tokens], layer["attn_norm"])
    c, g = model.d_head, head // (model.n_heads // model.n_kv_heads)
    w = layer["attn"]
    q, k, v = (x @ w[f"w_{n}"] + (w[f"b_{n}"] if model.qkv_bias else 0.0) for n in "qkv")
    q = attention.apply_rope(q.reshape(-1, model.n_heads, c), pos)
    k = attention.apply_rope(k.reshape(-1, model.n_kv_heads, c), pos)
    v = v.reshape(-1, model.n_kv_heads, c)
    return q[:, head], k[:, g], v[:, g]
