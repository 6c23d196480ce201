"""Registry tables as Markdown text, for chapters to display.

Functions here format; they compute nothing that the model modules do not
already compute. Each returns a string (GitHub-flavoured Markdown) so that the
same table shows in JupyterLab, Colab and the built book, and so that nbval can
compare it as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import roofline, units
from .specs import Accelerator


def markdown_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None
) -> str:
    """A Markdown table; ``align`` is one character per column, 'l' or 'r' (default: 'l' then 'r').

    >>> print(markdown_table(["a", "b"], [["x", "1"]]))
    | a | b |
    |:--|--:|
    | x | 1 |
    """
    align = align or "l" + "r" * (len(header) - 1)
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align must be {len(header)} characters of 'l'/'r', got {align!r}")
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} cells; the header has {len(header)}")
    rule = "|" + "|".join(":--" if a == "l" else "--:" for a in align) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _peak_or_dash(acc: Accelerator, dtype: str, scale: float) -> str:
    try:
        return f"{acc.peak_flop_per_s(dtype) / scale:,.0f}"
    except ValueError:
        return "–"


def _ridge_or_dash(acc: Accelerator, dtype: str) -> str:
    try:
        return f"{roofline.ridge_point(acc, dtype):,.0f}"
    except ValueError:
        return "–"


def accelerator_table(accs: Sequence[Accelerator]) -> str:
    """Every chip's dense peaks, memory, ridge points and scale-up link, one row each.

    Units are in the header: TFLOP/s (1e12), GB (1e9 bytes) of usable HBM (what the driver
    reports, ``Accelerator.hbm_bytes``), TB/s (1e12 bytes/s), GB/s per direction. A dash means
    the chip has no native matrix math at that precision.
    """
    header = [
        "key",
        "year",
        "BF16 TFLOP/s",
        "FP8 TFLOP/s",
        "HBM GB usable",
        "HBM TB/s",
        "ridge BF16 FLOP/B",
        "ridge FP8 FLOP/B",
        "scale-up GB/s/dir",
        "domain",
    ]
    rows = [
        [
            f"`{a.key}`",
            str(a.launch_year),
            _peak_or_dash(a, "bf16", units.TERA),
            _peak_or_dash(a, "fp8", units.TERA),
            f"{a.hbm_bytes / units.GB:,.0f}",
            f"{a.hbm_bytes_per_s / units.TB:.2f}",
            _ridge_or_dash(a, "bf16"),
            _ridge_or_dash(a, "fp8"),
            f"{a.scale_up_bytes_per_s_per_direction / units.GB:,.0f}",
            str(a.scale_up_domain_size),
        ]
        for a in accs
    ]
    return markdown_table(header, rows, align="l" + "r" * 9)
