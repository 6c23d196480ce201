"""Where the norm sits: pre-norm against post-norm gradients at initialisation, on the tiny decoder.

The two placements of a block's normalisation, with f an attention or MLP sublayer:

    pre-norm    h <- h + f(RMSNorm(h)),  logits = RMSNorm(h_L) U     (GPT-2, Llama; ``tinylm``)
    post-norm   h <- RMSNorm(h + f(h)),  logits = h_L U              (Vaswani et al. 2017)

Xiong et al. 2020, "On Layer Normalization in the Transformer Architecture" (arXiv:2002.04745,
Theorem 1 and Fig. 3), show that at initialisation the gradient of the last layer's weights
does not shrink with depth L in post-norm, and that its gradients grow with the layer index
(small at the bottom, large at the top, so a large first step breaks the top layers: hence
warm-up); in pre-norm the gradient is about the same in every layer and falls as 1/sqrt(L),
because the stream's variance grows about linearly with L and the final norm divides by its
square root. ``layer_grad_norms`` measures both on the tiny decoder, with the paper's
Xavier initialisation (``init_params``). The measured post-norm profile and the 1/sqrt(L)
ratio between placements agree with the paper; the measured pre-norm profile does not: it
falls with the layer index (the bottom layer gets the largest gradient), where Xiong et al.'s
Fig. 3 is about flat. A falling pre-norm profile is what Shleifer et al. 2021 (NormFormer,
arXiv:2110.09456, sec. 1) report during pre-training: "gradients at early layers are much
larger than at later layers".

Parameters are ``tinylm``'s dict (same keys, same shapes). The forward pass is the loop of
``decoder`` with ``tinylm``'s parts and the norms placed either way; the backward pass is its
own, and for ``placement="pre"`` gives exactly ``tinylm.loss_and_grads``
(tests/test_norm_placement.py). In post-norm the final norm is not applied (the stream is
already normalised), so its gradient is zero.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import decoder, tinylm, units

PLACEMENTS = ("pre", "post")
EPS = tinylm.EPS


def init_params(
    *,
    vocab_size: int,
    context_tokens: int,
    d_model: int = 32,
    n_heads: int = 2,
    n_layers: int = 2,
    d_ff: int = 64,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """``tinylm`` weights re-drawn as in Xiong et al. 2020 sec. 3: Xavier-normal matrices,
    std sqrt(2 / (fan_in + fan_out)), and unit-variance embeddings (no residual down-scaling).

    >>> p = init_params(vocab_size=8, context_tokens=8, rng=np.random.default_rng(0))
    >>> round(float(p["l0.w1"].std()), 2), round(math.sqrt(2 / (32 + 64)), 2)
    (0.14, 0.14)
    """
    p = tinylm.init_params(
        vocab_size=vocab_size,
        context_tokens=context_tokens,
        d_model=d_model,
        n_heads=n_heads,
        n_layers=n_layers,
        d_ff=d_ff,
        rng=rng,
    )
    for key, w in p.items():
        if key in ("tok_emb", "pos_emb"):
            p[key] = rng.normal(0.0, 1.0, w.shape)
        elif w.ndim == 2:
            p[key] = rng.normal(0.0, math.sqrt(2.0 / (w.shape[0] + w.shape[1])), w.shape)
    return p


def _norm(x, g):
    r = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)
    return x / r * g, (x / r, r)


def _norm_back(dy, g, cache):
    xhat, r = cache
    dxhat = dy * g
    dx = (dxhat - xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True)) / r
    return dx, np.sum(dy * xhat, axis=tuple(range(dy.ndim - 1)))


def _heads(x, n):  # (B, T, d) -> (B, H, T, d/H)
    b, t, d = x.shape
    return x.reshape(b, t, n, d // n).transpose(0, 2, 1, 3)


def _merge(x):  # (B, H, T, c) -> (B, T, H*c)
    b, h, t, c = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, h * c)


def _outer(x, dy):  # the weight gradient: sum over batch and positions of x^T dy
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def _attn(p, i, x):
    n = int(p["n_heads"])
    q, k, v = (_heads(x @ p[f"l{i}.{w}"], n) for w in ("wq", "wk", "wv"))
    o, a = tinylm.attention(q, k, v)
    o = _merge(o)
    return o @ p[f"l{i}.wo"], (x, q, k, v, a, o)


def _attn_back(p, i, dy, cache, grads):
    x, q, k, v, a, o = cache
    grads[f"l{i}.wo"] = _outer(o, dy)
    do = _heads(dy @ p[f"l{i}.wo"].T, q.shape[1])
    da, dv = do @ np.swapaxes(v, -1, -2), np.swapaxes(a, -1, -2) @ do
    ds = a * (da - np.sum(da * a, axis=-1, keepdims=True)) / math.sqrt(q.shape[-1])
    dx = 0.0
    for w, dw in (("wq", ds @ k), ("wk", np.swapaxes(ds, -1, -2) @ q), ("wv", dv)):
        grads[f"l{i}.{w}"] = _outer(x, _merge(dw))
        dx = dx + _merge(dw) @ p[f"l{i}.{w}"].T
    return dx


def _mlp(p, i, y):
    u = y @ p[f"l{i}.w1"] + p[f"l{i}.b1"]
    z = np.maximum(u, 0.0)
    return z @ p[f"l{i}.w2"] + p[f"l{i}.b2"], (y, u, z)


def _mlp_back(p, i, dy, cache, grads):
    y, u, z = cache
    grads[f"l{i}.w2"], grads[f"l{i}.b2"] = _outer(z, dy), dy.sum(axis=(0, 1))
    du = (dy @ p[f"l{i}.w2"].T) * (u > 0)
    grads[f"l{i}.w1"], grads[f"l{i}.b1"] = _outer(y, du), du.sum(axis=(0, 1))
    return du @ p[f"l{i}.w1"].T


_SUBLAYERS = (("attn_norm", _attn, _attn_back), ("mlp_norm", _mlp, _mlp_back))


def _parts(params: dict[str, np.ndarray], placement: str, caches: list[list]) -> decoder.Decoder:
    """``tinylm``'s parts, norms placed ``placement``; ``caches`` collects what backward reads.

    One [layer, gain, norm cache, sublayer cache] per sublayer, in order, then a last
    [None, "final_norm", head input, final norm cache or None].
    """

    def sublayer(gain: str, fwd):
        def pre(i, h):  # h + f(N(h))
            x, nc = _norm(h, params[f"l{i}.{gain}"])
            out, c = fwd(params, i, x)
            caches.append([i, gain, nc, c])
            return out

        def post_input(i, h):  # the f(h) of N(h + f(h))
            out, c = fwd(params, i, h)
            caches.append([i, gain, None, c])
            return out

        def post(i, h):  # N(h + f(h)), given h + f(h)
            h, caches[-1][2] = _norm(h, params[f"l{i}.{gain}"])
            return h

        return (pre, None) if placement == "pre" else (post_input, post)

    (attn, attn_post), (ffn, ffn_post) = (sublayer(gain, fwd) for gain, fwd, _ in _SUBLAYERS)

    def head(h):
        f, final = _norm(h, params["final_norm"]) if placement == "pre" else (h, None)
        caches.append([None, "final_norm", f, final])
        return f @ params["unembed"]

    return decoder.Decoder(
        n_layers=tinylm.n_layers(params),
        embed=lambda tokens: params["tok_emb"][tokens] + params["pos_emb"][: tokens.shape[1]],
        attn=attn,
        ffn=ffn,
        head=head,
        attn_post=attn_post,
        ffn_post=ffn_post,
    )


def loss_and_grads(
    params: dict[str, np.ndarray],
    inputs: np.ndarray,
    targets: np.ndarray,
    *,
    placement: str = "pre",
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean cross-entropy (nats per token) and its gradient, norms placed ``"pre"`` or ``"post"``.

    pre: h <- h + f(N(h)); post: h <- N(h + f(h)), with N = RMSNorm and the block's gains
    ``attn_norm`` and ``mlp_norm``; the causal decoder of ``tinylm`` otherwise.

    >>> rng = np.random.default_rng(0)
    >>> p = init_params(vocab_size=8, context_tokens=4, rng=rng)
    >>> x = rng.integers(0, 8, (2, 5))
    >>> pre, _ = loss_and_grads(p, x[:, :-1], x[:, 1:])
    >>> bool(np.isclose(pre, tinylm.loss_and_grads(p, x[:, :-1], x[:, 1:])[0], rtol=1e-12))
    True
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    tokens = np.atleast_2d(np.asarray(inputs))
    targets = np.atleast_2d(np.asarray(targets))
    if tokens.shape != targets.shape:
        raise ValueError(f"inputs {tokens.shape} and targets {targets.shape} must match")
    t = tokens.shape[1]
    if t > params["pos_emb"].shape[0]:
        raise ValueError(f"inputs has {t} positions; context_tokens={params['pos_emb'].shape[0]}")
    caches: list[list] = []  # per sublayer: [layer, gain name, norm cache, sublayer cache]
    parts = _parts(params, placement, caches)
    logits = decoder.forward(parts, tokens, keep_writes=False).logits
    f, final = caches.pop()[2:]
    b, _, v = logits.shape
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = e / e.sum(axis=-1, keepdims=True)
    onehot = np.eye(v)[targets]
    loss = float(-np.mean(np.log(np.sum(probs * onehot, axis=-1))))

    grads: dict[str, np.ndarray] = {}
    dlogits = (probs - onehot) / (b * t)
    grads["unembed"] = _outer(f, dlogits)
    dh = dlogits @ params["unembed"].T
    if final is None:
        grads["final_norm"] = np.zeros_like(params["final_norm"])
    else:
        dh, grads["final_norm"] = _norm_back(dh, params["final_norm"], final)
    backs = {gain: back for gain, _, back in _SUBLAYERS}
    for i, gain, nc, c in reversed(caches):
        g = params[f"l{i}.{gain}"]
        if placement == "pre":  # h' = h + f(N(h))
            dx = backs[gain](params, i, dh, c, grads)
            dn, grads[f"l{i}.{gain}"] = _norm_back(dx, g, nc)
            dh = dh + dn
        else:  # h' = N(r), r = h + f(h)
            dr, grads[f"l{i}.{gain}"] = _norm_back(dh, g, nc)
            dh = dr + backs[gain](params, i, dr, c, grads)
    grads["tok_emb"] = np.eye(params["tok_emb"].shape[0])[tokens.ravel()].T @ dh.reshape(b * t, -1)
    grads["pos_emb"] = np.zeros_like(params["pos_emb"])
    grads["pos_emb"][:t] = dh.sum(axis=0)
    return loss, grads


def layer_grad_norms(
    *,
    n_layers: int,
    placement: str,
    weight: str = "w2",
    seed: int = 0,
    vocab_size: int = 16,
    context_tokens: int = 16,
    batch_size: int = 16,
    d_model: int = 32,
) -> np.ndarray:
    """Frobenius norm of dLoss/dW for one weight (default the MLP's second matrix, Xiong et al.'s
    W^2) in each layer, bottom first, at a Xavier initialisation on random tokens (1/nats).

    >>> pre = layer_grad_norms(n_layers=12, placement="pre")
    >>> post = layer_grad_norms(n_layers=12, placement="post")
    >>> round(float(pre[-1] / pre[0]), 1), round(float(post[-1] / post[0]), 1)  # top / bottom
    (0.5, 1.6)
    """
    if isinstance(n_layers, bool) or int(n_layers) != n_layers or n_layers < 1:
        raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}")
    allowed = ("wq", "wk", "wv", "wo", "w1", "w2")
    if weight not in allowed:
        raise ValueError(f"weight must be one of {allowed}, got {weight!r}")
    units.check_positive("batch_size", batch_size)
    rng = np.random.default_rng(seed)
    p = init_params(
        vocab_size=vocab_size,
        context_tokens=context_tokens,
        d_model=d_model,
        n_heads=2,
        n_layers=int(n_layers),
        d_ff=2 * d_model,
        rng=rng,
    )
    x = rng.integers(0, vocab_size, (int(batch_size), context_tokens + 1))
    _, grads = loss_and_grads(p, x[:, :-1], x[:, 1:], placement=placement)
    return np.array([np.linalg.norm(grads[f"l{i}.{weight}"]) for i in range(int(n_layers))])


def layer_profile(
    *, n_layers: int, seeds=(0, 1, 2, 3), weight: str = "w2"
) -> dict[str, np.ndarray]:
    """Per placement, the per-layer gradient norms of ``layer_grad_norms`` (bottom first),
    the geometric mean over ``seeds`` (independent initialisations and token draws)."""
    if not len(seeds):
        raise ValueError("seeds must name at least one seed")
    return {
        pl: np.exp(
            np.mean(
                [
                    np.log(layer_grad_norms(n_layers=n_layers, placement=pl, weight=weight, seed=s))
                    for s in seeds
                ],
                axis=0,
            )
        )
        for pl in PLACEMENTS
    }


def depth_study(
    depths=(2, 4, 8, 16, 32), *, seeds=(0, 1, 2, 3), weight: str = "w2"
) -> dict[str, dict[str, np.ndarray]]:
    """Per placement, at each depth L: the top and the bottom layer's gradient norm (geometric
    means over ``seeds``, as in ``layer_profile``), their ratio, and the fitted exponent of the
    top layer's norm against L. Xiong et al. 2020, Theorem 1 and Fig. 3: post-norm's ratio
    grows with L and its top gradient does not fall; pre-norm's top gradient falls (as
    1/sqrt(L) once the blocks' writes outweigh the embeddings).

    >>> s = depth_study((2, 8), seeds=(0,))
    >>> bool(s["post"]["top_over_bottom"][-1] > 1 > s["pre"]["top_over_bottom"][-1])
    True
    """
    depths = [int(units.check_positive("depths", d)) for d in depths]
    if len(depths) < 2:
        raise ValueError("depths: at least two depths are needed to fit an exponent")
    profiles = [layer_profile(n_layers=d, seeds=seeds, weight=weight) for d in depths]
    logd = np.log(depths)
    out: dict[str, dict[str, np.ndarray]] = {}
    for pl in PLACEMENTS:
        top = np.array([p[pl][-1] for p in profiles])
        bottom = np.array([p[pl][0] for p in profiles])
        out[pl] = {
            "depths": np.array(depths),
            "top": top,
            "bottom": bottom,
            "top_over_bottom": top / bottom,
            "top_exponent": np.array(np.polyfit(logd, np.log(top), 1)[0]),
            "profile": profiles[-1][pl],  # per layer at the largest depth, bottom first
        }
    ratio = out["post"]["top"] / out["pre"]["top"]
    out["post_over_pre"] = {
        "depths": np.array(depths),
        "top_ratio": ratio,
        "exponent": np.array(np.polyfit(logd, np.log(ratio), 1)[0]),  # Theorem 1: 1/2
    }
    return out
