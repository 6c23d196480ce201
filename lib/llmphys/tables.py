"""Registry tables as Markdown text, for chapters to display.

Functions here format; they compute nothing that the model modules do not
already compute. Each returns a string (GitHub-flavoured Markdown) so that the
same table shows in JupyterLab, Colab and the built book, and so that nbval can
compare it as text.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import accounting, kv_cache, roofline, units
from .specs import Accelerator, Model


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


def design_table(models: Iterable[Model]) -> str:
    """Markdown table of each model's architectural choices and parameter counts.

    Columns: attention (query/KV heads), window, position, norm, MLP, experts,
    N and active N (1e9), and the context T (1e3 tokens) where attention FLOP rival
    the weights' (inf: the sliding window caps attention below that).
    """
    rows = []
    for m in models:
        attn = (
            f"MLA r={m.mla.kv_lora_rank}"
            if m.mla is not None
            else f"{m.attention.upper()} {m.n_heads}/{m.n_kv_heads}"
        )
        experts = (
            "dense"
            if m.moe is None
            else (
                f"top-{m.moe.n_experts_per_token} of {m.moe.n_experts}"
                + (f" + {m.moe.n_shared_experts} shared" if m.moe.n_shared_experts else "")
            )
        )
        t = accounting.attention_rivals_params_context_tokens(m)
        rows.append(
            [
                f"`{m.key}`",
                str(m.release_year),
                attn,
                str(m.sliding_window_tokens or "–"),
                m.position,
                m.norm,
                m.mlp,
                experts,
                f"{accounting.n_params(m) / units.GIGA:.1f}",
                f"{accounting.n_active_params(m) / units.GIGA:.1f}",
                "inf" if t == float("inf") else f"{t / units.KILO:.0f}",
            ]
        )
    header = [
        "model",
        "year",
        "attention (q/kv heads)",
        "window",
        "position",
        "norm",
        "MLP",
        "FFN",
        "N (B)",
        "active (B)",
        "T* (k tokens)",
    ]
    return markdown_table(header, rows, align="lllrllllrrr")


def kv_cache_table(models: Iterable[Model], *, bytes_per_element: float = 2.0) -> str:
    """Markdown table: KV bytes per token (KiB), and one sequence at the model's maximum
    context (cache at ``bytes_per_element``) against its weights as released (GB, 1e9 bytes;
    ``accounting.checkpoint_weight_bytes``: BF16, or FP8 for DeepSeek-V3)."""
    rows = []
    for m in models:
        per_token = kv_cache.kv_bytes_per_token(m, bytes_per_element=bytes_per_element)
        seq = kv_cache.kv_cache_bytes(
            m, n_tokens=m.max_context_tokens, bytes_per_element=bytes_per_element
        )
        weights = accounting.checkpoint_weight_bytes(m)
        rows.append(
            [
                f"`{m.key}`",
                m.attention.upper(),
                f"{per_token / units.KiB:,.1f}",
                f"{m.max_context_tokens:,}",
                f"{seq / units.GB:,.1f}",
                f"{weights / units.GB:,.0f} ({m.checkpoint_dtype.upper()})",
                f"{seq / weights:.2f}",
            ]
        )
    header = [
        "model",
        "attention",
        "KV per token (KiB)",
        "max context (tokens)",
        "KV at max context (GB)",
        "weights as released (GB)",
        "KV / weights",
    ]
    return markdown_table(header, rows)
