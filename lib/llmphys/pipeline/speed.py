"""How fast the pipeline's kernels are against the libraries people use, and how that scales.

A speed claim is a statement about a machine, a corpus and a size. ``make bench``
(``tools/bench.py``) times the book's MinHash-LSH near-dedup against ``datasketch``'s bulk
API (``MinHash.bulk`` and an LSH insertion session) and the book's BPE trainer against
Hugging Face ``tokenizers`` on one thread, on the same generated text at three sizes each,
each run in a fresh process so that its peak memory is its own. It writes the raw timings,
the peak memory and a description of the machine to ``data/bench/pipeline.toml``; this
module holds the workloads, the summaries and the loader the data chapter reads.

The text comes from ``zipf_text``: a Zipf vocabulary without a cap, so the number of
distinct words, and with it a tokenizer's work, keeps growing with the corpus (Heaps' law).

How a cost grows with size n is summarised by the exponent of a least-squares fit
t = c n^alpha in log-log space (alpha = 1: linear). The ratio is the reference's median
time over ours: above 1 ours is faster.

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from .. import specs
from . import bpe, dedup, text, zipf_text

DEDUP_SIZES = (1_000, 10_000, 50_000)  # documents
BPE_SIZES_BYTES = (0.25e6, 4e6, 64e6)  # bytes of text (ASCII: also characters)
BPE_VOCAB = 2048  # 256 bytes + 1,792 merges
N_HASHES, N_BANDS, N_ROWS, SHINGLE_K = 112, 14, 8, 5  # FineWeb's setting (14 x 8), k = 5
TASKS = ("dedup", "bpe")
IMPLS = ("llmphys", "reference")
REFERENCE = {"dedup": "datasketch", "bpe": "tokenizers"}


def dedup_corpus(n_docs: int, *, seed: int = 0) -> list[str]:
    """The dedup benchmark's documents: 200-1000 Zipf words, 10% edited copies."""
    return zipf_text.documents(n_docs, rng=np.random.default_rng(seed))


def bpe_corpus(n_bytes: float, *, seed: int = 0) -> list[str]:
    """The BPE benchmark's text: documents of Zipf words totalling ``n_bytes`` bytes."""
    return zipf_text.corpus(n_bytes, rng=np.random.default_rng(seed))


def llmphys_near_dedup(texts: list[str]) -> np.ndarray:
    """Candidate pairs (i < j) of the book's numpy MinHash-LSH: shingles, signatures, bands."""
    flat, offsets = dedup.shingles(texts, k=SHINGLE_K)
    perms = dedup.permutations(N_HASHES, rng=np.random.default_rng(0))
    sig = dedup.signatures(flat, offsets, perms)
    return dedup.candidate_pairs(sig, n_bands=N_BANDS, n_rows=N_ROWS)


def datasketch_near_dedup(texts: list[str]) -> np.ndarray:
    """The same with ``datasketch``: shingle strings hashed by its default SHA-1, ``MinHash.bulk``,
    an ``MinHashLSH`` insertion session and one query per document (its fastest documented path).
    """
    from datasketch import MinHash, MinHashLSH

    k = SHINGLE_K

    def shingle_bytes(t: str) -> list[bytes]:
        w = text.words(t)
        return [" ".join(w[j : j + k]).encode() for j in range(len(w) - k + 1)]

    hashes = MinHash.bulk((shingle_bytes(t) for t in texts), num_perm=N_HASHES)
    lsh = MinHashLSH(num_perm=N_HASHES, params=(N_BANDS, N_ROWS))
    with lsh.insertion_session() as session:
        for i, m in enumerate(hashes):
            session.insert(i, m, check_duplication=False)
    pairs = {(min(i, j), max(i, j)) for i, m in enumerate(hashes) for j in lsh.query(m) if j != i}
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def llmphys_bpe(texts: list[str]) -> int:
    """Train the book's BPE to ``BPE_VOCAB`` tokens (no cache); returns the number of merges."""
    bpe._TRAINED.clear()
    return len(bpe.BytePairTokenizer().train(texts, BPE_VOCAB).merges)


def tokenizers_bpe(texts: list[str]) -> int:
    """Train Hugging Face's byte-level BPE to ``BPE_VOCAB``.

    Set RAYON_NUM_THREADS=1 for one thread.
    """
    return bpe.hf_byte_level_bpe(texts, BPE_VOCAB).get_vocab_size() - 256


def workload(task: str, impl: str):
    """(make the input from a size, the function to time) for ``task`` and ``impl``."""
    if task not in TASKS:
        raise ValueError(f"task={task!r} is unknown; allowed: {', '.join(TASKS)}")
    if impl not in IMPLS:
        raise ValueError(f"impl={impl!r} is unknown; allowed: {', '.join(IMPLS)}")
    make = (lambda n: dedup_corpus(int(n))) if task == "dedup" else (lambda n: bpe_corpus(n))
    fn = {
        ("dedup", "llmphys"): llmphys_near_dedup,
        ("dedup", "reference"): datasketch_near_dedup,
        ("bpe", "llmphys"): llmphys_bpe,
        ("bpe", "reference"): tokenizers_bpe,
    }[task, impl]
    return make, fn


def growth_exponent(sizes, times_s) -> float:
    """alpha of the least-squares fit log t = log c + alpha log n (1 means linear cost).

    >>> round(growth_exponent([1, 10, 100], [2.0, 20.0, 200.0]), 6)
    1.0
    """
    n, t = np.log(np.asarray(sizes, float)), np.log(np.asarray(times_s, float))
    if n.size < 2 or n.size != t.size:
        raise ValueError(f"need >= 2 matching sizes and times, got {n.size} and {t.size}")
    return float(np.polyfit(n, t, 1)[0])


@dataclasses.dataclass(frozen=True, kw_only=True)
class Row:
    """One size of one task: raw timings (s) and peak memory (bytes) of both implementations.

    ``*_wall_s`` are wall-clock seconds and ``*_cpu_s`` the process's CPU seconds of the same
    runs. Both implementations run on one thread, so on an idle machine the two agree; on a
    shared machine the wall clock also counts the time other processes held the core, so the
    ratio is taken on CPU time. ``*_peak_bytes`` is the run's peak resident memory minus its
    resident memory once the input was built: what the algorithm itself added.
    """

    task: str
    size: float
    size_unit: str
    llmphys_wall_s: tuple[float, ...]
    llmphys_cpu_s: tuple[float, ...]
    reference_wall_s: tuple[float, ...]
    reference_cpu_s: tuple[float, ...]
    llmphys_peak_bytes: float
    reference_peak_bytes: float
    llmphys_output: int
    reference_output: int

    @property
    def ratio(self) -> float:
        """Reference median CPU time over ours: how many times faster ours is (above 1: faster)."""
        return statistics.median(self.reference_cpu_s) / statistics.median(self.llmphys_cpu_s)

    @property
    def memory_ratio(self) -> float:
        """Our peak memory over the reference's (below 1: ours uses less)."""
        return self.llmphys_peak_bytes / self.reference_peak_bytes


@dataclasses.dataclass(frozen=True, kw_only=True)
class Table:
    """The benchmark file: the machine it ran on, library versions and one Row per size."""

    machine: dict
    versions: dict
    rows: tuple[Row, ...]
    n_repeats: int
    date: str

    def task(self, task: str) -> tuple[Row, ...]:
        """The rows of ``task``, smallest size first."""
        if task not in TASKS:
            raise ValueError(f"task={task!r} is unknown; allowed: {', '.join(TASKS)}")
        return tuple(sorted((r for r in self.rows if r.task == task), key=lambda r: r.size))

    def exponents(self, task: str) -> dict[str, float]:
        """Fitted growth exponent of each implementation's median time over the task's sizes."""
        rows = self.task(task)
        sizes = [r.size for r in rows]
        return {
            impl: growth_exponent(
                sizes, [statistics.median(getattr(r, f"{impl}_cpu_s")) for r in rows]
            )
            for impl in IMPLS
        }


_ROW_FIELDS = {f.name for f in dataclasses.fields(Row)}


def default_path() -> Path:
    """data/bench/pipeline.toml of the book (LLMPHYS_DATA overrides the data folder)."""
    base = os.environ.get("LLMPHYS_DATA")
    root = Path(base) if base else Path(__file__).resolve().parents[3] / "data"
    return root / "bench" / "pipeline.toml"


def load(path: str | os.PathLike | None = None) -> Table:
    """Read the table ``make bench`` wrote; unknown or missing fields are an error naming them.

    >>> t = load()
    >>> [r.size for r in t.task("dedup")]
    [1000.0, 10000.0, 50000.0]
    """
    path = Path(path) if path is not None else default_path()
    raw = specs.read_toml(path)
    for key in ("machine", "versions", "rows", "n_repeats", "date"):
        if key not in raw:
            raise KeyError(f"{path}: missing top-level field {key!r}")
    rows = []
    for i, r in enumerate(raw["rows"]):
        missing, unknown = _ROW_FIELDS - set(r), set(r) - _ROW_FIELDS
        if missing or unknown:
            raise KeyError(
                f"{path}: row {i} has missing fields {sorted(missing)} "
                f"and unknown fields {sorted(unknown)}"
            )
        fields: dict[str, Any] = {
            k: (
                tuple(float(x) for x in v)
                if k.endswith(("_wall_s", "_cpu_s"))
                else float(v)
                if k in ("size",) or k.endswith("_bytes")
                else v
            )
            for k, v in r.items()
        }
        rows.append(Row(**fields))  # the field names were checked against Row just above
    return Table(
        machine=dict(raw["machine"]),
        versions=dict(raw["versions"]),
        rows=tuple(rows),
        n_repeats=int(raw["n_repeats"]),
        date=str(raw["date"]),
    )


TABLE_HEADER = ("task", "size", "llmphys (s)", "reference (s)", "ratio", "peak memory, ours / ref")


def table_rows(table: Table) -> list[list[str]]:
    """One formatted row per (task, size): median CPU seconds of each side, the ratio and the
    memory ratio, to the digits the timings support (3 significant; ratios to 0.1).

    >>> table_rows(load())[0][:2]
    ['near-dedup vs datasketch', '1,000 documents']
    """
    out = []
    for task in TASKS:
        for r in table.task(task):
            size = (
                f"{r.size:,.0f} documents" if r.size_unit == "documents" else f"{r.size / 1e6:g} MB"
            )
            label = {"dedup": "near-dedup vs datasketch", "bpe": "BPE training vs tokenizers"}[task]
            out.append(
                [
                    label,
                    size,
                    f"{statistics.median(r.llmphys_cpu_s):.3g}",
                    f"{statistics.median(r.reference_cpu_s):.3g}",
                    f"{r.ratio:.1f}x",
                    f"{r.memory_ratio:.2f}",
                ]
            )
    return out
