"""Checks of part 3 of the series, the essay on the memory wall (``000_8c51ff0cbb022c04.txt``).

The claims themselves (statement, stated figure, grading, assumptions, notes) are data, in
``data/claims/part3.toml``; each function here recomputes one of them with the library's study
functions, and returns the value to grade and the numbers its notes quote (see
:mod:`llmphys.claims`).

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import numpy as np

from llmphys import (
    accounting,
    comms,
    compute_split,
    economics,
    inference,
    inference_optimal,
    kv_cache,
    mfu,
    precision,
    roofline,
    scaling_laws,
    specs,
    trends,
    units,
)

from ._core import Check, Registry

CHECKS = Registry("part3")
check = CHECKS.register


@check
def m01() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=990 * units.TERA / h100.hbm_bytes_per_s,
        numbers={"ridge_point_h100": roofline.ridge_point(h100)},
    )


@check
def m02() -> Check:
    h100 = specs.accelerator("h100_sxm")
    intensity_1_8192 = roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2)
    return Check(
        value=100 * roofline.fraction_of_peak(h100, intensity_1_8192),
        numbers={"intensity_1_8192": intensity_1_8192},
    )


@check
def m03() -> Check:
    return Check(
        value=roofline.matmul_intensity(16384, 16384, 16384, bytes_per_element=2),
        numbers={
            "intensity_16384_4096": roofline.matmul_intensity(
                16384, 4096, 4096, bytes_per_element=2
            )
        },
    )


@check
def m05() -> Check:
    return Check(
        value=round(trends.registry_growth_all("peak_headline"), 3),
        numbers={
            "n_chips": len(specs.accelerators()),
            "growth_peak_bf16": round(trends.registry_growth_all("peak_bf16"), 3),
        },
    )


@check
def m06() -> Check:
    return Check(
        value=round(trends.registry_growth_all("hbm_bandwidth"), 3),
        numbers={"growth_peak_bf16": round(trends.registry_growth_all("peak_bf16"), 3)},
    )


@check
def m07() -> Check:
    growth_hbm_bandwidth = round(trends.registry_growth_all("hbm_bandwidth"), 3)
    growth_scale_out = round(trends.registry_growth_all("scale_out"), 3)
    growth_scale_up = round(trends.registry_growth_all("scale_up"), 3)
    return Check(
        value=[growth_scale_up / growth_hbm_bandwidth, growth_scale_out / growth_hbm_bandwidth],
        numbers={
            "growth_scale_up": growth_scale_up,
            "growth_scale_out": growth_scale_out,
            "growth_hbm_bandwidth": growth_hbm_bandwidth,
        },
    )


@check
def m08() -> Check:
    growth_hbm_bandwidth_2 = trends.registry_growth_all("hbm_bandwidth")
    growth_hbm_bandwidth = round(growth_hbm_bandwidth_2, 3)
    growth_peak_bf16 = trends.registry_growth_all("peak_bf16")
    return Check(
        value=round(growth_peak_bf16 / growth_hbm_bandwidth_2, 3),
        numbers={
            "years_to_grow_2p0": trends.years_to_grow(
                2.0, round(growth_peak_bf16, 3) / growth_hbm_bandwidth
            ),
            "growth_peak_headline": round(trends.registry_growth_all("peak_headline"), 3)
            / growth_hbm_bandwidth,
        },
    )


@check
def m09() -> Check:
    h100 = specs.accelerator("h100_sxm")
    train = roofline.matmul_intensity(16384, 16384, 16384, bytes_per_element=2)
    decode = roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2)
    return Check(
        value=None,
        numbers={
            "decode_tensor_pct": 100 * roofline.fraction_of_peak(h100, decode),
            "train_hbm_pct": 100 * min(1.0, roofline.ridge_point(h100) / train),
            "palm_mfu": 100 * mfu.palm_540b_mfu(),
            "llama3_run_mfu": 100 * mfu.run_level_mfu("llama3_405b"),
        },
    )


@check
def m10() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=100
        * roofline.fraction_of_peak(
            h100, roofline.matmul_intensity(16384, 16384, 16384, bytes_per_element=2)
        )
    )


@check
def m11() -> Check:
    return Check(
        value=100 * mfu.palm_540b_mfu(),
        numbers={"llama3_run_mfu": 100 * mfu.run_level_mfu("llama3_405b")},
    )


@check
def m12() -> Check:
    llama70 = specs.model("llama3_70b")
    with_attention_llama70_mha = kv_cache.with_attention(llama70, "mha")
    kv_bytes_128000_2 = kv_cache.kv_cache_bytes(with_attention_llama70_mha, n_tokens=128000)
    return Check(
        value=kv_bytes_128000_2 / units.GiB,
        numbers={
            "kv_bytes_128000": kv_bytes_128000_2 / units.GB,
            "kv_bytes_131072": kv_cache.kv_cache_bytes(with_attention_llama70_mha, n_tokens=131072)
            / units.GiB,
        },
    )


@check
def m13() -> Check:
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    kv_bytes_128000_2 = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "mha"), n_tokens=128000
    )
    max_2 = np.max([a.hbm_bytes for a in specs.accelerators().values()])
    return Check(
        value=kv_bytes_128000_2 / max_2,
        numbers={
            "largest_hbm_gb": max_2 / units.GB,
            "h100_hbm_bytes": h100.hbm_bytes / units.GB,
            "kv_bytes_128000": kv_bytes_128000_2 / h100.hbm_bytes,
        },
    )


@check
def m14() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    with_attention_llama70_mha = kv_cache.with_attention(llama70, "mha")
    return Check(
        value=inference.decode_tokens_per_s(
            with_attention_llama70_mha, h100, context_tokens=128000, include_weights=False
        ),
        numbers={
            "tokens_per_s_h100_128000": inference.decode_tokens_per_s(
                with_attention_llama70_mha, h100, context_tokens=128000
            )
        },
    )


@check
def m15() -> Check:
    llama70 = specs.model("llama3_70b")
    kv_bytes_128000_2 = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "gqa"), n_tokens=128000
    )
    return Check(
        value=kv_bytes_128000_2 / units.GiB,
        numbers={"kv_bytes_128000": kv_bytes_128000_2 / units.GB},
    )


@check
def m16() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    h200 = specs.accelerator("h200")
    with_attention_llama70_gqa = kv_cache.with_attention(llama70, "gqa")
    return Check(
        value=inference.decode_tokens_per_s(
            with_attention_llama70_gqa, h100, context_tokens=128000, include_weights=False
        ),
        numbers={
            "tokens_per_s_h100_128000": inference.decode_tokens_per_s(
                with_attention_llama70_gqa, h100, context_tokens=128000
            ),
            "tokens_per_s_h200_128000": inference.decode_tokens_per_s(
                with_attention_llama70_gqa, h200, context_tokens=128000, include_weights=False
            ),
        },
    )


@check
def m17() -> Check:
    llama70 = specs.model("llama3_70b")
    dsv3 = specs.model("deepseek_v3")
    kv_bytes_128000_2 = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "mla"), n_tokens=128000
    )
    return Check(
        value=kv_bytes_128000_2 / units.GiB,
        numbers={
            "kv_bytes_128000": kv_bytes_128000_2 / units.GB,
            "kv_bytes_dsv3_128000": kv_cache.kv_cache_bytes(dsv3, n_tokens=128000) / units.GB,
        },
    )


@check
def m18() -> Check:
    llama70 = specs.model("llama3_70b")
    dsv3 = specs.model("deepseek_v3")
    window = kv_cache.with_attention(llama70, "swa")
    return Check(
        value=[kv_cache.fraction_of_mha(llama70, v, n_tokens=128000) for v in ("mqa", "gqa", "mla")]
        + [kv_cache.cached_positions(window, n_tokens=128000) / 128000],
        numbers={
            "window_with_gqa": kv_cache.fraction_of_mha(llama70, "swa", n_tokens=128000),
            "attn_intensity_mha": kv_cache.decode_attention_intensity(
                kv_cache.with_attention(llama70, "mha")
            ),
            "attn_intensity_llama70": kv_cache.decode_attention_intensity(llama70),
            "attn_intensity_dsv3": kv_cache.decode_attention_intensity(dsv3),
        },
    )


@check
def m19() -> Check:
    values = specs.accelerators().values()
    return Check(
        value=np.sum(["fp4" in a.matrix_dtypes for a in values]),
        numbers={
            "n_chips": len(specs.accelerators()),
            "n_fp8_chips": np.sum(["fp8" in a.matrix_dtypes for a in values]),
            "first_fp4_year": np.min([a.launch_year for a in values if "fp4" in a.matrix_dtypes]),
        },
    )


@check
def m20() -> Check:
    float_format_e4m3_2 = precision.float_format("e4m3")
    return Check(
        value=float_format_e4m3_2.mantissa_bits,
        numbers={"e4m3_unit_roundoff": 2.0 ** (-(float_format_e4m3_2.mantissa_bits + 1))},
    )


@check
def m21() -> Check:
    float_format_e4m3 = precision.float_format("e4m3")
    float_format_bf16 = precision.float_format("bf16")
    return Check(
        value=float_format_e4m3.max_value,
        numbers={
            "e4m3_range_bits": np.log2(
                float_format_e4m3.max_value / float_format_e4m3.min_subnormal
            ),
            "bf16_range_bits": np.log2(
                float_format_bf16.max_value / float_format_bf16.min_subnormal
            ),
        },
    )


@check
def m22() -> Check:
    return Check(
        value=precision.unscaled_flush_pct("e4m3"),
        numbers={
            "e4m3_min_subnormal": precision.float_format("e4m3").min_subnormal,
            "unscaled_flush_pct_e5m2": precision.unscaled_flush_pct("e5m2"),
        },
    )


@check
def m23() -> Check:
    bytes_per_element_fp8 = units.bytes_per_element("fp8")
    return Check(
        value=[
            units.bytes_per_element("fp32") / bytes_per_element_fp8,
            units.bytes_per_element("bf16") / bytes_per_element_fp8,
        ]
    )


@check
def m24() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(value=precision.precision_speedup(h100, m=1, n=8192, k=8192)["speedup"])


@check
def m25() -> Check:
    llama70 = specs.model("llama3_70b")
    return Check(
        value=None,
        numbers={
            "matmul_flop_share_llama70_8192": 100
            * accounting.matmul_flop_share(llama70, context_tokens=8192)
        },
    )


@check
def m26() -> Check:
    def gain(chip: str, m: int) -> float:
        r = precision.precision_speedup(specs.accelerator(chip), m=m, n=8192, k=8192)
        return r["speedup"] / r["peak_ratio"]

    return Check(
        value=(gain("h100_sxm", 1), gain("h100_sxm", 8192)),
        numbers={"b200_ratio": gain("b200", 1), "a100_ratio": gain("a100_sxm", 1)},
    )


@check
def m27() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=h100.hbm_bytes_per_s / h100.scale_out_bytes_per_s_per_direction,
        numbers={
            "h100_peak_bf16_flop_per_s": h100.peak_bf16_flop_per_s
            / h100.scale_out_bytes_per_s_per_direction,
            "ridge_point_h100": roofline.ridge_point(h100),
        },
    )


@check
def m28() -> Check:
    h100 = specs.accelerator("h100_sxm")
    all_reduce_s_140000000000p0_16384_2 = comms.ring_all_reduce_time_s(
        140000000000.0, 16384, link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction
    )
    return Check(
        value=all_reduce_s_140000000000p0_16384_2
        / comms.ring_all_reduce_time_s(
            140000000000.0, 64, link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction
        ),
        numbers={
            "all_reduce_s_140000000000p0_16384": comms.ring_all_reduce_time_s(
                140000000000.0,
                16384,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                latency_s=5e-06,
            )
            - all_reduce_s_140000000000p0_16384_2,
            "all_reduce_s_140000000000p0_16384_2": all_reduce_s_140000000000p0_16384_2,
        },
    )


@check
def m29() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=100
        * comms.dp_comm_share(
            16384,
            link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
            n_params=70000000000.0,
            tokens_per_step=4000000.0,
            peak_flop_per_s=h100.peak_bf16_flop_per_s,
            mfu=0.45,
        ),
        numbers={
            "dp_share_8_70000000000p0": 100
            * comms.dp_comm_share(
                8,
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            ),
            "dp_share_72_70000000000p0": 100
            * comms.dp_comm_share(
                72,
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            ),
            "dp_share_512_70000000000p0": 100
            * comms.dp_comm_share(
                512,
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            ),
        },
    )


@check
def m30() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=np.asarray(
            100
            * comms.dp_comm_share(
                np.array([64, 512, 16384]),
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            )
        ).tolist(),
        numbers={
            "implied_mfu_0p09_64": comms.implied_mfu(
                0.09,
                64,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "implied_mfu_0p43_512": comms.implied_mfu(
                0.43,
                512,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "implied_mfu_0p96_16384": comms.implied_mfu(
                0.96,
                16384,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "dp_share_512_70000000000p0": 100
            * comms.dp_comm_share(
                512,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                intra_node_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            ),
        },
    )


@check
def m31() -> Check:
    tpu_v5p = specs.accelerator("tpu_v5p")
    a100 = specs.accelerator("a100_sxm")
    h100 = specs.accelerator("h100_sxm")
    b200 = specs.accelerator("b200")
    return Check(
        value=[
            a.scale_up_bytes_per_s_per_direction / a.scale_out_bytes_per_s_per_direction
            for a in [a100, h100, b200]
        ],
        numbers={
            "tpu_v5p_scale_up_bytes_per_s_per_direction": tpu_v5p.scale_up_bytes_per_s_per_direction
            / tpu_v5p.scale_out_bytes_per_s_per_direction
        },
    )


@check
def m32() -> Check:
    h100 = specs.accelerator("h100_sxm")
    llama405 = specs.model("llama31_405b")
    n_params_llama405 = accounting.n_params(llama405)
    return Check(
        value=100
        * comms.dp_comm_share(
            128,
            link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            overlap=2 / 3,
            n_params=n_params_llama405,
            tokens_per_step=16 * 2**20,
            peak_flop_per_s=h100.peak_bf16_flop_per_s,
            mfu=0.4,
        ),
        numbers={
            "dp_share_128_0p4": 100
            * comms.dp_comm_share(
                128,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                n_params=n_params_llama405,
                tokens_per_step=16 * 2**20,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.4,
            ),
            "dp_share_16384_70000000000p0": 100
            * comms.dp_comm_share(
                16384,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                intra_node_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                overlap=2 / 3,
                n_params=70000000000.0,
                tokens_per_step=4000000.0,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                mfu=0.45,
            ),
        },
    )


@check
def m33() -> Check:
    growth_hbm_capacity = round(trends.registry_growth_all("hbm_capacity"), 3)
    growth_scale_up = round(trends.registry_growth_all("scale_up"), 3)
    return Check(
        value=np.max([growth_scale_up, round(trends.registry_growth_all("scale_out"), 3)])
        / np.min(
            [
                round(trends.registry_growth_all("peak_bf16"), 3),
                round(trends.registry_growth_all("hbm_bandwidth"), 3),
                growth_hbm_capacity,
            ]
        ),
        numbers={"growth_scale_up": growth_scale_up, "growth_hbm_capacity": growth_hbm_capacity},
    )


@check
def m36() -> Check:
    return Check(
        value=economics.capital_over_energy(),
        numbers={
            "owned_h100_hour_total": economics.owned_h100_hour()["total"],
            "owned_h100_hour_capital": economics.owned_h100_hour()["capital"],
            "owned_h100_hour_energy": economics.owned_h100_hour()["energy"],
        },
    )


@check
def m37() -> Check:
    return Check(
        value=economics.value_left_pct(2.0),
        numbers={
            "economic_life_years": economics.economic_life_years(
                usd_per_hour_new=economics.price("gpu_hour_usd.h100_sxm").value,
                opex_usd_per_hour=economics.owned_h100_hour()["energy"],
                doubling_years=economics.price("price_performance_doubling_years.gpu").value,
            )
        },
    )


@check
def m38() -> Check:
    price_price_performance_doubling_years_gpu = economics.price(
        "price_performance_doubling_years.gpu"
    )
    return Check(
        value=100
        * economics.earning_power_fraction(
            2.0, doubling_years=price_price_performance_doubling_years_gpu.value
        ),
        numbers={
            "earning_power_2p0_0": 100
            * economics.earning_power_fraction(
                2.0, doubling_years=price_price_performance_doubling_years_gpu.range[0]
            ),
            "earning_power_2p0_1": 100
            * economics.earning_power_fraction(
                2.0, doubling_years=price_price_performance_doubling_years_gpu.range[1]
            ),
        },
    )


@check
def m39() -> Check:
    return Check(
        value=[
            round(trends.registry_growth_all("peak_headline"), 3),
            round(trends.registry_growth_all("peak_bf16"), 3),
        ],
        numbers={
            "price_price_performance_doubling_years_gpu": economics.price(
                "price_performance_doubling_years.gpu"
            ).value,
            "growth_hbm_bandwidth": round(trends.registry_growth_all("hbm_bandwidth"), 3),
        },
    )


@check
def m41() -> Check:
    llama70 = specs.model("llama3_70b")
    llama405 = specs.model("llama31_405b")
    llama8 = specs.model("llama3_8b")
    besiroglu = scaling_laws.parametric_law("besiroglu2024")

    def overtraining(m: specs.Model) -> float:
        return inference_optimal.overtraining_factor(
            besiroglu,
            n_params=accounting.n_active_params(m),
            n_tokens=specs.recorded(m, "n_training_tokens"),
        )

    return Check(
        value=overtraining(llama8),
        numbers={
            "overtraining_llama70": overtraining(llama70),
            "overtraining_llama405": overtraining(llama405),
        },
    )


@check
def m42() -> Check:
    optimum_at_cost_ratio_2p0_1p0 = compute_split.optimum_at_cost_ratio(
        target_loss=2.0, cost_ratio=1.0
    )
    return Check(
        value=inference_optimal.overtraining_at_cost_ratio(
            scaling_laws.parametric_law("besiroglu2024"), cost_ratio=1.0
        ),
        numbers={
            "optimum_at_cost_ratio_2p0_1p0_tokens_per_param": optimum_at_cost_ratio_2p0_1p0[
                "tokens_per_param"
            ]
        },
    )
