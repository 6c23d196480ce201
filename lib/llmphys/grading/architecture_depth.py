"""Checks for chapter 3's second-pass Implement exercises: paged KV slots, MoE drops, a
linear-attention recurrence, a parallel block's bytes. Each reference is the library's own.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from llmphys import block_savings, kv_paging, linear_recurrence, moe_capacity, specs
from llmphys.grading._core import Case, Feedback, Mistake, check_function

__all__: list[str] = [
    "check_dropped_share",
    "check_linear_attention_recurrent",
    "check_paged_kv_slots",
    "check_parallel_block_bytes",
]

_SEED = 30  # every case list below is drawn once from this seed


# ---------------------------------------------------------------- paged KV slots
def _paged_ref(lengths, block_tokens):
    cur = np.asarray(lengths)
    parts = kv_paging.paged_slots(
        {"prompt": cur, "current": cur, "final": cur}, block_tokens=block_tokens
    )
    return parts["token_states"] + parts["internal_fragmentation"]


def _paged_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED)
    cases = [
        Case(args=(rng.integers(1, 3000, size=int(rng.integers(1, 9))).tolist(), int(b)))
        for b in rng.choice([8, 16, 32, 128], size=8)
    ]
    cases += [
        Case(args=([16, 32, 48], 16), label="lengths that fill their last block exactly"),
        Case(args=([1, 1, 1], 16), label="one token each: a whole block each"),
        Case(args=([17], 16), label="one token past a block boundary"),
        Case(args=([5, 300, 2048], 1), label="blocks of one token: no waste"),
    ]
    return cases


_PAGED_MISTAKES = [
    Mistake(
        implementation=lambda ls, b: float(sum(int(n) // b * b for n in ls)),
        message="rounding down drops the partly filled last block: a sequence of n tokens "
        "needs ceil(n / B) blocks",
    ),
    Mistake(
        implementation=lambda ls, b: float(sum((int(n) // b + 1) * b for n in ls)),
        message="n // B + 1 blocks is one too many when n is a multiple of B: use ceil(n / B)",
    ),
    Mistake(
        implementation=lambda ls, b: float(sum(-(-int(n) // b) for n in ls)),
        message="that is the number of blocks: the question asks for token slots, blocks "
        "times block_tokens",
    ),
    Mistake(
        implementation=lambda ls, b: float(-(-sum(int(n) for n in ls) // b) * b),
        message="blocks are not shared between sequences: round up each sequence on its own",
    ),
]


def check_paged_kv_slots(fn: Any) -> Feedback:
    """Check ``fn(lengths, block_tokens)``: the token slots a paged allocator holds for
    sequences of the given lengths, sum of ceil(n / B) B (reference ``kv_paging.paged_slots``).

    >>> print(check_paged_kv_slots(lambda ls, b: sum(-(-n // b) * b for n in ls)))
    PASS arch-ex-paged-slots (<lambda>): all 12 cases match the reference (relative tolerance 1e-06)
    """
    return check_function(
        fn,
        exercise="arch-ex-paged-slots",
        reference=_paged_ref,
        cases=_paged_cases(),
        mistakes=_PAGED_MISTAKES,
    )


# ---------------------------------------------------------------- MoE dropped share
def _drop_ref(expert_ids, n_experts, capacity):
    return moe_capacity.dropped_fraction(
        np.asarray(expert_ids), n_experts=n_experts, capacity=capacity
    )


def _drop_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED + 1)
    cases = []
    for _ in range(8):
        e = int(rng.choice([4, 8, 16]))
        t = int(rng.integers(8, 200))
        ids = rng.choice(e, size=t, p=rng.dirichlet(np.ones(e))).tolist()
        cases.append(Case(args=(ids, e, int(rng.integers(1, 2 * t // e + 2)))))
    cases += [
        Case(args=([0, 1, 2, 3] * 5, 4, 5), label="perfect balance at capacity: nothing dropped"),
        Case(args=([2] * 10, 4, 3), label="every token to one expert"),
        Case(args=([0, 0, 1, 1, 1], 2, 2), label="one token over"),
        Case(args=([0, 1, 0, 1], 2, 0), label="zero capacity: everything dropped"),
    ]
    return cases


def _count_dropped(ids, e, c):
    return sum(max(0, ids.count(x) - c) for x in range(e))


_DROP_MISTAKES = [
    Mistake(
        implementation=lambda ids, e, c: float(_count_dropped(list(ids), e, c)),
        message="that is the number of dropped tokens: the question asks for their share of "
        "all tokens",
    ),
    Mistake(
        implementation=lambda ids, e, c: _count_dropped(list(ids), e, c - 1) / len(ids),
        message="off by one: an expert keeps its first `capacity` tokens and drops the rest",
    ),
    Mistake(
        implementation=lambda ids, e, c: max(0, len(ids) - e * c) / len(ids),
        message="the buffers are per expert: a busy expert drops tokens even when the others "
        "have room, so count each expert's overflow on its own",
    ),
    Mistake(
        implementation=lambda ids, e, c: _count_dropped(list(ids), e, c) / (e * max(c, 1)),
        message="divide by the number of tokens, not by the total capacity",
    ),
]


def check_dropped_share(fn: Any) -> Feedback:
    """Check ``fn(expert_ids, n_experts, capacity)``: the share of top-1 tokens that find
    their expert's buffer of ``capacity`` full (reference ``moe_capacity.dropped_fraction``).

    >>> def share(ids, e, c):
    ...     return sum(max(0, ids.count(x) - c) for x in range(e)) / len(ids)
    >>> check_dropped_share(share).passed
    True
    """
    return check_function(
        fn,
        exercise="arch-ex-dropped-share",
        reference=_drop_ref,
        cases=_drop_cases(),
        mistakes=_DROP_MISTAKES,
    )


# ---------------------------------------------------------------- decayed linear attention
def _lin_ref(q, k, v, decay):
    return linear_recurrence.recurrent_form(q, k, v, decay)[0]


def _lin_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED + 2)
    cases = []
    for _ in range(6):
        t, dk, dv = (int(x) for x in rng.integers(2, 12, size=3))
        q, k = rng.random((t, dk)), rng.random((t, dk))
        cases.append(Case(args=(q, k, rng.standard_normal((t, dv)), rng.uniform(0.5, 1.0, t))))
    cases += [
        Case(
            args=(np.ones((3, 2)), np.ones((3, 2)), np.eye(3)[:, :2], np.ones(3)),
            label="no decay: plain causal linear attention",
        ),
        Case(
            args=(np.ones((1, 4)), np.ones((1, 4)), np.ones((1, 3)), np.array([0.5])),
            label="one token",
        ),
    ]
    return cases


def _lin_wrong(q, k, v, decay, *, read_first=False, decay_after=False, no_decay=False):
    state = np.zeros((q.shape[1], v.shape[1]))
    out = np.empty((q.shape[0], v.shape[1]))
    for t in range(q.shape[0]):
        a = 1.0 if no_decay else decay[t]
        if read_first:
            out[t] = q[t] @ state
        state = (
            a * (state + np.outer(k[t], v[t])) if decay_after else a * state + np.outer(k[t], v[t])
        )
        if not read_first:
            out[t] = q[t] @ state
    return out


_LIN_MISTAKES = [
    Mistake(
        implementation=lambda q, k, v, a: _lin_wrong(q, k, v, a, read_first=True),
        message="you read the state before adding the current token: y_t includes k_t v_t "
        "(causal, the token attends to itself)",
    ),
    Mistake(
        implementation=lambda q, k, v, a: _lin_wrong(q, k, v, a, decay_after=True),
        message="the decay multiplies the old state only: S_t = a_t S_(t-1) + k_t v_t^T",
    ),
    Mistake(
        implementation=lambda q, k, v, a: _lin_wrong(q, k, v, a, no_decay=True),
        message="the decay is missing: multiply the state by a_t at every step",
    ),
]


def check_linear_attention_recurrent(fn: Any) -> Feedback:
    """Check ``fn(q, k, v, decay)``: outputs (T, d_v) of S_t = a_t S_(t-1) + k_t v_t^T,
    y_t = S_t^T q_t (reference ``linear_recurrence.recurrent_form``).

    >>> def lin(q, k, v, a):
    ...     s, out = np.zeros((q.shape[1], v.shape[1])), []
    ...     for t in range(len(q)):
    ...         s = a[t] * s + np.outer(k[t], v[t])
    ...         out.append(q[t] @ s)
    ...     return np.array(out)
    >>> check_linear_attention_recurrent(lin).passed
    True
    """
    return check_function(
        fn,
        exercise="arch-ex-linear-recurrence",
        reference=_lin_ref,
        cases=_lin_cases(),
        mistakes=_LIN_MISTAKES,
        rtol=1e-9,
    )


# ---------------------------------------------------------------- parallel block bytes
def _par_ref(n_layers, d_model, bytes_per_element):
    m = dataclasses.replace(specs.model("llama3_8b"), n_layers=int(n_layers), d_model=int(d_model))
    return block_savings.parallel_block_savings(m, bytes_per_element=bytes_per_element)[
        "elementwise_bytes"
    ]


def _par_cases() -> list[Case]:
    rng = np.random.default_rng(_SEED + 3)
    cases = [
        Case(
            args=(
                int(rng.integers(2, 129)),
                int(rng.choice([1024, 4096, 8192, 12288])),
                float(rng.choice([1.0, 2.0, 4.0])),
            )
        )
        for _ in range(6)
    ]
    cases += [
        Case(args=(32, 4096, 2.0), label="Llama 3 8B's shape in BF16"),
        Case(args=(1, 8, 1.0), label="one small layer in FP8"),
    ]
    return cases


_PAR_MISTAKES = [
    Mistake(
        implementation=lambda n, d, b: n * 2 * d * b,
        message="that is the norm only: the parallel block also has one residual add fewer "
        "(read two streams, write one: 3d elements)",
    ),
    Mistake(
        implementation=lambda n, d, b: n * 3 * d * b,
        message="that is the residual add only: one norm (read d, write d) is saved as well",
    ),
    Mistake(
        implementation=lambda n, d, b: n * 4 * d * b,
        message="a residual add moves 3d elements (two inputs, one output), not 2d",
    ),
    Mistake(
        implementation=lambda n, d, b: 5 * d * b,
        message="that is one layer: every layer saves a norm and an add",
    ),
]


def check_parallel_block_bytes(fn: Any) -> Feedback:
    """Check ``fn(n_layers, d_model, bytes_per_element)``: HBM bytes per token a parallel
    block saves when norms and residual adds run as separate kernels, L (2d + 3d) b
    (reference ``block_savings.parallel_block_savings``).

    >>> check_parallel_block_bytes(lambda n, d, b: n * 5 * d * b).passed
    True
    """
    return check_function(
        fn,
        exercise="arch-ex-parallel-bytes",
        reference=_par_ref,
        cases=_par_cases(),
        mistakes=_PAR_MISTAKES,
    )
