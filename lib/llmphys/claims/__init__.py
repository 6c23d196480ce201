"""The claims ledger: every checkable statement of the source series, recomputed and judged.

The series this book follows is four documents (kept in ``shared/seeds``); :data:`SOURCES` names
them. Each document's claims live in their own module (:mod:`~llmphys.claims.part3`,
:mod:`~llmphys.claims.overview`, :mod:`~llmphys.claims.podcast`,
:mod:`~llmphys.claims.lecture`); :func:`claims` returns all of them in ledger order and
:func:`assess` recomputes one.

>>> c = claim("M01")
>>> c.verdict.value
'reproduced under a stated assumption'
>>> assess(c).shown
'295.5 FLOP/B'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ._core import (Assessment, Bound, Claim, Compare, Range, Verdict, assess, evaluate, fill,
                    half_unit)

__all__ = ["Assessment", "Bound", "Claim", "Compare", "Range", "Verdict", "assess", "evaluate",
           "fill", "half_unit", "SOURCES", "Source", "claims", "claim", "ledger", "verdict_counts",
           "ledger_markdown", "details_markdown", "summary_markdown", "ratio_points"]


@dataclass(frozen=True)
class Source:
    letter: str
    file: str
    title: str
    module: str
    short: str


SOURCES: dict[str, Source] = {s.letter: s for s in (
    Source("M", "000_8c51ff0cbb022c04.txt",
           "Part 3 of the series: compute is abundant, bandwidth is scarce (essay)", "part3",
           "part 3 essay"),
    Source("O", "002_1a663014a24a4105.txt",
           "The series overview: is pretraining over? (essay)", "overview", "overview essay"),
    Source("P", "003_08ad06ea090836a4.txt",
           "Reiner Pope on the math of training and serving (podcast statement digest)",
           "podcast", "podcast digest"),
    Source("L", "004_35a9eea2bc47d51c.txt",
           "Reiner Pope's blackboard lecture (written summary)", "lecture", "lecture summary"),
)}


def claims(source: str | None = None) -> list[Claim]:
    """All claims in ledger order, or those of one source (its letter or file name)."""
    import importlib

    if source is not None:
        letters = [k for k, s in SOURCES.items() if source in (k, s.file)]
        if not letters:
            known = ", ".join(f"{k} ({s.file})" for k, s in SOURCES.items())
            raise KeyError(f"unknown source {source!r}; known: {known}")
    else:
        letters = list(SOURCES)
    out: list[Claim] = []
    for letter in letters:
        module = importlib.import_module(f"llmphys.claims.{SOURCES[letter].module}")
        out.extend(module.CLAIMS)
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
    return [(a.claim.id[0], a.claim.id, r, a.verdict.short)
            for a in assessments for r in a.ratios]


def _anchor(claim_id: str) -> str:
    return f"claim-{claim_id.lower()}"


def _link(claim_id: str) -> str:
    return f'<a href="#{_anchor(claim_id)}">{claim_id}</a>'


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def ledger_markdown(assessments: list[Assessment]) -> str:
    """A MyST table: id, claim, the source's figure, ours, verdict, the deriving section."""
    lines = ["| id | claim | the source says | we compute | verdict | derived in |",
             "|:--|:--|:--|:--|:--|:--|"]
    for a in assessments:
        c = a.claim
        ours = a.shown if a.shown else "n/a"
        lines.append(f'| <span id="{_anchor(c.id)}"></span>**{c.id}** | {_cell(c.claim)} | '
                     f"{_cell(c.stated)} | {_cell(ours)} | {a.verdict.short} | "
                     f"{{ref}}`{c.section}` |")
    return "\n".join(lines)


def details_markdown(assessments: list[Assessment]) -> str:
    """A MyST definition list: the call, assumptions, the contradicting computation, links."""
    blocks = []
    for a in assessments:
        c = a.claim
        parts = [f"*{c.where}.*"]
        if c.check is not None:
            parts.append(f"Call: `{c.check.expr}`.")
        if c.assumptions:
            parts.append(f"Assumes: {fill(c.assumptions)}")
        if c.note:
            parts.append(fill(c.note))
        if c.see_also:
            parts.append("See also " + ", ".join(_link(i) for i in c.see_also) + ".")
        if c.refs:
            parts.append("Sources: " + "; ".join(f"{{cite:t}}`{k}`" for k in c.refs) + ".")
        blocks.append(f"{_link(c.id)} ({a.verdict.value})\n: " + " ".join(parts))
    return "\n\n".join(blocks)


def summary_markdown(assessments: list[Assessment]) -> str:
    """Verdict counts per source document, as a MyST table."""
    header = "| document | " + " | ".join(v.short for v in Verdict) + " | all |"
    lines = [header, "|:--|" + "--:|" * (len(Verdict) + 1)]
    for letter, src in SOURCES.items():
        mine = [a for a in assessments if a.claim.id.startswith(letter)]
        n = verdict_counts(mine)
        lines.append(f"| {letter}: {src.short} | " + " | ".join(str(n[v]) for v in Verdict)
                     + f" | {len(mine)} |")
    n = verdict_counts(assessments)
    lines.append("| **all** | " + " | ".join(f"**{n[v]}**" for v in Verdict)
                 + f" | **{len(assessments)}** |")
    return "\n".join(lines)
