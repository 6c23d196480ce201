"""The machinery of the claims ledger: a claim, the check that recomputes it, and its verdict.

A :class:`Claim` records one quantitative or checkable statement of the source series in our own
words, the number as the source states it, the library expression that recomputes it, the
assumptions under which the source's number comes out, and the verdict we reached. The verdict is
*declared* in the ledger and *derived* again by :func:`assess` from the library's current output,
so a library change that moves a number across a tolerance band fails the test suite.

The expression is a string of Python evaluated against the library's modules (``roofline``,
``specs``, ``units``, ...), ``np``, and the ledger's own modules (``part3``, ``overview``,
``podcast``, ``lecture``, and ``recompute``, which holds the chapter computations several
documents share) for the few multi-step recomputations. The ledger prints that same string, so
the reader sees exactly the call that produced the value.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import Any

__all__ = ["APPROX_BAND", "Verdict", "Compare", "Range", "Bound", "Claim", "Assessment", "assess",
           "evaluate", "fill", "half_unit"]

APPROX_BAND = 0.25   # relative distance from the stated figure still judged "approximately"
_PLACEHOLDER = re.compile(r"\[\[(.+?)\|([^\]]*)\]\]")


class Verdict(str, Enum):
    """How the source's number fares against the recomputation."""

    EXACT = "reproduced exactly"
    ASSUMPTION = "reproduced under a stated assumption"
    APPROX = "approximately"
    DISPUTED = "disputed"
    UNCHECKABLE = "not checkable numerically"

    @property
    def short(self) -> str:
        return {"EXACT": "exact", "ASSUMPTION": "assumption", "APPROX": "approx.",
                "DISPUTED": "disputed", "UNCHECKABLE": "not numeric"}[self.name]


def half_unit(number: str) -> float:
    """Half a unit in the last significant place of a number written as text.

    This is how precisely a stated figure pins its value: "296" covers [295.5, 296.5), "0.3"
    covers [0.25, 0.35), and "5000" (trailing zeros read as not significant) covers
    [4500, 5500).

    >>> half_unit("296"), half_unit("0.3"), half_unit("5000"), half_unit("1.50")
    (0.5, 0.05, 500.0, 0.005)
    """
    try:
        d = Decimal(number.replace(",", "").replace("_", ""))
    except Exception as exc:  # decimal.InvalidOperation
        raise ValueError(f"number must be a decimal numeral such as '296' or '0.3', "
                         f"got {number!r}") from exc
    if not d.is_finite():
        raise ValueError(f"number must be finite, got {number!r}")
    _, digits, exponent = d.as_tuple()
    if exponent >= 0 and any(digits):  # an integer: trailing zeros are not significant
        text = "".join(map(str, digits))
        exponent += len(text) - len(text.rstrip("0"))
    return 0.5 * 10.0 ** exponent


def _module(name: str) -> Any:
    """``np``, or the llmphys (or llmphys.claims) module called ``name``; None if neither."""
    if name == "np":
        import numpy
        return numpy
    for prefix in ("llmphys.", "llmphys.claims."):
        try:
            return importlib.import_module(prefix + name)
        except ModuleNotFoundError:
            continue
    return None


def evaluate(expr: str) -> Any:
    """Evaluate a claim expression against the library and return its value.

    Every bare name in ``expr`` that is not a builtin must be ``np`` or a module of llmphys or
    llmphys.claims; those modules are imported and put in the expression's globals, so they are
    visible inside comprehensions too.

    >>> evaluate("max(len(units.BYTES_PER_ELEMENT), 1) > 0")
    True
    """
    names = {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
    scope: dict[str, Any] = {"__builtins__": builtins}
    bound = {a.arg for n in ast.walk(ast.parse(expr, mode="eval"))
             if isinstance(n, ast.Lambda) for a in n.args.args}
    bound |= {t.id for n in ast.walk(ast.parse(expr, mode="eval"))
              if isinstance(n, ast.comprehension) for t in ast.walk(n.target)
              if isinstance(t, ast.Name)}
    for name in sorted(names - bound - set(dir(builtins))):
        module = _module(name)
        if module is None:
            raise NameError(f"claim expression uses {name!r}, which is neither 'np' nor a "
                            "module of llmphys or llmphys.claims")
        scope[name] = module
    return eval(compile(expr, "<claim>", "eval"), scope)  # noqa: S307 (constant strings)


def fill(text: str) -> str:
    """Replace each ``[[expression|format]]`` in a note by the library's value, formatted.

    Notes are prose, and prose numbers come from code: a note writes
    ``[[roofline.ridge_point(specs.accelerator('h100_sxm'))|.1f]]`` where it would otherwise
    type 295.3.

    >>> fill("2 + 2 = [[2 + 2|d]]")
    '2 + 2 = 4'
    """
    return _PLACEHOLDER.sub(lambda m: format(evaluate(m.group(1)), m.group(2)), text)


def _as_tuple(value: Any) -> tuple[float, ...]:
    if isinstance(value, (tuple, list)):
        return tuple(float(v) for v in value)
    return (float(value),)


@dataclass(frozen=True)
class _Check:
    expr: str
    fmt: str = "{:.3g}"
    unit: str = ""
    approx: float = APPROX_BAND   # relative distance still judged "approximately"

    def show(self, value: Any) -> str:
        text = " / ".join(self.fmt.format(v) for v in _as_tuple(value))
        return f"{text} {self.unit}".strip()


@dataclass(frozen=True)
class Compare(_Check):
    """The source states a number (or one per element of a tuple): ``target`` as written.

    A value that rounds to the stated figure (within :func:`half_unit` of it, or within ``tol``
    when given) matches exactly; one within ``approx`` (relative) matches approximately.
    """

    target: str | tuple[str, ...] = ""
    tol: float | None = None

    def grade(self, value: Any) -> str:
        targets = (self.target,) if isinstance(self.target, str) else tuple(self.target)
        values = _as_tuple(value)
        if len(values) != len(targets):
            raise ValueError(f"expression gave {len(values)} values for {len(targets)} targets")
        grades = []
        for v, t in zip(values, targets):
            x = float(t.replace(",", ""))
            band = self.tol if self.tol is not None else half_unit(t)
            if abs(v - x) <= band * (1 + 1e-12):
                grades.append("exact")
            elif abs(v - x) <= self.approx * abs(x):
                grades.append("approx")
            else:
                grades.append("miss")
        return _worst(grades)

    def ratios(self, value: Any) -> tuple[float, ...]:
        targets = (self.target,) if isinstance(self.target, str) else tuple(self.target)
        return tuple(v / float(t.replace(",", "")) for v, t in zip(_as_tuple(value), targets))


@dataclass(frozen=True)
class Range(_Check):
    """The source states a range ``lo`` to ``hi``; a value inside it matches exactly."""

    lo: float = -math.inf
    hi: float = math.inf

    def grade(self, value: Any) -> str:
        grades = []
        for v in _as_tuple(value):
            if self.lo <= v <= self.hi:
                grades.append("exact")
            elif self.lo * (1 - self.approx) <= v <= self.hi * (1 + self.approx):
                grades.append("approx")
            else:
                grades.append("miss")
        return _worst(grades)

    def ratios(self, value: Any) -> tuple[float, ...]:
        return tuple(v / min(max(v, self.lo), self.hi) for v in _as_tuple(value))


@dataclass(frozen=True)
class Bound(_Check):
    """The source states an inequality: the value is ``op`` (one of < <= > >=) ``threshold``."""

    op: str = "<"
    threshold: float = 0.0

    def __post_init__(self) -> None:
        if self.op not in ("<", "<=", ">", ">="):
            raise ValueError(f"op must be one of '<', '<=', '>', '>=', got {self.op!r}")

    def grade(self, value: Any) -> str:
        grades = []
        t = self.threshold
        for v in _as_tuple(value):
            holds = {"<": v < t, "<=": v <= t, ">": v > t, ">=": v >= t}[self.op]
            near = abs(v - t) <= self.approx * abs(t)
            grades.append("exact" if holds else "approx" if near else "miss")
        return _worst(grades)

    def ratios(self, value: Any) -> tuple[float, ...]:
        return tuple(1.0 if g == "exact" else v / self.threshold
                     for v, g in ((v, self.grade(v)) for v in _as_tuple(value)))


def _worst(grades: list[str]) -> str:
    for g in ("miss", "approx", "exact"):
        if g in grades:
            return g
    raise ValueError("no values to grade")


@dataclass(frozen=True)
class Claim:
    """One checkable statement of the source series.

    ``id`` is a letter for the document and a number (``M03``); ``source`` the document's file
    name in ``shared/seeds``; ``where`` the passage (section heading or timestamp); ``claim`` the
    statement in our own words; ``stated`` the source's figure as it gives it. ``check`` is
    ``None`` for a claim no number can settle. ``section`` is the MyST label of the chapter
    section that derives the number; ``glue`` names the chapter's glued values (notebook stem,
    names) that must equal this claim's value, so prose and ledger cannot drift apart.
    """

    id: str
    source: str
    where: str
    claim: str
    stated: str
    check: Compare | Range | Bound | None
    verdict: Verdict
    section: str
    assumptions: str = ""
    note: str = ""
    see_also: tuple[str, ...] = ()
    glue: tuple[str, tuple[str, ...]] | None = None
    glue_scale: float = 1.0   # claim value = glue value x glue_scale (e.g. 100 for percent)
    refs: tuple[str, ...] = field(default=())  # bibliography keys of primary sources


@dataclass(frozen=True)
class Assessment:
    claim: Claim
    value: Any
    shown: str
    verdict: Verdict

    @property
    def ratios(self) -> tuple[float, ...]:
        """Our value over the source's figure, one per stated number; 1.0 means agreement.

        For a range, the distance to its nearer end (1.0 inside it); for a bound, 1.0 when it
        holds and value / threshold when it does not. Empty for an uncheckable claim.
        """
        if self.claim.check is None:
            return ()
        return self.claim.check.ratios(self.value)


def assess(claim: Claim) -> Assessment:
    """Recompute ``claim`` with the library and derive its verdict from the value."""
    if claim.check is None:
        return Assessment(claim, None, "", Verdict.UNCHECKABLE)
    value = evaluate(claim.check.expr)
    grade = claim.check.grade(value)
    verdict = {"exact": Verdict.ASSUMPTION if claim.assumptions else Verdict.EXACT,
               "approx": Verdict.APPROX, "miss": Verdict.DISPUTED}[grade]
    return Assessment(claim, value, claim.check.show(value), verdict)
