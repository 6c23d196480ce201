"""The vocabulary-size trade-off: prefixes of one BPE run, sequence length, head cost."""

import numpy as np
import pytest

from llmphys import specs
from llmphys.pipeline import bpe, crawl, vocab


@pytest.fixture(scope="module")
def texts():
    web = crawl.generate_crawl(60, rng=np.random.default_rng(5), kinds={"clean": 1.0})
    return [d.main_text for d in web.documents]


@pytest.fixture(scope="module")
def big(texts):
    return bpe.BytePairTokenizer().train(texts, vocab_size=256 + 600)


def test_a_prefix_is_what_training_with_the_smaller_vocabulary_learns(texts, big):
    # BPE training is greedy: the first 200 merges of a 600-merge run are the 200-merge run
    small = bpe.BytePairTokenizer().train(texts, vocab_size=256 + 200)
    pre = vocab.prefix_tokenizer(big, 256 + 200)
    assert pre.merges == small.merges and pre.vocab == small.vocab
    assert pre.encode(texts[0]) == small.encode(texts[0])


def test_tokens_per_byte_is_one_at_256_and_falls_with_every_vocabulary_step(texts, big):
    sweep = vocab.vocab_sweep(big, {"all": texts}, [256, 300, 400, 600, 856])
    t = sweep["tokens_per_byte/all"]
    assert t[0] == 1.0  # bytes only: one token a byte
    assert (np.diff(t) < 0).all()


def test_byte_fallback_share_at_256_is_the_share_of_non_ascii_bytes(texts):
    raw = b"".join(t.encode() for t in texts)
    want = np.mean(np.frombuffer(raw, dtype=np.uint8) >= 0x80)
    got = vocab.sequence_stats(bpe.BytePairTokenizer().encode, texts)["byte_fallback_share"]
    assert got == pytest.approx(want, rel=1e-12)


def test_kaplan_body_count_recovers_gpt3_175b_without_embeddings():
    # Brown et al. 2020 Table 2.1: 96 layers, d = 12288, "175B"; 12 L d^2 = 173.95B and the
    # 50257 x 12288 embedding 0.62B: 174.6B, within 0.5% of the quoted 175B (rounded)
    n = vocab.body_params(n_layers=96, d_model=12288)
    n += vocab.embedding_params(vocab_size=50257, d_model=12288, tied=True)
    assert n == pytest.approx(175e9, rel=5e-3)


def test_flop_per_byte_is_2_n_plus_2_v_d_per_token_and_break_even_balances():
    n_body, d = 3e6, 256
    parts = vocab.flop_per_byte(tokens_per_byte=0.3, n_body_params=n_body, vocab_size=4096,
                                d_model=d)
    assert parts["body"] + parts["logits"] == pytest.approx(0.3 * 2 * (n_body + 4096 * d))
    r = vocab.break_even_tokens_ratio(n_body_params=n_body, vocab_from=1024, vocab_to=8192,
                                      d_model=d)
    a = vocab.flop_per_byte(tokens_per_byte=0.4, n_body_params=n_body, vocab_size=1024, d_model=d)
    b = vocab.flop_per_byte(tokens_per_byte=0.4 * r, n_body_params=n_body, vocab_size=8192,
                            d_model=d)
    assert sum(a.values()) == pytest.approx(sum(b.values()), rel=1e-12)


def test_the_flop_optimal_vocabulary_grows_with_the_model(texts, big):
    vs = [256, 300, 400, 600, 856]
    t = vocab.vocab_sweep(big, {"all": texts}, vs)["tokens_per_byte/all"]
    small = vocab.flop_per_byte_sweep(t, np.array(vs), n_layers=1, d_model=16)
    large = vocab.flop_per_byte_sweep(t, np.array(vs), n_layers=24, d_model=1024)
    assert small["best_vocab_size"][0] < large["best_vocab_size"][0] == 856


def test_bad_arguments_are_named(big):
    with pytest.raises(ValueError, match="vocab_size"):
        vocab.prefix_tokenizer(big, 100)
    with pytest.raises(ValueError, match="d_model"):
        vocab.embedding_params(vocab_size=10, d_model=0)


def test_llama3_8b_vocabulary_holds_1_05b_of_8_03b_parameters():
    # data/models.toml's note from the model card: the 128K vocabulary puts 1.05B of the 8.03B
    # parameters in the input and output embeddings (2 x 128256 x 4096 = 1.0507B)
    sh = vocab.vocabulary_shares(specs.model("llama3_8b"))
    assert sh["params"] == pytest.approx(2 * 128256 * 4096 / 8_030_261_248, rel=1e-12)
    assert sh["params"] * 8_030_261_248 == pytest.approx(1.05e9, rel=5e-3)
    # logits share of forward FLOP per token: V d / (N_body + V d), N_body = 8.03B - 1.05B
    assert sh["logits_flop"] == pytest.approx(
        128256 * 4096 / (8_030_261_248 - 128256 * 4096), rel=1e-12)
