"""The glossary: sorted, unique, every {term} link resolves, and each chapter links first uses.

Matching rules for "first use", applied to the markdown cells of every chapter notebook:

* Prose is what is left of a cell after removing headings (``#`` lines), label lines
  (``(label)=``), fenced code and directive blocks other than prose directives (a
  ``literalinclude`` is code), directive option lines (``:label: ...``), display math
  (``$$ ... $$``), inline math (``$...$``), inline code, every role other than ``{term}``
  (``{cite}``, ``{glue:text}``, ``{numref}``, ...), Markdown links ``[...](...)`` and bare URLs.
  The bodies of ``admonition`` (learning goals, takeaways), ``exercise`` and solution blocks
  *are* prose and are checked like any paragraph.
* A term is found through its *forms*: the term itself plus the aliases in ``ALIASES``
  (abbreviations, spelled-out names, adjectives such as "data-parallel"). Each form matches
  with an optional plural ``s``/``es``, whole words only: the characters either side may not
  be letters, digits, ``_`` or ``-`` (so "decode" does not match "decoder" or "decode-time").
  Words of a form match across any whitespace, line breaks included.
* Case: a form with an upper-case letter after its first character (an acronym or a
  mixed-case name: ``ZeRO``, ``MoE``, ``FLOP``, ``KV cache``) matches case-sensitively, so
  "ZeRO" is not "zero"; every other form matches case-insensitively.
* Overlaps: when matches overlap, the longest wins and the others are dropped, so "token"
  inside "time to first token" is not a use of "token". ``HOMONYMS`` lists phrases that take
  part in this contest and then count for no term ("Epoch AI" is not an epoch, and an
  arithmetic coder that "decodes back" is not the decode phase of inference).
* A ``{term}`` role is a (linked) use of its target only; other terms inside its text are
  not uses. The first use of a term in a chapter is the earliest linked or unlinked use in
  cell order and text order; the test fails when it is unlinked.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
GLOSSARY = CHAPTERS / "glossary.md"
NOTEBOOKS = ["hardware_tour", "01_foundations", "02_data", "03_architecture", "04_memory_wall",
             "05_scaling_laws", "06_economics"]

# Forms besides the term itself. Keys are glossary terms.
ALIASES: dict[str, tuple[str, ...]] = {
    "activation recomputation": ("activation checkpointing",),
    "active parameters": ("active parameter", "active weights"),
    "all-reduce": ("allreduce",),
    "arithmetic coding": ("arithmetic coder",),
    "balanced context length": ("balanced context",),
    "bidirectional bandwidth": ("bidirectional",),
    "byte-level BPE": ("BPE", "byte-pair encoding"),
    "capex": ("capital expenditure",),
    "capital recovery factor": ("CRF",),
    "checkpoint": ("checkpointing",),
    "compute-optimal": ("Chinchilla-optimal",),
    "contamination": ("decontamination",),
    "critical batch size": ("critical batch",),
    "data parallelism": ("data-parallel",),
    "decode": ("decoding",),
    "effective data": ("effective tokens",),
    "emergent ability": ("emergent abilities", "emergence", "emergent"),
    "expert parallelism": ("expert-parallel",),
    "FLOP": ("floating-point operation",),
    "GQA": ("grouped-query attention",),
    "HBM": ("high-bandwidth memory",),
    "IsoFLOP profile": ("IsoFLOP",),
    "Jaccard similarity": ("Jaccard",),
    "KV cache": ("KV-cache", "key/value cache"),
    "KV offloading": ("KV offload",),
    "language identification": ("language identifier", "language ID"),
    "learning-rate transfer": ("learning rate transfer",),
    "LSH": ("locality-sensitive hashing",),
    "matmul": ("matrix multiplication", "GEMM"),
    "maximal update parametrisation": ("μP", "muP", "maximal update parametrization"),
    "MFU": ("model FLOP utilisation", "model FLOP utilization"),
    "MHA": ("multi-head attention",),
    "mixed-precision training": ("mixed precision", "mixed-precision"),
    "MLA": ("multi-head latent attention", "latent attention"),
    "MLP": ("feed-forward block", "feed-forward network"),
    "MoE": ("mixture of experts", "mixtures of experts", "mixture-of-experts"),
    "MQA": ("multi-query attention",),
    "MTBF": ("mean time between failures",),
    "MX format": ("MX", "microscaling"),
    "near-duplicate": ("near duplicate",),
    "optimizer state": ("optimiser state",),
    "overtraining": ("overtrained",),
    "pipeline bubble": ("bubble",),
    "pipeline parallelism": ("pipelining",),
    "power law": ("power-law",),
    "prompt caching": ("cached input",),
    "quantisation": ("quantization", "quantised", "quantized"),
    "RL": ("reinforcement learning",),
    "roofline model": ("roofline",),
    "RoPE": ("rotary position embedding", "rotary positions"),
    "scale-out network": ("scale-out",),
    "scale-up domain": ("scale-up fabric", "scale-up"),
    "sliding-window attention": ("sliding window", "sliding-window"),
    "standard parametrisation": ("standard parametrization",),
    "TDP": ("thermal design power",),
    "tensor parallelism": ("tensor-parallel",),
    "time per output token": ("TPOT",),
    "time to first token": ("TTFT",),
}

# Phrases that contain a form but are not a use of the term.
HOMONYMS: tuple[str, ...] = ("Epoch AI", "decodes back")

PROSE_DIRECTIVES = {"admonition", "exercise", "solution-start", "solution-end", "note", "tip",
                    "important", "warning", "hint", "seealso"}

TERM_ROLE = re.compile(r"\{term\}`([^`]*)`")
# Inline constructs that are not prose, tried in this order at each position.
INLINE_SKIP = re.compile(
    r"\{term\}`[^`]*`"                # a term role (handled separately)
    r"|\{[\w:.-]+\}`[^`]*`"           # any other role
    r"|``.*?``|`[^`]*`"               # inline code
    r"|\$\$.*?\$\$|\$[^$]+\$"         # inline math
    r"|\[[^\]]*\]\([^)]*\)"           # a Markdown link, text and target
    r"|https?://\S+"                  # a bare URL
)
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\{([\w:-]+)\})?")
OPTION = re.compile(r"^\s*:[\w-]+:")
LABEL = re.compile(r"^\s*\([^()\s]+\)=\s*$")
HEADING = re.compile(r"^\s*#{1,6}\s")


@dataclass(frozen=True)
class Use:
    """One use of a term in a chapter: where it is, its text, and whether it is linked."""

    term: str
    cell: int
    start: int
    end: int
    text: str
    linked: bool


def glossary_terms() -> list[str]:
    """Terms of the ``{glossary}`` directive, in file order."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.DOTALL)
    assert body, "no {glossary} block in glossary.md"
    return [line.strip() for line in body.group(1).splitlines()
            if line.strip() and not line[0].isspace()]


def _term_key(term: str) -> str:
    return " ".join(term.split()).casefold()


def _form_regex(form: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(w) for w in form.split())
    flags = 0 if any(c.isupper() for c in form[1:]) else re.IGNORECASE
    return re.compile(rf"(?<![\w-]){words}(?:e?s)?(?![\w-])", flags)


def _patterns(terms: list[str]) -> list[tuple[str | None, re.Pattern[str]]]:
    pats: list[tuple[str | None, re.Pattern[str]]] = []
    for term in terms:
        for form in (term, *ALIASES.get(term, ())):
            pats.append((term, _form_regex(form)))
    pats += [(None, _form_regex(h)) for h in HOMONYMS]
    return pats


def markdown_cells(notebook: str) -> list[tuple[int, str]]:
    """(index, source) of every markdown cell of ``chapters/<notebook>.ipynb``."""
    cells = json.loads((CHAPTERS / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def prose_spans(source: str) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Prose character ranges of a markdown cell, and its ``{term}`` roles (start, end, target).

    Adjacent ranges separated only by whitespace (a line break) are merged, so phrases can be
    matched across lines.
    """
    regions: list[tuple[int, int]] = []   # runs of consecutive prose lines
    spans: list[tuple[int, int]] = []
    roles: list[tuple[int, int, str]] = []
    fence: str | None = None          # closing fence of the block we are in
    prose_block = False
    in_math = False
    offset = 0
    for line in source.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                fence = None
                continue
            if not prose_block or OPTION.match(line):
                continue
        else:
            m = FENCE.match(stripped)
            if m:
                fence, prose_block = m.group(1), (m.group(3) or "") in PROSE_DIRECTIVES
                continue
        if in_math:
            in_math = not stripped.endswith("$$")
            continue
        if stripped.startswith("$$"):
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            continue
        if HEADING.match(line) or LABEL.match(line):
            continue
        if regions and regions[-1][1] == start:
            regions[-1] = (regions[-1][0], offset)
        else:
            regions.append((start, offset))
    # Inline constructs may span lines (inline math often does), so scan whole paragraphs.
    for r_start, r_end in regions:
        pos = r_start
        for m in INLINE_SKIP.finditer(source, r_start, r_end):
            if m.start() > pos:
                spans.append((pos, m.start()))
            role = TERM_ROLE.fullmatch(m.group(0))
            if role:
                inner = role.group(1)
                target = re.search(r"<([^<>]+)>\s*$", inner)
                roles.append((m.start(), m.end(), (target.group(1) if target else inner).strip()))
            pos = m.end()
        if pos < r_end:
            spans.append((pos, r_end))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and source[merged[-1][1]:s].strip() == "":
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged, roles


def uses(notebook: str, terms: list[str] | None = None) -> list[Use]:
    """Every use of every glossary term in a chapter, in reading order."""
    terms = glossary_terms() if terms is None else terms
    key_to_term = {_term_key(t): t for t in terms}
    pats = _patterns(terms)
    found: list[Use] = []
    for index, source in markdown_cells(notebook):
        spans, roles = prose_spans(source)
        for s, e, target in roles:
            term = key_to_term.get(_term_key(target))
            if term is not None:
                found.append(Use(term, index, s, e, source[s:e], True))
        for s, e in spans:
            cands = [(m.start(), m.end(), term) for term, pat in pats
                     for m in pat.finditer(source, s, e)]
            cands.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
            kept: list[tuple[int, int, str | None]] = []
            for c in cands:
                if all(c[1] <= k[0] or c[0] >= k[1] for k in kept):
                    kept.append(c)
            found += [Use(t, index, a, b, source[a:b], False) for a, b, t in kept if t]
    return sorted(found, key=lambda u: (u.cell, u.start))


def first_uses(notebook: str, terms: list[str] | None = None) -> dict[str, Use]:
    first: dict[str, Use] = {}
    for use in uses(notebook, terms):
        first.setdefault(use.term, use)
    return first


def test_terms_are_sorted_and_unique():
    terms = glossary_terms()
    assert len(terms) > 100
    dupes = [t for t, n in Counter(_term_key(t) for t in terms).items() if n > 1]
    assert not dupes, dupes
    assert terms == sorted(terms, key=str.casefold), [
        (a, b) for a, b in itertools.pairwise(terms) if a.casefold() > b.casefold()]


def test_every_entry_has_one_definition():
    """Each term is followed by an indented definition, and no definition is written twice."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.DOTALL).group(1)
    entries = re.split(r"\n(?=\S)", body)
    for entry in entries:
        term, _, definition = entry.partition("\n")
        assert definition.strip(), f"{term!r} has no definition"
        sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", " ".join(definition.split()))]
        openings = [" ".join(s.split()[:3]) for s in sentences]
        dupes = [s for s, n in Counter(openings).items() if n > 1]
        assert not dupes, (term, dupes)


def test_aliases_name_glossary_terms():
    keys = {_term_key(t) for t in glossary_terms()}
    assert set(map(_term_key, ALIASES)) <= keys, set(map(_term_key, ALIASES)) - keys


def test_every_term_link_resolves():
    keys = {_term_key(t) for t in glossary_terms()}
    texts = [(p.name, p.read_text(encoding="utf-8")) for p in CHAPTERS.glob("*.md")]
    texts += [(f"{nb}[{i}]", src) for nb in NOTEBOOKS for i, src in markdown_cells(nb)]
    missing = []
    for name, text in texts:
        for inner in TERM_ROLE.findall(text):
            target = re.search(r"<([^<>]+)>\s*$", inner)
            target_text = (target.group(1) if target else inner).strip()
            if _term_key(target_text) not in keys:
                missing.append((name, target_text))
    assert not missing, missing


def test_term_links_sit_in_prose():
    """No {term} role inside math, code, a heading or a label line, where it would not render."""
    misplaced = []
    for nb in NOTEBOOKS:
        for index, source in markdown_cells(nb):
            in_prose = {s for s, _, _ in prose_spans(source)[1]}
            misplaced += [f"{nb}[{index}]: {m.group(0)}" for m in TERM_ROLE.finditer(source)
                          if m.start() not in in_prose]
    assert not misplaced, misplaced


def test_every_term_is_used_in_the_book():
    """A glossary entry earns its place: a chapter uses it, or another page links to it."""
    used = {u.term for nb in NOTEBOOKS for u in uses(nb)}
    keys = {_term_key(t): t for t in glossary_terms()}
    for page in CHAPTERS.glob("*.md"):
        if page != GLOSSARY:
            for inner in TERM_ROLE.findall(page.read_text(encoding="utf-8")):
                target = re.search(r"<([^<>]+)>\s*$", inner)
                used.add(keys.get(_term_key(target.group(1) if target else inner), ""))
    assert set(glossary_terms()) - used == set()


def test_first_use_in_each_chapter_is_linked():
    unlinked = []
    for nb in NOTEBOOKS:
        for term, use in first_uses(nb).items():
            if not use.linked:
                unlinked.append(f"{nb} cell {use.cell}: {use.text!r} ({term})")
    assert not unlinked, "\n".join(unlinked)


def test_the_matcher_finds_uses_and_skips_non_prose():
    src = ("(sec-x)=\n## The ridge point\n\nA $ridge point$ and `ridge point` and\n"
           "{cite:p}`ridge point` then the ridge\npoint, linked {term}`here <ridge point>`; "
           "the ZeRO stages, zero bugs, time to first token.\n\n```{literalinclude} x\n"
           "ridge point\n```\n")
    spans, roles = prose_spans(src)
    prose = " ".join(src[s:e] for s, e in spans)
    assert "ridge\npoint," in prose and "$" not in prose and "cite" not in prose
    assert roles and roles[0][2] == "ridge point"
    terms = ["ridge point", "token", "time to first token", "ZeRO"]
    pats = _patterns(terms)
    hits = {(t, m.group(0)) for t, p in pats for s, e in spans for m in p.finditer(src, s, e)}
    assert ("ridge point", "ridge\npoint") in hits
    assert ("ZeRO", "ZeRO") in hits and ("ZeRO", "zero") not in hits
    assert not _form_regex("decode").search("a decoder and decode-time")
