"""What ``llmphys train`` and ``llmphys serve`` print: a layout's step, memory and throughput.

``train_report`` and ``serve_report`` call the book's prediction (``predict.train_step``,
``predict.serve``) for a layout the command line describes, check that it fits in memory
(``DoesNotFit`` carries the report of one that does not) and return a dict in SI units; the
``_format_*`` functions print it. ``cli`` parses the command line and calls these.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import dataclasses
import textwrap

from . import predict, specs, units
from .cli_reports import WIDTH, _gb

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
    "zero3_collectives": "--zero3-collectives",
    "attention_flops": "--attention-flops",
    "fp8_recipe": "--fp8-recipe",
    "selective_policy": "--selective-policy",
    "moe_dispatcher": "--moe-dispatcher",
    "fused_elementwise": "--fused-elementwise",
    "pipeline_split": "--pipeline-split",
    "attention_kernel": "--attention-kernel",
    "cp_rotate": "--cp-rotate",
    "kv_repeat": "--kv-repeat",
    "state_layout": "--state-layout",
    "state_replicas": "--state-replicas",
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
    >>> r["fits"], r["batch_size"]  # the cache is sized after the step's peak activations
    (True, 694)
    """

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
        ("state_layout", "megatron", "{} state"),
        ("state_replicas", 1, "state replicated {} ways"),
        ("moe_dispatcher", "alltoall", "{} dispatch"),
        ("fused_elementwise", True, "eager elementwise"),
        ("pipeline_split", "even", "{} pipeline split"),
        ("attention_kernel", "flash2", "{} attention"),
        ("cp_rotate", "p2p", "{} K/V rotation"),
        ("kv_repeat", False, "K/V repeated to the query heads"),
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
