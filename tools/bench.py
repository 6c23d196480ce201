"""`make bench`: time the pipeline's kernels against the reference libraries, and the roofline's
held-out kernels against their predictions, and record both tables with the machine.

    python tools/bench.py                       # both -> data/bench/pipeline.toml, roofline.toml
    python tools/bench.py --only roofline       # the roofline only (a minute or two)
    python tools/bench.py --quick --out /tmp/b.toml   # small pipeline sizes, for trying it out

The roofline part runs ``llmphys.benchmark.measured_roofline`` at one thread and at every
thread, and writes the ceilings and every held-out kernel's measured and predicted time to
data/bench/roofline.toml with the machine named (CPU model, cores, L3, AVX-512, numpy and its
BLAS build); ``llmphys.benchmark.load_record`` reads it back and chapter 4 quotes it.

Every (task, implementation, size) runs in a fresh Python process, which builds its input,
resets its peak-memory counter (Linux /proc/self/clear_refs), runs the kernel ``--repeats``
times and reports wall-clock and CPU seconds and its peak resident memory above the input's.
The first run of a case also imports the library it times (datasketch and tokenizers are
imported on first use), which is why the table's statistic is the median of the runs.
BLAS, OpenMP and Rayon (Hugging Face ``tokenizers``) are held to one thread, so the comparison
is one core against one core. The table is printed and written as TOML with the machine
description and library versions; ``llmphys.pipeline.speed.load`` reads it back.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONHASHSEED": "0"}


def _status_kb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1])
    raise KeyError(field)


def worker(task: str, impl: str, size: float, repeats: int) -> dict:
    """Run one case in this process; returns timings, memory and the kernel's output size."""
    from llmphys.pipeline import speed
    make, fn = speed.workload(task, impl)
    data = make(size)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")                    # reset VmHWM to the current resident size
        base_kb, linux = _status_kb("VmRSS"), True
    except OSError:
        base_kb, linux = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, False
    wall, cpu, out = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(data)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak_kb = _status_kb("VmHWM") if linux else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    n_out = len(out) if hasattr(out, "__len__") else int(out)
    return {"wall_s": wall, "cpu_s": cpu, "peak_bytes": (peak_kb - base_kb) * 1024.0,
            "output": n_out}


def run_case(task: str, impl: str, size: float, repeats: int) -> dict:
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": str(ROOT / "lib")}
    cmd = [sys.executable, __file__, "--worker", task, impl, repr(size), str(repeats)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{task}/{impl}/{size} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def machine() -> dict:
    """What the timings depend on: CPU model, cores, caches, memory, OS, Python, load."""
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "n_cpus": os.cpu_count() or 0}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
        info["cpu"] = next(x.split(":", 1)[1].strip() for x in cpuinfo
                           if x.startswith("model name"))
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        info["memory_bytes"] = next(float(x.split()[1]) * 1024.0 for x in meminfo
                                    if x.startswith("MemTotal"))
        llc = Path("/sys/devices/system/cpu/cpu0/cache/index3/size")
        if llc.exists():
            info["l3_cache"] = llc.read_text().strip()
        l2 = Path("/sys/devices/system/cpu/cpu0/cache/index2/size")
        if l2.exists():
            info["l2_cache_per_core"] = l2.read_text().strip()
    except (OSError, StopIteration):
        pass
    info.setdefault("cpu", platform.processor() or "unknown")
    info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info


def roofline_machine() -> tuple[dict, dict]:
    """The machine and library fields of the roofline record (benchmark.load_record's keys)."""
    import numpy as np
    import threadpoolctl
    info = machine()
    l3 = info.get("l3_cache", "")
    if l3.endswith("K") and l3[:-1].isdigit():
        l3 = f"{int(l3[:-1]) / 1024:g} MiB"
    flags = ""
    with contextlib.suppress(OSError, StopIteration):
        flags = next(x for x in Path("/proc/cpuinfo").read_text().splitlines()
                     if x.startswith("flags"))
    from llmphys import benchmark
    out = {"cpu": info["cpu"], "n_cpus": benchmark.n_cpus(), "l3_cache": l3 or "unknown",
           "avx512": " avx512f" in flags, "memory_bytes": info.get("memory_bytes", 0.0),
           "platform": info["platform"], "python": info["python"],
           "load_average_at_start": info["load_average_at_start"]}
    blas = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    blas_name = ", ".join(f"{i.get('internal_api')} {i.get('version')} "
                          f"({i.get('architecture')}, {i.get('threading_layer')})"
                          for i in blas) or "unknown BLAS"
    return out, {"numpy": np.__version__, "blas": blas_name, "scipy": metadata.version("scipy")}


def _sig(x: float) -> float:
    """Four significant digits: more than a timing on a shared machine can support."""
    return float(f"{float(x):.4g}")


def roofline(out: Path, n_rounds: int) -> None:
    """Measure the roofline at one thread and at all, print the tables, write the record."""
    import numpy as np

    from llmphys import benchmark
    mach, vers = roofline_machine()
    print(f"machine: {mach}\nversions: {vers}")
    runs = []
    for n in sorted({1, benchmark.n_cpus()}):
        r = benchmark.measured_roofline(rng=np.random.default_rng(0), n_threads=n,
                                        n_rounds=n_rounds)
        print(f"\n{n} thread(s): P = {r['peak_flop_per_s'] / 1e9:.1f} GFLOP/s, "
              f"W = {r['bytes_per_s'] / 1e9:.2f} GB/s, R = {r['fill_bytes_per_s'] / 1e9:.2f} "
              f"GB/s of fills, arrays of {r['stream_array_bytes'] / 2**20:.0f} MiB")
        print(f"{'kernel':22} {'FLOP/B':>8} {'bound':>8} {'measured ms':>12} "
              f"{'predicted ms':>12} {'error':>7}")
        for p in r["kernels"]:
            print(f"{p['name']:22} {p['intensity']:8.3f} {p['bound']:>8} "
                  f"{1e3 * p['time_s']:12.2f} {1e3 * p['predicted_time_s']:12.2f} "
                  f"{100 * p['error']:+6.0f}%")
        runs.append({k: r[k] for k in ("n_threads", "peak_flop_per_s", "bytes_per_s",
                                       "fill_bytes_per_s", "stream_bytes_per_s", "ridge",
                                       "stream_array_bytes")}
                    | {"kernels": [{k: p[k] for k in ("name", "intensity", "bound", "time_s",
                                                      "predicted_time_s", "error")}
                                   for p in r["kernels"]]})
    lines = ["# Written by `make bench` (tools/bench.py); read by llmphys.benchmark.load_record.",
             "# One run of benchmark.measured_roofline per thread count on the machine below:",
             "# rates in FLOP/s and bytes/s, times in seconds, error = predicted / measured - 1",
             "# (the median over rounds). Chapter 4 quotes it as this machine's, never as a law.",
             f"date = {_toml_value(datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d'))}",
             f"n_rounds = {n_rounds}", "", "[machine]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in mach.items()]
    lines += ["", "[versions]"] + [f"{k} = {_toml_value(v)}" for k, v in vers.items()]
    # The control for the dot product: the same kernel on arrays that stay in cache.
    cached = benchmark.dot_in_cache_bytes_per_s()
    print(f"dot in cache (2 x {benchmark.IN_CACHE_ARRAY_BYTES / 1024:.0f} KiB, one thread): "
          f"{cached / 1e9:.1f} GB/s")
    lines += ["", "[in_cache]", f"array_bytes = {_toml_value(benchmark.IN_CACHE_ARRAY_BYTES)}",
              f"dot_bytes_per_s = {_toml_value(_sig(cached))}"]
    for run in runs:
        lines += ["", "[[runs]]"]
        lines += [f"{k} = {_toml_value(v if k == 'n_threads' else _sig(v))}"
                  for k, v in run.items() if k != "kernels"]
        for k in run["kernels"]:
            lines += ["", "[[runs.kernels]]"]
            lines += [f"{key} = {_toml_value(_sig(v) if isinstance(v, float) else v)}"
                      for key, v in k.items()]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    benchmark.load_record(out)  # it reads back
    print(f"wrote {out}")


def versions() -> dict:
    return {name: metadata.version(name) for name in ("numpy", "datasketch", "tokenizers", "regex")}


def _toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(round(v, 6))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def write_toml(path: Path, table: dict) -> None:
    lines = ["# Written by `make bench` (tools/bench.py); read by llmphys.pipeline.speed.load.",
             "# Times in seconds (wall clock and process CPU), memory in bytes above the input's.",
             f"date = {_toml_value(table['date'])}", f"n_repeats = {table['n_repeats']}", ""]
    for section in ("machine", "versions"):
        lines.append(f"[{section}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in table[section].items()]
        lines.append("")
    for row in table["rows"]:
        lines.append("[[rows]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in row.items()]
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


def _mb(x: float) -> str:
    return f"{x / 1e6:8.1f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "data" / "bench" / "pipeline.toml")
    p.add_argument("--repeats", type=int, default=3, help="runs per case (>= 1; default 3)")
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    p.add_argument("--only", choices=("pipeline", "roofline"), help="one of the two tables")
    p.add_argument("--roofline-out", type=Path, default=ROOT / "data" / "bench" / "roofline.toml")
    p.add_argument("--rounds", type=int, default=7, help="roofline rounds (>= 1; default 7)")
    p.add_argument("--worker", nargs=4, metavar=("TASK", "IMPL", "SIZE", "REPEATS"),
                   help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        task, impl, size, repeats = a.worker
        print(json.dumps(worker(task, impl, float(size), int(repeats))))
        return 0
    if a.repeats < 1:
        p.error(f"--repeats must be >= 1, got {a.repeats}")
    sys.path.insert(0, str(ROOT / "lib"))
    if a.only != "pipeline":
        roofline(a.roofline_out, a.rounds)
        if a.only == "roofline":
            return 0
    from llmphys.pipeline import speed
    sizes = {"dedup": (200, 500, 1000) if a.quick else speed.DEDUP_SIZES,
             "bpe": (0.05e6, 0.1e6, 0.25e6) if a.quick else speed.BPE_SIZES_BYTES}
    units = {"dedup": "documents", "bpe": "bytes"}
    table = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "n_repeats": a.repeats, "machine": machine(), "versions": versions(), "rows": []}
    print(f"machine: {table['machine']}\nversions: {table['versions']}")
    print(f"{'task':6} {'size':>10}  {'impl':10} {'min s':>8} {'median s':>8} {'max s':>8} "
          f"{'(wall med)':>10} {'peak MB':>8} {'output':>7}")
    for task in speed.TASKS:
        for size in sizes[task]:
            row = {"task": task, "size": float(size), "size_unit": units[task]}
            for impl in speed.IMPLS:
                r = run_case(task, impl, float(size), a.repeats)
                row[f"{impl}_wall_s"], row[f"{impl}_cpu_s"] = r["wall_s"], r["cpu_s"]
                row[f"{impl}_peak_bytes"], row[f"{impl}_output"] = r["peak_bytes"], r["output"]
                name = "llmphys" if impl == "llmphys" else speed.REFERENCE[task]
                print(f"{task:6} {size:>10g}  {name:10} {min(r['cpu_s']):8.3f} "
                      f"{statistics.median(r['cpu_s']):8.3f} {max(r['cpu_s']):8.3f} "
                      f"{statistics.median(r['wall_s']):10.3f} {_mb(r['peak_bytes'])} "
                      f"{r['output']:7d}", flush=True)
            row_obj = speed.Row(**{k: tuple(v) if isinstance(v, list) else v
                                   for k, v in row.items()})
            print(f"{'':6} {'':>10}  ratio (reference / llmphys CPU time) {row_obj.ratio:.2f}x, "
                  f"memory llmphys / reference {row_obj.memory_ratio:.2f}", flush=True)
            table["rows"].append(row)
    write_toml(a.out, table)
    t = speed.load(a.out)
    for task in speed.TASKS:
        e = t.exponents(task)
        print(f"{task}: cost grows as size^alpha, alpha = " +
              ", ".join(f"{k} {v:.2f}" for k, v in e.items()))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
