"""The instructor guide's recipes, run: chapters/instructor_guide.md must stay true.

The worked accelerator entry is taken from the guide's ```toml block, appended to a copy of
data/ and loaded through $LLMPHYS_DATA exactly as the guide tells instructors to do; the numbers
the guide states about it are recomputed. The course plan must list twelve weeks (and six
sessions for the short variant), every week must link to a section of the book, and every label
the guide links to must exist.
"""

import datetime
import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest
import test_data  # the registry's schema tests, reused on the guide's entry

from llmphys import inference, precision, roofline, specs

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
GUIDE = CHAPTERS / "instructor_guide.md"
TEXT = GUIDE.read_text(encoding="utf-8")
REF = re.compile(r"\{ref\}`(?:[^`<]*<)?([^`<>]+?)>?`")
NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?([^`<>]+?)>?`")


def _toml_block() -> str:
    blocks = re.findall(r"^```toml\n(.*?)^```$", TEXT, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1, "the guide must hold exactly one ```toml example"
    return blocks[0]


def _chapter_sources() -> str:
    """The Markdown of every chapter notebook and page except this guide."""
    parts = []
    for nb in sorted(CHAPTERS.glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        parts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    parts += [p.read_text(encoding="utf-8") for p in sorted(CHAPTERS.glob("*.md")) if p != GUIDE]
    return "\n".join(parts)


def _section_labels() -> set[str]:
    """MyST targets `(label)=` in the chapters: sections and chapter roots."""
    return set(re.findall(r"^\(([a-z0-9-]+)\)=$", _chapter_sources(), flags=re.MULTILINE))


def _exercise_labels() -> set[str]:
    return set(re.findall(r":label: ([a-z0-9-]+)", _chapter_sources()))


def _table_rows(label: str) -> list[list[str]]:
    """The body rows of the first table after the heading labelled ``label``."""
    after = TEXT.split(f"({label})=", 1)[1]
    section = re.split(r"^\(sec-[a-z0-9-]+\)=$", after, maxsplit=1, flags=re.MULTILINE)[0]
    rows = [line for line in section.splitlines() if re.match(r"\|\s*\d+\s*\|", line)]
    return [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]


@pytest.fixture
def guide_registry(tmp_path, monkeypatch):
    """A copy of data/ with the guide's entry appended, selected through $LLMPHYS_DATA."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    with open(data / "accelerators.toml", "a", encoding="utf-8") as f:
        f.write("\n" + _toml_block())
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(data))
    specs._load.cache_clear()  # registries are cached per file name, not per folder
    yield tomllib.loads(_toml_block())
    specs._load.cache_clear()  # later tests must see the book's own registry again


def test_example_entry_loads_and_its_ridge_is_peak_over_bandwidth(guide_registry):
    (key,) = guide_registry
    raw = guide_registry[key]
    acc = specs.accelerator(key)
    assert specs.data_dir() != ROOT / "data"
    assert acc.name == raw["name"] and len(specs.accelerators()) > 1  # appended, nothing lost
    ridge = raw["peak_bf16_flop_per_s"] / raw["hbm_bytes_per_s"]
    assert roofline.ridge_point(acc) == pytest.approx(ridge, rel=1e-12)
    # The prose states the ridge, and the balance batches of dense Llama 3 70B it implies.
    assert f"{ridge:.0f} FLOP/byte" in TEXT
    llama = specs.model("llama3_70b")
    b_bf16 = inference.balance_batch(llama, acc, weight_dtype="bf16")
    b_fp8 = inference.balance_batch(llama, acc, weight_dtype="fp8")
    assert b_bf16 == pytest.approx(ridge)  # dense, BF16: B* is the ridge point
    assert re.search(rf"from {b_bf16:.0f} sequences in BF16 to\s+{b_fp8:.0f} in FP8", TEXT)
    h100_ridge = roofline.ridge_point(specs.accelerator("h100_sxm"))
    assert re.search(rf"H100 SXM's\s+{h100_ridge:.0f}\b", TEXT)
    assert re.search(rf"ridge point of {h100_ridge:.1f} FLOP/byte", TEXT)


def test_example_entry_passes_the_registry_schema_tests(guide_registry, monkeypatch):
    (key,) = guide_registry
    monkeypatch.setattr(test_data, "ACCS", specs.accelerators())
    test_data.test_accelerator_has_provenance(key)
    test_data.test_accelerator_values_are_physically_plausible(key)
    test_data.test_lower_precision_is_never_slower(key)
    assert datetime.date.today() == test_data.TODAY  # the window the guide states ...
    assert "may not lie after the day the tests run" in TEXT  # ... is the one the test applies


def test_the_example_chip_passes_the_precision_law_the_guide_describes(guide_registry):
    # FP8 with no faster multipliers: a compute-bound matmul gains nothing, a memory-bound one
    # gains the byte factor, and tests/test_precision.py's bound holds for the new chip too.
    (key,) = guide_registry
    acc = specs.accelerator(key)
    assert "fp8" in acc.matrix_dtypes
    assert precision.precision_speedup(acc, m=4096, n=8192, k=8192)["speedup"] == pytest.approx(1)
    assert precision.precision_speedup(acc, m=1, n=8192, k=8192)["speedup"] == pytest.approx(2)
    import test_precision
    test_precision.test_fp8_speedup_lies_between_the_peak_ratio_and_the_byte_ratio()


def test_book_registry_is_restored_after_the_example():
    (key,) = tomllib.loads(_toml_block())
    book = tomllib.loads((ROOT / "data" / "accelerators.toml").read_text(encoding="utf-8"))
    assert (key in specs.accelerators()) == (key in book)


def test_twelve_week_plan_links_every_week_to_a_section():
    rows = _table_rows("sec-instructor-guide-twelve-weeks")
    assert [int(r[0]) for r in rows] == list(range(1, 13))
    labels = _section_labels()
    for row in rows:
        assert set(NUMREF.findall(row[2])) <= _exercise_labels(), f"week {row[0]}"
        linked = set(REF.findall(row[1]))
        assert linked & labels, f"week {row[0]} links to no section of the book"
        assert len(row) == 5 and all(row[1:3]) and all(row[3:]), f"week {row[0]} is incomplete"


def test_six_week_variant_lists_six_sessions():
    rows = _table_rows("sec-instructor-guide-six-weeks")
    assert [int(r[0]) for r in rows] == list(range(1, 7))
    labels = _section_labels()
    assert all(set(REF.findall(r[1])) & labels for r in rows)


def test_every_link_target_exists():
    own = set(re.findall(r"^\(([a-z0-9-]+)\)=$", TEXT, flags=re.MULTILINE))
    known = _section_labels() | _exercise_labels() | own
    missing = sorted(set(REF.findall(TEXT)) - known)
    assert not missing, missing
    missing = sorted(set(NUMREF.findall(TEXT)) - _exercise_labels())
    assert not missing, missing


def test_exercises_are_named_by_their_numbers_not_their_labels():
    # Issue 15: the guide named exercises by label (mw-ex-zero) while the pages numbered them.
    # {numref} shows the page's number (Exercise 4.4), so guide, page and reader edition agree.
    assert not re.search(r"\{ref\}`[^`]*-ex-", TEXT), "name exercises with {numref}"
    assert len(set(NUMREF.findall(TEXT))) >= 40


def test_assigned_exercises_exist():
    named = set(NUMREF.findall(TEXT)) | set(re.findall(r"`([a-z]+-ex-[a-z0-9-]+)", TEXT))
    assert named and named <= _exercise_labels(), sorted(named - _exercise_labels())


def test_exercise_count_and_toggles_match_the_chapters():
    src = _chapter_sources()
    n = len(re.findall(r"```\{exercise\}", src))
    assert f"All {n} exercises" in TEXT
    # "each solution sits in a collapsed toggle": every solution is a dropdown.
    starts = re.findall(r"```\{solution-start\} \S+\n(:class: dropdown)?", src)
    assert len(starts) == n and all(starts)


def test_time_table_counts_each_chapters_sections_and_exercises():
    roots = {"hardware-tour": "hardware_tour", "foundations": "01_foundations",
             "data": "02_data", "architecture": "03_architecture",
             "memory-wall": "04_memory_wall", "scaling-laws": "05_scaling_laws",
             "economics": "06_economics"}
    rows = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^\| \{ref\}`([a-z-]+)` \| (\d+) \| (\d+) \|", TEXT, flags=re.MULTILINE)}
    assert set(rows) == set(roots)
    for label, stem in roots.items():
        cells = json.loads((CHAPTERS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        sections = [h for h in re.findall(r"^## .+$", md, flags=re.MULTILINE)
                    if h not in ("## Exercises", "## Sources")]
        assert rows[label] == (len(sections), md.count("```{exercise}")), label


def test_guide_is_in_the_back_matter_before_the_glossary():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    back = toc.split("caption: Back matter", 1)[1]
    files = re.findall(r"- file: (\S+)", back)
    assert files.index("chapters/instructor_guide") < files.index("chapters/glossary")
