"""The names a check function gives its values say what they hold, with the unit.

The ledger prints each check function to readers as "the call", and the claim's note quotes its
numbers by name. A name generated from the first call in an expression (``kv_bytes_128000_2``,
``weight_bytes_...`` holding milliseconds) misleads the reader, so every name a check binds (a
local variable or a key of ``numbers``) is read here against its expression:

1. no counter or encoded literal in a name (``_2``, ``_0``, ``2p0``, ``13000000000p0``);
2. a unit the expression plainly has is the unit the name ends with: a value divided by
   ``units.GB`` ends in ``_gb``, one multiplied by 100 in ``_pct``, a quantity over another of
   the same unit holds a ratio and ends in no unit, and a name ending in an SI unit (``_bytes``,
   ``_s``) holds that unit, not a scaled or a divided one.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["part3", "overview", "podcast", "lecture"]

# the suffixes a value divided by a units constant may end with (the scaled unit)
SCALED = {
    "GB": ("_gb",), "GiB": ("_gib",), "TB": ("_tb",), "MS": ("_ms",), "US": ("_us",),
    "HOUR": ("_hours",), "DAY": ("_days",), "YEAR": ("_years",),
    "TERA": ("_tflop_per_s", "_tb_per_s", "_tb", "_trillion"),
    "GIGA": ("_gflop", "_gb_per_s", "_billion"),
    "MEGA": ("_musd", "_million"),
    "100": ("_pct",),
}  # fmt: skip
# suffixes that name an SI quantity; longest first, so "_bytes_per_s" is not read as "_s"
SI = ["_flop_per_s", "_bytes_per_s", "_tokens_per_s", "_per_s", "_bytes", "_flop", "_usd",
      "_s", "_w", "_j"]  # fmt: skip
COUNTER = re.compile(r"_\d+$|\d+p\d+|\de_\d|^(max|min)_\d|^values$")
# a unit in the middle of a name ("rack_floor_ms_deepseek_v3"): the unit goes last
INNER_UNIT = re.compile(r"_(bytes|flop|usd|ms|s|gb|gib|hours|days|pct)_(?!per_)")


def _si(name: str) -> str | None:
    return next((u for u in SI if name.endswith(u)), None)


def _unit(node: ast.AST) -> str | None:
    """The SI unit an expression plainly has (from the names it combines), "ratio", or None."""
    if isinstance(node, ast.Name):
        return _si(node.id)
    if isinstance(node, ast.Attribute):
        return _si(node.attr)
    if isinstance(node, ast.Call):
        f = node.func
        return _si(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return _si(str(node.slice.value))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = _unit(node.left), _unit(node.right)
        if a is not None and a == b:
            return "ratio"
    return None


def _scale_suffix(node: ast.AST) -> tuple[str, ...] | None:
    """The suffixes allowed for ``x / units.GB`` ("_gb"), ``100 * x`` ("_pct"), ..."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        r = node.right
        if isinstance(r, ast.Attribute) and isinstance(r.value, ast.Name) and r.value.id == "units":
            return SCALED.get(r.attr)
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mult)
        and any(isinstance(s, ast.Constant) and s.value == 100 for s in (node.left, node.right))
    ):
        return SCALED["100"]
    return None


def bindings(tree: ast.AST) -> list[tuple[str, str, ast.AST]]:
    """(function, name, expression) for every local and every ``numbers`` key of each check."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not re.fullmatch(r"[mopl]\d\d", fn.name):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign):
                out += [(fn.name, t.id, n.value) for t in n.targets if isinstance(t, ast.Name)]
            if isinstance(n, ast.keyword) and n.arg == "numbers" and isinstance(n.value, ast.Dict):
                out += [
                    (fn.name, k.value, v)
                    for k, v in zip(n.value.keys, n.value.values, strict=True)
                    if isinstance(k, ast.Constant)
                ]
    return out


def problems(name: str, expr: ast.AST) -> list[str]:
    """What is wrong with ``name`` for a value computed as ``expr`` (empty when nothing)."""
    found = []
    if COUNTER.search(name):
        found.append("a counter or an encoded literal in the name")
    if INNER_UNIT.search(name):
        found.append("a unit inside the name: the unit goes last")
    scaled = _scale_suffix(expr)
    if scaled is not None:
        if not name.endswith(scaled):
            found.append(f"holds a scaled value, so the name ends in one of {scaled}")
        return found
    unit = _unit(expr)
    si = _si(name)
    if unit == "ratio" and si is not None:
        found.append(f"holds a ratio of two like quantities, but the name ends in {si!r}")
    elif si is not None and unit is not None and unit != si:
        found.append(f"ends in {si!r} but holds {unit[1:]}")
    return found


def _all() -> list[tuple[str, str, str, list[str]]]:
    out = []
    for module in MODULES:
        path = ROOT / "lib" / "llmphys" / "claims" / f"{module}.py"
        for fn, name, expr in bindings(ast.parse(path.read_text(encoding="utf-8"))):
            out.append((module, fn, name, problems(name, expr)))
    return out


@pytest.mark.parametrize("module", MODULES)
def test_every_name_a_check_binds_says_what_it_holds(module):
    bad = [f"{fn}: {name}: {'; '.join(p)}" for m, fn, name, p in _all() if m == module and p]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        ("def m99():\n"
         "    kv_bytes_128000_2 = kv_cache.kv_cache_bytes(m, n_tokens=128000)", "counter"),
        ("def m99():\n    x_bytes = a_bytes / units.GB", "_gb"),
        ("def m99():\n    rack_floor_ms_dsv3 = 20 / rack_floor_ms(m)", "inside"),
        ("def m99():\n    kv_bytes = kv_cache_bytes(m) / hbm_bytes", "ratio"),
        ("def m99():\n    weight_bytes = weight_bytes_read(m) / hbm_bytes_per_s / units.MS", "_ms"),
        ("def m99():\n    share = 100 * dp_comm_share(8)", "_pct"),
    ],
)
def test_the_naming_rule_catches_names_that_lie(source, complaint):
    ((_, name, expr),) = bindings(ast.parse(source))
    assert any(complaint in p for p in problems(name, expr)), (name, problems(name, expr))


def test_the_naming_rule_accepts_names_that_say_what_they_hold():
    source = (
        "def m99():\n"
        "    kv_128k_gb = kv_cache.kv_cache_bytes(m, n_tokens=128000) / units.GB\n"
        "    kv_over_hbm = kv_cache_bytes(m) / hbm_bytes\n"
        "    dp_share_pct = 100 * dp_comm_share(8)\n"
        "    weight_read_ms = weight_bytes_read(m) / hbm_bytes_per_s / units.MS\n"
    )
    assert all(not problems(name, expr) for _, name, expr in bindings(ast.parse(source)))
