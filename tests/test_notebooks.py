"""The committed notebooks carry what a reader sees and nothing a re-run changes at random.

``tools/normalize_notebooks.py`` strips execution timestamps, widget state (random model ids in
the notebook metadata) and widget views from cell outputs; the static page needs none of them,
because ``llmphys.book.widget`` stores its precomputed grid as HTML. A notebook saved without
normalising fails here, so a widget's state cannot creep back into the diffs.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_carries_no_widget_state_or_timestamps(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert WIDGET_STATE not in nb["metadata"].get("widgets", {})
    for i, cell in enumerate(nb["cells"]):
        assert "execution" not in cell["metadata"], f"cell {i} carries execution timestamps"
        for out in cell.get("outputs", []):
            assert WIDGET_VIEW not in out.get("data", {}), f"cell {i} stores a widget view"


def test_every_notebook_is_stored_as_the_normaliser_writes_it():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "normalize_notebooks.py"),
                          "--check", *map(str, NOTEBOOKS)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_the_normaliser_strips_a_widget_and_keeps_the_output(tmp_path):
    nb = {"cells": [{"cell_type": "code", "id": "a", "execution_count": 1, "source": "w",
                     "metadata": {"execution": {"iopub.status.busy": "2026"}},
                     "outputs": [{"output_type": "display_data", "metadata": {},
                                  "data": {WIDGET_VIEW: {"model_id": "f00"},
                                           "text/html": "<div>grid</div>"}}]}],
          "metadata": {"widgets": {WIDGET_STATE: {"state": {}}}}, "nbformat": 4,
          "nbformat_minor": 5}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    tool = str(ROOT / "tools" / "normalize_notebooks.py")
    assert subprocess.run([sys.executable, tool, "--check", str(path)]).returncode == 1
    assert subprocess.run([sys.executable, tool, str(path)]).returncode == 0
    out = json.loads(path.read_text(encoding="utf-8"))
    assert out["metadata"] == {} and out["cells"][0]["metadata"] == {}
    assert out["cells"][0]["outputs"][0]["data"] == {"text/html": "<div>grid</div>"}
