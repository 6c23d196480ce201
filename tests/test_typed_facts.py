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

A literal may equal a registry number without being that fact: a context length picked for a
sweep, a tile of 12 x 128 rows, the side of an example GEMM. Such a literal is listed in
``COINCIDENCES`` under (file, literal as written) with the reason it is another quantity; it is
then left out of the offenders in that file only, and the entry fails once the literal is gone.
A literal that *is* the fact (Llama 3.1's 128K context, Llama 3 8B's d_ff) is never listed: it is
read. The key is the literal as written, so an entry also covers later copies of the same literal
in the same file: keep the reasons precise enough to judge a new one by.

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
            and isinstance(n.body[0].value, ast.Constant)
            and isinstance(n.body[0].value.value, str)
        ):  # a docstring: a string literal first, not any expression (a glue(...) call)
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


def found(srcs: dict[str, str] | None = None) -> dict[str, Counter[str]]:
    """File -> Counter of the literals (as written) equal to a registry fact, coincidences
    included. Chapter cells are counted per chapter, so that moving a cell or a cell id does not
    break the lists. ``srcs`` defaults to ``sources()``."""
    facts = registry_facts()
    out: dict[str, Counter[str]] = {}
    for label, src in (sources() if srcs is None else srcs).items():
        hits = typed_facts(src, facts)
        if hits:
            key = label.split("#")[0]
            out.setdefault(key, Counter()).update(lit for _, lit, _ in hits)
    return out


def offenders(srcs: dict[str, str] | None = None) -> dict[str, Counter[str]]:
    """``found`` less the COINCIDENCES: the literals that copy a registry fact."""
    out: dict[str, Counter[str]] = {}
    for f, c in found(srcs).items():
        kept = Counter({lit: n for lit, n in c.items() if (f, lit) not in COINCIDENCES})
        if kept:
            out[f] = kept
    return out


# Literals equal to a registry value that are another quantity: (file, literal as written) -> why.
# Left out of offenders() in that file only; an entry that is no longer found fails. A typed copy
# of the fact itself is never listed here: it is read through specs.
COINCIDENCES: dict[tuple[str, str], str] = {
    # chapters 1, 3, 5, the tour and the claims
    ("01_foundations", "16_384"): "the held-out sample's length in symbols (af7e3f62)",
    ("01_foundations", "32_768"): "an average context of the attention-share sweep (0e8bb52c)",
    ("01_foundations", "65_536"): "an average context of the attention-share sweep (0e8bb52c)",
    ("03_architecture", "32_768"): (
        "the 32K context the book picks for the attention-phase table, its glue and the prefill"
        " block search (df7c564f, 121a69cb, c6a3e38c), and a point of the FlashAttention sweep"
        " (035648e4); not a run's sequence length"
    ),
    ("03_architecture", "65_536"): (
        "64K, the context an s = 8 rescaling of the trained 8,192 covers: the RoPE-scaling"
        " table, figure and glue (7a27ae51, b272f5dc, e136eea3)"
    ),
    ("03_architecture", "16_384.0"): "brentq's lower bracket, a row of the table above (20d399d6)",
    ("03_architecture", "65_536.0"): "brentq's upper bracket, a row of the table above (20d399d6)",
    ("03_architecture", "32768.0"): "a column picked from the mixer sweep 2**10..2**18 (d30499f4)",
    ("03_architecture", "262144.0"): (
        "the mixer sweep's last point, 2**18, shown and glued (d30499f4, 708acf26)"
    ),
    ("03_architecture", "3 * 128**2"): (
        "3 d^2 of a 128-wide head, the limit M / 3d^2 of FlashAttention's traffic ratio"
        " (035648e4); not GPT-3's d_ff"
    ),
    ("03_architecture", "256_000"): (
        "Gemma 2's vocabulary beside its final softcap (9f6e5011); it equals PaLM's vocab_size,"
        " and no registry holds Gemma 2"
    ),
    ("05_scaling_laws", "15e12"): (
        "the exercises' stated givens, written in their text: a model trained on 15T tokens"
        " (cd4ad1eb) and 15T tokens of unique text (ac1b98af); neither names a model"
    ),
    ("hardware_tour", "16_384"): (
        "the series' 16K-token micro-batch and 16,384-cube GEMM (f816d43c, 34c3f46b, 86105581)"
        " and an exercise's example width (420694da); not a GPU count"
    ),
    ("hardware_tour", "12 * 128"): "a group of 12 x 128-row output tiles (34c3f46b)",
    ("hardware_tour", "128 * 256"): "a 128 x 256 production GEMM tile (11a33f71)",
    ("hardware_tour", "1200.0"): "the end of the drawn power-cap range, 300 to 1,200 W (4fb3f7d3)",
    ("claims/lecture.py", "131072"): "the 128K context whose serving cost the lecture prices, L14",
    ("claims/overview.py", "16384"): "the essay's 16K-cube training GEMM, O24",
    ("claims/part3.py", "16384"): (
        "the essay's 16K-cube training GEMM and its 16K-token micro-batch, M03, M09, M10"
    ),
    ("claims/part3.py", "131072"): "2**17 tokens, the binary reading of the essay's 128K, M12",
    ("claims/podcast.py", "131072"): "the 128K context the podcast prices, P01, P34, P35",
    ("claims/podcast.py", "1048576"): "the 1M context the podcast prices, P35",
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
    # the appendix, and chapter 4's prediction section (merged by the lead)
    ("04_memory_wall", "128 * 8192"): (
        "issue 27's new-user check, Llama 3 8B on 8 H100s with 128 sequences of 8,192 tokens"
        " (ccf90499, as tests/test_predict.py runs it); not Megatron's 1T batch"
    ),
    ("your_own_model", "4 * 2**20"): (
        "the appendix's own example problem, a 4M-token batch for Llama 3 70B (2b05d9fd,"
        " 35ff99b2); not PaLM's batch"
    ),
    ("your_own_model", "50257"): (
        "GPT-2 small's config.json as a reader would type it (d7c217dc); GPT-2 is not in the"
        " registry, and its vocabulary equals GPT-3's"
    ),
    ("your_own_model", "32_768"): (
        "the KV exercise's own 32K-token sequence (73685dcd); not a training run's length"
    ),
    ("06_economics", "65536"): (
        "the tier exercise's own 64K DeepSeek-V3 conversation (a1ead32d) and the upper end of the "
        "reasoning exercise's search grid (ch1x6017); not a training run's sequence length"
    ),
}


# Typed registry facts still to be read from data/, per file: literal -> count. Issue 26 drove the
# list to empty (each hit was read through specs or listed in COINCIDENCES with its reason); a new
# typed copy fails, and so would a stale entry. `python tests/test_typed_facts.py --list` prints it.
KNOWN: dict[str, dict[str, int]] = {}


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


def test_every_coincidence_is_still_found():
    everything = found()
    stale = [k for k in COINCIDENCES if not everything.get(k[0], Counter())[k[1]]]
    assert not stale, f"no longer in the code: remove these COINCIDENCES entries: {stale}"


def test_a_coincidence_is_excused_in_its_own_file_only():
    assert ("01_foundations", "32_768") in COINCIDENCES  # a sweep point in chapter 1
    assert ("01_foundations", "131_072") not in COINCIDENCES
    planted = {
        "01_foundations#planted": "for ctx in (4096, 32_768):\n    pass\nctx = 131_072\n",
        "planted_chapter#cell": "n = 32_768\n",
    }
    assert found(planted) == {
        "01_foundations": Counter({"32_768": 1, "131_072": 1}),
        "planted_chapter": Counter({"32_768": 1}),
    }
    assert offenders(planted) == {
        "01_foundations": Counter({"131_072": 1}),  # the registry fact is still caught
        "planted_chapter": Counter({"32_768": 1}),  # the excuse does not travel to other files
    }


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
                why = COINCIDENCES.get((label.split("#")[0], lit))
                note = f"  coincidence: {why}" if why else ""
                print(f"{label}:{line}: {lit}  ({where}){note}")
    else:
        sys.exit("usage: python tests/test_typed_facts.py --list | --where")
