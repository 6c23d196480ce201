"""Achieved fractions of a chip's peaks inside a training step: GEMMs by shape, attention, links.

A GEMM of shape (m, n, k) in ``dtype`` on ``chip`` runs at

    P x eta(chip, dtype) x tile(m) tile(n) tile(k) x min(1, I / I_ridge)

where eta is the large-GEMM fraction (``Efficiencies.gemm_bf16`` / ``gemm_fp8``, or a
per-chip published measurement in ``chip_gemm``), tile(x) = x / (x rounded up to the tile
edge) is tile quantization (NVIDIA, "Matrix Multiplication Background User's Guide"), and the
last factor is the roofline: a GEMM whose arithmetic intensity I = 2mnk / bytes falls below
the chip's achieved ridge I_ridge = P eta / (W hbm) is memory-bound. Small hidden sizes and
short micro-batches thus cost what they cost, without a fitted curve.

On a torus (TPUs) a ring along one axis has only that axis's links: ``chip_axis_links`` holds
that share of the chip's scale-up bandwidth (Austin et al. 2025, "How to Scale Your Model").

Efficiencies are a frozen value passed to ``train_step``; the defaults come from
``data/training_efficiency.toml`` (one fitted number, the rest sourced there), and
``fit_efficiencies`` returns a new value instead of changing any module state.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import specs, units
from ..specs import Accelerator

BYTES_PER_ELEMENT = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0}
"""The book's one table of element widths (CONVENTIONS.md)."""

ATTENTION_KERNELS = ("flash2", "cudnn")
"""The attention kernel a run calls: "flash2", FlashAttention-2 (the flash-attn package and
PyTorch's flash SDPA backend); "cudnn", cuDNN's fused flash attention, which Transformer
Engine selects on Hopper and later ('Disabling FlashAttention to give FusedAttention
preference on Hopper+ for performance reasons': NVIDIA/TransformerEngine,
transformer_engine/pytorch/attention/dot_product_attention/utils.py, get_attention_backend)."""

BACKWARD_OVER_FORWARD = 2.5
"""An attention backward's FLOP over its forward's, as FlashAttention's benchmarks count them
(5 matmuls against 2): a forward rate f and a backward rate b make a forward + backward rate
3.5 / (1/f + 2.5/b)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Efficiencies:
    """The achieved fractions ``train_step`` charges (see the module docstring)."""

    gemm_bf16: float
    gemm_fp8: float
    gemm_tile: int
    attention: float
    collective: float
    hbm: float
    allocator_overhead: float
    chip_gemm: tuple[tuple[str, float], ...] = ()
    chip_attention: tuple[tuple[str, float], ...] = ()
    chip_axis_links: tuple[tuple[str, float], ...] = ()
    # chip -> ((sequence length, causal fraction, full fraction), ...), ascending length
    attention_curves: tuple[tuple[str, tuple[tuple[float, float, float], ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in ("gemm_bf16", "gemm_fp8", "attention", "collective", "hbm"):
            v = getattr(self, name)
            if not 0.0 < v <= 1.0:
                raise ValueError(f"Efficiencies.{name} must be in (0, 1], got {v!r}")
        if not 0.0 <= self.allocator_overhead < 1.0:
            raise ValueError(
                "Efficiencies.allocator_overhead must be in [0, 1), "
                f"got {self.allocator_overhead!r}"
            )

    def gemm_fraction(self, chip: str, dtype: str) -> float:
        """Large-GEMM fraction of the dense peak for ``chip`` at ``dtype``."""
        override = dict(self.chip_gemm).get(f"{chip}.{dtype}")
        if override is not None:
            return override
        return self.gemm_fp8 if dtype == "fp8" else self.gemm_bf16

    def attention_fraction(
        self,
        chip: str,
        seq_len: float | None = None,
        *,
        causal: bool = True,
        kernel: str = "flash2",
    ) -> float:
        """Flash attention's forward + backward fraction of ``chip``'s BF16 dense peak at
        ``seq_len`` (the kernel's key length): a flat ``chip_attention`` override if given
        ("chip.kernel" before "chip"),
        else the published curve of ``attention_curves`` interpolated linearly in log2 of
        the length and held flat beyond its ends (its longest point when ``seq_len`` is None),
        else the default ``attention``. ``kernel`` (``ATTENTION_KERNELS``) picks the curve
        "chip.kernel" where one is published, else the chip's FlashAttention-2 curve."""
        if kernel not in ATTENTION_KERNELS:
            raise ValueError(
                f"kernel={kernel!r} is not known; allowed: {', '.join(ATTENTION_KERNELS)}"
            )
        flats = dict(self.chip_attention)
        flat = flats.get(f"{chip}.{kernel}", flats.get(chip))
        if flat is not None:
            return flat
        curves = dict(self.attention_curves)
        curve = curves.get(f"{chip}.{kernel}", curves.get(chip))
        if curve is None:
            return self.attention
        col = 1 if causal else 2
        if seq_len is None or seq_len >= curve[-1][0]:
            return curve[-1][col]
        if seq_len <= curve[0][0]:
            return curve[0][col]
        for lo, hi in itertools.pairwise(curve):
            if seq_len <= hi[0]:
                w = math.log2(seq_len / lo[0]) / math.log2(hi[0] / lo[0])
                return lo[col] + w * (hi[col] - lo[col])
        return curve[-1][col]  # unreachable: the loop returns once seq_len <= the last length

    def axis_link_fraction(self, chip: str) -> float:
        """Share of ``chip``'s scale-up bandwidth a ring along one torus axis uses: the axis's
        2 of its 2D links on a D-dimensional torus (1 on a switched fabric, the default)."""
        return dict(self.chip_axis_links).get(chip, 1.0)


@functools.cache
def default_efficiencies() -> Efficiencies:
    """The defaults of ``data/training_efficiency.toml``.

    >>> e = default_efficiencies()
    >>> e.gemm_fraction("gb200", "fp8"), round(e.attention_fraction("h100_sxm", 8192), 2)
    (0.53, 0.31)
    """
    raw = specs.registry_table("training_efficiency.toml")
    d = {k: v for k, v in raw["defaults"].items() if not k.endswith("_source")}

    def per_chip(table: str) -> tuple[tuple[str, float], ...]:
        entries = raw.get(table, {}).items()
        return tuple((k, float(v)) for k, v in entries if not k.endswith("_source"))

    return Efficiencies(
        **d,
        chip_gemm=per_chip("chip_gemm"),
        chip_attention=per_chip("chip_attention"),
        chip_axis_links=per_chip("chip_axis_links"),
        attention_curves=tuple(
            (chip, _attention_curve(t)) for chip, t in raw.get("attention_fwd_bwd", {}).items()
        ),
    )


def _attention_curve(t: dict[str, Any]) -> tuple[tuple[float, float, float], ...]:
    """A published forward + backward TFLOP/s table as fractions of the measured chip's peak,
    or one built from published forward and backward tables (``fwd_bwd_rate``)."""
    peak = specs.accelerator(t["measured_on"]).peak_bf16_flop_per_s
    if "causal_tflop_per_s" in t:
        causal, full = t["causal_tflop_per_s"], t["full_tflop_per_s"]
    else:
        f_c, f_f, b_f = (t[k] for k in ("fwd_causal_tflop_per_s", "fwd_full_tflop_per_s",
                                        "bwd_full_tflop_per_s"))  # fmt: skip
        full = [fwd_bwd_rate(f, b) for f, b in zip(f_f, b_f, strict=True)]
        # no causal backward is published: the mask is taken to cost the backward what it
        # costs the forward at the same length
        causal = [fwd_bwd_rate(c, b * c / f) for c, f, b in zip(f_c, f_f, b_f, strict=True)]
    rows = zip(t["seq_len"], causal, full, strict=True)
    return tuple((float(n), c * units.TERA / peak, f * units.TERA / peak) for n, c, f in rows)


def fwd_bwd_rate(forward: float, backward: float) -> float:
    """Forward + backward attention rate from the forward's and the backward's, in the same
    unit: (1 + r) / (1/f + r/b) with r = ``BACKWARD_OVER_FORWARD``. FlashAttention-2 on H100 at
    16K tokens, head dimension 128, no mask (370 forward, 322 backward TFLOP/s; Shah et al.
    2024, arXiv:2407.08608, Figs. 5-6) gives 334, the 338 its own combined benchmark prints:

    >>> round(fwd_bwd_rate(370, 322))
    334
    """
    if not (forward > 0 and backward > 0):
        raise ValueError(f"forward and backward must be positive, got {forward!r}, {backward!r}")
    r = BACKWARD_OVER_FORWARD
    return (1.0 + r) / (1.0 / forward + r / backward)


def _tile(x: float, edge: int) -> float:
    return x / (math.ceil(x / edge) * edge)


def gemm_efficiency(
    m: float, n: float, k: float, *, acc: Accelerator, dtype: str, eff: Efficiencies
) -> float:
    """Achieved fraction of ``acc``'s dense peak at ``dtype`` for an (m x k) @ (k x n) GEMM.

    Inputs at the dtype's width, a BF16 output. Llama 3 8B's MLP up-projection on 8K tokens
    is compute-bound; 128 tokens through a 4096 x 4096 projection are not:

    >>> e, h100 = default_efficiencies(), specs.accelerator("h100_sxm")
    >>> round(gemm_efficiency(8192, 28672, 4096, acc=h100, dtype="bf16", eff=e), 2)
    0.61
    >>> round(gemm_efficiency(128, 4096, 4096, acc=h100, dtype="bf16", eff=e), 2)
    0.35
    """
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")
    eta = eff.gemm_fraction(acc.key, dtype)
    edge = eff.gemm_tile
    tiles = _tile(m, edge) * _tile(n, edge) * _tile(k, edge)
    w = BYTES_PER_ELEMENT[dtype]
    intensity = 2.0 * m * n * k / (w * (m * k + k * n) + 2.0 * m * n)
    ridge = acc.peak_flop_per_s(dtype) * eta / (acc.hbm_bytes_per_s * eff.hbm)
    return eta * tiles * min(1.0, intensity / ridge)


def gemm_efficiency_curve(
    dims: Sequence[float], *, acc: Accelerator, dtype: str, eff: Efficiencies, width: float
) -> list[float]:
    """``gemm_efficiency(m, width, width)`` for each m in ``dims`` (the chapter's figure)."""
    return [gemm_efficiency(m, width, width, acc=acc, dtype=dtype, eff=eff) for m in dims]


def golden_section_min(
    loss: Callable[[float], float], lo: float, hi: float, *, n_iter: int
) -> float:
    """The minimiser of a unimodal ``loss`` on [lo, hi] by golden-section search.

    >>> round(golden_section_min(lambda x: (x - 0.7) ** 2, 0.2, 1.0, n_iter=60), 6)
    0.7
    """
    for _ in range(n_iter):
        a, b = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
        lo, hi = (lo, b) if loss(a) < loss(b) else (a, hi)
    return (lo + hi) / 2


def fit_efficiencies(
    log_error: Callable[[Any, Efficiencies], float],
    runs: Sequence[Any],
    *,
    base: Efficiencies | None = None,
    n_iter: int = 14,
) -> Efficiencies:
    """A copy of ``base`` with ``gemm_bf16``, the one fitted constant, refitted to ``runs``.

    ``log_error(run, eff)`` is log(predicted / measured MFU). Least squares in log MFU by a
    golden-section search; nothing global changes. Every other field is sourced (see
    ``data/training_efficiency.toml``).
    """
    eff = base or default_efficiencies()
    if not runs:
        raise ValueError("runs: nothing to fit on")

    def sq(x: float) -> float:
        e = dataclasses.replace(eff, gemm_bf16=x)
        return sum(log_error(r, e) ** 2 for r in runs)

    return dataclasses.replace(eff, gemm_bf16=golden_section_min(sq, 0.3, 1.0, n_iter=n_iter))
