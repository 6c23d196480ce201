"""Every library module names its home chapter once, in one spelling, and the chapter exists.

The form (CONTRIBUTING.md, "Where a module goes"), one line of the module docstring:

    Home: chapters/03_architecture.ipynb.
    Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".

A named section must be a heading of that notebook.
"""

import ast
import json
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lib" / "llmphys"
MODULES = sorted(PACKAGE.rglob("*.py"))
HOME = re.compile(r'Home: (chapters/[\w-]+\.ipynb)(?:, section "([^"\n]+)")?\.')


@cache
def _headings(notebook: Path) -> frozenset[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return frozenset(m.strip() for m in re.findall(r"^#{1,6} (.+)$", text, re.M))


def home_problems(docstring: str | None) -> list[str]:
    """What is wrong with a module docstring's Home line (empty when nothing is)."""
    if not docstring:
        return ["no module docstring"]
    lines = [ln for ln in docstring.splitlines() if re.match(r"\s*Home\b", ln)]
    if len(lines) != 1:
        return [f"{len(lines)} lines start with 'Home'; want exactly one"]
    m = HOME.fullmatch(lines[0].strip())
    if not m:
        return [f"{lines[0].strip()!r} is not in the form {HOME.pattern!r}"]
    out = []
    notebook = ROOT / m[1]
    if not notebook.is_file():
        out.append(f"{m[1]} does not exist")
    elif m[2] and m[2] not in _headings(notebook):
        out.append(f"{m[1]} has no heading {m[2]!r}")
    for ref in re.findall(r"chapters/[\w-]+\.(?:ipynb|md)", docstring):
        if not (ROOT / ref).is_file():
            out.append(f"the docstring points at {ref}, which does not exist")
    return out


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_module_has_one_home_line_pointing_at_an_existing_chapter(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert not home_problems(doc), home_problems(doc)


def test_the_check_rejects_the_spellings_the_review_found():
    section = ("Home: chapters/06_economics.ipynb, "
               "section \"Does the model predict real deployments?\".")
    assert home_problems("x\n\nHome: chapters/03_architecture.ipynb.\n") == []
    assert home_problems(f"x\n\n{section}\n") == []
    assert home_problems("x\n\nHome: chapter 5.\n")  # no file
    assert home_problems("x\n\nHome chapter: the data chapter (chapters/02_data).\n")
    assert home_problems("x\n\nHome: chapters/00_hardware_tour.ipynb.\n")  # missing file
    assert home_problems("x\nIntroduced in chapters/00_hardware_tour.ipynb.\n")  # no Home line
    assert home_problems("x\n\nHome: chapters/03_architecture.ipynb.\n"
                         "Home: chapters/02_data.ipynb.")
    assert home_problems('x\n\nHome: chapters/06_economics.ipynb, section "No such heading".\n')
