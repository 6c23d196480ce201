"""The claims ledger: every checkable statement of the source series, recomputed and judged.

The series this book follows is four documents (kept in ``shared/seeds``); :data:`SOURCES` names
them. Each document's claims are data, ``data/claims/<module>.toml``; each claim's check is one
typed function in the document's module (:mod:`~llmphys.claims.part3`,
:mod:`~llmphys.claims.overview`, :mod:`~llmphys.claims.podcast`,
:mod:`~llmphys.claims.lecture`) that calls the library's study functions, the same ones the
chapters call. :func:`claims` returns all of them in ledger order, with the cross-document links
of :data:`CROSS` added, and :func:`assess` recomputes one.

>>> c = claim("M01")
>>> c.verdict.value, c.case.name
('approximately', 'STATED')
>>> assess(c).shown
'295.3 FLOP/B'

Longer than 400 lines because it is the ledger's whole public interface (loading the claims,
assessing them, rendering the page); the grading grammar is :mod:`._core`.

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import functools
import importlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import specs
from ._core import (
    APPROX_BAND,
    Assessment,
    Bound,
    Case,
    Check,
    Claim,
    Compare,
    Range,
    Registry,
    Verdict,
    assess,
    call_source,
    fill,
    half_unit,
    note_fields,
)

__all__ = [
    "APPROX_BAND",
    "CROSS",
    "SOURCES",
    "Assessment",
    "Bound",
    "Case",
    "Check",
    "Claim",
    "Compare",
    "Range",
    "Registry",
    "Source",
    "Verdict",
    "assess",
    "call_source",
    "claim",
    "claims",
    "cross_references",
    "data_file",
    "details_markdown",
    "fill",
    "half_unit",
    "ledger",
    "ledger_markdown",
    "note_fields",
    "published",
    "ratio_points",
    "summary_markdown",
    "verdict_counts",
    "verdict_table_markdown",
]


@dataclass(frozen=True)
class Source:
    letter: str
    file: str
    title: str
    module: str
    short: str


SOURCES: dict[str, Source] = {
    s.letter: s
    for s in (
        Source(
            "M",
            "000_8c51ff0cbb022c04.txt",
            "Part 3 of the series: compute is abundant, bandwidth is scarce (essay)",
            "part3",
            "part 3 essay",
        ),
        Source(
            "O",
            "002_1a663014a24a4105.txt",
            "The series overview: is pretraining over? (essay)",
            "overview",
            "overview essay",
        ),
        Source(
            "P",
            "003_08ad06ea090836a4.txt",
            "Reiner Pope on the math of training and serving (podcast statement digest)",
            "podcast",
            "podcast digest",
        ),
        Source(
            "L",
            "004_35a9eea2bc47d51c.txt",
            "Reiner Pope's blackboard lecture (written summary)",
            "lecture",
            "lecture summary",
        ),
    )
}


# Claims of different documents that restate or contradict each other: (id, id, relation).
# Kept here, in one list, so that each document's module stays self-contained; claims()
# adds each pair to both entries' ``see_also``.
CROSS: tuple[tuple[str, str, str], ...] = (
    ("M01", "L26", "the same ridge point: FLOP/s per byte/s of HBM"),
    ("M01", "P09", "the '300' of the batch rule is the ridge point"),
    ("L04", "P09", "restate the balance batch: ridge point times sparsity"),
    ("L05", "P09", "the batch of 2,000-3,000 follows from 300 x sparsity only for sparsity 7-10"),
    ("M05", "L08", "compute outgrows memory bandwidth"),
    ("M08", "L08", "the ridge point rises each generation"),
    ("M06", "P36", "the growth rate of HBM bandwidth"),
    ("M31", "P17", "the scale-up to scale-out bandwidth step"),
    ("M31", "L12", "the scale-up to scale-out bandwidth step"),
    ("P17", "L12", "both say eight times; the registry gives 9x (Hopper) to 18x (Blackwell)"),
    ("M41", "P31", "how far past Chinchilla labs train"),
    ("M42", "P31", "overtraining at equal training and serving cost is ~7x, not 100x"),
    ("M42", "L22", "overtraining as a deliberate trade for cheaper serving"),
    ("M42", "O36", "overtraining a smaller model pays once serving is counted"),
    ("O35", "P29", "inference dominating lifetime compute against a one-third share"),
    ("P29", "L21", "the one-third split"),
    ("P12", "L03", "the worst-case wait of a 20 ms schedule"),
    ("P13", "L02", "the ~20 ms memory-read time, per chip and per rack"),
    ("P13", "L07", "the ~20 ms memory-read time, per chip and per rack"),
    ("P04", "L02", "the latency floor of reading the weights"),
    ("P02", "L01", "what batching saves per token"),
    ("P22", "L15", "pipelining divides the weights per chip"),
    ("P25", "L15", "pipelining leaves the KV cache per chip unchanged"),
    ("P24", "L25", "pipelining neutral for latency against pipelining raising latency"),
    ("P32", "L18", "prefill compute-bound, decode memory-bound"),
    ("P16", "L24", "expert traffic beyond the scale-up domain"),
    ("O19", "L24", "MoE needs a fast interconnect"),
    ("P18", "L10", "the growth of the scale-up domain"),
    ("P15", "L09", "sparsity raises the balance batch"),
    ("P05", "L19", "the context length where the cache overtakes the arithmetic"),
    ("M23", "O23", "FP8 halves the bytes per value"),
    ("M24", "O23", "a memory-bound kernel speeds up by the byte factor"),
    ("M26", "O24", "whether FP8's gain in training comes from bandwidth"),
    ("M03", "O24", "the training matmul sits far right of the ridge"),
    ("M11", "O26", "how much of the peak training runs use"),
    ("M18", "O20", "attention variants as cache-size reductions"),
    ("M17", "O20", "latent attention's cache"),
    ("M34", "O30", "packaging and HBM as the chokepoint"),
    ("M35", "O30", "three HBM makers"),
    ("M31", "O22", "link bandwidth dictates the parallel layout"),
    ("M36", "O31", "depreciation ahead of electricity"),
    ("M38", "O32", "how fast a GPU loses its value"),
    ("O33", "M41", "the Chinchilla ratio that overtraining is measured against"),
    ("O18", "L23", "MoE's active fraction (DeepSeek-V3)"),
    ("O21", "L25", "the pipeline bubble"),
    ("O42", "P35", "context windows of hundreds of thousands of tokens, and their cost"),
    ("O42", "L14", "context windows of hundreds of thousands of tokens, and their cost"),
)


def cross_references() -> list[tuple[str, str, str]]:
    """The cross-document pairs (id, id, relation), each once, as listed in :data:`CROSS`."""
    return list(CROSS)


_VERDICTS = {v.name.lower(): v for v in Verdict}
_CASES = {c.name.lower(): c for c in Case}
_REQUIRED = ("where", "claim", "stated", "verdict", "case", "section")
_OPTIONAL = ("assumptions", "note", "see_also", "refs", "glue", "check")
_GRADINGS: dict[str, type] = {"compare": Compare, "range": Range, "bound": Bound}


def data_file(letter: str) -> Path:
    """The TOML file holding one document's claims: ``data/claims/<module>.toml``."""
    return specs.data_dir() / "claims" / f"{SOURCES[letter].module}.toml"


def _grading(table: Any, where: str) -> Compare | Range | Bound:
    if not isinstance(table, dict) or table.get("kind") not in _GRADINGS:
        raise ValueError(
            f"{where}.check: a table whose kind is one of {sorted(_GRADINGS)}, got {table!r}"
        )
    args = {k: v for k, v in table.items() if k != "kind"}
    cls = _GRADINGS[table["kind"]]
    if "target" in args and isinstance(args["target"], list):
        args["target"] = tuple(args["target"])
    try:
        return cls(**args)
    except TypeError as exc:
        raise ValueError(f"{where}.check: {exc}") from None


def _claim(claim_id: str, entry: Any, *, source: str, checks: Registry, where: str) -> Claim:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table, got {type(entry).__name__}")
    unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
    if unknown:
        raise ValueError(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_REQUIRED + _OPTIONAL)}"
        )
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise ValueError(f"{where}: missing required field(s) {missing}")
    if entry["verdict"] not in _VERDICTS:
        raise ValueError(f"{where}.verdict: {entry['verdict']!r} is not one of {sorted(_VERDICTS)}")
    if entry["case"] not in _CASES:
        raise ValueError(f"{where}.case: {entry['case']!r} is not one of {sorted(_CASES)}")
    glue, scale = None, 1.0
    if "glue" in entry:
        g = entry["glue"]
        if not isinstance(g, dict) or set(g) - {"notebook", "names", "scale"} or not g.get("names"):
            raise ValueError(
                f"{where}.glue: a table with notebook, names and optional scale, got {g!r}"
            )
        glue, scale = (g["notebook"], tuple(g["names"])), float(g.get("scale", 1.0))
    return Claim(
        id=claim_id,
        source=source,
        where=entry["where"],
        claim=entry["claim"],
        stated=entry["stated"],
        verdict=_VERDICTS[entry["verdict"]],
        case=_CASES[entry["case"]],
        section=entry["section"],
        grading=_grading(entry["check"], where) if "check" in entry else None,
        assumptions=entry.get("assumptions", ""),
        note=entry.get("note", ""),
        see_also=tuple(entry.get("see_also", ())),
        glue=glue,
        glue_scale=scale,
        refs=tuple(entry.get("refs", ())),
        checker=checks.get(claim_id),
    )


@functools.cache
def _load(path: Path, letter: str) -> tuple[Claim, ...]:
    src = SOURCES[letter]
    table = specs.read_toml(path)
    if table.pop("source", None) != src.file:
        raise ValueError(f"{path}: source must be {src.file!r}")
    checks: Registry = importlib.import_module(f"llmphys.claims.{src.module}").CHECKS
    out = tuple(
        _claim(k, v, source=src.file, checks=checks, where=f"{path.name}: {k}")
        for k, v in table.items()
    )
    orphans = set(checks.ids()) - {c.id for c in out}
    if orphans:
        raise ValueError(
            f"{src.module}.py has check functions for claims {sorted(orphans)} "
            f"that {path.name} does not hold"
        )
    return out


_PUBLISHED_FIELDS = {"value", "unit", "source", "as_of", "quote"}


@functools.cache
def _published() -> dict[str, dict[str, Any]]:
    path = Path("claims") / "published.toml"
    table = specs.registry_table(str(path))
    for key, entry in table.items():
        fields = set(entry) if isinstance(entry, dict) else set()
        if fields != _PUBLISHED_FIELDS:
            raise ValueError(
                f"{path.name}[{key}]: needs exactly the fields {sorted(_PUBLISHED_FIELDS)}, "
                f"got {sorted(fields)}"
            )
        if isinstance(entry["value"], bool) or not isinstance(entry["value"], (int, float)):
            raise ValueError(f"{path.name}[{key}].value: expected a number, got {entry['value']!r}")
    return table


def published(key: str) -> float:
    """A primary source's figure that a check compares with (``data/claims/published.toml``).

    In the entry's own unit (its ``unit`` field); an unknown key lists the known ones.

    >>> published("llama1_code_share")
    0.045
    """
    table = _published()
    if key not in table:
        raise KeyError(f"unknown published figure {key!r}; known: {', '.join(sorted(table))}")
    return float(table[key]["value"])


def claims(source: str | None = None) -> list[Claim]:
    """All claims in ledger order, or those of one source (its letter or file name)."""
    if source is not None:
        letters = [k for k, s in SOURCES.items() if source in (k, s.file)]
        if not letters:
            known = ", ".join(f"{k} ({s.file})" for k, s in SOURCES.items())
            raise KeyError(f"unknown source {source!r}; known: {known}")
    else:
        letters = list(SOURCES)
    links: dict[str, list[str]] = {}
    for a, b, _ in CROSS:
        links.setdefault(a, []).append(b)
        links.setdefault(b, []).append(a)
    out: list[Claim] = []
    for letter in letters:
        out.extend(
            replace(c, see_also=c.see_also + tuple(links[c.id])) if c.id in links else c
            for c in _load(data_file(letter), letter)
        )
    return out


def claim(claim_id: str) -> Claim:
    """One claim by id (``"M01"``); an unknown id lists the known ones."""
    found = {c.id: c for c in claims()}
    if claim_id not in found:
        raise KeyError(f"unknown claim id {claim_id!r}; known: {', '.join(found)}")
    return found[claim_id]


def ledger(source: str | None = None) -> list[Assessment]:
    """Every claim (or one source's) recomputed: value, formatted value and derived verdict."""
    return [assess(c) for c in claims(source)]


def verdict_counts(assessments: list[Assessment]) -> dict[Verdict, int]:
    """How many assessments fall under each verdict, in the order of :class:`Verdict`."""
    n = Counter(a.verdict for a in assessments)
    return {v: n.get(v, 0) for v in Verdict}


def ratio_points(assessments: list[Assessment]) -> list[tuple[str, str, float, str]]:
    """(document letter, claim id, our value / stated figure, verdict) for every stated number.

    The input of :func:`llmphys.plots.plot_claim_ratios`; uncheckable claims have no point.
    """
    return [(a.claim.id[0], a.claim.id, r, a.verdict.short) for a in assessments for r in a.ratios]


def _anchor(claim_id: str) -> str:
    return f"claim-{claim_id.lower()}"


def _link(claim_id: str) -> str:
    return f'<a href="#{_anchor(claim_id)}">{claim_id}</a>'


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def ledger_markdown(assessments: list[Assessment]) -> str:
    """A MyST table: id, claim, the source's figure, ours, verdict, the deriving section."""
    lines = [
        "| id | claim | the source says | we compute | verdict | derived in |",
        "|:--|:--|:--|:--|:--|:--|",
    ]
    for a in assessments:
        c = a.claim
        ours = a.shown if a.shown else "n/a"
        lines.append(
            f'| <span id="{_anchor(c.id)}"></span>**{c.id}** | {_cell(c.claim)} | '
            f"{_cell(c.stated)} | {_cell(ours)} | {a.verdict.short} | "
            f"{{ref}}`{c.section}` |"
        )
    return "\n".join(lines)


def details_markdown(assessments: list[Assessment]) -> str:
    """A MyST definition list: assumptions, the contradicting computation, links, the call."""
    blocks = []
    for a in assessments:
        c = a.claim
        parts = [f"*{c.where}.*", f"{c.case.value}"]
        if c.assumptions:
            parts.append(f"Assumes: {a.filled(c.assumptions)}")
        if c.note:
            parts.append(a.filled(c.note))
        if c.see_also:
            parts.append("See also " + ", ".join(_link(i) for i in c.see_also) + ".")
        if c.refs:
            parts.append("Sources: " + "; ".join(f"{{cite:t}}`{k}`" for k in c.refs) + ".")
        block = f"{_link(c.id)} ({a.verdict.value})\n: " + " ".join(parts)
        if c.checker is not None:
            code = "\n".join("  " + ln if ln else "" for ln in call_source(c.checker).splitlines())
            block += f"\n\n  The call:\n\n  ```python\n{code}\n  ```"
        blocks.append(block)
    return "\n\n".join(blocks)


def verdict_table_markdown(assessments: list[Assessment]) -> str:
    """A compact MyST table for a chapter: id, claim, the source's figure, ours, verdict.

    The chapter lists the ledger entries that its sections derive; the full notes stay on the
    ledger page.
    """
    lines = ["| | claim | the source says | we compute | verdict |", "|:--|:--|:--|:--|:--|"]
    for a in assessments:
        c = a.claim
        lines.append(
            f"| **{c.id}** | {_cell(c.claim)} | {_cell(c.stated)} | "
            f"{_cell(a.shown or 'n/a')} | {a.verdict.value} |"
        )
    return "\n".join(lines)


def summary_markdown(assessments: list[Assessment]) -> str:
    """Verdict counts per source document, as a MyST table."""
    header = "| document | " + " | ".join(v.short for v in Verdict) + " | all |"
    lines = [header, "|:--|" + "--:|" * (len(Verdict) + 1)]
    for letter, src in SOURCES.items():
        mine = [a for a in assessments if a.claim.id.startswith(letter)]
        n = verdict_counts(mine)
        lines.append(
            f"| {letter}: {src.short} | "
            + " | ".join(str(n[v]) for v in Verdict)
            + f" | {len(mine)} |"
        )
    n = verdict_counts(assessments)
    lines.append(
        "| **all** | " + " | ".join(f"**{n[v]}**" for v in Verdict) + f" | **{len(assessments)}** |"
    )
    return "\n".join(lines)
