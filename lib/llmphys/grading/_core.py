"""The machinery every ``check_*`` function shares: run a student's function against the
library's reference on seeded random and edge cases, and say what went wrong.

A check returns a :class:`Feedback`. Its text names the first case that fails, the value
expected and the value returned, and, when the student's answers stand in a fixed ratio to the
reference on every failing case, the likely cause: a factor of 2, a unit prefix, GiB where GB
was asked, bits where bytes were asked. An exercise adds its own :class:`Mistake` entries: a
typical wrong implementation written out, with the message a student should read when their
function agrees with it ("did you count both K and V?").

Tolerances are named: :data:`RTOL` is the relative tolerance of a match, :data:`RATIO_RTOL` how
close a ratio must be to a known factor to be named as the cause.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from llmphys import units

RTOL = 1e-6
"""Relative tolerance of a match between a student's value and the reference's."""

RATIO_RTOL = 1e-3
"""How close got/expected must be to a known factor for that factor to be named as the cause."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """One call: positional ``args``, keyword ``kwargs`` and a ``label`` for the feedback."""

    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    def describe(self) -> str:
        """The call's arguments as a reader would type them."""
        if self.label:
            return self.label
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return ", ".join(parts)


@dataclass(frozen=True, kw_only=True)
class Factor:
    """A fixed ratio got/expected and what it usually means."""

    ratio: float
    message: str


@dataclass(frozen=True, kw_only=True)
class Mistake:
    """A typical wrong implementation and the hint a student who made it should read."""

    implementation: Callable[..., Any]
    message: str


def common_factors(*, quantity: str = "bytes") -> tuple[Factor, ...]:
    """Ratios that betray a units or counting slip, for an answer in ``quantity``.

    >>> [round(f.ratio, 4) for f in common_factors()][:3]
    [2.0, 0.5, 0.9313]
    """
    gib = units.GiB / units.GB
    out = [
        Factor(ratio=2.0, message="off by a factor of 2: is something counted twice?"),
        Factor(
            ratio=0.5,
            message="off by a factor of 2: is something counted once that should be counted twice?",
        ),
    ]
    if quantity == "bytes":
        out += [
            Factor(
                ratio=1 / gib,
                message="this looks like GiB (2^30 bytes) where GB "
                "(10^9 bytes) was asked, or bytes read as binary",
            ),
            Factor(
                ratio=gib,
                message="this looks like GB (10^9 bytes) where GiB (2^30 bytes) was asked",
            ),
            Factor(ratio=8.0, message="off by a factor of 8: bits where bytes were asked?"),
            Factor(ratio=1 / 8, message="off by a factor of 8: bytes where bits were asked?"),
            Factor(
                ratio=1024 / 1000,
                message="off by 2.4%: a binary prefix (1024) where a decimal one (1000) was meant?",
            ),
        ]
    for exp, name in ((3, "10^3"), (6, "10^6"), (9, "10^9"), (12, "10^12")):
        out += [
            Factor(
                ratio=10.0**exp,
                message=f"off by {name}: a unit prefix "
                "(k, M, G, T) applied twice, or a value left unconverted?",
            ),
            Factor(
                ratio=10.0**-exp,
                message=f"off by 1/{name}: the answer is asked in base "
                "units (bytes, FLOP, seconds), not in k, M, G or T",
            ),
        ]
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Feedback:
    """What a check found. True when every case matched; printing it gives the feedback."""

    exercise: str
    function: str
    passed: bool
    n_cases: int
    n_matched: int
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        mark = "PASS" if self.passed else "NOT YET"
        return f"{mark} {self.exercise} ({self.function}): {self.message}"

    __repr__ = __str__


def _as_array(value: Any) -> np.ndarray | None:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr


def _close(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping) or set(got) != set(expected):
            return False
        return all(_close(got[k], expected[k], rtol, atol) for k in expected)
    if isinstance(expected, (bool, str)) or expected is None:
        return bool(got == expected)
    e, g = _as_array(expected), _as_array(got)
    if e is None or g is None or e.shape != g.shape:
        return False
    return bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=False))


def _ratio(got: Any, expected: Any) -> float | None:
    """got/expected when both are numbers (or equal-shaped arrays with one common ratio)."""
    e, g = _as_array(expected), _as_array(got)
    if e is None or g is None or e.shape != g.shape or e.size == 0:
        return None
    mask = e != 0
    if not mask.any():
        return None
    r = g[mask] / e[mask]
    if not np.all(np.isfinite(r)) or not np.allclose(r, r.flat[0], rtol=RATIO_RTOL):
        return None
    return float(r.flat[0])


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, threshold=8)
    return repr(value)


def check_function(
    fn: Any,
    *,
    exercise: str,
    reference: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake] = (),
    factors: Sequence[Factor] | None = None,
    rtol: float = RTOL,
    atol: float = 0.0,
) -> Feedback:
    """Run ``fn`` and ``reference`` on every case and compare.

    ``mistakes`` are tried first (a student whose answers equal a known wrong implementation's
    on every case gets that mistake's message), then ``factors`` (default
    :func:`common_factors`). ``fn`` that raises ``NotImplementedError`` is "not implemented
    yet"; any other exception is reported with the case that raised it.

    >>> fb = check_function(lambda x: 2 * x, exercise="demo", reference=lambda x: x,
    ...                     cases=[Case(args=(1.0,)), Case(args=(3.0,))])
    >>> fb.passed, fb.message.split(":")[0]
    (False, '0 of 2 cases match')
    """
    name = getattr(fn, "__name__", type(fn).__name__)
    if not callable(fn):
        raise TypeError(f"fn: pass the function itself (no parentheses), got {type(fn).__name__}")
    if not cases:
        raise ValueError("cases: a check needs at least one case")
    factors = common_factors() if factors is None else factors

    def result(passed: bool, matched: int, message: str) -> Feedback:
        return Feedback(
            exercise=exercise,
            function=name,
            passed=passed,
            n_cases=len(cases),
            n_matched=matched,
            message=message,
        )

    expected = [reference(*c.args, **c.kwargs) for c in cases]
    got: list[Any] = []
    for case in cases:
        try:
            got.append(fn(*case.args, **case.kwargs))
        except NotImplementedError:
            return result(
                False, 0, f"not implemented yet: write the body of {name} and run this cell again"
            )
        except Exception as exc:  # the student's bug, reported rather than raised
            return result(False, 0, f"{name}({case.describe()}) raised {type(exc).__name__}: {exc}")
    ok = [_close(g, e, rtol, atol) for g, e in zip(got, expected, strict=True)]
    n_ok = sum(ok)
    if all(ok):
        return result(
            True, n_ok, f"all {len(cases)} cases match the reference (relative tolerance {rtol:g})"
        )
    bad = [i for i, good in enumerate(ok) if not good]
    first = bad[0]
    where = (
        f"first failing case {cases[first].describe()}: expected "
        f"{_fmt(expected[first])}, got {_fmt(got[first])}"
    )
    head = f"{n_ok} of {len(cases)} cases match"
    for mistake in mistakes:
        wrong = [mistake.implementation(*cases[i].args, **cases[i].kwargs) for i in bad]
        if all(_close(got[i], w, rtol, atol) for i, w in zip(bad, wrong, strict=True)):
            return result(False, n_ok, f"{head}: {mistake.message} ({where})")
    ratios = [_ratio(got[i], expected[i]) for i in bad]
    if ratios and all(r is not None for r in ratios):
        r0 = ratios[0]
        assert r0 is not None
        if all(math.isclose(r, r0, rel_tol=RATIO_RTOL) for r in ratios if r is not None):
            for factor in factors:
                if math.isclose(r0, factor.ratio, rel_tol=RATIO_RTOL):
                    return result(False, n_ok, f"{head}: {factor.message} ({where})")
            return result(
                False,
                n_ok,
                f"{head}: every failing answer is {r0:.4g} times the "
                f"reference, so a constant factor is wrong ({where})",
            )
    return result(False, n_ok, f"{head} ({where})")
