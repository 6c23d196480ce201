import numpy as np
import pytest
from datasketch import MinHash, MinHashLSH
from datasketch.lsh import _optimal_param

from llmphys.pipeline import crawl, dedup, extract


@pytest.fixture(scope="module")
def corpus():
    c = crawl.generate_crawl(150, rng=np.random.default_rng(3))
    texts = [extract.extract_text(d.html) for d in c.documents]
    flat, off = dedup.shingles(texts, k=5)
    perms = dedup.permutations(112, rng=np.random.default_rng(4))
    return texts, flat, off, perms, dedup.signatures(flat, off, perms)


def test_fineweb_setting_gives_threshold_072_and_92_percent_at_080():
    # Penedo et al. 2024: 14 bands of 8 hashes; (1/14)^(1/8) = 0.7190; 1-(1-0.8^8)^14 = 0.9235.
    assert dedup.lsh_threshold(n_bands=14, n_rows=8) == pytest.approx(0.7190, abs=1e-4)
    assert dedup.s_curve(0.8, n_bands=14, n_rows=8) == pytest.approx(0.9235, abs=1e-4)
    assert dedup.s_curve(0.0, n_bands=3, n_rows=2) == 0
    assert dedup.s_curve(1.0, n_bands=3, n_rows=2) == 1


def test_minhash_estimates_converge_to_exact_jaccard_within_the_standard_error():
    # Two sets with |A∩B| = 300, |A∪B| = 1000: J = 0.3. With H hashes the estimate has
    # standard error sqrt(J(1-J)/H); 5 sigma makes a false failure ~1e-6.
    rng = np.random.default_rng(0)
    universe = rng.choice(2**32, size=1000, replace=False).astype(np.uint32)
    a, b = universe[:650], universe[350:]
    flat = np.concatenate([a, b])
    off = np.array([0, a.size, a.size + b.size])
    assert dedup.exact_jaccard(flat, off, 0, 1) == pytest.approx(0.3)
    for h in (64, 256, 1024):
        sig = dedup.signatures(flat, off, dedup.permutations(h, rng=rng))
        est = dedup.estimated_jaccard(sig, np.array([[0, 1]]))[0]
        assert abs(est - 0.3) < 5 * np.sqrt(0.3 * 0.7 / h)


def test_signatures_equal_datasketch_affine32_on_the_same_inputs(corpus):
    _, flat, off, perms, sig = corpus
    for i in range(0, off.size - 1, 7):
        if off[i + 1] > off[i]:
            m = MinHash(num_perm=112, scheme="affine32", permutations=perms, hashfunc=int)
            m.update_batch(flat[off[i]: off[i + 1]].tolist())
            assert np.array_equal(m.hashvalues, sig[i])


def test_candidate_pairs_equal_datasketch_lsh_on_the_same_signatures(corpus):
    _, _flat, off, perms, sig = corpus
    lsh = MinHashLSH(num_perm=112, params=(14, 8))
    hashes = {}
    for i in np.flatnonzero(np.diff(off) > 0):
        hashes[i] = MinHash(num_perm=112, scheme="affine32", permutations=perms,
                            hashvalues=sig[i])
        lsh.insert(int(i), hashes[i])
    theirs = {(min(i, j), max(i, j)) for i, m in hashes.items() for j in lsh.query(m) if j != i}
    ours = dedup.candidate_pairs(sig[np.diff(off) > 0], n_bands=14, n_rows=8)
    rows = np.flatnonzero(np.diff(off) > 0)
    assert theirs and theirs == {(int(rows[i]), int(rows[j])) for i, j in ours}


@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_best_bands_agree_with_datasketch(threshold):
    assert dedup.best_bands(128, threshold) == _optimal_param(threshold, 128, 0.5, 0.5)


def test_every_copy_of_a_page_becomes_a_candidate(corpus):
    texts, _flat, _off, _perms, sig = corpus
    pairs = {tuple(p) for p in dedup.candidate_pairs(sig, n_bands=14, n_rows=8).tolist()}
    same = [(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))
            if texts[i] == texts[j] and texts[i]]
    assert same and all(p in pairs for p in same)


def test_exact_dedup_normalises_case_space_and_punctuation():
    assert dedup.exact_duplicates(["Hi, there!", "hi there", "hi  there?", "other"]).tolist() == [
        False, True, True, False]


def test_clusters_are_transitive_and_keep_one_per_cluster():
    labels = dedup.clusters(5, np.array([[0, 1], [1, 2]]))
    assert labels[0] == labels[2] != labels[3]
    assert dedup.duplicates_to_remove(labels).sum() == 2


def test_bad_band_arguments_are_rejected(corpus):
    sig = corpus[4]
    with pytest.raises(ValueError, match="n_bands"):
        dedup.s_curve(0.5, n_bands=0, n_rows=2)
    with pytest.raises(ValueError, match="exceeds"):
        dedup.candidate_pairs(sig, n_bands=20, n_rows=8)
    with pytest.raises(ValueError, match="threshold"):
        dedup.best_bands(64, 1.0)


def test_signatures_do_not_depend_on_the_chunk_size(corpus):
    # Chunking is an implementation detail: one document per chunk, the default and one
    # chunk for everything must give the same bits.
    _, flat, off, perms, sig = corpus
    for chunk_bytes in (1, 3000, 2**30):
        assert np.array_equal(dedup.signatures(flat, off, perms, chunk_bytes=chunk_bytes), sig)


def test_signature_memory_is_bounded_by_the_chunk_not_the_corpus():
    # The old loop built a (16 perms x n_shingles) uint32 temporary: 64 bytes per shingle, 2 GB
    # at 50,000 long documents. Now every temporary (the chunk's hashed shingles and their
    # permuted block) is one chunk, so beyond the output the peak does not grow with the
    # corpus. tracemalloc sees numpy's allocations exactly, so this is deterministic.
    import tracemalloc
    rng = np.random.default_rng(0)
    perms = dedup.permutations(112, rng=rng)
    chunk = 2**20
    for n_docs in (500, 4000):
        lengths = rng.integers(200, 1000, size=n_docs)
        off = np.concatenate([[0], np.cumsum(lengths)])
        flat = rng.integers(0, 2**32, size=int(off[-1]), dtype=np.uint64).astype(np.uint32)
        tracemalloc.start()
        dedup.signatures(flat, off, perms, chunk_bytes=chunk)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        output = n_docs * 112 * 4
        assert peak - output <= 3 * chunk, (n_docs, peak - output, flat.size)
