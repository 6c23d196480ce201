"""Per-chapter numbers (issue 15): one rule, _ext/chapter_numbers.py, for the site, the reader
edition and the instructor guide. The rule is tested on its own here; that the built site shows
exactly the numbers the rule gives is tests/site/test_built_pages.py (it runs after the build)."""

from pathlib import Path

import chapter_numbers
import pytest
import reader_edition

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def index():
    return reader_edition.build_index()


def test_chapters_number_from_their_title_front_matter_is_zero_back_matter_lettered():
    prefixes = chapter_numbers.page_prefixes(
        [("index", "Preface"), ("tour", "A tour of the hardware"), ("c1", "1. Foundations"),
         ("c10", "10. Later"), ("ledger", "Claims ledger"), ("guide", "Instructor guide")])
    assert prefixes == {"index": "0", "tour": "0", "c1": "1", "c10": "10", "ledger": "A",
                        "guide": "B"}


def test_each_type_counts_separately_and_pages_sharing_a_prefix_share_its_counter():
    nums = chapter_numbers.number_items([
        ("notation", "Notation", {"figure": ["n1"]}),
        ("tour", "A tour", {"figure": ["t1"], "exercise": ["te1", "te2"]}),
        ("c4", "4. Memory wall", {"exercise": ["e1", "e2", "e3"], "figure": ["f1"]})])
    assert nums["tour"]["figure"]["t1"] == ("0", 2)  # after the notation page's figure
    assert nums["tour"]["exercise"] == {"te1": ("0", 1), "te2": ("0", 2)}
    assert chapter_numbers.label(nums["c4"]["exercise"]["e3"]) == "4.3"
    assert chapter_numbers.label(nums["c4"]["figure"]["f1"]) == "4.1"


def test_bad_pages_are_refused_with_the_page_named():
    with pytest.raises(ValueError, match="'c4' lists a exercise id twice"):
        chapter_numbers.number_items([("c4", "4. X", {"exercise": ["a", "a"]})])
    with pytest.raises(ValueError, match="title of 'c4'"):
        chapter_numbers.page_prefixes([("c4", None)])


def test_the_sources_number_every_chapters_exercises_from_one(index):
    by_doc: dict[str, list[str]] = {}
    for doc, figtype, number in index.items.values():
        if figtype == "exercise":
            by_doc.setdefault(doc, []).append(number)
    chapter4 = sorted(by_doc["chapters/04_memory_wall"], key=lambda n: int(n.split(".")[1]))
    assert chapter4 == [f"4.{k}" for k in range(1, len(chapter4) + 1)]
    assert index.items["mw-ex-zero"][2] == "4.4"  # the fourth exercise block of chapter 4
    assert all(n.startswith("0.") for n in by_doc["chapters/hardware_tour"])


def test_the_rules_doctests_pass():
    import doctest
    result = doctest.testmod(chapter_numbers)
    assert result.attempted >= 3 and result.failed == 0
