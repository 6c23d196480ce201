"""What ``llmphys params``, ``kv``, ``roofline``, ``chips`` and ``models`` print.

A model or chip is resolved from a registry key, a config or a TOML file
(:func:`resolve_model`, :func:`resolve_chip`); each ``*_report`` returns a dict in SI units (as
``--json`` prints it) that a notebook can call directly, and each ``_format_*`` the human table,
100 columns wide. ``cli`` parses the command line and calls these.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import os
import textwrap

from . import accounting, hf_config, kv_cache, roofline, specs, units

WIDTH = 100  # columns of human output
KV_DTYPES = ("bf16", "fp16", "fp8")
PEAK_DTYPES = ("bf16", "fp16", "fp8", "fp4")


def resolve_model(config_or_key: str) -> specs.Model:
    """A registry model by key, else the Hugging Face config at that path.

    >>> resolve_model("llama3_8b").d_model
    4096
    """
    if config_or_key in specs.models():
        return specs.model(config_or_key)
    if os.path.exists(config_or_key):
        return hf_config.model_from_hf_config(config_or_key)
    raise ValueError(
        f"{config_or_key!r} is neither a registry model (known: "
        f"{', '.join(sorted(specs.models()))}) nor a path to a config.json "
        f"or a folder holding one"
    )


def resolve_chip(chip: str) -> specs.Accelerator:
    """A registry accelerator by key, else the TOML file at that path."""
    if chip in specs.accelerators():
        return specs.accelerator(chip)
    if os.path.exists(chip):
        return specs.accelerator_from_toml(chip)
    raise ValueError(
        f"{chip!r} is neither a registry accelerator (known: "
        f"{', '.join(sorted(specs.accelerators()))}) nor a path to a TOML file"
    )


def params_report(model: specs.Model) -> dict:
    """Parameter counts of ``model``: total, active per token, embeddings, per component.

    >>> r = params_report(specs.model("llama3_8b"))
    >>> r["n_params"], r["components"]["output_head"]
    (8030261248, 525336576)
    """
    parts = accounting.param_breakdown(model)
    return {
        "model": model.name,
        "key": model.key,
        "n_params": int(accounting.n_params(model)),
        "n_active_params": int(accounting.n_active_params(model)),
        "n_embedding_params": int(parts["embedding"] + parts["output_head"]),
        "tied_embeddings": model.tied_embeddings,
        "components": {k: int(v) for k, v in parts.items()},
        "weight_bytes_bf16": accounting.n_params(model) * units.bytes_per_element("bf16"),
    }


def kv_report(
    model: specs.Model, *, n_tokens: int, batch_size: int = 1, dtype: str = "bf16"
) -> dict:
    """KV-cache bytes of ``model``: per token, per sequence of ``n_tokens``, for the batch.

    >>> kv_report(specs.model("llama3_8b"), n_tokens=8192)["bytes_per_sequence"]
    1073741824.0
    """
    if dtype not in KV_DTYPES:
        raise ValueError(
            f"dtype={dtype!r} is not a KV-cache dtype; allowed: {', '.join(KV_DTYPES)}"
        )
    b = units.bytes_per_element(dtype)
    per_seq = kv_cache.kv_cache_bytes(model, n_tokens=n_tokens, bytes_per_element=b)
    return {
        "model": model.name,
        "key": model.key,
        "dtype": dtype,
        "n_tokens": n_tokens,
        "batch_size": batch_size,
        "cached_positions": kv_cache.cached_positions(model, n_tokens=n_tokens),
        "bytes_per_token": kv_cache.kv_bytes_per_token(model, bytes_per_element=b),
        "bytes_per_sequence": per_seq,
        "bytes_total": per_seq * batch_size,
    }


def roofline_report(acc: specs.Accelerator, *, dtype: str = "bf16") -> dict:
    """Dense peak, HBM bandwidth and capacity, and the ridge point of ``acc`` at ``dtype``.

    >>> round(roofline_report(specs.accelerator("h100_sxm"))["ridge_flop_per_byte"], 1)
    295.3
    """
    return {
        "chip": acc.name,
        "key": acc.key,
        "dtype": dtype,
        "peak_flop_per_s": acc.peak_flop_per_s(dtype),
        "hbm_bytes": acc.hbm_bytes,
        "hbm_bytes_per_s": acc.hbm_bytes_per_s,
        "ridge_flop_per_byte": roofline.ridge_point(acc, dtype),
    }


def chips_report(*, sources: bool = False) -> list[dict]:
    """One row per registry accelerator (peaks in FLOP/s, memory in bytes)."""
    rows = []
    for acc in specs.accelerators().values():
        row = {
            "key": acc.key,
            "name": acc.name,
            "launch_year": acc.launch_year,
            "peak_bf16_flop_per_s": acc.peak_bf16_flop_per_s,
            "peak_fp8_flop_per_s": acc.peak_fp8_flop_per_s,
            "hbm_bytes": acc.hbm_bytes,
            "hbm_bytes_per_s": acc.hbm_bytes_per_s,
            "ridge_bf16_flop_per_byte": roofline.ridge_point(acc),
        }
        rows.append({**row, "source": acc.source, "as_of": str(acc.as_of)} if sources else row)
    return rows


def models_report(*, sources: bool = False) -> list[dict]:
    """One row per registry model (counts in parameters)."""
    rows = []
    for m in specs.models().values():
        row = {
            "key": m.key,
            "name": m.name,
            "release_year": m.release_year,
            "n_params": accounting.n_params(m),
            "n_active_params": accounting.n_active_params(m),
            "attention": m.attention,
            "max_context_tokens": m.max_context_tokens,
        }
        rows.append(
            {**row, "source": m.source, "n_params_quote": m.n_params_quote} if sources else row
        )
    return rows


# ----------------------------------------------------------------- human output
def _gb(n_bytes: float) -> str:
    return f"{n_bytes / units.GB:,.3f} GB ({n_bytes / units.GiB:,.3f} GiB)"


def _format_params(r: dict) -> str:
    lines = [
        f"{r['model']}",
        f"  total parameters     {r['n_params']:>18,}",
        f"  active per token     {r['n_active_params']:>18,}",
        f"  embedding (in + out) {r['n_embedding_params']:>18,}"
        + ("  (output head tied to the input embedding)" if r["tied_embeddings"] else ""),
        f"  weights at bf16      {_gb(r['weight_bytes_bf16']):>18}",
        "",
        f"  {'component':<14}{'parameters':>18}{'share':>9}{'bf16 weights':>30}",
    ]
    for name, n in r["components"].items():
        lines.append(f"  {name:<14}{n:>18,}{100 * n / r['n_params']:>8.1f}%  {_gb(2.0 * n):>28}")
    stored = r.get("checkpoint")
    if stored and sum(stored.values()) != r["n_params"]:
        extra = ", ".join(f"{k} {v:,.0f}" for k, v in stored.items() if v and k != "model")
        head = f"  the checkpoint files hold {sum(stored.values()):,.0f} numbers: the model plus"
        lines += ["", head, *_source_lines(extra + " (not parameters of the model)")]
    return "\n".join(lines + _note_lines(r))


def _note_lines(r: dict) -> list[str]:
    return (
        [
            "",
            *textwrap.wrap(
                "note: " + r["notes"], WIDTH - 2, initial_indent="  ", subsequent_indent="  "
            ),
        ]
        if r.get("notes")
        else []
    )


def _format_kv(r: dict) -> str:
    window = (
        ""
        if r["cached_positions"] == r["n_tokens"]
        else f" (a sliding window keeps {r['cached_positions']:,})"
    )
    return "\n".join(
        [
            f"{r['model']}: KV cache at {r['dtype']}",
            (
                f"  per token            {r['bytes_per_token']:>14,.0f} bytes  "
                f"({r['bytes_per_token'] / units.KiB:,.1f} KiB; "
                f"{r['bytes_per_token'] / units.GB * 1e6:,.3f} GB per million tokens)"
            ),
            (
                f"  per sequence         {_gb(r['bytes_per_sequence'])}  "
                f"for {r['n_tokens']:,} tokens{window}"
            ),
            f"  batch of {r['batch_size']:<11,} {_gb(r['bytes_total'])}",
            *_note_lines(r),
        ]
    )


def _format_roofline(r: dict) -> str:
    return "\n".join(
        [
            f"{r['chip']} at {r['dtype']}",
            f"  dense peak       {units.fmt_si(r['peak_flop_per_s'], 'FLOP/s')}",
            (
                f"  HBM bandwidth    {units.fmt_si(r['hbm_bytes_per_s'], 'B/s')} "
                "(decimal units: 1 GB = 1e9 bytes)"
            ),
            f"  HBM capacity     {_gb(r['hbm_bytes'])}",
            (
                f"  ridge point      {r['ridge_flop_per_byte']:.0f} FLOP/byte "
                "(below it a kernel is memory-bound)"
            ),
        ]
    )


def _source_lines(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 6, initial_indent="      ", subsequent_indent="      ")


def _format_chips(rows: list[dict]) -> str:
    lines = [
        (
            f"{'key':<10}{'name':<34}{'year':>5}{'BF16 TFLOP/s':>13}{'HBM GB':>9}"
            f"{'HBM TB/s':>9}{'ridge FLOP/B':>13}"
        )
    ]
    for r in rows:
        lines.append(
            f"{r['key']:<10}{r['name'][:33]:<34}{r['launch_year']:>5}"
            f"{r['peak_bf16_flop_per_s'] / units.TERA:>13,.0f}"
            f"{r['hbm_bytes'] / units.GB:>9,.3f}{r['hbm_bytes_per_s'] / units.TB:>9.2f}"
            f"{r['ridge_bf16_flop_per_byte']:>13,.0f}"
        )
        if "source" in r:
            lines += _source_lines(f"{r['source']} (as of {r['as_of']})")
    lines.append("GB = 1e9 bytes, TB/s = 1e12 bytes/s; peaks are dense (no 2:4 sparsity).")
    return "\n".join(lines)


def _format_models(rows: list[dict]) -> str:
    lines = [
        (
            f"{'key':<15}{'name':<28}{'year':>5}{'params (1e9)':>13}{'active (1e9)':>13}"
            f"{'attention':>10}{'context':>10}"
        )
    ]
    for r in rows:
        lines.append(
            f"{r['key']:<15}{r['name'][:27]:<28}{r['release_year']:>5}"
            f"{r['n_params'] / 1e9:>13.1f}{r['n_active_params'] / 1e9:>13.1f}"
            f"{r['attention']:>10}{r['max_context_tokens']:>10,}"
        )
        if "source" in r:
            lines += _source_lines(r["n_params_quote"]) + _source_lines(r["source"])
    lines.append("bf16 weights take 2 bytes a parameter: 1e9 parameters = 2 GB (1.86 GiB).")
    return "\n".join(lines)
