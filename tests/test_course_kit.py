"""Issue 20: every chapter's exercises are tiered, Implement exercises are autograded, Design
exercises have a rubric, and Compute prompts do not name the function to use."""

import pkgutil
import re
import tomllib

import pytest
from course_kit import MINIMUM, ROOT, TIERS, exercises, load, src

import llmphys
from llmphys import grading

RUBRICS = ROOT / "data" / "course" / "rubrics"
MODULES = {m.name for m in pkgutil.iter_modules(llmphys.__path__)}
NAMED_CALL = re.compile(r"`([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)(\([^`]*\))?`")


def outputs_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"] if isinstance(out["text"], str) else "".join(out["text"]))
        for v in out.get("data", {}).values():
            parts.append(v if isinstance(v, str) else "".join(v) if isinstance(v, list) else "")
    return "".join(parts)


@pytest.mark.parametrize("stem", sorted(MINIMUM))
def test_tiers(stem):
    exs = exercises(stem)
    assert len(exs) >= MINIMUM[stem], f"{stem}: {len(exs)} exercises, at least {MINIMUM[stem]}"
    untiered = [e.label for e in exs if e.tier not in TIERS]
    assert not untiered, f"{stem}: titles must start with one of {TIERS} and a colon: {untiered}"
    missing = set(TIERS) - {e.tier for e in exs}
    assert not missing, f"{stem}: no exercise of tier {sorted(missing)}"
    assert all(e.solution for e in exs), f"{stem}: every exercise has a worked solution"


@pytest.mark.parametrize("stem", sorted(MINIMUM))
def test_compute_prompts_do_not_name_the_function(stem):
    for e in exercises(stem):
        if e.tier != "Compute":
            continue
        named = [m.group(0) for m in NAMED_CALL.finditer(e.prompt) if m.group(1) in MODULES]
        assert not named, f"{e.label}: a Compute prompt names the library call {named}"


@pytest.mark.parametrize("stem", sorted(MINIMUM))
def test_implement_exercises_are_autograded(stem):
    nb = load(stem)
    checks = grading.checks()
    for e in exercises(stem, nb):
        if e.tier != "Implement":
            continue
        check_cells = [nb["cells"][i] for i in e.between
                       if "exercise-check" in nb["cells"][i].get("metadata", {}).get("tags", [])]
        assert len(check_cells) == 1, f"{e.label}: one code cell tagged exercise-check"
        cell = check_cells[0]
        called = re.findall(r"grading\.(check_\w+)\(", src(cell))
        assert len(called) == 1 and called[0] in checks, f"{e.label}: calls one grading check"
        assert "NOT YET" in outputs_text(cell), f"{e.label}: the stub's stored feedback"
        sol = "".join(src(nb["cells"][i]) for i in e.solution)
        assert f"grading.{called[0]}(" in sol, f"{e.label}: the solution runs the same check"
        sol_out = "".join(outputs_text(nb["cells"][i]) for i in e.solution)
        assert f"PASS {e.label}" in sol_out or "PASS " in sol_out, f"{e.label}: solution passes"


@pytest.mark.parametrize("stem", sorted(MINIMUM))
def test_design_exercises_have_a_rubric(stem):
    designs = [e for e in exercises(stem) if e.tier == "Design"]
    path = RUBRICS / f"{stem}.toml"
    rubrics = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for e in designs:
        assert e.label in rubrics, f"{e.label}: no rubric in {path.relative_to(ROOT)}"
        r = rubrics[e.label]
        crit = r["criteria"]
        assert len(crit) >= 3, f"{e.label}: a rubric names at least three criteria"
        assert sum(c["points"] for c in crit) == r["points"], f"{e.label}: points add up"
        assert all(c["text"].strip() for c in crit)
    stray = set(rubrics) - {e.label for e in designs}
    assert not stray, f"{path.name}: rubrics for no Design exercise: {sorted(stray)}"


def test_every_check_has_an_exercise():
    used = set()
    for stem in MINIMUM:
        nb = load(stem)
        for c in nb["cells"]:
            if "exercise-check" in c.get("metadata", {}).get("tags", []):
                used |= set(re.findall(r"grading\.(check_\w+)\(", src(c)))
    assert set(grading.checks()) == used
