"""Can a claim's check fail? Perturb each of its inputs and see whether the verdict moves.

A check that no state of the data can move is not a test of the claim: it is an identity of the
library (a stage time defined as step/S, a formula inverted), or it types its own answer. This
module finds such checks. For one claim it

1. records every registry number the check reads: the fields of the frozen dataclasses that
   ``specs.build_spec`` makes from ``data/*.toml`` (read by attribute), and the leaves of the raw
   TOML tables other loaders hand to the library (read by key);
2. for each of those numbers and each factor in :data:`FACTORS`, loads the data again with that one
   number scaled (every llmphys cache cleared), re-runs the check and re-derives the verdict;
3. does the same for each numeric literal typed in the check function's own source (the AST
   rewritten, the function recompiled in its module).

:func:`first_flip` stops at the first perturbation that changes the verdict; :func:`flips`
tries them all. Neither counts an exception as a change: a check that breaks is not one that
disagrees. Numbers outside ``data/*.toml`` (CSV extracts, Hugging Face configs) and the
library's own module constants are not perturbed; a check that reads only those is reported as
having no inputs.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import resource
import sys
import textwrap
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from llmphys import claims, specs
from llmphys.claims import Claim

# Tried in this order on each input. A compared figure changes grade only inside a window around
# its target, so the ladder is dense enough (a factor of 5 between rungs, 2 at the centre) that
# a value off by up to 1e5 can be brought into it.
# The last rung, None, removes the number (a chip with no FP4 peak): an optional field's absence
# is a state of the data too.
FACTORS = (
    5.0, 0.2, 25.0, 0.04, 0.5, 2.0, 125.0, 0.008, 625.0, 1.6e-3, 3125.0, 3.2e-4, 1e5, 1e-5, None
)  # fmt: skip
_WHERE = re.compile(r"^(?P<file>[\w./-]+\.toml)\[(?P<key>[^\]]+)\](?P<rest>.*)$")
_REAL_LOAD = tomllib.load
_REAL_BUILD = specs._build
_REAL_CHECK = specs._check_accelerator
ALL = "*"  # Input.path[0] for one field of every entry of a file
# reads made while the registry validates what it loaded are not reads of the check
_VALIDATION = {"_check_accelerator", "__eq__", "__repr__", "__hash__"}


def _no_check(acc: Any, where: str) -> None:
    return None


@dataclass(frozen=True)
class Input:
    """One perturbable number: a registry leaf (file, path) or a literal typed in the check."""

    file: str  # "accelerators.toml", or "" for a typed literal
    path: tuple[Any, ...]  # keys into the file; for a literal, (line, column) in the function

    def __str__(self) -> str:
        if not self.file:
            return f"typed literal at line {self.path[0]}, column {self.path[1]}"
        return f"{self.file}:" + ".".join(map(str, self.path))


def _clear_caches() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith("llmphys") or module is None:
            continue
        for obj in list(vars(module).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear) and getattr(obj, "__module__", "").startswith("llmphys"):
                clear()


def _numeric(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _scale(x: Any, factor: float) -> Any:
    if isinstance(x, dict):
        return {k: _scale(v, factor) for k, v in x.items()}
    if isinstance(x, list):
        if x and not any(_numeric(v) or isinstance(v, (dict, list)) for v in x):
            return x[:-1]  # a list of names (a chip's matrix dtypes): its last one dropped
        return [_scale(v, factor) for v in x]
    if not _numeric(x):
        return x
    if isinstance(x, int):
        return max(1, round(x * factor)) if x > 0 else round(x * factor)
    return x * factor


def _set(node: Any, key: Any, factor: float | None) -> None:
    if factor is None:
        if isinstance(node, dict):
            del node[key]
    else:
        node[key] = _scale(node[key], factor)


class _Tracked(dict):
    """A raw TOML table that records which numeric leaves the library reads by key."""

    def __init__(self, data: dict, file: str, path: tuple, reads: set[Input]) -> None:
        super().__init__(data)
        self._file, self._path, self._reads = file, path, reads

    def _wrap(self, key: Any, value: Any) -> Any:
        path = (*self._path, key)
        if isinstance(value, dict):
            return _Tracked(value, self._file, path, self._reads)
        if (_numeric(value) or isinstance(value, list)) and not _IN_BUILD:
            self._reads.add(Input(self._file, path))
        return value

    def __getitem__(self, key: Any) -> Any:
        return self._wrap(key, super().__getitem__(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return self._wrap(key, super().get(key, default)) if key in self else default

    def items(self):  # type: ignore[override]
        return [(k, self._wrap(k, v)) for k, v in super().items()]

    def values(self):  # type: ignore[override]
        return [self._wrap(k, v) for k, v in super().items()]


_IN_BUILD = False


@contextmanager
def _patched(*, target: Input | None = None, factor: float | None = 1.0,
             reads: set[Input] | None = None):
    """Load the data afresh, optionally with ``target`` scaled by ``factor`` and reads recorded."""
    origins: dict[int, tuple[str, tuple]] = {}
    classes: dict[type, Any] = {}

    def load(f, *args, **kwargs):
        data = _REAL_LOAD(f, *args, **kwargs)
        file = Path(getattr(f, "name", "")).name
        if target is not None and file == target.file:
            data = copy.deepcopy(data)
            if target.path[0] == ALL:  # one field of every entry at once
                for entry in data.values():
                    if isinstance(entry, dict) and target.path[1] in entry:
                        _set(entry, target.path[1], factor)
            else:  # one number, or a whole table (a price with its range, together)
                node = data
                for key in target.path[:-1]:
                    node = node[key]
                _set(node, target.path[-1], factor)
        if reads is not None:
            return _Tracked(data, file, (), reads)
        return data

    def build(cls, entry, where, **extra):
        global _IN_BUILD
        outer, _IN_BUILD = _IN_BUILD, True
        try:
            obj = _REAL_BUILD(cls, entry, where, **extra)
        finally:
            _IN_BUILD = outer
        m = _WHERE.match(where)
        if m and reads is not None:
            rest = tuple(p for p in re.split(r"[.\[\]]+", m["rest"]) if p)
            # a nested table's key is dotted ("gpu_hour_usd.h100_sxm" in prices.toml)
            origins[id(obj)] = (m["file"], (*m["key"].split("."), *rest))
            if cls not in classes:
                classes[cls] = cls.__dict__.get("__getattribute__")

                def getattribute(self, name, _get=object.__getattribute__):
                    value = _get(self, name)
                    origin = origins.get(id(self))
                    if (
                        origin is not None
                        and (_numeric(value) or isinstance(value, tuple))
                        and sys._getframe(1).f_code.co_name not in _VALIDATION
                    ):
                        reads.add(Input(origin[0], origin[1] + (name,)))
                    return value

                cls.__getattribute__ = getattribute
        return obj

    _clear_caches()
    # a perturbed peak no longer equals half its sparse twin: the registry's own consistency
    # check would reject the entry, so it is off while the data are perturbed
    tomllib.load, specs._build, specs._check_accelerator = load, build, _no_check
    try:
        yield
    finally:
        tomllib.load, specs._build, specs._check_accelerator = _REAL_LOAD, _REAL_BUILD, _REAL_CHECK
        for cls, original in classes.items():
            if original is None:
                del cls.__getattribute__
            else:
                cls.__getattribute__ = original
        _clear_caches()


Outcome = tuple[claims.Verdict, tuple[str, ...]]


MEMORY_CAP_BYTES = 4 * 2**30  # address space a perturbed check may add to the process


@contextmanager
def _memory_cap():
    """Cap the process's address space while a perturbed check runs.

    A number scaled by 1e5 can be an array's length (a simulated queue, a grid of batch sizes):
    without a cap such a check asks for tens of gigabytes and the machine kills the test run.
    With it the allocation fails with a MemoryError, which counts as a broken check.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * resource.getpagesize()
    cap = used + MEMORY_CAP_BYTES
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def outcome(c: Claim) -> Outcome | None:
    """The verdict of ``c`` and the grade of each stated number ("exact", "approx", "miss").

    A check of several numbers (a range per chip) fails if any one of its grades can move,
    even when the worst of them, the verdict, stays: a perturbation that brings one chip into
    the stated range is a state of the data the check would report.
    """
    try:
        with _memory_cap():
            a = claims.assess(c)
    except Exception:
        return None
    assert a.grading is not None
    g = a.grading
    values = tuple(a.value) if isinstance(a.value, (tuple, list)) else (a.value,)
    if isinstance(g, claims.Compare):
        targets = (g.target,) * len(values) if isinstance(g.target, str) else g.target
        if len(targets) != len(values):
            return None
        return a.verdict, tuple(replace(g, target=t).grade(v)
                                for v, t in zip(values, targets, strict=True))
    return a.verdict, tuple(g.grade(v) for v in values)


def registry_inputs(c: Claim) -> list[Input]:
    """The registry numbers the check of ``c`` reads, in a stable order."""
    reads: set[Input] = set()
    with _patched(reads=reads):
        claims.assess(c)
    # a leaf read through a dataclass of a nested table, or a list: keep the outermost path
    return sorted(reads, key=lambda i: (i.file, tuple(map(str, i.path))))


def _literals(fn: Callable) -> list[tuple[int, int, Any]]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return [
        (n.lineno, n.col_offset, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and _numeric(n.value)
    ]


def _with_literal(fn: Callable, line: int, col: int, factor: float) -> Callable:
    """``fn`` recompiled with the literal at (line, col) of its source scaled by ``factor``."""
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and (n.lineno, n.col_offset) == (line, col):
            n.value = _scale(n.value, factor)
    (func,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fn.__name__]
    func.decorator_list = []
    namespace: dict[str, Any] = {}
    # the check's own source, one literal changed: tests only, never the library (no eval there)
    code = compile(tree, inspect.getsourcefile(fn) or "<check>", "exec")
    exec(code, fn.__globals__, namespace)
    return namespace[fn.__name__]


def perturbations(
    c: Claim, *, literals: bool = True, prefer: tuple[str, float | None] | None = None
) -> Iterator[tuple[Input, float | None, Outcome | None]]:
    """Each input of ``c``'s check, scaled by each factor, with the verdict that results.

    Input by input, each over every factor: the literals typed in the check, each field of a
    registry file at once for every entry it reads (all chips' bandwidths), each table whole (a
    price with its low and high ends, which must move together), then each number singly.
    ``prefer`` = (str(input), factor), a perturbation known to move the check (the witness
    stored in tests/data/claims_flips.json), is tried first; the order is otherwise the same.
    """
    assert c.checker is not None
    checker = c.checker
    typed = _literals(checker) if literals else []
    singles = registry_inputs(c)
    fields = sorted({(i.file, i.path[-1]) for i in singles if len(i.path) == 2})
    tables = {Input(i.file, i.path[:n]) for i in singles for n in range(1, len(i.path))}
    data = (
        [Input(f, (ALL, name)) for f, name in fields]
        + sorted(tables, key=lambda i: (i.file, tuple(map(str, i.path))))
        + singles
    )
    tasks: list[tuple[Input, float | None]] = [
        (Input("", (line, col)), factor) for line, col, _ in typed for factor in FACTORS[:-1]
    ]  # a literal cannot be removed
    tasks += [(inp, factor) for inp in data for factor in FACTORS]
    if prefer is not None:
        first = [t for t in tasks if (str(t[0]), t[1]) == (prefer[0], prefer[1])]
        tasks = first + [t for t in tasks if t not in first]
    for inp, factor in tasks:
        if not inp.file:
            fn = _with_literal(checker, inp.path[0], inp.path[1], factor)
            yield inp, factor, outcome(replace(c, checker=fn))
        else:
            with _patched(target=inp, factor=factor):
                yield inp, factor, outcome(c)


def first_flip(
    c: Claim, *, literals: bool = True, prefer: tuple[str, float | None] | None = None
) -> tuple[Input, float | None, Outcome] | None:
    """The first perturbation that moves the outcome of ``c``, or None when none does."""
    base = outcome(c)
    for inp, factor, moved in perturbations(c, literals=literals, prefer=prefer):
        if moved is not None and moved != base:
            return inp, factor, moved
    return None


def n_inputs(c: Claim) -> int:
    assert c.checker is not None
    return len(_literals(c.checker)) + len(registry_inputs(c))
