"""Text the built site shows a reader, read from _build/html (no browser needed).

Two defects that only the rendered page shows (issue 32, items 9 and 14):

- a literal ``$`` next to math. A display equation ``$$ ... $$`` that starts in the middle of a
  paragraph is not parsed as display math: MyST renders it as inline math wrapped in the dollar
  signs that were meant to open and close it (``$\\(R = L\\,(W-1)\\)$``).
- Python's e-notation in prose (``3.15e+23``, ``2.2e-21``, ``1e15``): a glued float formatted with
  ``{:.3g}`` or ``str()`` instead of the book's number format, or typed that way by hand. Prose is
  every paragraph, list, caption and table the authors wrote, and the Markdown a cell outputs as
  text (the claims ledger's notes); code, printed output and the tables that cells compute (a
  registry's columns) are data, and are not checked here.
"""

import html.parser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).as_posix().startswith(("_static", "_sources"))
               and p.name != "_print_book.html")  # tools/make_pdf.py's page while it prints

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})


class _ArticleText(html.parser.HTMLParser):
    """The text of the page's <article>, as (text, inside a table a cell computed) chunks,
    outside code, scripts and styles. Math stays in, as MathJax's source ``\\( ... \\)``."""

    SKIP = frozenset({"script", "style", "pre", "code", "kbd", "samp", "textarea", "button"})

    def __init__(self):
        super().__init__()
        # (tag, skipped, inside a cell's output, inside a table in a cell's output)
        self.stack: list[tuple[str, bool, bool, bool]] = []
        self.in_article = 0
        self.chunks: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        up = self.stack[-1] if self.stack else ("", False, False, False)
        output = "cell_output" in classes or up[2]
        self.stack.append((tag, tag in self.SKIP or up[1], output,
                           up[3] or (output and tag == "table")))
        if tag == "article":
            self.in_article += 1

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            top = self.stack.pop()[0]
            if top == "article":
                self.in_article -= 1
            if top == tag:
                break

    def handle_data(self, data):
        if self.in_article and not (self.stack and self.stack[-1][1]):
            self.chunks.append((data, bool(self.stack) and self.stack[-1][3]))


def _chunks(path: Path) -> list[tuple[str, bool]]:
    p = _ArticleText()
    p.feed(path.read_text(encoding="utf-8"))
    return p.chunks


def _prose(path: Path, *, computed_tables: bool) -> str:
    return "".join(t for t, in_table in _chunks(path) if computed_tables or not in_table)


def _context(text: str, m: re.Match, width: int = 70) -> str:
    return " ".join(text[max(0, m.start() - width):m.end() + width].split())


# --- a literal dollar sign next to math -------------------------------------------------------

# MathJax's delimiters in the served HTML are \( \) and \[ \]: a "$" touching one is a dollar
# sign that was meant as a math delimiter ("$$" alone is tests/site/test_site.py's RAW_MARKUP).
DOLLAR_AT_MATH = re.compile(r"\$\s*\\[(\[]|\\[)\]]\s*\$")


def test_dollar_detector_finds_what_it_must():
    for text in (r"so for each pair $\((R(m\theta_i)\,q)^\top\)", r"is $\(R = L\,(W-1),\)\(",
                 r"\approx 2c + \ln(V-1).\)$", "by $ \\[x\\]", r"\(x\) $"):
        assert DOLLAR_AT_MATH.search(text), text
    for text in ("costs $3 per GPU-hour", r"about \(x\) USD", r"\(a\$b\)", r"the \(\$\) sign"):
        assert not DOLLAR_AT_MATH.search(text), text


@pytest.mark.parametrize("path", PAGES)
def test_no_literal_dollar_sign_next_to_math(path):
    text = _prose(HTML / path, computed_tables=True)
    hits = [_context(text, m) for m in DOLLAR_AT_MATH.finditer(text)]
    assert not hits, f"{len(hits)} stray '$' at math:\n" + "\n".join(hits)


# --- Python e-notation in prose --------------------------------------------------------------

# 3.15e+23, 4.1e+11, 2.2e-21, 6.5e-05, 1e15, 3.8e25: a number, "e", an exponent. The book writes
# "3.15 × 10²³" (or 10^{23} in math), or a unit ("315 ZFLOP"), or thousands separators.
E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][+\-\u2212]?\d+(?![\w.])")


def test_e_notation_detector_finds_what_it_must():
    for text in ("gives 3.15e+23).", "With N ≈ 4.1e+11 weights", "is 2.2e-21 nats",
                 "about 6.5e-05 bits", "serving 1e15 tokens", "used 3.8e25 FLOP", "RMS 1E-4"):
        assert E_NOTATION.search(text), text
    for text in ("3.15 × 10²³ FLOP", r"\(10^{23}\)", "16,384 tokens", "Llama 3e", "e5m2",
                 "E4M3", "0x1e3", "_35a9eea2bc47d51c.txt", "v1.2e3x", "2e", "GPT-3e+"):
        assert not E_NOTATION.search(text), text


@pytest.mark.parametrize("path", PAGES)
def test_no_python_e_notation_in_prose(path):
    text = _prose(HTML / path, computed_tables=False)
    hits = [_context(text, m, 50) for m in E_NOTATION.finditer(text)]
    assert not hits, f"{len(hits)} numbers in e-notation:\n" + "\n".join(hits)
