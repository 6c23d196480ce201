"""Is a chapter's glued number the ledger's number by construction? Find one call in both.

tests/test_claims.py declares, for a claim whose value a chapter also glues, the library function
whose call makes the value (``ONE_CALL``). This module reads the source of the claim's check and
of the chapter's code cells and writes each call of that function out in one normal form: module
aliases resolved (``from llmphys import studies``), names bound by a plain assignment in the same
function, cell or an earlier cell replaced by their expressions, ``specs.model("k").key`` read as
``"k"`` and ``specs.recorded(e, "f")`` as ``e.f``, keywords sorted. Two equal strings are the same
computation; a call the source cannot resolve (a loop variable) never equals a resolved one, so
the test errs towards keeping the equality test.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

from test_structure import _aliases

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"


def code_cells(stem: str) -> list[str]:
    cells = json.loads((CHAPTERS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return [
        "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln
                  for ln in "".join(c["source"]).split("\n"))
        for c in cells if c["cell_type"] == "code"
    ]


def glues(source: str, name: str) -> bool:
    """Whether ``source`` calls ``glue`` with ``name`` (a literal, or an f-string matching it)."""
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "glue":
            a = n.args[0] if n.args else None
            if isinstance(a, ast.Constant) and a.value == name:
                return True
            if isinstance(a, ast.JoinedStr):
                pat = "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".*"
                              for v in a.values)
                if re.fullmatch(pat, name):
                    return True
    return False


def _bind(n: ast.stmt, env: dict[str, ast.expr]) -> None:
    """Record what a plain assignment binds: ``x = e``; ``a, b = e1, e2``;
    ``a, b = (f(k) for k in ("k1", "k2"))``, element by element; ``a, b = f()`` as ``f()[0]``,
    ``f()[1]``."""
    if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
        return
    target, value = n.targets[0], n.value
    if isinstance(target, ast.Name):
        env[target.id] = value
        return
    if not (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)):
        return
    values: list[ast.expr] = []
    if isinstance(value, ast.Tuple):
        values = list(value.elts)
    elif (isinstance(value, ast.GeneratorExp) and len(value.generators) == 1
          and isinstance(value.generators[0].target, ast.Name)
          and isinstance(value.generators[0].iter, ast.Tuple) and not value.generators[0].ifs):
        var, items = value.generators[0].target.id, value.generators[0].iter.elts
        values = [_substitute(value.elt, var, item) for item in items]
    else:  # a, b = f(): each name is one item of the call's result
        values = [ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                  for i in range(len(target.elts))]
    if len(values) == len(target.elts):
        for name, v in zip(target.elts, values, strict=True):
            env[name.id] = v


def _substitute(expr: ast.expr, var: str, item: ast.expr) -> ast.expr:
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            return item if n.id == var else n

    return Sub().visit(ast.parse(ast.unparse(expr), mode="eval").body)


def calls_of(source: str | ast.AST, function: str, aliases: dict[str, str],
             env: dict[str, ast.expr] | None = None, *, resolved_tree: bool = False):
    """Each call of the library ``function`` ("module.name") in ``source``, written out with its
    module resolved, names bound by a plain assignment in ``source`` (or ``env``) replaced by
    their expressions, and keywords sorted: two equal strings are one computation."""
    tree = ast.parse(source) if isinstance(source, str) else source
    env = dict(env or {})
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            _bind(n, env)

    class Resolve(ast.NodeTransformer):
        depth = 0

        def visit_Name(self, n: ast.Name) -> ast.AST:
            if n.id in env and isinstance(n.ctx, ast.Load) and self.depth < 8:
                self.depth += 1
                out = self.visit(ast.parse(ast.unparse(env[n.id]), mode="eval").body)
                self.depth -= 1
                return out
            return ast.Name(id=aliases.get(n.id, n.id))

        def visit_Call(self, n: ast.Call) -> ast.AST:
            # specs.recorded(entry, "field") is entry.field, checked for absence
            out = self.generic_visit(n)
            if (isinstance(out, ast.Call) and ast.unparse(out.func) == "specs.recorded"
                    and len(out.args) == 2 and isinstance(out.args[1], ast.Constant)):
                return ast.Attribute(value=out.args[0], attr=out.args[1].value, ctx=ast.Load())
            return out

        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            # specs.model("k").key is "k": a registry entry's key names the entry
            out = self.generic_visit(n)
            if (isinstance(out, ast.Attribute) and out.attr == "key"
                    and isinstance(out.value, ast.Call) and len(out.value.args) == 1
                    and isinstance(out.value.args[0], ast.Constant)
                    and ast.unparse(out.value.func).startswith("specs.")):
                return out.value.args[0]
            return out

    resolved = Resolve().visit(ast.parse(ast.unparse(tree)))
    if resolved_tree:  # the whole source, resolved, for the caller to inspect
        return resolved
    found = set()
    for call in ast.walk(resolved):
        if isinstance(call, ast.Call) and ast.unparse(call.func) in (
            function, "llmphys." + function):
            call.keywords = sorted(call.keywords, key=lambda k: k.arg or "")
            found.add(ast.unparse(call))
    return found


def bound_before(cells: list[str], i: int) -> dict[str, ast.expr]:
    """Names that the cells before cell ``i`` bind by a plain assignment, the last one winning
    (what the kernel holds when cell ``i`` runs, top to bottom)."""
    env: dict[str, ast.expr] = {}
    for src in cells[:i]:
        with contextlib.suppress(SyntaxError):
            for n in ast.parse(src).body:
                _bind(n, env)
    return env


_TRANSPARENT = {"tuple", "list", "int", "float", "round", "abs"}


def top_calls(node: ast.AST) -> list[ast.Call]:
    """The calls in ``node`` not inside another call's arguments (builtins looked through)."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _TRANSPARENT:
            return [c for a in [*node.args, *(k.value for k in node.keywords)]
                    for c in top_calls(a)]
        return [node]
    return [c for child in ast.iter_child_nodes(node) for c in top_calls(child)]


def value_calls(checker: Callable, functions: tuple[str, ...]) -> tuple[set[str], list[str]]:
    """The calls of ``functions`` inside the check's ``value=`` (names resolved in the check),
    and the other calls the value makes outside their arguments (there must be none: the value
    is then those calls' results and arithmetic on constants)."""
    module = ast.parse(inspect.getsource(inspect.getmodule(checker)))
    fn = ast.parse(textwrap.dedent(inspect.getsource(checker)))
    env: dict[str, ast.expr] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            _bind(n, env)
    values = [k.value for n in ast.walk(fn) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name) and n.func.id == "Check"
              for k in n.keywords if k.arg == "value"]
    found: set[str] = set()
    others: list[str] = []
    for v in values:
        tree = ast.Module(body=[ast.Expr(v)], type_ignores=[])
        for f in functions:
            found |= calls_of(tree, f, _aliases(module), env)
        resolved = calls_of(tree, "", _aliases(module), env, resolved_tree=True)
        others += [ast.unparse(t.func) for t in top_calls(resolved)
                   if ast.unparse(t.func) not in functions]
    return found, others


def chapter_aliases(cells: list[str]) -> dict[str, str]:
    """Name -> llmphys module over every cell of a chapter."""
    out: dict[str, str] = {}
    for src in cells:
        with contextlib.suppress(SyntaxError):
            out |= _aliases(ast.parse(src))
    return out
