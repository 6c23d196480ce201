"""Accelerator and model specs, loaded from the sourced registries in ``data/``.

``data/accelerators.toml`` and ``data/models.toml`` hold one table per chip or
model, every number in SI base units with its source, date and the vendor's
own wording. The loaders here turn each table into a frozen, keyword-only
dataclass and refuse anything they do not understand: a missing field, an
unknown field or a value of the wrong type raises an error that names the
file, the entry and the field. Make variants with ``dataclasses.replace``::

    h100 = specs.accelerator("h100_sxm")
    h100_fast = dataclasses.replace(h100, hbm_bytes_per_s=4.8e12)
Field meanings: chapters/notation.md.

``data/scenarios.toml`` holds the book's worked cases (Llama 3's run, the series' examples, a
rack, a queue) and :func:`scenario` reads them into one typed dataclass per ``kind``; a case
names registry entries by key instead of copying their numbers.

Longer than 400 lines because it is every registry's loader and schema in one place: splitting
it would give the data two front doors.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import functools
import os
import tomllib
import types
import typing
from pathlib import Path

DATA_ENV_VAR = "LLMPHYS_DATA"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Alternative:
    """A value from another source that disagrees with the one the book uses."""

    field: str
    value: float
    source: str
    note: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Accelerator:
    """One accelerator's published numbers, in SI units. Peaks are dense; links per direction."""

    key: str  # registry key, e.g. "h100_sxm"
    name: str
    vendor: str
    launch_year: int
    peak_bf16_flop_per_s: float  # dense (no 2:4 sparsity)
    hbm_bytes: float  # usable: what the driver reports (nvidia-smi memory.total, ROCm pool)
    hbm_bytes_nominal: float  # the vendor's headline figure in its own unit ("80GB" -> 80e9)
    hbm_bytes_per_s: float
    scale_up_bytes_per_s_per_direction: float  # NVLink / Infinity Fabric / ICI, one way
    scale_up_domain_size: int  # chips joined by the scale-up fabric
    scale_out_bytes_per_s_per_direction: float  # NIC bandwidth per chip, one way
    source: str
    as_of: datetime.date
    notes: str
    quotes: dict[str, str]  # field -> the vendor's wording
    estimated: tuple[str, ...] = ()  # fields that are our derivation, not a vendor figure
    alternatives: tuple[Alternative, ...] = ()
    peak_fp8_flop_per_s: float | None = None  # dense; None: no native FP8
    peak_fp4_flop_per_s: float | None = None  # dense; None: no native FP4
    peak_bf16_sparse_flop_per_s: float | None = None  # only where the vendor quotes one
    peak_int8_op_per_s: float | None = None  # dense integer matrix ops/s; None: not recorded
    peak_int4_op_per_s: float | None = None  # dense; None: no native INT4 (or not recorded)
    tdp_w: float | None = None  # None: not published

    @property
    def scale_up_bytes_per_s_bidirectional(self) -> float:
        """Both directions added, the figure most datasheets print."""
        return 2.0 * self.scale_up_bytes_per_s_per_direction

    @property
    def matrix_dtypes(self) -> tuple[str, ...]:
        """Precisions with a published dense peak, widest first (e.g. bf16, fp8, fp4)."""
        peaks = (
            ("bf16", self.peak_bf16_flop_per_s),
            ("fp8", self.peak_fp8_flop_per_s),
            ("fp4", self.peak_fp4_flop_per_s),
        )
        return tuple(d for d, p in peaks if p is not None)

    @property
    def integer_dtypes(self) -> tuple[str, ...]:
        """Integer formats with a recorded dense matrix peak, widest first (int8, int4)."""
        peaks = (("int8", self.peak_int8_op_per_s), ("int4", self.peak_int4_op_per_s))
        return tuple(d for d, p in peaks if p is not None)

    def peak_flop_per_s(self, dtype: str = "bf16") -> float:
        """Dense peak of the matrix units at ``dtype``: FLOP/s for bf16, fp16, fp8, fp4.

        For int8 and int4 the same count of integer operations per second (a multiply-add
        is two), so that ridge points compare across formats.
        """
        peaks = {
            "bf16": self.peak_bf16_flop_per_s,
            "fp16": self.peak_bf16_flop_per_s,
            "fp8": self.peak_fp8_flop_per_s,
            "fp4": self.peak_fp4_flop_per_s,
            "int8": self.peak_int8_op_per_s,
            "int4": self.peak_int4_op_per_s,
        }
        if dtype not in peaks:
            raise ValueError(
                f"dtype={dtype!r} has no peak in the registry; allowed: {', '.join(peaks)}"
            )
        peak = peaks[dtype]
        if peak is None:
            have = [d for d, p in peaks.items() if p is not None]
            raise ValueError(
                f"{self.key} has no native {dtype} matrix math; "
                f"dtypes with a published peak: {', '.join(have)}"
            )
        return peak


@dataclasses.dataclass(frozen=True, kw_only=True)
class MoE:
    """Mixture-of-experts layout: routed experts, top-k, shared experts, dense first layers."""

    n_experts: int  # routed experts per MoE layer
    n_experts_per_token: int  # top-k
    n_shared_experts: int  # always-on experts (DeepSeek); 0 for Mixtral
    d_ff_expert: int  # hidden width of one expert's SwiGLU MLP
    n_dense_layers: int  # leading layers with a dense MLP of width d_ff
    d_ff_shared_expert: int = 0  # width of each shared expert; 0: same as d_ff_expert
    shared_expert_gate: bool = False  # a d_model -> 1 sigmoid gate on the shared expert (Qwen MoE)
    router_bias: bool = False  # a per-expert routing bias (DeepSeek-V3's e_score_correction_bias)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MLA:
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank K/V with a decoupled RoPE key."""

    q_lora_rank: int  # 0: queries are not compressed
    kv_lora_rank: int  # width of the cached latent c_KV
    qk_nope_head_dim: int
    qk_rope_head_dim: int  # width of the shared RoPE key, also cached
    v_head_dim: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Model:
    """A decoder-only transformer's architecture, named as in the book's notation."""

    key: str
    name: str
    developer: str
    release_year: int
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ff: int
    vocab_size: int
    max_context_tokens: int
    attention: str  # mha | mqa | gqa | mla
    sliding_window_tokens: int  # 0: full causal attention
    position: str  # rope | learned | relative
    norm: str  # rmsnorm | layernorm
    mlp: str  # swiglu | gelu
    tied_embeddings: bool
    qkv_bias: bool
    linear_bias: bool
    published_n_params: float
    published_n_active_params: float
    n_params_quote: str
    source: str
    as_of: datetime.date
    notes: str
    n_training_tokens: float | None = None
    published_train_flop: float | None = None
    moe: MoE | None = None
    mla: MLA | None = None
    # Details of Hugging Face checkpoints (hf_config.model_from_hf_config); the defaults are
    # the plain pre-norm decoder the registry's tables describe.
    o_bias: bool = False  # bias on the attention output projection alone (Llama attention_bias)
    mlp_bias: bool = False  # biases on the MLP projections alone (Llama mlp_bias)
    qk_norm: str = "none"  # none | head (d_head-wide gains for Q and K: Qwen3) | full (OLMo 2)
    n_norms_per_layer: int = 2  # Gemma 2 adds post-attention and post-MLP norms: 4
    # Parallel attention + MLP block (GPT-J, PaLM): both branches read one normed input and
    # add into the residual; FLOP and weights as a serial block (block_savings.py).
    parallel_block: bool = False
    # Precision of the released checkpoint's matmul weights (accounting.checkpoint_weight_bytes):
    # bf16, or fp8 (DeepSeek-V3 ships FP8 weights with block scales).
    checkpoint_dtype: str = "bf16"


_CHOICES = {
    "attention": ("mha", "mqa", "gqa", "mla"),
    "position": ("rope", "learned", "relative"),
    "norm": ("rmsnorm", "layernorm"),
    "mlp": ("swiglu", "geglu", "gelu"),  # geglu: gated GELU, three matrices like swiglu (Gemma)
    "qk_norm": ("none", "head", "full"),
    "checkpoint_dtype": ("bf16", "fp8"),
}


def data_dir() -> Path:
    """The folder holding the registries: $LLMPHYS_DATA, else the repository's ``data/``.

    Looks next to the package (an editable install in a clone), then in the working
    directory and its parent (a notebook run from ``chapters/``).
    """
    candidates = []
    if os.environ.get(DATA_ENV_VAR):
        candidates.append(Path(os.environ[DATA_ENV_VAR]))
    candidates += [
        Path(__file__).resolve().parents[2] / "data",
        Path.cwd() / "data",
        Path.cwd().parent / "data",
    ]
    for path in candidates:
        if (path / "accelerators.toml").is_file():
            return path
    raise FileNotFoundError(
        "cannot find data/accelerators.toml; looked in "
        + ", ".join(str(p) for p in candidates)
        + f". Set {DATA_ENV_VAR} to the repository's data/ folder."
    )


def accelerators() -> dict[str, Accelerator]:
    """Every accelerator in ``data/accelerators.toml``, keyed by registry key."""
    table = _load("accelerators.toml", Accelerator)
    for key, acc in table.items():
        _check_accelerator(acc, f"accelerators.toml[{key}]")
    return table


def models() -> dict[str, Model]:
    """Every model in ``data/models.toml``, keyed by registry key."""
    return _load("models.toml", Model)


def accelerator(key: str) -> Accelerator:
    """The accelerator registered as ``key``; KeyError lists the known keys.

    >>> accelerator("h100_sxm").hbm_bytes_per_s
    3350000000000.0
    """
    return _lookup(accelerators(), key, "accelerator")


def model(key: str) -> Model:
    """The model registered as ``key``; KeyError lists the known keys.

    >>> model("llama3_8b").n_kv_heads
    8
    """
    return _lookup(models(), key, "model")


@functools.cache
def run_models() -> dict[str, Model]:
    """The model shapes of ``data/run_models.toml``: training-run models not in models.toml."""
    raw = registry_table("run_models.toml")
    return {
        key: build_spec(Model, entry, f"run_models.toml[{key}]", key=key)
        for key, entry in raw.items()
    }


def model_spec(key: str) -> Model:
    """A model by registry key, from models.toml or, failing that, run_models.toml.

    >>> model_spec("palm_540b").n_kv_heads
    1
    """
    known = {**run_models(), **models()}
    if key not in known:
        raise KeyError(f"unknown model {key!r}; known: {', '.join(sorted(known))}")
    return known[key]


def recorded(entry: Model | Accelerator, field: str) -> float:
    """A number the registry may leave out (None), such as ``n_training_tokens`` or ``tdp_w``.

    In the field's own unit (tokens, FLOP, watts). A field the entry leaves out is a
    ValueError naming the entry and the field, rather than a TypeError in the arithmetic.

    >>> recorded(model("llama3_8b"), "n_training_tokens")
    15000000000000.0
    """
    if not isinstance(entry, (Model, Accelerator)):
        raise TypeError(f"entry must be a Model or an Accelerator, got {type(entry).__name__}")
    value = getattr(entry, field)  # AttributeError for a field neither class has
    if value is None:
        raise ValueError(f"{entry.key}.{field} is not recorded in the registry")
    return value


def accelerator_from_toml(source, *, key: str | None = None) -> Accelerator:
    """One accelerator in the registry's schema, from a TOML file or a dict, with its checks.

    A file may hold the table itself or one ``[key]`` table, as in
    ``data/accelerators.toml``; missing, unknown or mistyped fields raise a ValueError
    naming the file and the field, and the registry's conventions (dense peaks, links
    per direction) are checked as for the registry.

    >>> acc = accelerator_from_toml({"h100_copy": dict(_raw("accelerators.toml")["h100_sxm"])})
    >>> acc.key, acc.hbm_bytes_per_s
    ('h100_copy', 3350000000000.0)
    """
    if isinstance(source, dict):
        raw, where = source, "accelerator table"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"source={str(source)!r}: no such TOML file")
        raw, where = read_toml(path), str(path)
    else:
        raise TypeError(
            f"source must be a path to a TOML file or a dict, got {type(source).__name__}"
        )
    names = {f.name for f in dataclasses.fields(Accelerator)}
    if all(isinstance(v, dict) for v in raw.values()) and raw and not set(raw) & names:
        if len(raw) != 1:
            raise ValueError(f"{where}: holds {len(raw)} tables ({', '.join(raw)}); give one")
        ((key_in, raw),) = raw.items()
        key = key or key_in
        where = f"{where}[{key_in}]"
    acc = _build(Accelerator, raw, where, key=key or "custom")
    _check_accelerator(acc, where)
    return acc


def _check_accelerator(acc: Accelerator, where: str) -> None:
    """The registry's conventions that a single table can break: positive sizes, dense peaks."""
    for name in (
        "peak_bf16_flop_per_s",
        "hbm_bytes",
        "hbm_bytes_per_s",
        "scale_up_bytes_per_s_per_direction",
        "scale_out_bytes_per_s_per_direction",
        "peak_fp8_flop_per_s",
        "peak_fp4_flop_per_s",
        "tdp_w",
    ):
        value = getattr(acc, name)
        if value is not None and not value > 0:
            raise ValueError(f"{where}.{name}: must be > 0, got {value!r}")
    if acc.scale_up_domain_size < 1:
        raise ValueError(
            f"{where}.scale_up_domain_size: must be >= 1, got {acc.scale_up_domain_size}"
        )
    sparse = acc.peak_bf16_sparse_flop_per_s
    # 2e-3: vendors print the sparse figure to four digits (H100: 1,979 vs 2 x 989.4)
    if sparse is not None and abs(sparse - 2.0 * acc.peak_bf16_flop_per_s) > 2e-3 * sparse:
        raise ValueError(
            f"{where}.peak_bf16_flop_per_s: the dense peak must be half the 2:4 "
            f"sparse figure ({sparse:.4g}); got {acc.peak_bf16_flop_per_s:.4g}"
        )
    unknown = set(acc.estimated) - {f.name for f in dataclasses.fields(Accelerator)}
    if unknown:
        raise ValueError(f"{where}.estimated: names no field: {sorted(unknown)}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Case:
    """Fields every scenario has: where it comes from and what it is."""

    key: str
    kind: str
    source: str  # document and URL as text
    as_of: datetime.date
    notes: str
    quote: str = ""  # the source's own wording, where it has one


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingRunCase(_Case):
    """A published run (a ``training_runs.toml`` key) and the MFU its worked step assumes."""

    run: str
    mfu: float
    gpu_hours: str  # prices.toml key of the whole run's GPU-hours


@dataclasses.dataclass(frozen=True, kw_only=True)
class DataParallelCase(_Case):
    """A dense model trained data-parallel: its size, global batch and utilisation."""

    accelerator: str
    n_params: float
    global_batch_tokens: float
    mfu: float
    n_ranks: tuple[int, ...] = ()  # the data-parallel GPU counts the source evaluates


@dataclasses.dataclass(frozen=True, kw_only=True)
class RackCase(_Case):
    """One scale-up domain of ``accelerator``; ``n_chips`` is its ``scale_up_domain_size``."""

    accelerator: str
    n_chips: int  # filled in by the loader from accelerators.toml, never typed


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClusterCase(_Case):
    """A training cluster: model, chip (whose peak MFU is taken against), size, GPU-hours."""

    model: str
    accelerator: str
    n_chips: int
    seq_len: int
    gpu_hours: str  # prices.toml key


@dataclasses.dataclass(frozen=True, kw_only=True)
class QueueCase(_Case):
    """Requests arriving at ``rate_per_s`` for steps that leave every ``interval_s``."""

    rate_per_s: float
    interval_s: float
    seats: int
    horizon_s: float
    seed: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class InferenceDemandCase(_Case):
    """A model of ``n_params`` served for ``n_inference_tokens`` under the fit ``law``."""

    law: str  # scaling_laws.toml key
    n_params: float
    n_inference_tokens: float


@dataclasses.dataclass(frozen=True, kw_only=True)
class RepetitionCase(_Case):
    """``n_tokens`` of training seen as ``epochs`` passes over the unique data."""

    n_params: float
    n_tokens: float
    epochs: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class InterruptionsCase(_Case):
    """Job interruptions of a run (a ``training_runs.toml`` key) over ``duration_s``."""

    run: str  # its row's n_chips are the GPUs the interruptions are counted on
    duration_s: float
    n_unexpected: int
    n_planned: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConversationCase(_Case):
    """A conversation of ``context_tokens`` with ``model`` served on ``accelerator`` chips."""

    model: str
    accelerator: str
    context_tokens: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class CrawlCase(_Case):
    """Chapter 2's synthetic crawl: its size, the seeds of its studies, its Zipf vocabulary."""

    n_pages: int
    crawl_seed: int
    run_seed: int
    collapse_seed: int
    zipf_vocab: int


SCENARIO_KINDS: dict[str, type] = {
    "training_run": TrainingRunCase,
    "data_parallel": DataParallelCase,
    "rack": RackCase,
    "cluster": ClusterCase,
    "queue": QueueCase,
    "inference_demand": InferenceDemandCase,
    "repetition": RepetitionCase,
    "interruptions": InterruptionsCase,
    "conversation": ConversationCase,
    "crawl": CrawlCase,
}


@functools.cache
def scenarios() -> dict[str, _Case]:
    """Every worked case in ``data/scenarios.toml``, keyed by scenario key."""
    out = {}
    for key, entry in _raw("scenarios.toml").items():
        where = f"scenarios.toml[{key}]"
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in SCENARIO_KINDS:
            raise ValueError(f"{where}.kind: {kind!r} is not one of {sorted(SCENARIO_KINDS)}")
        if kind == "rack" and "n_chips" in entry:
            raise ValueError(f"{where}.n_chips: a rack's size is its chip's scale_up_domain_size")
        extra = {"n_chips": 0} if kind == "rack" else {}
        case = _build(SCENARIO_KINDS[kind], entry, where, key=key, **extra)
        for field in ("accelerator", "model"):
            known = accelerators() if field == "accelerator" else {**run_models(), **models()}
            if getattr(case, field, None) not in (None, *known):
                raise ValueError(f"{where}.{field}: {getattr(case, field)!r} is not a registry key")
        if kind == "rack":
            size = accelerator(case.accelerator).scale_up_domain_size
            case = dataclasses.replace(case, n_chips=size)
        out[key] = case
    return out


def scenario(key: str):
    """The worked case registered as ``key`` (a dataclass of its kind); KeyError lists the keys.

    >>> scenario("series_dp").global_batch_tokens
    4000000.0
    >>> scenario("nvl72").n_chips  # the GB200's scale-up domain
    72
    """
    return _lookup(scenarios(), key, "scenario")


@dataclasses.dataclass(frozen=True, kw_only=True)
class HFModelType:
    """What a Hugging Face ``model_type`` leaves to its transformers defaults and modeling code.

    Field meanings: the header of ``data/hf_model_types.toml``.
    """

    key: str  # the config's model_type
    module: str
    source: str
    as_of: datetime.date
    tied_default: bool = False
    head_dim_default: int = 0  # 0: d_model / n_heads
    moe: bool = False
    attention_bias_from_config: bool = False
    sliding_window_default: int = 0
    no_sliding_window: bool = False
    activation_default: str = "silu"
    qk_norm: str = "none"
    n_norms_per_layer: int = 2
    router_bias: bool = False
    mtp_layers: bool = False
    # config fields the type's configuration file defaults, so a config.json may omit them
    field_defaults: dict[str, int] = dataclasses.field(default_factory=dict)


def hf_model_types() -> dict[str, HFModelType]:
    """Every Hugging Face model type ``hf_config`` reads, from ``data/hf_model_types.toml``.

    >>> hf_model_types()["gemma2"].n_norms_per_layer
    4
    """
    return _load("hf_model_types.toml", HFModelType)


def read_toml(path: str | os.PathLike) -> dict:
    """A TOML file's tables as a dict: every file the library reads goes through here.

    FileNotFoundError or ValueError name the file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such TOML file")
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path}: not valid TOML ({err})") from None


def registry_table(filename: str) -> dict:
    """The raw tables of ``data/<filename>`` (a registry whose schema its module checks).

    >>> "gpu_hour_usd" in registry_table("prices.toml")
    True
    """
    return read_toml(data_dir() / filename)


def registry_csv(filename: str) -> tuple[tuple[str, ...], list[dict[str, str]]]:
    """The header and rows (as dicts of strings) of ``data/<filename>``, a CSV table whose
    schema its module checks.

    FileNotFoundError names the file.
    """
    path = data_dir() / filename
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such CSV file")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return tuple(reader.fieldnames or ()), list(reader)


def load_nested_registry(filename: str, cls: type, *, list_field: str, item_cls: type) -> dict:
    """Every entry of ``data/<filename>`` as ``cls``, with its array of tables ``list_field``
    built item by item as ``item_cls`` (a tuple), keyed by the entry's key.

    Each entry and item is checked field by field (:func:`build_spec`); errors name the file,
    the entry and the item (``file[key].list_field[i]``). What the values must satisfy beyond
    their types is the calling module's to check.
    """
    out = {}
    for key, entry in registry_table(filename).items():
        where = f"{filename}[{key}]"
        entry = dict(entry)
        items = tuple(
            build_spec(item_cls, item, f"{where}.{list_field}[{i}]")
            for i, item in enumerate(entry.pop(list_field, []))
        )
        out[key] = build_spec(cls, entry, where, key=key, **{list_field: items})
    return out


def load_registry(filename: str, cls: type, *, section: str | None = None) -> dict:
    """Every entry of ``data/<filename>`` as the frozen dataclass ``cls``, keyed by its key.

    ``section`` reads the entries of one top-level table instead (``[section.<key>]``, as in
    ``scaling_laws.toml``). Each entry is checked field by field (:func:`build_spec`); errors
    name the file, the entry and the field; the result is cached.

    >>> load_registry("models.toml", Model)["llama3_8b"].n_layers
    32
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"cls must be a dataclass, got {getattr(cls, '__name__', cls)}")
    return _load(filename, cls, section)


def _raw(filename: str) -> dict:
    return registry_table(filename)


def _lookup(table: dict, key: str, kind: str):
    try:
        return table[key]
    except (KeyError, TypeError):
        raise KeyError(f"unknown {kind} {key!r}; known: {', '.join(sorted(table))}") from None


@functools.cache
def _load(filename: str, cls: type, section: str | None = None) -> dict:
    raw = registry_table(filename)
    prefix = ""
    if section is not None:
        if not isinstance(raw.get(section), dict):
            raise KeyError(f"{filename}: no section {section!r}; known: {', '.join(sorted(raw))}")
        raw, prefix = raw[section], f"{section}."
    return {
        key: _build(cls, entry, f"{filename}[{prefix}{key}]", key=key) for key, entry in raw.items()
    }


def build_spec(cls: type, entry: dict, where: str, **extra):
    """Construct the frozen dataclass ``cls`` from a TOML table, checking every field.

    Unknown or missing fields and values of the wrong type raise a ValueError that
    names ``where`` (file and entry) and the field; ``extra`` supplies fields that are
    not in the table (the registry key). Other modules' data loaders use this too.
    """
    return _build(cls, entry, where, **extra)


@functools.cache
def _type_hints(cls: type) -> dict[str, typing.Any]:
    """``typing.get_type_hints(cls)``, once per class: it evaluates every annotation's string
    (``from __future__ import annotations``), which was half the time of building a spec."""
    return typing.get_type_hints(cls)


def _build(cls: type, entry: dict, where: str, **extra):
    """Construct ``cls`` from a TOML table, checking names and types field by field."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table, got {type(entry).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = _type_hints(cls)
    unknown = set(entry) - set(fields)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {sorted(unknown)}; allowed: {sorted(fields)}")
    kwargs = dict(extra)
    for name, field in fields.items():
        if name in extra:
            continue
        if name not in entry:
            no_default = dataclasses.MISSING
            if field.default is no_default and field.default_factory is no_default:
                raise ValueError(f"{where}: missing required field {name!r}")
            continue
        kwargs[name] = _coerce(hints[name], entry[name], f"{where}.{name}")
    for name, allowed in _CHOICES.items():
        if name in kwargs and kwargs[name] not in allowed:
            raise ValueError(f"{where}.{name}: {kwargs[name]!r} is not one of {allowed}")
    return cls(**kwargs)


def _coerce(hint, value, where: str):
    """Check ``value`` against the type hint ``hint`` and convert ints to floats."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (hint,) = [h for h in typing.get_args(hint) if h is not type(None)]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, where)
    origin = typing.get_origin(hint)
    if origin is tuple:
        (item,) = typing.get_args(hint)[:1]
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {value!r}")
        return tuple(_coerce(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        item = typing.get_args(hint)[1]  # str or int
        if not isinstance(value, dict) or not all(
            isinstance(v, item) and not isinstance(v, bool) for v in value.values()
        ):
            kind = "strings" if item is str else "integers"
            raise ValueError(f"{where}: expected a table of {kind}, got {value!r}")
        return dict(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    if hint is datetime.date and not isinstance(value, datetime.date):
        raise ValueError(f"{where}: expected a TOML date (YYYY-MM-DD), got {value!r}")
    if hint in (str, bool) and not isinstance(value, hint):
        raise ValueError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value
