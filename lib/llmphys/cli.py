"""The ``llmphys`` command line: the book's arithmetic for a reader's own model and chip.

    llmphys params MODEL                     total, active, embedding counts; per component
    llmphys kv MODEL --tokens N              KV-cache bytes per token and per sequence
    llmphys roofline CHIP [--dtype fp8]      dense peak, HBM bandwidth, ridge point
    llmphys chips [--sources]                the accelerator registry
    llmphys models [--sources]               the model registry
    llmphys train MODEL CHIP --chips N ...   predicted step time, MFU and memory of a layout
    llmphys serve MODEL CHIP --chips N ...   predicted throughput, TPOT, TTFT of a deployment

MODEL is a registry key (``llmphys models``), a Hugging Face ``config.json`` or a
folder holding one, or a repo id whose config is in the local Hugging Face cache
(never the network); CHIP is a registry key or a TOML file with one accelerator
in the registry's schema. Every subcommand takes ``--json`` (SI units: bytes,
FLOP/s, bytes/s). Human output says GB (1e9 bytes) or GiB (2**30 bytes) on every
number, tokens/s with SI prefixes, and fits 100 columns. Exit status: 0 on
success, 2 on bad input (the message, on stderr, names the flag and what is
allowed), 3 when a layout does not fit in memory (with the bytes over). A reader
that closes the pipe early ends the output quietly. ``python -m llmphys`` runs
the same ``main``.

The ``*_report`` functions compute what each subcommand prints, as a dict, so a
notebook can call them directly; ``main`` only parses, formats and exits. They live in
``cli_reports`` (params, kv, roofline, chips, models), ``cli_step`` (train, serve) and
``cli_plan`` (plan, cost); the parser in ``cli_args`` and ``cli_step_args``.

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

from . import cli_plan, hf_config, specs
from .cli_args import build_parser
from .cli_reports import (
    WIDTH,
    _format_chips,
    _format_kv,
    _format_models,
    _format_params,
    _format_roofline,
    chips_report,
    kv_report,
    models_report,
    params_report,
    resolve_chip,
    resolve_model,
    roofline_report,
)
from .cli_step import (
    GRAD_DTYPES,
    DoesNotFit,
    _does_not_fit,
    _format_serve,
    _format_train,
    flag_names,
    serve_report,
    train_report,
)
from .cli_step import PLAN_FLAGS as PLAN_FLAGS
from .cli_step import TRAIN_FLAGS as TRAIN_FLAGS


def _model_and_path(text: str) -> tuple[specs.Model, str | None]:
    """The model ``text`` names, and the config path it was read from (None: the registry)."""
    if text in specs.models():
        return specs.model(text), None
    if os.path.exists(text):
        return hf_config.model_from_hf_config(text), text
    if hf_config.is_repo_id(text):
        path = str(hf_config.cached_config_path(text))
        return hf_config.model_from_hf_config(path, name=text), path
    return resolve_model(text), None  # raises the message listing what is known


def run(args: argparse.Namespace) -> tuple[object, str]:
    """(report, human text) for parsed ``args``; bad input raises ValueError or OSError,
    a layout that does not fit raises DoesNotFit with the report as its second argument."""
    if args.command in ("params", "kv"):
        model, path = _model_and_path(args.model)
        if args.command == "params":
            r = params_report(model)
            if path is not None:  # what a model page counts: the files, not only the model
                r["checkpoint"] = hf_config.checkpoint_breakdown(path)
        else:
            r = kv_report(model, n_tokens=args.tokens, batch_size=args.batch, dtype=args.dtype)
        if path is not None and model.notes:  # what the import could not represent exactly
            r["notes"] = model.notes
        return r, _format_params(r) if args.command == "params" else _format_kv(r)
    if args.command == "roofline":
        r = roofline_report(resolve_chip(args.chip), dtype=args.dtype)
        return r, _format_roofline(r)
    kind = args.what if args.command == "cost" else args.command
    if args.command == "plan":
        return _run_plan(args)
    if kind == "train":
        r = train_report(
            _model_and_path(args.model)[0],
            resolve_chip(args.chip),
            memory_margin=args.memory_margin,
            n_chips=args.chips,
            tp=args.tp,
            pp=args.pp,
            cp=args.cp,
            ep=args.ep,
            seq_len=args.seq_len,
            global_batch_tokens=args.batch_tokens,
            micro_batch_size=args.micro_batch,
            interleave=args.interleave,
            schedule=args.schedule,
            recompute=args.recompute,
            zero_stage=args.zero_stage,
            fsdp_weight_gathers=args.fsdp_weight_gathers,
            zero3_collectives=args.zero3_collectives,
            dtype=args.dtype,
            grad_bytes=GRAD_DTYPES[args.grad_dtype],
            flash_attention=not args.no_flash_attention,
            sequence_parallel=not args.no_sequence_parallel,
            selective_policy=args.selective_policy,
            state_layout=args.state_layout,
            state_replicas=args.state_replicas,
            moe_dispatcher=args.moe_dispatcher,
            fused_elementwise=args.fused_elementwise,
            pipeline_split=args.pipeline_split,
            attention_kernel=args.attention_kernel,
            cp_rotate=args.cp_rotate,
            kv_repeat=args.kv_repeat,
            fp8_recipe=args.fp8_recipe,
            attention_flops=args.attention_flops,
        )
        if not r["fits"]:
            raise DoesNotFit(_does_not_fit(r, "train"), r)
        if args.command == "cost":
            r = cli_plan.cost_train_report(r, n_tokens=args.tokens)
            return r, cli_plan.format_cost(r, _format_train(r))
        return r, _format_train(r)
    if kind == "serve":
        r = serve_report(
            _model_and_path(args.model)[0],
            resolve_chip(args.chip),
            memory_margin=args.memory_margin,
            n_chips=args.chips,
            tp=args.tp,
            ep=args.ep,
            pp=args.pp,
            batch_size=args.batch,
            input_tokens=args.input,
            output_tokens=args.output,
            weight_dtype=args.weights,
            kv_dtype=args.kv,
            math_dtype=args.math_dtype,
            chunked_prefill=not args.no_chunked_prefill,
            chunk_tokens=args.chunk_tokens,
            draft_tokens=args.draft_tokens,
            acceptance_rate=args.acceptance_rate,
            draft_model=None if args.draft_model is None else _model_and_path(args.draft_model)[0],
            prefill_chips=args.prefill_chips,
        )
        if not r["fits"]:
            raise DoesNotFit(_does_not_fit(r, "serve"), r)
        if args.command == "cost":
            r = cli_plan.cost_serve_report(r)
            return r, cli_plan.format_cost(r, _format_serve(r))
        return r, _format_serve(r)
    if args.command == "chips":
        rows = chips_report(sources=args.sources)
        return rows, _format_chips(rows)
    rows = models_report(sources=args.sources)
    return rows, _format_models(rows)


def _run_plan(args: argparse.Namespace) -> tuple[object, str]:
    """``plan train`` and ``plan serve``: (report, text); nothing fits raises DoesNotFit."""
    from . import predict

    model = _model_and_path(args.model)[0]
    try:
        if args.what == "train":
            r = cli_plan.plan_train_report(
                model,
                resolve_chip(args.chip),
                n_chips=args.chips,
                tokens_per_s=args.tokens_per_s,
                max_chips=args.max_chips,
                top=args.top,
                seq_len=args.seq_len,
                global_batch_tokens=args.batch_tokens,
                dtype=args.dtype,
                memory_margin=args.memory_margin,
                max_tp=args.max_tp,
                zero_stages=tuple(args.zero_stages),
                recomputes=tuple(args.recompute),
                grad_bytes=GRAD_DTYPES[args.grad_dtype],
                fsdp_weight_gathers=args.fsdp_weight_gathers,
                zero3_collectives=args.zero3_collectives,
                flash_attention=not args.no_flash_attention,
                sequence_parallel=not args.no_sequence_parallel,
                selective_policy=args.selective_policy,
                moe_dispatcher=args.moe_dispatcher,
                fused_elementwise=args.fused_elementwise,
                fp8_recipe=args.fp8_recipe,
                state_layout=args.state_layout,
                state_replicas=args.state_replicas,
            )
            return r, cli_plan.format_plan_train(r)
        for z in getattr(args, "zero_stages", ()):
            if z > 3:
                raise ValueError(f"--zero-stages: {z} is not one of 0, 1, 2, 3")
        r = cli_plan.plan_serve_report(
            model,
            chips=[resolve_chip(c).key for c in args.chip] if args.chip else None,
            top=args.top,
            request_rate_per_s=args.rate,
            output_tokens_per_s=args.tokens_per_s,
            input_tokens=args.input,
            output_tokens=args.output,
            tpot_p90_s=args.tpot,
            ttft_p90_s=args.ttft,
            weight_dtypes=tuple(args.weights),
            kv_dtypes=tuple(args.kv),
            pp_degrees=tuple(args.pp),
        )
        return r, cli_plan.format_plan_serve(r)
    except predict.LayoutDoesNotFit as err:
        raise DoesNotFit(
            str(err), {"model": model.key, "fits": False, "message": str(err)}
        ) from None


def _sweep(argv: list[str], spec: str) -> tuple[str, list[list[str]]]:
    """The flag and one argv per value of ``--sweep FLAG=V1,V2,...``."""
    flag, _, values = spec.partition("=")
    flag = "--" + flag.lstrip("-")
    items = [v for v in values.split(",") if v]
    if not items:
        raise ValueError(f"--sweep {spec!r}: write FLAG=V1,V2,... (e.g. --sweep chips=8,16,64)")
    rest, skip = [], False
    for a in argv:  # drop --sweep X, --csv, --json and the swept flag's value
        if skip:
            skip = False
            continue
        if a in ("--sweep", flag):
            skip = True
            continue
        if a.startswith(("--sweep=", flag + "=")) or a in ("--csv", "--json"):
            continue
        rest.append(a)
    return flag, [[*rest, flag, v] for v in items]


def _run_sweep(argv: list[str], args: argparse.Namespace) -> tuple[list[dict], str]:
    """One report per value of the swept flag; a value that does not fit is a row too."""
    flag, runs = _sweep(argv, args.sweep)
    parser = build_parser()
    rows: list[dict] = []
    for one in runs:
        sub_args = parser.parse_args(one)  # a bad value: argparse names the flag, exits 2
        try:
            r: object = run(sub_args)[0]
        except DoesNotFit as err:
            r = err.args[1]
        assert isinstance(r, dict)
        rows.append({"sweep_flag": flag, "sweep_value": one[-1], **r})
    return rows, cli_plan.csv_rows(rows)


def _error(command: str, message: object) -> None:
    text = f"llmphys {command}: {message}"
    print(textwrap.fill(text, WIDTH, subsequent_indent="  "), file=sys.stderr)


def _print(text: str) -> None:
    """Print to stdout; a reader that closes the pipe early (``| head``) ends it quietly."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's documented recipe: point stdout at devnull so the interpreter's own
        # flush at exit does not raise again (docs.python.org, signal, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``llmphys`` with ``argv`` (default: the process's arguments); return the exit code.

    0 on success, 2 on bad input (the message names the flag and what is allowed), 3 when
    the layout does not fit in the chip's memory (the message gives the bytes over).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    name = args.command + (f" {args.what}" if getattr(args, "what", None) else "")
    report: object
    try:
        if getattr(args, "sweep", None):
            report, text = _run_sweep(argv, args)
        else:
            report, text = run(args)
            if args.csv:
                assert isinstance(report, dict)
                rows = report.get("layouts") or report.get("deployments") or [report]
                text = cli_plan.csv_rows(rows)
    except DoesNotFit as err:
        message, r = err.args
        if args.json:
            keep = (
                "step_time_s",
                "mfu",
                "hfu",
                "tokens_per_s",
                "output_tokens_per_s",
                "input_tokens_per_s",
                "tpot_s",
                "tpot_worst_s",
                "ttft_s",
                "step_s",
                "parts_s",
            )
            out = {k: v for k, v in r.items() if k not in keep}
            _print(json.dumps(out, indent=2, default=str))
        _error(name, message)
        return 3
    except (ValueError, KeyError, TypeError, OSError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        _error(name, "error: " + flag_names(str(message)))
        return 2
    _print(json.dumps(report, indent=2, default=str) if args.json else text)
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
