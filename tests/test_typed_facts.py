"""A published fact that lives in data/ is read from there, not typed again in the claims ledger
or in a chapter's code (issue 26: "each fact has one home").

The finder collects the *distinctive* numbers of the keyed registries and reports every literal
in the claims package (lib/llmphys/claims/*.py) and in the chapters' code cells that equals one.
A hit is a typed copy of a registry fact: Llama 3's 16,384 GPUs written as ``16384`` or
``16 * 2**20`` tokens, an H100's 989.4e12 FLOP/s written out. Read it through ``specs`` instead
(``specs.scenario``, ``specs.accelerator``, ``specs.model``, ``predict.training_runs``).

What counts as distinctive (the rule):
  - an integer (or an integral float) of at least 1,000 with at least two significant digits
    (16384, 2048, 8192, 128256): 1,000, 2,000 or 5,000 are round figures anyone types;
  - a non-integral float with at least three significant digits (989.4e12, 3.35e12, 0.0125):
    0.4 or 45e-2 are round figures, too common to be anyone's fact.
Excluded from the registries: booleans, dates, fields whose name says they are a year
(launch_year, release_year), which collide with nothing but other years, and seeds (an rng's
seed is a choice, not a fact); and the powers of two from 1,024 to 8,192, which are the widths,
sequence lengths and GEMM sizes every example types (8,192 is Llama 3 70B's width and a common
sequence length alike): matching them would drown the facts. From 16,384 (Llama 3's GPU count,
its 405B's width) on they are kept.

What counts as a literal: an ``ast.Constant`` number, or the outermost expression that folds to a
number from constants alone (``16 * 2**20``, ``-1_000``, ``16_384``); its parts are not reported
again. Excluded from the code: docstrings (examples, not code) and the keyword arguments
``stated=``, ``target=``, ``threshold=``, ``lo=``, ``hi=`` (a claim's own figure as the series
states it: that number is the claim, not a fact the check reads).

One rule and one collection for both finders: tests/test_structure.py's finder for the rest of
lib/ imports ``distinctive``, ``REGISTRIES`` and ``registry_facts`` from here.

The known lists may only shrink: a new typed copy fails, and so does an entry that is gone.
Regenerate the lists after a change with

    python tests/test_typed_facts.py --list
"""

from __future__ import annotations

import ast
import json
import math
import operator
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
CLAIMS = ROOT / "lib" / "llmphys" / "claims"
CHAPTERS = ROOT / "chapters"
REGISTRIES = (
    "training_runs.toml",
    "accelerators.toml",
    "models.toml",
    "run_models.toml",
    "serving_models.toml",
    "serving_runs.toml",
    "scenarios.toml",
)
STATED_KEYWORDS = frozenset({"stated", "target", "threshold", "lo", "hi"})
_SIZES = frozenset(2.0**k for k in range(10, 14))  # 1,024 ... 8,192


def _excluded_field(name: str) -> bool:
    return "year" in name or "seed" in name


def significant_digits(x: float) -> int:
    """Significant digits of the shortest repr of ``x`` (989.4e12 -> 4, 16384 -> 5, 70e9 -> 1)."""
    mantissa = f"{abs(x):.15e}".split("e")[0].replace(".", "").rstrip("0")
    return len(mantissa) if mantissa else 0


def distinctive(x: float) -> bool:
    """The rule of the module docstring."""
    if isinstance(x, bool) or not math.isfinite(x) or x == 0:
        return False
    if float(x).is_integer():
        return abs(x) >= 1000 and abs(x) not in _SIZES and significant_digits(x) >= 2
    return significant_digits(x) >= 3


def _numbers(node, path: str, out: dict[float, str]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if not _excluded_field(k):
                _numbers(v, f"{path}.{k}", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _numbers(v, f"{path}[{i}]", out)
    elif isinstance(node, (int, float)) and not isinstance(node, bool) and distinctive(node):
        out.setdefault(float(node), path)


def registry_facts() -> dict[float, str]:
    """Distinctive value -> the first registry field holding it ("training_runs.toml:x.n_chips")."""
    out: dict[float, str] = {}
    for name in REGISTRIES:
        with open(DATA / name, "rb") as f:
            _numbers(tomllib.load(f), name + ":", out)
    return {v: p.replace(":.", ":", 1) for v, p in out.items()}


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def fold(node: ast.AST) -> float | None:
    """The number an expression of numeric constants folds to, else None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = fold(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = fold(node.left), fold(node.right)
        if a is None or b is None:
            return None
        try:
            return _OPS[type(node.op)](a, b)
        except (ZeroDivisionError, OverflowError):
            return None
    return None


def _match(v: float, facts: dict[float, str]) -> str | None:
    if v in facts:
        return facts[v]
    if isinstance(v, float) and not v.is_integer():  # 989.4e12 == 989.4 * 1e12 up to rounding
        for f, where in facts.items():
            if math.isclose(v, f, rel_tol=1e-12):
                return where
    return None


def typed_facts(source: str, facts: dict[float, str]) -> list[tuple[int, str, str]]:
    """(line, literal as written, registry field) of each literal of ``source`` equal to a fact."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for n in ast.walk(tree):
        if (
            isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
        ):
            skip.add(id(n.body[0].value))
        if isinstance(n, ast.Call):
            skip |= {id(k.value) for k in n.keywords if k.arg in STATED_KEYWORDS}
    hits: list[tuple[int, str, str]] = []

    def visit(n: ast.AST) -> None:
        if id(n) in skip:
            return
        v = fold(n) if isinstance(n, (ast.Constant, ast.UnaryOp, ast.BinOp)) else None
        if v is not None:
            where = _match(float(v), facts) if abs(v) < 1e300 else None
            if where:
                hits.append((n.lineno, ast.get_source_segment(source, n) or repr(v), where))
            return  # the outermost constant expression only
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(tree)
    return sorted(hits)


def _cell_source(cell: dict) -> str:
    lines = "".join(cell["source"]).split("\n")
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)


def sources() -> dict[str, str]:
    """File label -> code: each claims module, and each chapter code cell as "stem#cell-id"."""
    out = {f"claims/{p.name}": p.read_text(encoding="utf-8") for p in sorted(CLAIMS.glob("*.py"))}
    for nb in sorted(CHAPTERS.glob("*.ipynb")):
        if nb.name == "claims_ledger.ipynb":
            continue
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, c in enumerate(cells):
            if c["cell_type"] == "code":
                out[f"{nb.stem}#{c.get('id', i)}"] = _cell_source(c)
    return out


def offenders() -> dict[str, Counter[str]]:
    """File -> Counter of the literals (as written) that copy a registry fact. Chapter cells are
    counted per chapter, so that moving a cell or a cell id does not break the list."""
    facts = registry_facts()
    out: dict[str, Counter[str]] = {}
    for label, src in sources().items():
        key = label.split("#")[0]
        hits = [h for h in typed_facts(src, facts) if (key, h[1]) not in COINCIDENCES]
        if hits:
            out.setdefault(key, Counter()).update(lit for _, lit, _ in hits)
    return out


# Literals that equal a registry number by coincidence: (file label as in KNOWN, literal as
# written) -> why it is not the registry's fact. offenders() skips them.
COINCIDENCES: dict[tuple[str, str], str] = {
    # chapters 4 and 6
    ("04_memory_wall", "16384"): (
        "a GEMM side or a sequence length, not Llama 3's GPU count: the tokens of the roofline "
        "section's training matmul, as claim M03's call spells them (68357543), the widest weight "
        "of the GEMM-efficiency sweep 512 / 4,096 / 16,384 (a7b59058) and, on main after train's "
        "merge, the 16K-token point of the FlashAttention rates (9be45de0, ccf90499)"
    ),
    ("04_memory_wall", "4 * 2**20"): (
        "the series' round 4M-token batch read as 4 x 2^20 beside the series_dp scenario's 4e6, "
        "as its notes say (70aec348, 9ca8bac9); not PaLM's batch"
    ),
    ("04_memory_wall", "2 * 512 * 5"): (
        "the all-reduce exercise's own latency estimate 2 p alpha, 512 GPUs at 5 us (9df9b1eb); "
        "not Llama 2 13B's width"
    ),
    ("04_memory_wall", "131_072"): (
        "the checkpoint exercise's hypothetical cluster of 8 times Llama 3's GPUs (e4099bf9); "
        "not a batch"
    ),
    ("06_economics", "131072"): (
        "128K, the chapter's long-context example length (0360db07, 2e1f4eb6, d3fd9b28, ch1x6008, "
        "ch1x6011): Llama 3.1's and DeepSeek-V3's window, but the registry's Llama 3 70B, the "
        "model it is applied to, is trained to 8K, so it is no field of that model; not a batch"
    ),
    ("06_economics", "1048576"): (
        "a million-token context beyond both models' trained one, extending the long-context "
        "price (2e1f4eb6); not a batch"
    ),
    ("06_economics", "32768"): (
        "a sweep point: the 32K column of the context table (0360db07) and of the prompt-length "
        "sweep (a75790a5); the 32K idle conversation is read from its scenario"
    ),
    ("06_economics", "65536"): (
        "the tier exercise's own 64K DeepSeek-V3 conversation (a1ead32d) and the upper end of the "
        "reasoning exercise's search grid (ch1x6017); not a training run's sequence length"
    ),
}


# Typed registry facts found when the test was written (issue 26), per file: literal -> count.
# The lists may only shrink; regenerate with `python tests/test_typed_facts.py --list`.
# The claims modules' entries equal a registry value but are the series' own inputs, not a read
# fact: 16384 is the essay's 16K-cube training GEMM (M03, M09, M10, O24), 131072 and 1048576
# the 128K and 1M contexts the lecture and podcast price (L14, P01, P34, P35). The chapters'
# entries are being removed by their engineers; the lead regenerates them after the merge.
KNOWN: dict[str, dict[str, int]] = {
    "01_foundations": {"131_072": 1, "16_384": 2, "175e9": 1, "32_768": 1, "65_536": 1},
    "02_data": {"32_000": 1},
    "03_architecture": {
        "131_072": 14,
        "14336": 2,
        "16_384.0": 1,
        "256_000": 1,
        "262144.0": 5,
        "3 * 128**2": 1,
        "32768.0": 1,
        "32_768": 7,
        "65_536": 3,
        "65_536.0": 1,
    },
    "04_memory_wall": {"16_384": 2},
    "05_scaling_laws": {"1.4e12": 1, "13e9": 8, "15e12": 4, "5.76e23": 2},
    "claims/lecture.py": {"131072": 2},
    "claims/overview.py": {"16384": 3},
    "claims/part3.py": {"131072": 1, "16384": 8},
    "claims/podcast.py": {"1048576": 2, "131072": 7},
    "hardware_tour": {"12 * 128": 2, "1200.0": 1, "128 * 256": 1, "16_384": 6},
    "your_own_model": {"15e12": 1, "32_768": 1, "4 * 2**20": 1, "50257": 1},
}


def test_no_new_typed_copy_of_a_registry_fact():
    found = offenders()
    new = {
        f: {
            lit: n - KNOWN.get(f, {}).get(lit, 0)
            for lit, n in c.items()
            if n > KNOWN.get(f, {}).get(lit, 0)
        }
        for f, c in found.items()
    }
    new = {f: d for f, d in new.items() if d}
    assert not new, (
        f"these literals copy a registry fact; read it through specs (see the docstring): {new}"
    )


def test_the_known_list_has_no_stale_entry():
    found = offenders()
    stale = {
        f: {lit: n for lit, n in d.items() if found.get(f, Counter())[lit] < n}
        for f, d in KNOWN.items()
    }
    stale = {f: d for f, d in stale.items() if d}
    assert not stale, f"fixed (or moved): lower these KNOWN entries: {stale}"


def test_the_finder_fails_on_a_planted_copy():
    facts = registry_facts()
    assert facts[16384.0].startswith("training_runs.toml:")  # Llama 3's GPUs are a fact
    planted = (
        '"""A docstring may say 16384."""\n'
        "n = 16384\n"
        "tokens = 16 * 2**20\n"
        "peak = 989.4e12\n"
        "ok = Compare(target=16384)\n"  # the series' own figure, not a read fact
        "round_ones = [1000, 0.4, 70e9, 2026]\n"
    )
    hits = typed_facts(planted, facts)
    assert [(line, lit) for line, lit, _ in hits] == [
        (2, "16384"),
        (3, "16 * 2**20"),
        (4, "989.4e12"),
    ], hits


def test_the_rule_keeps_distinctive_numbers_only():
    assert distinctive(16384) and distinctive(6144) and distinctive(989.4e12)
    assert distinctive(0.0125) and distinctive(3.35e12)
    assert not distinctive(1000) and not distinctive(5000.0) and not distinctive(70e9)
    assert not distinctive(0.45) and not distinctive(8) and not distinctive(True)
    assert not distinctive(2048) and not distinctive(8192)  # everyone's sizes (see the rule)


def _format(found: dict[str, Counter[str]]) -> str:
    """The KNOWN literal, laid out as ruff format lays it out (paste it over the old one)."""
    lines = ["KNOWN: dict[str, dict[str, int]] = {"]
    for f in sorted(found):
        items = [f'"{lit}": {n}' for lit, n in sorted(found[f].items())]
        one = f'    "{f}": {{{", ".join(items)}}},'
        if len(one) <= 100:
            lines.append(one)
        else:
            lines += [f'    "{f}": {{', *(f"        {i}," for i in items), "    },"]
    lines.append("}")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print(_format(offenders()))
    elif sys.argv[1:] == ["--where"]:
        facts = registry_facts()
        for label, src in sources().items():
            for line, lit, where in typed_facts(src, facts):
                print(f"{label}:{line}: {lit}  ({where})")
    else:
        sys.exit("usage: python tests/test_typed_facts.py --list | --where")
