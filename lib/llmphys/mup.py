"""Maximal update parametrisation (muP): which learning rate and multiplier each tensor gets.

Under the standard parametrisation (SP) every weight matrix is drawn N(0, 1/fan_in), the logits
are h U and one Adam learning rate eta drives every tensor. Adam's update of a weight entry is
about eta whatever its gradient, so a hidden matrix's update moves its output by about
eta x fan_in: the widest model needs the smallest rate, and the best eta drifts with width.
muP (Yang & Hu 2021, "Tensor Programs IV", arXiv:2011.14522; Yang et al. 2022, "Tensor
Programs V", arXiv:2203.03466, Table 3 and its equivalent multiplier forms) rescales by the width
multiplier m = width / base_width so that each update moves each activation by O(1) at every
width:

    tensor                      init var      Adam LR        forward multiplier
    input (embeddings), gains   const         eta            1
    hidden matrices             1/fan_in      eta / m        1
    output (unembedding)        1/fan_in      eta            1/m on the logits
    attention scores            -             -              1/d_head instead of 1/sqrt(d_head)

At m = 1 both parametrisations are the same model, so a learning rate tuned on the base width
can be carried to any width under muP ("muTransfer"). The attention rule is written as
sqrt(base_d_head) / d_head, which equals SP's 1/sqrt(d_head) at the base width.

The numpy model is ``tinylm``'s, unchanged: a forward multiplier a on a tensor W is the model
with W_eff = a W, whose gradient with respect to the stored W is a x dL/dW_eff; the attention
scale is folded into W_q the same way (q k^T s = (q a)(k)^T / sqrt(d_head) with
a = s sqrt(d_head)). ``lr_sweep`` trains each (width, learning rate) cell and returns the
final loss: the measurement of the chapter's section.

Home: chapters/01_foundations.ipynb, section "Learning-rate transfer across widths".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import init_scale, objective, specs, tinylm, tinylm_train, training_practice, units

PARAMETRISATIONS = ("sp", "mup")
"""The two rules compared: standard (one Adam rate, 1/sqrt(d_head) attention) and muP."""

ROLES = ("input", "hidden", "output", "vector")


def role_of(name: str) -> str:
    """The muP role of a tinylm parameter: embeddings are "input", the unembedding "output",
    the block matrices "hidden", and norm gains and biases "vector".

    >>> [role_of(k) for k in ("tok_emb", "l0.wq", "l1.w2", "unembed", "l0.b1", "final_norm")]
    ['input', 'hidden', 'hidden', 'output', 'vector', 'vector']
    """
    if name in ("tok_emb", "pos_emb"):
        return "input"
    if name == "unembed":
        return "output"
    if name.endswith((".wq", ".wk", ".wv", ".wo", ".w1", ".w2")):
        return "hidden"
    if name.endswith(("_norm", ".b1", ".b2")):
        return "vector"
    raise ValueError(f"name: not a tinylm parameter, got {name!r}")


def _check(kind: str, width_mult: float) -> None:
    if kind not in PARAMETRISATIONS:
        raise ValueError(f"kind must be one of {PARAMETRISATIONS}, got {kind!r}")
    if not width_mult > 0:
        raise ValueError(f"width_mult must be positive, got {width_mult!r}")


def lr_multiplier(kind: str, role: str, width_mult: float) -> float:
    """Factor on the base Adam learning rate for a tensor of ``role`` at width multiplier m.

    SP: 1 for every tensor. muP: 1/m for hidden matrices, 1 for the rest (Yang et al. 2022,
    Table 3's Adam rates in multiplier form: the output's 1/fan_in rate is moved into the logit
    multiplier).

    >>> [lr_multiplier("mup", r, 4.0) for r in ROLES], lr_multiplier("sp", "hidden", 4.0)
    ([1.0, 0.25, 1.0, 1.0], 1.0)
    """
    _check(kind, width_mult)
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    return 1.0 / width_mult if kind == "mup" and role == "hidden" else 1.0


def output_multiplier(kind: str, width_mult: float) -> float:
    """Factor on the logits h U: 1 under SP, 1/m under muP (the readout's 1/fan_in scaling).

    >>> output_multiplier("sp", 8.0), output_multiplier("mup", 8.0)
    (1.0, 0.125)
    """
    _check(kind, width_mult)
    return 1.0 / width_mult if kind == "mup" else 1.0


def attention_scale(kind: str, d_head: int, base_d_head: int) -> float:
    """Factor on q k^T: 1/sqrt(d_head) under SP, sqrt(base_d_head)/d_head under muP.

    The muP rule is 1/d_head (Yang et al. 2022, sec. 4), scaled to agree with SP at the base.

    >>> [attention_scale(k, d, 16) for k, d in (("sp", 64), ("mup", 64), ("mup", 16))]
    [0.125, 0.0625, 0.25]
    """
    _check(kind, d_head / base_d_head)
    return 1.0 / math.sqrt(d_head) if kind == "sp" else math.sqrt(base_d_head) / d_head


def forward_multipliers(kind: str, *, d_model: int, base_d_model: int, n_heads: int, n_layers: int):
    """{parameter name: a}: the multipliers that make tinylm's model the parametrised one.

    ``unembed`` gets the logit multiplier; each W_q gets attention_scale x sqrt(d_head), since
    tinylm already divides by sqrt(d_head). Names absent from the dict have multiplier 1.

    >>> forward_multipliers("mup", d_model=64, base_d_model=16, n_heads=2, n_layers=1)
    {'unembed': 0.25, 'l0.wq': 0.5}
    """
    m = d_model / base_d_model
    d_head, base_d_head = d_model // n_heads, base_d_model // n_heads
    q = attention_scale(kind, d_head, base_d_head) * math.sqrt(d_head)
    return {"unembed": output_multiplier(kind, m)} | {f"l{i}.wq": q for i in range(n_layers)}


def loss_and_grads(params, mults, inputs, targets):
    """tinylm's loss and gradients for the model with W_eff = a W (a from ``mults``), the
    gradients taken with respect to the stored W: dL/dW = a dL/dW_eff."""
    eff = {k: v * mults[k] if k in mults else v for k, v in params.items()}
    loss, grads = tinylm.loss_and_grads(eff, inputs, targets)
    return loss, {k: g * mults[k] if k in mults else g for k, g in grads.items()}


def train_final_bits(
    kind: str,
    *,
    d_model: int,
    base_d_model: int,
    lr: float,
    corpus: np.ndarray,
    eval_windows: np.ndarray,
    n_steps: int,
    batch_size: int,
    init_seed: int,
    data_seed: int,
    n_heads: int = 2,
    n_layers: int = 2,
    warmup_steps: int = 10,
) -> float:
    """Bits per token on ``eval_windows`` (B, T+1) after ``n_steps`` of Adam (no weight decay,
    warm-up then cosine) at base learning rate ``lr``, for a ``d_model``-wide tinylm (d_ff = 2
    d_model, vocabulary and context from the data) under parametrisation ``kind``.

    Weights start as init_scale's 1/sqrt(fan-in) rule with ``init_seed``; batches are drawn
    with ``data_seed``, the same for every cell so that cells differ only in width and rate.
    A run whose loss stops being finite returns inf.
    """
    units.check_positive("lr", lr)
    vocab, t = int(corpus.max()) + 1, eval_windows.shape[1] - 1
    p = init_scale.init_params(
        "fan_in", rng=np.random.default_rng(init_seed), vocab_size=vocab, context_tokens=t,
        d_model=d_model, n_heads=n_heads, n_layers=n_layers, d_ff=2 * d_model,
    )  # fmt: skip
    mults = forward_multipliers(
        kind, d_model=d_model, base_d_model=base_d_model, n_heads=n_heads, n_layers=n_layers
    )
    lr_mult = {
        k: lr_multiplier(kind, role_of(k), d_model / base_d_model) for k in p if k != "n_heads"
    }
    rng = np.random.default_rng(data_seed)
    state: dict[str, dict[str, np.ndarray]] = {"m": {}, "v": {}}
    with tinylm_train.one_blas_thread(), np.errstate(all="ignore"):
        for step in range(n_steps):
            w = corpus[rng.integers(0, corpus.size - t, batch_size)[:, None] + np.arange(t + 1)]
            loss, grads = loss_and_grads(p, mults, w[:, :-1], w[:, 1:])
            if not np.isfinite(loss):
                return math.inf
            rate = training_practice.lr_schedule(
                step, n_steps=n_steps, peak_lr=lr, warmup_steps=warmup_steps
            )
            _adam(p, grads, state, step + 1, {k: rate * m for k, m in lr_mult.items()})
        eval_loss, _ = loss_and_grads(p, mults, eval_windows[:, :-1], eval_windows[:, 1:])
    bits = objective.bits_per_token(eval_loss)
    return bits if np.isfinite(bits) else math.inf


def _adam(p, grads, state, step, rates, beta1=0.9, beta2=0.95, eps=1e-8):
    """Adam (Kingma & Ba 2015, alg. 1) with one learning rate per tensor, in place."""
    for k, g in grads.items():
        m = state["m"][k] = beta1 * state["m"].get(k, 0.0) + (1 - beta1) * g
        v = state["v"][k] = beta2 * state["v"].get(k, 0.0) + (1 - beta2) * g * g
        p[k] -= rates[k] * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)


def lr_sweep(
    kind: str,
    *,
    widths: Sequence[int],
    lrs: Sequence[float],
    base_d_model: int,
    **train_kwargs,
) -> np.ndarray:
    """Final bits per token, shape (len(widths), len(lrs)), of ``train_final_bits`` per cell."""
    return np.array(
        [
            [
                train_final_bits(
                    kind, d_model=int(d), base_d_model=base_d_model, lr=float(lr), **train_kwargs
                )
                for lr in lrs
            ]
            for d in widths
        ]
    )


def best_lr(lrs: Sequence[float], bits: np.ndarray) -> np.ndarray:
    """The grid learning rate of lowest loss, per row of ``bits`` (one row per width).

    >>> best_lr([1e-3, 1e-2, 1e-1], np.array([[3.0, 2.0, 2.5], [2.0, 2.5, np.inf]])).tolist()
    [0.01, 0.001]
    """
    bits = np.atleast_2d(np.asarray(bits, dtype=float))
    if bits.shape[-1] != len(lrs):
        raise ValueError(
            f"bits must have one column per learning rate ({len(lrs)}), got {bits.shape}"
        )
    return np.asarray(lrs, dtype=float)[
        np.argmin(np.where(np.isfinite(bits), bits, np.inf), axis=1)
    ]


SWEEP: dict[str, Any] = {
    "widths": (32, 64, 128, 256),
    "base_d_model": 32,
    "lr_exponents": tuple(range(-11, -2)),  # learning rates 2^-11 ... 2^-3
    "n_steps": 100,
    "batch_size": 32,
    "n_eval_windows": 256,
    "init_seed": 0,
    "data_seed": 1,
}
"""The sweep of chapter 1 and of data/mup_sweep.toml: 4 widths x 9 rates x 2 parametrisations,
on chapter 1's order-2 source over 8 letters (chain seed 1, corpus seed 2, held-out seed 3)."""


def sweep_lrs() -> np.ndarray:
    """The sweep's learning-rate grid, 2^k for k in SWEEP["lr_exponents"].

    >>> sweep_lrs()[[0, -1]].tolist()
    [0.00048828125, 0.125]
    """
    return 2.0 ** np.asarray(SWEEP["lr_exponents"], dtype=float)


def sweep_data() -> tuple[np.ndarray, np.ndarray]:
    """(training corpus, held-out windows (256, 9)): chapter 1's synthetic text, same seeds."""
    chain = tinylm_train.second_order_chain(8, rng=np.random.default_rng(1), concentration=0.2)
    corpus = tinylm_train.sample_symbols(chain, 160_000, rng=np.random.default_rng(2))
    held_out = tinylm_train.sample_symbols(chain, 16_384, rng=np.random.default_rng(3))
    n = SWEEP["n_eval_windows"]
    return corpus, held_out[: 9 * n].reshape(n, 9)


def sweep_train_kwargs() -> dict:
    """The keyword arguments of :func:`train_final_bits` that the sweep fixes."""
    return {k: SWEEP[k] for k in ("n_steps", "batch_size", "init_seed", "data_seed")}


def load_sweep() -> dict:
    """data/mup_sweep.toml: ``bits`` {"sp", "mup"} -> (widths, lrs) array, ``widths``, ``lrs``,
    and the ``command`` and ``cpu_s`` that made it."""
    raw = specs.registry_table("mup_sweep.toml")
    bits = {k: np.asarray(raw["bits"][k], dtype=float) for k in PARAMETRISATIONS}
    shape = (len(SWEEP["widths"]), len(SWEEP["lr_exponents"]))
    for k, b in bits.items():
        if b.shape != shape:
            raise ValueError(f"mup_sweep.toml[bits.{k}]: shape {b.shape}, SWEEP says {shape}")
    return {
        "bits": bits,
        "widths": np.asarray(SWEEP["widths"]),
        "lrs": sweep_lrs(),
        "command": raw["command"],
        "cpu_s": raw["cpu_s"],
    }
