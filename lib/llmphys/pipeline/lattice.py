"""The lattice of every vocabulary piece inside a list of words, and dynamic programming on it.

A word w of n characters and a vocabulary V define a graph: nodes 0..n (the cut points), and an
edge i -> j for each piece w[i:j] in V. A segmentation of w is a path from 0 to n; under a
unigram model its log probability is the sum of its edges' log p(x). Three recursions over the
end position j give the unigram tokenizer (``pipeline.unigram``) everything it needs:

    Viterbi   best[j]  = max_i  best[i]  + log p(w[i:j])     the most likely segmentation
    forward   alpha[j] = logsumexp_i alpha[i] + log p(w[i:j])   log P(w), summed over paths
    backward  beta[i]  = logsumexp_j log p(w[i:j]) + beta[j]

and alpha[i] + log p(w[i:j]) + beta[j] - log P(w) is the posterior log probability that a
segmentation uses the edge i -> j: summed over the corpus, a piece's expected count (the E-step
of Kudo 2018, arXiv:1804.10959, sec. 3.2). Every word of a batch is processed at once: the
edges are numpy arrays, and each step of a recursion handles all edges that end (or start) at
one position, in every word.

Home: chapters/02_data.ipynb, section "Unigram tokenizers and byte fallback".
"""

from __future__ import annotations

import numpy as np


class Lattice:
    """Every piece occurrence in a list of words, as arrays of edges (word, start, end, piece).

    >>> lat = Lattice.build(["ab"], {"a": 0, "b": 1, "ab": 2}, 2, 3)
    >>> lp = np.log([0.25, 0.25, 0.5, 1e-9])   # the last entry: the unknown piece
    >>> paths, best = lat.best_paths(lp)
    >>> paths, round(float(np.exp(best[0])), 4)   # "ab" (0.5) beats "a" "b" (0.0625)
    ([[2]], 0.5)
    >>> round(float(np.exp(lat.forward(lp, viterbi=False)[0][lat.last[0]])), 4)   # P = sum
    0.5625
    """

    def __init__(self, lens: np.ndarray, word, start, end, piece) -> None:
        self.lens, self.word, self.start, self.end, self.piece = lens, word, start, end, piece
        self.offset = np.concatenate([[0], np.cumsum(lens + 1)[:-1]]).astype(np.int64)
        self.last = self.offset + lens  # each word's final node
        self.n_nodes = int(lens.sum() + len(lens))
        self.src = self.offset[word] + start
        self.dst = self.offset[word] + end
        self.by_end = [np.flatnonzero(end == j) for j in range(int(lens.max(initial=0)) + 1)]
        self.by_start = [np.flatnonzero(start == j) for j in range(len(self.by_end))]

    @classmethod
    def build(cls, words: list[str], index: dict[str, int], max_len: int, unk: int) -> Lattice:
        """Look up every substring of up to ``max_len`` characters; a character without a piece
        gets an edge to the piece ``unk``."""
        edges: list[tuple[int, int, int, int]] = []  # (word, start, end, piece)
        add = edges.append
        for c, word in enumerate(words):
            n = len(word)
            for i in range(n):
                if word[i] not in index:  # an unknown character
                    add((c, i, i + 1, unk))
                for j in range(i + 1, min(n, i + max_len) + 1):
                    p = index.get(word[i:j])
                    if p is not None:
                        add((c, i, j, p))
        lens = np.array([len(x) for x in words], np.int64)
        arr = np.array(edges, dtype=np.int64).reshape(-1, 4).T
        return cls(lens, arr[0], arr[1], arr[2], arr[3])

    def subset(self, keep: np.ndarray, new_id: np.ndarray) -> Lattice:
        """The lattice of the edges where ``keep[piece]``, with pieces renumbered ``new_id``."""
        m = keep[self.piece]
        return Lattice(self.lens, self.word[m], self.start[m], self.end[m], new_id[self.piece[m]])

    def forward(self, lp: np.ndarray, *, viterbi: bool) -> tuple[np.ndarray, np.ndarray]:
        """Log forward sums (or Viterbi maxima) at every node, and each node's best edge."""
        a = np.full(self.n_nodes, -np.inf)
        a[self.offset] = 0.0
        back = np.full(self.n_nodes, -1, np.int64)
        for idx in self.by_end[1:]:
            v = a[self.src[idx]] + lp[self.piece[idx]]
            if viterbi:
                np.maximum.at(a, self.dst[idx], v)
                win = idx[v == a[self.dst[idx]]]
                nodes, first = np.unique(self.dst[win], return_index=True)
                back[nodes] = win[first]
            else:
                np.logaddexp.at(a, self.dst[idx], v)
        return a, back

    def expected_counts(self, lp: np.ndarray, weights: np.ndarray, n_pieces: int) -> np.ndarray:
        """Forward-backward: each piece's expected count over the words (weighted by count)."""
        a, _ = self.forward(lp, viterbi=False)
        b = np.full(self.n_nodes, -np.inf)
        b[self.last] = 0.0
        for idx in reversed(self.by_start):
            np.logaddexp.at(b, self.src[idx], lp[self.piece[idx]] + b[self.dst[idx]])
        z = a[self.last][self.word]  # log P(word) of each edge's word
        post = np.exp(a[self.src] + lp[self.piece] + b[self.dst] - z) * weights[self.word]
        return np.bincount(self.piece, weights=post, minlength=n_pieces)

    def best_scores(self, lp: np.ndarray) -> np.ndarray:
        """Each word's best log probability (Viterbi, without the paths)."""
        a = np.full(self.n_nodes, -np.inf)
        a[self.offset] = 0.0
        for idx in self.by_end[1:]:
            np.maximum.at(a, self.dst[idx], a[self.src[idx]] + lp[self.piece[idx]])
        return a[self.last]

    def best_paths(self, lp: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
        """Viterbi piece ids of every word and each word's best log probability."""
        a, back = self.forward(lp, viterbi=True)
        paths = []
        for c in range(len(self.offset)):
            node, out = int(self.last[c]), []
            while node > self.offset[c]:
                e = back[node]
                out.append(int(self.piece[e]))
                node = int(self.src[e])
            paths.append(out[::-1])
        return paths, a[self.last]
