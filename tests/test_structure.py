"""The library's structure stays as issue 26 left it: facts in data/, loaders in specs, worked
cases in studies, an index that lists every module, files that say why they are long, and no
study the ledger calls that no chapter shows.

Each test reads the source (``ast``, ``json``), not the running library, so a violation is
found where it is written.
"""

import ast
import json
import re
import tomllib
from pathlib import Path

from test_layering import LAYERS
from test_typed_facts import REGISTRIES, distinctive, registry_facts

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lib" / "llmphys"
DATA = ROOT / "data"
# registries whose keys name a specific model, chip, run or worked case
KEYED = REGISTRIES  # one list with test_typed_facts


def _path(module: str) -> Path:
    p = PACKAGE.joinpath(*module.split("."))
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def registry_keys() -> set[str]:
    keys: set[str] = set()
    for name in KEYED:
        with open(DATA / name, "rb") as f:
            table = tomllib.load(f)
        if name == "serving_models.toml":  # two groups of entries: models, accelerators
            table = {k: v for group in table.values() for k, v in group.items()}
        keys |= set(table)
    return keys


def _docstring_ids(tree: ast.AST) -> set[int]:
    """``id`` of every docstring node of ``tree`` (module, class and function docstrings)."""
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }


def named_keys(source: str, keys: set[str]) -> set[str]:
    """Registry keys that a string literal of ``source`` names (docstrings and their doctests
    are examples, not code, and do not count): the literal itself, or one dotted segment of
    it ("gpu_hour_usd.h100_sxm" names h100_sxm)."""
    tree = ast.parse(source)
    docs = _docstring_ids(tree)
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            found |= set(n.value.split(".")) & keys
    return found


# Modules that still name a registry key (issue 26 drove the list to empty; an entry would have
# to be justified, and a stale one fails below).
KNOWN: dict[str, set[str]] = {}


def _checked_modules() -> list[str]:
    return sorted(
        m for layer in ("mechanism", "system") for m in LAYERS[layer] if _path(m).is_file()
    )


def test_no_mechanism_or_system_module_names_a_registry_key():
    keys = registry_keys()
    found = {m: named_keys(_path(m).read_text(), keys) for m in _checked_modules()}
    found = {m: k for m, k in found.items() if k}
    new = {m: sorted(k - KNOWN.get(m, set())) for m, k in found.items() if k - KNOWN.get(m, set())}
    assert not new, f"a mechanism names a registry key; pass it in or move it to studies: {new}"
    stale = {
        m: sorted(k - found.get(m, set())) for m, k in KNOWN.items() if k - found.get(m, set())
    }
    assert not stale, f"KNOWN lists keys these modules no longer name; drop them: {stale}"


def test_the_key_finder_sees_a_key_in_code_but_not_in_a_doctest():
    src = '''def f():
    """>>> f("llama3_70b")"""
    return price("gpu_hour_usd.h100_sxm")
'''
    assert named_keys(src, {"h100_sxm", "llama3_70b"}) == {"h100_sxm"}


def test_the_package_index_lists_every_module():
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text())) or ""
    listed = set(re.findall(r"^    (\w+)\s", doc, re.M))
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    modules |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert modules - listed == set(), "add these to llmphys/__init__.py's index"
    assert listed - modules == set(), "the index lists modules that do not exist"


WHY = re.compile(r"^Longer than 400 lines because", re.M)


def long_files_without_a_reason(limit: int = 400) -> list[str]:
    out = []
    for p in sorted(PACKAGE.rglob("*.py")):
        text = p.read_text()
        if text.count("\n") > limit and not WHY.search(ast.get_docstring(ast.parse(text)) or ""):
            out.append(f"{p.relative_to(PACKAGE)} ({text.count(chr(10))} lines)")
    return out


# Files over 400 lines not yet split or justified (empty: every file complies; a stale entry
# fails below).
LONG_KNOWN: set[str] = set()


def test_no_file_over_400_lines_without_a_docstring_line_saying_why():
    found = long_files_without_a_reason()
    offenders = [f for f in found if f.split(" ")[0] not in LONG_KNOWN]
    assert not offenders, (
        "split these files or say why in their docstring "
        "('Longer than 400 lines because ...'): " + ", ".join(offenders)
    )
    stale = LONG_KNOWN - {f.split(" ")[0] for f in found}
    assert not stale, f"LONG_KNOWN lists files that now comply; drop them: {sorted(stale)}"


def _loads_data(source: str) -> bool:
    # parsing TOML or CSV, or opening a file of the data folder
    return bool(
        re.search(
            r"\btomllib\.loads?\(|\bcsv\.(reader|DictReader)\(|open\([^)]*data_dir\(\)", source
        )
    )


# Modules outside specs that open a registry themselves: none is left (a new one fails).
LOADERS_KNOWN: set[str] = set()


def test_no_module_but_specs_loads_a_data_file():
    loaders = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "specs.py" and _loads_data(p.read_text())
    )
    new = sorted(set(loaders) - LOADERS_KNOWN)
    assert not new, f"load data through specs, not in these modules: {new}"
    stale = sorted(LOADERS_KNOWN - set(loaders))
    assert not stale, f"LOADERS_KNOWN lists modules that no longer load data; drop them: {stale}"


# -- typed copies of registry facts ----------------------------------------------------------


def registry_numbers() -> set[float]:
    """The distinctive numbers of the keyed registries: test_typed_facts' rule and collection
    (``distinctive``'s docstring there), so the two finders cannot disagree on what a fact is."""
    return set(registry_facts())


def _folded(node: ast.AST) -> float | None:
    """The value of a numeric literal or of arithmetic on literals (16 * 2**20), else None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _folded(node.operand)
        return None if v is None else -v
    ops = {ast.Mult: float.__mul__, ast.Pow: float.__pow__, ast.Div: float.__truediv__}
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        a, b = _folded(node.left), _folded(node.right)
        if a is None or b is None or (isinstance(node.op, ast.Div) and b == 0):
            return None
        try:
            return ops[type(node.op)](a, b)
        except OverflowError:
            return None
    return None


def typed_registry_numbers(source: str, numbers: set[float]) -> list[str]:
    """Literals of ``source`` (outside docstrings, so doctests do not count) equal to a
    registry number: the largest expression folded, so 16 * 2**20 is one literal, not 16 and
    2**20. A bare ``2 ** k`` is a size the code chooses (a hash table, a buffer), not a copy."""
    tree = ast.parse(source)
    docs = _docstring_ids(tree)
    inside: set[int] = set()
    found = []
    for n in ast.walk(tree):  # breadth first: an expression before its operands
        if id(n) in inside or id(n) in docs:
            continue
        v = _folded(n)
        if v is None:
            continue
        inside |= {id(c) for c in ast.walk(n)}
        bare_power = isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
        if v in numbers and not bare_power:
            found.append(f"{v:.15g}")
    return sorted(found)


# Literals equal to a registry number that are another quantity altogether (file, value): the
# equality is a coincidence, and each says what the literal is. Add one only with its reason.
COINCIDENCES = {
    ("pipeline/dedup.py", "4194304"): "a 4 MiB hashing chunk, not a batch of tokens",
    ("mup.py", "16384"): "the held-out sample's length in symbols, not a GPU count",
    ("cli_args.py", "65536"): "the largest chip count --tokens-per-s tries, not a context",
    ("predict/serve_terms.py", "32768"): "trtllm-bench's own cap on tokens a step (tuning.py)",
    ("predict/plan_runs.py", "65536"): "the largest chip count fewest_chips tries (a search bound)",
    ("predict/simulate_types.py", "131072"): "the cap on a sampled request length, not a context",
    ("grading/architecture.py", "14336"): "Gemma 2 9B's d_ff (a model not in the registry), "
    "equal to Llama 3 8B's by chance",
    ("grading/architecture.py", "3072"): "one of the d_model widths a layer case is drawn from",
    ("grading/architecture_depth.py", "12288"): "a width parallel-block cases are drawn from",
    ("grading/foundations.py", "32768"): "one of the context lengths a case is drawn from",
    ("grading/foundations.py", "131072"): "one of the context lengths a case is drawn from",
    ("grading/memory_wall.py", "16384"): "a large data-parallel degree for ZeRO-3's 1/N case",
    ("grading/tour.py", "1536"): "a GEMM's M: 12 tiles of 128 (x 11 = 132 tiles, one wave)",
    ("grading/tour.py", "12288"): "one of the widths a TP-intensity case is drawn from",
    ("grading/tour.py", "16384"): "a 12 d^2 layer's width beside d = 4096, not a model's d_model",
    ("grading/tour.py", "1200"): "the top of the power caps (W) a case is drawn from",
    ("pipeline/mixture.py", "1400000000000"): "LLaMA 1's 1.4T tokens (Touvron et al. 2023, table "
    "1; a model not in the registry), equal to Chinchilla's by chance",
}

# Literals in the library equal to a distinctive number of a keyed registry (the rule is
# test_typed_facts' module docstring), by file and value with their count: each should be read from
# the registry (or a scenario). The list may only shrink; it is empty.
TYPED_KNOWN: dict[str, dict[str, int]] = {}


def _typed_copies() -> dict[str, dict[str, int]]:
    numbers = registry_numbers()
    out: dict[str, dict[str, int]] = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        rel = str(p.relative_to(PACKAGE))
        if rel.startswith("claims/"):  # tests/test_typed_facts.py holds the claims (and chapters)
            continue
        found = [
            v
            for v in typed_registry_numbers(p.read_text(), numbers)
            if (rel, v) not in COINCIDENCES
        ]
        if found:
            out[rel] = {v: found.count(v) for v in sorted(set(found))}
    return out


def test_no_library_code_types_a_registry_number():
    found = _typed_copies()
    new = {
        f: {v: n for v, n in vals.items() if n > TYPED_KNOWN.get(f, {}).get(v, 0)}
        for f, vals in found.items()
    }
    new = {f: v for f, v in new.items() if v}
    assert not new, f"read these from data/ (a registry or a scenario), not typed in code: {new}"
    stale = {
        f: {v: n for v, n in vals.items() if found.get(f, {}).get(v, 0) < n}
        for f, vals in TYPED_KNOWN.items()
    }
    stale = {f: v for f, v in stale.items() if v}
    assert not stale, f"TYPED_KNOWN lists more copies than remain; lower them: {stale}"


def test_every_listed_coincidence_is_still_in_its_file():
    numbers = registry_numbers()
    gone = sorted(
        (f, v)
        for f, v in COINCIDENCES
        if v not in typed_registry_numbers((PACKAGE / f).read_text(), numbers)
    )
    assert not gone, f"COINCIDENCES lists literals no longer there; drop them: {gone}"


def test_the_number_finder_sees_a_typed_fact_but_not_a_doctest_or_a_round_number():
    src = '''def f(n_gpus=16_384):
    """>>> f(3.35e12)"""
    batch = 16 * 2**20
    return 3.35e12 * n_gpus + 4e6 + 2**14 + 1024 * 1024 + 8192
'''
    given = (16384.0, 16 * 2.0**20, 3.35e12, 4e6, 1024.0**2, 8192.0)
    numbers = {v for v in given if distinctive(v)}
    assert numbers == {16384.0, 16 * 2.0**20, 3.35e12, 1024.0**2}  # 4e6 round, 8,192 a size
    assert typed_registry_numbers(src, numbers) == [
        "1048576",  # 1024 * 1024 equal to a registry's 1M context is a copy; 2**14 bare is not
        "16384",
        "16777216",
        "3350000000000",
    ]


# -- one call, two callers -----------------------------------------------------------------------


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Name -> llmphys module for ``from llmphys import x`` and ``from llmphys.y import z as w``."""
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == "llmphys":
            base = n.module.removeprefix("llmphys").lstrip(".")
            for a in n.names:
                out[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return out


def library_calls(source: str) -> set[str]:
    """``module.function`` of every call of a library module's attribute in ``source``."""
    tree = ast.parse(source)
    al, found = _aliases(tree), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            chain, f = [], n.func
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id in al:
                found.add(".".join([al[f.id], *reversed(chain)]))
    return found


def ledger_calls() -> set[str]:
    out: set[str] = set()
    for p in sorted((PACKAGE / "claims").glob("*.py")):
        if p.name not in ("__init__.py", "_core.py"):
            out |= library_calls(p.read_text())
    return {c for c in out if not c.startswith(("specs.", "units."))}  # look-ups, not studies


def chapter_calls() -> set[str]:
    out: set[str] = set()
    for nb in sorted((ROOT / "chapters").glob("*.ipynb")):
        if nb.name == "claims_ledger.ipynb":
            continue
        cells = json.loads(nb.read_text())["cells"]
        lines = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        out |= library_calls(
            "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines.split("\n"))
        )
    return out


# Functions the ledger calls that no chapter cell calls (issue 26 found at least 42; none is
# left): each is called where its chapter shows the number, or the claim calls what the chapter
# calls. A new one fails the test.
LEDGER_ONLY_KNOWN: set[str] = set()


def test_every_study_the_ledger_calls_is_called_by_a_chapter():
    only = ledger_calls() - chapter_calls()
    new = sorted(only - LEDGER_ONLY_KNOWN)
    assert not new, (
        f"the ledger calls these and no chapter cell does; show them or share one: {new}"
    )
    stale = sorted(LEDGER_ONLY_KNOWN - only)
    assert not stale, f"now called by a chapter (or no longer by the ledger); drop them: {stale}"


def test_the_call_finder_resolves_aliases_and_packages():
    src = (
        "from llmphys import studies, comms\nfrom llmphys.studies import serving as s\n"
        "studies.memory_wall.layout(c); comms.dp_comm_share(8); s.at_max_batch(m)\n"
    )
    assert library_calls(src) == {
        "studies.memory_wall.layout",
        "comms.dp_comm_share",
        "studies.serving.at_max_batch",
    }
