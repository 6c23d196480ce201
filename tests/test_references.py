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


# The four documents of the series the book examines (llmphys.claims.SOURCES) reached the
# book as bare copies: none carries its own address and three carry no date. Their entries
# say what each document does say and nothing more (no invented url or year), so they are
# excused here, each with its reason; a test below keeps the excuses true.
SERIES = {  # bib key -> working-copy file named in llmphys.claims.SOURCES
    "series_part3": "000_8c51ff0cbb022c04.txt",
    "series_overview": "002_1a663014a24a4105.txt",
    "podlume2026pope": "003_08ad06ea090836a4.txt",
    "pope_lecture_summary": "004_35a9eea2bc47d51c.txt",
}
NO_URL = {
    "series_part3": "the essay's text names no address and the copy came without one",
    "series_overview": "the essay's text names no address and the copy came without one",
    "podlume2026pope": "the digest page names its episode, not its own address",
    "pope_lecture_summary":
        "the summary links the video it summarises (in howpublished), not itself",
}
NO_DATE = {
    "series_part3": "the essay gives no date",
    "series_overview": "the essay gives no date; it writes of 2026 in the present tense",
    "pope_lecture_summary": "neither the summary nor the video link gives a date",
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
        required = [f for f, excused in (("year", NO_DATE), ("url", NO_URL)) if key not in excused]
        missing = [f for f in required if not fields.get(f)]
        if (not (fields.get("month") or fields.get("urldate"))
                and key not in UNDATED and key not in NO_DATE):
            missing.append("month")
        if missing:
            bad.append(f"{key}: {missing}")
            continue
        if key not in NO_URL and not re.fullmatch(r"https?://\S+", fields["url"]):
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


def test_the_series_is_named_by_one_entry_per_source_document():
    from llmphys.claims import SOURCES
    assert sorted(SERIES.values()) == sorted(s.file for s in SOURCES.values())
    entries = _entries()
    for key, file in SERIES.items():
        kind, fields = entries[key]
        # The note names the working copy the ledger reads (bibtex escapes its underscore).
        assert kind == "misc" and file in fields.get("note", "").replace("\\_", "_"), key
        assert fields.get("title") and fields.get("howpublished"), f"{key}: title and medium"


def test_series_exceptions_are_only_for_fields_the_documents_lack():
    entries = _entries()
    assert set(NO_URL) | set(NO_DATE) <= set(SERIES)  # the excuse is for the series alone
    for key in NO_URL:
        assert "url" not in entries[key][1], f"{key} has a url: drop it from NO_URL"
    for key in NO_DATE:
        fields = entries[key][1]
        assert not ({"year", "month"} & set(fields)), f"{key} has a date: drop it from NO_DATE"
        assert ("no date" in fields["note"] or "gives no" in fields["note"]
                or "names neither" in fields["note"])


def test_the_dated_series_document_carries_the_date_it_gives():
    # The digest's header line reads "Apr 29, 2026 · 2h 14m" (shared/seeds/003_...).
    fields = _entries()["podlume2026pope"][1]
    assert (fields["year"], fields["month"]) == ("2026", "apr")
