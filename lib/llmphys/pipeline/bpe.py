"""A byte-level BPE tokenizer written to be read, and tokenizer fertility across languages.

Byte-pair encoding (Gage 1994 for compression; Sennrich, Haddow and Birch 2016,
arXiv:1508.07909, for subwords) starts from an alphabet and repeatedly merges the most
frequent adjacent pair of symbols into a new symbol. Byte-level BPE (GPT-2, Radford et
al. 2019) starts from the 256 byte values, so every string is encodable and nothing is
ever unknown. Text is first split into chunks by GPT-2's regular expression (words with
their leading space, numbers, punctuation runs, whitespace) and merges never cross a
chunk boundary. In the spirit of Karpathy's minbpe, with two efficiency measures that
keep training fast enough for a notebook: unique chunks are counted once, and pair counts
are updated only for the chunks a merge touches, with a lazy max-heap choosing the next
merge. Ties go to the smallest pair of ids, as in Hugging Face ``tokenizers``.

Fertility is tokens per word (Rust et al. 2021, arXiv:2012.15613); its ratio to English
for the same content is the "tokenization premium" of Petrov et al. 2023
(arXiv:2305.15425): a language with premium 3 fits a third of the text in the same
context window and pays three times the FLOP per word in training and inference.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import collections
import hashlib
import heapq
import itertools

import regex

from . import text as text_mod

# GPT-2's pre-tokenisation pattern (Radford et al. 2019; openai/gpt-2 encoder.py).
GPT2_SPLIT = regex.compile(
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)


# A space followed by whitespace or the end: the one place where splitting at spaces first
# could disagree with splitting by GPT2_SPLIT (see chunk_counts).
_UNSAFE_SPACE = regex.compile(r" (?=\s|\Z)")


def chunk_counts(texts: list[str]) -> collections.Counter[str]:
    """How often each GPT-2 chunk occurs in ``texts``: the counts BPE training starts from.

    A space followed by a non-whitespace character always begins a chunk under GPT2_SPLIT
    (no alternative of the pattern can end on a space unless a whitespace run follows), so a
    text without "space + whitespace" or a trailing space splits exactly into its
    ``str.split(" ")`` pieces, each after the first with its space put back. Those pieces are
    counted with ``Counter`` at C speed and the regex runs once per distinct piece, instead of
    once per word; other texts take the plain ``findall``. Same counts either way (tested).

    >>> sorted(chunk_counts(["Hi there, there", "x  y"]).items())
    [(' ', 1), (' there', 2), (' y', 1), (',', 1), ('Hi', 1), ('x', 1)]
    """
    out: collections.Counter[str] = collections.Counter()
    first: collections.Counter[str] = collections.Counter()
    spaced: collections.Counter[str] = collections.Counter()
    for t in texts:
        if _UNSAFE_SPACE.search(t):
            out.update(GPT2_SPLIT.findall(t))
            continue
        pieces = t.split(" ")
        first[pieces[0]] += 1
        if len(pieces) > 1:
            spaced.update(pieces[1:])
    for prefix, table in (("", first), (" ", spaced)):
        for piece, n in table.items():
            for c in GPT2_SPLIT.findall(prefix + piece):
                out[c] += n
    out.pop("", None)
    return out


def _merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every non-overlapping occurrence of ``pair``, left to right."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class BytePairTokenizer:
    """Byte-level BPE: ``train`` learns merges, ``encode``/``decode`` apply them.

    >>> tok = BytePairTokenizer().train(["low lower lowest"] * 3, vocab_size=260)
    >>> tok.decode(tok.encode("lowest slow")) == "lowest slow"
    True
    """

    def __init__(self) -> None:
        self.merges: dict[tuple[int, int], int] = {}  # (left id, right id) -> new id
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def train(self, texts: list[str], vocab_size: int, *, min_count: int = 2) -> BytePairTokenizer:
        """Learn ``vocab_size - 256`` merges (fewer if no pair occurs ``min_count`` times).

        Training on the same texts with the same arguments again (the book's claims ledger
        recomputes one figure several times) reuses the first result from a small cache.
        """
        if int(vocab_size) != vocab_size or vocab_size < 256:
            raise ValueError(f"vocab_size must be an integer >= 256, got {vocab_size!r}")
        fresh = not self.merges and len(self.vocab) == 256
        key = (_texts_digest(texts), int(vocab_size), min_count) if fresh else None
        if key is not None and key in _TRAINED:
            self.merges, vocab = dict(_TRAINED[key][0]), _TRAINED[key][1]
            self.vocab = dict(vocab)
            self._cache.clear()
            return self
        chunks = {c.encode("utf-8"): n for c, n in chunk_counts(texts).items()}
        self.train_from_counts(chunks, int(vocab_size) - 256, min_count=min_count)
        if key is not None:
            _TRAINED[key] = (dict(self.merges), dict(self.vocab))
            while len(_TRAINED) > _TRAINED_MAX:
                _TRAINED.pop(next(iter(_TRAINED)))
        return self

    def train_from_counts(
        self, chunk_counts: dict[bytes, int], n_merges: int, *, min_count: int = 1
    ) -> BytePairTokenizer:
        """Learn merges from pre-split chunks and their counts (the textbook examples' input).

        Each merge rewrites only the chunks that contain its pair and changes only the counts
        of the pairs next to each occurrence: x A B y becomes x C y, so (x, A) and (B, y) lose
        the chunk's count and (x, C) and (C, y) gain it (the update of Hugging Face's trainer).
        """
        words = [list(c) for c in chunk_counts]
        counts = list(chunk_counts.values())
        pair_count: collections.defaultdict[tuple[int, int], int] = collections.defaultdict(int)
        where: collections.defaultdict[tuple[int, int], set[int]] = collections.defaultdict(set)
        for wi, w in enumerate(words):
            n = counts[wi]
            for p in itertools.pairwise(w):
                pair_count[p] += n
                where[p].add(wi)
        heap = [(-c, p) for p, c in pair_count.items()]
        heapq.heapify(heap)
        for _ in range(n_merges):
            while heap and pair_count.get(heap[0][1], 0) != -heap[0][0]:
                heapq.heappop(heap)  # stale entry: its count changed
            if not heap or -heap[0][0] < min_count:
                break
            _, pair = heapq.heappop(heap)
            left, right = pair
            new_id = len(self.vocab)
            self.merges[pair] = new_id
            self.vocab[new_id] = self.vocab[left] + self.vocab[right]
            touched: set[tuple[int, int]] = set()
            mark = touched.add
            for wi in where.pop(pair):
                w, n = words[wi], counts[wi]
                out: list[int] = []
                size, start, i = len(w), 0, 0
                while True:
                    try:  # next A that has a successor (C speed)
                        i = w.index(left, i, size - 1)
                    except ValueError:
                        break
                    if w[i + 1] != right:
                        i += 1
                        continue
                    out += w[start:i]
                    if out:  # x A B -> x C
                        x = out[-1]
                        p0, p1 = (x, left), (x, new_id)
                        pair_count[p0] -= n
                        pair_count[p1] += n
                        where[p1].add(wi)
                        mark(p0)
                        mark(p1)
                    if i + 2 < size:  # A B y -> C y
                        y = w[i + 2]
                        p0, p1 = (right, y), (new_id, y)
                        pair_count[p0] -= n
                        pair_count[p1] += n
                        where[p1].add(wi)
                        mark(p0)
                        mark(p1)
                    out.append(new_id)
                    i += 2
                    start = i
                if start:  # else a stale entry: the pair is gone
                    out += w[start:]
                    words[wi] = out
            del pair_count[pair]
            touched.discard(pair)
            for p in touched:
                c = pair_count[p]
                if c > 0:
                    heapq.heappush(heap, (-c, p))
                elif c == 0:
                    del pair_count[p]
        self._cache.clear()
        return self

    def _encode_chunk(self, chunk: str) -> list[int]:
        ids = list(chunk.encode("utf-8"))
        while len(ids) >= 2:
            pair = min(itertools.pairwise(ids), key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break
            ids = _merge(ids, pair, self.merges[pair])
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``: split into chunks, apply merges in the order they were learned."""
        out: list[int] = []
        for chunk in GPT2_SPLIT.findall(text):
            if chunk not in self._cache:
                self._cache[chunk] = self._encode_chunk(chunk)
            out.extend(self._cache[chunk])
        return out

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``; invalid UTF-8 (a cut inside a character) becomes U+FFFD."""
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")


_TRAINED: dict[tuple, tuple[dict, dict]] = {}  # (texts digest, vocab_size, min_count) -> result
_TRAINED_MAX = 8


def _texts_digest(texts: list[str]) -> bytes:
    """A BLAKE2b digest of the texts and their boundaries: the key of the training cache."""
    h = hashlib.blake2b(digest_size=16)
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.digest()


def hf_byte_level_bpe(texts: list[str], vocab_size: int):
    """The production comparison: Hugging Face ``tokenizers`` byte-level BPE (same split, size)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def fertility(n_tokens: int, n_words: int) -> float:
    """Tokens per word (Rust et al. 2021). ``n_words`` counts ``text.words`` units.

    >>> fertility(130, 100)
    1.3
    """
    if n_words <= 0:
        raise ValueError(f"n_words must be > 0, got {n_words!r}")
    return n_tokens / n_words


def corpus_fertility(encode, texts: list[str]) -> dict[str, float]:
    """Tokens per word, bytes per token and tokens per byte of ``texts`` under ``encode``."""
    n_tokens = sum(len(encode(t)) for t in texts)
    n_words = sum(len(text_mod.words(t)) for t in texts)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    return {
        "tokens_per_word": fertility(n_tokens, n_words),
        "bytes_per_token": n_bytes / n_tokens,
        "tokens_per_byte": n_tokens / n_bytes,
    }
