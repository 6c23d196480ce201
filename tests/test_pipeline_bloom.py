"""The Bloom filter against its closed forms (Broder and Mitzenmacher 2004, sec. 2)."""

import math

import numpy as np
import pytest

from llmphys.pipeline import bloom, dedup


@pytest.mark.parametrize("bits_per_item", [2.0, 4.0, 8.0, 10.0, 14.0])
def test_measured_false_positive_rate_matches_closed_form_within_binomial_error(bits_per_item):
    # n = 20,000 keys, 200,000 fresh queries; the measured rate is binomial around p, so it must
    # sit within 4 standard errors (a 1-in-16,000 chance of a spurious failure per case). The
    # closed form's own approximation error, e^(-kn/m) against (1 - 1/m)^(kn), is O(k/m) ~ 1e-5
    # relative here, far inside that band.
    n, q = 20_000, 200_000
    k = bloom.optimal_n_hashes(bits_per_item)
    p = bloom.false_positive_rate(n_items=n, n_bits=n * bits_per_item, n_hashes=k)
    got = bloom.measured_false_positive_rate(
        n_items=n, bits_per_item=bits_per_item, n_hashes=k, n_queries=q,
        rng=np.random.default_rng(7),
    )
    assert abs(got - p) < 4 * math.sqrt(p * (1 - p) / q)


def test_a_filter_never_misses_a_key_it_holds():
    keys = np.random.default_rng(1).integers(0, 2**63, size=(5_000, 2)).astype(np.uint64)
    bits = bloom.build(keys, n_bits=20_000, n_hashes=5)
    assert bloom.contains(bits, keys, n_hashes=5).all()


def test_ten_bits_a_key_with_seven_hashes_gives_0_82_percent():
    # k* = 10 ln 2 = 6.93 rounds to 7; (1 - e^-0.7)^7 = 0.008194 by hand
    assert bloom.optimal_n_hashes(10) == 7
    assert bloom.false_positive_rate(n_items=1, n_bits=10, n_hashes=7) == pytest.approx(
        (1 - 0.496585) ** 7, rel=1e-5
    )


def test_optimal_k_halves_the_rate_per_hash_and_needs_1_44_log2_bits():
    # at k = (m/n) ln 2 the fill is exactly one half, so p = 2^-k and m/n = log2(1/p) / ln 2
    for p in (0.1, 0.01, 0.001):
        bpi = bloom.bits_per_item_for_rate(p)
        k_cont = bpi * math.log(2)
        assert (1 - math.exp(-k_cont / bpi)) ** k_cont == pytest.approx(p, rel=1e-12)
        assert bpi == pytest.approx(math.log2(1 / p) / math.log(2), rel=1e-12)


def test_optimal_n_hashes_is_the_integer_minimum():
    for bpi in np.linspace(0.5, 30, 60):
        k = bloom.optimal_n_hashes(float(bpi))
        rates = [bloom.false_positive_rate(n_items=1, n_bits=bpi, n_hashes=j) for j in range(1, 40)]
        assert k == 1 + int(np.argmin(rates))


def test_bloom_dedup_flags_every_duplicate_and_with_ample_bits_only_those():
    texts = ["a page", "A  page.", "another page", "a third one", "another page!"] * 3
    exact = dedup.exact_duplicates(texts)
    flagged = bloom.bloom_duplicates(texts, n_bits=2**20, n_hashes=7)
    assert (flagged >= exact).all()  # no false negatives, at any size
    assert (flagged == exact).all()  # 1 Mbit for 3 unique keys: a collision has p ~ 1e-30
    tiny = bloom.bloom_duplicates(texts, n_bits=4, n_hashes=2)
    assert (tiny >= exact).all()


def test_bit_positions_follow_double_hashing_and_stay_in_range():
    keys = np.array([[2**64 - 1, 2**64 - 2]], dtype=np.uint64)
    m = 1_000_003
    got = bloom.bit_positions(keys, n_bits=m, n_hashes=4)[0]
    h1, h2 = 2**64 - 1, (2**64 - 2) | 1
    assert got.tolist() == [(h1 + i * h2) % m for i in range(4)]  # exact, in Python integers


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_hashes"):
        bloom.false_positive_rate(n_items=1, n_bits=10, n_hashes=0)
    with pytest.raises(ValueError, match="target_rate"):
        bloom.bits_per_item_for_rate(1.0)
    with pytest.raises(ValueError, match="keys"):
        bloom.bit_positions(np.zeros(3, dtype=np.uint64), n_bits=8, n_hashes=2)


def test_streaming_false_flags_on_random_keys_match_the_summed_rate():
    # 2,000 unique pages in a 4,000-bit filter (2 bits a page, k = 1): the expected number of
    # wrong flags is the sum of each page's rate; over 200 seeded repeats the mean count must sit
    # within 4 standard errors of it (each repeat's count is a sum of near-independent Bernoullis,
    # variance at most its mean)
    n, m, k, reps = 2_000, 4_000, 1, 200
    rng = np.random.default_rng(11)
    counts = []
    for _ in range(reps):
        keys = rng.integers(0, 2**63, size=(n, 2)).astype(np.uint64)
        pos = bloom.bit_positions(keys, n_bits=m, n_hashes=k)
        bits = np.zeros(m, dtype=bool)
        c = 0
        for j in range(n):
            c += bool(bits[pos[j]].all())
            bits[pos[j]] = True
        counts.append(c)
    want = bloom.expected_false_flags(n_unique=n, n_bits=m, n_hashes=k)
    assert abs(np.mean(counts) - want) < 4 * math.sqrt(want / reps)
