"""Initialisation and width: how the scale of a fresh model's activations depends on the rule.

A matmul y = x W with x of RMS 1 (what RMSNorm hands every block) and W drawn N(0, sigma^2)
with fan-in n gives outputs of RMS sigma sqrt(n): each output sums n independent terms of
variance sigma^2. So

* a fixed sigma (the 0.02 of GPT-1, Radford et al. 2018, kept by GPT-2) gives outputs that
  grow as sqrt(width): 0.02 x sqrt(32) = 0.11 for a 32-wide model, 0.02 x sqrt(12,288) = 2.2
  for GPT-3's width;
* sigma = 1 / sqrt(fan_in) (LeCun et al. 1998, "Efficient BackProp") keeps them at
  RMS 1 at every width; He et al. 2015 (arXiv:1502.01852) double the variance ahead
  of a ReLU, which zeroes half of it.

The logits y = h U are a matmul too, so under a fixed sigma the softmax of a wide model
starts sharper than uniform, and its initial loss moves away from ln V.

Home: chapters/01_foundations.ipynb, section "Initialisation across widths".
"""

from __future__ import annotations

import math

import numpy as np

from . import nn, objective, tinylm

RULES = {
    "fixed 0.02 (GPT-2)": "fixed",
    "fixed 1": "unit",
    "1/sqrt(fan-in)": "fan_in",
}
"""The rules compared, label -> key: GPT-2's fixed 0.02, an unscaled N(0, 1), and LeCun's."""

GPT2_STD = 0.02
"""Initial standard deviation of every weight matrix in GPT-1, N(0, 0.02) (Radford et al. 2018,
"Improving Language Understanding by Generative Pre-Training", model specifications),
kept by GPT-2."""


def weight_std(rule: str, fan_in: int) -> float:
    """Standard deviation of a fresh weight matrix with ``fan_in`` inputs under ``rule``.

    >>> weight_std("fixed", 512), weight_std("unit", 512), round(weight_std("fan_in", 512), 4)
    (0.02, 1.0, 0.0442)
    """
    if int(fan_in) != fan_in or fan_in < 1:
        raise ValueError(f"fan_in must be a positive integer, got {fan_in!r}")
    stds = {"fixed": GPT2_STD, "unit": 1.0, "fan_in": 1.0 / math.sqrt(fan_in)}
    if rule not in stds:
        raise ValueError(f"rule must be one of {sorted(stds)}, got {rule!r}")
    return stds[rule]


def init_params(
    rule: str,
    *,
    rng: np.random.Generator,
    vocab_size: int,
    context_tokens: int,
    d_model: int,
    n_heads: int,
    n_layers: int,
    d_ff: int,
) -> dict[str, np.ndarray]:
    """A tinylm model whose weight matrices are redrawn N(0, weight_std(rule, fan_in)^2).

    Embeddings keep tinylm's N(0, 0.02) (they are looked up, not multiplied); the shape is
    that of :func:`llmphys.tinylm.init_params`. No residual down-scaling, so the rules differ
    in one thing only.
    """
    p = tinylm.init_params(
        rng=rng,
        vocab_size=vocab_size,
        context_tokens=context_tokens,
        d_model=d_model,
        n_heads=n_heads,
        n_layers=n_layers,
        d_ff=d_ff,
    )
    for k, v in p.items():
        if k.endswith((".wq", ".wk", ".wv", ".wo", ".w1", ".w2")) or k == "unembed":
            p[k] = rng.normal(0.0, weight_std(rule, v.shape[0]), v.shape)
    return p


def activation_scales(
    params: dict[str, np.ndarray], inputs: np.ndarray, targets: np.ndarray
) -> dict[str, float]:
    """RMS of the first MLP's pre-activation, of the logits, of the loss gradient with respect
    to the first MLP weights, and the initial loss (nats per token), for one batch.

    The pre-activation is RMSNorm(embedding) W1: the first block's MLP input, computed here
    from the embedding alone (the attention write is left out), so that its closed form is
    sigma sqrt(d_model).
    """
    x = params["tok_emb"][inputs] + params["pos_emb"][: inputs.shape[1]]
    pre = nn.rms_norm(x, params["l0.mlp_norm"]) @ params["l0.w1"]
    logits, _ = tinylm.forward(params, inputs)
    loss, grads = tinylm.loss_and_grads(params, inputs, targets)
    return {
        "preact_rms": float(np.sqrt(np.mean(pre**2))),
        "logit_rms": float(np.sqrt(np.mean(logits**2))),
        "grad_w1_rms": float(np.sqrt(np.mean(grads["l0.w1"] ** 2))),
        "loss_nats": float(loss),
        "uniform_nats": objective.uniform_loss_nats(logits.shape[-1]),
    }


def width_sweep(
    widths: list[int],
    *,
    rule: str,
    inputs: np.ndarray,
    targets: np.ndarray,
    seed: int,
    vocab_size: int,
    context_tokens: int,
    n_layers: int = 2,
) -> dict[str, np.ndarray]:
    """``activation_scales`` of fresh models at each width (d_ff = 2 d, 2 heads), one array per
    quantity, plus "width"."""
    rows = [
        activation_scales(
            init_params(
                rule,
                rng=np.random.default_rng(seed),
                vocab_size=vocab_size,
                context_tokens=context_tokens,
                d_model=int(d),
                n_heads=2,
                n_layers=n_layers,
                d_ff=2 * int(d),
            ),
            inputs,
            targets,
        )
        for d in widths
    ]
    out = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    out["width"] = np.asarray(widths, dtype=float)
    return out
