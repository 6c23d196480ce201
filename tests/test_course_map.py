"""The instructor guide's course map (tools/course_map.py) is what the chapters, the plans and
the rubrics give now, and it places every exercise of every chapter exactly once."""

import re

import course_map
from course_kit import MINIMUM, TIERS, exercises

TEXT = course_map.GUIDE.read_text(encoding="utf-8")
BLOCK = TEXT.split(course_map.START, 1)[1].split(course_map.END, 1)[0]
ROWS = re.findall(r"^\| \{numref\}`([a-z0-9-]+)` \| (\w*) \| .*? \| (week \d+[^|]*) \| "
                  r"(session \d|optional) \|$", BLOCK, re.M)


def test_map_is_up_to_date():
    assert course_map.rewrite(TEXT) == TEXT, "run `python tools/course_map.py`"


def test_every_exercise_once_with_its_tier_and_a_week():
    want = {e.label: e.tier for stem in MINIMUM for e in exercises(stem)}
    got = [(label, tier) for label, tier, _w, _s in ROWS]
    assert sorted(label for label, _ in got) == sorted(want)
    assert all(want[label] == tier and tier in TIERS for label, tier in got)
    weeks = {int(re.match(r"week (\d+)", w).group(1)) for _l, _t, w, _s in ROWS}
    assert weeks <= set(range(1, 12))


def test_plan_weeks_only_cite_exercises_that_exist():
    listed = set(re.findall(r"\{numref\}`([a-z0-9-]+)`", TEXT.split(course_map.START)[0]))
    labels = {e.label for stem in MINIMUM for e in exercises(stem)}
    assert {x for x in listed if "-ex-" in x} <= labels


def test_every_design_exercise_has_its_rubric_in_the_guide():
    designs = [e.label for stem in MINIMUM for e in exercises(stem) if e.tier == "Design"]
    for label in designs:
        assert f"**{{numref}}`{label}`**" in BLOCK, label
