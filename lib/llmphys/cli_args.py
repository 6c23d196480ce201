"""The ``llmphys`` command line's parser: every subcommand, flag, default and check of input.

A flag's value is checked where it is parsed (a positive integer, a fraction, one of a list),
so a bad one exits with status 2 and a message naming the flag and what is allowed. The flags
of ``train`` and ``serve`` and those checks are :mod:`llmphys.cli_step_args`.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import argparse

from . import predict
from .cli_reports import KV_DTYPES, PEAK_DTYPES
from .cli_step_args import (
    CHIP_HELP,
    MODEL_HELP,
    _fraction,
    _ints,
    _list_of,
    _positive_float,
    _positive_int,
    _serve_args,
    _step_options,
    _train_args,
    _whole,
    add_request_lengths,
    add_train_memory_flags,
)


# ----------------------------------------------------------------- parsing
class _Help(argparse.HelpFormatter):
    """Help that shows each option's default (none shown for a required or unset option)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            action.option_strings
            and not (default is None or default is False or default is argparse.SUPPRESS)
            and "default" not in text
        ):
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``llmphys``: params, kv, roofline, chips, models, train, serve."""
    from . import __version__

    p = argparse.ArgumentParser(
        prog="llmphys",
        description="The arithmetic of 'Downstream of the Fab' for your own model and chip.",
        epilog="Exit status: 0 success, 2 bad input, 3 a layout that does not fit in memory.",
        formatter_class=_Help,
    )
    p.add_argument("--version", action="version", version=f"llmphys {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text, formatter_class=_Help)

    c = command("params", "parameter counts, total and per component")
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c = command("kv", "KV-cache bytes per token and per sequence")
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("--tokens", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument("--batch", type=_positive_int, default=1, help="sequences")
    c.add_argument("--dtype", choices=KV_DTYPES, default="bf16", help="cache element type")
    c = command("roofline", "dense peak, HBM bandwidth and ridge point of a chip")
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--dtype", choices=PEAK_DTYPES, default="bf16", help="matrix precision")
    for name, text in (("chips", "the accelerator registry"), ("models", "the model registry")):
        c = command(name, text)
        c.add_argument("--sources", action="store_true", help="show each entry's sources")

    c = command("train", "predicted step time, MFU and memory of a training layout")
    _train_args(c)
    c = command("serve", "predicted throughput, TPOT, TTFT and memory of serving")
    _serve_args(c)
    leaves = [c for name, c in sub.choices.items()]
    for name, text, what in (
        ("plan", "search: the layouts for a run, the cheapest deployment for a load", "plan"),
        ("cost", "USD of a training run or a deployment at prices.toml's dated prices", "cost"),
    ):
        c = command(name, text)
        inner = c.add_subparsers(dest="what", required=True, metavar="WHAT")
        for kind in ("train", "serve"):
            help_text = {
                ("plan", "train"): "training layouts that fit, ranked by predicted step time",
                ("plan", "serve"): "the cheapest deployments meeting a load and latency target",
                ("cost", "train"): "chip-hours, days and USD of a training layout for a budget",
                ("cost", "serve"): "USD per hour and per million tokens of a deployment",
            }[(what, kind)]
            leaf = inner.add_parser(
                kind, help=help_text, description=help_text, formatter_class=_Help
            )
            {
                ("plan", "train"): _plan_train_args,
                ("plan", "serve"): _plan_serve_args,
                ("cost", "train"): _train_args,
                ("cost", "serve"): _serve_args,
            }[(what, kind)](leaf)
            if what == "cost" and kind == "train":
                leaf.add_argument(
                    "--tokens", type=_positive_float, required=True, help="training tokens"
                )
            leaves.append(leaf)
    for c in leaves:
        c.add_argument("--json", action="store_true", help="print JSON (SI units) instead")
        c.add_argument("--csv", action="store_true", help="print CSV (SI units) instead")
        if c.prog.split()[-1] in ("train", "serve") and " plan " not in c.prog:
            c.add_argument(
                "--sweep",
                metavar="FLAG=V1,V2,...",
                default=None,
                help="run once per value of one flag (e.g. --sweep tp=1,2,4,8); one row each",
            )
        for action in c._actions:  # N for a count, FRACTION for a share, in the usage line
            if action.metavar is None and action.option_strings and action.type is not None:
                kinds: dict[object, str] = {
                    _positive_int: "N",
                    _whole: "N",
                    _fraction: "FRACTION",
                    _positive_float: "X",
                }
                action.metavar = kinds.get(action.type)
    return p


def _plan_train_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``plan train``: the problem, the constraints, the fewest-chips mode."""
    from . import parallelism

    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--chips", type=_positive_int, default=None, help="chips in the run")
    c.add_argument(
        "--tokens-per-s",
        type=_positive_float,
        default=None,
        help="instead of --chips: the fewest chips that train at this rate",
    )
    c.add_argument(
        "--max-chips", type=_positive_int, default=65_536, help="largest count --tokens-per-s tries"
    )
    c.add_argument("--seq-len", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument(
        "--batch-tokens", type=_positive_int, required=True, help="global batch in tokens"
    )
    c.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="matrix precision")
    c.add_argument(
        "--max-tp",
        type=_positive_int,
        default=None,
        help="largest tensor-parallel degree searched (default: the chip's scale-up domain)",
    )
    c.add_argument(
        "--zero-stages",
        type=_ints,
        default=",".join(map(str, predict.ZERO_STAGES)),
        help="ZeRO stages searched, comma-separated",
    )
    c.add_argument(
        "--recompute",
        type=_list_of(parallelism.RECOMPUTE),
        default=",".join(parallelism.RECOMPUTE),
        help="recomputation choices searched, comma-separated",
    )
    add_train_memory_flags(c)
    _step_options(c)
    c.add_argument(
        "--memory-margin",
        type=_fraction,
        default=0.0,
        help="fraction of HBM held back from every layout (fragmentation, framework buffers)",
    )
    c.add_argument("--top", type=_positive_int, default=10, help="layouts shown")


def _plan_serve_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``plan serve``: the load, the targets and the space searched."""
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument(
        "--chip",
        action="append",
        default=None,
        metavar="CHIP",
        help="a chip to consider; repeat for several (default: every chip with a price)",
    )
    c.add_argument("--rate", type=_positive_float, default=None, help="requests per second")
    c.add_argument(
        "--tokens-per-s",
        type=_positive_float,
        default=None,
        help="instead of --rate: output tokens per second",
    )
    add_request_lengths(c)
    c.add_argument(
        "--tpot", type=_positive_float, default=None, help="p90 time per output token target, s"
    )
    c.add_argument(
        "--ttft", type=_positive_float, default=None, help="p90 time to first token target, s"
    )
    c.add_argument(
        "--weights",
        type=_list_of(("bf16", "fp8", "int4", "fp4")),
        default="bf16,fp8",
        help="weight element types searched, comma-separated",
    )
    c.add_argument(
        "--kv",
        type=_list_of(KV_DTYPES),
        default="bf16,fp8",
        help="KV-cache element types searched, comma-separated",
    )
    c.add_argument("--pp", type=_ints, default="1", help="pipeline degrees per replica searched")
    c.add_argument("--top", type=_positive_int, default=10, help="deployments shown")
