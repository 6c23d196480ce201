"""`make test`'s closing summary: each step's seconds and test counts, the total, the skips.

    python tools/test_summary.py .test-reports

Reads what tools/steps.sh recorded (steps.tsv: name, title, wall seconds, exit status, how it
ran, CPU seconds) and the pytest JUnit reports beside it (NAME.xml, one per pytest step). Prints
one line per step, the wall-clock total since `steps.sh begin` and the CPU seconds of every
step together, the passed/skipped/failed counts over every pytest step, and the reason of every
skipped test. Steps that ran side by side overlap in wall-clock time; their CPU seconds add up.
A step's CPU seconds are those of the processes it waited for: a browser's renderers, which
its own launcher reaps or not, may be missing from them (the site and PDF steps).
Exit status 0: it only reports.
"""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def counts(xml: Path) -> dict[str, int | list[str]]:
    """passed, skipped, failed (failures and errors) and the skip reasons of one JUnit file."""
    root = ET.parse(xml).getroot()
    out: dict[str, int | list[str]] = {"passed": 0, "skipped": 0, "failed": 0, "reasons": []}
    for case in root.iter("testcase"):
        skip = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            out["failed"] += 1  # type: ignore[operator]
        elif skip is not None:
            out["skipped"] += 1  # type: ignore[operator]
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            out["reasons"].append(f"{name}: {skip.get('message', '')}")  # type: ignore[union-attr]
        else:
            out["passed"] += 1  # type: ignore[operator]
    return out


def main(reports: Path) -> int:
    steps = reports / "steps.tsv"
    rows = [line.split("\t") for line in steps.read_text().splitlines()] if steps.exists() else []
    total: dict[str, int] = {"passed": 0, "skipped": 0, "failed": 0}
    reasons: list[str] = []
    print("\n== make test: summary")
    print(f"{'step':60} {'seconds':>7} {'CPU s':>6}  tests")
    cpu_total = 0
    for row in rows:
        name, title, seconds, rc, how = row[:5]
        cpu = row[5] if len(row) > 5 else ""
        cpu_total += int(cpu or 0)
        xml = reports / f"{name}.xml"
        tests = ""
        if xml.exists():
            c = counts(xml)
            tests = f"{c['passed']:,} passed, {c['skipped']} skipped, {c['failed']} failed"
            for k in total:
                total[k] += c[k]  # type: ignore[operator]
            reasons += c["reasons"]  # type: ignore[arg-type]
        if how == "background":
            tests = f"{tests} (beside the others)".lstrip()
        status = "" if rc == "0" else f"  FAILED (exit {rc})"
        print(f"{title[:60]:60} {seconds:>7} {cpu:>6}  {tests}{status}")
    t0 = reports / "t0"
    if t0.exists():
        wall = time.time() - float(t0.read_text())
        print(f"{'total: wall clock, CPU of every step':60} {wall:7.0f} {cpu_total:6}")
    print(f"all pytest steps: {total['passed']:,} passed, {total['skipped']} skipped, "
          f"{total['failed']} failed")
    for r in reasons:
        print(f"  skipped: {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".test-reports")))
