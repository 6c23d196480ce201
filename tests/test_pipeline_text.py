import numpy as np
import pytest

from llmphys.pipeline import text


def test_stable_hash_is_pinned_across_processes_and_versions():
    # BLAKE2b-64 of b"the", little-endian: a regression pin (Python's hash() would vary per run).
    assert int(text.stable_hash64(["the"])[0]) == int.from_bytes(
        __import__("hashlib").blake2b(b"the", digest_size=8).digest(), "little")


def test_ngrams_never_straddle_two_documents():
    flat, off = text.corpus_word_hashes(["a b", "c d"])
    grams, goff = text.ngram_hashes(flat, off, 2)
    across = text.ngram_hashes(*text.corpus_word_hashes(["b c"]), 2)[0]
    assert goff.tolist() == [0, 1, 2] and across[0] not in grams


def test_ngram_hash_counts_match_a_python_count():
    docs = ["x y z x y z x", "short", "p q r s t u"]
    flat, off = text.corpus_word_hashes(docs)
    _, goff = text.ngram_hashes(flat, off, 3)
    assert np.diff(goff).tolist() == [max(len(d.split()) - 2, 0) for d in docs]


def test_unique_per_doc_turns_each_document_into_a_set():
    flat, off = text.corpus_word_hashes(["a a b", "b b"])
    _v, voff = text.unique_per_doc(flat, off)
    assert np.diff(voff).tolist() == [2, 1]


def test_bad_n_is_rejected():
    with pytest.raises(ValueError, match="n must"):
        text.ngram_hashes(np.zeros(3, np.uint64), np.array([0, 3]), 0)


def test_unique_per_doc_sort_key_path_equals_the_lexsort_path():
    # Values below 2^32 take the (doc << 32) | value sort; adding 2^40 forces the lexsort.
    rng = np.random.default_rng(1)
    for _ in range(50):
        off = np.concatenate([[0], np.cumsum(rng.integers(0, 20, size=30))])
        v = rng.integers(0, 50, size=int(off[-1])).astype(np.uint64)
        fast, fast_off = text.unique_per_doc(v, off)
        slow, slow_off = text.unique_per_doc(v + np.uint64(2**40), off)
        assert np.array_equal(fast_off, slow_off) and np.array_equal(fast + np.uint64(2**40), slow)
        assert fast.dtype == v.dtype


def test_ascii_fast_path_of_words_equals_the_unicode_regex():
    import unicodedata
    rng = np.random.default_rng(0)
    samples = [f"a{chr(c)}b {chr(c)}{chr(c)} {chr(c)}" for c in range(128)]
    samples += ["".join(map(chr, rng.integers(0, 128, size=40))) for _ in range(500)]
    for s in samples:
        assert text.words(s) == text.WORD_RE.findall(unicodedata.normalize("NFKC", s).casefold())
