"""A GPU measurement record (``tools/gpu_check.py``) set against the book's predictions.

The script times kernels on one GPU (or on a small numpy stand-in backend, so that the CPU
tests can run it end to end) and writes one TOML record. This module holds what the script,
the tests and the chapters share:

  * ``book_prediction``: the one place where a measured case meets the book's model
    (``roofline`` for the ceilings, ``predict.train_step`` for a training block,
    ``predict.serve`` for decode and prefill). Other code never calls those directly, so a
    change of their signatures is adapted here once.
  * ``summarize``: median and spread of the raw timings, and predicted / measured.
  * ``validate``: the record's schema, and that every derived number follows from the raw
    timings and the prediction it sits beside.
  * ``dumps`` / ``load``: the TOML text (stdlib ``tomllib`` reads it back).
  * ``achieved_table``: the record as a Markdown table of achieved fractions.

For a ceiling (copy bandwidth, a matmul) the prediction is the datasheet's roofline time,
max(F / P, Q / W), so predicted / measured is the fraction of the datasheet ceiling the chip
achieved. For a training block, a decode step or a prefill it is the book's model, efficiencies
included, so 1 means the model is exact and below 1 that it is optimistic.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
from typing import Any

from . import roofline, specs, tables, units

SCHEMA = "llmphys.gpu_check/1"
SECTIONS = ("copy", "matmul", "train_block", "decode", "prefill")
# Field -> type, for the top level, the tables and each section's cases (bool is checked
# before int: in Python a bool is an int).
TOP_FIELDS: dict[str, type] = {
    "schema": str,
    "date": str,
    "backend": str,
    "quick": bool,
    "accelerator": str,
    "model": str,
    "elapsed_s": float,
}
TABLE_FIELDS: dict[str, dict[str, type]] = {
    "device": {"name": str, "driver": str, "runtime": str},
    "settings": {"n_warmup": int, "n_repeats": int, "seed": int, "time_limit_s": float},
}
CASE_FIELDS: dict[str, type] = {
    "label": str,
    "times_s": list,
    "median_s": float,
    "spread": float,
    "check_error": float,
    "check_tolerance": float,
    "check_passed": bool,
    "predicted_s": float,
    "predicted_over_measured": float,
    "prediction": str,
}
SECTION_FIELDS: dict[str, dict[str, type]] = {
    "copy": {"buffer_bytes": int, "bytes_moved": float},
    "matmul": {"dtype": str, "m": int, "n": int, "k": int, "flop": float, "headline": bool},
    "train_block": {"micro_batch": int, "seq_len": int, "predicted_parts_s": dict},
    "decode": {
        "batch": int,
        "context_tokens": int,
        "cuda_graphs": bool,
        "predicted_parts_s": dict,
    },
    "prefill": {"tokens": int},
}
TRAIN_VOCAB_STUB = 128  # one tensor-core tile wide: no head worth the name, and no GEMM of width 1
# (a width-1 head would pay a whole 128-wide tile in the shape-aware efficiency, 30% of a block)
TRAIN_EXCLUDED_PARTS = ("optimizer",)  # a block's forward + backward runs no optimizer step
DECODE_EXCLUDED_PARTS = ("prefill_stall", "prefill_attention")  # one pure decode step
REL_TOLERANCE = 1e-9  # derived numbers are recomputed from the raw ones: floats, not digits


def summarize(times_s: list[float], predicted_s: float) -> dict[str, float]:
    """Median seconds, spread ((max - min) / median) and predicted / measured of ``times_s``.

    >>> summarize([2.0, 1.0, 3.0], 1.0)
    {'median_s': 2.0, 'spread': 1.0, 'predicted_over_measured': 0.5}
    """
    if not times_s or any(not (t > 0 and math.isfinite(t)) for t in times_s):
        raise ValueError(f"times_s must be positive finite seconds, got {times_s!r}")
    units.check_positive("predicted_s", predicted_s)
    med = float(statistics.median(times_s))
    return {
        "median_s": med,
        "spread": (max(times_s) - min(times_s)) / med,
        "predicted_over_measured": predicted_s / med,
    }


def one_block(model: specs.Model) -> specs.Model:
    """``model`` cut to one decoder block with a stub vocabulary (what a block timing runs)."""
    return dataclasses.replace(model, n_layers=1, vocab_size=TRAIN_VOCAB_STUB)


def book_prediction(
    section: str, case: dict[str, Any], *, model: specs.Model, accelerator: specs.Accelerator
) -> dict[str, Any]:
    """The book's predicted seconds for one measured ``case`` of ``section``, with its parts.

    The only function that calls the prediction models; returns ``predicted_s``,
    ``prediction`` (what it is) and, for a training block and a decode step,
    ``predicted_parts_s``.

    >>> p = book_prediction("copy", {"bytes_moved": 4.8e9}, model=specs.model("llama3_8b"),
    ...                     accelerator=specs.accelerator("h200"))
    >>> round(p["predicted_s"] * 1e3, 3)  # ms: 4.8 GB at the H200's 4.8 TB/s
    1.0
    """
    from . import predict

    acc = accelerator
    if section == "copy":
        return {
            "predicted_s": case["bytes_moved"] / acc.hbm_bytes_per_s,
            "prediction": "datasheet HBM bandwidth: bytes read + written / W",
        }
    if section == "matmul":
        m, n, k, dtype = case["m"], case["n"], case["k"], case["dtype"]
        moved = roofline.matmul_bytes(m, n, k, bytes_per_element=units.bytes_per_element(dtype))
        t = roofline.kernel_time_s(
            acc, flop=roofline.matmul_flop(m, n, k), bytes_moved=moved, dtype=dtype
        )
        return {"predicted_s": t, "prediction": f"datasheet roofline max(F/P, Q/W) at {dtype}"}
    if section == "train_block":
        b, s = case["micro_batch"], case["seq_len"]
        step = predict.train_step(
            one_block(model),
            acc,
            n_chips=1,
            seq_len=s,
            global_batch_tokens=b * s,
            micro_batch_size=b,
            check_memory=False,
        )
        parts = {k: v for k, v in step.parts.items() if k not in TRAIN_EXCLUDED_PARTS and v}
        return {
            "predicted_s": sum(parts.values()),
            "predicted_parts_s": parts,
            "prediction": "predict.train_step, one block on one chip, without the optimizer",
        }
    if section == "decode":
        ctx = case["context_tokens"]
        s = predict.serve(
            model,
            acc,
            n_chips=1,
            batch_size=case["batch"],
            input_tokens=ctx - 1,  # the cache holds I + O/2 positions: ctx - 1 + 1
            output_tokens=2,
            chunked_prefill=False,
            check_memory=False,
        )
        parts = {k: v for k, v in s.parts.items() if k not in DECODE_EXCLUDED_PARTS and v}
        return {
            "predicted_s": sum(parts.values()),
            "predicted_parts_s": parts,
            "prediction": "predict.serve's decode step: weights, KV reads, compute, overhead",
        }
    if section == "prefill":
        s = predict.serve(
            model,
            acc,
            n_chips=1,
            batch_size=1,
            input_tokens=case["tokens"],
            output_tokens=1,
            chunked_prefill=False,
            check_memory=False,
        )
        return {"predicted_s": s.ttft_s, "prediction": "predict.serve's TTFT of one whole prompt"}
    raise ValueError(f"section={section!r} is not known; allowed: {', '.join(SECTIONS)}")


def _check_type(where: str, value: Any, kind: type) -> None:
    ok = (
        isinstance(value, bool)
        if kind is bool
        else (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            if kind is float
            else isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        )
    )
    if not ok:
        raise ValueError(f"{where}: expected {kind.__name__}, got {value!r}")


def _check_fields(where: str, table: Any, fields: dict[str, type]) -> None:
    if not isinstance(table, dict):
        raise ValueError(f"{where}: expected a table, got {table!r}")
    for name, kind in fields.items():
        if name not in table:
            raise ValueError(f"{where}: missing field {name!r}")
        _check_type(f"{where}.{name}", table[name], kind)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOLERANCE, abs_tol=0.0)


def validate(record: dict[str, Any]) -> None:
    """Raise ValueError naming the field when ``record`` breaks the schema or its own numbers.

    Beyond the fields and their types: every case's median, spread and predicted / measured
    must follow from its raw ``times_s`` and ``predicted_s`` (``summarize``), its check must
    agree with its error and tolerance, and its parts must sum to its prediction.
    """
    _check_fields("record", record, TOP_FIELDS)
    if record["schema"] != SCHEMA:
        raise ValueError(f"record.schema: expected {SCHEMA!r}, got {record['schema']!r}")
    for name, fields in TABLE_FIELDS.items():
        _check_fields(name, record.get(name), fields)
    versions = record.get("versions")
    if not isinstance(versions, dict) or not versions:
        raise ValueError("versions: expected a table of library versions")
    for k, v in versions.items():
        _check_type(f"versions.{k}", v, str)
    for section in SECTIONS:
        cases = record.get(section, [])
        if not isinstance(cases, list):
            raise ValueError(f"{section}: expected an array of tables")
        for i, case in enumerate(cases):
            where = f"{section}[{i}]"
            _check_fields(where, case, {**CASE_FIELDS, **SECTION_FIELDS[section]})
            for t in case["times_s"]:
                _check_type(f"{where}.times_s", t, float)
            derived = summarize(case["times_s"], case["predicted_s"])
            for key, value in derived.items():
                if not _close(case[key], value):
                    raise ValueError(
                        f"{where}.{key} = {case[key]!r} does not follow from times_s and "
                        f"predicted_s ({value!r})"
                    )
            if case["check_passed"] != (case["check_error"] <= case["check_tolerance"]):
                raise ValueError(f"{where}.check_passed disagrees with check_error and tolerance")
            parts = case.get("predicted_parts_s")
            if parts is not None and not _close(sum(parts.values()), case["predicted_s"]):
                raise ValueError(f"{where}.predicted_parts_s does not sum to predicted_s")
    for i, skip in enumerate(record.get("skipped", [])):
        _check_fields(f"skipped[{i}]", skip, {"section": str, "label": str, "reason": str})


# ----------------------------------------------------------------- TOML text
def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else f"{v:+}")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    bare = k.replace("_", "").replace("-", "").isalnum() and k.isascii()
    return k if bare else json.dumps(k)


def dumps(record: dict[str, Any]) -> str:
    """The record as TOML text: scalars first, then its tables, then arrays of tables."""
    lines = ["# Written by tools/gpu_check.py; read by llmphys.gpu_record.load. Seconds, bytes,"]
    lines += ["# FLOP; raw timings in times_s, one per repeat, after warm-up.", ""]
    scalars = {k: v for k, v in record.items() if not isinstance(v, (dict, list))}
    lines += [f"{_key(k)} = {_toml_value(v)}" for k, v in scalars.items()]
    for k, v in record.items():
        if isinstance(v, dict):
            lines += ["", f"[{_key(k)}]"] + [f"{_key(a)} = {_toml_value(b)}" for a, b in v.items()]
    for k, v in record.items():
        if isinstance(v, list):
            for row in v:
                lines += ["", f"[[{_key(k)}]]"]
                lines += [f"{_key(a)} = {_toml_value(b)}" for a, b in row.items()]
    return "\n".join(lines) + "\n"


def load(path: str | os.PathLike) -> dict[str, Any]:
    """The record in the TOML file at ``path``, validated."""
    record = specs.read_toml(path)
    try:
        validate(record)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return record


# ----------------------------------------------------------------- the table
_WHAT = {
    "copy": "copy",
    "matmul": "matmul",
    "train_block": "training block, forward + backward",
    "decode": "decode step",
    "prefill": "prefill",
}


def achieved_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measured case: what, measured and predicted seconds, the ratio, the check."""
    rows = []
    for section in SECTIONS:
        for case in record.get(section, []):
            rows.append(
                {
                    "section": section,
                    "label": case["label"],
                    "measured_s": case["median_s"],
                    "spread": case["spread"],
                    "predicted_s": case["predicted_s"],
                    "predicted_over_measured": case["predicted_over_measured"],
                    "check_passed": case["check_passed"],
                }
            )
    return rows


def achieved_fraction_by_shape(record: dict[str, Any], dtype: str) -> dict[tuple, float]:
    """(m, n, k) -> achieved fraction of the datasheet roofline, for the grid's ``dtype``
    matmuls: what an efficiency-by-shape curve of the training model is checked against.

    >>> achieved_fraction_by_shape({"matmul": [{"dtype": "bf16", "m": 256, "n": 256, "k": 256,
    ...     "headline": False, "predicted_over_measured": 0.25}]}, "bf16")
    {(256, 256, 256): 0.25}
    """
    return {
        (c["m"], c["n"], c["k"]): c["predicted_over_measured"]
        for c in record.get("matmul", [])
        if c["dtype"] == dtype and not c["headline"]
    }


def achieved_table(record: dict[str, Any], *, sections: tuple[str, ...] = SECTIONS) -> str:
    """The record as a Markdown table: measured (median, spread), predicted, their ratio.

    For the ceilings the ratio is the achieved fraction of the datasheet; for the rest, the
    book's prediction over the measurement. A case whose output failed its float32 check is
    marked, and a record from the numpy stand-in says so in its caption.
    """
    header = ["case", "measured", "spread", "book's prediction", "predicted / measured", "check"]
    rows = [
        [
            f"{_WHAT[r['section']]}: {r['label']}",
            units.fmt_seconds(r["measured_s"]),
            f"{r['spread']:.0%}",
            units.fmt_seconds(r["predicted_s"]),
            f"{r['predicted_over_measured']:.2f}",
            "ok" if r["check_passed"] else "FAILED",
        ]
        for r in achieved_rows(record)
        if r["section"] in sections
    ]
    device = record["device"]["name"]
    caption = f"{device}, {record['date'][:10]}, predictions for {record['accelerator']}"
    if record["backend"] != "torch":
        caption += f" ({record['backend']} stand-in backend: not a GPU measurement)"
    return caption + "\n\n" + tables.markdown_table(header, rows, align="lrrrrl")
