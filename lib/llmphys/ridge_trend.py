"""How a chip's ridge point moves from one generation to the next: the ratio of two growths.

The ridge is I* = P / W (dense peak FLOP/s over HBM bytes/s; Williams et al. 2009). From one
chip to the next it changes by

    I*_new / I*_old = (P_new / P_old) / (W_new / W_old) = g_P / g_W,

so it rises when compute grows faster than bandwidth and falls when bandwidth grows faster.
Nothing ties the two growths together: compute follows the tensor cores and clocks on the
compute die, bandwidth the number and generation of HBM stacks beside it. A part that keeps
its predecessor's die and gets faster memory (the H200 over the H100) has g_P = 1 and its
ridge falls by 1 / g_W; a new die on a new memory generation can move either way.

Home: chapters/hardware_tour.ipynb, section "The BF16 ridge across generations".
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from . import roofline
from .specs import Accelerator


def ridge_steps(accs: Sequence[Accelerator], *, dtype: str = "bf16") -> list[dict[str, float]]:
    """One row per consecutive pair of ``accs`` (in the order given): the growths of dense
    peak compute and HBM bandwidth, ``compute_growth`` and ``bandwidth_growth``, and
    ``ridge_growth`` = their ratio, with the ridge before and after (FLOP/byte).

    >>> from llmphys import specs
    >>> h100, h200 = specs.accelerator("h100_sxm"), specs.accelerator("h200")
    >>> r = ridge_steps([h100, h200])[0]
    >>> round(r["compute_growth"], 2), round(r["bandwidth_growth"], 3), round(r["ridge_after"])
    (1.0, 1.433, 206)
    """
    if len(accs) < 2:
        raise ValueError(f"accs must hold at least 2 accelerators, got {len(accs)}")
    rows = []
    for old, new in itertools.pairwise(accs):
        g_p = new.peak_flop_per_s(dtype) / old.peak_flop_per_s(dtype)
        g_w = new.hbm_bytes_per_s / old.hbm_bytes_per_s
        rows.append(
            {
                "compute_growth": g_p,
                "bandwidth_growth": g_w,
                "ridge_growth": g_p / g_w,
                "ridge_before": roofline.ridge_point(old, dtype),
                "ridge_after": roofline.ridge_point(new, dtype),
            }
        )
    return rows
