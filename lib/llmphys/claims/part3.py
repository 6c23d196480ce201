"""Checks of part 3 of the series, the essay on the memory wall (``000_8c51ff0cbb022c04.txt``).

The claims themselves (statement, stated figure, grading, assumptions, notes) are data, in
``data/claims/part3.toml``; each function here recomputes one of them with the library's study
functions, and returns the value to grade and the numbers its notes quote (see
:mod:`llmphys.claims`).

Longer than 400 lines because it holds one typed check per claim of one source document, beside
that document's data file; split, a claim's check would leave its document's module.

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
    precision,
    predict,
    roofline,
    scaling_laws,
    specs,
    trends,
    units,
)
from llmphys.studies import economics as study_economics
from llmphys.studies import memory_wall

from ._core import Check, Registry

CHECKS = Registry("part3")
check = CHECKS.register


@check
def m01() -> Check:
    h100 = specs.accelerator("h100_sxm")
    ridge_flop_per_byte = roofline.ridge_point(h100)
    return Check(
        value=ridge_flop_per_byte,
        numbers={
            "peak_bf16_tflop_per_s": h100.peak_bf16_flop_per_s / units.TERA,
            "sparse_bf16_tflop_per_s": specs.recorded(h100, "peak_bf16_sparse_flop_per_s")
            / units.TERA,
            "hbm_tb_per_s": h100.hbm_bytes_per_s / units.TERA,
            "below_stated_pct": 100 * (1 - ridge_flop_per_byte / 296),
            "ridge_990_flop_per_byte": 990 * units.TERA / h100.hbm_bytes_per_s,
        },
    )


@check
def m02() -> Check:
    h100 = specs.accelerator("h100_sxm")
    decode_intensity_flop_per_byte = roofline.matmul_intensity(
        1, 8192, 8192, bytes_per_element=units.bytes_per_element("bf16")
    )
    return Check(
        value=100 * roofline.fraction_of_peak(h100, decode_intensity_flop_per_byte),
        numbers={"decode_intensity_flop_per_byte": decode_intensity_flop_per_byte},
    )


@check
def m03() -> Check:
    return Check(
        value=roofline.matmul_intensity(
            16384,
            specs.model("llama31_405b").d_ff,
            specs.model("llama31_405b").d_model,
            bytes_per_element=units.bytes_per_element("bf16"),
        ),
        numbers={
            "narrow_intensity_flop_per_byte": roofline.matmul_intensity(
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
    growth_hbm_bandwidth_unrounded = trends.registry_growth_all("hbm_bandwidth")
    growth_hbm_bandwidth = round(growth_hbm_bandwidth_unrounded, 3)
    growth_peak_bf16 = trends.registry_growth_all("peak_bf16")
    return Check(
        value=round(growth_peak_bf16 / growth_hbm_bandwidth_unrounded, 3),
        numbers={
            "years_for_ridge_to_double": trends.years_to_grow(
                2.0, round(growth_peak_bf16, 3) / growth_hbm_bandwidth
            ),
            "growth_peak_headline": round(trends.registry_growth_all("peak_headline"), 3)
            / growth_hbm_bandwidth,
        },
    )


def _palm_mfu() -> float:
    """PaLM 540B's MFU from its measured throughput, under PaLM's own (full-attention) count."""
    return predict.measured_mfu(predict.training_runs()["palm_540b"], attention_flops="full")


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
            "palm_mfu_pct": 100 * _palm_mfu(),
            "llama3_run_mfu_pct": 100 * memory_wall.run_level_mfu(specs.scenario("llama3_405b")),
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
        value=100 * _palm_mfu(),
        numbers={
            "llama3_run_mfu_pct": 100 * memory_wall.run_level_mfu(specs.scenario("llama3_405b"))
        },
    )


@check
def m12() -> Check:
    llama70 = specs.model("llama3_70b")
    with_attention_llama70_mha = kv_cache.with_attention(llama70, "mha")
    mha_kv_128k_bytes = kv_cache.kv_cache_bytes(with_attention_llama70_mha, n_tokens=128000)
    return Check(
        value=mha_kv_128k_bytes / units.GiB,
        numbers={
            "mha_kv_128k_gb": mha_kv_128k_bytes / units.GB,
            "mha_kv_131072_tokens_gib": kv_cache.kv_cache_bytes(
                with_attention_llama70_mha, n_tokens=131072
            )
            / units.GiB,
        },
    )


@check
def m13() -> Check:
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    mha_kv_128k_bytes = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "mha"), n_tokens=128000
    )
    largest_hbm_bytes = np.max([a.hbm_bytes for a in specs.accelerators().values()])
    return Check(
        value=mha_kv_128k_bytes / largest_hbm_bytes,
        numbers={
            "largest_hbm_gb": largest_hbm_bytes / units.GB,
            "h100_hbm_gb": h100.hbm_bytes / units.GB,
            "mha_kv_128k_over_h100_hbm": mha_kv_128k_bytes / h100.hbm_bytes,
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
            "h100_128k_tokens_per_s": inference.decode_tokens_per_s(
                with_attention_llama70_mha, h100, context_tokens=128000
            )
        },
    )


@check
def m15() -> Check:
    llama70 = specs.model("llama3_70b")
    gqa_kv_128k_bytes = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "gqa"), n_tokens=128000
    )
    return Check(
        value=gqa_kv_128k_bytes / units.GiB,
        numbers={"gqa_kv_128k_gb": gqa_kv_128k_bytes / units.GB},
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
            "h100_128k_tokens_per_s": inference.decode_tokens_per_s(
                with_attention_llama70_gqa, h100, context_tokens=128000
            ),
            "h200_128k_cache_only_tokens_per_s": inference.decode_tokens_per_s(
                with_attention_llama70_gqa, h200, context_tokens=128000, include_weights=False
            ),
        },
    )


@check
def m17() -> Check:
    llama70 = specs.model("llama3_70b")
    dsv3 = specs.model("deepseek_v3")
    mla_kv_128k_bytes = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "mla"), n_tokens=128000
    )
    return Check(
        value=mla_kv_128k_bytes / units.GiB,
        numbers={
            "mla_kv_128k_gb": mla_kv_128k_bytes / units.GB,
            "dsv3_kv_128k_gb": kv_cache.kv_cache_bytes(dsv3, n_tokens=128000) / units.GB,
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
    chips = specs.accelerators().values()
    return Check(
        value=np.sum(["fp4" in a.matrix_dtypes for a in chips]),
        numbers={
            "n_chips": len(specs.accelerators()),
            "n_fp8_chips": np.sum(["fp8" in a.matrix_dtypes for a in chips]),
            "first_fp4_year": min(
                (a.launch_year for a in chips if "fp4" in a.matrix_dtypes), default=0
            ),
        },
    )


@check
def m20() -> Check:
    e4m3 = precision.float_format("e4m3")
    return Check(
        value=e4m3.mantissa_bits,
        numbers={"e4m3_unit_roundoff": 2.0 ** (-(e4m3.mantissa_bits + 1))},
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
        value=100 * precision.unscaled_flush_fraction("e4m3"),
        numbers={
            "e4m3_min_subnormal": precision.float_format("e4m3").min_subnormal,
            "e5m2_unscaled_flush_pct": 100 * precision.unscaled_flush_fraction("e5m2"),
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
            "llama70_8k_matmul_share_pct": 100
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
            "flop_per_scale_out_byte": h100.peak_bf16_flop_per_s
            / h100.scale_out_bytes_per_s_per_direction,
            "ridge_point_h100": roofline.ridge_point(h100),
        },
    )


@check
def m28() -> Check:
    h100 = specs.accelerator("h100_sxm")
    few, _, many = specs.scenario("series_dp").n_ranks  # the essay's 64 and 16,384 GPUs
    grad_bytes = 2.0 * specs.scenario("series_dp").n_params  # the 70B case's BF16 gradients
    all_reduce_16384_ranks_s = comms.ring_all_reduce_time_s(
        grad_bytes, many, link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction
    )
    return Check(
        value=all_reduce_16384_ranks_s
        / comms.ring_all_reduce_time_s(
            grad_bytes, few, link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction
        ),
        numbers={
            "all_reduce_latency_term_s": comms.ring_all_reduce_time_s(
                grad_bytes,
                many,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                latency_s=5e-06,
            )
            - all_reduce_16384_ranks_s,
            "all_reduce_16384_ranks_s": all_reduce_16384_ranks_s,
        },
    )


@check
def m29() -> Check:
    h100 = specs.accelerator("h100_sxm")
    _, some, many = specs.scenario("series_dp").n_ranks  # the essay's 512 and 16,384 GPUs
    return Check(
        value=100
        * comms.dp_comm_share(
            many,
            link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
            **memory_wall.step_inputs(specs.scenario("series_dp")),
        ),
        numbers={
            "dp_8_ranks_pct": 100
            * comms.dp_comm_share(
                h100.scale_up_domain_size,  # one node
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
            ),
            "dp_72_ranks_pct": 100
            * comms.dp_comm_share(
                specs.scenario("nvl72").n_chips,  # one NVLink domain
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
            ),
            "dp_512_ranks_pct": 100
            * comms.dp_comm_share(
                some,
                link_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
            ),
        },
    )


@check
def m30() -> Check:
    h100 = specs.accelerator("h100_sxm")
    few, some, many = specs.scenario("series_dp").n_ranks  # the essay's 64, 512, 16,384 GPUs
    return Check(
        value=np.asarray(
            100
            * comms.dp_comm_share(
                np.array([few, some, many]),
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
            )
        ).tolist(),
        numbers={
            "implied_mfu_64_ranks": comms.implied_mfu(
                0.09,
                few,
                n_params=specs.scenario("series_dp").n_params,
                tokens_per_step=specs.scenario("series_dp").global_batch_tokens,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "implied_mfu_512_ranks": comms.implied_mfu(
                0.43,
                some,
                n_params=specs.scenario("series_dp").n_params,
                tokens_per_step=specs.scenario("series_dp").global_batch_tokens,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "implied_mfu_16384_ranks": comms.implied_mfu(
                0.96,
                many,
                n_params=specs.scenario("series_dp").n_params,
                tokens_per_step=specs.scenario("series_dp").global_batch_tokens,
                peak_flop_per_s=h100.peak_bf16_flop_per_s,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            ),
            "dp_512_ranks_pct": 100
            * comms.dp_comm_share(
                some,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                intra_node_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
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
    llama3 = specs.scenario("llama3_405b")
    dp = memory_wall.layout(llama3).dp  # 128 data-parallel groups on 16,384 GPUs
    return Check(
        value=100
        * comms.dp_comm_share(
            dp,
            link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
            overlap=2 / 3,
            **memory_wall.step_inputs(llama3),
        ),
        numbers={
            "dp_128_ranks_pct": 100
            * comms.dp_comm_share(
                dp,
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                **memory_wall.step_inputs(llama3),
            ),
            "dp_16384_ranks_pct": 100
            * comms.dp_comm_share(
                specs.scenario("series_dp").n_ranks[-1],  # the essay's 16,384
                link_bytes_per_s=h100.scale_out_bytes_per_s_per_direction,
                intra_node_bytes_per_s=h100.scale_up_bytes_per_s_per_direction,
                overlap=2 / 3,
                **memory_wall.step_inputs(specs.scenario("series_dp")),
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
        value=study_economics.capital_over_energy("h100_sxm"),
        numbers={
            "owned_h100_hour_total": study_economics.owned_hour("h100_sxm")["total"],
            "owned_h100_hour_capital": study_economics.owned_hour("h100_sxm")["capital"],
            "owned_h100_hour_energy": study_economics.owned_hour("h100_sxm")["energy"],
        },
    )


@check
def m37() -> Check:
    return Check(
        value=(100 * study_economics.value_left("h100_sxm", 2.0)),
        numbers={
            "economic_life_years": economics.economic_life_years(
                usd_per_hour_new=economics.price("gpu_hour_usd.h100_sxm").value,
                opex_usd_per_hour=study_economics.owned_hour("h100_sxm")["energy"],
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
            "earning_power_2y_low_doubling_pct": 100
            * economics.earning_power_fraction(
                2.0, doubling_years=price_price_performance_doubling_years_gpu.range[0]
            ),
            "earning_power_2y_high_doubling_pct": 100
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
    equal_cost_optimum = compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)
    return Check(
        value=inference_optimal.overtraining_at_cost_ratio(
            scaling_laws.parametric_law("besiroglu2024"), cost_ratio=1.0
        ),
        numbers={"equal_cost_tokens_per_param": equal_cost_optimum["tokens_per_param"]},
    )
