"""Training and probing the tiny model of ``tinylm`` on a source whose entropy is known.

The corpus is a random second-order Markov source over V symbols: the next symbol
depends on the two before it, P(x_t | x_{t-2}, x_{t-1}). Written as a first-order
chain over the V^2 pair states (x_{t-1}, x_t), its entropy rate comes exactly from
``markov.entropy_rate_bits`` and is the floor no model can beat. A unigram or bigram
model cannot reach it; a model must look two tokens back, which in a transformer is
attention's job. ``conditional_entropy_bits`` gives the exact loss of the best model
with 0, 1 or 2 tokens of context. The source lives in :mod:`llmphys.tinylm_source` (its
functions are re-exported here).

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np

from . import markov, objective, tinylm, training_practice, units
from .tinylm_source import conditional_entropy_bits as conditional_entropy_bits
from .tinylm_source import n_symbols_of as n_symbols_of
from .tinylm_source import sample_symbols as sample_symbols
from .tinylm_source import second_order_chain as second_order_chain
from .tinylm_source import source_probs as source_probs


def one_blas_thread():
    """Run BLAS on one thread: this model's matrices are so small that threads cost more than
    they save, and on a shared 2-core machine they can make a step ten times slower."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it, BLAS keeps its default thread count
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def excess_by_frequency(
    p: np.ndarray, tokens: np.ndarray, model_probs: np.ndarray, *, n_groups: int = 4
) -> dict[str, np.ndarray]:
    """Where a model's excess loss lives: contexts grouped from rarest to commonest.

    The V^2 two-symbol contexts are sorted by their stationary frequency and cut into
    ``n_groups`` groups of equal count. For each group: ``token_share`` (fraction of tokens
    that follow one of its contexts) and ``excess_bits`` (mean of log2 P_source / q_model
    on those tokens, an estimate of the mean KL divergence there), ``excess_share`` (the
    group's part of the total excess, token_share * excess_bits / total) and, as a 0-d array,
    ``total_excess_bits`` (the token-weighted mean excess over all groups). ``model_probs`` are
    the model's probabilities of tokens[1:], as from ``next_token_distributions``.
    """
    v, tokens = n_symbols_of(p), np.asarray(tokens, dtype=np.int64)
    ctx = tokens[:-2] * v + tokens[1:-1]
    excess = np.log2(source_probs(p, tokens)) - np.log2(np.asarray(model_probs)[1:])
    group_of = np.empty(v * v, dtype=np.int64)
    group_of[np.argsort(markov.stationary_distribution(p), kind="stable")] = (
        np.arange(v * v) * n_groups // (v * v)
    )
    g = group_of[ctx]
    counts = np.bincount(g, minlength=n_groups)
    share = counts / g.size
    excess_bits = np.bincount(g, excess, minlength=n_groups) / np.maximum(counts, 1)
    total = np.sum(share * excess_bits)
    return {
        "token_share": share,
        "excess_bits": excess_bits,
        "excess_share": share * excess_bits / total,
        "total_excess_bits": np.asarray(total),
    }


def write_label(name: str) -> str:
    """A reader's name for a residual-stream write: "embed" -> "the embedding", "attn1" ->
    "the second attention layer", "mlp0" -> "the first MLP".

    >>> write_label("embed"), write_label("attn1"), write_label("mlp0")
    ('the embedding', 'the second attention layer', 'the first MLP')
    """
    ordinals = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
    if name == "embed":
        return "the embedding"
    for prefix, what in (("attn", "attention layer"), ("mlp", "MLP")):
        rest = name.removeprefix(prefix)
        if rest != name and rest.isdigit() and int(rest) < len(ordinals):
            return f"the {ordinals[int(rest)]} {what}"
    raise ValueError(f"name: expected 'embed', 'attn<i>' or 'mlp<i>' (i < 8), got {name!r}")


def tokens_until_below(
    tokens_seen: np.ndarray, eval_bits: np.ndarray, threshold_bits: float
) -> int:
    """Training tokens seen at the first evaluation whose loss is below ``threshold_bits``.

    ``tokens_seen`` and ``eval_bits`` are a training history's evaluation points (as
    ``train`` returns them in ``eval_tokens_seen`` and ``eval_bits``).

    >>> tokens_until_below(np.array([0, 100, 200]), np.array([3.0, 2.0, 1.0]), 2.5)
    100
    """
    tokens_seen, eval_bits = np.asarray(tokens_seen), np.asarray(eval_bits)
    if tokens_seen.shape != eval_bits.shape or tokens_seen.ndim != 1 or tokens_seen.size == 0:
        raise ValueError(
            f"tokens_seen and eval_bits must be 1-d arrays of one length, got shapes "
            f"{tokens_seen.shape} and {eval_bits.shape}"
        )
    below = np.flatnonzero(eval_bits < threshold_bits)
    if below.size == 0:
        raise ValueError(
            f"threshold_bits: no evaluation is below {threshold_bits!r} bits "
            f"(the lowest is {eval_bits.min():.4g})"
        )
    return int(tokens_seen[below[0]])


def lr_at(step: int, *, n_steps: int, peak_lr: float, warmup_steps: int) -> float:
    """Learning rate: linear warm-up to ``peak_lr``, then cosine decay to a tenth of it.

    >>> [round(lr_at(s, n_steps=100, peak_lr=1.0, warmup_steps=10), 3) for s in (0, 9, 100)]
    [0.1, 1.0, 0.1]
    """
    return training_practice.lr_schedule(
        step, n_steps=n_steps, peak_lr=peak_lr, warmup_steps=warmup_steps, schedule="cosine"
    )


def train(
    params: dict[str, np.ndarray],
    corpus: np.ndarray,
    *,
    n_steps: int,
    batch_size: int,
    lr: float,
    rng: np.random.Generator,
    causal: bool = True,
    eval_tokens: np.ndarray | None = None,
    eval_every: int = 25,
    eval_steps: Sequence[int] | None = None,
    warmup_steps: int = 20,
    weight_decay: float = 0.1,
    schedule: str = "cosine",
    max_grad_norm: float | None = None,
    fp16_loss_scale: float | None = None,
) -> tuple[dict, dict]:
    """Train a copy of ``params`` on random windows of ``corpus`` with AdamW.

    Returns (trained params, history): ``tokens_seen``, ``train_bits`` (the batch loss in
    bits per token), ``lr``, ``grad_norm`` (before clipping), ``fp16_zero_fraction`` and
    ``fp16_subnormal_fraction`` every step; ``eval_tokens_seen`` and ``eval_bits`` before
    the steps in ``eval_steps`` (default: every ``eval_every``) and at the end (``mean_bits``
    on ``eval_tokens``, an honest next-token loss). ``schedule`` names a
    ``training_practice.lr_schedule``; ``max_grad_norm`` clips the global gradient norm;
    ``fp16_loss_scale`` (None: exact gradients) passes the gradients through FP16 at that loss
    scale.
    """
    units.check_positive("n_steps", n_steps)
    units.check_positive("batch_size", batch_size)
    if schedule not in training_practice.SCHEDULES:
        raise ValueError(f"schedule must be one of {training_practice.SCHEDULES}, got {schedule!r}")
    if max_grad_norm is not None:
        units.check_positive("max_grad_norm", max_grad_norm)
    if fp16_loss_scale is not None:
        units.check_positive("fp16_loss_scale", fp16_loss_scale)
    if eval_steps is None:
        eval_steps = range(0, int(n_steps), int(units.check_positive("eval_every", eval_every)))
    with one_blas_thread():
        return _train(
            params,
            corpus,
            n_steps=int(n_steps),
            batch_size=int(batch_size),
            lr=lr,
            rng=rng,
            causal=causal,
            eval_tokens=eval_tokens,
            eval_steps={int(s) for s in eval_steps if 0 <= s < n_steps},
            warmup_steps=warmup_steps,
            weight_decay=weight_decay,
            schedule=schedule,
            max_grad_norm=max_grad_norm,
            fp16_loss_scale=fp16_loss_scale,
        )


def _train(
    params,
    corpus,
    *,
    n_steps,
    batch_size,
    lr,
    rng,
    causal,
    eval_tokens,
    eval_steps,
    warmup_steps,
    weight_decay,
    schedule,
    max_grad_norm,
    fp16_loss_scale,
):
    params = {k: v.copy() for k, v in params.items()}
    t = params["pos_emb"].shape[0]
    state: dict[str, np.ndarray] = {}
    hist: dict[str, list[float]] = {
        k: []
        for k in (
            "tokens_seen",
            "train_bits",
            "eval_tokens_seen",
            "eval_bits",
            "lr",
            "grad_norm",
            "fp16_zero_fraction",
            "fp16_subnormal_fraction",
        )
    }
    for step in range(n_steps):
        if eval_tokens is not None and step in eval_steps:
            hist["eval_tokens_seen"].append(step * batch_size * t)
            hist["eval_bits"].append(mean_bits(params, eval_tokens, causal=True))
        idx = rng.integers(0, corpus.size - t, batch_size)[:, None] + np.arange(t + 1)
        window = corpus[idx]
        loss, grads = tinylm.loss_and_grads(params, window[:, :-1], window[:, 1:], causal=causal)
        counts = {"zero_fraction": 0.0, "subnormal_fraction": 0.0}
        if fp16_loss_scale is not None:
            grads, counts = training_practice.fp16_gradients(grads, loss_scale=fp16_loss_scale)
        norm = training_practice.global_norm(grads)
        if max_grad_norm is not None:
            grads, _ = training_practice.clip_by_global_norm(grads, max_grad_norm)
        rate = training_practice.lr_schedule(
            step, n_steps=n_steps, peak_lr=lr, warmup_steps=warmup_steps, schedule=schedule
        )
        state = tinylm.adamw_update(params, grads, state, lr=rate, weight_decay=weight_decay)
        hist["lr"].append(rate)
        hist["grad_norm"].append(norm)
        hist["fp16_zero_fraction"].append(counts["zero_fraction"])
        hist["fp16_subnormal_fraction"].append(counts["subnormal_fraction"])
        hist["tokens_seen"].append((step + 1) * batch_size * t)
        hist["train_bits"].append(objective.bits_per_token(loss))
    if eval_tokens is not None:
        hist["eval_tokens_seen"].append(n_steps * batch_size * t)
        hist["eval_bits"].append(mean_bits(params, eval_tokens, causal=True))
    return params, {k: np.asarray(v) for k, v in hist.items()}


def next_token_distributions(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    *,
    causal: bool = True,
    ablate: str | None = None,
    chunk: int = 1024,
) -> np.ndarray:
    """(n - 1, V) predicted distributions of tokens[1:], each from previous tokens only.

    With the causal mask, windows of T tokens at a stride of T/2 are run once and each
    token is read where it has at least T/2 tokens of past (all of it near the start).
    Without the mask (``causal=False``) a window would leak the tokens after the one
    being predicted, so each prediction is read at the *last* position of a window
    that ends just before its target: what generation does. Both are honest.
    """
    with one_blas_thread():
        return _next_token_distributions(
            params, np.asarray(tokens, dtype=np.int64), causal=causal, ablate=ablate, chunk=chunk
        )


def _next_token_distributions(params, tokens, *, causal, ablate, chunk):
    t, n = params["pos_emb"].shape[0], tokens.size
    if n < 2:
        raise ValueError(f"tokens must hold at least 2 tokens, got {n}")
    out = np.empty((n - 1, params["unembed"].shape[1]))
    if causal:
        length, stride = min(t, n - 1), max(1, t // 2)
        starts = np.unique(np.r_[np.arange(0, n - 1 - length, stride), n - 1 - length])
        ends = starts + length - 1
        for lo in range(0, starts.size, chunk):
            s = starts[lo : lo + chunk]
            idx = s[:, None] + np.arange(length)
            logits, _ = tinylm.forward(params, tokens[idx], ablate=ablate)
            prev_end = np.r_[-1, ends][lo : lo + s.size]  # each position is read once, from
            own = idx > prev_end[:, None]  # the first window that holds it (the longest past)
            out[idx[own]] = np.exp(objective.log_softmax(logits[own]))
        return out
    for i in range(min(t - 1, n - 1)):  # the first few tokens have a shorter past
        logits, _ = tinylm.forward(params, tokens[None, : i + 1], causal=False, ablate=ablate)
        out[i] = np.exp(objective.log_softmax(logits[0, -1]))
    starts = np.arange(0, n - t)  # window s .. s+T-1 predicts token s+T
    for lo in range(0, starts.size, chunk):
        s = starts[lo : lo + chunk]
        logits, _ = tinylm.forward(
            params, tokens[s[:, None] + np.arange(t)], causal=False, ablate=ablate
        )
        out[s + t - 1] = np.exp(objective.log_softmax(logits[:, -1]))
    return out


def mean_bits(
    params: dict[str, np.ndarray],
    tokens: np.ndarray,
    *,
    causal: bool = True,
    ablate: str | None = None,
) -> float:
    """Bits per token the model spends on tokens[1:] (mean of -log2 q(x_t | past))."""
    dists = next_token_distributions(params, tokens, causal=causal, ablate=ablate)
    tokens = np.asarray(tokens)
    return float(-np.mean(np.log2(dists[np.arange(tokens.size - 1), tokens[1:]])))


def per_position_bits(
    params: dict[str, np.ndarray], windows: np.ndarray, *, causal: bool = True
) -> np.ndarray:
    """Mean bits on token t+1 at each position t of (B, T+1) training ``windows``: shape (T,).

    Position t has t + 1 tokens of input, so with the mask on the first positions cannot
    reach the floor of a source that needs two tokens of context.
    """
    windows = np.atleast_2d(np.asarray(windows, dtype=np.int64))
    with one_blas_thread():
        logits, _ = tinylm.forward(params, windows[:, :-1], causal=causal)
    logp = objective.log_softmax(logits)
    picked = np.take_along_axis(logp, windows[:, 1:, None], axis=-1)[..., 0]
    return -picked.mean(axis=0) / objective.LN2


def attention_weights(
    params: dict[str, np.ndarray], windows: np.ndarray, *, layer: int
) -> np.ndarray:
    """Causal attention weights of ``layer`` averaged over windows: (H, T, T), rows sum to 1."""
    if not 0 <= layer < tinylm.n_layers(params):
        raise ValueError(f"layer must be in [0, {tinylm.n_layers(params)}), got {layer!r}")
    _, cache = tinylm.forward(params, np.atleast_2d(windows))
    return cache["layers"][layer][3].mean(axis=0)


def residual_write_norms(params: dict[str, np.ndarray], tokens: np.ndarray) -> dict[str, float]:
    """Mean L2 norm of each write to the residual stream (embed, attn0, mlp0, ...) on windows."""
    _, cache = tinylm.forward(params, np.atleast_2d(tokens))
    return {k: float(np.linalg.norm(w, axis=-1).mean()) for k, w in cache["writes"].items()}


def ablation_bits(params: dict[str, np.ndarray], tokens: np.ndarray) -> dict[str, float]:
    """Bits per token on ``tokens`` with each residual write removed in turn ("none": intact)."""
    names = ["embed"] + [
        f"{part}{i}" for i in range(tinylm.n_layers(params)) for part in ("attn", "mlp")
    ]
    return {"none": mean_bits(params, tokens)} | {
        k: mean_bits(params, tokens, ablate=k) for k in names
    }
