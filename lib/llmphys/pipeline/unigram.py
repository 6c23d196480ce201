"""A unigram language-model tokenizer (Kudo 2018), trained by EM and pruning, with byte fallback.

Kudo's unigram model (arXiv:1804.10959, sec. 3) gives every vocabulary piece x a probability
p(x) and scores a segmentation s = (x_1, ..., x_m) of a word by the product of its pieces'
probabilities; a word's likelihood sums over all its segmentations,

    P(word) = Σ_s Π_i p(x_i),

and the tokenizer outputs the most likely one, found by Viterbi over the lattice of pieces that
match the word (best[j] = max_i best[i] + log p(word[i:j])). Training maximises the corpus
likelihood by EM: the E-step runs forward-backward on each word's lattice to get each piece's
expected count, the M-step sets p(x) ∝ expected count. Starting from a large seed vocabulary
(every frequent substring), each round drops the pieces whose removal costs the corpus least,
estimated as expected count × (log p(x) - log p(best segmentation of x without x)), keeping a
fraction ``shrink`` (SentencePiece's 0.75; Kudo and Richardson 2018, arXiv:1808.06226) until
the target size. Single characters covering 99.95% of the text (SentencePiece's default
character coverage) are never pruned.

BPE builds its vocabulary bottom up by merging; the unigram model prunes top down and keeps a
probability for every segmentation, which is what lets it sample several segmentations of one
word in training (subword regularisation). Both here split text into GPT-2 chunks first and
never cross a chunk, so the two are compared on equal terms.

A character the vocabulary lacks has two fates. Without fallback it becomes <unk>, and the text
is lost. With byte fallback (SentencePiece's ``byte_fallback``, used by LLaMA: Touvron et al.
2023, arXiv:2302.13971, sec. 2.1) it is spelled in its UTF-8 bytes, and the 256 byte tokens
count against the vocabulary size.

Home: chapters/02_data.ipynb, section "Unigram tokenizers and byte fallback".
"""

from __future__ import annotations

import collections

import numpy as np

from . import bpe
from .lattice import Lattice

N_BYTES = 256
UNK = "\u2047"  # what an unknown character decodes to (SentencePiece's " ⁇ ")
CHARACTER_COVERAGE = 0.9995  # SentencePiece's default: the characters kept as pieces
UNKNOWN_PENALTY = 10.0  # an unknown character scores log p_min - 10 (SentencePiece's kUnkPenalty)


def viterbi_segment(word: str, log_probs: dict[str, float]) -> list[str]:
    """The most likely segmentation of ``word`` into pieces of ``log_probs`` (natural-log
    probabilities): maximise Σ log p(x_i) by dynamic programming over the end positions.

    >>> viterbi_segment("hello", {"h": -3.0, "e": -3.0, "l": -3.0, "o": -3.0, "hell": -5.0,
    ...                           "he": -2.0, "llo": -2.5})
    ['he', 'llo']
    """
    if not word:
        return []
    n, longest = len(word), max(map(len, log_probs), default=0)
    best = [0.0] + [-np.inf] * n
    back = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(max(0, j - longest), j):
            lp = log_probs.get(word[i:j])
            if lp is not None and best[i] + lp > best[j]:
                best[j], back[j] = best[i] + lp, i
    if best[n] == -np.inf:
        raise ValueError(f"word {word!r} cannot be segmented: a character has no piece")
    out, j = [], n
    while j > 0:
        out.append(word[back[j] : j])
        j = back[j]
    return out[::-1]


class UnigramTokenizer:
    """A unigram-LM tokenizer: ``pieces`` and their natural-log probabilities ``log_probs``.

    Ids: with byte fallback, 0-255 are the bytes and pieces follow; without, 0 is <unk>.

    >>> tok = train_sweep(["low lower lowest"] * 5 + ["newer newest"] * 3, [290])[290]
    >>> tok.decode(tok.encode("lowest newer")) == "lowest newer", tok.vocab_size
    (True, 290)
    """

    def __init__(self, pieces: list[str], log_probs: np.ndarray, *, byte_fallback: bool) -> None:
        self.pieces, self.log_probs = list(pieces), np.asarray(log_probs, dtype=float)
        self.byte_fallback = byte_fallback
        self.n_special = N_BYTES if byte_fallback else 1
        self.index = {p: i for i, p in enumerate(self.pieces)}
        self.max_len = max(map(len, self.pieces))
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return self.n_special + len(self.pieces)

    def _encode_chunks(self, chunks: list[str]) -> None:
        lp = np.append(self.log_probs, self.log_probs.min() - UNKNOWN_PENALTY)
        unk = len(self.pieces)
        paths, _ = Lattice.build(chunks, self.index, self.max_len, unk).best_paths(lp)
        for chunk, path in zip(chunks, paths, strict=True):
            ids, pos = [], 0
            for k in path:  # the unknown piece spans one character
                if k != unk:
                    ids.append(self.n_special + k)
                elif self.byte_fallback:
                    ids.extend(chunk[pos].encode("utf-8"))
                else:
                    ids.append(0)
                pos += len(self.pieces[k]) if k != unk else 1
            self._cache[chunk] = ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text: its GPT-2 chunks, each segmented by Viterbi (cached)."""
        split = [bpe.GPT2_SPLIT.findall(t) for t in texts]
        new = list(dict.fromkeys(c for cs in split for c in cs if c not in self._cache))
        if new:
            self._encode_chunks(new)
        return [[i for c in cs for i in self._cache[c]] for cs in split]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        return self.encode_batch([text])[0]

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``; <unk> becomes ⁇ and stray bytes U+FFFD."""
        out, raw = [], bytearray()
        for i in ids:
            if self.byte_fallback and i < N_BYTES:
                raw.append(i)
                continue
            out.append(raw.decode("utf-8", errors="replace"))
            raw.clear()
            out.append(UNK if i < self.n_special else self.pieces[i - self.n_special])
        out.append(raw.decode("utf-8", errors="replace"))
        return "".join(out)


def train_sweep(
    texts: list[str], vocab_sizes: list[int], *, byte_fallback: bool = True, **options
) -> dict[int, UnigramTokenizer]:
    """Unigram tokenizers of each vocabulary size (special tokens included) from one pruning
    run on ``texts`` (:func:`prune_run`, whose keyword ``options`` it passes on).

    >>> sorted(train_sweep(["a rose is a rose is a rose"] * 4, [264, 270]))
    [264, 270]
    """
    n_special = N_BYTES if byte_fallback else 1
    run = prune_run(texts, [int(v) - n_special for v in vocab_sizes], **options)
    return {
        n + n_special: UnigramTokenizer(p, lp, byte_fallback=byte_fallback)
        for n, (p, lp) in run.items()
    }


def prune_run(
    texts: list[str],
    n_pieces: list[int],
    *,
    max_piece_chars: int = 8,
    seed_factor: float = 4.0,
    shrink: float = 0.75,
    n_em: int = 2,
) -> dict[int, tuple[list[str], np.ndarray]]:
    """The pieces and log probabilities at each size of ``n_pieces``, from one run: a seed of
    the ``seed_factor`` × (largest size) most frequent substrings (by count × length, up to
    ``max_piece_chars``) and the covering characters, ``n_em`` EM steps a round, each round
    keeping ``shrink`` of the pieces, a snapshot as the run passes each size. The run does not
    depend on byte fallback (unknown characters are scored alike), so one run serves a
    tokenizer of V pieces with it (V + 256 tokens) and without it (V + 1)."""
    chunks = bpe.chunk_counts(texts)
    words = list(chunks)
    weights = np.array([chunks[w] for w in words], dtype=float)
    chars: collections.Counter[str] = collections.Counter()
    subs: collections.Counter[str] = collections.Counter()
    for w, n in chunks.items():
        for i in range(len(w)):
            chars[w[i]] += n
            for j in range(i + 2, min(len(w), i + max_piece_chars) + 1):
                subs[w[i:j]] += n
    ranked = chars.most_common()
    freq = np.array([n for _, n in ranked], dtype=float) / sum(chars.values())
    before = np.cumsum(freq) - freq  # the share of the text covered by more frequent characters
    alphabet = [c for (c, _), f in zip(ranked, before, strict=True) if f < CHARACTER_COVERAGE]
    known = set(alphabet)
    targets = sorted({int(v) for v in n_pieces}, reverse=True)
    if not targets or targets[-1] < len(alphabet):
        raise ValueError(
            f"each size must leave room for the {len(alphabet)} characters that cover the text "
            f"(n_pieces >= {len(alphabet)}, vocab_size >= that plus the special tokens); got "
            f"n_pieces={n_pieces!r}"
        )
    n_seed = int(seed_factor * targets[0])
    frequent = [(s, n) for s, n in subs.items() if n > 1 and known.issuperset(s)]
    seeds = [s for s, _ in sorted(frequent, key=lambda t: (-t[1] * len(t[0]), t[0]))][:n_seed]
    if len(alphabet) + len(seeds) < targets[0]:
        raise ValueError(
            f"the texts have only {len(alphabet) + len(seeds)} candidate pieces (characters and "
            f"substrings seen twice), fewer than n_pieces={targets[0]}"
        )
    universe = alphabet + seeds  # every piece the run can hold, ids fixed for the whole run
    index = {p: i for i, p in enumerate(universe)}
    n_u, n_a = len(universe), len(alphabet)
    corpus = Lattice.build(words, index, max_piece_chars, n_u)  # looked up once, then filtered
    own = Lattice.build(seeds, index, max_piece_chars, n_u)
    whole = own.end - own.start == own.lens[own.word]
    own = Lattice(own.lens, *(a[~whole] for a in (own.word, own.start, own.end, own.piece)))
    alive = np.ones(n_u + 1, dtype=bool)  # the last slot: the unknown piece, always kept
    counts = np.array([chars[p] if len(p) == 1 else subs[p] for p in universe], dtype=float)
    out: dict[int, tuple[list[str], np.ndarray]] = {}
    while True:
        ids = np.flatnonzero(alive[:-1])
        new_id = np.cumsum(alive) - 1
        lat = corpus.subset(alive, new_id)
        c = counts[ids]
        for _ in range(n_em):
            lp = np.log(c / c.sum())
            lp_unk = np.append(lp, lp.min() - UNKNOWN_PENALTY)
            c = np.maximum(lat.expected_counts(lp_unk, weights, ids.size + 1)[:-1], 1e-9)
        lp = np.log(c / c.sum())
        counts[ids] = c
        if ids.size == targets[0]:
            out[targets.pop(0)] = ([universe[i] for i in ids], lp)
            if not targets:
                return out
        keep = max(targets[0], int(shrink * ids.size))
        # the likelihood each multi-character piece carries: count x (log p(x) - log p(best
        # split of x without x)); the alphabet always stays
        lp_all = np.full(n_u + 1, -np.inf)
        lp_all[ids] = lp
        alt = own.subset(alive, np.arange(n_u + 1)).best_scores(lp_all)
        multi = ids[ids >= n_a]
        loss = counts[multi] * (lp_all[multi] - alt[multi - n_a])
        drop = multi[np.argsort(-loss, kind="stable")[keep - n_a :]]
        alive[drop] = False


def round_trip_stats(ids: list[list[int]], decode, texts: list[str]) -> dict[str, float]:
    """Tokens per byte of ``texts`` (their token ids ``ids``), the fraction of their bytes that
    ``decode`` does not give back (characters it returns as something else), and the fraction of
    texts that come back whole. A decoder must keep the character count (one ⁇ per lost one).

    >>> tok = UnigramTokenizer(["a", "b", "ab"], np.log([0.3, 0.3, 0.4]), byte_fallback=False)
    >>> round_trip_stats([tok.encode("abé")], tok.decode, ["abé"])
    {'tokens_per_byte': 0.5, 'lost_byte_fraction': 0.5, 'texts_intact': 0.0}
    """
    n_bytes = lost = intact = 0
    for t, i in zip(texts, ids, strict=True):
        back = decode(i)
        if len(back) != len(t):
            raise ValueError(
                f"decode changed the character count of a text ({len(t)} to {len(back)})"
            )
        n_bytes += len(t.encode("utf-8"))
        if back == t:  # the common case, compared at C speed
            intact += 1
        else:
            lost += sum(len(a.encode("utf-8")) for a, b in zip(t, back, strict=True) if a != b)
    if n_bytes == 0:
        raise ValueError("texts must hold at least one byte")
    return {
        "tokens_per_byte": sum(map(len, ids)) / n_bytes,
        "lost_byte_fraction": lost / n_bytes,
        "texts_intact": intact / len(texts),
    }
