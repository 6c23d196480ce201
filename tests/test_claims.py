"""The claims ledger: every claim's verdict is re-derived from the library and asserted.

A library change that moves a recomputed number across a verdict boundary fails here, naming the
claim. Ledger values that the chapters also glue into their prose must equal the glued values, so
the two cannot drift apart.
"""

import json
import re
from functools import cache
from pathlib import Path

import pytest

from llmphys import claims
from llmphys.claims import Bound, Claim, Compare, Range, Verdict, assess, half_unit

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
CHAPTERS = ROOT / "chapters"
ALL = claims.claims()
IDS = [c.id for c in ALL]
MIN_CLAIMS = {"M": 40, "O": 40, "P": 40, "L": 25}   # the ledger covers each document in full


@cache
def _labels() -> set[str]:
    text = "".join(p.read_text(encoding="utf-8") for p in CHAPTERS.glob("*.ipynb"))
    text += "".join(p.read_text(encoding="utf-8") for p in CHAPTERS.glob("*.md"))
    return set(re.findall(r"\((sec-[a-z0-9-]+|[a-z0-9-]+)\)=", text))


def _glued_half_unit(text: str) -> float:
    """Half a unit in the last place of a glued numeral; 0.5 for an integral one ("312.0").

    Chapters glue ``round(x, k)`` (tests/test_notebook_outputs.py), so the glued text pins x
    to within this much.
    """
    mantissa, _, exponent = text.lower().partition("e")
    frac = mantissa.partition(".")[2]
    decimals = len(frac) if frac.strip("0") else 0
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


@cache
def _glued(stem: str) -> dict[str, tuple[float, float]]:
    """Glued name -> (value, half a unit in its last place)."""
    cells = json.loads((CHAPTERS / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    out = {}
    for cell in cells:
        for o in cell.get("outputs", []):
            sb = o.get("metadata", {}).get("scrapbook")
            if sb:
                text = o["data"].get(sb["mime_prefix"] + "text/plain", "")
                try:
                    out[sb["name"]] = (float(text), _glued_half_unit(text))
                except ValueError:
                    pass
    return out


@pytest.mark.parametrize("c", ALL, ids=IDS)
def test_verdict_is_what_the_library_computes(c: Claim):
    assert assess(c).verdict == c.verdict, (c.id, assess(c).shown)


@pytest.mark.parametrize("c", ALL, ids=IDS)
def test_claim_is_complete(c: Claim):
    assert re.fullmatch(r"[MOPL]\d\d", c.id)
    assert claims.SOURCES[c.id[0]].file == c.source
    assert c.claim and c.stated and c.where
    assert c.section in _labels(), f"{c.id}: no label ({c.section})= in chapters/"
    for other in c.see_also:
        assert other in IDS and other != c.id, (c.id, other)
    if c.verdict is Verdict.UNCHECKABLE:
        assert c.check is None and c.note, f"{c.id}: say why no number settles it"
    else:
        assert c.check is not None
    if c.verdict is Verdict.ASSUMPTION:
        assert c.assumptions, f"{c.id}: state the assumption"
    if c.verdict is Verdict.DISPUTED:
        assert c.note, f"{c.id}: a disputed claim carries the computation against it"
    claims.fill(c.note + c.assumptions)   # every [[expr|fmt]] placeholder evaluates


@pytest.mark.parametrize("c", [c for c in ALL if c.glue], ids=[c.id for c in ALL if c.glue])
def test_ledger_equals_the_chapter_prose(c: Claim):
    stem, names = c.glue
    value = assess(c).value
    values = value if isinstance(value, (tuple, list)) else (value,)
    glued = _glued(stem)
    assert len(values) == len(names)
    for v, name in zip(values, names):
        assert name in glued, f"{c.id}: {stem} glues no {name!r}"
        g, half = glued[name]   # equal at the precision the chapter glued it
        assert abs(float(v) - g * c.glue_scale) <= half * abs(c.glue_scale) * (1 + 1e-9), \
            (c.id, name, v, g)


def test_ids_are_unique_and_cover_every_document():
    assert len(IDS) == len(set(IDS))
    for letter, n in MIN_CLAIMS.items():
        assert len(claims.claims(letter)) >= n, letter
    assert len(ALL) >= 150


def test_cross_references_are_mutual():
    by_id = {c.id: c for c in ALL}
    for c in ALL:
        for other in c.see_also:
            assert c.id in by_id[other].see_also, f"{other} should refer back to {c.id}"


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the source documents are outside this clone")
def test_sources_are_the_seed_files():
    assert {s.file for s in claims.SOURCES.values()} == {p.name for p in SEEDS.glob("*.txt")}


def test_half_unit_reads_the_stated_precision():
    assert half_unit("296") == 0.5
    assert half_unit("0.3") == pytest.approx(0.05)
    assert half_unit("5,000") == 500
    assert half_unit("20") == 5
    with pytest.raises(ValueError, match="number"):
        half_unit("about 296")


def test_grading_bands():
    exact = Compare(expr="295.6", target="296")
    approx = Compare(expr="295.3", target="296")
    assert exact.grade(295.6) == "exact"
    assert approx.grade(295.3) == "approx" and approx.grade(100.0) == "miss"
    assert Range(expr="", lo=2000, hi=3000).grade((2500, 3100)) == "approx"
    assert Range(expr="", lo=2000, hi=3000, approx=0.0).grade(3100) == "miss"
    assert Bound(expr="", op=">", threshold=5000).grade(5461) == "exact"
    assert Bound(expr="", op=">", threshold=5000, approx=0.1).grade(1820) == "miss"
    with pytest.raises(ValueError, match="op"):
        Bound(expr="", op="=>", threshold=1)


def test_unknown_names_are_explained():
    with pytest.raises(KeyError, match="M01"):
        claims.claim("Z99")
    with pytest.raises(KeyError, match="known"):
        claims.claims("nonexistent.txt")
    with pytest.raises(NameError, match="llmphys"):
        claims.evaluate("nosuchmodule.f()")


def test_markdown_has_one_row_and_anchor_per_claim():
    a = claims.ledger()
    table = claims.ledger_markdown(a)
    assert table.count('<span id="claim-') == len(ALL)
    assert claims.details_markdown(a).count("\n: ") == len(ALL)
    assert f"**{len(ALL)}**" in claims.summary_markdown(a)


def test_cross_document_pairs_join_two_documents_once():
    seen = set()
    for a, b, relation in claims.CROSS:
        assert a in IDS and b in IDS and a[0] != b[0] and relation, (a, b)
        assert frozenset((a, b)) not in seen, (a, b)
        seen.add(frozenset((a, b)))
        assert b in claims.claim(a).see_also and a in claims.claim(b).see_also
