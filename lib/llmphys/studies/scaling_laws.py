"""Chapter 5's worked cases: Sardana's inference-aware example, Muennighoff's repeated epochs.

Each function takes a case from ``data/scenarios.toml``; the formulas are
:mod:`llmphys.inference_optimal` and :mod:`llmphys.data_constrained`.

Home: chapters/05_scaling_laws.ipynb.
"""

from __future__ import annotations

from .. import data_constrained, inference_optimal, scaling_laws, specs  # noqa: F401 (specs: doctests)
from ..scaling_laws import ParametricLaw
from ..specs import InferenceDemandCase, RepetitionCase


def lifetime_saving(
    case: InferenceDemandCase, law: ParametricLaw | None = None
) -> dict[str, float]:
    """``inference_optimal.versus_chinchilla`` for a case: a compute-optimal model against the
    equal-loss lifetime optimum, under the case's fitted law (or ``law``, to compare fits).

    Sardana et al. 2024 (arXiv:2401.00448): a 13B model served for 2T tokens.

    >>> r = lifetime_saving(specs.scenario("sardana_13b"))
    >>> r["opt_n_params"] < 13e9 and 0 < r["saving_fraction"] < 0.5
    True
    """
    law = scaling_laws.parametric_law(case.law) if law is None else law
    return inference_optimal.versus_chinchilla(
        law, n_params=case.n_params, n_inference_tokens=case.n_inference_tokens
    )


def repetition_cost(case: RepetitionCase) -> dict[str, float]:
    """Extra loss of a case's repeated epochs (nats) and the loss on as many fresh tokens.

    ``penalty``: ``data_constrained.repetition_penalty``; ``fresh_loss``: the data-constrained
    law with every token unique (Muennighoff et al. 2023, arXiv:2305.16264).

    >>> r = repetition_cost(specs.scenario("muennighoff_4_epochs"))
    >>> 0 < r["penalty"] < 0.01 * r["fresh_loss"]
    True
    """
    penalty = data_constrained.repetition_penalty(
        n_params=case.n_params, n_tokens=case.n_tokens, epochs=case.epochs
    )
    fresh = data_constrained.loss(
        n_params=case.n_params, n_tokens=case.n_tokens, n_unique_tokens=case.n_tokens
    )
    return {"penalty": penalty, "fresh_loss": fresh}
