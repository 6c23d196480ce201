"""KV-cache allocation: contiguous reservation per request against fixed blocks on demand.

A server that keeps each request's cache in one contiguous tensor must reserve it when the
request starts, before it knows how long the output will be. Every reserved slot is one of
three things at a given moment (Kwon et al. 2023, arXiv:2309.06180, sec. 3 and fig. 2):

    token states            slots holding a cached key/value of a token already seen
    reservation             slots for output tokens the request will still produce
    internal fragmentation  slots beyond the request's final length, never filled

A paged allocator (PagedAttention) hands out blocks of ``B`` token slots as the sequence
grows, through a per-request block table, so the only waste is the unfilled tail of the last
block: at most B - 1 slots, on average (B - 1) / 2 when lengths are spread evenly over the
residues mod B. External fragmentation (free memory in holes too small for a new contiguous
reservation) needs a model of the allocator over time and is left out here, so the
contiguous figures are a lower bound on its waste.

Home: chapters/03_architecture.ipynb, section "Paged and quantised KV caches".
"""

from __future__ import annotations

import math

import numpy as np

from . import units

PAGED_BLOCK_TOKENS = 16
"""Token slots per KV block: vLLM's default (Kwon et al. 2023, sec. 7.2, where block sizes
16 to 128 performed best on ShareGPT)."""

KWON_FIG2_PCT: dict[str, dict[str, float]] = {
    "Orca (Max)": {
        "token_states": 20.4,
        "reservation": 13.3,
        "internal_fragmentation": 57.3,
        "external_and_other": 8.9,
    },
    "Orca (Pow2)": {
        "token_states": 26.8,
        "reservation": 17.9,
        "internal_fragmentation": 13.6,
        "external_and_other": 41.6,
    },
    "Orca (Oracle)": {
        "token_states": 38.2,
        "reservation": 25.2,
        "internal_fragmentation": 0.0,
        "external_and_other": 36.6,
    },
    "vLLM": {"token_states": 96.3},
}
"""Average KV-cache memory by use, percent, in the serving experiment of Kwon et al. 2023
(arXiv:2309.06180, fig. 2; OPT-13B on ShareGPT, sec. 6.2), as the figure labels them. The
vLLM bar labels only its token states. Orca (Oracle) knows each output length, so it has no
internal fragmentation; the figure draws none."""


KWON_KERNEL_LATENCY_OVERHEAD_PCT = (20.0, 26.0)
"""Extra attention-kernel latency of PagedAttention's block-table reads against
FasterTransformer's contiguous kernel, low and high, percent (Kwon et al. 2023, sec. 7.1,
fig. 18a)."""


def published_token_share(system: str, *, without_external: bool = True) -> float:
    """Token states' share of KV memory in Kwon et al.'s fig. 2 (dimensionless); with
    ``without_external``, of the memory that is not external fragmentation, which is what
    :func:`contiguous_slots` models.

    >>> round(published_token_share("Orca (Oracle)"), 3)  # 38.2 / (38.2 + 25.2)
    0.603
    """
    try:
        parts = KWON_FIG2_PCT[system]
    except KeyError:
        raise ValueError(f"system must be one of {list(KWON_FIG2_PCT)}, got {system!r}") from None
    if "reservation" not in parts:
        return parts["token_states"] / 100.0
    kept = {k: v for k, v in parts.items() if not (without_external and k == "external_and_other")}
    return parts["token_states"] / sum(kept.values())


SHAREGPT_MEAN_PROMPT_TOKENS = 161.31
SHAREGPT_MEAN_OUTPUT_TOKENS = 337.99
"""Mean input and output lengths of the ShareGPT requests in Kwon et al. 2023 (fig. 11),
the workload behind their fig. 2; the shapes drawn around these means here are ours."""

RESERVATION_POLICIES = ("max", "pow2", "oracle")
"""How a contiguous allocator sizes a request's reservation, after the three Orca baselines
of Kwon et al. 2023 (sec. 6.1): the model's maximum length; the final length rounded up to
a power of two (an output bound known within 2x); the final length exactly (an oracle)."""


def request_snapshot(
    rng: np.random.Generator,
    *,
    n_requests: int,
    max_tokens: int = 2048,
    prompt_mean_tokens: float = SHAREGPT_MEAN_PROMPT_TOKENS,
    prompt_sigma: float = 1.0,
    output_mean_tokens: float = SHAREGPT_MEAN_OUTPUT_TOKENS,
    in_flight: bool = True,
) -> dict[str, np.ndarray]:
    """Token counts of ``n_requests`` requests caught mid-flight (integer arrays, tokens).

    Prompt lengths are lognormal (mean ``prompt_mean_tokens``, log-sd ``prompt_sigma``),
    final output lengths geometric with mean ``output_mean_tokens``; the sum is clipped to
    ``max_tokens``. Each request has produced a uniformly drawn share of its output, so
    ``current`` runs from prompt + 1 to ``final``. With ``in_flight`` the requests are those
    a snapshot of a running server catches: one stays for as many decode steps as it has
    output tokens, so it is caught with probability proportional to its output length, and
    a length-biased geometric length is the sum of two geometric draws less one (mean
    2 mu - 1). Without it, requests are drawn as they arrive.

    >>> s = request_snapshot(np.random.default_rng(0), n_requests=3)
    >>> bool(np.all(s["prompt"] < s["current"])) and bool(np.all(s["current"] <= s["final"]))
    True
    """
    n = _whole("n_requests", n_requests, low=1)
    cap = _whole("max_tokens", max_tokens, low=2)
    units.check_positive("prompt_mean_tokens", prompt_mean_tokens)
    units.check_positive("prompt_sigma", prompt_sigma)
    units.check_positive("output_mean_tokens", output_mean_tokens)
    median = prompt_mean_tokens * math.exp(-(prompt_sigma**2) / 2)  # lognormal mean -> median
    raw = rng.lognormal(math.log(median), prompt_sigma, size=n)
    prompt = np.clip(np.round(raw), 1, cap - 1).astype(np.int64)
    p = 1.0 / max(output_mean_tokens, 1.0)
    output = rng.geometric(p, size=n).astype(np.int64)
    if in_flight:
        output += rng.geometric(p, size=n).astype(np.int64) - 1
    final = np.minimum(prompt + output, cap)
    produced = 1 + np.floor(rng.random(n) * (final - prompt)).astype(np.int64)
    return {"prompt": prompt, "current": prompt + produced, "final": final}


def contiguous_slots(
    snapshot: dict[str, np.ndarray], *, policy: str = "max", max_tokens: int = 2048
) -> dict[str, float]:
    """Token slots of a contiguous allocator, summed over requests, by what they hold.

    ``snapshot`` holds integer arrays ``prompt``, ``current`` and ``final`` (tokens). Slots
    reserved per request: ``max_tokens`` ("max"); the prompt plus its output length rounded
    up to a power of two, capped at ``max_tokens`` ("pow2"); ``final`` ("oracle"). Parts:
    token_states = sum current, reservation = sum (final - current), internal_fragmentation =
    sum (reserved - final).

    >>> s = {"prompt": np.array([50]), "current": np.array([100]), "final": np.array([300])}
    >>> contiguous_slots(s, policy="pow2")  # 250 output tokens: 256 slots for them
    {'token_states': 100.0, 'reservation': 200.0, 'internal_fragmentation': 6.0}
    """
    if policy not in RESERVATION_POLICIES:
        raise ValueError(f"policy must be one of {RESERVATION_POLICIES}, got {policy!r}")
    prompt, cur, fin = _lengths(snapshot)
    cap = _whole("max_tokens", max_tokens, low=1)
    if np.any(fin > cap):
        raise ValueError(f"final lengths must be <= max_tokens={cap}")
    if policy == "max":
        reserved = np.full_like(fin, cap)
    elif policy == "pow2":
        out = np.maximum(fin - prompt, 1)
        reserved = np.minimum(prompt + 2 ** np.ceil(np.log2(out)).astype(np.int64), cap)
    else:
        reserved = fin
    return {
        "token_states": float(cur.sum()),
        "reservation": float((fin - cur).sum()),
        "internal_fragmentation": float((reserved - fin).sum()),
    }


def paged_slots(
    snapshot: dict[str, np.ndarray], *, block_tokens: int = PAGED_BLOCK_TOKENS
) -> dict[str, float]:
    """Token slots of a paged allocator, summed over requests: ceil(current / B) B per request.

    Parts in the same three names as :func:`contiguous_slots`; a block is taken only when
    the previous one is full, so nothing is reserved ahead.

    >>> c = np.array([1, 16, 17])
    >>> paged_slots({"prompt": c - 0, "current": c, "final": c + 5})
    {'token_states': 34.0, 'reservation': 0.0, 'internal_fragmentation': 30.0}
    """
    b = _whole("block_tokens", block_tokens, low=1)
    _, cur, _ = _lengths(snapshot)
    allocated = -(-cur // b) * b
    return {
        "token_states": float(cur.sum()),
        "reservation": 0.0,
        "internal_fragmentation": float((allocated - cur).sum()),
    }


def shares(slots: dict[str, float]) -> dict[str, float]:
    """Each part of ``slots`` over their total (dimensionless; they sum to 1).

    >>> shares({"token_states": 1.0, "reservation": 1.0, "internal_fragmentation": 2.0})
    {'token_states': 0.25, 'reservation': 0.25, 'internal_fragmentation': 0.5}
    """
    total = sum(slots.values())
    if not total > 0:
        raise ValueError(f"slots must hold a positive total, got {slots!r}")
    return {k: v / total for k, v in slots.items()}


def expected_paged_waste_tokens(block_tokens: int = PAGED_BLOCK_TOKENS) -> float:
    """Mean unfilled slots of a request's last block, (B - 1) / 2 tokens, when its length is
    equally likely to take each residue mod B.

    >>> expected_paged_waste_tokens(16)
    7.5
    """
    return (_whole("block_tokens", block_tokens, low=1) - 1) / 2.0


def _whole(name: str, value: int, *, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def _lengths(snapshot: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    try:
        arrays = [np.asarray(snapshot[k]) for k in ("prompt", "current", "final")]
    except (KeyError, TypeError):
        raise ValueError("snapshot must map 'prompt', 'current' and 'final' to arrays") from None
    if any(a.shape != arrays[0].shape for a in arrays) or arrays[0].ndim != 1 or not arrays[0].size:
        raise ValueError("prompt, current and final must be equal-length, non-empty 1-d arrays")
    if any(np.any(a != np.round(a)) for a in arrays):
        raise ValueError("token counts must be whole numbers")
    prompt, cur, fin = (a.astype(np.int64) for a in arrays)
    if np.any(prompt < 0) or np.any(cur < 1) or np.any(cur < prompt) or np.any(fin < cur):
        raise ValueError("need 0 <= prompt <= current <= final and current >= 1 for every request")
    return prompt, cur, fin
