"""A decayed linear-attention layer in numpy, in its recurrent and its parallel form.

Replace attention's softmax(q k^T) by a plain product and the layer becomes a recurrence over
a fixed-size state (Katharopoulos et al. 2020, arXiv:2006.16236, sec. 3.4). With a decay
a_t in (0, 1] per step and key channel (gated linear attention; a scalar a_t per step is
Mamba-2's state-space dual, Dao and Gu 2024, arXiv:2405.21060, sec. 3), per head:

    recurrent:  S_t = diag(a_t) S_{t-1} + k_t v_t^T         (state d_k x d_v)
                y_t = S_t^T q_t
    parallel:   y_i = sum_{j <= i} (q_i * prod_{l=j+1..i} a_l) . k_j  v_j

The recurrent form costs O(d_k d_v) per token and keeps d_k d_v numbers whatever the
context; the parallel form is a masked, decayed q k^T times V, which trains like attention
on matrix units. a = 1 is plain (causal) linear attention. A diagonal SSM (Mamba-1, Gu and
Dao 2023, arXiv:2312.00752, eq. 2a) per input channel is the same recurrence with q = C_t,
k = B_t, v = x_t and a_t = exp(Delta_t A).

Home: chapters/03_architecture.ipynb, section "Beyond attention: recurrent state".
"""

from __future__ import annotations

import numpy as np


def _check(q: np.ndarray, k: np.ndarray, v: np.ndarray, decay: np.ndarray | None):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    if q.ndim != 2 or q.shape != k.shape or v.ndim != 2 or v.shape[0] != q.shape[0]:
        raise ValueError(
            f"q and k must be (T, d_k) and v (T, d_v), got {q.shape}, {k.shape}, {v.shape}"
        )
    a = np.ones_like(q) if decay is None else np.asarray(decay, dtype=np.float64)
    if a.ndim == 1:
        a = np.repeat(a[:, None], q.shape[1], axis=1)  # one decay per step, all channels
    if a.shape != q.shape or np.any(a <= 0) or np.any(a > 1):
        raise ValueError(f"decay must be (T,) or (T, d_k) with entries in (0, 1], got {a.shape}")
    return q, k, v, a


def recurrent_form(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, decay: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Outputs (T, d_v) and the final state (d_k, d_v), one token at a time.

    >>> y, s = recurrent_form(np.ones((2, 1)), np.ones((2, 1)), np.array([[1.0], [2.0]]))
    >>> y.ravel().tolist(), s.shape
    ([1.0, 3.0], (1, 1))
    """
    q, k, v, a = _check(q, k, v, decay)
    state = np.zeros((q.shape[1], v.shape[1]))
    out = np.empty((q.shape[0], v.shape[1]))
    for t in range(q.shape[0]):
        state = a[t][:, None] * state + np.outer(k[t], v[t])
        out[t] = q[t] @ state
    return out, state


def parallel_form(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, decay: np.ndarray | None = None
) -> np.ndarray:
    """Outputs (T, d_v) all at once: sum_j [sum_c q_ic k_jc prod_{l=j+1..i} a_lc] v_j, j <= i.

    Memory is T x T x d_k, so this is for checking the recurrence on small T.

    >>> parallel_form(np.ones((2, 1)), np.ones((2, 1)), np.array([[1.0], [2.0]])).ravel().tolist()
    [1.0, 3.0]
    """
    q, k, v, a = _check(q, k, v, decay)
    log_cum = np.cumsum(np.log(a), axis=0)  # (T, d_k): log prod_{l<=i} a_l
    t = q.shape[0]
    causal = np.tril(np.ones((t, t), dtype=bool))
    gap = np.where(causal[:, :, None], log_cum[:, None, :] - log_cum[None, :, :], -np.inf)
    scores = np.einsum("ic,jc,ijc->ij", q, k, np.exp(gap))  # decayed, masked q . k
    return scores @ v


def elu_feature_map(x: np.ndarray) -> np.ndarray:
    """phi(x) = elu(x) + 1, the positive feature map of Katharopoulos et al. (sec. 3.2).

    >>> elu_feature_map(np.array([-1e9, 0.0, 2.0])).tolist()
    [0.0, 1.0, 3.0]
    """
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
