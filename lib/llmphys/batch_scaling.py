"""Batch size and learning rate against training compute: the fitted laws and the batches chosen.

McCandlish et al. 2018 (arXiv:1812.06162) tie the useful batch to the gradient noise scale
B_noise (``critical_batch``). Labs now fit the batch directly: DeepSeek LLM (arXiv:2401.02954,
sec. 3.1) grid-searched batch size and learning rate at small compute and fitted power laws in
the training compute C,

    B_opt = 0.2920 C^0.3271  tokens,        eta_opt = 0.3118 C^-0.1250,          (their eq. 1)

with C = M D, M the non-embedding FLOP per token *including attention* (their eq. 2):

    M = 72 n_layer d_model^2 + 6 n_layer d_model l_seq.

(6 N with N = 12 n_layer d_model^2 gives the first term; the second is attention's
score and value matmuls, which 6N leaves out.) A tenfold larger budget raises the fitted batch
by 10^0.3271 = 2.1x and lowers the learning rate by 10^-0.125 = 0.75x. Zhang et al. 2024
(arXiv:2410.21676) find the critical batch grows with the data D, not with the model N.

The fits and the published batches are data in ``data/scaling_laws.toml`` ([batch_fit.*],
[batch_choice.*]).

Home: chapters/05_scaling_laws.ipynb, section "The critical batch size revisited".
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import specs
from .scaling_laws import load_table


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatchFit:
    """B_opt = batch_coeff C^batch_exponent tokens and eta_opt = lr_coeff C^lr_exponent."""

    key: str
    name: str
    batch_coeff: float
    batch_exponent: float
    lr_coeff: float
    lr_exponent: float
    source: str
    quote: str
    notes: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatchChoice:
    """A published run's batch: final (and ramp start) in sequences of ``seq_len`` tokens.

    Compute comes from ``n_layers`` and ``d_model`` (C = M D) when both are given, otherwise
    from the registry ``model``'s active parameters (C = 6 N D).
    """

    key: str
    name: str
    seq_len: int
    batch_sequences: int
    batch_sequences_start: int
    source: str
    quote: str
    seq_len_start: int = 0  # 0: the same as seq_len
    model: str = ""
    n_training_tokens: float = 0.0  # 0: the registry model's
    n_layers: int = 0
    d_model: int = 0
    learning_rate: float = 0.0  # 0: not used here
    notes: str = ""


def batch_fit(key: str = "deepseek2024") -> BatchFit:
    """A published batch/learning-rate fit by key.

    >>> batch_fit().batch_exponent
    0.3271
    """
    fits = load_table("batch_fit", BatchFit)
    if key not in fits:
        raise KeyError(f"no batch fit {key!r}; known: {', '.join(fits)}")
    return fits[key]


def batch_choices() -> dict[str, BatchChoice]:
    """Every [batch_choice.<key>] of data/scaling_laws.toml, in file order."""
    return load_table("batch_choice", BatchChoice)


def optimal_batch_tokens(fit: BatchFit, *, train_flop):
    """Fitted near-optimal batch in tokens, B = b C^e (DeepSeek LLM, sec. 3.1, eq. 1).

    >>> f"{optimal_batch_tokens(batch_fit(), train_flop=1e24):.3g}"
    '2.07e+07'
    """
    c = _flop(train_flop)
    out = fit.batch_coeff * c**fit.batch_exponent
    return float(out) if out.ndim == 0 else out


def optimal_learning_rate(fit: BatchFit, *, train_flop):
    """Fitted near-optimal peak learning rate (dimensionless), eta = a C^e (eq. 1).

    >>> f"{optimal_learning_rate(batch_fit(), train_flop=1e24):.3g}"
    '0.000312'
    """
    c = _flop(train_flop)
    out = fit.lr_coeff * c**fit.lr_exponent
    return float(out) if out.ndim == 0 else out


def non_embedding_flop_per_token(*, n_layers: int, d_model: int, seq_len: int) -> float:
    """Training FLOP per token without the embedding, attention included (DeepSeek LLM, eq. 2):
    M = 72 n_layer d_model^2 + 6 n_layer d_model l_seq.

    >>> f"{non_embedding_flop_per_token(n_layers=30, d_model=4096, seq_len=4096):.4g}"
    '3.926e+10'
    """
    for name, v in (("n_layers", n_layers), ("d_model", d_model), ("seq_len", seq_len)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return 72.0 * n_layers * d_model**2 + 6.0 * n_layers * d_model * seq_len


def choice_train_flop(choice: BatchChoice) -> float:
    """Training FLOP of a published run: M D from its shape, else 6 N_active D from the registry.

    >>> f"{choice_train_flop(batch_choices()['deepseek_llm_7b']):.3g}"
    '7.85e+22'
    """
    if choice.n_layers and choice.d_model:
        m = non_embedding_flop_per_token(
            n_layers=choice.n_layers, d_model=choice.d_model, seq_len=choice.seq_len
        )
        return m * choice.n_training_tokens
    model = specs.model(choice.model)
    n_tokens = choice.n_training_tokens or model.n_training_tokens
    if not n_tokens:
        raise ValueError(f"batch choice {choice.key!r}: no token count, here or in the registry")
    return 6.0 * model.published_n_active_params * n_tokens


def choice_batch_tokens(choice: BatchChoice, *, start: bool = False) -> float:
    """The run's batch in tokens: sequences x sequence length (the ramp's start if ``start``).

    >>> choice_batch_tokens(batch_choices()["llama31_405b"]) / 2**20
    16.0
    """
    if start:
        return float(choice.batch_sequences_start * (choice.seq_len_start or choice.seq_len))
    return float(choice.batch_sequences * choice.seq_len)


def batch_growth_per_decade(exponent: float) -> float:
    """Factor by which a batch law B ~ C^e grows when compute grows tenfold: 10^e.

    >>> round(batch_growth_per_decade(0.3271), 2)
    2.12
    """
    return float(10.0**exponent)


def _flop(train_flop) -> np.ndarray:
    c = np.asarray(train_flop, dtype=float)
    if np.any(c <= 0) or not np.all(np.isfinite(c)):
        raise ValueError(f"train_flop must be positive and finite, got {train_flop!r}")
    return c
