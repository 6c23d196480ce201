"""The pretraining objective and its currencies: nats, bits per token, perplexity, bits per byte.

A language model assigns a probability q(x_t | x_<t) to each next token. Training
minimises the average negative log-likelihood of the tokens that actually came,

    L = -(1/n) sum_t ln q(x_t | x_<t)          (nats per token),

which is the cross-entropy between the data and the model. The same number is
reported in several currencies:

    bits per token   L / ln 2
    perplexity       exp(L) = 2**(bits per token): the size of a uniform choice as hard
    bits per byte    (n_tokens / n_bytes) * L / ln 2: the code length per byte of raw text

Perplexity and bits per token depend on how text is cut into tokens; bits per byte
does not, because the byte count of a text is fixed whatever the tokenizer. That
is why the Pile (Gao et al. 2020, arXiv:2101.00027, sec. 4) and Delétang et al.
2023 (arXiv:2309.10668) report bits per byte. Refs: Shannon 1948 (code length),
Shannon 1951 (entropy of English, 0.6-1.3 bits per letter).

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import units

LN2 = math.log(2.0)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Natural-log probabilities over the last axis, shifted by the max so exp never overflows.

    >>> log_softmax(np.array([0.0, 0.0])).round(4)
    array([-0.6931, -0.6931])
    """
    z = np.asarray(logits, dtype=float)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def cross_entropy_nats(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean next-token loss in nats per token: -mean ln softmax(logits)[target].

    ``logits`` has shape (..., V) and ``targets`` the leading shape (...), integers in [0, V).

    >>> round(cross_entropy_nats(np.zeros((3, 4)), np.array([0, 1, 2])), 4)  # uniform: ln 4
    1.3863
    """
    logp = log_softmax(logits)
    targets = np.asarray(targets)
    if targets.shape != logp.shape[:-1]:
        raise ValueError(f"targets must have shape {logp.shape[:-1]}, got {targets.shape}")
    if targets.size and (targets.min() < 0 or targets.max() >= logp.shape[-1]):
        raise ValueError(
            f"targets must lie in [0, {logp.shape[-1]}), got [{targets.min()}, {targets.max()}]"
        )
    picked = np.take_along_axis(logp, targets[..., None].astype(np.int64), axis=-1)
    return float(-picked.mean())


def uniform_loss_nats(vocab_size: int) -> float:
    """Loss of a model that spreads probability evenly over V tokens: ln V nats per token.

    The loss of a freshly initialised model, before it has learned anything.

    >>> round(uniform_loss_nats(50257), 3)  # GPT-2/GPT-3 vocabulary
    10.825
    """
    return math.log(units.check_positive("vocab_size", vocab_size))


def bits_per_token(loss_nats_per_token: float) -> float:
    """Bits per token from nats per token: L / ln 2.

    >>> round(bits_per_token(math.log(2.0)), 6)
    1.0
    """
    return _check_loss(loss_nats_per_token) / LN2


def perplexity(loss_nats_per_token: float) -> float:
    """Perplexity exp(L): the number of equally likely tokens that would be as hard to guess.

    >>> round(perplexity(math.log(50257.0)))  # a uniform model over GPT-2's vocabulary
    50257
    """
    return math.exp(_check_loss(loss_nats_per_token))


def loss_nats_from_perplexity(ppl: float) -> float:
    """Nats per token from a perplexity: ln(PPL).

    >>> round(loss_nats_from_perplexity(math.e ** 2), 6)
    2.0
    """
    x = units.check_positive("ppl", ppl)
    if x < 1:
        raise ValueError(f"ppl must be >= 1 (a probability cannot exceed 1), got {ppl!r}")
    return math.log(x)


def bits_per_byte(loss_nats_per_token: float, *, bytes_per_token: float) -> float:
    """Bits per byte of raw text: L / (ln 2 * bytes per token), where L is in nats per token.

    ``bytes_per_token`` is the text's byte count over its token count (about 4 for
    English under GPT-2's BPE; exactly 1 for a byte-level model).

    >>> round(bits_per_byte(2.0, bytes_per_token=4.0), 4)  # 2 nats/token at 4 bytes/token
    0.7213
    """
    b = units.check_positive("bytes_per_token", bytes_per_token)
    return bits_per_token(loss_nats_per_token) / b


def loss_nats_from_bits_per_byte(bpb: float, *, bytes_per_token: float) -> float:
    """Nats per token that a tokenizer with ``bytes_per_token`` implies at ``bpb`` bits per byte.

    >>> round(loss_nats_from_bits_per_byte(1.0, bytes_per_token=1.0), 6)
    0.693147
    """
    b = units.check_positive("bytes_per_token", bytes_per_token)
    return _check_loss(bpb, name="bpb") * b * LN2


def perplexity_from_bits_per_byte(bpb: float, *, bytes_per_token: float) -> float:
    """Per-token perplexity implied by ``bpb``: 2**(bpb * bytes per token).

    The same model of the same text has perplexity 2 at one byte per token and 16 at
    four bytes per token: perplexity compounds with the token's length.

    >>> perplexity_from_bits_per_byte(1.0, bytes_per_token=1.0), perplexity_from_bits_per_byte(
    ...     1.0, bytes_per_token=4.0)
    (2.0, 16.0)
    """
    return perplexity(loss_nats_from_bits_per_byte(bpb, bytes_per_token=bytes_per_token))


def _check_loss(value: float, name: str = "loss_nats_per_token") -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number >= 0, got {value!r}") from None
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return x
