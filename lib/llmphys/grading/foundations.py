"""Checks for the Implement exercises of chapter 1, foundations (see ``llmphys.grading``).

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmphys import accounting, decoding, mup, specs, training, xent_gradient
from llmphys.grading._core import Case, Feedback, Mistake, check_function

__all__ = [
    "check_logit_gradient",
    "check_mup_lr_multiplier",
    "check_top_p",
    "check_train_step_flop",
]


def _step_reference(
    n_params: float, n_layers: int, n_heads: int, d_head: int, batch_size: int, seq_len: int
) -> float:
    return training.step_flop(
        n_params,
        n_layers=n_layers,
        n_heads=n_heads,
        d_head=d_head,
        batch_size=batch_size,
        seq_len=seq_len,
    )


def _step_cases() -> list[Case]:
    rng = np.random.default_rng(1)  # fixed: the stored feedback must not change
    cases = []
    for _ in range(12):
        n_layers = int(rng.integers(2, 128))
        n_heads = int(rng.choice([8, 16, 32, 64, 128]))
        d_head = int(rng.choice([64, 128]))
        cases.append(
            Case(
                args=(
                    float(np.round(10 ** rng.uniform(8, 12), -6)),  # 100M to 1T weights
                    n_layers,
                    n_heads,
                    d_head,
                    int(rng.choice([1, 8, 64, 512, 2048])),
                    int(rng.choice([512, 2048, 8192, 32_768, 131_072])),
                )
            )
        )
    l405 = specs.model("llama31_405b")
    cases += [
        Case(
            args=(
                accounting.n_params(l405) - accounting.embedding_params(l405),  # multiplied
                l405.n_layers,
                l405.n_heads,
                l405.d_model // l405.n_heads,
                2048,
                8192,
            ),
            label="Llama 3.1 405B's shape from the registry, 2,048 sequences of 8,192 tokens",
        ),
        Case(
            args=(17_504.0, 2, 2, 16, 64, 8),
            label="the tiny model's shape: 17504.0, 2, 2, 16, 64, 8",
        ),
        Case(args=(1e9, 1, 8, 128, 1, 4096), label="one layer, batch 1: 1e9, 1, 8, 128, 1, 4096"),
        Case(args=(1e9, 24, 16, 64, 1, 1), label="a single token: 1e9, 24, 16, 64, 1, 1"),
    ]
    return cases


def _attn(n_layers: int, n_heads: int, d_head: int, seq_len: int) -> float:
    """Forward attention FLOP per token at the causal mean context, 2 L H d (T + 1)."""
    return 2.0 * n_layers * n_heads * d_head * (seq_len + 1)


def _step_mistakes() -> list[Mistake]:
    def forward_only(n, L, h, d, b, t):
        return b * t * (2 * n + _attn(L, h, d, t))

    def per_token(n, L, h, d, b, t):
        return 3 * (2 * n + _attn(L, h, d, t))

    def per_sequence(n, L, h, d, b, t):
        return 3 * t * (2 * n + _attn(L, h, d, t))

    def no_attention(n, L, h, d, b, t):
        return 6 * n * b * t

    def every_key(n, L, h, d, b, t):
        return 3 * b * t * (2 * n + 4.0 * L * h * d * t)

    def half_keys(n, L, h, d, b, t):
        return 3 * b * t * (2 * n + 4.0 * L * h * d * t / 2)

    def attention_forward_only(n, L, h, d, b, t):
        return b * t * (6 * n + _attn(L, h, d, t))

    def scores_only(n, L, h, d, b, t):
        return 3 * b * t * (2 * n + _attn(L, h, d, t) / 2)

    return [
        Mistake(
            implementation=forward_only,
            message="this is the forward pass alone: the backward pass costs twice the forward "
            "(the gradients with respect to the inputs and to the weights), so a step is 3 "
            "forward passes",
        ),
        Mistake(
            implementation=per_token,
            message="this is the cost of one token: a step processes batch_size x seq_len tokens",
        ),
        Mistake(
            implementation=per_sequence,
            message="this is the cost of one sequence: did you multiply by batch_size?",
        ),
        Mistake(
            implementation=no_attention,
            message="this is 6ND alone: the attention scores and the weighted sum of V add "
            "2 L H d_head (T + 1) FLOP per token forward, which 6N leaves out",
        ),
        Mistake(
            implementation=every_key,
            message="every token attends to all T keys here: under the causal mask token t "
            "sees only t of them, (T + 1)/2 on average",
        ),
        Mistake(
            implementation=half_keys,
            message="T/2 keys on average undercounts by half a key: the token at position t "
            "attends to t keys, itself included, so the causal mean is (T + 1)/2",
        ),
        Mistake(
            implementation=attention_forward_only,
            message="the backward pass triples the attention FLOP too, not only the 2N of the "
            "weights",
        ),
        Mistake(
            implementation=scores_only,
            message="attention has two matmuls per layer, the scores Q K^T and the weighted sum "
            "of V, each 2 d_head FLOP per head per key",
        ),
    ]


def check_train_step_flop(fn: Any) -> Feedback:
    """Check ``train_step_flop(n_params, n_layers, n_heads, d_head, batch_size, seq_len)``, the
    FLOP of one training step on ``batch_size`` causal sequences of ``seq_len`` tokens.

    Reference: :func:`llmphys.training.step_flop`, 3 B T (2 N + 2 L H d_head (T + 1)), on
    seeded random shapes plus Llama 3.1 405B's step, the chapter's tiny model, one layer at
    batch 1, and a single token.

    >>> def train_step_flop(n_params, n_layers, n_heads, d_head, batch_size, seq_len):
    ...     tokens = batch_size * seq_len
    ...     attention = 2 * n_layers * n_heads * d_head * (seq_len + 1)
    ...     return 3 * tokens * (2 * n_params + attention)
    >>> print(check_train_step_flop(train_step_flop))  # doctest: +ELLIPSIS
    PASS foundations-ex-step-flop (train_step_flop): all 16 cases match ...
    >>> print(check_train_step_flop(lambda n, L, h, d, b, t: 6 * n * b * t))  # doctest: +ELLIPSIS
    NOT YET foundations-ex-step-flop (<lambda>): 0 of 16 cases match: this is 6ND alone...
    """
    return check_function(
        fn,
        exercise="foundations-ex-step-flop",
        reference=_step_reference,
        cases=_step_cases(),
        mistakes=_step_mistakes(),
    )


def _logit_cases() -> list[Case]:
    rng = np.random.default_rng(2)  # fixed: the stored feedback must not change
    cases = []
    for shape in ((5,), (3, 4), (2, 3, 8), (4, 6, 16)):
        z = np.round(3.0 * rng.standard_normal(shape), 3)
        t = rng.integers(0, shape[-1], shape[:-1])
        cases.append(Case(args=(z, t), label=f"random logits of shape {shape}"))
    cases.append(
        Case(args=(np.array([[1000.0, 0.0, -1000.0]]), np.array([1])), label="logits of +-1000")
    )
    return cases


def _logit_mistakes() -> list[Mistake]:
    def per_token(z, t):
        return xent_gradient.logit_gradient(z, t) * max(np.asarray(t).size, 1)

    def flipped(z, t):
        return -xent_gradient.logit_gradient(z, t)

    def unnormalised(z, t):
        z = np.asarray(z, dtype=float)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return (e - np.eye(z.shape[-1])[t]) / max(np.asarray(t).size, 1)

    return [
        Mistake(
            implementation=per_token,
            message="this is the gradient of the summed loss: the loss is the mean over all "
            "tokens, so divide p - y by their number",
        ),
        Mistake(
            implementation=flipped,
            message="the sign is flipped: this is y - p, the direction that increases the loss",
        ),
        Mistake(
            implementation=unnormalised,
            message="exp(z) is not yet a probability: divide by its sum over the vocabulary",
        ),
    ]


def check_logit_gradient(fn: Any) -> Feedback:
    """Check ``logit_gradient(logits, targets)``, the gradient of the mean cross-entropy with
    respect to the logits, on random shapes and on logits of +-1000 (an unshifted exp overflows).

    Reference: :func:`llmphys.xent_gradient.logit_gradient`, (softmax(z) - onehot(y)) / n.

    >>> def logit_gradient(logits, targets):
    ...     z = logits - logits.max(axis=-1, keepdims=True)
    ...     p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    ...     return (p - np.eye(z.shape[-1])[targets]) / targets.size
    >>> print(check_logit_gradient(logit_gradient))  # doctest: +ELLIPSIS
    PASS foundations-ex-logit-gradient (logit_gradient): all 5 cases match ...
    """
    return check_function(
        fn,
        exercise="foundations-ex-logit-gradient",
        reference=xent_gradient.logit_gradient,
        cases=_logit_cases(),
        mistakes=_logit_mistakes(),
        atol=1e-12,
    )


def _top_p_reference(probs: np.ndarray, top_p: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return decoding.next_token_probs(np.log(probs), top_p=top_p)


def _top_p_cases() -> list[Case]:
    rng = np.random.default_rng(3)  # fixed: the stored feedback must not change
    cases = []
    for v, p in ((8, 0.5), (8, 0.9), (32, 0.9), (32, 0.99), (1000, 0.95)):
        probs = rng.dirichlet(np.full(v, 0.3))
        cases.append(Case(args=(probs, p), label=f"{v} random probabilities, top_p = {p}"))
    cases.append(
        Case(args=(np.array([0.6, 0.3, 0.1]), 0.55), label="[0.6, 0.3, 0.1], top_p = 0.55")
    )
    cases.append(
        Case(args=(np.array([0.6, 0.3, 0.1]), 0.61), label="[0.6, 0.3, 0.1], top_p = 0.61")
    )
    return cases


def _top_p_mistakes() -> list[Mistake]:
    def strict(probs, p):
        order = np.argsort(-probs, kind="stable")
        keep = np.zeros(probs.shape, bool)
        keep[order] = np.cumsum(probs[order]) <= p
        keep[order[0]] = True
        q = np.where(keep, probs, 0.0)
        return q / q.sum()

    def unnormalised(probs, p):
        return _top_p_reference(probs, p) * probs[_top_p_reference(probs, p) > 0].sum()

    return [
        Mistake(
            implementation=strict,
            message="the nucleus is the smallest set whose mass *reaches* top_p: keep the token "
            "that crosses the threshold too (a token is kept when the mass ranked above it is "
            "still below top_p)",
        ),
        Mistake(
            implementation=unnormalised,
            message="the kept probabilities must be renormalised to sum to 1",
        ),
    ]


def check_top_p(fn: Any) -> Feedback:
    """Check ``top_p_probs(probs, top_p)``: nucleus sampling's distribution, the smallest set of
    most probable tokens whose probabilities reach ``top_p``, renormalised (Holtzman et al.
    2020, arXiv:1904.09751).

    Reference: :func:`llmphys.decoding.next_token_probs` with ``top_p``.

    >>> def top_p_probs(probs, top_p):
    ...     order = np.argsort(-probs, kind="stable")
    ...     before = np.cumsum(probs[order]) - probs[order]
    ...     keep = np.zeros(probs.shape, bool)
    ...     keep[order] = before < top_p
    ...     q = np.where(keep, probs, 0.0)
    ...     return q / q.sum()
    >>> print(check_top_p(top_p_probs))  # doctest: +ELLIPSIS
    PASS foundations-ex-top-p (top_p_probs): all 7 cases match ...
    """
    return check_function(
        fn,
        exercise="foundations-ex-top-p",
        reference=_top_p_reference,
        cases=_top_p_cases(),
        mistakes=_top_p_mistakes(),
        atol=1e-12,
    )


MUP_NAMES = ("tok_emb", "pos_emb", "l0.wq", "l1.wo", "l0.w1", "l1.w2", "unembed", "l0.b1",
             "l1.attn_norm", "final_norm")  # fmt: skip
"""The tinylm parameters the muP check asks about: every role appears."""


def _mup_reference(name: str, width_mult: float) -> float:
    return mup.lr_multiplier("mup", mup.role_of(name), width_mult)


def _mup_cases() -> list[Case]:
    return [Case(args=(n, m)) for m in (0.5, 2.0, 4.0, 16.0) for n in MUP_NAMES]


def _mup_mistakes() -> list[Mistake]:
    def hidden(n):
        return mup.role_of(n) == "hidden"

    return [
        Mistake(
            implementation=lambda n, m: 1.0 / m if hidden(n) or n == "unembed" else 1.0,
            message="the unembedding keeps the base rate here: its 1/fan-in is carried by the "
            "logit multiplier 1/m, and dividing its rate too would count the width twice",
        ),
        Mistake(
            implementation=lambda n, m: 1.0,
            message="that is the standard parametrisation: one rate for every tensor, whose best "
            "value then moves with the width",
        ),
        Mistake(
            implementation=lambda n, m: 1.0 / m,
            message="only the hidden matrices (both dimensions grow with the width) get 1/m; "
            "embeddings, norm gains and biases keep the base rate, and the unembedding's width "
            "factor already sits in the 1/m on the logits",
        ),
        Mistake(
            implementation=lambda n, m: m**-0.5 if hidden(n) else 1.0,
            message="Adam moves every entry by about the rate whatever the gradient's size, so "
            "a hidden matrix's output moves by about rate x fan-in: the rate needs 1/m, not "
            "1/sqrt(m)",
        ),
        Mistake(
            implementation=lambda n, m: m if hidden(n) else 1.0,
            message="the wider model needs the *smaller* rate: multiply by 1/m, not by m",
        ),
    ]


def check_mup_lr_multiplier(fn: Any) -> Feedback:
    """Check ``mup_lr_multiplier(name, width_mult)``: the factor on the base Adam learning rate
    for tinylm parameter ``name`` at width multiplier m under muP (Yang et al. 2022, Table 3).

    Reference: :func:`llmphys.mup.lr_multiplier` of :func:`llmphys.mup.role_of`.

    >>> def mup_lr_multiplier(name, width_mult):
    ...     hidden = name.endswith((".wq", ".wk", ".wv", ".wo", ".w1", ".w2"))
    ...     return 1 / width_mult if hidden else 1.0
    >>> print(check_mup_lr_multiplier(mup_lr_multiplier))  # doctest: +ELLIPSIS
    PASS foundations-ex-mup-lr (mup_lr_multiplier): all 40 cases match ...
    """
    return check_function(
        fn,
        exercise="foundations-ex-mup-lr",
        reference=_mup_reference,
        cases=_mup_cases(),
        mistakes=_mup_mistakes(),
        factors=(),
    )
