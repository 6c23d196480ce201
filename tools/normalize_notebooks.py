"""Strip what a re-execution changes but no reader sees from the committed notebooks.

Every execution stamps each code cell with four ``iopub`` timestamps (nbclient's
``record_timing``), so two runs that produce identical outputs still differ on every cell and
every branch that re-executes a chapter conflicts with every other. Widgets add model state
with random ids to the notebook's metadata and a view (a random id) to the cell's output. The
static page needs neither: ``llmphys.book.widget`` stores its precomputed HTML next to the view,
and a kernel recreates the live controls when the cell runs. This removes the stamps, the
widget state and the widget views, and leaves sources, the other outputs and the execution
counts (nbval needs the counts) as they are.

    python tools/normalize_notebooks.py chapters/*.ipynb      # rewrite in place
    python tools/normalize_notebooks.py --check chapters/*.ipynb   # exit 1 if any would change
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

def normalize(nb: dict) -> dict:
    """Return ``nb`` without timing stamps and widget state (in place, and returned)."""
    nb.get("metadata", {}).pop("widgets", None)
    nb.get("metadata", {}).pop("nbdime-conflicts", None)  # left behind by nbdime's merge driver
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(WIDGET_VIEW, None)
        if "outputs" in cell:
            cell["outputs"] = _coalesce_streams(cell["outputs"])
    return nb


def _coalesce_streams(outputs: list) -> list:
    """Adjacent ``stream`` outputs of one name as one: the kernel flushes stdout at moments that
    depend on the machine's load, so one print can arrive in two pieces (nbval compares the
    joined text, a diff would show the split)."""
    merged: list = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (prev is not None and out.get("output_type") == "stream"
                and prev.get("output_type") == "stream" and prev.get("name") == out.get("name")):
            text = "".join(prev["text"]) + "".join(out["text"])
            lines = text.split("\n")
            prev["text"] = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        else:
            merged.append(out)
    return merged


def dumps(nb: dict) -> str:
    """Serialise as Jupyter does (one-space indent, sorted keys, trailing newline)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=pathlib.Path, help="notebooks to normalise")
    ap.add_argument("--check", action="store_true", help="report, do not rewrite")
    args = ap.parse_args(argv)
    stale = []
    for path in args.paths:
        if path.suffix != ".ipynb" or not path.is_file():
            ap.error(f"paths: {path} is not an .ipynb file")
        text = path.read_text(encoding="utf-8")
        new = dumps(normalize(json.loads(text)))
        if new != text:
            stale.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print("not normalised (run tools/normalize_notebooks.py):", *map(str, stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
