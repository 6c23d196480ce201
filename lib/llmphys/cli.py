"""The ``llmphys`` command line: the book's arithmetic for a reader's own model and chip.

    llmphys params CONFIG_OR_KEY             total, active, embedding counts; per component
    llmphys kv CONFIG_OR_KEY --tokens N      KV-cache bytes per token and per sequence
    llmphys roofline CHIP [--dtype fp8]      dense peak, HBM bandwidth, ridge point
    llmphys chips [--sources]                the accelerator registry
    llmphys models [--sources]               the model registry
    llmphys train MODEL CHIP --chips N ...   predicted step time, MFU and memory of a layout
    llmphys serve MODEL CHIP --chips N ...   predicted throughput, TPOT, TTFT of a deployment

CONFIG_OR_KEY is a registry key (``llmphys models``), a Hugging Face ``config.json``
or a folder holding one; CHIP is a registry key or a TOML file with one accelerator
in the registry's schema. Every subcommand takes ``--json`` (SI units: bytes,
FLOP/s, bytes/s). Human output says GB (1e9 bytes) or GiB (2**30 bytes) on every
number and fits 100 columns. Exit status: 0 on success, 2 on bad input, with the
message on stderr. ``python -m llmphys`` runs the same ``main``.

The ``*_report`` functions compute what each subcommand prints, as a dict, so a
notebook can call them directly; ``main`` only parses, formats and exits.

Introduced in chapters/your_own_model.ipynb.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Sequence

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
            f"{'key':<10}{'name':<34}{'year':>5}{'BF16 TFLOP/s':>13}{'HBM GB':>8}"
            f"{'HBM TB/s':>9}{'ridge FLOP/B':>13}"
        )
    ]
    for r in rows:
        lines.append(
            f"{r['key']:<10}{r['name'][:33]:<34}{r['launch_year']:>5}"
            f"{r['peak_bf16_flop_per_s'] / units.TERA:>13,.0f}"
            f"{r['hbm_bytes'] / units.GB:>8,.0f}{r['hbm_bytes_per_s'] / units.TB:>9.2f}"
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


def train_report(model: specs.Model, chip: specs.Accelerator, **layout) -> dict:
    """``predict.train_step`` as a dict: step time (s), MFU, HFU, tokens/s, memory, parts.

    >>> r = train_report(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=8,
    ...                  seq_len=8192, global_batch_tokens=8 * 8192)
    >>> r["fits"], r["dp"]
    (True, 8)
    """
    from . import predict

    s = predict.train_step(model, chip, check_memory=False, **layout)
    return {
        "model": model.key,
        "chip": chip.key,
        "step_time_s": s.step_time_s,
        "mfu": s.mfu,
        "hfu": s.hfu,
        "tokens_per_s": s.tokens_per_s,
        "dp": s.dp,
        "n_microbatches": s.n_microbatches,
        "memory_per_chip_bytes": s.memory_per_chip_bytes,
        "hbm_bytes": s.hbm_bytes,
        "fits": s.fits,
        "parts_s": s.parts,
        "memory_parts_bytes": s.memory_parts,
        "text": predict.format_budget(s),
    }


def serve_report(model: specs.Model, chip: specs.Accelerator, **deployment) -> dict:
    """``predict.serve`` as a dict: tokens/s, TPOT and TTFT (s), memory (bytes), step parts.

    >>> r = serve_report(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=1,
    ...                  batch_size=None, input_tokens=1000, output_tokens=1000,
    ...                  weight_dtype="fp8", kv_dtype="fp8")
    >>> r["fits"], r["batch_size"]
    (True, 709)
    """
    from . import predict

    s = predict.serve(model, chip, check_memory=False, **deployment)
    return {
        "model": model.key,
        "chip": chip.key,
        "output_tokens_per_s": s.output_tokens_per_s,
        "input_tokens_per_s": s.input_tokens_per_s,
        "tpot_s": s.tpot_s,
        "ttft_s": s.ttft_s,
        "batch_size": s.batch_size,
        "n_replicas": s.n_replicas,
        "tokens_per_step": s.tokens_per_step,
        "step_s": s.step_s,
        "memory_per_chip_bytes": s.memory_per_chip_bytes,
        "hbm_bytes": s.hbm_bytes,
        "fits": s.fits,
        "parts_s": s.parts,
        "memory_parts_bytes": s.memory_parts,
        "text": predict.format_serve_budget(s),
    }


# ----------------------------------------------------------------- parsing
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``llmphys`` (subcommands params, kv, roofline, chips, models)."""
    p = argparse.ArgumentParser(
        prog="llmphys",
        description="The arithmetic of 'Downstream of the Fab' for your own model and chip.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    what = "registry key or path to a Hugging Face config.json (or its folder)"
    c = sub.add_parser("params", help="parameter counts, total and per component")
    c.add_argument("model", metavar="CONFIG_OR_KEY", help=what)
    c = sub.add_parser("kv", help="KV-cache bytes per token and per sequence")
    c.add_argument("model", metavar="CONFIG_OR_KEY", help=what)
    c.add_argument("--tokens", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument("--batch", type=_positive_int, default=1, help="sequences (default 1)")
    c.add_argument("--dtype", choices=KV_DTYPES, default="bf16", help="cache element type")
    c = sub.add_parser("roofline", help="dense peak, HBM bandwidth and ridge point of a chip")
    c.add_argument("chip", metavar="CHIP", help="registry key or path to an accelerator TOML")
    c.add_argument("--dtype", choices=PEAK_DTYPES, default="bf16", help="matrix precision")
    for name, what in (("chips", "the accelerator registry"), ("models", "the model registry")):
        c = sub.add_parser(name, help=what)
        c.add_argument("--sources", action="store_true", help="show each entry's sources")
    c = sub.add_parser("train", help="predicted step time, MFU and memory of a training layout")
    c.add_argument("model", metavar="CONFIG_OR_KEY", help=what)
    c.add_argument("chip", metavar="CHIP", help="registry key or path to an accelerator TOML")
    c.add_argument("--chips", type=_positive_int, required=True, help="chips in the run")
    for flag in ("tp", "pp", "cp", "ep"):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=f"{flag} degree")
    c.add_argument("--seq-len", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument(
        "--batch-tokens", type=_positive_int, required=True, help="global batch in tokens"
    )
    c.add_argument("--micro-batch", type=_positive_int, default=1, help="sequences")
    c.add_argument("--recompute", choices=("none", "selective", "full"), default="none")
    c.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3), default=1)
    c.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="matrix precision")
    c = sub.add_parser("serve", help="predicted throughput, TPOT, TTFT and memory of serving")
    c.add_argument("model", metavar="CONFIG_OR_KEY", help=what)
    c.add_argument("chip", metavar="CHIP", help="registry key or path to an accelerator TOML")
    c.add_argument("--chips", type=_positive_int, required=True, help="chips, all replicas")
    for flag in ("tp", "ep", "pp"):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=f"{flag} degree")
    c.add_argument(
        "--batch",
        type=_positive_int,
        default=None,
        help="concurrent sequences, whole deployment (default: the most that fit)",
    )
    c.add_argument("--input", type=_positive_int, required=True, help="prompt tokens")
    c.add_argument("--output", type=_positive_int, required=True, help="generated tokens")
    c.add_argument("--weights", choices=("bf16", "fp8", "int4", "fp4"), default="bf16")
    c.add_argument("--kv", choices=KV_DTYPES, default="bf16", help="KV-cache element type")
    c.add_argument(
        "--prefill-chips",
        type=int,
        default=0,
        help="chips that only prefill (disaggregated layout; default 0)",
    )
    for c in sub.choices.values():
        c.add_argument("--json", action="store_true", help="print JSON (SI units) instead")
    return p


def run(args: argparse.Namespace) -> tuple[object, str]:
    """(report, human text) for parsed ``args``; bad input raises ValueError or OSError."""
    if args.command in ("params", "kv"):
        model = resolve_model(args.model)
        from_config = args.model not in specs.models()
        if args.command == "params":
            r = params_report(model)
            if from_config:  # what a model page counts: the files, not only the model
                r["checkpoint"] = hf_config.checkpoint_breakdown(args.model)
        else:
            r = kv_report(model, n_tokens=args.tokens, batch_size=args.batch, dtype=args.dtype)
        if from_config and model.notes:  # what the import could not represent exactly
            r["notes"] = model.notes
        return r, _format_params(r) if args.command == "params" else _format_kv(r)
    if args.command == "roofline":
        r = roofline_report(resolve_chip(args.chip), dtype=args.dtype)
        return r, _format_roofline(r)
    if args.command == "train":
        r = train_report(
            resolve_model(args.model),
            resolve_chip(args.chip),
            n_chips=args.chips,
            tp=args.tp,
            pp=args.pp,
            cp=args.cp,
            ep=args.ep,
            seq_len=args.seq_len,
            global_batch_tokens=args.batch_tokens,
            micro_batch_size=args.micro_batch,
            recompute=args.recompute,
            zero_stage=args.zero_stage,
            dtype=args.dtype,
        )
        return r, r.pop("text")
    if args.command == "serve":
        r = serve_report(
            resolve_model(args.model),
            resolve_chip(args.chip),
            n_chips=args.chips,
            tp=args.tp,
            ep=args.ep,
            pp=args.pp,
            batch_size=args.batch,
            input_tokens=args.input,
            output_tokens=args.output,
            weight_dtype=args.weights,
            kv_dtype=args.kv,
            prefill_chips=args.prefill_chips,
        )
        return r, r.pop("text")
    if args.command == "chips":
        rows = chips_report(sources=args.sources)
        return rows, _format_chips(rows)
    rows = models_report(sources=args.sources)
    return rows, _format_models(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``llmphys`` with ``argv`` (default: the process's arguments); return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        report, text = run(args)
    except (ValueError, KeyError, TypeError, OSError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(
            textwrap.fill(
                f"llmphys {args.command}: error: {message}", WIDTH, subsequent_indent="  "
            ),
            file=sys.stderr,
        )
        return 2
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


def _script() -> None:  # the console script's entry point
    sys.exit(main())


def shell(*args: str) -> tuple[int, str]:
    """(exit code, stdout + stderr) of ``llmphys args...`` run as a separate process.

    It runs ``python -m llmphys`` with this interpreter and this copy of the library,
    as a reader's terminal would, so a notebook can show the command line without
    shell escapes (``!``), which not every kernel has.

    >>> shell("roofline", "h100_sxm")[0]
    0
    """
    import subprocess
    from pathlib import Path

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1])]
            + [p for p in [os.environ.get("PYTHONPATH")] if p]
        ),
    }
    done = subprocess.run(
        [sys.executable, "-m", "llmphys", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr
