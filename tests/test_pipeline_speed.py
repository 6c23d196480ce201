"""Speed targets of issue 21: a small live check, and the recorded `make bench` table.

The live checks time ours and the reference on the same input, interleaved, taking each
side's best CPU time of three runs, and assert the ratio with a wide margin: CPU time counts
only this process's work, so other jobs on a shared machine move it far less than the wall
clock, but they still share caches and memory bandwidth. The full-size targets are checked
on the table that `make bench` recorded, with the machine it ran on.
"""

import os
import time

import pytest

os.environ.setdefault("RAYON_NUM_THREADS", "1")       # HF tokenizers on one thread, as ours

from llmphys.pipeline import speed


def _best_cpu_s(fn, data, n=3):
    best = float("inf")
    for _ in range(n):
        c0 = time.process_time()
        fn(data)
        best = min(best, time.process_time() - c0)
    return best


def test_near_dedup_beats_datasketch_with_margin_at_1000_documents():
    # Target: >= 3x at 20k-50k documents (the recorded table below). At 1,000 documents the
    # recorded ratio is about 6x; asserting 2x leaves room for a busy machine.
    docs = speed.dedup_corpus(1000)
    ours = _best_cpu_s(speed.llmphys_near_dedup, docs, n=2)
    ref = _best_cpu_s(speed.datasketch_near_dedup, docs, n=2)
    print(f"\nnear-dedup, 1,000 documents: llmphys {ours:.3f} s, datasketch {ref:.3f} s CPU, "
          f"ratio {ref / ours:.1f}x")
    assert ref / ours > 2.0


def test_bpe_training_keeps_up_with_tokenizers_at_a_quarter_megabyte():
    # Target: >= 0.5x at 0.25 MB. Measured 0.7-1.2x while writing this; 0.35x is the margin.
    text = speed.bpe_corpus(0.25e6)
    ours = _best_cpu_s(speed.llmphys_bpe, text, n=2)
    ref = _best_cpu_s(speed.tokenizers_bpe, text, n=2)
    print(f"\nBPE training, 0.25 MB: llmphys {ours:.3f} s, tokenizers {ref:.3f} s CPU, "
          f"ratio {ref / ours:.2f}x")
    assert ref / ours > 0.35
    assert speed.llmphys_bpe(text) == speed.tokenizers_bpe(text)    # same number of merges


@pytest.fixture(scope="module")
def table():
    return speed.load()


def test_recorded_table_has_three_sizes_per_task_and_its_machine(table):
    assert [r.size for r in table.task("dedup")] == list(speed.DEDUP_SIZES)
    assert [r.size for r in table.task("bpe")] == list(speed.BPE_SIZES_BYTES)
    assert table.machine["n_cpus"] >= 1 and table.machine["cpu"]
    assert {"numpy", "datasketch", "tokenizers"} <= set(table.versions)
    for r in table.rows:
        assert len(r.llmphys_cpu_s) == len(r.reference_cpu_s) == table.n_repeats


def test_recorded_dedup_meets_the_targets(table):
    # Issue 21: >= 3x datasketch's bulk API at 20k-50k documents with peak memory <= 1.5x.
    big = [r for r in table.task("dedup") if r.size >= 20_000]
    assert big and all(r.ratio >= 3.0 and r.memory_ratio <= 1.5 for r in big)
    # Both sides find the planted copies: candidate-pair counts agree within 10% (the hash
    # functions differ, so pairs near the LSH threshold differ).
    for r in table.task("dedup"):
        assert r.llmphys_output == pytest.approx(r.reference_output, rel=0.1)


def test_recorded_bpe_meets_the_targets(table):
    # Issue 21: >= 1x tokenizers on one thread from 4 MB up, >= 0.5x at 0.25 MB.
    for r in table.task("bpe"):
        assert r.ratio >= (1.0 if r.size >= 4e6 else 0.5), (r.size, r.ratio)
        assert r.llmphys_output == r.reference_output        # same number of merges learned


def test_recorded_costs_grow_about_linearly(table):
    # Fitted exponent of CPU time against size over a 50x (dedup) and 256x (BPE) range.
    # Fixed costs pull it below 1 at the small end; above 1.2 would mean super-linear work.
    for task in speed.TASKS:
        alpha = table.exponents(task)["llmphys"]
        print(f"{task}: llmphys cost ~ size^{alpha:.2f}")
        assert 0.6 < alpha < 1.2


def test_unknown_task_or_field_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="task"):
        speed.workload("sort", "llmphys")
    bad = tmp_path / "b.toml"
    bad.write_text('date = "x"\nn_repeats = 1\n[machine]\n[versions]\n[[rows]]\ntask = "dedup"\n')
    with pytest.raises(KeyError, match="missing fields"):
        speed.load(bad)
