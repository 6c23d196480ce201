import json

import numpy as np
import pytest

from llmphys.pipeline import bpe, crawl


@pytest.fixture(scope="module")
def english():
    rng = np.random.default_rng(0)
    return [" ".join(crawl.paragraph("en", rng) for _ in range(3)) for _ in range(100)]


def test_textbook_example_aaabdaaabac_merges_aa_then_ab_then_zy():
    # The classic worked example of BPE: aa -> Z, ab -> Y (a tie with Za, broken toward
    # the smaller pair), ZY -> X, leaving "XdXac".
    tok = bpe.BytePairTokenizer().train_from_counts({b"aaabdaaabac": 1}, 3)
    a, b = ord("a"), ord("b")
    assert tok.merges == {(a, a): 256, (a, b): 257, (256, 257): 258}
    assert tok.encode("aaabdaaabac") == [258, ord("d"), 258, a, ord("c")]


def test_sennrich_dictionary_first_merges():
    # Sennrich et al. 2016, fig. 1 dictionary without end-of-word markers:
    # e-s and s-t both occur 9 times (es wins the tie), then es-t (9), then l-o and lo-w (7).
    counts = {b"low": 5, b"lower": 2, b"newest": 6, b"widest": 3}
    tok = bpe.BytePairTokenizer().train_from_counts(counts, 4)
    assert [tok.vocab[i] for i in range(256, 260)] == [b"es", b"est", b"lo", b"low"]


def test_round_trip_is_exact_in_every_script(english):
    tok = bpe.BytePairTokenizer().train(english, vocab_size=400)
    for s in ["Grüße aus Köln", "यह एक परीक्षण है।", "Привет, мир", "emoji 🙂 and\ttabs\n",
              english[0]]:
        assert tok.decode(tok.encode(s)) == s


def test_merges_and_token_counts_agree_with_huggingface_tokenizers(english):
    ours = bpe.BytePairTokenizer().train(english, vocab_size=556)
    hf = bpe.hf_byte_level_bpe(english, 556)
    assert sum(len(ours.encode(t)) for t in english) == sum(len(hf.encode(t).ids) for t in english)
    hf_merges = json.loads(hf.to_str())["model"]["merges"]
    assert len(hf_merges) == len(ours.merges) == 300
    ours_str = [_gpt2_chars(ours.vocab[a]) + " " + _gpt2_chars(ours.vocab[b])
                for a, b in ours.merges]
    hf_str = [" ".join(m) if isinstance(m, list) else m for m in hf_merges]
    assert len(set(ours_str) & set(hf_str)) >= 297    # ties may order a few differently


def _gpt2_chars(bs: bytes) -> str:
    """GPT-2's printable stand-in for each byte (bytes_to_unicode), as HF stores merges."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table, extra = {}, 0
    for byte in range(256):
        if byte in keep:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return "".join(table[x] for x in bs)


def test_fertility_of_hindi_exceeds_english_under_an_english_tokenizer(english):
    tok = bpe.BytePairTokenizer().train(english, vocab_size=556)
    rng = np.random.default_rng(1)
    hindi = [crawl.paragraph("hi", rng) for _ in range(20)]
    en = bpe.corpus_fertility(tok.encode, english[:20])
    hi = bpe.corpus_fertility(tok.encode, hindi)
    # Devanagari takes 3 bytes per character and almost none of the 300 merges.
    assert 3 * en["tokens_per_word"] < hi["tokens_per_word"]


def test_bad_vocab_size_is_rejected():
    with pytest.raises(ValueError, match="vocab_size"):
        bpe.BytePairTokenizer().train(["x"], vocab_size=100)
    with pytest.raises(ValueError, match="n_words"):
        bpe.fertility(3, 0)


def test_chunk_counts_equal_a_plain_findall_count(english):
    # The split-at-spaces shortcut must give GPT-2's chunks exactly, in every script and at
    # the whitespace cases where it falls back to the regex.
    import collections
    rng = np.random.default_rng(5)
    texts = english + [crawl.paragraph(lang, rng) for lang in crawl.LANGUAGES for _ in range(5)]
    texts += ["a  b", " x", "x ", "x \n y", "it's  don't ", "\t a", "a \u00a0b", "a \u2003 b",
              "x\x1c y", "  ", "", " ", "a\n b c\n\n d", "3.5x, 10 000 and ¡ya!"]
    plain = collections.Counter()
    for t in texts:
        plain.update(bpe.GPT2_SPLIT.findall(t))
    assert bpe.chunk_counts(texts) == plain


def test_training_again_on_the_same_texts_reuses_the_first_result(english, monkeypatch):
    first = bpe.BytePairTokenizer().train(english, vocab_size=300)
    monkeypatch.setattr(bpe, "chunk_counts", lambda texts: pytest.fail("retrained"))
    again = bpe.BytePairTokenizer().train(english, vocab_size=300)
    assert again.merges == first.merges and again.vocab == first.vocab
    assert again.encode(english[0]) == first.encode(english[0])
    again.merges[(0, 0)] = 999                  # the cache holds copies, not the live dicts
    assert (0, 0) not in bpe.BytePairTokenizer().train(english, vocab_size=300).merges
