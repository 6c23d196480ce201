"""The machinery of the claims ledger: a claim, the check that recomputes it, and its verdict.

A :class:`Claim` records one checkable statement of the source series: the statement in our own
words, the figure as the source states it, how that figure is graded (:class:`Compare`,
:class:`Range` or :class:`Bound`), the assumptions under which it comes out, and the verdict we
reached. The records are data, one TOML file per document in ``data/claims/``.

The recomputation is code: one typed function per claim, ``def m01() -> Check``, registered in
the document's module (:mod:`~llmphys.claims.part3`, ...) with :meth:`Registry.register`. It
returns a :class:`Check`: the value to grade and the named numbers that the claim's notes quote
as ``{name:fmt}`` fields (:func:`fill`). The verdict is *declared* in the data and *derived*
again by :func:`assess` from the library's current output, so a library change that moves a
number across a tolerance band fails the test suite. The ledger prints the function's source
(:func:`call_source`) as "the call".

Longer than 400 lines because it is the one grading grammar (bounds, ranges, comparisons,
verdicts) that every check uses, and its parts refer to each other.

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import inspect
import math
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from .. import units

__all__ = [
    "APPROX_BAND",
    "ROUNDING_SLACK",
    "Assessment",
    "Bound",
    "Case",
    "Check",
    "Claim",
    "Compare",
    "Range",
    "Registry",
    "Verdict",
    "assess",
    "call_source",
    "fill",
    "half_unit",
]

APPROX_BAND = 0.25  # relative distance from the stated figure still judged "approximately"
ROUNDING_SLACK = 1e-12  # relative slack on the half-unit band, so 295.5 against "296" is exact
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)(?::[^{}]*)?\}")


class Verdict(StrEnum):
    """How the source's number fares against the recomputation."""

    EXACT = "reproduced exactly"
    ASSUMPTION = "reproduced under a stated assumption"
    APPROX = "approximately"
    DISPUTED = "disputed"
    CONSTRUCTION = "holds by construction"
    UNCHECKABLE = "not checkable numerically"

    @property
    def short(self) -> str:
        return {
            "EXACT": "exact",
            "ASSUMPTION": "assumption",
            "APPROX": "approx.",
            "DISPUTED": "disputed",
            "CONSTRUCTION": "by construction",
            "UNCHECKABLE": "not numeric",
        }[self.name]


class Case(StrEnum):
    """Which case of the exact-against-assumption rule a claim falls under (rule 8 of the ledger).

    The value is the sentence the ledger prints at the head of the claim's note.
    """

    STATED = "Rule 8, stated inputs: the source states them or published data fix them."
    RANGE = (
        "Rule 8, whole range: the inputs are assumed, and the check evaluates the statement at "
        "the ends of their recorded ranges, so its verdict holds across all of them."
    )
    SCOPED = "Rule 8, scoped: the source limits its own statement, and the check stays inside."
    CHOICE = (
        "Rule 8, one unstated choice: the figure comes out only at the choice named under "
        "Assumes, which the source does not state."
    )
    CONSTRUCTION = (
        "Rule 8, by construction: no state of the data can move this check (an identity of the "
        "model, a definition or a theorem of the law), so it is no evidence and is counted apart."
    )
    JUDGEMENT = "Rule 8, not checkable: a judgement, a causal claim, a forecast or a rule of thumb."


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
        raise ValueError(
            f"number must be a decimal numeral such as '296' or '0.3', got {number!r}"
        ) from exc
    _, digits, exponent = d.as_tuple()
    if not isinstance(exponent, int):  # "n", "N" or "F": a NaN or an infinity
        raise ValueError(f"number must be finite, got {number!r}")
    if exponent >= 0 and any(digits):  # an integer: trailing zeros are not significant
        text = "".join(map(str, digits))
        exponent += len(text) - len(text.rstrip("0"))
    return 0.5 * 10.0**exponent


@dataclass(frozen=True, kw_only=True)
class Check:
    """What a claim's check function returns.

    ``value`` is graded against the stated figure (a number, or one per stated number; None for
    a claim no number settles, whose function only supplies its notes' numbers). ``numbers``
    are the named values that the claim's notes and assumptions quote as ``{name:fmt}``.
    ``threshold`` is set only by a :class:`Bound` whose threshold the library computes.
    """

    value: Any
    numbers: Mapping[str, Any] = field(default_factory=dict)
    threshold: float | None = None


class Registry:
    """One document's check functions, by claim id: ``def m01() -> Check`` checks claim M01.

    >>> reg = Registry("example")
    >>> @reg.register
    ... def x01() -> Check:
    ...     return Check(value=1.0)
    >>> reg["X01"]().value
    1.0
    """

    def __init__(self, document: str) -> None:
        self.document = document
        self._checks: dict[str, Callable[[], Check]] = {}

    def register(self, fn: Callable[[], Check]) -> Callable[[], Check]:
        claim_id = fn.__name__.upper()
        if not re.fullmatch(r"[A-Z]\d\d", claim_id):
            raise ValueError(
                f"a check function is named after its claim id in lower case "
                f"('m01'), got {fn.__name__!r}"
            )
        if claim_id in self._checks:
            raise ValueError(f"{self.document}: two check functions for {claim_id}")
        self._checks[claim_id] = fn
        return fn

    def __getitem__(self, claim_id: str) -> Callable[[], Check]:
        return self._checks[claim_id]

    def __contains__(self, claim_id: object) -> bool:
        return claim_id in self._checks

    def get(self, claim_id: str) -> Callable[[], Check] | None:
        """The check function of ``claim_id``, or None when the document registers none."""
        return self._checks.get(claim_id)

    def ids(self) -> list[str]:
        return list(self._checks)


class _NoteFormatter(string.Formatter):
    """str.format, plus the format spec ``sci`` for a power of ten (``units.fmt_sci``)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "sci":
            return units.fmt_sci(value, digits=None)
        return super().format_field(value, format_spec)


_NOTE_FORMATTER = _NoteFormatter()


def fill(text: str, numbers: Mapping[str, Any], *, claim_id: str = "") -> str:
    """Fill each ``{name:fmt}`` field of a note with the named number, formatted (str.format).

    Notes are prose, and prose numbers come from code: a note writes ``{ridge:.1f}`` where it
    would otherwise type 295.3, and the claim's check function returns ``ridge``. A field with
    no number raises a KeyError naming the claim and the numbers there are.

    ``{name:sci}`` writes a power of ten for readers (``units.fmt_sci``: "1 × 10⁻¹²"), never
    Python's e-notation.

    >>> fill("2 + 2 = {four:d}", {"four": 4})
    '2 + 2 = 4'
    >>> fill("within {tol:sci}", {"tol": 1e-12})
    'within 1 × 10⁻¹²'
    """
    try:
        return _NOTE_FORMATTER.format(text, **numbers)
    except KeyError as exc:
        raise KeyError(
            f"{claim_id or 'note'}: field {exc.args[0]!r} is not among the numbers its "
            f"check returns ({', '.join(sorted(numbers)) or 'none'})"
        ) from None


def note_fields(text: str) -> set[str]:
    """The names of the ``{name:fmt}`` fields in a note.

    >>> sorted(note_fields("{a:.1f} and {b}"))
    ['a', 'b']
    """
    return set(_FIELD.findall(text))


def call_source(fn: Callable[[], Check]) -> str:
    """The source of a check function as the ledger prints it: "the call", decorator dropped."""
    lines = inspect.getsource(fn).splitlines()
    return "\n".join(ln for ln in lines if not ln.lstrip().startswith("@"))


def _as_tuple(value: Any) -> tuple[float, ...]:
    if isinstance(value, (tuple, list)):
        return tuple(float(v) for v in value)
    return (float(value),)


@dataclass(frozen=True, kw_only=True)
class _Grading:
    """How our value is shown (``fmt`` per number, ``unit``) and how far "approximately" goes."""

    fmt: str = "{:.3g}"
    unit: str = ""
    approx: float = APPROX_BAND  # relative distance still judged "approximately"
    # A value that depends on a choice the source leaves free (which chips enter a fit) is at
    # best "approximately" (rule 6 of the ledger): the choice, in words, caps the grade.
    free_choice: str = ""

    def show(self, value: Any) -> str:
        text = " / ".join(self.fmt.format(v) for v in _as_tuple(value))
        return f"{text} {self.unit}".strip()


@dataclass(frozen=True, kw_only=True)
class Compare(_Grading):
    """The source states a number (or one per element of a tuple): ``target`` as written.

    A value that rounds to the stated figure (within :func:`half_unit` of it, or within ``tol``
    when given) matches exactly; one within ``approx`` (relative) matches approximately.
    """

    target: str | tuple[str, ...]
    tol: float | None = None

    def _targets(self) -> tuple[str, ...]:
        return (self.target,) if isinstance(self.target, str) else tuple(self.target)

    def grade(self, value: Any) -> str:
        targets, values = self._targets(), _as_tuple(value)
        if len(values) != len(targets):
            raise ValueError(f"the check gave {len(values)} values for {len(targets)} targets")
        grades = []
        for v, t in zip(values, targets, strict=True):
            x = float(t.replace(",", ""))
            band = self.tol if self.tol is not None else half_unit(t)
            if abs(v - x) <= band * (1 + ROUNDING_SLACK):
                grades.append("exact")
            elif abs(v - x) <= self.approx * abs(x):
                grades.append("approx")
            else:
                grades.append("miss")
        return _worst(grades)

    def ratios(self, value: Any) -> tuple[float, ...]:
        return tuple(
            v / float(t.replace(",", ""))
            for v, t in zip(_as_tuple(value), self._targets(), strict=True)
        )


@dataclass(frozen=True, kw_only=True)
class Range(_Grading):
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


BOUND_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True, kw_only=True)
class Bound(_Grading):
    """The source states an inequality: the value is ``op`` (one of < <= > >=) ``threshold``.

    ``threshold`` None means the check function computes it (:attr:`Check.threshold`).
    """

    op: str
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.op not in BOUND_OPS:
            raise ValueError(f"op must be one of {', '.join(BOUND_OPS)}, got {self.op!r}")

    def _threshold(self) -> float:
        if self.threshold is None:
            raise ValueError(
                "this bound's threshold comes from its check function, which returned none"
            )
        return self.threshold

    def grade(self, value: Any) -> str:
        grades = []
        t = self._threshold()
        for v in _as_tuple(value):
            holds = {"<": v < t, "<=": v <= t, ">": v > t, ">=": v >= t}[self.op]
            near = abs(v - t) <= self.approx * abs(t)
            grades.append("exact" if holds else "approx" if near else "miss")
        return _worst(grades)

    def ratios(self, value: Any) -> tuple[float, ...]:
        return tuple(
            1.0 if g == "exact" else v / self._threshold()
            for v, g in ((v, self.grade(v)) for v in _as_tuple(value))
        )


Grading = Compare | Range | Bound


def _worst(grades: list[str]) -> str:
    for g in ("miss", "approx", "exact"):
        if g in grades:
            return g
    raise ValueError("no values to grade")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One checkable statement of the source series, as ``data/claims/<document>.toml`` holds it.

    ``id`` is a letter for the document and a number (``M03``); ``source`` the document's file
    name in ``shared/seeds``; ``where`` the passage (section heading or timestamp); ``claim`` the
    statement in our own words; ``stated`` the source's figure as it gives it. ``grading`` is
    ``None`` for a claim no number can settle. ``section`` is the MyST label of the chapter
    section that derives the number; ``glue`` names the chapter's glued values (notebook stem,
    names) that must equal this claim's value, so prose and ledger cannot drift apart.
    ``checker`` is the claim's check function (None when nothing is computed for it).
    """

    id: str
    source: str
    where: str
    claim: str
    stated: str
    grading: Grading | None
    verdict: Verdict
    section: str
    case: Case = Case.STATED
    assumptions: str = ""
    note: str = ""
    see_also: tuple[str, ...] = ()
    glue: tuple[str, tuple[str, ...]] | None = None
    glue_scale: float = 1.0  # claim value = glue value x glue_scale (e.g. 100 for percent)
    refs: tuple[str, ...] = ()  # bibliography keys of primary sources
    checker: Callable[[], Check] | None = field(default=None, compare=False, repr=False)

    @property
    def check(self) -> Grading | None:
        """The grading of the stated figure (an alias of :attr:`grading`)."""
        return self.grading


@dataclass(frozen=True)
class Assessment:
    claim: Claim
    value: Any
    shown: str
    verdict: Verdict
    numbers: Mapping[str, Any] = field(default_factory=dict)
    grading: Grading | None = None  # as applied, with a computed threshold filled in

    @property
    def ratios(self) -> tuple[float, ...]:
        """Our value over the source's figure, one per stated number; 1.0 means agreement.

        For a range, the distance to its nearer end (1.0 inside it); for a bound, 1.0 when it
        holds and value / threshold when it does not. Empty for an uncheckable claim.
        """
        if self.grading is None:
            return ()
        return self.grading.ratios(self.value)

    def filled(self, text: str) -> str:
        """``text`` (the claim's note or assumptions) with its number fields filled."""
        return fill(text, self.numbers, claim_id=self.claim.id)


def assess(claim: Claim) -> Assessment:
    """Recompute ``claim`` with the library and derive its verdict from the value."""
    result = claim.checker() if claim.checker is not None else Check(value=None)
    if not isinstance(result, Check):
        raise TypeError(
            f"{claim.id}: its check function must return a Check, got {type(result).__name__}"
        )
    if claim.grading is None:
        if claim.case is not Case.JUDGEMENT:
            raise ValueError(f"{claim.id}: a claim with no check is case 'judgement'")
        if result.value is not None:
            raise ValueError(
                f"{claim.id} is not checkable numerically, but its check function "
                "returned a value to grade"
            )
        return Assessment(claim, None, "", Verdict.UNCHECKABLE, result.numbers)
    grading = claim.grading
    if result.threshold is not None:
        if not isinstance(grading, Bound) or grading.threshold is not None:
            raise ValueError(f"{claim.id}: a computed threshold needs a bound with none stated")
        grading = replace(grading, threshold=float(result.threshold))
    grade = grading.grade(result.value)
    if grade == "exact" and grading.free_choice:
        grade = "approx"
    verdict = {
        "exact": Verdict.ASSUMPTION if claim.case is Case.CHOICE else Verdict.EXACT,
        "approx": Verdict.APPROX,
        "miss": Verdict.DISPUTED,
    }[grade]
    if claim.case is Case.CONSTRUCTION and grade != "miss":
        # the check cannot fail, so agreement with it is no evidence: counted apart (rule 8)
        verdict = Verdict.CONSTRUCTION
    return Assessment(
        claim, result.value, grading.show(result.value), verdict, result.numbers, grading
    )
