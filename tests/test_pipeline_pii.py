"""PII redaction: what the patterns catch, what they miss, and what they catch wrongly."""

import numpy as np
import pytest

from llmphys.pipeline import crawl, pii


@pytest.mark.parametrize("item, kind", [
    ("jane.doe@mail.example", "email"), ("j+news@a.b.example", "email"),
    ("192.0.2.255", "ip"), ("203.0.113.5", "ip"),
    ("+1 415 555 0134", "phone"), ("(415) 555-0134", "phone"), ("415.555.0134", "phone"),
    ("+44 20 7946 0958", "phone"), ("030 1234 5678", "phone"),
])
def test_each_written_for_format_is_redacted(item, kind):
    out, counts = pii.redact(f"before {item} after")
    assert out == f"before {pii.MASK[kind]} after" and counts[kind] == 1


@pytest.mark.parametrize("text", [
    "jane at mail dot example",      # obfuscated address: no pattern for it
    "2001:db8::1",                   # IPv6: the IP pattern is IPv4 only
    "version 1.2.3 of 256.1.1.1",    # not addresses: three dots, or an octet > 255
    "in 1999 and 2024",              # years are not phone numbers
])
def test_what_the_patterns_do_not_match(text):
    assert pii.redact(text) == (text, {"email": 0, "ip": 0, "phone": 0})


def test_recall_on_planted_pii_is_one_for_written_for_formats_and_zero_for_the_others():
    rng = np.random.default_rng(0)
    texts = [" ".join(crawl.sample_words("en", 40, rng)) for _ in range(600)]
    planted_texts, planted = pii.plant_pii(texts, rng=rng, share=1.0)
    rec = pii.recall_by_format([pii.redact(t)[0] for t in planted_texts], planted)
    assert sum(n for _, n in rec.values()) == 600
    for (kind, fmt), (caught, n) in rec.items():
        assert n > 10
        missed_by_design = fmt in ("obfuscated", "ipv6")
        assert caught == (0 if missed_by_design else n), (kind, fmt, caught, n)


def test_numeric_tables_are_false_alarms():
    # a crawl "numeric" page is rows of four-digit groups: "dddd dddd dddd" reads as a phone
    row = "0423 1234 5678 0012 9999"
    assert pii.redact(row)[1]["phone"] >= 1


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="text"):
        pii.redact(None)
    with pytest.raises(ValueError, match="share"):
        pii.plant_pii(["a"], rng=np.random.default_rng(0), share=2.0)
    with pytest.raises(ValueError, match="kind, fmt"):
        pii.fake_pii("email", "fax", np.random.default_rng(0))
