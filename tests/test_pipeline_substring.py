"""Line dedup and suffix-array exact-substring dedup (Lee et al. 2022, arXiv:2107.06499)."""

import numpy as np
import pytest

from llmphys.pipeline import crawl, sites, substring


def test_suffix_array_matches_sorting_the_suffixes_directly():
    # independent cross-check: Python's sort of the explicit suffixes
    rng = np.random.default_rng(0)
    for n, alphabet in ((1, 2), (7, 2), (50, 3), (300, 4)):
        seq = rng.integers(alphabet, size=n)
        sa, _ = substring.suffix_array(seq)
        assert sa.tolist() == sorted(range(n), key=lambda i: seq[i:].tolist())


def _brute_repeated(seq, L):
    """Token t is marked iff some window [p, p+L) holding t equals a window starting earlier."""
    n, out = len(seq), np.zeros(len(seq), dtype=bool)
    starts = {}
    for p in range(n - L + 1):
        w = tuple(seq[p:p + L])
        if w in starts:
            out[p:p + L] = True
        else:
            starts[w] = p
    return out


@pytest.mark.parametrize("L", [1, 2, 3, 5, 8])
def test_repeated_mask_matches_brute_force(L):
    rng = np.random.default_rng(L)
    seq = rng.integers(3, size=200)
    assert substring.repeated_mask(seq, min_tokens=L).tolist() == _brute_repeated(seq, L).tolist()


def test_lee_et_al_61_word_sentence_is_cut_from_every_copy_but_the_first():
    # Lee et al. 2022 (abstract): one 61-word sentence repeated over 60,000 times in C4.
    # Planted in 100 pages, exact-substring dedup (L = 50) must cut exactly 99 x 61 words.
    rng = np.random.default_rng(1)
    sentence = " ".join(crawl.sample_words("en", 61, rng))
    # a page-specific word before the sentence, so no common word extends the repeat
    pages = [" ".join(crawl.sample_words("en", 80, rng)) + f" page{i} " + sentence
             for i in range(100)]
    out, cut = substring.exact_substring_dedup(pages, min_tokens=50)
    assert cut[0] == 0 and cut.sum() == 99 * 61
    assert sentence in out[0] and all(sentence not in t for t in out[1:])


def test_repeats_shorter_than_the_threshold_survive():
    # the crawl's inline consent notice is 29 words: below L = 50 it is not cut
    n = len(sites.INLINE_NOTICE.split())
    assert n < 50
    pages = [f"page {i} " + sites.INLINE_NOTICE for i in range(5)]
    assert substring.exact_substring_dedup(pages, min_tokens=50)[1].sum() == 0
    assert substring.exact_substring_dedup(pages, min_tokens=n)[1].sum() == 4 * n


def test_no_match_crosses_a_document_boundary():
    # "a b" ends one page and "c d" starts the next; "b c" occurs only across the boundary
    _, cut = substring.exact_substring_dedup(["a b", "c d", "b c"], min_tokens=2)
    assert cut.tolist() == [0, 0, 0]


def test_line_dedup_removes_each_repeated_line_after_its_first_occurrence():
    # closed form: k pages sharing one line of m words lose (k - 1) m words
    pages = [f"unique line {i}\n{sites.SHARE_BAR}" for i in range(6)]
    out, removed = substring.line_dedup(pages)
    assert removed.tolist() == [0] + [len(sites.SHARE_BAR.split())] * 5
    assert out[1] == "unique line 1"


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="min_tokens"):
        substring.repeated_mask(np.array([1, 2]), min_tokens=0)
    with pytest.raises(ValueError, match="texts"):
        substring.line_dedup("one string")
    with pytest.raises(ValueError, match="seq"):
        substring.suffix_array(np.array([0.5, 1.5]))


def test_an_exact_copy_loses_all_its_words_to_every_method():
    rng = np.random.default_rng(3)
    page = "\n".join(" ".join(crawl.sample_words("en", 60, rng)) for _ in range(3))
    other = "\n".join(" ".join(crawl.sample_words("en", 60, rng)) for _ in range(3))
    r = substring.compare_removals([page, other, page], ["clean", "clean", "exact_dup"],
                                   minhash_removed=np.array([False, False, True]))
    for method in ("line dedup", "exact substring", "MinHash"):
        assert r[method]["exact_dup"] == 1.0 and r[method]["clean"] == 0.0, method


def test_doubling_stops_once_prefixes_reach_the_threshold():
    # O(log L) rounds, not O(log n): a corpus that is one page repeated 20 times has
    # repeats as long as the corpus, yet L = 50 needs ranks up to 2^6 = 64 only
    rng = np.random.default_rng(4)
    seq, _ = substring.token_ids([" ".join(crawl.sample_words("en", 200, rng))] * 20)
    _, ranks = substring.suffix_array(seq, max_len=50)
    assert len(ranks) == 1 + 6


def test_fitted_exponent_recovers_a_power_law():
    n = np.array([1e3, 2e3, 4e3, 8e3])
    assert substring.fitted_exponent(n, 5e-9 * n**1.5) == pytest.approx(1.5, abs=1e-9)
    with pytest.raises(ValueError, match="sizes and times_s"):
        substring.fitted_exponent(n, -n)
