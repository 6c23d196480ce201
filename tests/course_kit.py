"""Reading the exercises out of the chapter notebooks (shared by the course-kit tests and tools).

An exercise is a ```` ```{exercise} Tier: title ```` directive with a ``:label:``; its solution
runs from the ``solution-start`` directive naming that label to the next ``solution-end``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
TIERS = ("Estimate", "Derive", "Compute", "Implement", "Design")
# notebook stem -> the least number of exercises it must carry (issue 20)
MINIMUM = {"hardware_tour": 6, "01_foundations": 8, "02_data": 8, "03_architecture": 8,
           "04_memory_wall": 8, "05_scaling_laws": 8, "06_economics": 8}

EXERCISE = re.compile(r"```\{exercise\}[ \t]*(?P<title>[^\n]*)\n:label:[ \t]*(?P<label>\S+)"
                      r"(?P<body>.*?)\n```", re.S)
SOL_START = re.compile(r"```\{solution-start\}[ \t]*(\S+)")
SOL_END = "```{solution-end}"


@dataclass
class Exercise:
    notebook: str
    label: str
    title: str
    prompt: str
    cell: int  # index of the cell holding the directive
    between: list[int] = field(default_factory=list)  # cells after it, before its solution
    solution: list[int] = field(default_factory=list)  # cells from solution-start to -end

    @property
    def tier(self) -> str:
        return self.title.split(":", 1)[0].strip() if ":" in self.title else ""


def load(stem: str) -> dict:
    return json.loads((CHAPTERS / f"{stem}.ipynb").read_text(encoding="utf-8"))


def src(cell: dict) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def exercises(stem: str, nb: dict | None = None) -> list[Exercise]:
    """Every exercise of a notebook, in page order, with the cells of its solution.

    Directives are read as one stream over the Markdown cells, so an exercise, the end of the
    previous solution and the start of its own may share a cell.
    """
    nb = load(stem) if nb is None else nb
    out: list[Exercise] = []
    prompt_of: Exercise | None = None  # the exercise whose prompt (before its solution) is open
    owner: Exercise | None = None  # the exercise whose solution is open
    for i, cell in enumerate(nb["cells"]):
        text = src(cell) if cell["cell_type"] == "markdown" else ""
        events = [(m.start(), "exercise", m) for m in EXERCISE.finditer(text)]
        events += [(m.start(), "start", m) for m in SOL_START.finditer(text)]
        events += [(m.start(), "end", None) for m in re.finditer(re.escape(SOL_END), text)]
        in_cell: list[Exercise] = [owner] if owner is not None else []
        for _, kind, m in sorted(events, key=lambda e: e[0]):
            if kind == "exercise":
                assert m is not None
                prompt_of = Exercise(notebook=stem, label=m["label"], title=m["title"].strip(),
                                     prompt=m["body"], cell=i)
                out.append(prompt_of)
            elif kind == "start":
                assert m is not None
                label = m.group(1)
                owner = next((e for e in out if e.label == label), None)
                assert owner is not None, f"{stem}: solution-start {label} has no exercise"
                in_cell.append(owner)
                prompt_of = None
            else:
                owner = None
        for ex in in_cell:  # every solution open somewhere in this cell, once
            if not ex.solution or ex.solution[-1] != i:
                ex.solution.append(i)
        if not events and owner is None and prompt_of is not None:
            prompt_of.between.append(i)
    return out
