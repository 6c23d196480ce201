"""PII redaction: e-mail addresses, phone numbers and IPv4 addresses, by regular expression.

Production pipelines redact a few kinds of personal data with patterns, not models: Dolma
masks e-mail addresses, phone numbers and IP addresses (Soldaini et al. 2024,
arXiv:2402.00159, sec. 3.1.3); FineWeb anonymises e-mail and public IP addresses (Penedo et
al. 2024, arXiv:2406.17557, sec. 3.4). A pattern's recall is whatever its author thought
of, so it is measured here on planted PII in formats the patterns were and were not written
for (an obfuscated "name at host dot org", an IPv6 address), and its false alarms on the
crawl's own pages, whose numeric tables look like phone numbers.

Every planted address uses reserved names and numbers: the ``.example`` domain (RFC 2606),
the 192.0.2.0/24 and 203.0.113.0/24 documentation blocks (RFC 5737), 2001:db8::/32
(RFC 3849) and the 555-01xx fictional telephone range.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import collections

import numpy as np
import regex

from .words import sample_words

PATTERNS: dict[str, regex.Pattern] = {
    "email": regex.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "ip": regex.compile(
        r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}"
        r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])"
    ),
    "phone": regex.compile(
        r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{2,4}[ .-])"
        r"\d{3,4}[ .-]\d{4}(?!\w)"
    ),
}
PII_SHARE = 0.3  # share of texts that plant_pii gives one item
MASK = {"email": "<EMAIL>", "ip": "<IP>", "phone": "<PHONE>"}
# kind -> formats planted; the last format of email and ip is one the patterns miss
FORMATS = {
    "email": ("dotted", "plus", "obfuscated"),
    "phone": ("us_spaces", "us_parens", "us_dots", "uk", "de_local"),
    "ip": ("ipv4_doc1", "ipv4_doc2", "ipv6"),
}


def redact(text: str) -> tuple[str, dict[str, int]]:
    """(text with every match replaced by its mask, matches per kind).

    E-mail first (an address may hold digits), then IP, then phone.

    >>> redact("mail a.b@x.example or call (415) 555-0134 from 192.0.2.7")
    ('mail <EMAIL> or call <PHONE> from <IP>', {'email': 1, 'ip': 1, 'phone': 1})
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    counts = {}
    for kind, pat in PATTERNS.items():
        text, counts[kind] = pat.subn(MASK[kind], text)
    return text, counts


def fake_pii(kind: str, fmt: str, rng: np.random.Generator) -> str:
    """One synthetic item of ``kind`` in format ``fmt`` (see ``FORMATS``), reserved ranges only.

    >>> fake_pii("ip", "ipv4_doc1", np.random.default_rng(0)).startswith("192.0.2.")
    True
    """
    if kind not in FORMATS or fmt not in FORMATS[kind]:
        raise ValueError(f"(kind, fmt)=({kind!r}, {fmt!r}) is not known; allowed: {FORMATS}")
    a, b = sample_words("en", 2, rng)
    n = rng.integers(0, 10, size=12)
    d = "".join(map(str, n))
    if kind == "email":
        return {
            "dotted": f"{a}.{b}@{b}mail.example",
            "plus": f"{a}+{d[:2]}@news.{b}.example",
            "obfuscated": f"{a} at {b} dot example",
        }[fmt]
    if kind == "phone":
        return {
            "us_spaces": f"+1 {2 + n[0]}{d[1:3]} 555 01{d[3:5]}",
            "us_parens": f"({2 + n[0]}{d[1:3]}) 555-01{d[3:5]}",
            "us_dots": f"{2 + n[0]}{d[1:3]}.555.01{d[3:5]}",
            "uk": f"+44 20 7946 0{d[:3]}",
            "de_local": f"030 {d[:4]} {d[4:8]}",
        }[fmt]
    host = int(rng.integers(1, 255))
    return {
        "ipv4_doc1": f"192.0.2.{host}",
        "ipv4_doc2": f"203.0.113.{host}",
        "ipv6": f"2001:db8::{host:x}",
    }[fmt]


def plant_pii(
    texts: list[str], *, rng: np.random.Generator, share: float = PII_SHARE
) -> tuple[list[str], list[tuple[int, str, str, str]]]:
    """Insert one PII item into a ``share`` of the texts, at a random word boundary of a
    random line; kinds and formats are drawn uniformly. Returns (texts, planted), planted
    holding (text index, kind, format, item)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    out, planted = list(texts), []
    kinds = list(FORMATS)
    for i in np.flatnonzero(rng.random(len(texts)) < share):
        kind = kinds[int(rng.integers(len(kinds)))]
        fmt = FORMATS[kind][int(rng.integers(len(FORMATS[kind])))]
        item = fake_pii(kind, fmt, rng)
        lines = out[i].split("\n")
        j = int(rng.integers(len(lines)))
        w = lines[j].split(" ")
        w.insert(int(rng.integers(len(w) + 1)), item)
        lines[j] = " ".join(w)
        out[i] = "\n".join(lines)
        planted.append((int(i), kind, fmt, item))
    return out, planted


def recall_by_format(
    redacted: list[str], planted: list[tuple[int, str, str, str]]
) -> dict[tuple[str, str], tuple[int, int]]:
    """(kind, format) -> (items caught, items planted); caught means the item no longer
    appears whole in its redacted text."""
    out: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for i, kind, fmt, item in planted:
        out[(kind, fmt)][0] += item not in redacted[i]
        out[(kind, fmt)][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}
