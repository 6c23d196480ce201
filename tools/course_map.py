"""Write the instructor guide's course map: every exercise by chapter number and tier, with the
week of the twelve-week plan and the session of the six-week plan it belongs to, and the
rubric of every Design exercise.

The map is generated between two marker lines of ``chapters/instructor_guide.md`` from

- the chapters' exercises (``tests/course_kit.py`` reads them: label, tier from the title);
- the plans' own tables in the guide: an exercise listed in a week's row belongs to that week;
  one that no row lists is a tutorial problem of the first week that reads its chapter;
- the rubrics in ``data/course/rubrics/<notebook>.toml``.

``tests/test_course_map.py`` fails when the map is not what this script writes now.

Usage: ``python tools/course_map.py`` (rewrite the map) or ``--check`` (exit 1 if stale).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from course_kit import MINIMUM, TIERS, exercises, load, src  # noqa: E402

GUIDE = ROOT / "chapters" / "instructor_guide.md"
RUBRICS = ROOT / "data" / "course" / "rubrics"
START = ("<!-- course-map: written by tools/course_map.py; edit the chapters, the plans or the "
         "rubrics, not this -->")
END = "<!-- /course-map -->"
NUMREF = re.compile(r"\{numref\}`([a-z0-9-]+)`")
REF = re.compile(r"\{ref\}`([a-z0-9-]+)`")
ORDER = ["hardware_tour", "01_foundations", "02_data", "03_architecture", "04_memory_wall",
         "05_scaling_laws", "06_economics"]


def _plan_rows(text: str, label: str) -> list[tuple[int, str, str]]:
    """(number, read column, exercises column) of the plan table after ``(label)=``."""
    after = text.split(f"({label})=", 1)[1]
    section = re.split(r"^\(sec-[a-z0-9-]+\)=$", after, maxsplit=1, flags=re.M)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|", line)
        if m:
            cols = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((int(m.group(1)), cols[1], cols[2]))
    return rows


def _root_label(stem: str) -> str:
    first = src(load(stem)["cells"][0])
    m = re.search(r"^\(([a-z0-9-]+)\)=$", first, re.M)
    if not m:
        raise SystemExit(f"{stem}: the first cell has no (label)= target")
    return m.group(1)


def _plain(title: str) -> str:
    """A title as table text: MyST roles dropped to their text, pipes escaped."""
    title = re.sub(r"\{[a-z:]+\}`([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", title)
    return title.replace("|", "\\|")


def course_map(text: str) -> str:
    """The generated block (without its marker lines) for the guide text ``text``."""
    twelve = _plan_rows(text, "sec-instructor-guide-twelve-weeks")
    six = _plan_rows(text, "sec-instructor-guide-six-weeks")
    week_of = {lab: w for w, _read, exs in twelve for lab in NUMREF.findall(exs)}
    session_of = {lab: s for s, _read, exs in six for lab in NUMREF.findall(exs)}
    lines = ["| exercise | tier | title | twelve-week plan | six-week plan |",
             "|:--|:--|:--|:--|:--|"]
    counts = {t: 0 for t in TIERS}
    rubric_blocks = []
    for stem in ORDER:
        root = _root_label(stem)
        first_week = next((w for w, read, _ in twelve if root in REF.findall(read)), None)
        if first_week is None:
            raise SystemExit(f"{stem}: no week of the twelve-week plan reads {{ref}}`{root}`")
        rubrics = {}
        path = RUBRICS / f"{stem}.toml"
        if path.exists():
            rubrics = tomllib.loads(path.read_text(encoding="utf-8"))
        for e in exercises(stem):
            counts[e.tier] = counts.get(e.tier, 0) + 1
            title = _plain(e.title.split(":", 1)[1].strip()) if ":" in e.title else ""
            week = (f"week {week_of[e.label]}" if e.label in week_of
                    else f"week {first_week}, tutorial")
            session = f"session {session_of[e.label]}" if e.label in session_of else "optional"
            lines.append(f"| {{numref}}`{e.label}` | {e.tier} | {title} | {week} | {session} |")
            if e.tier == "Design" and e.label in rubrics:
                r = rubrics[e.label]
                crit = "\n".join(f"| {c['points']} | {_plain(c['text'])} |" for c in r["criteria"])
                rubric_blocks.append(
                    f"**{{numref}}`{e.label}`** ({title}), {r['points']} points:\n\n"
                    f"| points | the answer ... |\n|--:|:--|\n{crit}")
    total = sum(counts.values())
    summary = ", ".join(f"{counts[t]} {t}" for t in TIERS)
    return "\n".join([
        f"The book has {total} exercises ({summary}). A week marked *tutorial* is the first "
        "week that reads the exercise's chapter; the exercise is not in that week's hand-in and "
        "suits a tutorial, a problem class or a midterm variant.",
        "", *lines, "",
        "(sec-instructor-guide-rubrics)=",
        "### Rubrics for the Design exercises",
        "",
        "A Design exercise has no single answer. Each rubric below awards its points for what a "
        "good answer shows, whichever design it defends; the worked solution under the exercise "
        "is one answer that earns full marks, not the answer.",
        "", "\n\n".join(rubric_blocks)])


def rewrite(text: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"{GUIDE.name}: the marker lines {START!r} and {END!r} are missing")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{course_map(text)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the map is stale")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    new = rewrite(text)
    if args.check:
        if new != text:
            print("stale course map: run `python tools/course_map.py`", file=sys.stderr)
            return 1
        return 0
    GUIDE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    assert set(ORDER) == set(MINIMUM)
    sys.exit(main())
