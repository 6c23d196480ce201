"""Glued numbers read as prose: no Python e-notation, thousands separators on long integers.

Issue 32 item 14 found «3.15e+23», «4.1e+11» and an unseparated «16384» on the rendered pages.
This test renders every ``{glue:text}`name:fmt``` role (and ``{glue}`name```) of the listed
chapters from the stored glue bundle exactly as myst-nb does (``format(value, fmt)`` on the
value's repr), and the Markdown tables that code cells print, and fails on either pattern.
Scientific notation belongs in prose as "3.15 × 10²³" (``units.fmt_sci``).

The chapters listed are the ones whose prose has been checked so far (the tour, chapters 1, 2
and 5, the appendix); add a chapter to CHAPTERS once its prose passes.
"""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "chapters"
CHAPTERS = ["hardware_tour", "01_foundations", "02_data", "05_scaling_laws", "your_own_model"]
ROLE = re.compile(r"\{glue(?::text)?\}`([^`:]+)(?::([^`]*))?`")
E_NOTATION = re.compile(r"\d[eE][-+]?\d")
UNSEPARATED = re.compile(r"(?<![\d.,])\d{5,}(?![\d])")


def glued_values(cells: list[dict]) -> dict[str, str]:
    """Glue name -> the stored ``text/plain`` repr of its value."""
    out = {}
    for cell in cells:
        for o in cell.get("outputs", []):
            sb = o.get("metadata", {}).get("scrapbook")
            if sb:
                text = o["data"].get(sb["mime_prefix"] + "text/plain")
                if text is not None:
                    out[sb["name"]] = "".join(text) if isinstance(text, list) else text
    return out


def render(stored: str, fmt: str) -> str:
    """What ``{glue:text}`name:fmt``` shows for a stored repr (myst-nb's rule)."""
    try:
        value = ast.literal_eval(stored)
    except (ValueError, SyntaxError):
        return stored
    if not fmt:
        return value if isinstance(value, str) else stored
    return format(value, fmt)


def problems(text: str) -> list[str]:
    found = [f"e-notation {m.group()!r}" for m in E_NOTATION.finditer(text)]
    found += [f"no thousands separator {m.group()!r}" for m in UNSEPARATED.finditer(text)]
    return found


def test_the_check_catches_what_the_review_found():
    assert problems(render("3.15e+23", ""))
    assert problems(render("4.1e+11", ".2g"))
    assert problems(render("16384", ""))
    assert not problems(render("16384", ","))
    assert not problems(render("'3.15 × 10²³'", ""))


@pytest.mark.parametrize("stem", CHAPTERS)
def test_glued_prose_has_no_e_notation_and_separates_thousands(stem):
    cells = json.loads((ROOT / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    values = glued_values(cells)
    bad = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for m in ROLE.finditer("".join(cell["source"])):
                name, fmt = m.group(1), m.group(2) or ""
                if name in values:
                    bad += [f"cell {i} {name}:{fmt}: {p}"
                            for p in problems(render(values[name], fmt))]
        else:
            for o in cell.get("outputs", []):
                table = o.get("data", {}).get("text/markdown")
                if table:
                    text = "".join(table) if isinstance(table, list) else table
                    bad += [f"cell {i} table: {p}" for p in problems(text)]
    assert not bad, "\n".join(bad)
