"""The notation page names code that exists: the code is the truth, the page must follow it.

Every backticked code name in the symbols table of ``chapters/notation.md`` (and every example
in its units table) must be one of

* a field, property or method of a dataclass in ``llmphys.specs`` (or a field of another
  public dataclass of the library, such as a scaling law's ``E`` and ``alpha``), or
* the name of a public function (or public method of a public class) of an ``llmphys`` module,
  or the name of one of its parameters.

Modules are found by walking ``lib/llmphys`` with ``pkgutil`` and importing each. A call
``f(a, b)`` must name a function ``f`` that has parameters ``a`` and ``b``; a dotted name
``x.y`` must be a field ``x`` of a spec whose type has a field ``y`` (``moe.n_experts``), or a
module ``llmphys.x`` defining ``y``. The module table must name things its module defines.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import re
import typing
from functools import cache
from pathlib import Path

import llmphys
from llmphys import specs

NOTATION = Path(__file__).resolve().parents[1] / "chapters" / "notation.md"
CODE = re.compile(r"`([^`]+)`")


def _modules() -> list:
    names = [m.name for m in pkgutil.walk_packages(llmphys.__path__, "llmphys.")]
    return [importlib.import_module(n) for n in ["llmphys", *names]]


def _public_callables(module) -> list:
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            found.append(obj)
        elif inspect.isclass(obj):
            found += [f for n, f in vars(obj).items()
                      if not n.startswith("_") and inspect.isfunction(f)]
    return found


def _parameters(fn) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def _dataclasses(module) -> list[type]:
    return [obj for name, obj in vars(module).items()
            if not name.startswith("_") and inspect.isclass(obj)
            and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__]


@cache
def known_names() -> frozenset[str]:
    names: set[str] = set()
    for cls in _dataclasses(specs):
        names |= {n for n, v in vars(cls).items()
                  if not n.startswith("_") and (isinstance(v, property) or callable(v))}
    for module in _modules():
        for cls in _dataclasses(module):
            names |= {f.name for f in dataclasses.fields(cls)}
        for fn in _public_callables(module):
            names.add(fn.__name__)
            names |= _parameters(fn)
    return frozenset(names)


@cache
def parameters_of() -> dict[str, frozenset[str]]:
    """Function or method name -> the union of the parameter names of all callables so named."""
    params: dict[str, set[str]] = {}
    for module in _modules():
        for fn in _public_callables(module):
            params.setdefault(fn.__name__, set()).update(_parameters(fn) - {"self"})
    return {k: frozenset(v) for k, v in params.items()}


@cache
def spec_sub_fields() -> dict[str, frozenset[str]]:
    """Spec field name -> field names of the dataclass it holds (``moe`` -> ``n_experts``, ...)."""
    out: dict[str, set[str]] = {}
    for cls in _dataclasses(specs):
        for name, hint in typing.get_type_hints(cls).items():
            for arg in (*typing.get_args(hint), hint):
                if dataclasses.is_dataclass(arg):
                    out.setdefault(name, set()).update(f.name for f in dataclasses.fields(arg))
    return {k: frozenset(v) for k, v in out.items()}


def problems(code: str) -> list[str]:
    """What is wrong with one code span of the table (empty if nothing)."""
    call = re.fullmatch(r"([\w.]+)\((.*)\)", code)
    head, args = (call.group(1), call.group(2)) if call else (code, "")
    out = []
    parts = head.split(".")
    if len(parts) == 2:
        x, y = parts
        module = importlib.util.find_spec(f"llmphys.{x}")
        in_module = module is not None and hasattr(importlib.import_module(f"llmphys.{x}"), y)
        if y not in spec_sub_fields().get(x, ()) and not in_module:
            out.append(f"{head}: {y} is neither a field of spec field {x} nor in llmphys.{x}")
    elif head not in known_names():
        out.append(f"{head}: not in the library")
    for arg in re.findall(r"[A-Za-z_]\w*", args):
        if arg not in parameters_of().get(parts[-1], ()):
            out.append(f"{code}: {parts[-1]} has no parameter {arg}")
    return out


def _table(heading: str) -> list[list[str]]:
    """Body rows of every Markdown table under ``## heading``, split into cells."""
    text = NOTATION.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    tables = re.findall(r"(?:^\|.*\n?)+", section, flags=re.MULTILINE)
    rows = [line for table in tables for line in table.splitlines()[2:]]
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in rows]


def test_symbols_table_has_rows():
    rows = _table("Symbols")
    assert len(rows) >= 40
    assert all(len(r) == 4 for r in rows), [r for r in rows if len(r) != 4]


def test_every_code_name_in_the_symbols_table_exists():
    missing = [p for row in _table("Symbols") for code in CODE.findall(row[1])
               for p in problems(code)]
    assert not missing, missing


def test_every_unit_example_exists():
    missing = [p for row in _table("Units") for code in CODE.findall(row[3])
               for p in problems(code)]
    assert not missing, missing


def test_problems_catches_drift():
    assert problems("ridge_point(acc, dtype)") == []
    assert problems("moe.n_experts") == []
    assert problems("peak_flop_per_s(precision)")
    assert problems("moe.n_routed_experts")
    assert problems("n_parameters")


def test_module_table_names_real_functions():
    missing = []
    for row in _table("Where each symbol lives in code"):
        module = importlib.import_module(CODE.findall(row[0])[0])
        for code in CODE.findall(row[1]):
            name = code.split("(")[0]
            if re.fullmatch(r"[A-Za-z_]\w*", name) and not hasattr(module, name):
                missing.append(f"{module.__name__}.{name}")
    assert not missing, missing


def test_known_names_are_found():
    names = known_names()
    assert {"n_params", "hbm_bytes_per_s", "ridge_point", "peak_flop_per_s", "dtype"} <= names
    assert "not_a_name_in_llmphys" not in names
