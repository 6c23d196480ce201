"""Generate the reader edition: the chapters as plain notebooks for Google Colab and JupyterLab.

The source notebooks in ``chapters/`` are written for the site build (Jupyter Book, MyST-NB,
sphinx-exercise): their prose holds ``{glue:text}`` placeholders, ``{term}``/``{cite}``/``{numref}``
roles and ``exercise``/``solution`` directives that only Sphinx turns into text. Opened in Colab
or JupyterLab they read as markup. This tool writes ``reader/chapters/<name>.ipynb`` for every
chapter notebook in ``_toc.yml``, in which

- every glue reference is replaced by the value the source notebook stored (its ``scrapbook``
  outputs), formatted as the site formats it (myst-nb's ``format_plain_text``);
- ``{term}`` links to the published glossary entry; ``{cite:t}``/``{cite:p}`` become author-year
  text from ``chapters/references.bib`` linking to the published references page; ``{doc}``,
  ``{ref}``, ``{numref}`` and ``{eq}`` become links with the site's titles and numbers (a target in
  the same notebook is linked inside the notebook);
- admonitions and exercises become block quotes ("Exercise 4.3", numbered by the same function
  as the site, ``_ext/chapter_numbers.py``), ``(label)=`` targets become HTML anchors, a
  ``literalinclude`` becomes the included code, a figure's caption follows its cell;
- every solution is collapsed: its Markdown in ``<details>``, its code cells hidden (Colab:
  ``cellView: form`` under a ``#@title`` line; JupyterLab: ``jupyter.source_hidden``);
- outputs are dropped (a reader runs the notebook; stored figures would double the repository's
  weight on every re-execution) and the setup cell, the first code cell, installs what a stock
  Colab runtime lacks.

The site's address is ``html.baseurl`` in ``_config.yml`` or, without it, the GitHub Pages
address of ``repository.url``. Usage::

    python tools/reader_edition.py            # write reader/chapters/
    python tools/reader_edition.py --out DIR  # write elsewhere (the staleness test does)
    python tools/reader_edition.py --check    # exit 1 if reader/ is not what the sources give

Needs only the book's venv (PyYAML and Sphinx's id rule); the reader notebooks need none.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import chapter_numbers  # the one numbering rule, shared with the site

OUT_DIR = ROOT / "reader"
GLUE_PREFIX = "application/papermill.record/"
NUMREF_FORMAT = {"figure": "Fig. %s", "exercise": "Exercise %s", "table": "Table %s",
                 "code-block": "Listing %s", "displaymath": "(%s)"}
ADMONITIONS = {"admonition", "note", "tip", "hint", "important", "warning", "caution",
               "attention", "danger", "error", "seealso"}
ROLE = re.compile(r"\{([a-z][a-z0-9:_-]*)\}`([^`]*)`")
ROLE_OR_CODE = re.compile(r"(\{[a-z][a-z0-9:_-]*\}`[^`]*`)|(`+)(.+?)\2", re.S)
LEFTOVER = re.compile(r"\{(?:glue|term|cite|doc|ref|numref|eq)[a-z:]*\}`|^\s*(?:```+|:::+)\s*\{",
                      re.M)
LABEL_LINE = re.compile(r"^\(([A-Za-z0-9_.:-]+)\)=\s*$")
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,}|:{3,})(.*)$")
OPTION = re.compile(r"^:([A-Za-z0-9_-]+):\s*(.*)$")
RUN_LINE = re.compile(r"^\*Run this (?:chapter|page|appendix):\*.*$", re.M)
TITLE_LINE = "#@title "


class ReaderError(ValueError):
    """A source construct the reader edition cannot translate (names the file and the cell)."""


# --- configuration and the book's index -----------------------------------------------------

def site_url(config: dict[str, Any]) -> str:
    """The published site's address, ending in ``/``: ``html.baseurl``, else GitHub Pages.

    >>> site_url({"repository": {"url": "https://github.com/llmphys/downstream-of-the-fab"}})
    'https://llmphys.github.io/downstream-of-the-fab/'
    """
    base = (config.get("html") or {}).get("baseurl")
    if not base:
        url = (config.get("repository") or {}).get("url", "")
        m = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)/?", url)
        if not m:
            raise ReaderError("_config.yml: set html.baseurl (the published site's address); "
                              f"repository.url {url!r} is not a GitHub address to derive it from")
        base = f"https://{m.group(1).lower()}.github.io/{m.group(2)}/"
    return base if base.endswith("/") else base + "/"


def toc_docs(toc: dict[str, Any]) -> list[str]:
    """Every document of ``_toc.yml`` in reading order (root first), without extension."""
    docs = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                docs.append(re.sub(r"\.(md|ipynb)$", "", e["file"]))
            walk(e.get("sections"))
            walk(e.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return docs


def term_id(term: str) -> str:
    """The anchor Sphinx gives a glossary term (``sphinx.util.nodes.make_id`` with ``term``).

    >>> term_id("KV cache"), term_id("3D parallelism")
    ('term-KV-cache', 'term-3D-parallelism')
    """
    from sphinx.util.nodes import _make_id
    return _make_id("term-" + term)


@dataclass
class Source:
    doc: str                        # "chapters/04_memory_wall"
    path: Path
    markdown: list[str]             # Markdown of every cell (or the whole .md page)
    notebook: dict[str, Any] | None = None
    title: str = ""


@dataclass
class Index:
    base: str
    docs: list[str]
    sources: dict[str, Source]
    titles: dict[str, str] = field(default_factory=dict)
    labels: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # label: (doc, title)
    items: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # id: (doc, type, "4.3")
    terms: dict[str, str] = field(default_factory=dict)  # lower-cased term: its glossary id
    bib: dict[str, tuple[str, str]] = field(default_factory=dict)  # key: (authors, year)


def _load_source(doc: str) -> Source:
    ipynb, md = ROOT / f"{doc}.ipynb", ROOT / f"{doc}.md"
    if ipynb.exists():
        nb = json.loads(ipynb.read_text(encoding="utf-8"))
        cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
        return Source(doc, ipynb, cells, nb)
    if md.exists():
        return Source(doc, md, [md.read_text(encoding="utf-8")])
    raise ReaderError(f"_toc.yml lists {doc!r}, but neither {doc}.ipynb nor {doc}.md exists")


def _plain(text: str) -> str:
    """A heading's text with roles reduced to what they display (for link text)."""
    def one(m):
        content = m.group(2)
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content, re.S)
        return explicit.group(1) if explicit else content
    return ROLE.sub(one, text).strip()


def _figures(nb: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, caption) of each captioned MyST-NB figure, in cell order."""
    out = []
    for c in nb["cells"]:
        fig = (c.get("metadata", {}).get("mystnb") or {}).get("figure") or {}
        if fig.get("name") and fig.get("caption"):
            out.append((fig["name"], fig["caption"]))
    return out


def _exercises(markdown: str) -> list[str]:
    return re.findall(r"^ {0,3}(?:`{3,}|:{3,})\{exercise\}.*\n:label: (\S+)", markdown, re.M)


ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
           "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
           "c": "\u0327", "k": "\u0328"}
LETTERS = {"L": "\u0141", "l": "\u0142", "i": "\u0131", "o": "\u00f8", "O": "\u00d8",
           "ss": "\u00df", "ae": "\u00e6", "AE": "\u00c6", "aa": "\u00e5", "&": "&", "%": "%",
           "_": "_", "$": "$", "#": "#"}


def latex_text(value: str) -> str:
    """BibTeX field text as plain Unicode: accents composed, braces dropped.

    >>> latex_text(r"Kydl{\\'\\i}{\\v{c}}ek"), latex_text(r"{\\L}ukasz \\& {Gopher}")
    ('Kydlíček', 'Łukasz & Gopher')
    """
    def accent(m):
        return m.group(2).replace("\\i", "i") + ACCENTS[m.group(1)]
    value = re.sub(r"""\\(['`^"~=.]|[uvHck](?=[{\s]))\s*\{?\s*(\\i|\S)\}?""", accent, value)
    value = re.sub(r"\\([A-Za-z]+|[&%_$#])", lambda m: LETTERS.get(m.group(1), m.group(1)), value)
    return unicodedata.normalize("NFC", value.replace("{", "").replace("}", "")).strip()


def _bib_entries(text: str) -> dict[str, dict[str, str]]:
    """``{key: {field: raw value}}`` of a .bib file (braced or quoted values, or bare numbers)."""
    entries: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        if m.group(1).lower() in ("comment", "preamble", "string"):
            continue
        i, fields = m.end(), {}
        while True:
            fm = re.compile(r"\s*(\w[\w-]*)\s*=\s*").match(text, i)
            if not fm:
                break
            i = fm.end()
            if text[i] in "{\"":
                close, depth, j = ("}" if text[i] == "{" else '"'), 0, i
                while True:
                    ch = text[j]
                    depth += ch == "{"
                    depth -= ch == "}"
                    if (ch == close and depth == 0 and j > i) or (close == "}" and depth == 0):
                        break
                    j += 1
                fields[fm.group(1).lower()] = text[i + 1:j]
                i = j + 1
            else:
                vm = re.compile(r"[^,}\s]+").match(text, i)
                fields[fm.group(1).lower()] = vm.group(0)
                i = vm.end()
            cm = re.compile(r"\s*,").match(text, i)
            if not cm:
                break
            i = cm.end()
        entries[m.group(2).lower()] = fields
    return entries


def _split_names(value: str) -> list[str]:
    """The names of a BibTeX name list, split on ``and`` outside braces."""
    names, depth, start = [], 0, 0
    for m in re.finditer(r"[{}]|\s+and\s+", value):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
        elif depth == 0:
            names.append(value[start:m.start()])
            start = m.end()
    return [n.strip() for n in names + [value[start:]] if n.strip()]


def last_name(name: str) -> str:
    """A BibTeX name's von and last parts ("de Las Casas, Diego" gives "de Las Casas").

    >>> last_name("Wulf, Wm. A."), last_name("{Llama Team, AI @ Meta}"), last_name("Jeff Dean")
    ('Wulf', 'Llama Team, AI @ Meta', 'Dean')
    """
    if name.startswith("{") and name.endswith("}") and _split_names(name) == [name]:
        depth = 0
        for k, ch in enumerate(name):
            depth += (ch == "{") - (ch == "}")
            if depth == 0 and k < len(name) - 1:
                break
        else:
            return latex_text(name[1:-1])
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(name):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(name[start:k])
            start = k + 1
    parts.append(name[start:])
    if len(parts) > 1:
        return latex_text(parts[0])
    words = name.split()
    return latex_text(words[-1])


def _bibliography(path: Path) -> dict[str, tuple[str, str]]:
    """``{key: (author text, year)}`` for author-year citations, from the book's .bib file."""
    out = {}
    for key, fields in _bib_entries(path.read_text(encoding="utf-8")).items():
        names = [last_name(n) for n in _split_names(fields.get("author") or
                                                    fields.get("editor") or "")]
        if not names:
            org = fields.get("organization") or fields.get("publisher") or fields.get("institution")
            names = [latex_text(org or key)]
        if len(names) == 1:
            authors = names[0]
        elif len(names) == 2:
            authors = f"{names[0]} and {names[1]}"
        else:
            authors = f"{names[0]} et al."
        out[key] = (authors, latex_text(fields.get("year", "n.d.")))
    return out


def build_index() -> Index:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    docs = toc_docs(toc)
    index = Index(site_url(config), docs, {d: _load_source(d) for d in docs})
    pages = []
    for doc in docs:
        src = index.sources[doc]
        text = "\n\n".join(src.markdown)
        m = re.search(r"^# (.+)$", text, re.M)
        src.title = index.titles[doc] = _plain(m.group(1)) if m else doc
        lines = text.splitlines()
        for i, line in enumerate(lines):
            lm = LABEL_LINE.match(line)
            if lm:
                nxt = next((x for x in lines[i + 1:] if x.strip()), "")
                heading = re.match(r"^#+\s+(.+)$", nxt)
                index.labels[lm.group(1)] = (doc, _plain(heading.group(1)) if heading else None)
        items = {"exercise": _exercises(text)}
        if src.notebook is not None:
            items["figure"] = [name for name, _ in _figures(src.notebook)]
        pages.append((doc, src.title, {k: v for k, v in items.items() if v}))
    for doc, types in chapter_numbers.number_items(pages).items():
        for figtype, ids in types.items():
            for item_id, number in ids.items():
                index.items[item_id] = (doc, figtype, chapter_numbers.label(number))
    glossary = next((s for d, s in index.sources.items() if d.endswith("glossary")), None)
    if glossary is not None:
        block = re.search(r"```\{glossary\}\n(.*?)^```", glossary.markdown[0], re.S | re.M)
        for line in (block.group(1) if block else "").splitlines():
            if line.strip() and not line.startswith((" ", "\t", ":")):
                index.terms[line.strip().lower()] = term_id(line.strip())
    index.bib = _bibliography(ROOT / "chapters" / "references.bib")
    return index


# --- Markdown: directives, roles, targets ---------------------------------------------------

@dataclass
class Context:
    index: Index
    doc: str
    glue: dict[str, dict[str, Any]]
    where: str = ""                 # "chapters/04_memory_wall.ipynb cell 12", for errors
    solution: str | None = None     # the exercise label of an open solution
    solution_parts: int = 0

    def fail(self, message: str) -> ReaderError:
        return ReaderError(f"{self.where}: {message}")

    def url(self, doc: str, anchor: str | None = None) -> str:
        if doc == self.doc:
            return f"#{anchor}" if anchor else "#"
        return f"{self.index.base}{doc}.html" + (f"#{anchor}" if anchor else "")


def _split_target(content: str) -> tuple[str | None, str]:
    m = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content.strip(), re.S)
    return (m.group(1), m.group(2).strip()) if m else (None, content.strip())


def format_plain_text(text: str, fmt_spec: str) -> str:
    """A glued ``text/plain`` value formatted as myst-nb's ``{glue:text}`` formats it.

    >>> format_plain_text("0.25", ".0%"), format_plain_text("'4 GB'", ""), format_plain_text("12", ",d")
    ('25%', '4 GB', '12')
    """
    try:
        value: Any = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt_spec == "":
        return str(value)
    kind = fmt_spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, fmt_spec)


def _glue(ctx: Context, name: str, content: str) -> str:
    key, _, fmt = content.rpartition(":") if ":" in content else (content, "", "")
    key = key.strip()
    if "::" in key:
        raise ctx.fail(f"{{{name}}}`{content}`: glue from another document is not supported")
    if key not in ctx.glue:
        raise ctx.fail(f"{{{name}}}`{content}`: no glued value named {key!r} in the stored "
                       "outputs (re-execute the notebook)")
    data = ctx.glue[key]
    if name == "glue:md":
        if "text/markdown" not in data:
            raise ctx.fail(f"{{glue:md}}`{content}`: {key!r} has no text/markdown output")
        return data["text/markdown"].strip()
    if name == "glue:text":
        if "text/plain" not in data:
            raise ctx.fail(f"{{glue:text}}`{content}`: {key!r} has no text/plain output")
        try:
            return format_plain_text(data["text/plain"], fmt)
        except (TypeError, ValueError) as exc:
            raise ctx.fail(f"{{glue:text}}`{content}`: format {fmt!r} fails: {exc}") from exc
    for mime in ("text/markdown", "image/svg+xml", "image/png", "text/plain"):
        if mime in data:
            if mime.startswith("image/png"):
                return f"![{key}](data:image/png;base64,{data[mime].strip()})"
            if mime == "text/plain":
                return format_plain_text(data[mime], "")
            return data[mime].strip()
    raise ctx.fail(f"{{{name}}}`{content}`: {key!r} has no displayable output")


def _cite(ctx: Context, name: str, content: str) -> str:
    url = ctx.url("chapters/references") if "chapters/references" in ctx.index.docs else None
    parts = []
    for key in (k.strip() for k in content.split(",")):
        if key.lower() not in ctx.index.bib:
            raise ctx.fail(f"{{{name}}}`{content}`: {key!r} is not in chapters/references.bib")
        authors, year = ctx.index.bib[key.lower()]
        text = f"{authors} ({year})" if name == "cite:t" else f"{authors}, {year}"
        parts.append(f"[{text}]({url})" if url else text)
    if name == "cite:t":
        return ", ".join(parts)
    return "(" + "; ".join(parts) + ")"


def _role(ctx: Context, name: str, content: str) -> str:
    if name.startswith("glue") or name == "glue":
        return _glue(ctx, name, content)
    if name in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts"):
        return _cite(ctx, name.rstrip("s") if name != "cite" else "cite:p", content)
    text, target = _split_target(content)
    if name == "term":
        tid = ctx.index.terms.get(target.lower())
        if tid is None:
            raise ctx.fail(f"{{term}}`{content}`: {target!r} is not in the glossary")
        return f"[{text or target}]({ctx.url('chapters/glossary', tid)})"
    if name == "doc":
        doc = target if "/" in target else f"{ctx.doc.rsplit('/', 1)[0]}/{target}"
        doc = re.sub(r"\.(md|ipynb)$", "", doc.lstrip("/"))
        if doc not in ctx.index.titles:
            raise ctx.fail(f"{{doc}}`{content}`: {doc!r} is not a page of the book")
        return f"[{text or ctx.index.titles[doc]}]({ctx.url(doc)})"
    if name in ("ref", "numref", "eq"):
        if target in ctx.index.items:
            doc, figtype, number = ctx.index.items[target]
            if name == "numref" and text:
                shown = text.replace("%s", number).replace("{number}", number)
            elif name == "ref" and text:
                shown = text
            else:
                shown = NUMREF_FORMAT.get(figtype, "%s") % number
            return f"[{shown}]({ctx.url(doc, target)})"
        if target in ctx.index.labels and name != "eq":
            doc, title = ctx.index.labels[target]
            if name == "numref" or not (text or title):
                raise ctx.fail(f"{{{name}}}`{content}`: {target!r} has no number or title to show")
            return f"[{text or title}]({ctx.url(doc, target)})"
        raise ctx.fail(f"{{{name}}}`{content}`: no label {target!r} in the book")
    raise ctx.fail(f"role {{{name}}} has no plain-Markdown form in the reader edition")


def inline(ctx: Context, text: str) -> str:
    """Roles replaced, inline code left alone, ``(label)=`` lines turned into anchors."""
    def one(m):
        if m.group(1):
            rm = ROLE.fullmatch(m.group(1))
            return _role(ctx, rm.group(1), rm.group(2))
        return m.group(0)
    lines = []
    for line in text.split("\n"):
        lm = LABEL_LINE.match(line)
        lines.append(f'<a id="{lm.group(1)}"></a>' if lm else line)
    return ROLE_OR_CODE.sub(one, "\n".join(lines))


def _blocks(text: str, where: str):
    """Split Markdown into ('text', s), ('verbatim', s) and ('directive', name, arg, opts, body)."""
    lines = text.split("\n")
    i, buf = 0, []
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            buf.append(lines[i])
            i += 1
            continue
        _indent, fence, rest = m.groups()
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise ReaderError(f"{where}: a fence {fence!r} opened at line {i + 1} is never closed")
        if buf:
            yield ("text", "\n".join(buf))
            buf = []
        dm = re.match(r"^\{([A-Za-z0-9_:-]+)\}\s*(.*)$", rest)
        if dm is None:
            yield ("verbatim", "\n".join(lines[i:j + 1]))
        else:
            body, opts = lines[i + 1:j], {}
            while body and OPTION.match(body[0]):
                k, v = OPTION.match(body[0]).groups()
                opts[k] = v
                body = body[1:]
            yield ("directive", dm.group(1), dm.group(2).strip(), opts, "\n".join(body).strip("\n"))
        i = j + 1
    if buf:
        yield ("text", "\n".join(buf))


def quote(markdown: str) -> str:
    r"""A Markdown block quote. Math is joined onto one line first: front ends cut math out
    before parsing Markdown, and a ``> `` inside a ``$$`` block would be typeset.

    >>> print(quote("**Note**\n\n$$\na = b\n$$ and $x\ny$"))
    > **Note**
    >
    > $$a = b$$ and $x y$
    """
    def join(m):
        return "$$" + " ".join(ln.strip() for ln in m.group(1).splitlines() if ln.strip()) + "$$"
    markdown = re.sub(r"\$\$(.*?)\$\$", join, markdown, flags=re.S)
    markdown = re.sub(r"(?<![$\\])\$(?!\$)([^$]+?)\$",  # inline math wrapped over two lines
                      lambda m: "$" + " ".join(m.group(1).split("\n")) + "$", markdown)
    return "\n".join(f"> {line}" if line.strip() else ">" for line in markdown.split("\n"))


def _pyobject(path: Path, name: str) -> str:
    source = path.read_text(encoding="utf-8")
    tree: ast.AST = ast.parse(source)
    node = None
    for part in name.split("."):
        node = next((n for n in ast.iter_child_nodes(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise ReaderError(f"{path.relative_to(ROOT)} has no object {name!r}")
        tree = node
    lines = source.splitlines()
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return "\n".join(lines[start - 1:node.end_lineno])


def _directive(ctx: Context, name: str, arg: str, opts: dict[str, str], body: str) -> str:
    if name in ADMONITIONS:
        title = arg or ("See also" if name == "seealso" else name.capitalize())
        return quote(f"**{inline(ctx, title)}**\n\n{markdown(ctx, body)}")
    if name == "exercise":
        label_ = opts.get("label")
        if not label_ or label_ not in ctx.index.items:
            raise ctx.fail(f"exercise {label_!r} has no label the book numbers")
        number = ctx.index.items[label_][2]
        head = f"**Exercise {number}**" + (f" ({inline(ctx, arg)})" if arg else "")
        return f'<a id="{label_}"></a>\n\n' + quote(f"{head}\n\n{markdown(ctx, body)}")
    if name == "literalinclude":
        path = (ctx.index.sources[ctx.doc].path.parent / arg).resolve()
        if not path.is_file():
            raise ctx.fail(f"literalinclude {arg!r}: no such file")
        code = _pyobject(path, opts["pyobject"]) if "pyobject" in opts else path.read_text(
            encoding="utf-8").rstrip("\n")
        lang = opts.get("language", "python" if path.suffix == ".py" else "")
        rel = path.relative_to(ROOT).as_posix()
        what = f"`{opts['pyobject']}` in " if "pyobject" in opts else ""
        return f"*From {what}`{rel}`:*\n\n```{lang}\n{code}\n```"
    if name == "math":
        return f"$$\n{body}\n$$"
    raise ctx.fail(f"directive {{{name}}} has no plain-Markdown form in the reader edition")


def markdown(ctx: Context, text: str) -> str:
    """MyST Markdown (without solution markers) as plain Markdown."""
    out = []
    for block in _blocks(text, ctx.where):
        if block[0] == "text":
            out.append(inline(ctx, block[1]))
        elif block[0] == "verbatim":
            out.append(block[1])
        else:
            if block[1] in ("solution-start", "solution-end"):
                raise ctx.fail(f"{{{block[1]}}} inside another directive")
            out.append(_directive(ctx, *block[1:]))
    return "\n".join(out)


def _solution_title(ctx: Context) -> str:
    return f"Solution to Exercise {ctx.index.items[ctx.solution][2]}"


def _details(ctx: Context, parts: list[str]) -> str:
    body = "\n".join(parts).strip("\n")
    if not body.strip():
        return ""
    ctx.solution_parts += 1
    summary = _solution_title(ctx) + (", continued" if ctx.solution_parts > 1 else "")
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def markdown_cell(ctx: Context, text: str) -> str:
    """One Markdown cell, with solutions (which may span cells) collapsed into ``<details>``."""
    out: list[str] = []
    inside: list[str] = []
    for block in _blocks(text, ctx.where):
        if block[0] == "directive" and block[1] == "solution-start":
            if ctx.solution is not None:
                raise ctx.fail(f"solution of {block[2]!r} starts inside that of {ctx.solution!r}")
            if block[2] not in ctx.index.items:
                raise ctx.fail(f"solution-start {block[2]!r}: no such exercise")
            ctx.solution, ctx.solution_parts = block[2], 0
            continue
        if block[0] == "directive" and block[1] == "solution-end":
            if ctx.solution is None:
                raise ctx.fail("solution-end without a solution-start")
            out.append(_details(ctx, inside))
            ctx.solution, inside = None, []
            continue
        piece = (inline(ctx, block[1]) if block[0] == "text" else block[1]
                 if block[0] == "verbatim" else _directive(ctx, *block[1:]))
        (inside if ctx.solution is not None else out).append(piece)
    if ctx.solution is not None:
        out.append(_details(ctx, inside))
    result = re.sub(r"\n{3,}", "\n\n", "\n".join(p for p in out if p is not None)).strip("\n")
    bad = LEFTOVER.search(result)
    if bad:
        raise ctx.fail(f"MyST markup left in the reader text: {bad.group(0)!r}")
    return result


# --- notebooks -------------------------------------------------------------------------------

def glue_values(nb: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{name: mime bundle}`` of every value a notebook glued (prefix removed)."""
    values = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            meta = (out.get("metadata") or {}).get("scrapbook")
            if out.get("output_type") in ("display_data", "execute_result") and meta:
                prefix = meta.get("mime_prefix", "")
                data = out.get("data", {})
                values[meta["name"]] = {k.removeprefix(prefix):
                                        "".join(v) if isinstance(v, list) else v
                                        for k, v in data.items()}
    return values


def _source_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _code_cell(cell: dict[str, Any], title: str | None, *, hide_outputs: bool = False,
               hide_in_jupyter: bool = True) -> dict[str, Any]:
    source = "".join(cell["source"])
    metadata: dict[str, Any] = {}
    if title:
        source = f"{TITLE_LINE}{title}\n{source}"
        metadata["cellView"] = "form"  # Colab: show the title, fold the code
        if hide_in_jupyter:
            metadata["jupyter"] = {"source_hidden": True}
            if hide_outputs:
                metadata["jupyter"]["outputs_hidden"] = True
    return {"cell_type": "code", "execution_count": None, "id": cell["id"],
            "metadata": metadata, "outputs": [], "source": _source_lines(source)}


def _md_cell(cell_id: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": _source_lines(text)}


def reader_notebook(index: Index, doc: str) -> dict[str, Any]:
    """The reader edition of one chapter notebook."""
    src = index.sources[doc]
    nb = src.notebook
    if nb is None:
        raise ReaderError(f"{doc} is not a notebook")
    ctx = Context(index, doc, glue_values(nb))
    figures = dict(_figures(nb))
    cells, first_code = [], True
    for n, cell in enumerate(nb["cells"]):
        ctx.where = f"{src.path.relative_to(ROOT)} cell {n} (id {cell.get('id')})"
        meta = cell.get("metadata", {})
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            if n == 0:
                folded = (" Solutions are folded under their exercises."
                          if any(d == doc and t == "exercise" for d, t, _n in index.items.values())
                          else "")
                note = (f"*The reader edition of [this page of the book]({index.base}{doc}.html)"
                        " for Google Colab and JupyterLab: run the setup cell below first (in "
                        f"Colab, Runtime > Run all).{folded}*")
                text, found = RUN_LINE.subn(note, text, count=1)
                if not found:
                    raise ctx.fail("the first cell has no '*Run this chapter:*' (or appendix) line to replace")
            cells.append(_md_cell(cell["id"], markdown_cell(ctx, text)))
            continue
        if cell["cell_type"] != "code":
            continue
        tags = set(meta.get("tags", []))
        if first_code:
            first_code = False
            cells.append(_code_cell(cell, "Setup: run this cell first (installs the book's "
                                          "library where it is missing)", hide_in_jupyter=False))
            continue
        if ctx.solution is not None:
            cells.append(_code_cell(cell, _solution_title(ctx) + " (code)", hide_outputs=True))
        elif "remove-cell" in tags:
            cells.append(_code_cell(cell, "Computes the numbers quoted in the text"))
        elif tags & {"remove-input", "hide-input"}:
            cells.append(_code_cell(cell, "Code for the output below"))
        else:
            cells.append(_code_cell(cell, None))
        fig = (meta.get("mystnb") or {}).get("figure") or {}
        if fig.get("name") in figures:
            number = index.items[fig["name"]][2]
            caption = markdown_cell(ctx, fig["caption"])
            cells.append(_md_cell(f"{cell['id']}-fig"[:64],
                                  f'<a id="{fig["name"]}"></a>\n\n**Fig. {number}.** {caption}'))
    if ctx.solution is not None:
        raise ctx.fail(f"the solution of {ctx.solution!r} is never closed")
    return {"cells": cells, "metadata": {
        "colab": {"provenance": [], "toc_visible": True},
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


def chapter_notebooks(index: Index) -> list[str]:
    return [d for d in index.docs if index.sources[d].notebook is not None]


def dumps(nb: dict[str, Any]) -> str:
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def generate(out_dir: Path) -> list[Path]:
    """Write the reader edition under ``out_dir`` (``reader/`` by default); returns its files."""
    index = build_index()
    written = []
    for doc in chapter_notebooks(index):
        target = out_dir / f"{doc}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dumps(reader_notebook(index, doc)), encoding="utf-8")
        written.append(target)
    stale = set((out_dir / "chapters").glob("*.ipynb")) - set(written)
    for path in stale:  # a chapter left the toc
        path.unlink()
    return written


def stale_files(out_dir: Path = OUT_DIR) -> list[str]:
    """The reader files that differ from a fresh generation (empty when up to date)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {p.relative_to(tmp).as_posix(): p.read_text(encoding="utf-8")
                 for p in generate(Path(tmp))}
    have = {p.relative_to(out_dir).as_posix(): p.read_text(encoding="utf-8")
            for p in out_dir.glob("chapters/*.ipynb")} if out_dir.exists() else {}
    return sorted(k for k in set(fresh) | set(have) if fresh.get(k) != have.get(k))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR,
                        help="folder to write (default: reader/ in the repository)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the folder differs from a fresh generation")
    args = parser.parse_args(argv)
    try:
        if args.check:
            stale = stale_files(args.out)
            if stale:
                print("stale reader edition, run `python tools/reader_edition.py`: "
                      + ", ".join(stale), file=sys.stderr)
                return 1
            print("reader edition is up to date")
            return 0
        for path in generate(args.out):
            print(path)
    except ReaderError as exc:
        print(f"reader_edition: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
