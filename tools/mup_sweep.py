"""Write data/mup_sweep.toml: final loss of the tiny decoder per width and learning rate, under
the standard parametrisation and under muP (llmphys.mup.lr_sweep).

Deterministic (every seed below is fixed); about three CPU-minutes on one core (the file records
the run's cpu_s). Chapter 1's section "Learning-rate transfer across widths" reads the file;
tests/test_mup.py re-runs a slice of it. One seed: see the section for what that can claim.

    python tools/mup_sweep.py            # writes data/mup_sweep.toml
"""

from __future__ import annotations

import datetime
import platform
import sys
import time
from pathlib import Path

import numpy as np

from llmphys import mup

OUT = Path(__file__).resolve().parents[1] / "data" / "mup_sweep.toml"


def main() -> None:
    setup = mup.SWEEP
    corpus, eval_windows = mup.sweep_data()
    t0 = time.process_time()
    bits = {
        kind: mup.lr_sweep(
            kind,
            widths=setup["widths"],
            lrs=mup.sweep_lrs(),
            base_d_model=setup["base_d_model"],
            corpus=corpus,
            eval_windows=eval_windows,
            **mup.sweep_train_kwargs(),
        )
        for kind in mup.PARAMETRISATIONS
    }
    cpu_s = time.process_time() - t0
    lines = [
        "# Written by `python tools/mup_sweep.py` (deterministic: fixed seeds, float64); read by",
        "# llmphys.mup.load_sweep for chapter 1's section on muP. Final bits per token on 256",
        "# held-out windows after n_steps of Adam, one row per width,",
        "# one column per learning rate.",
        "# The setup (widths, rates, steps, seeds) is llmphys.mup.SWEEP; tests/test_mup.py re-runs",
        "# a slice and checks it against these numbers.",
        'command = "python tools/mup_sweep.py"',
        f'date = "{datetime.date.today().isoformat()}"',
        f'machine = "{platform.machine()}, numpy {np.__version__}"',
        f"cpu_s = {round(cpu_s)}",
        "",
        "[bits]",
    ]
    for kind, b in bits.items():
        rows = ",\n".join("    [" + ", ".join(f"{x:.5f}" for x in row) + "]" for row in b)
        lines.append(f"{kind} = [\n{rows},\n]")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT} in {cpu_s:.0f} CPU-s", file=sys.stderr)


if __name__ == "__main__":
    main()
