"""The unigram-LM tokenizer: Viterbi against brute-force enumeration of every segmentation,
forward-backward expected counts against the same enumeration, EM on a corpus whose answer is
known, byte fallback's lossless round trip, and the sizes the pruning run delivers."""

import itertools
import math

import numpy as np
import pytest

from llmphys.pipeline import lattice, unigram


def segmentations(word):
    """Every way to cut ``word`` into consecutive non-empty pieces (2^(n-1) of them)."""
    n = len(word)
    for cuts in itertools.product([False, True], repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        yield [word[a:b] for a, b in itertools.pairwise(bounds)]


def random_vocab(rng, alphabet="abc", n_multi=8):
    pieces = set(alphabet)
    while len(pieces) < len(alphabet) + n_multi:
        k = int(rng.integers(2, 5))
        pieces.add("".join(rng.choice(list(alphabet), size=k)))
    return {p: float(np.log(rng.uniform(0.01, 1.0))) for p in sorted(pieces)}


def score(seg, lp):
    return sum(lp.get(p, -math.inf) for p in seg)


def test_viterbi_picks_the_most_likely_segmentation_of_every_random_word():
    rng = np.random.default_rng(0)
    for _ in range(200):
        lp = random_vocab(rng)
        word = "".join(rng.choice(list("abc"), size=int(rng.integers(1, 9))))
        best = max(score(s, lp) for s in segmentations(word))
        got = unigram.viterbi_segment(word, lp)
        assert "".join(got) == word
        # exact up to float summation order
        assert score(got, lp) == pytest.approx(best, abs=1e-12)


def test_the_vectorised_lattice_agrees_with_the_reference_viterbi():
    rng = np.random.default_rng(1)
    lp = random_vocab(rng, n_multi=12)
    words = ["".join(rng.choice(list("abc"), size=int(rng.integers(1, 12)))) for _ in range(300)]
    tok = unigram.UnigramTokenizer(list(lp), np.array(list(lp.values())), byte_fallback=True)
    for w in words:
        ids = tok.encode(w)
        pieces = [tok.pieces[i - unigram.N_BYTES] for i in ids]
        ref = unigram.viterbi_segment(w, lp)
        assert sum(lp[p] for p in pieces) == pytest.approx(sum(lp[p] for p in ref), abs=1e-12)


def test_forward_backward_expected_counts_match_enumeration():
    # E[count of piece x in word] = sum over segmentations s of P(s) n_x(s) / sum_s P(s)
    rng = np.random.default_rng(2)
    lp = random_vocab(rng)
    pieces = list(lp)
    words = ["abcab", "cabba", "aaa"]
    weights = np.array([3.0, 1.0, 2.0])
    want = np.zeros(len(pieces))
    for w, c in zip(words, weights, strict=True):
        segs = [s for s in segmentations(w) if all(p in lp for p in s)]
        probs = np.array([math.exp(sum(lp[p] for p in s)) for s in segs])
        for s, pr in zip(segs, probs / probs.sum(), strict=True):
            for p in s:
                want[pieces.index(p)] += c * pr
    lat = lattice.Lattice.build(words, {p: i for i, p in enumerate(pieces)}, 4, len(pieces))
    got = lat.expected_counts(np.append(list(lp.values()), -50.0), weights, len(pieces) + 1)
    np.testing.assert_allclose(got[:-1], want, rtol=1e-10)
    assert got[-1] == pytest.approx(0.0, abs=1e-12)  # every character has a piece: no unknowns


def test_em_on_a_repeated_word_learns_the_word_as_one_piece():
    # a corpus of one word: the likelihood is maximised by p(word) = 1, one token per word
    tok = unigram.train_sweep(["abcd abcd abcd"] * 20, [256 + 7])[263]
    assert tok.encode(" abcd") == [unigram.N_BYTES + tok.pieces.index(" abcd")]


def test_byte_fallback_round_trips_unseen_characters_and_unk_loses_them():
    texts = ["the quick brown fox jumps over the lazy dog"] * 10
    with_fb = unigram.train_sweep(texts, [256 + 40], byte_fallback=True)[296]
    no_fb = unigram.train_sweep(texts, [1 + 40], byte_fallback=False)[41]
    unseen = "the λόγος fox"
    ids = with_fb.encode(unseen)
    assert with_fb.decode(ids) == unseen
    # each Greek letter is 2 UTF-8 bytes, each a token: 5 letters -> 10 byte tokens
    assert sum(i < unigram.N_BYTES for i in ids) == len("λόγος".encode())
    ids = no_fb.encode(unseen)
    assert no_fb.decode(ids) == "the " + unigram.UNK * 5 + " fox"
    assert ids.count(0) == 5


def test_one_run_delivers_every_size_and_smaller_vocabularies_are_nested():
    texts = ["low lower lowest newer newest wider widest"] * 8 + ["slow slower snow"] * 5
    run = unigram.prune_run(texts, [40, 30, 25])
    assert [len(run[n][0]) for n in (40, 30, 25)] == [40, 30, 25]
    assert set(run[25][0]) <= set(run[30][0]) <= set(run[40][0])  # pruning only removes
    for n in run:  # probabilities normalised
        assert np.exp(run[n][1]).sum() == pytest.approx(1.0, rel=1e-9)
    toks = unigram.train_sweep(texts, [296, 281], byte_fallback=True)
    assert {v: t.vocab_size for v, t in toks.items()} == {296: 296, 281: 281}


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="n_pieces"):
        unigram.prune_run(["abc abc"], [2])
    with pytest.raises(ValueError, match="cannot be segmented"):
        unigram.viterbi_segment("abz", {"a": -1.0, "b": -1.0})
    with pytest.raises(ValueError, match="fewer than n_pieces"):
        unigram.prune_run(["abc abc"], [500])


@pytest.fixture(scope="module")
def crawl_texts():
    from llmphys.pipeline import crawl

    web = crawl.generate_crawl(90, rng=np.random.default_rng(8), kinds={"clean": 1.0})
    texts = [d.main_text for d in web.documents]
    return texts[:60], texts[60:]


def _hf_split():
    from tokenizers import Regex, pre_tokenizers

    from llmphys.pipeline import bpe

    return pre_tokenizers.Split(Regex(bpe.GPT2_SPLIT.pattern), behavior="isolated")


def test_encodings_match_hugging_face_unigram_viterbi_token_for_token(crawl_texts):
    # an independent implementation of the same model: Hugging Face's Rust Unigram, given our
    # pieces and log probabilities and the same chunking, must choose the same segmentation
    from tokenizers import Tokenizer, models

    train, held = crawl_texts
    ours = unigram.train_sweep(train, [512], byte_fallback=False)[512]
    vocab = [("<unk>", 0.0)] + [(p, float(lp)) for p, lp in zip(ours.pieces, ours.log_probs,
                                                                strict=True)]
    hf = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    hf.pre_tokenizer = _hf_split()
    for t in held:
        assert ours.encode(t) == hf.encode(t).ids


def test_training_compresses_about_as_well_as_hugging_faces_unigram_trainer(crawl_texts):
    # same size, chunking, shrink factor, EM steps and piece length; the trainers differ in the
    # seed (HF: suffix array, every character kept) and HF's digamma M-step, so tokens per byte
    # agree only roughly: ours within 10% of HF's (it measured 4% to 8% shorter on the crawl)
    from tokenizers import Tokenizer, models, trainers

    train, held = crawl_texts
    n_bytes = sum(len(t.encode()) for t in held)
    hf = Tokenizer(models.Unigram())
    hf.pre_tokenizer = _hf_split()
    hf.train_from_iterator(train, trainers.UnigramTrainer(
        vocab_size=512, special_tokens=["<unk>"], unk_token="<unk>", shrinking_factor=0.75,
        max_piece_length=8, n_sub_iterations=2, seed_size=20_000, show_progress=False))
    ours = unigram.train_sweep(train, [512], byte_fallback=False)[512]
    t_hf = sum(len(hf.encode(t).ids) for t in held) / n_bytes
    t_ours = sum(map(len, ours.encode_batch(held))) / n_bytes
    assert 0.9 * t_hf < t_ours < 1.1 * t_hf, (t_ours, t_hf)
