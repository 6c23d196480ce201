"""What ``llmphys plan train``, ``llmphys plan serve`` and ``llmphys cost`` print.

Each ``*_report`` returns a dict (SI units, as ``--json`` prints it) that a notebook can
call directly; each ``format_*`` turns one into the human table, 100 columns wide, in the
command line's one unit style (seconds with SI prefixes, tokens/s with SI prefixes, GB =
1e9 bytes, USD with the price and its date). ``csv_rows`` flattens a report for ``--csv``.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Sequence

from . import predict, specs, units
from .predict import plan_serve

MFU_NOTE = "MFU: PaLM's count with causal attention (6 N + 6 L H Q T per token, no recomputation)"
SERVE_NOTE = (
    "TPOT p90 and TTFT p90: one replica at its share of the load in the scheduler simulation "
    "(predict.simulate_serving, Poisson arrivals, fixed lengths); the batch cap is the steady-"
    "state model's largest batch within the TPOT target"
)


def _layout_row(p: predict.TrainingPlan, rank: int) -> dict:
    lay = p.layout
    return {
        "rank": rank,
        "tp": lay.tp,
        "pp": lay.pp,
        "cp": lay.cp,
        "ep": lay.ep,
        "dp": lay.dp,
        "zero_stage": lay.zero_stage,
        "recompute": lay.recompute,
        "micro_batch_size": lay.micro_batch_size,
        "interleave": lay.interleave,
        "step_time_s": p.step_time_s,
        "tokens_per_s": p.tokens_per_s,
        "mfu": p.mfu,
        "memory_per_chip_bytes": p.step.memory_per_chip_bytes,
        "headroom_bytes": p.headroom_bytes,
        "largest_terms_s": dict(p.largest_terms),
    }


def plan_train_report(
    model: specs.Model,
    chip: specs.Accelerator,
    *,
    n_chips: int | None,
    tokens_per_s: float | None,
    max_chips: int,
    top: int,
    **constraints,
) -> dict:
    """``predict.plan_training`` (or ``fewest_chips`` when ``tokens_per_s`` is set) as a dict."""
    if (n_chips is None) == (tokens_per_s is None):
        raise ValueError("give exactly one of --chips (rank layouts) and --tokens-per-s (fewest)")
    if tokens_per_s is not None:
        best = predict.fewest_chips(
            model, chip, tokens_per_s=tokens_per_s, max_chips=max_chips, **constraints
        )
        plans, n_fit, n = [best], None, best.layout.n_chips
    else:
        assert n_chips is not None
        every = predict.plan_training(model, chip, n_chips=n_chips, **constraints)
        plans, n_fit, n = every[:top], len(every), n_chips
    return {
        "model": model.key,
        "model_name": model.name,
        "chip": chip.key,
        "chip_name": chip.name,
        "n_chips": n,
        "target_tokens_per_s": tokens_per_s,
        "seq_len": constraints["seq_len"],
        "global_batch_tokens": constraints["global_batch_tokens"],
        "dtype": constraints.get("dtype", "bf16"),
        "memory_margin": constraints.get("memory_margin", 0.0),
        "state_layout": constraints.get("state_layout", "megatron"),
        "state_replicas": constraints.get("state_replicas", 1),
        "n_layouts_that_fit": n_fit,
        "mfu_convention": MFU_NOTE,
        "layouts": [_layout_row(p, k + 1) for k, p in enumerate(plans)],
    }


SHORT = {  # the step budget's parts, as the plan table names them
    "gemm": "gemm",
    "attention": "attn",
    "memory_bound": "mem",
    "tp_collectives": "tp",
    "pipeline_p2p": "p2p",
    "pipeline_bubble": "bubble",
    "dp_fsdp": "dp",
    "cp_attention": "cp",
    "ep_all_to_all": "ep",
    "optimizer": "adam",
}


def _shares(terms: dict[str, float], step_s: float) -> str:
    return " ".join(f"{SHORT.get(k, k)} {t / step_s:.0%}" for k, t in terms.items())


def _state(r: dict) -> str:
    """The state layout when a reader set it away from Megatron's, as the train report names it."""
    out = "" if r["state_layout"] == "megatron" else f", {r['state_layout']} state"
    return out + ("" if r["state_replicas"] == 1 else f" replicated {r['state_replicas']} ways")


def format_plan_train(r: dict) -> str:
    """The ranked layouts as a table."""
    if r["target_tokens_per_s"] is not None:
        head = (
            f"{r['model_name']} on {r['chip_name']}: the fewest chips reaching "
            f"{units.fmt_si(r['target_tokens_per_s'], 'tokens/s')} are {r['n_chips']:,}"
        )
    else:
        head = (
            f"{r['model_name']} on {r['n_chips']:,} x {r['chip_name']}: "
            f"{r['n_layouts_that_fit']:,} legal layouts fit; the fastest {len(r['layouts'])}"
        )
    lines = [
        head,
        f"seq {r['seq_len']:,} tokens, batch {r['global_batch_tokens']:,.0f} tokens, "
        f"{r['dtype']} matmuls, {r['memory_margin']:.0%} of HBM held back{_state(r)}",
        f"{'#':>2} {'tp':>2} {'pp':>3} {'cp':>2} {'ep':>2} {'dp':>4} {'Z':>1} {'rc':<5}"
        f"{'mb':>2} {'v':>2} {'step':>8} {'tokens/s':>13} {'MFU':>5} {'room':>5} largest terms",
    ]
    for row in r["layouts"]:
        lines.append(
            f"{row['rank']:>2} {row['tp']:>2} {row['pp']:>3} {row['cp']:>2} {row['ep']:>2} "
            f"{row['dp']:>4} {row['zero_stage']:>1} {row['recompute'][:4]:<5}"
            f"{row['micro_batch_size']:>2} {row['interleave']:>2} "
            f"{units.fmt_seconds(row['step_time_s']):>8} "
            f"{units.fmt_si(row['tokens_per_s'], 'tokens/s'):>13} {row['mfu']:>5.1%} "
            f"{row['headroom_bytes'] / units.GB:>5.1f} "
            f"{_shares(row['largest_terms_s'], row['step_time_s'])}"
        )
    lines += [
        "Z: ZeRO stage; rc: recomputation (none, sele[ctive], full); v: chunks per pipeline stage",
        "room: HBM left per chip, GB (1e9 B); largest terms: the step's three largest, as shares",
        r["mfu_convention"],
    ]
    return "\n".join(lines)


def plan_serve_report(
    model: specs.Model, *, chips: Sequence[str] | None, top: int, **targets
) -> dict:
    """``plan_serve.plan_serving`` as a dict, with the dated price of each chip it used."""
    accs = None if not chips else [specs.accelerator(c) for c in chips]
    plans = plan_serve.plan_serving(model, accelerators=accs, **targets)
    if not plans:
        raise predict.LayoutDoesNotFit(
            f"no deployment of {model.key} meets the targets on "
            f"{', '.join(chips or plan_serve.priced_accelerators())}: every replica layout "
            f"either misses the latency target at batch 1 or does not fit in HBM"
        )
    prices = {p.accelerator: (p.usd_per_chip_hour, p.price_as_of) for p in plans}
    rate = targets.get("request_rate_per_s")
    load = rate * targets["output_tokens"] if rate else targets.get("output_tokens_per_s")
    return {
        "model": model.key,
        "model_name": model.name,
        "output_tokens_per_s": load,
        "request_rate_per_s": rate,
        "input_tokens": targets["input_tokens"],
        "output_tokens": targets["output_tokens"],
        "tpot_p90_s": targets.get("tpot_p90_s"),
        "ttft_p90_s": targets.get("ttft_p90_s"),
        "latency_note": SERVE_NOTE,
        "prices": {k: {"usd_per_chip_hour": v, "as_of": d} for k, (v, d) in prices.items()},
        "deployments": [{k: getattr(p, k) for k in p.__dataclass_fields__} for p in plans[:top]],
    }


def _p90(d: dict, metric: str) -> float:
    """The simulated p90 where the plan has one, else the steady-state mean."""
    v = d.get(f"{metric}_p90_s")
    return d[f"{metric}_s"] if v is None else v


def format_plan_serve(r: dict) -> str:
    """The cheapest deployments as a table."""
    target = ", ".join(
        f"{name} <= {units.fmt_seconds(r[key])}"
        for name, key in (("TPOT", "tpot_p90_s"), ("TTFT", "ttft_p90_s"))
        if r[key] is not None
    )
    load = units.fmt_si(r["output_tokens_per_s"], "tokens/s")
    head = f"{r['model_name']}: {load} out"
    if r["request_rate_per_s"]:
        head += f" ({r['request_rate_per_s']:g} requests/s)"
    head += f", {r['input_tokens']:,} in / {r['output_tokens']:,} out per request"
    lines = [
        *textwrap.wrap(head, 100),
        "targets: " + (target or "none (the largest batch that fits)"),
        f"{'#':>2} {'chip':<10}{'chips':>6} {'repl':>5} {'tp':>2} {'ep':>2} {'pp':>2} "
        f"{'weights':<8}{'kv':<5}{'batch':>6} {'TPOT p90':>9} {'TTFT p90':>9} {'USD/h':>9} "
        f"{'USD/Mtok':>8}",
    ]
    for k, d in enumerate(r["deployments"], 1):
        lines.append(
            f"{k:>2} {d['accelerator']:<10}{d['n_chips']:>6,} {d['n_replicas']:>5,} "
            f"{d['tp']:>2} {d['ep']:>2} {d['pp']:>2} {d['weight_dtype']:<8}{d['kv_dtype']:<5}"
            f"{d['batch_per_replica']:>6,} "
            f"{units.fmt_seconds(_p90(d, 'tpot')):>9} {units.fmt_seconds(_p90(d, 'ttft')):>9} "
            f"{d['usd_per_hour']:>9,.2f} "
            f"{d['usd_per_m_output_tokens']:>8.3f}"
        )
    lines.append("batch: sequences per replica; USD/Mtok: per million output tokens at this load")
    for chip, p in r["prices"].items():
        lines.append(
            f"price: {chip} ${p['usd_per_chip_hour']:.2f} per chip-hour "
            f"(prices.toml gpu_hour_usd.{chip}, as of {p['as_of']})"
        )
    lines += textwrap.wrap(r["latency_note"], 100)
    return "\n".join(lines)


def cost_serve_report(serve_report: dict) -> dict:
    """A ``cli.serve_report`` with its cost: USD per hour and per million tokens."""
    c = predict.serving_cost(
        serve_report["chip"],
        n_chips=serve_report["deployment"]["n_chips"],
        output_tokens_per_s=serve_report["output_tokens_per_s"],
        input_tokens_per_s=serve_report["input_tokens_per_s"],
    )
    return {**serve_report, "cost": c}


def cost_train_report(train_report: dict, *, n_tokens: float) -> dict:
    """A ``cli.train_report`` with the chip-hours, days and USD of ``n_tokens`` at its rate."""
    c = predict.training_cost(
        train_report["chip"],
        n_chips=train_report["layout"]["n_chips"],
        tokens_per_s=train_report["tokens_per_s"],
        n_tokens=n_tokens,
    )
    return {**train_report, "n_tokens": n_tokens, "cost": c}


def format_cost(r: dict, body: str) -> str:
    """``body`` (the train or serve text) followed by the cost lines and the price."""
    c = r["cost"]
    if "n_tokens" in r:
        lines = [
            f"cost         {units.fmt_si(r['n_tokens'], 'tokens')}: "
            f"{c['chip_hours']:,.0f} chip-hours, {c['days']:,.1f} days, ${c['usd']:,.0f}"
        ]
    else:
        lines = [
            f"cost         ${c['usd_per_hour']:,.2f} per hour; per million tokens: "
            f"${c['usd_per_m_output_tokens']:,.3f} output, ${c['usd_per_m_input_tokens']:,.3f} "
            f"input, ${c['usd_per_m_tokens']:,.3f} all",
            "             (each charges the whole bill to that kind of token)",
        ]
    return "\n".join([body, *lines, "             " + predict.price_line(c)])


def _flat(value: object, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{prefix}{k}.", out)
    elif not isinstance(value, list):
        out[prefix.rstrip(".")] = value


def csv_rows(rows: Sequence[dict]) -> str:
    """``rows`` (nested dicts) as CSV: one column per leaf, dotted names, SI units.

    >>> print(csv_rows([{"tp": 1, "parts": {"a": 0.5}}, {"tp": 2, "parts": {"a": 0.25}}]))
    tp,parts.a
    1,0.5
    2,0.25
    """
    flat = []
    for row in rows:
        out: dict = {}
        _flat(row, "", out)
        flat.append(out)
    names: list[str] = []
    for row in flat:
        names += [k for k in row if k not in names]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    w.writeheader()
    w.writerows(flat)
    return buf.getvalue().rstrip("\n")
