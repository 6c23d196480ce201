"""Turning next-token distributions into text: greedy, temperature, top-k, top-p and beam search.

A model gives logits z over V tokens for the next position. Decoding strategies differ only in
what they do with them:

* greedy takes argmax z (temperature -> 0);
* temperature tau samples from softmax(z / tau): tau < 1 sharpens, tau > 1 flattens;
* top-k keeps the k largest logits and renormalises (Fan et al. 2018, arXiv:1805.04833);
* top-p ("nucleus") keeps the smallest set of tokens whose probability reaches p
  (Holtzman et al. 2020, arXiv:1904.09751);
* beam search keeps the k partial sequences of highest total log-probability, extending each
  by every token and keeping the best k of the k V candidates (the left-to-right beam decoder
  of Sutskever et al. 2014, arXiv:1409.3215).

The first four cost one forward pass per sequence and step, like greedy, plus O(V) or
O(V log V) work on the logits; beam search runs k sequences per request, so k times the
FLOP and the KV cache of a step (the weights are read once for all beams).

Home: chapters/01_foundations.ipynb, section "Sampling and decoding".
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import nn

NextLogits = Callable[[np.ndarray], np.ndarray]
"""A model's next-token logits: token windows (B, T) -> logits (B, V) for position T."""


def next_token_probs(
    logits: np.ndarray,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """Sampling distribution (..., V) after temperature, top-k and top-p, in that order.

    ``temperature=0`` is greedy: all mass on the argmax (the first, on ties).

    >>> next_token_probs(np.log(np.array([0.5, 0.3, 0.2])), top_p=0.7).round(3)
    array([0.625, 0.375, 0.   ])
    """
    z = np.asarray(logits, dtype=float)
    if temperature < 0 or not math.isfinite(temperature):
        raise ValueError(f"temperature must be >= 0 and finite, got {temperature!r}")
    if top_k is not None and not 1 <= top_k <= z.shape[-1]:
        raise ValueError(f"top_k must lie in [1, {z.shape[-1]}], got {top_k!r}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must lie in (0, 1], got {top_p!r}")
    if temperature == 0:
        return np.eye(z.shape[-1])[np.argmax(z, axis=-1)]
    p = nn.softmax(z / temperature)
    if top_k is not None:
        kth = -np.sort(-p, axis=-1)[..., top_k - 1 : top_k]
        p = np.where(p >= kth, p, 0.0)  # ties at the k-th value are all kept
        p = p / p.sum(axis=-1, keepdims=True)
    if top_p is not None:
        order = np.argsort(-p, axis=-1, kind="stable")
        sorted_p = np.take_along_axis(p, order, axis=-1)
        before = np.cumsum(sorted_p, axis=-1) - sorted_p  # mass of the tokens ranked above
        keep_sorted = before < top_p  # the smallest prefix whose mass reaches top_p
        keep = np.zeros_like(keep_sorted)
        np.put_along_axis(keep, order, keep_sorted, axis=-1)
        p = np.where(keep, p, 0.0)
        p = p / p.sum(axis=-1, keepdims=True)
    return p


def _sample(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random((*p.shape[:-1], 1))
    idx = (np.cumsum(p, axis=-1) < u).sum(axis=-1)
    return np.minimum(idx, p.shape[-1] - 1)


def generate(
    next_logits: NextLogits,
    prompt: np.ndarray,
    *,
    n_new: int,
    rng: np.random.Generator,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """Token windows (B, T0 + n_new): ``prompt`` (B, T0) extended one sampled token at a time."""
    if int(n_new) != n_new or n_new < 0:
        raise ValueError(f"n_new must be a non-negative integer, got {n_new!r}")
    tokens = np.atleast_2d(np.asarray(prompt, dtype=np.int64))
    for _ in range(int(n_new)):
        p = next_token_probs(next_logits(tokens), temperature=temperature, top_k=top_k, top_p=top_p)
        tokens = np.concatenate([tokens, _sample(p, rng)[:, None]], axis=1)
    return tokens


def beam_search(
    next_logits: NextLogits, prompt: np.ndarray, *, n_new: int, beam_width: int
) -> tuple[np.ndarray, np.ndarray]:
    """The highest-scoring continuation per prompt under beam search, and its log-probability.

    Returns tokens (B, T0 + n_new) and the summed natural-log probability (B,) of the new
    tokens. Each step runs B x beam_width sequences through the model.
    """
    if int(beam_width) != beam_width or beam_width < 1:
        raise ValueError(f"beam_width must be a positive integer, got {beam_width!r}")
    if int(n_new) != n_new or n_new < 1:
        raise ValueError(f"n_new must be a positive integer, got {n_new!r}")
    k = int(beam_width)
    prompt = np.atleast_2d(np.asarray(prompt, dtype=np.int64))
    b = prompt.shape[0]
    beams = np.repeat(prompt[:, None, :], k, axis=1)  # (B, k, T)
    score = np.full((b, k), -np.inf)
    score[:, 0] = 0.0  # one live beam at the start: the k copies are the same prompt
    for _ in range(int(n_new)):
        z = next_logits(beams.reshape(b * k, -1))
        logp = z - z.max(axis=-1, keepdims=True)
        logp = logp - np.log(np.exp(logp).sum(axis=-1, keepdims=True))
        v = logp.shape[-1]
        total = (score[:, :, None] + logp.reshape(b, k, v)).reshape(b, k * v)
        best = np.argsort(-total, axis=-1, kind="stable")[:, :k]  # (B, k) of k V candidates
        parent, token = best // v, best % v
        beams = np.concatenate(
            [np.take_along_axis(beams, parent[:, :, None], axis=1), token[:, :, None]], axis=2
        )
        score = np.take_along_axis(total, best, axis=-1)
    return beams[:, 0], score[:, 0]


def distinct_ngram_fraction(tokens: np.ndarray, *, n: int) -> float:
    """Distinct n-grams over all n-grams in the rows of ``tokens`` (B, T): 1 when none repeats.

    >>> distinct_ngram_fraction(np.array([[0, 1, 0, 1, 0]]), n=2)  # 01, 10, 01, 10
    0.5
    """
    t = np.atleast_2d(np.asarray(tokens))
    if int(n) != n or not 1 <= n <= t.shape[1]:
        raise ValueError(f"n must be an integer in [1, {t.shape[1]}], got {n!r}")
    grams = np.lib.stride_tricks.sliding_window_view(t, int(n), axis=1).reshape(-1, int(n))
    return len({tuple(g) for g in grams.tolist()}) / len(grams)


def selection_ops_per_token(
    vocab_size: int, *, top_k: int | None = None, top_p: float | None = None
) -> float:
    """Elementwise operations to turn one position's logits into a choice, order of magnitude.

    Softmax: about 3 V (an exponential, a sum and a division per logit); top-k adds a
    selection of about V comparisons; top-p a sort, about V log2 V. Greedy is V comparisons.
    """
    if int(vocab_size) != vocab_size or vocab_size < 2:
        raise ValueError(f"vocab_size must be an integer >= 2, got {vocab_size!r}")
    v = float(vocab_size)
    ops = 3.0 * v
    if top_k is not None:
        ops += v
    if top_p is not None:
        ops += v * math.log2(v)
    return ops
