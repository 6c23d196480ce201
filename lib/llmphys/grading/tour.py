"""Checks for the Implement exercises of the hardware tour (see ``llmphys.grading``).

Longer than 400 lines because it holds one check per Implement exercise of the hardware tour,
each with its mistakes; splitting would scatter one chapter's autograder over several files.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from llmphys import accounting, comm_roofline, memory_hierarchy, power_clock, roofline, specs, waves
from llmphys.grading._core import Case, Feedback, Mistake, check_function

__all__ = [
    "check_clock_under_cap_hz",
    "check_decode_floor_s",
    "check_gemm_efficiency",
    "check_tiled_gemm_hbm_bytes",
    "check_tp_layer_intensity",
]


def _decode_floor_reference(
    n_params: float,
    bytes_per_element: float,
    peak_flop_per_s: float,
    hbm_bytes_per_s: float,
    n_chips: int,
) -> float:
    """The library's roofline time for one single-stream decode step, weights split n ways."""
    # A chip with exactly these two ceilings: the roofline reads nothing else from the spec.
    chip = dataclasses.replace(
        specs.accelerator("h100_sxm"),
        peak_bf16_flop_per_s=peak_flop_per_s,
        hbm_bytes_per_s=hbm_bytes_per_s,
    )
    return roofline.kernel_time_s(
        chip, flop=2.0 * n_params / n_chips, bytes_moved=n_params * bytes_per_element / n_chips
    )


def _decode_floor_cases() -> list[Case]:
    rng = np.random.default_rng(20)  # fixed: the stored feedback must not change
    cases = []
    for _ in range(12):
        cases.append(
            Case(
                args=(
                    float(np.round(10 ** rng.uniform(9, 12), -6)),  # 1B to 1T parameters
                    float(rng.choice([0.5, 1.0, 2.0, 4.0])),  # fp4 to fp32
                    float(np.round(10 ** rng.uniform(14, 15.7), -11)),  # 100 TFLOP/s to 5 PFLOP/s
                    float(np.round(10 ** rng.uniform(12, 12.9), -9)),  # 1 to 8 TB/s
                    int(rng.choice([1, 2, 4, 8, 16])),
                )
            )
        )
    l70 = accounting.n_params(specs.model("llama3_70b"))
    h100, b200 = specs.accelerator("h100_sxm"), specs.accelerator("b200")
    bw = h100.hbm_bytes_per_s
    bw_e12 = f"{bw / 1e12:g}e12"  # 3.35e12, as the label has always read
    cases += [
        Case(
            args=(l70, 2.0, h100.peak_bf16_flop_per_s, h100.hbm_bytes_per_s, 1),
            label="Llama 3 70B in BF16 on one H100 SXM (registry values)",
        ),
        Case(
            args=(l70, 0.5, b200.peak_flop_per_s("fp4"), b200.hbm_bytes_per_s, 8),
            label="Llama 3 70B in FP4 over eight B200s (registry values)",
        ),
        # a compute-poor chip (ridge 0.3 FLOP/byte, below 2/b), the H100 SXM's HBM behind
        # 1 TFLOP/s: here the arithmetic binds
        Case(args=(8e9, 2.0, 1e12, bw, 1), label=f"8e9, 2.0, 1e12, {bw_e12}, 1 (ridge 0.3)"),
        Case(args=(8e9, 4.0, 1e12, bw, 4), label=f"8e9, 4.0, 1e12, {bw_e12}, 4 (ridge 0.3)"),
    ]
    return cases


def _decode_floor_mistakes() -> list[Mistake]:
    def summed(n, b, p, w, k):
        return 2 * n / (k * p) + n * b / (k * w)

    def smaller(n, b, p, w, k):
        return min(2 * n / (k * p), n * b / (k * w))

    def memory_only(n, b, p, w, k):
        return n * b / (k * w)

    def one_flop(n, b, p, w, k):
        return max(n / (k * p), n * b / (k * w))

    def one_chip(n, b, p, w, k):
        return max(2 * n / p, n * b / w)

    def times_chips(n, b, p, w, k):
        return max(2 * n * k / p, n * b * k / w)

    def bits(n, b, p, w, k):
        return max(2 * n / (k * p), 8 * n * b / (k * w))

    # memory_only before smaller: on the compute-bound cases, the only ones memory_only gets
    # wrong, min() returns the same memory time
    return [
        Mistake(
            implementation=summed,
            message="the roofline assumes the arithmetic and the traffic overlap: the step "
            "takes the larger of F/P and Q/W, not their sum",
        ),
        Mistake(
            implementation=memory_only,
            message="on a chip whose ridge is below 2/b FLOP per byte the arithmetic binds: "
            "take the larger of the compute time and the memory time",
        ),
        Mistake(
            implementation=smaller,
            message="min picks the ceiling that does not bind: a step waits for the slower of "
            "the two, so take the max",
        ),
        Mistake(
            implementation=one_flop,
            message="each weight costs a multiply and an add: 2 FLOP per parameter per token",
        ),
        Mistake(
            implementation=one_chip,
            message="did you split the weights over the n_chips chips? Each reads its "
            "1/n_chips share in parallel",
        ),
        Mistake(
            implementation=times_chips,
            message="each chip reads a 1/n_chips share of the weights, so more chips make the "
            "step faster: divide by n_chips",
        ),
        Mistake(
            implementation=bits,
            message="off by a factor of 8 in the memory time: bytes_per_element is already in "
            "bytes, and the bandwidth in bytes/s",
        ),
    ]


def check_decode_floor_s(fn: Any) -> Feedback:
    """Check ``decode_floor_s(n_params, bytes_per_element, peak_flop_per_s, hbm_bytes_per_s,
    n_chips)``, the seconds per token of a single-stream decode step on ``n_chips`` chips.

    Reference: the roofline max(F / P, Q / W) of :func:`llmphys.roofline.kernel_time_s` with
    F = 2 N / n FLOP and Q = N b / n bytes per chip (weights only, no KV cache, no
    communication), on seeded random chips and models plus edge cases (one chip, FP4, a chip
    so short of compute that the arithmetic binds).

    >>> def decode_floor_s(n_params, bytes_per_element, peak_flop_per_s, hbm_bytes_per_s,
    ...                    n_chips):
    ...     return max(2 * n_params / peak_flop_per_s,
    ...                n_params * bytes_per_element / hbm_bytes_per_s) / n_chips
    >>> print(check_decode_floor_s(decode_floor_s))  # doctest: +ELLIPSIS
    PASS tour-ex-variant (decode_floor_s): all 16 cases match ...
    >>> print(check_decode_floor_s(lambda n, b, p, w, k: n * b / w / k))  # doctest: +ELLIPSIS
    NOT YET tour-ex-variant (<lambda>): 14 of 16 cases match: on a chip whose ridge ...
    """
    return check_function(
        fn,
        exercise="tour-ex-variant",
        reference=_decode_floor_reference,
        cases=_decode_floor_cases(),
        mistakes=_decode_floor_mistakes(),
    )


def _gemm_reference(m: int, n: int, tile_m: int, tile_n: int, n_sms: int) -> float:
    return waves.quantisation_efficiency(m, n, tile_m=tile_m, tile_n=tile_n, n_sms=n_sms)["total"]


def _gemm_mistakes() -> list[Mistake]:
    def no_wave(m, n, tm, tn, s):
        return waves.quantisation_efficiency(m, n, tile_m=tm, tile_n=tn, n_sms=s)["tile"]

    def no_tile(m, n, tm, tn, s):
        return waves.quantisation_efficiency(m, n, tile_m=tm, tile_n=tn, n_sms=s)["wave"]

    def fractional_waves(m, n, tm, tn, s):
        return m * n / (tm * tn * s * (waves.gemm_tiles(m, n, tile_m=tm, tile_n=tn) / s))

    return [
        Mistake(
            implementation=no_wave,
            message="this is the tile quantisation alone: the tiles also run in whole waves of "
            "n_sms, and the last wave leaves SMs idle",
        ),
        Mistake(
            implementation=no_tile,
            message="this is the wave quantisation alone: edge tiles are computed whole, so "
            "m n is less than tiles x tile_m x tile_n when a dimension is not a multiple",
        ),
        Mistake(
            implementation=fractional_waves,
            message="the number of waves is a whole number: ceil(tiles / n_sms), not tiles / n_sms",
        ),
    ]


def check_gemm_efficiency(fn: Any) -> Feedback:
    """Check ``gemm_efficiency(m, n, tile_m, tile_n, n_sms)``: the useful share of the SM-tile
    slots an m x n GEMM occupies under tile and wave quantisation.

    Reference: :func:`llmphys.waves.quantisation_efficiency` (``"total"``).

    >>> import math
    >>> def gemm_efficiency(m, n, tile_m, tile_n, n_sms):
    ...     tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    ...     return m * n / (math.ceil(tiles / n_sms) * n_sms * tile_m * tile_n)
    >>> print(check_gemm_efficiency(gemm_efficiency))  # doctest: +ELLIPSIS
    PASS tour-ex-waves (gemm_efficiency): all 9 cases match ...
    """
    rng = np.random.default_rng(4)  # fixed: the stored feedback must not change
    cases = [
        Case(args=(4096, 4096, 128, 128, 132), label="4096, 4096, 128, 128, 132"),
        Case(args=(4000, 4000, 128, 128, 132), label="4000, 4000, 128, 128, 132"),
        Case(args=(1536, 1408, 128, 128, 132), label="one full wave: 1536, 1408, 128, 128, 132"),
        Case(
            args=(100, 100, 128, 256, 132), label="smaller than one tile: 100, 100, 128, 256, 132"
        ),
    ]
    for _ in range(5):
        m, n = (int(x) for x in rng.integers(256, 20_000, 2))
        tm, tn = int(rng.choice([64, 128])), int(rng.choice([128, 256]))
        s = int(rng.choice([108, 132, 148]))
        cases.append(Case(args=(m, n, tm, tn, s)))
    return check_function(
        fn,
        exercise="tour-ex-waves",
        reference=_gemm_reference,
        cases=cases,
        mistakes=_gemm_mistakes(),
    )


def _tiled_reference(m: int, n: int, k: int, tile_m: int, tile_n: int, b: float) -> float:
    return memory_hierarchy.tiled_gemm_hbm_bytes(
        m, n, k, tile_m=tile_m, tile_n=tile_n, bytes_per_element=b
    )


def _tiled_mistakes() -> list[Mistake]:
    def once(m, n, k, tm, tn, b):  # every operand read once: the untiled best case
        return b * (m * k + k * n + m * n)

    def swapped(m, n, k, tm, tn, b):  # A re-read per row of tiles, B per column
        return b * (m * k * math.ceil(m / tm) + k * n * math.ceil(n / tn) + m * n)

    def no_output(m, n, k, tm, tn, b):
        return b * (m * k * math.ceil(n / tn) + k * n * math.ceil(m / tm))

    def fractional(m, n, k, tm, tn, b):
        return b * (m * k * n / tn + k * n * m / tm + m * n)

    def per_element(m, n, k, tm, tn, b):
        return m * k * math.ceil(n / tn) + k * n * math.ceil(m / tm) + m * n

    return [
        Mistake(
            implementation=once,
            message="this reads each operand once, the untiled best case: with tiles, A's row "
            "panel is read again for every column of tiles, ceil(n / tile_n) times, and B's "
            "column panel ceil(m / tile_m) times",
        ),
        Mistake(
            implementation=swapped,
            message="the re-reads are swapped: A (m x k) is read once per COLUMN of tiles, "
            "ceil(n / tile_n) times; B (k x n) once per ROW of tiles, ceil(m / tile_m) times",
        ),
        Mistake(
            implementation=no_output,
            message="the output C (m x n) is written to HBM once too: add m n elements",
        ),
        Mistake(
            implementation=fractional,
            message="a partial edge tile still reads its whole panel: count tiles with a "
            "ceiling, ceil(n / tile_n), not n / tile_n",
        ),
        Mistake(
            implementation=per_element,
            message="this counts elements: multiply by bytes_per_element for bytes",
        ),
    ]


def check_tiled_gemm_hbm_bytes(fn: Any) -> Feedback:
    """Check ``tiled_gemm_hbm_bytes(m, n, k, tile_m, tile_n, bytes_per_element)``: the HBM bytes
    of a tiled GEMM whose tiles share nothing.

    Reference: :func:`llmphys.memory_hierarchy.tiled_gemm_hbm_bytes`.

    >>> import math
    >>> def tiled_gemm_hbm_bytes(m, n, k, tile_m, tile_n, bytes_per_element):
    ...     a = m * k * math.ceil(n / tile_n)
    ...     b = k * n * math.ceil(m / tile_m)
    ...     return bytes_per_element * (a + b + m * n)
    >>> print(check_tiled_gemm_hbm_bytes(tiled_gemm_hbm_bytes))  # doctest: +ELLIPSIS
    PASS tour-ex-tiling (tiled_gemm_hbm_bytes): all 10 cases match ...
    """
    rng = np.random.default_rng(30)  # fixed: the stored feedback must not change
    cases = [
        Case(args=(4096, 4096, 4096, 128, 128, 2.0), label="4096^3, 128 x 128 tiles, BF16"),
        Case(args=(8192, 4000, 8192, 128, 256, 2.0), label="8192 x 4000 x 8192, 128 x 256, BF16"),
        Case(args=(100, 300, 64, 128, 256, 1.0), label="smaller than one tile: 100, 300, 64"),
        Case(args=(1024, 1024, 1024, 1024, 1024, 4.0), label="one tile: 1024^3 in FP32"),
        Case(args=(512, 8192, 2048, 64, 128, 2.0), label="a tall B: 512 x 8192 x 2048"),
    ]
    for _ in range(5):
        m, n, k = (int(x) for x in rng.integers(200, 20_000, 3))
        tm, tn = int(rng.choice([64, 128, 256])), int(rng.choice([64, 128, 256]))
        cases.append(Case(args=(m, n, k, tm, tn, float(rng.choice([1.0, 2.0, 4.0])))))
    return check_function(
        fn,
        exercise="tour-ex-tiling",
        reference=_tiled_reference,
        cases=cases,
        mistakes=_tiled_mistakes(),
    )


def _cap_reference(power_cap_w, demand_w, clock_hz, static_w, exponent):
    return power_clock.clock_under_cap_hz(
        power_cap_w, demand_w=demand_w, clock_hz=clock_hz, static_w=static_w, exponent=exponent
    )


def _cap_mistakes() -> list[Mistake]:
    def always_scale(cap, demand, f, ps, x):
        return f * ((cap - ps) / (demand - ps)) ** (1.0 / x)

    def linear(cap, demand, f, ps, x):
        return f * (cap - ps) / (demand - ps) if demand > cap else f

    def no_static(cap, demand, f, ps, x):
        return f * (cap / demand) ** (1.0 / x) if demand > cap else f

    def power_not_root(cap, demand, f, ps, x):
        return f * ((cap - ps) / (demand - ps)) ** x if demand > cap else f

    return [
        Mistake(
            implementation=always_scale,
            message="a load that draws less than the cap is not slowed: it runs at clock_hz "
            "(the cap cannot raise the clock above the one asked for)",
        ),
        Mistake(
            implementation=no_static,
            message="only the dynamic part scales with the clock: subtract static_w from both "
            "the cap and the demand before taking the ratio",
        ),
        Mistake(
            implementation=linear,
            message="power grows like the clock to the power `exponent`, so the clock falls "
            "like the exponent-th ROOT of the power ratio, not the ratio itself",
        ),
        Mistake(
            implementation=power_not_root,
            message="invert P ~ f^x: the clock scales as (power ratio)^(1/x), not (power ratio)^x",
        ),
    ]


def check_clock_under_cap_hz(fn: Any) -> Feedback:
    """Check ``clock_under_cap_hz(power_cap_w, demand_w, clock_hz, static_w, exponent)``: the
    highest clock at which a load that would draw ``demand_w`` at ``clock_hz`` fits the cap.

    Reference: :func:`llmphys.power_clock.clock_under_cap_hz`.

    >>> def clock_under_cap_hz(power_cap_w, demand_w, clock_hz, static_w, exponent):
    ...     if demand_w <= power_cap_w:
    ...         return clock_hz
    ...     return clock_hz * ((power_cap_w - static_w) / (demand_w - static_w)) ** (1 / exponent)
    >>> print(check_clock_under_cap_hz(clock_under_cap_hz))  # doctest: +ELLIPSIS
    PASS tour-ex-power-cap (clock_under_cap_hz): all 10 cases match ...
    """
    rng = np.random.default_rng(31)  # fixed: the stored feedback must not change
    cases = [
        Case(args=(700.0, 1400.0, 1.98e9, 0.0, 3.0), label="twice the cap, no static power"),
        Case(
            args=(700.0, 1000.0, 1.98e9, 100.0, 3.0), label="700 W cap, 1000 W load, 100 W static"
        ),
        Case(args=(700.0, 500.0, 1.83e9, 80.0, 3.0), label="a load under the cap: 500 W"),
        Case(args=(400.0, 600.0, 1.41e9, 50.0, 2.0), label="exponent 2: 400 W cap, 600 W load"),
    ]
    for _ in range(6):
        cap = float(np.round(rng.uniform(300, 1200), 0))
        cases.append(
            Case(
                args=(
                    cap,
                    float(np.round(cap * rng.uniform(1.05, 2.5), 0)),
                    float(np.round(rng.uniform(1.2e9, 2.1e9), -6)),
                    float(np.round(rng.uniform(20, 150), 0)),
                    float(rng.choice([2.0, 2.5, 3.0])),
                )
            )
        )
    return check_function(
        fn,
        exercise="tour-ex-power-cap",
        reference=_cap_reference,
        cases=cases,
        mistakes=_cap_mistakes(),
    )


def _tp_reference(n_layer_params: float, d_model: int, tp: int, b: float) -> float:
    return comm_roofline.tp_layer_intensity(n_layer_params, d_model, tp=tp, bytes_per_element=b)


def _tp_mistakes() -> list[Mistake]:
    def forward_only_bytes(n, d, t, b):  # two all-reduces, but forward-and-backward FLOP
        return 6 * n / t / (2 * 2 * (t - 1) / t * d * b)

    def forward_only(n, d, t, b):  # forward FLOP and forward all-reduces
        return 2 * n / t / (2 * 2 * (t - 1) / t * d * b)

    def whole_buffer(n, d, t, b):  # each all-reduce sends the buffer once
        return 6 * n / t / (4 * d * b)

    def twice_buffer(n, d, t, b):  # 2 n per all-reduce, without (t - 1) / t
        return 6 * n / t / (4 * 2 * d * b)

    def unsplit_flop(n, d, t, b):  # every GPU computing the whole layer
        return 6 * n / (4 * 2 * (t - 1) / t * d * b)

    return [
        Mistake(
            implementation=forward_only_bytes,
            message="the backward pass all-reduces too: two all-reduces forward and two "
            "backward per layer, four in all",
        ),
        Mistake(
            implementation=forward_only,
            message="a training step runs forward and backward: 6 N FLOP per token (2 forward, "
            "4 backward) against four all-reduces",
        ),
        Mistake(
            implementation=whole_buffer,
            message="a ring all-reduce sends 2 (t - 1) / t of the buffer per GPU (a "
            "reduce-scatter and an all-gather), not the buffer once",
        ),
        Mistake(
            implementation=twice_buffer,
            message="close: a ring all-reduce sends 2 (t - 1) / t of the buffer, not twice the "
            "buffer; the (t - 1) / t matters at small t",
        ),
        Mistake(
            implementation=unsplit_flop,
            message="each GPU computes 1/tp of the layer's FLOP: divide 6 N by tp",
        ),
    ]


def check_tp_layer_intensity(fn: Any) -> Feedback:
    """Check ``tp_layer_intensity(n_layer_params, d_model, tp, bytes_per_element)``: FLOP per
    network byte of one tensor-parallel layer in training.

    Reference: :func:`llmphys.comm_roofline.tp_layer_intensity`.

    >>> def tp_layer_intensity(n_layer_params, d_model, tp, bytes_per_element):
    ...     flop = 6 * n_layer_params / tp
    ...     return flop / (4 * 2 * (tp - 1) / tp * d_model * bytes_per_element)
    >>> print(check_tp_layer_intensity(tp_layer_intensity))  # doctest: +ELLIPSIS
    PASS tour-ex-tp-implement (tp_layer_intensity): all 9 cases match ...
    """
    rng = np.random.default_rng(32)  # fixed: the stored feedback must not change
    l70 = specs.model("llama3_70b")
    n70 = accounting.attention_params_per_layer(l70) + accounting.ffn_params_per_layer(l70, 0)[0]
    cases = [
        Case(args=(n70, l70.d_model, 8, 2.0), label="a Llama 3 70B layer, TP = 8, BF16"),
        Case(args=(12 * 4096.0**2, 4096, 2, 2.0), label="12 d^2 weights, d = 4096, TP = 2"),
        Case(args=(12 * 16384.0**2, 16384, 4, 1.0), label="12 d^2 weights, d = 16384, TP = 4, FP8"),
    ]
    for _ in range(6):
        d = int(rng.choice([1024, 2048, 4096, 8192, 12288]))
        cases.append(
            Case(
                args=(
                    float(np.round(12 * d * d * rng.uniform(0.8, 1.5), -3)),
                    d,
                    int(rng.choice([2, 4, 8, 16])),
                    float(rng.choice([1.0, 2.0, 4.0])),
                )
            )
        )
    return check_function(
        fn,
        exercise="tour-ex-tp-implement",
        reference=_tp_reference,
        cases=cases,
        mistakes=_tp_mistakes(),
    )
