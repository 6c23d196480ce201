"""The bibliography: unique keys, and every citation in the book resolves."""

import json
import re
from collections import Counter
from pathlib import Path

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
BIB = CHAPTERS / "references.bib"
CITE = re.compile(r"\{(?:cite|cite:p|cite:t|cite:ps|cite:ts|footcite)\}`([^`]+)`")


def _bib_keys() -> list[str]:
    return re.findall(r"^@\w+\{([^,\s]+),", BIB.read_text(encoding="utf-8"), flags=re.MULTILINE)


def _cited_keys() -> set[str]:
    texts = [p.read_text(encoding="utf-8") for p in CHAPTERS.glob("*.md")]
    for nb in CHAPTERS.glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return {key.strip() for text in texts for group in CITE.findall(text)
            for key in group.split(",")}


def test_bibliography_keys_are_unique():
    dupes = [k for k, n in Counter(_bib_keys()).items() if n > 1]
    assert not dupes, dupes


def test_every_citation_has_an_entry():
    missing = _cited_keys() - set(_bib_keys())
    assert not missing, sorted(missing)


def test_the_citation_pattern_finds_citations():
    assert "williams2009roofline" in _cited_keys()


PAPER_TYPES = {"article", "inproceedings", "incollection"}
# Papers that have neither a DOI nor an arXiv id; they must carry a url to a stable copy.
NO_IDENTIFIER = {
    "gage1994bpe": "C Users Journal, 1994: no DOI was ever assigned",
    "lui2012langid": "ACL 2012 demonstrations: the ACL Anthology gives no DOI for them",
}


MONTHS = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
# Documents whose edition date we could not establish: still listed, to be dated.
UNDATED = {
    "eia2024electric": "Electric Power Monthly is reissued monthly; the edition read is unknown",
}


def _entries() -> dict[str, tuple[str, dict[str, str]]]:
    """Key -> (entry type, {field: value}) for every entry of the .bib file."""
    text = BIB.read_text(encoding="utf-8")
    out = {}
    entry = re.compile(r"^@(\w+)\{([^,\s]+),(.*?)^\}", flags=re.MULTILINE | re.DOTALL)
    for m in entry.finditer(text):
        pairs = re.findall(r"^\s*(\w+)\s*=\s*(?:\{(.*)\}|(\w+)),?\s*$",
                           m.group(3), flags=re.MULTILINE)
        fields = {k.lower(): (braced or bare).strip() for k, braced, bare in pairs}
        out[m.group(2)] = (m.group(1).lower(), fields)
    return out


def _claim_keys() -> set[str]:
    """Keys cited by the claims ledger: the ``refs`` of every claim in ``data/claims``."""
    from llmphys import claims

    return {k for c in claims.claims() for k in c.refs}


def test_the_entry_parser_reads_every_entry():
    assert set(_entries()) == set(_bib_keys())
    kind, fields = _entries()["williams2009roofline"]
    assert kind == "article" and fields["doi"] == "10.1145/1498765.1498785"


def test_claims_citations_have_entries():
    missing = _claim_keys() - set(_bib_keys())
    assert not missing, sorted(missing)


def test_no_orphan_entries():
    """Every entry is cited by a chapter, a page, or the claims ledger."""
    orphans = set(_bib_keys()) - _cited_keys() - _claim_keys()
    assert not orphans, sorted(orphans)


def _is_paper(kind: str, fields: dict[str, str]) -> bool:
    arxiv = "arxiv" in (fields.get("eprint", "") + fields.get("archiveprefix", "")).lower()
    return kind in PAPER_TYPES or (kind == "misc" and arxiv)


def test_papers_carry_a_doi_or_an_arxiv_id():
    bad = []
    for key, (kind, fields) in _entries().items():
        if not _is_paper(kind, fields):
            continue
        if key in NO_IDENTIFIER:
            if "url" not in fields:
                bad.append(f"{key}: no identifier exists, so it needs a url")
            continue
        doi, eprint = fields.get("doi", ""), fields.get("eprint", "")
        if not (re.fullmatch(r"10\.\d{4,9}/\S+", doi) or re.fullmatch(r"\d{4}\.\d{4,5}", eprint)):
            bad.append(key)
        if eprint and fields.get("archiveprefix", "").lower() != "arxiv":
            bad.append(f"{key}: eprint without archiveprefix = {{arXiv}}")
        if "arxiv:" in fields.get("note", "").lower() and not eprint:
            bad.append(f"{key}: arXiv id in a note instead of eprint")
    assert not bad, bad


def test_documents_carry_a_date_and_a_url():
    """Datasheets, vendor pages, filings, reports, software: a year, a month and a url.

    A living web page (a product page, online documentation) has no publication month; its
    ``urldate``, the day the book's figures were read from it, stands in for the month.
    """
    bad = []
    for key, (kind, fields) in _entries().items():
        if _is_paper(kind, fields) or kind == "book":
            continue
        missing = [f for f in ("year", "url") if not fields.get(f)]
        if not (fields.get("month") or fields.get("urldate")) and key not in UNDATED:
            missing.append("month")
        if missing:
            bad.append(f"{key}: {missing}")
            continue
        if not re.fullmatch(r"https?://\S+", fields["url"]):
            bad.append(f"{key}: url {fields['url']!r}")
        if fields.get("month", "jan").lower() not in MONTHS:
            bad.append(f"{key}: month {fields['month']!r}")
        if "urldate" in fields and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", fields["urldate"]):
            bad.append(f"{key}: urldate {fields['urldate']!r}")
    assert not bad, bad


def test_no_paper_has_two_keys():
    """One arXiv id or DOI, one entry: a second key for the same paper splits its citations."""
    seen: dict[str, str] = {}
    for key, (_, fields) in _entries().items():
        for ident in (fields.get("eprint"), fields.get("doi")):
            if ident:
                assert ident.lower() not in seen, f"{key} and {seen[ident.lower()]} are one paper"
                seen[ident.lower()] = key
