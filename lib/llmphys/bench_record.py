"""The record of `make bench` (tools/bench.py): one measured roofline with its machine.

``load_record`` reads ``data/bench/roofline.toml`` through ``specs.read_toml`` and checks its
keys; :class:`RooflineRecord` answers what the chapter asks of it (a run at a thread count, the
in-cache dot control). ``benchmark`` re-exports these.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from . import specs
from .bench_streams import STREAM_KERNELS


def record_file() -> Path:
    """Where `make bench` (tools/bench.py) writes the measured roofline with its machine:
    ``bench/roofline.toml`` in the registries' folder (``specs.data_dir()``, which follows
    $LLMPHYS_DATA, so a plain install in Colab reads the clone's file)."""
    return specs.data_dir() / "bench" / "roofline.toml"


_RUN_KEYS = {
    "n_threads", "peak_flop_per_s", "bytes_per_s", "fill_bytes_per_s", "stream_bytes_per_s",
    "ridge", "stream_array_bytes", "kernels",
}  # fmt: skip
_KERNEL_KEYS = {"name", "intensity", "bound", "time_s", "predicted_time_s", "error"}
_MACHINE_KEYS = {"cpu", "n_cpus", "l3_cache", "avx512", "memory_bytes", "platform", "python"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class RooflineRecord:
    """One `make bench` run: when, on what (``machine``, ``versions``), and at each thread
    count the ceilings and every held-out kernel (``runs``: dicts as measured_roofline's,
    the kernels with name, intensity, bound, time_s, predicted_time_s and error); and the dot
    product at one thread on arrays that fit in cache (``in_cache``: ``array_bytes``,
    ``dot_bytes_per_s``), the control that tells a fill-bound stream from a compute-bound one."""

    date: str
    n_rounds: int
    machine: dict[str, Any]
    versions: dict[str, str]
    in_cache: dict[str, float]
    runs: tuple[dict[str, Any], ...]

    def run(self, n_threads: int) -> dict[str, Any]:
        """The run at ``n_threads`` threads."""
        for r in self.runs:
            if r["n_threads"] == n_threads:
                return r
        have = ", ".join(str(r["n_threads"]) for r in self.runs)
        raise KeyError(f"n_threads={n_threads} is not in the record; allowed: {have}")

    def dot_cache_speedup(self) -> float:
        """How many times faster the one-thread dot streams from cache than from DRAM.

        A reduction held by its chain of dependent additions would run as slowly in cache;
        one held by the lines it reads runs many times faster there.
        """
        one = self.run(1)
        dot = next(k for k in one["kernels"] if k["name"] == "dot")
        n = one["stream_array_bytes"] / 8.0
        dram_bytes_per_s = STREAM_KERNELS["dot"].dram_bytes * n / dot["time_s"]
        return float(self.in_cache["dot_bytes_per_s"] / dram_bytes_per_s)

    @property
    def machine_name(self) -> str:
        """The machine in words: CPU model, cores, L3, BLAS."""
        m = self.machine
        simd = ", AVX-512" if m["avx512"] else ""
        return (
            f"{m['cpu']} ({m['n_cpus']} cores{simd}, {m['l3_cache']} L3 as reported; "
            f"numpy {self.versions['numpy']}, {self.versions['blas']})"
        )


def _check_keys(where: str, got: dict, required: set[str], optional: set[str] | None = None):
    missing, unknown = required - set(got), set(got) - required - (optional or set())
    if missing or unknown:
        raise KeyError(
            f"{where}: missing {sorted(missing) or 'nothing'}, unknown {sorted(unknown) or 'none'}"
        )


def load_record(path: str | os.PathLike | None = None) -> RooflineRecord:
    """Read the roofline record that `make bench` wrote (default ``record_file()``).

    >>> r = load_record()
    >>> sorted(k["name"] for k in r.run(1)["kernels"])[:3]
    ['GEMM 1024x1024x1024', 'GEMM 4096x512x1024', 'GEMV']
    """
    path = Path(path) if path is not None else record_file()
    t = specs.read_toml(path)
    _check_keys(str(path), t, {"date", "n_rounds", "machine", "versions", "in_cache", "runs"})
    _check_keys(f"{path} [in_cache]", t["in_cache"], {"array_bytes", "dot_bytes_per_s"})
    _check_keys(f"{path} [machine]", t["machine"], _MACHINE_KEYS, {"l2_cache_per_core",
                "load_average_at_start"})  # fmt: skip
    _check_keys(f"{path} [versions]", t["versions"], {"numpy", "blas"}, {"scipy"})
    for i, run in enumerate(t["runs"]):
        _check_keys(f"{path} runs[{i}]", run, _RUN_KEYS)
        for j, k in enumerate(run["kernels"]):
            _check_keys(f"{path} runs[{i}].kernels[{j}]", k, _KERNEL_KEYS)
    return RooflineRecord(
        date=t["date"],
        n_rounds=t["n_rounds"],
        machine=dict(t["machine"]),
        versions=dict(t["versions"]),
        in_cache=dict(t["in_cache"]),
        runs=tuple(t["runs"]),
    )
