"""The student edition (`make student`, tools/reader_edition.py --student): every chapter without
its solutions, with every exercise and every Implement exercise's check cell left in, and
runnable top to bottom (no cell outside a solution needs a name only a solution defines)."""

import ast
import json
import re

import pytest
import reader_edition as re_ed
from course_kit import exercises, load, src

DETAILS = re.compile(r"<details>\s*<summary>[^<]*</summary>(.*?)</details>", re.S)


@pytest.fixture(scope="module")
def editions(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    re_ed.generate(out, student=True)
    index = re_ed.build_index()
    docs = re_ed.chapter_notebooks(index)
    student = {d: json.loads((out / f"{d}.ipynb").read_text(encoding="utf-8")) for d in docs}
    reader = {d: re_ed.reader_notebook(index, d) for d in docs}
    return reader, student


def _text(nb):
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def _solution_and_rest(nb):
    """(lines only solutions hold, everything else) of a reader-edition notebook."""
    sol, rest = [], []
    for c in nb["cells"]:
        text = "".join(c["source"])
        if c["cell_type"] == "code" and text.startswith(re_ed.TITLE_LINE + "Solution to"):
            sol.append(text.split("\n", 1)[1] if "\n" in text else "")
        elif c["cell_type"] == "markdown":
            sol += DETAILS.findall(text)
            rest.append(DETAILS.sub("", text))
        else:
            rest.append(text)
    rest_lines = {line.strip() for block in rest for line in block.splitlines()}
    only = {line.strip() for block in sol for line in block.splitlines()
            if len(line.strip()) >= 25 and line.strip() not in rest_lines}
    return only


def test_no_solution_prose_code_or_output_leaks(editions):
    reader, student = editions
    for doc, nb in student.items():
        text = _text(nb)
        assert "<details>" not in text, doc
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), doc
        lines = {line.strip() for line in text.splitlines()}
        leaked = sorted(line for line in _solution_and_rest(reader[doc]) if line in lines)
        assert not leaked, f"{doc}: solution lines in the student edition: {leaked[:3]}"


def test_the_leak_check_sees_the_solutions(editions):
    """The same check on the reader edition (solutions folded, not removed) finds them."""
    reader, _ = editions
    for doc, nb in reader.items():
        if "**Exercise" in _text(nb):
            only = _solution_and_rest(nb)
            lines = {line.strip() for line in _text(nb).splitlines()}
            assert len(only) >= 5 and all(line in lines for line in only), doc


def test_every_exercise_and_check_cell_is_kept(editions):
    reader, student = editions
    for doc, nb in student.items():
        stem = doc.split("/")[-1]
        numbers = re.findall(r"\*\*Exercise [0-9A-Z.]+\*\*", _text(reader[doc]))
        text = _text(nb)
        assert all(n in text for n in numbers), doc
        assert text.count("left out of the student edition") == len(numbers), doc
        source = load(stem)
        for c in source["cells"]:
            if "exercise-check" in c.get("metadata", {}).get("tags", []):
                assert src(c).strip() in text, f"{doc}: a check cell is missing"


def _names(tree, ctx):
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _defined(tree):
    out = _names(tree, ast.Store)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


@pytest.mark.parametrize("stem", ["hardware_tour", "01_foundations", "02_data",
                                  "03_architecture", "04_memory_wall", "05_scaling_laws",
                                  "06_economics", "claims_ledger", "your_own_model"])
def test_runs_without_the_solutions(stem):
    """A cell outside the solutions never reads a name that only a solution cell defines."""
    nb = load(stem)
    in_solution = {i for e in exercises(stem, nb) for i in e.solution}
    defined_outside: set[str] = set()
    only_in_solutions: set[str] = set()
    problems = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        code = "\n".join(line for line in src(cell).splitlines()
                         if not line.lstrip().startswith(("%", "!")))
        tree = ast.parse(code)
        if i in in_solution:
            only_in_solutions |= _defined(tree) - defined_outside
            continue
        needs = (_names(tree, ast.Load) - _defined(tree)) & only_in_solutions
        if needs:
            problems.append((cell.get("id"), sorted(needs)))
        defined_outside |= _defined(tree)
        only_in_solutions -= _defined(tree)
    assert not problems, f"{stem}: cells that need a solution's names: {problems}"
