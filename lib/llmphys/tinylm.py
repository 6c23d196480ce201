"""A tiny decoder-only transformer in numpy, with its backward pass written out by hand.

The model is a miniature GPT (Radford et al. 2019; Vaswani et al. 2017, arXiv:1706.03762):

    h_0      = E[x_t] + P[t]                                  token + learned position
    h_{l+.5} = h_l      + Attn_l(RMSNorm(h_l))                 each block reads the stream ...
    h_{l+1}  = h_{l+.5} + MLP_l(RMSNorm(h_{l+.5}))             ... and adds its write to it
    logits   = RMSNorm(h_L) U

Attention is multi-head with a causal mask (position t sees positions <= t); the
``causal=False`` switch removes the mask so the chapter can show the loss collapse
when the model may look at the token it is asked to predict. The running sum h is
the residual stream (Elhage et al. 2021, "A Mathematical Framework for Transformer
Circuits"): ``forward`` records every write to it, and ``ablate`` drops one write.

Parameters live in a plain dict of arrays; ``loss_and_grads`` returns the gradient of
every entry (checked against finite differences in tests/test_tinylm.py), and
``adamw_update`` is Loshchilov & Hutter's decoupled-weight-decay Adam (arXiv:1711.05101,
alg. 2). The training loop and the corpus live in ``tinylm_train``.

Its forward pass is :func:`llmphys.decoder.forward`, its attention
:func:`llmphys.attention.attend`, its RMSNorm and softmax those of :mod:`llmphys.nn`: the
registry decoder of ``transformer`` runs the same code, so the two decoders differ only in
the parts the architectures differ in (learned positions and a ReLU MLP with biases here,
whose tensors are kept for the backward pass; RoPE, GQA/MLA, SwiGLU and MoE there, with a KV
cache).

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import attention as attention_mod
from . import decoder, nn, units

EPS = nn.NORM_EPS  # RMSNorm's epsilon, shared with every numpy model of the library


def init_params(
    *,
    vocab_size: int,
    context_tokens: int,
    d_model: int = 32,
    n_heads: int = 2,
    n_layers: int = 2,
    d_ff: int = 64,
    rng: np.random.Generator,
    dtype: str = "float64",
) -> dict[str, np.ndarray]:
    """Weights of a fresh model: N(0, 0.02) matrices as in GPT-2, unit norm gains, zero biases.

    Output projections of each block are scaled by 1/sqrt(2 n_layers) (GPT-2's residual
    scaling). Float64 by default, although float32 runs about 1.7x faster here: training
    amplifies round-off, and in float32 a different BLAS (another CPU) moves the third decimal
    of the final loss, while in float64 the chapter's printed numbers do not change.

    >>> p = init_params(vocab_size=8, context_tokens=8, rng=np.random.default_rng(0))
    >>> n_params(p)  # the chapter's model
    17504
    """
    for name, v in (
        ("vocab_size", vocab_size),
        ("context_tokens", context_tokens),
        ("d_model", d_model),
        ("n_heads", n_heads),
        ("n_layers", n_layers),
        ("d_ff", d_ff),
    ):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    d, std = d_model, 0.02
    out_std = std / math.sqrt(2 * n_layers)
    p = {
        "tok_emb": rng.normal(0, std, (vocab_size, d)),
        "pos_emb": rng.normal(0, std, (context_tokens, d)),
    }
    for i in range(n_layers):
        p[f"l{i}.attn_norm"] = np.ones(d)
        for w in ("wq", "wk", "wv"):
            p[f"l{i}.{w}"] = rng.normal(0, std, (d, d))
        p[f"l{i}.wo"] = rng.normal(0, out_std, (d, d))
        p[f"l{i}.mlp_norm"] = np.ones(d)
        p[f"l{i}.w1"], p[f"l{i}.b1"] = rng.normal(0, std, (d, d_ff)), np.zeros(d_ff)
        p[f"l{i}.w2"], p[f"l{i}.b2"] = rng.normal(0, out_std, (d_ff, d)), np.zeros(d)
    p["final_norm"] = np.ones(d)
    p["unembed"] = rng.normal(0, std, (d, vocab_size))
    p = {k: v.astype(dtype) for k, v in p.items()}
    p["n_heads"] = np.array(n_heads)  # a shape hyper-parameter, stored so params is self-contained
    return p


def n_params(params: dict[str, np.ndarray]) -> int:
    """Trainable parameters N (the stored head count is not one)."""
    return int(sum(v.size for k, v in params.items() if k != "n_heads"))


def n_layers(params: dict[str, np.ndarray]) -> int:
    """Number of transformer blocks in ``params``."""
    return sum(1 for k in params if k.endswith(".wq"))


def _rmsnorm(x, g):
    r = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)
    return x / r * g, (x / r, r)


def _rmsnorm_back(dy, g, cache):
    xhat, r = cache  # d/dx of x/r*g, using dr/dx = x/(d r)
    dxhat = dy * g
    dx = (dxhat - xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True)) / r
    return dx, np.sum(dy * xhat, axis=tuple(range(dy.ndim - 1)))


def _relu(u):
    return np.maximum(u, 0.0)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, causal: bool = True):
    """Scaled dot-product attention on (B, H, T, c) arrays: softmax(q k^T / sqrt(c) + M) v.

    M is 0 where key position <= query position and -inf elsewhere when ``causal``;
    without it every position also reads the ones after it. Returns (output, weights).
    This is :func:`llmphys.attention.attend`, the decoder's attention, in the (B, H, T, c)
    layout that the backward pass uses.

    >>> q = k = v = np.eye(3)[None, None]  # one head, three positions
    >>> out, a = attention(q, k, v)
    >>> a[0, 0, 0].round(3)  # position 0 may only look at itself
    array([1., 0., 0.])
    """
    pos = np.arange(q.shape[-2])
    qt, kt, vt = (np.swapaxes(x, -2, -3) for x in (q, k, v))  # (B, T, H, c), as attend takes
    out, a = attention_mod.attend(qt, kt, vt, pos, pos, causal=causal, return_weights=True)
    return np.swapaxes(out, -2, -3), a


def _parts(params: dict[str, np.ndarray], *, causal: bool, saved: dict, keep_layers: bool):
    """This model as a :class:`llmphys.decoder.Decoder`: learned positions, a ReLU MLP.

    Every part stores into ``saved`` what the backward pass reads: ``saved[i]`` is block i's
    (x, norm1, (q, k, v), weights, o, y, norm2, u, z) when ``keep_layers``, and
    ``saved["final"]`` the final norm's (output, cache).
    """
    n_heads = int(params["n_heads"])

    def g(i: int, name: str) -> np.ndarray:
        return params[f"l{i}.{name}"]

    def embed(tokens):  # token + learned position: the model's whole position encoding
        return params["tok_emb"][tokens] + params["pos_emb"][: tokens.shape[1]]

    def attn(i, h):  # softmax(q k^T / sqrt(c) + M) v Wo, with q, k, v = RMSNorm(h) Wq, Wk, Wv
        x, n1 = _rmsnorm(h, g(i, "attn_norm"))
        qkv = [_heads(x @ g(i, w), n_heads) for w in ("wq", "wk", "wv")]
        o, a = attention(*qkv, causal=causal)
        o = _merge(o)
        if keep_layers:
            saved[i] = (x, n1, qkv, a, o)
        return o @ g(i, "wo")

    def ffn(i, h):  # ReLU(RMSNorm(h) W1 + b1) W2 + b2
        y, n2 = _rmsnorm(h, g(i, "mlp_norm"))
        u = y @ g(i, "w1") + g(i, "b1")
        z = _relu(u)
        if keep_layers:
            saved[i] = (*saved[i], y, n2, u, z)
        return z @ g(i, "w2") + g(i, "b2")

    def head(h):
        saved["final"] = _rmsnorm(h, params["final_norm"])
        return saved["final"][0] @ params["unembed"]

    return decoder.Decoder(n_layers=n_layers(params), embed=embed, attn=attn, ffn=ffn, head=head)


def forward(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    *,
    causal: bool = True,
    ablate: str | None = None,
    checkpoint: bool = False,
) -> tuple[np.ndarray, dict]:
    """Logits (B, T, V) for token windows (B, T), and a cache with every residual write.

    The pass is :func:`llmphys.decoder.forward`, the loop ``transformer`` runs too.
    ``cache["writes"]`` maps "embed", "attn0", "mlp0", ... to the (B, T, d) array each
    part added to the stream. ``ablate`` names one of them to leave out of the sum.
    ``checkpoint=True`` is activation checkpointing (Chen et al. 2016, arXiv:1604.06174):
    the cache keeps only each block's input, in ``cache["layer_inputs"]``, and no writes;
    the backward pass recomputes the rest one block at a time.
    """
    tokens = np.atleast_2d(np.asarray(tokens))
    t = tokens.shape[1]
    if t > params["pos_emb"].shape[0]:
        raise ValueError(
            f"tokens has {t} positions; the model has context_tokens={params['pos_emb'].shape[0]}"
        )
    saved: dict = {}
    parts = _parts(params, causal=causal, saved=saved, keep_layers=not checkpoint)
    run = decoder.forward(parts, tokens, ablate=ablate, keep_writes=not checkpoint)
    cache = {"tokens": tokens, "final": saved["final"], "stream": run.stream, "causal": causal}
    if checkpoint:
        cache["layer_inputs"] = run.layer_inputs
    else:
        cache |= {"layers": [saved[i] for i in range(parts.n_layers)], "writes": run.writes}
    return run.logits, cache


def block(
    params: dict[str, np.ndarray],
    i: int,
    h: np.ndarray,
    *,
    causal: bool = True,
    ablate: str | None = None,
) -> tuple[tuple, np.ndarray, dict[str, np.ndarray]]:
    """Block ``i`` on the stream h (B, T, d): (tensors kept for backward, new stream, writes).

    The kept tuple is (x, norm1, (q, k, v), weights, o, y, norm2, u, z), x = RMSNorm(h) and
    y = RMSNorm(h + attention write); ``ablate`` drops the block's write of that name. This is
    :func:`llmphys.decoder.block` with this model's parts.
    """
    saved: dict = {}
    parts = _parts(params, causal=causal, saved=saved, keep_layers=True)
    h, writes = decoder.block(parts, i, h, ablate=ablate)
    return saved[i], h, writes


def _heads(x, h):  # (B, T, d) -> (B, H, T, d/H)
    b, t, d = x.shape
    return x.reshape(b, t, h, d // h).transpose(0, 2, 1, 3)


def _merge(x):  # (B, H, T, c) -> (B, T, H*c)
    b, h, t, c = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * c)


def loss_and_grads(
    params: dict[str, np.ndarray],
    inputs: np.ndarray,
    targets: np.ndarray,
    *,
    causal: bool = True,
    checkpoint: bool = False,
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean cross-entropy (nats per token) of ``targets`` given ``inputs``, and its gradient.

    Each matmul y = x W costs 2 FLOP per weight per token forward and 4 backward (dx = dy W^T
    and dW = x^T dy), the 2N + 4N = 6N of Kaplan et al. 2020, sec. 2.1. ``checkpoint=True``
    keeps only block inputs and recomputes each block before its backward: the same gradients
    for one more forward pass, 8N instead of 6N.

    >>> rng = np.random.default_rng(0)
    >>> p = init_params(vocab_size=8, context_tokens=4, rng=rng)
    >>> x = rng.integers(0, 8, (2, 5))
    >>> loss, grads = loss_and_grads(p, x[:, :-1], x[:, 1:])
    >>> round(loss, 1), round(math.log(8), 1)  # at initialisation: about ln V
    (2.1, 2.1)
    """
    logits, c = forward(params, inputs, causal=causal, checkpoint=checkpoint)
    b, t, v = logits.shape
    probs = nn.softmax(logits)
    onehot = np.eye(v, dtype=logits.dtype)[targets]
    loss = float(-np.mean(np.log(np.sum(probs * onehot, axis=-1))))
    grads = {}
    dlogits = (probs - onehot) / (b * t)
    f, nf = c["final"]
    grads["unembed"] = _sum_outer(f, dlogits)
    dh, grads["final_norm"] = _rmsnorm_back(dlogits @ params["unembed"].T, params["final_norm"], nf)
    for i in reversed(range(n_layers(params))):
        g = lambda name, i=i: params[f"l{i}.{name}"]  # noqa: E731
        saved = (
            block(params, i, c["layer_inputs"][i], causal=causal)[0]
            if checkpoint
            else c["layers"][i]
        )
        x, n1, (q, k, vv), a, o, y, n2, u, z = saved
        # MLP: h += ReLU(RMSNorm(h) W1 + b1) W2 + b2
        grads[f"l{i}.w2"], grads[f"l{i}.b2"] = _sum_outer(z, dh), dh.sum(axis=(0, 1))
        du = (dh @ g("w2").T) * (u > 0)
        grads[f"l{i}.w1"], grads[f"l{i}.b1"] = _sum_outer(y, du), du.sum(axis=(0, 1))
        dx, grads[f"l{i}.mlp_norm"] = _rmsnorm_back(du @ g("w1").T, g("mlp_norm"), n2)
        dh = dh + dx
        # Attention: h += softmax(q k^T / sqrt(c) + M) v Wo, with q, k, v = RMSNorm(h) Wq, Wk, Wv
        grads[f"l{i}.wo"] = _sum_outer(o, dh)
        do = _heads(dh @ g("wo").T, q.shape[1])
        da, dv = do @ np.swapaxes(vv, -1, -2), np.swapaxes(a, -1, -2) @ do
        ds = a * (da - np.sum(da * a, axis=-1, keepdims=True)) / math.sqrt(q.shape[-1])
        dq, dk = ds @ k, np.swapaxes(ds, -1, -2) @ q
        dxn = 0.0
        for w, dw in (("wq", dq), ("wk", dk), ("wv", dv)):
            dw = _merge(dw)
            grads[f"l{i}.{w}"] = _sum_outer(x, dw)
            dxn = dxn + dw @ g(w).T
        dx, grads[f"l{i}.attn_norm"] = _rmsnorm_back(dxn, g("attn_norm"), n1)
        dh = dh + dx
    tokens = c["tokens"]
    one_hot = np.eye(params["tok_emb"].shape[0], dtype=dh.dtype)[tokens.ravel()]
    grads["tok_emb"] = one_hot.T @ dh.reshape(b * t, -1)
    grads["pos_emb"] = np.zeros_like(params["pos_emb"])
    grads["pos_emb"][:t] = dh.sum(axis=0)
    return loss, grads


def _sum_outer(x, dy):  # sum over batch and positions of x^T dy: the weight gradient
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def adamw_update(
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    state: dict,
    *,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.95,
    eps: float = 1e-8,
    weight_decay: float = 0.1,
) -> dict:
    """One AdamW step, in place on ``params``; returns the new optimizer state.

    m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;  w <- w - lr (m_hat/(sqrt(v_hat) + eps) + wd w),
    with bias-corrected m_hat, v_hat (Kingma & Ba 2015, alg. 1) and the weight decay applied
    outside the adaptive step, to matrices only (Loshchilov & Hutter 2019, alg. 2). Adam keeps
    two numbers per parameter: the 8 bytes of FP32 state in training.training_state_bytes_per_param.
    """
    units.check_positive("lr", lr)
    step = state.get("step", 0) + 1
    m, v = state.get("m", {}), state.get("v", {})
    for k, grad in grads.items():
        m[k] = beta1 * m.get(k, 0.0) + (1 - beta1) * grad
        v[k] = beta2 * v.get(k, 0.0) + (1 - beta2) * grad * grad
        m_hat, v_hat = m[k] / (1 - beta1**step), v[k] / (1 - beta2**step)
        decay = weight_decay * params[k] if params[k].ndim >= 2 else 0.0
        params[k] -= lr * (m_hat / (np.sqrt(v_hat) + eps) + decay)
    return {"step": step, "m": m, "v": v}
