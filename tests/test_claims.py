"""The claims ledger: every claim's verdict is re-derived from the library and asserted.

A library change that moves a recomputed number across a verdict boundary fails here, naming the
claim. Where a chapter glues the number a claim grades, the two are held together: by one call
(the check's value and the glued cell call the same library function with the same arguments,
:data:`ONE_CALL`), or, where they do not, by a test that the ledger's value equals the glued one
(:data:`KEPT_EQUAL` says why each is still needed).
"""

import ast
import contextlib
import json
import re
import tomllib
from functools import cache
from pathlib import Path

import claims_one_call as one_call
import pytest

from llmphys import claims
from llmphys.claims import (
    Bound,
    Case,
    Check,
    Claim,
    Compare,
    Range,
    Verdict,
    assess,
    half_unit,
)

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "llmphys"
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
                with contextlib.suppress(ValueError):
                    out[sb["name"]] = (float(text), _glued_half_unit(text))
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
        assert c.grading is None and c.note, f"{c.id}: say why no number settles it"
    else:
        assert c.grading is not None
    if c.verdict is Verdict.ASSUMPTION:
        assert c.assumptions, f"{c.id}: state the assumption"
        assert c.case is Case.CHOICE, f"{c.id}: an assumption is one unstated choice (rule 8)"
    if c.verdict is Verdict.DISPUTED:
        assert c.note, f"{c.id}: a disputed claim carries the computation against it"


@pytest.mark.parametrize("c", ALL, ids=IDS)
def test_the_case_of_rule_8_fits_the_check(c: Claim):
    """Each claim names its case; a whole-range check evaluates the ends, not one point."""
    assert (c.case is Case.JUDGEMENT) == (c.grading is None), c.id
    if c.case is Case.CHOICE:
        assert c.assumptions, f"{c.id}: name the unstated choice under assumptions"
    if c.case is Case.RANGE:
        value = assess(c).value
        assert isinstance(value, (tuple, list)) and len(value) >= 2, (
            f"{c.id}: a whole-range check returns the statement at the ends of the range")
    if c.case is Case.CONSTRUCTION:
        assert c.note, f"{c.id}: say why no state of the data can move the check"


@pytest.mark.parametrize("c", ALL, ids=IDS)
def test_claim_has_a_check_function_or_is_not_checkable(c: Claim):
    if c.grading is not None:
        assert c.checker is not None, f"{c.id}: graded, but no def {c.id.lower()}() -> Check"
        assert c.checker.__name__ == c.id.lower()
        assert c.checker.__annotations__.get("return") in ("Check", Check)
    else:
        assert c.verdict is Verdict.UNCHECKABLE
        if c.checker is not None:   # it only supplies the numbers its notes quote
            assert c.checker().value is None, f"{c.id}: not checkable, yet returns a value"


@pytest.mark.parametrize("c", ALL, ids=IDS)
def test_notes_fill_without_missing_or_unused_numbers(c: Claim):
    a = assess(c)
    fields = claims.note_fields(c.note) | claims.note_fields(c.assumptions)
    assert fields <= set(a.numbers), f"{c.id}: no number for {sorted(fields - set(a.numbers))}"
    assert set(a.numbers) <= fields, (
        f"{c.id}: numbers no note quotes: {sorted(set(a.numbers) - fields)}")
    for text in (c.note, c.assumptions):
        filled = a.filled(text)
        assert "{" not in filled and "}" not in filled, (c.id, filled)


def _calls(tree: ast.AST) -> list[str]:
    return [n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


def test_the_library_has_no_eval_exec_or_compile():
    """Checks are code a linter and a type checker can see: no string is ever run as Python."""
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in _calls(tree):
            if name in ("eval", "exec", "compile", "__import__"):
                offenders.append(f"{path.relative_to(LIB)}: {name}()")
    assert not offenders, offenders


def test_the_no_eval_test_can_fail():
    assert _calls(ast.parse("x = eval('1 + 1')")) == ["eval"]


def test_notes_hold_no_expressions():
    """A note's fields are names the check returns, never expressions to evaluate."""
    for c in ALL:
        for text in (c.note, c.assumptions, c.claim, c.stated):
            assert "[[" not in text, c.id
            for m in re.finditer(r"\{([^{}]*)\}", text):
                assert re.fullmatch(r"[A-Za-z_]\w*(:[^{}]*)?", m.group(1)), (c.id, m.group(0))


# -- one call, or equal values ---------------------------------------------------------------------
#
# Issue 26: "the chapter-equals-ledger tests mostly disappear, because there is one call". A claim
# listed here declares the library function whose call produces its graded value; the test below
# checks that the check's ``value=`` calls it, and that every chapter cell gluing one of the
# claim's names makes the same call with the same arguments (names bound by a plain assignment in
# the same function, cell or an earlier cell are replaced by their expressions, keyword order
# ignored), and that the value makes no other call outside those calls' arguments. Then the two
# numbers are one computation and no equality test is needed. A tuple names several functions
# whose calls together make the value.
ONE_CALL: dict[str, str | tuple[str, ...]] = {
    "L01": "studies.serving.batch1_penalty_range",
    "L17": "studies.economics.cached_input_fraction",
    "L18": "studies.serving.output_over_input",
    "L22": "inference_optimal.overtraining_at_cost_ratio",
    "L23": ("accounting.n_active_params", "accounting.embedding_params", "accounting.n_params"),
    "M02": "roofline.fraction_of_peak",
    "M03": "roofline.matmul_intensity",
    "M36": "studies.economics.capital_over_energy",
    "M37": "studies.economics.value_left",
    "M38": "economics.earning_power_fraction",
    "M42": "inference_optimal.overtraining_at_cost_ratio",
    "O02": "objective.perplexity_from_bits_per_byte",
    "O10": "studies.scaling_laws.repetition_cost",
    "O11": "data_constrained.effective_tokens",
    "O16": "accounting.modern_feature_counts",
    "O17": "accounting.matmul_flop_share",
    "O18": ("accounting.n_active_params", "accounting.embedding_params", "accounting.n_params"),
    "O27": "studies.economics.training_bill_usd",
    "O31": "studies.economics.capital_over_energy",
    "O35": "inference_optimal.training_share_at_optimum",
    "O36": "studies.scaling_laws.lifetime_saving",
    "P28": "inference_optimal.cost_ratio_for_overtraining",
    "O03": "specs.model",
    "O07": "pipeline.studies.fertility_premium",
    "O13": "pipeline.studies.collapse_words_lost",
    "O19": "moe.all_to_all_over_compute",
    "O25": "reliability.job_mtbf_s",
    "O33": "scaling_laws.compute_optimal",
}

# Why each other glued claim still needs its equality test: what keeps the chapter's number and
# the check's from being one call. A later change that shares the call moves the claim above.
_GROWTH = (
    "chapter 4 loops trends.registry_growth(accs, m) over its sorted chips; the check calls "
    "trends.registry_growth_all(m), the same over the same list (chapter 4 could call it)"
)
_VARIANTS = (
    "chapter 3 builds the attention variants in a dict comprehension over kv_cache.VARIANTS, "
    "which the source cannot resolve to the check's with_attention(llama70, ...)"
)
_GRID = (
    "chapter 4 evaluates dp_comm_share on its figure's 2**3..2**14 GPU grid and glues points of "
    "it; the check evaluates the essay's n_ranks"
)
_LOOP = "chapter 6 computes it in a loop over models and chips, so its call has no fixed arguments"
_CRAWL = (
    "chapter 2 sweeps decontam_sweep over ten n-gram lengths in one call; the check asks for "
    "n = 13 alone, so the two calls differ in their arguments"
)
KEPT_EQUAL = {
    **dict.fromkeys(["M05", "M06", "M08", "M39", "P36", "L08"], _GROWTH),
    **dict.fromkeys(["M12", "M14", "M15", "M16", "M17", "P03"], _VARIANTS),
    **dict.fromkeys(["M29", "M30", "M32"], _GRID),
    **dict.fromkeys(["P05", "P09", "P30", "P33", "L05", "L07", "L19"], _LOOP),
    **dict.fromkeys(["O15"], _CRAWL),
    **dict.fromkeys(["P12", "L03"], "the value is .max() of seat_limit's latency array, a method "
                    "call on the shared call's result that the one-call finder does not resolve"),
    "M10": "chapter 4 takes the 405B layer's shape (16384 x d_ff x d_model), the check the "
    "essay's 16K cube; both sit at the peak",
    "M11": "the check's value is PaLM's MFU through part3._palm_mfu (predict.measured_mfu); "
    "chapter 4 glues it from studies.memory_wall.published_mfu_range",
    "M31": "no library call on either side: chapter 4 divides the fields in a comprehension, the "
    "check in a list",
    "M41": "chapter 6 glues over['llama3_8b'] from a dict it builds in a loop",
    "P20": "chapter 6 glues studies.scale_up.scale_out_gap; the check computes twice "
    "pipeline_product_needed (other engineers' study functions; not changed here)",
    "P40": "chapter 6 glues the break-even idle time from its tier table; the check calls "
    "studies.economics.kv_keep_s",
    "L02": "the check's value divides weight_bytes_read by the NVL72's HBM bandwidth outside the "
    "shared call",
    "L24": "chapter 6 glues a2a[...] from a dict keyed by description, built in another cell",
}
GLUED = [c for c in ALL if c.glue]


def _one_call(c: Claim) -> tuple[str, ...]:
    f = ONE_CALL[c.id]
    return (f,) if isinstance(f, str) else f


def _value_calls(c: Claim) -> tuple[set[str], list[str]]:
    return one_call.value_calls(c.checker, _one_call(c))


@pytest.mark.parametrize("c", [c for c in GLUED if c.id in ONE_CALL],
                         ids=[c.id for c in GLUED if c.id in ONE_CALL])
def test_the_glued_cell_makes_the_checks_call(c: Claim):
    stem, names = c.glue
    claim_calls, others = _value_calls(c)
    assert claim_calls, f"{c.id}: its value= does not call {ONE_CALL[c.id]}"
    assert not others, f"{c.id}: its value= also calls {others}, so it is not one call"
    cells = one_call.code_cells(stem)
    aliases = one_call.chapter_aliases(cells)
    made: set[str] = set()
    for name in names:
        gluing = [i for i, src in enumerate(cells) if one_call.glues(src, name)]
        assert gluing, f"{c.id}: {stem} glues no {name!r}"
        chapter_calls = set().union(*(
            one_call.calls_of(cells[i], f, aliases, one_call.bound_before(cells, i))
            for i in gluing for f in _one_call(c)))
        assert claim_calls & chapter_calls, (
            f"{c.id}: {stem}'s cell gluing {name!r} does not make the check's call "
            f"{sorted(claim_calls)}; it makes {sorted(chapter_calls)}")
        made |= chapter_calls
    assert claim_calls <= made, f"{c.id}: no glued cell makes {sorted(claim_calls - made)}"


def test_the_one_call_finder_tells_arguments_apart():
    al = {"io": "inference_optimal", "sl": "scaling_laws"}
    same = "law = sl.parametric_law('b')\nx = io.overtraining_at_cost_ratio(law, cost_ratio=1.0)"
    other = "io.overtraining_at_cost_ratio(sl.parametric_law('b'), cost_ratio=2.0)"
    f = "inference_optimal.overtraining_at_cost_ratio"
    assert one_call.calls_of(same, f, al) == {
        "inference_optimal.overtraining_at_cost_ratio("
        "scaling_laws.parametric_law('b'), cost_ratio=1.0)"}
    assert not one_call.calls_of(same, f, al) & one_call.calls_of(other, f, al)
    # a chapter's shapes of the same call: tuple bindings, generator bindings, .key, recorded
    cell = ("a, b = specs.model('x'), specs.model('y')\n"
            "h, g = (specs.accelerator(k) for k in ('h100', 'h200'))\n"
            "s.output_over_input(a.key, h.key); s.share(b, n=specs.recorded(b, 'n_tokens'))")
    al = {"s": "studies.serving"}
    assert one_call.calls_of(cell, "studies.serving.output_over_input", al) == {
        "studies.serving.output_over_input('x', 'h100')"}
    assert one_call.calls_of(cell, "studies.serving.share", al) == {
        "studies.serving.share(specs.model('y'), n=specs.model('y').n_tokens)"}
    # a value that also calls something else is not one call
    value = ast.parse("100 * f(x) / g(y)").body[0].value
    assert [ast.unparse(c.func) for c in one_call.top_calls(value)] == ["f", "g"]
    value = ast.parse("tuple(f(x)[k] for k in 'ab')")
    assert [ast.unparse(c.func) for c in one_call.top_calls(value)] == ["f"]


def test_every_glued_claim_is_one_call_or_says_why_it_is_compared():
    glued = {c.id for c in GLUED}
    assert not set(ONE_CALL) & set(KEPT_EQUAL)
    assert glued == set(ONE_CALL) | set(KEPT_EQUAL), (
        sorted(glued - set(ONE_CALL) - set(KEPT_EQUAL)),
        sorted((set(ONE_CALL) | set(KEPT_EQUAL)) - glued))


@pytest.mark.parametrize("c", [c for c in GLUED if c.id not in ONE_CALL],
                         ids=[c.id for c in GLUED if c.id not in ONE_CALL])
def test_ledger_equals_the_chapter_prose(c: Claim):
    stem, names = c.glue
    value = assess(c).value
    values = value if isinstance(value, (tuple, list)) else (value,)
    glued = _glued(stem)
    assert len(values) == len(names)
    for v, name in zip(values, names, strict=True):
        assert name in glued, f"{c.id}: {stem} glues no {name!r}"
        g, half = glued[name]   # equal at the precision the chapter glued it
        assert abs(float(v) - g * c.glue_scale) <= half * abs(c.glue_scale) * (1 + 1e-9), \
            (c.id, name, v, g)


def test_ids_are_unique_and_cover_every_document():
    assert len(IDS) == len(set(IDS))
    for letter, n in MIN_CLAIMS.items():
        assert len(claims.claims(letter)) >= n, letter
    assert len(ALL) >= 150


def _typed_links() -> dict[str, list[str]]:
    """Each claim's ``see_also`` as typed in data/claims/*.toml, read without the library's join."""
    out = {}
    for letter in claims.SOURCES:
        with open(claims.data_file(letter), "rb") as f:
            table = tomllib.load(f)
        out |= {k: list(v.get("see_also", [])) for k, v in table.items() if isinstance(v, dict)}
    return out


def test_typed_links_stay_inside_their_document_and_are_mutual():
    # claims() adds both directions of every CROSS pair, so only the links typed in the data
    # files can break mutuality; test those, before the join.
    typed = _typed_links()
    assert set(typed) == set(IDS)
    for a, others in typed.items():
        for b in others:
            assert b[0] == a[0], f"{a} -> {b}: a cross-document link belongs in claims.CROSS"
            assert a in typed[b], f"{b} should refer back to {a} in its data file"


def test_sources_are_the_seed_files(seeds):
    # The seeds sit outside the clone (tests/conftest.py finds them; `make test` fails without).
    assert {s.file for s in claims.SOURCES.values()} == {p.name for p in seeds.glob("*.txt")}


def test_half_unit_reads_the_stated_precision():
    assert half_unit("296") == 0.5
    assert half_unit("0.3") == pytest.approx(0.05)
    assert half_unit("5,000") == 500
    assert half_unit("20") == 5
    with pytest.raises(ValueError, match="number"):
        half_unit("about 296")


def test_grading_bands():
    near = Compare(target="296")
    assert near.grade(295.6) == "exact"
    assert near.grade(295.3) == "approx" and near.grade(100.0) == "miss"
    assert Range(lo=2000, hi=3000).grade((2500, 3100)) == "approx"
    assert Range(lo=2000, hi=3000, approx=0.0).grade(3100) == "miss"
    assert Bound(op=">", threshold=5000).grade(5461) == "exact"
    assert Bound(op=">", threshold=5000, approx=0.1).grade(1820) == "miss"
    with pytest.raises(ValueError, match="op"):
        Bound(op="=>", threshold=1)
    with pytest.raises(ValueError, match="threshold"):
        Bound(op="<").grade(1.0)


def test_unknown_names_are_explained():
    with pytest.raises(KeyError, match="M01"):
        claims.claim("Z99")
    with pytest.raises(KeyError, match="known"):
        claims.claims("nonexistent.txt")
    with pytest.raises(KeyError, match=r"M01.*'ridge'"):
        claims.fill("{ridge:.1f}", {"peak": 1.0}, claim_id="M01")


def test_by_construction_is_counted_apart_and_needs_its_case():
    c = claims.claim("P21")
    assert c.case is Case.CONSTRUCTION and assess(c).verdict is Verdict.CONSTRUCTION
    from dataclasses import replace
    assert assess(replace(c, case=Case.STATED)).verdict is Verdict.EXACT
    assert "| by construction |" in claims.summary_markdown(claims.ledger())


def test_the_data_files_are_checked_field_by_field(tmp_path, monkeypatch):
    import shutil

    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    text = (data / "claims" / "part3.toml").read_text(encoding="utf-8")
    (data / "claims" / "part3.toml").write_text(
        text.replace('[M01]\nwhere = ', '[M01]\nwher = ', 1), encoding="utf-8")
    monkeypatch.setenv("LLMPHYS_DATA", str(data))
    with pytest.raises(ValueError, match=r"part3.toml: M01.*wher"):
        claims.claims("M")


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


def test_each_claim_links_its_typed_and_cross_document_partners_once_on_the_page():
    # What the reader sees: the ledger's details list links each claim to exactly its typed
    # partners plus its CROSS partners, each once, so a pair dropped, duplicated or pointing
    # one way only shows up here.
    partners = {i: list(links) for i, links in _typed_links().items()}
    for a, b, _ in claims.CROSS:
        partners[a].append(b)
        partners[b].append(a)
    page = claims.details_markdown(claims.ledger())
    blocks = re.split(r'\n\n(?=<a href="#claim-)', page)
    shown = {}
    for block in blocks:
        head = re.match(r'<a href="#claim-(\w+)">(\w+)</a> \(', block)
        assert head, block[:80]
        text = block.split("\n\n  The call:")[0]
        see = re.search(r"See also (.*?)\.(?: |$)", text, re.M)
        shown[head[2]] = re.findall(r'<a href="#claim-\w+">(\w+)</a>', see[1]) if see else []
    assert set(shown) == set(IDS)
    assert sorted(shown["M01"]) == ["L26", "P09"]  # the parser reads what the page shows
    for i in IDS:
        assert sorted(shown[i]) == sorted(partners[i]), i
        assert len(set(shown[i])) == len(shown[i]), f"{i} links a claim twice: {shown[i]}"
