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
notebook can call them directly; ``main`` only parses, formats and exits.

Introduced in chapters/your_own_model.ipynb.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import textwrap
from collections.abc import Sequence

from . import accounting, cli_plan, hf_config, kv_cache, roofline, specs, units

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


TRAIN_FLAGS = {  # train_step's keyword -> the flag that sets it
    "n_chips": "--chips",
    "seq_len": "--seq-len",
    "global_batch_tokens": "--batch-tokens",
    "micro_batch_size": "--micro-batch",
    "interleave": "--interleave",
    "recompute": "--recompute",
    "zero_stage": "--zero-stage",
    "dtype": "--dtype",
    "schedule": "--schedule",
    "grad_bytes": "--grad-dtype",
    "fsdp_weight_gathers": "--fsdp-weight-gathers",
    "attention_flops": "--attention-flops",
    "fp8_recipe": "--fp8-recipe",
    "selective_policy": "--selective-policy",
    "moe_dispatcher": "--moe-dispatcher",
    "fused_elementwise": "--fused-elementwise",
    "pipeline_split": "--pipeline-split",
}
SERVE_FLAGS = {  # serve's keyword -> the flag that sets it
    "n_chips": "--chips",
    "batch_size": "--batch",
    "input_tokens": "--input",
    "output_tokens": "--output",
    "weight_dtype": "--weights",
    "kv_dtype": "--kv",
    "math_dtype": "--math-dtype",
    "chunk_tokens": "--chunk-tokens",
    "draft_tokens": "--draft-tokens",
    "acceptance_rate": "--acceptance-rate",
    "draft_model": "--draft-model",
    "prefill_chips": "--prefill-chips",
}
MFU_CONVENTIONS = {  # --attention-flops -> the FLOP count the printed MFU uses
    "causal": (
        "PaLM's count with the attention term halved for the causal mask, 6 N + 6 L H Q T FLOP "
        "per token with N the active parameters; recomputation not counted (HFU counts it)"
    ),
    "full": (
        "PaLM's count, 6 N + 12 L H Q T FLOP per token with N the active parameters: "
        "attention counted in full (not causal), recomputation not counted (HFU counts it)"
    ),
}
MFU_CONVENTION = MFU_CONVENTIONS["full"]  # PaLM's own count (Chowdhery et al. 2022, app. B)
GRAD_DTYPES = {"bf16": 2.0, "fp32": 4.0}  # bytes per gradient element the DP group reduces


class DoesNotFit(Exception):
    """A layout whose memory per chip exceeds what the chip offers (exit status 3)."""


def flag_names(message: str) -> str:
    """``message`` with the library's keyword names replaced by the flags that set them.

    >>> flag_names("global_batch_tokens=1e+06 over dp=8; tp=3 does not divide")
    '--batch-tokens=1e+06 over dp=8; --tp=3 does not divide'
    """
    import re

    for name, flag in {**TRAIN_FLAGS, **SERVE_FLAGS, **PLAN_FLAGS}.items():
        message = re.sub(rf"(?<![-\w]){name}\b", flag, message)
    message = message.replace("accelerator='", "--chip='")  # the planner's chip list
    return re.sub(r"(?<![-\w])(tp|pp|cp|ep)=", r"--\1=", message)


def check_layout(
    model: specs.Model,
    *,
    tp: int,
    ep: int,
    context_tokens: int | None = None,
    context_flags: str = "",
) -> None:
    """Refuse, naming the flag, a layout no framework can run on ``model``.

    TP shards attention heads: it must divide the query heads, and divide the KV heads or
    be a multiple of them (each KV head replicated, as vLLM does): ``predict.tp_degrees``,
    the planner's rule. EP shards routed experts: it
    must divide their number. A sequence of ``context_tokens`` must fit the model's
    context (``max_position_embeddings``).

    >>> check_layout(specs.model("llama3_8b"), tp=8, ep=1)  # 32 query, 8 KV heads: runs
    """
    from . import predict

    h, g = model.n_heads, model.n_kv_heads
    ok = predict.tp_degrees(model, max_tp=h)
    if tp not in ok:
        raise ValueError(
            f"--tp {tp}: the model's {h} query heads and {g} KV heads are not divisible by "
            f"it; allowed: {', '.join(map(str, ok))}"
        )
    if ep > 1 and model.moe is not None and model.moe.n_experts % ep:
        e = model.moe.n_experts
        ok = [d for d in range(1, e + 1) if e % d == 0]
        raise ValueError(
            f"--ep {ep}: the model's {e} routed experts are not divisible by it; allowed: "
            f"{', '.join(map(str, ok))}"
        )
    if context_tokens is not None and context_tokens > model.max_context_tokens:
        raise ValueError(
            f"{context_flags} = {context_tokens:,} tokens exceed the model's context of "
            f"{model.max_context_tokens:,} tokens"
        )


def _usable(chip: specs.Accelerator, margin: float) -> specs.Accelerator:
    """``chip`` with ``margin`` of its HBM held back (fragmentation, the framework's buffers)."""
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"--memory-margin must be a fraction in [0, 1), got {margin}")
    return dataclasses.replace(chip, hbm_bytes=chip.hbm_bytes * (1.0 - margin))


def _names(model: specs.Model, chip: specs.Accelerator) -> dict:
    return {"model": model.key, "model_name": model.name, "chip": chip.key, "chip_name": chip.name}


def _memory(used: float, hbm: float, margin: float, parts: dict[str, float]) -> dict:
    usable = hbm * (1.0 - margin)
    return {
        "memory_per_chip_bytes": used,
        "hbm_bytes": hbm,
        "memory_margin": margin,
        "usable_bytes": usable,
        "bytes_over": max(used - usable, 0.0),
        "fits": used <= usable,
        "memory_parts_bytes": parts,
    }


def train_report(
    model: specs.Model, chip: specs.Accelerator, *, memory_margin: float = 0.0, **layout
) -> dict:
    """``predict.train_step`` as a dict: step time (s), MFU, HFU, tokens/s, memory, parts.

    ``memory_margin`` is the fraction of HBM held back; the layout fits when its memory per
    chip is at most the rest (``fits``; ``bytes_over`` says by how much it misses).

    >>> r = train_report(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=8,
    ...                  seq_len=8192, global_batch_tokens=8 * 8192)
    >>> r["fits"], r["dp"]  # unsharded Adam state does not fit beside 8K-token activations
    (False, 8)
    >>> train_report(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=8,
    ...              seq_len=8192, global_batch_tokens=8 * 8192, zero_stage=3)["fits"]
    True
    """
    from . import predict

    check_layout(model, tp=layout.get("tp", 1), ep=layout.get("ep", 1))
    s = predict.train_step(model, _usable(chip, memory_margin), check_memory=False, **layout)
    return {
        **_names(model, chip),
        "layout": {k: v for k, v in layout.items()},
        "mfu_convention": MFU_CONVENTIONS[s.attention_flops],
        "step_time_s": s.step_time_s,
        "mfu": s.mfu,
        "hfu": s.hfu,
        "tokens_per_s": s.tokens_per_s,
        "dp": s.dp,
        "n_microbatches": s.n_microbatches,
        "parts_s": s.parts,
        **_memory(s.memory_per_chip_bytes, chip.hbm_bytes, memory_margin, s.memory_parts),
    }


def serve_report(
    model: specs.Model, chip: specs.Accelerator, *, memory_margin: float = 0.0, **deployment
) -> dict:
    """``predict.serve`` as a dict: tokens/s, TPOT and TTFT (s), memory (bytes), step parts.

    With ``batch_size=None`` the batch is the largest whose KV cache fits in the HBM left
    after ``memory_margin``.

    >>> r = serve_report(specs.model("llama3_8b"), specs.accelerator("h100_sxm"), n_chips=1,
    ...                  batch_size=None, input_tokens=1000, output_tokens=1000,
    ...                  weight_dtype="fp8", kv_dtype="fp8")
    >>> r["fits"], r["batch_size"]
    (True, 709)
    """
    from . import predict

    i, o = deployment.get("input_tokens", 0), deployment.get("output_tokens", 0)
    check_layout(
        model,
        tp=deployment.get("tp", 1),
        ep=deployment.get("ep", 1),
        context_tokens=i + o,
        context_flags=f"--input {i:,} + --output {o:,}",
    )
    s = predict.serve(model, _usable(chip, memory_margin), check_memory=False, **deployment)
    return {
        **_names(model, chip),
        "deployment": {k: getattr(v, "key", v) for k, v in deployment.items()},
        "output_tokens_per_s": s.output_tokens_per_s,
        "input_tokens_per_s": s.input_tokens_per_s,
        "tpot_s": s.tpot_s,
        "tpot_worst_s": s.tpot_worst_s,
        "ttft_s": s.ttft_s,
        "batch_size": s.batch_size,
        "n_replicas": s.n_replicas,
        "tokens_per_step": s.tokens_per_step,
        "step_s": s.step_s,
        "parts_s": s.parts,
        **_memory(s.memory_per_chip_bytes, chip.hbm_bytes, memory_margin, s.memory_parts),
    }


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _rate(tokens_per_s: float) -> str:
    return units.fmt_si(tokens_per_s, "tokens/s")


def _budget_lines(parts: dict[str, float], total_s: float) -> list[str]:
    return [
        f"  {name:<20}{units.fmt_seconds(t):>12}{t / total_s:>8.1%}"
        for name, t in parts.items()
        if t > 0
    ]


def _memory_line(r: dict) -> str:
    margin = (
        f", {r['memory_margin']:.0%} held back: {_gb(r['usable_bytes'])} usable"
        if r["memory_margin"]
        else ""
    )
    return (
        f"memory       {_gb(r['memory_per_chip_bytes'])} per chip of {_gb(r['hbm_bytes'])} "
        f"HBM{margin}"
    )


def _format_train(r: dict) -> str:
    lay = r["layout"]
    head = (
        f"{r['model_name']} on {r['chip_name']}: {_n(lay['n_chips'], 'chip')}, tp {lay['tp']} "
        f"pp {lay['pp']} cp {lay['cp']} ep {lay['ep']} dp {r['dp']}, ZeRO {lay['zero_stage']}, "
        f"recompute {lay['recompute']}, {lay['dtype']} matmuls"
    )
    for key, default, text in (  # the options a reader set away from the default, named
        ("selective_policy", "attention", "selective policy {}"),
        ("moe_dispatcher", "alltoall", "{} dispatch"),
        ("fused_elementwise", True, "eager elementwise"),
        ("pipeline_split", "even", "{} pipeline split"),
        ("fp8_recipe", "delayed", "{} FP8 scaling"),
        ("sequence_parallel", True, "no sequence parallelism"),
        ("flash_attention", True, "no flash attention"),
    ):
        if lay.get(key, default) != default:
            head += ", " + text.format(lay[key])
    lines = [
        *textwrap.wrap(head, WIDTH),
        "step budget, one chip's critical path:",
        *_budget_lines(r["parts_s"], r["step_time_s"]),
        f"  {'step':<20}{units.fmt_seconds(r['step_time_s']):>12}",
        f"throughput   {_rate(r['tokens_per_s'])}, {r['n_microbatches']} micro-batches per rank",
        f"MFU          {r['mfu']:.1%} (HFU {r['hfu']:.1%})",
        *textwrap.wrap(
            "MFU convention: " + r["mfu_convention"],
            WIDTH - 2,
            initial_indent="  ",
            subsequent_indent="  ",
        ),
        _memory_line(r) + " (fits)",
    ]
    return "\n".join(lines)


def _format_serve(r: dict) -> str:
    d = r["deployment"]
    head = (
        f"{r['model_name']} on {r['chip_name']}: {_n(d['n_chips'], 'chip')}, tp {d['tp']} "
        f"ep {d['ep']} pp {d['pp']}, {_n(r['n_replicas'], 'replica')}, weights "
        f"{d['weight_dtype']}, KV cache {d['kv_dtype']}"
    )
    auto = " (the most whose KV cache fits)" if d.get("batch_size") is None else ""
    lines = [
        *textwrap.wrap(head, WIDTH),
        "decode step budget, one replica:",
        *_budget_lines(r["parts_s"], r["step_s"]),
        f"  {'decode step':<20}{units.fmt_seconds(r['step_s']):>12}",
        f"batch        {r['batch_size']:,} sequences{auto}",
        (
            f"throughput   {_rate(r['output_tokens_per_s'])} out, "
            f"{_rate(r['input_tokens_per_s'])} in"
        ),
        (
            f"latency      TPOT {units.fmt_seconds(r['tpot_s'])} (longest gap "
            f"{units.fmt_seconds(r['tpot_worst_s'])}), TTFT {units.fmt_seconds(r['ttft_s'])}"
        ),
        _memory_line(r) + " (fits)",
    ]
    return "\n".join(lines)


def _does_not_fit(r: dict, command: str) -> str:
    hint = {
        "train": "more chips, a larger --tp or --pp, --zero-stage 3 or --recompute full",
        "serve": "more chips, a larger --tp, a smaller --batch or narrower --weights and --kv",
    }[command]
    parts = ", ".join(f"{k} {_gb(v)}" for k, v in r["memory_parts_bytes"].items())
    return (
        f"does not fit: {r['model_name']} on {r['chip_name']} needs "
        f"{_gb(r['memory_per_chip_bytes'])} per chip ({parts}); the chip offers "
        f"{_gb(r['usable_bytes'])}: {_gb(r['bytes_over'])} over. To shrink it: {hint}"
    )


# ----------------------------------------------------------------- parsing
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a fraction in [0, 1), got {text!r}")
    return value


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


MODEL_HELP = (
    "a registry key (see `llmphys models`), a path to a Hugging Face config.json or its "
    "folder, or a Hugging Face repo id (org/name) whose config.json is in the local cache"
)
CHIP_HELP = "a registry key (see `llmphys chips`) or a path to an accelerator TOML file"


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


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def _list_of(choices: Sequence[str]):
    """A comma-separated list of ``choices`` (argparse type)."""

    def parse(text: str) -> list[str]:
        items = [t for t in text.split(",") if t]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{text!r}: each must be one of {', '.join(choices)} (comma-separated)"
            )
        return items

    return parse


def _ints(text: str) -> list[int]:
    try:
        items = [int(t) for t in text.split(",") if t]
    except ValueError:
        items = []
    if not items or min(items) < 0:
        raise argparse.ArgumentTypeError(f"must be whole numbers, comma-separated, got {text!r}")
    return items


def _plan_train_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``plan train``: the problem, the constraints, the fewest-chips mode."""
    from . import parallelism, predict

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
    c.add_argument(
        "--grad-dtype",
        choices=tuple(GRAD_DTYPES),
        default="bf16",
        help="width of the gradients the data-parallel group reduces",
    )
    c.add_argument(
        "--fsdp-weight-gathers",
        type=int,
        choices=(1, 2),
        default=2,
        help="weight all-gathers per step under ZeRO-3 (1: kept through the backward pass)",
    )
    c.add_argument(
        "--no-flash-attention",
        action="store_true",
        help="materialise the attention scores (no fused flash kernel)",
    )
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
    c.add_argument("--input", type=_positive_int, required=True, help="prompt tokens")
    c.add_argument("--output", type=_positive_int, required=True, help="generated tokens")
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


def _step_options(c: argparse.ArgumentParser) -> None:
    """The step model's kernel and dispatch options, flags of ``train`` and ``plan train``."""
    from . import predict
    from .predict import terms as predict_terms

    c.add_argument(
        "--no-sequence-parallel",
        action="store_true",
        help="every TP rank repeats the norms and dropout on the whole sequence (2021 Megatron)",
    )
    c.add_argument(
        "--selective-policy",
        choices=predict_terms.SELECTIVE_POLICIES,
        default="attention",
        help="what --recompute selective recomputes: attention = Megatron's, the attention "
        "core only (free under a flash kernel); op = torchtitan's op-level policy, every "
        "second matmul of a block and its norms, activation and rotary run again; layer = "
        "torchtitan's every-other-layer checkpointing",
    )
    c.add_argument(
        "--moe-dispatcher",
        choices=predict_terms.MOE_DISPATCHERS,
        default="alltoall",
        help="how expert parallelism moves tokens: alltoall = NCCL's all-to-all, every remote "
        "copy of a token sent on its own; deepep = DeepEP's node-deduplicated dispatch, a "
        "token sent once to each other node holding one of its experts, then forwarded over "
        "NVLink (the two differ only when --ep spans more than one scale-up domain)",
    )
    c.add_argument(
        "--fused-elementwise",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fused norm, activation and rotary kernels; --no-fused-elementwise is eager "
        "PyTorch, each elementwise op its own kernel and its own trip through HBM",
    )
    c.add_argument(
        "--fp8-recipe",
        choices=predict.FP8_RECIPES[1:],
        default="delayed",
        help="FP8 scaling recipe with --dtype fp8: delayed = per-tensor scales from an amax "
        "history; tensorwise = current per-tensor scaling, which reads each input once more "
        "for its amax; blockwise = per-block scales; mxfp8 = MX 32-element block scales",
    )


def _train_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``train`` and ``cost train``: every keyword of ``predict.train_step``."""
    from . import parallelism, predict

    c.add_argument(
        "--pipeline-split",
        choices=predict.layout.PIPELINE_SPLITS,
        default="even",
        help="how layers fill the pipeline's chunks: even = layers split evenly, the output "
        "head on the last chunk; account_embedding_loss = embedding and loss counted as one "
        "layer each (Megatron's --account-for-*-in-pipeline-split); the busiest stage sets "
        "the pace",
    )
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--chips", type=_positive_int, required=True, help="chips in the run")
    for flag, text in (
        ("tp", "tensor-parallel degree (divides the query and KV heads)"),
        ("pp", "pipeline stages"),
        ("cp", "context-parallel degree (divides --seq-len)"),
        ("ep", "expert-parallel degree (divides the routed experts and dp)"),
    ):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=text)
    c.add_argument("--seq-len", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument(
        "--batch-tokens", type=_positive_int, required=True, help="global batch in tokens"
    )
    c.add_argument("--micro-batch", type=_positive_int, default=1, help="sequences per micro-batch")
    c.add_argument(
        "--interleave", type=_positive_int, default=1, help="model chunks per pipeline stage"
    )
    c.add_argument(
        "--schedule",
        choices=parallelism.SCHEDULES,
        default=None,
        help="pipeline schedule (default: interleaved when --interleave > 1, else 1f1b)",
    )
    c.add_argument(
        "--recompute",
        choices=parallelism.RECOMPUTE,
        default="none",
        help="activation recomputation",
    )
    c.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3), default=1, help="ZeRO stage")
    c.add_argument(
        "--fsdp-weight-gathers",
        type=int,
        choices=(1, 2),
        default=2,
        help="weight all-gathers per step under ZeRO-3 (1: kept through the backward pass)",
    )
    c.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="matrix precision")
    c.add_argument(
        "--grad-dtype",
        choices=tuple(GRAD_DTYPES),
        default="bf16",
        help="width of the gradients the data-parallel group reduces",
    )
    c.add_argument(
        "--no-flash-attention",
        action="store_true",
        help="materialise the attention scores (no fused flash kernel)",
    )
    _step_options(c)
    c.add_argument(
        "--attention-flops",
        choices=predict.ATTENTION_FLOPS,
        default="causal",
        help="the FLOP count the MFU uses: causal = 6 N + 6 L H Q T per token (the mask halves "
        "the attention products); full = PaLM's 6 N + 12 L H Q T",
    )
    c.add_argument(
        "--memory-margin",
        type=_fraction,
        default=0.0,
        help="fraction of HBM held back from the layout (fragmentation, framework buffers)",
    )


def _serve_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` and ``cost serve``."""
    from . import predict

    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--chips", type=_positive_int, required=True, help="chips, all replicas")
    for flag, text in (
        ("tp", "tensor-parallel degree per replica (divides the query and KV heads)"),
        ("ep", "expert-parallel degree per replica (divides the routed experts)"),
        ("pp", "pipeline stages per replica"),
    ):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=text)
    c.add_argument(
        "--batch",
        type=_positive_int,
        default=None,
        help="concurrent sequences, whole deployment (default: the most that fit)",
    )
    c.add_argument("--input", type=_positive_int, required=True, help="prompt tokens")
    c.add_argument("--output", type=_positive_int, required=True, help="generated tokens")
    c.add_argument(
        "--weights",
        choices=("bf16", "fp8", "int4", "fp4"),
        default="bf16",
        help="weight element type",
    )
    c.add_argument("--kv", choices=KV_DTYPES, default="bf16", help="KV-cache element type")
    c.add_argument(
        "--math-dtype",
        choices=("bf16", "fp16", "fp8", "fp4"),
        default=None,
        help="matmul precision (default: the weights', BF16 for int4)",
    )
    c.add_argument(
        "--no-chunked-prefill",
        action="store_true",
        help="prefill each prompt whole, stalling the batch (default: chunked)",
    )
    c.add_argument(
        "--chunk-tokens",
        type=_positive_int,
        default=predict.CHUNK_TOKENS,
        help="prompt tokens one step carries with chunked prefill",
    )
    c.add_argument(
        "--draft-tokens",
        type=_whole,
        default=0,
        help="speculative tokens drafted per step (0: no speculation)",
    )
    c.add_argument(
        "--acceptance-rate",
        type=_fraction,
        default=0.0,
        help="chance each drafted token is accepted",
    )
    c.add_argument(
        "--draft-model",
        metavar="MODEL",
        default=None,
        help="the draft model (default: a free drafter, e.g. an n-gram or MTP head)",
    )
    c.add_argument(
        "--prefill-chips",
        type=_whole,
        default=0,
        help="chips that only prefill (disaggregated layout)",
    )
    c.add_argument(
        "--memory-margin",
        type=_fraction,
        default=0.0,
        help="fraction of HBM held back from weights and KV cache",
    )


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
            dtype=args.dtype,
            grad_bytes=GRAD_DTYPES[args.grad_dtype],
            flash_attention=not args.no_flash_attention,
            sequence_parallel=not args.no_sequence_parallel,
            selective_policy=args.selective_policy,
            moe_dispatcher=args.moe_dispatcher,
            fused_elementwise=args.fused_elementwise,
            pipeline_split=args.pipeline_split,
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


PLAN_FLAGS = {  # plan_training's and plan_serving's keywords -> the flags that set them
    "tokens_per_s": "--tokens-per-s",
    "max_chips": "--max-chips",
    "max_tp": "--max-tp",
    "request_rate_per_s": "--rate",
    "output_tokens_per_s": "--tokens-per-s",
    "tpot_p90_s": "--tpot",
    "ttft_p90_s": "--ttft",
    "recomputes": "--recompute",
    "zero_stages": "--zero-stages",
}


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
                flash_attention=not args.no_flash_attention,
                sequence_parallel=not args.no_sequence_parallel,
                selective_policy=args.selective_policy,
                moe_dispatcher=args.moe_dispatcher,
                fused_elementwise=args.fused_elementwise,
                fp8_recipe=args.fp8_recipe,
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
