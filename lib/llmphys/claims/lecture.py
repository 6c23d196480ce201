"""Checks of the summary of Reiner Pope's blackboard lecture (``004_35a9eea2bc47d51c.txt``).

The claims themselves are data, in ``data/claims/lecture.toml``; each function here recomputes
one of them with the library's study functions, and returns the value to grade and the numbers
its notes quote (see :mod:`llmphys.claims`).

Longer than 400 lines because it holds one typed check per claim of one source document, beside
that document's data file; split, a claim's check would leave its document's module.

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import numpy as np

from llmphys import (
    accounting,
    batching,
    compute_split,
    economics,
    inference,
    inference_optimal,
    kv_cache,
    parallelism,
    roofline,
    scale_up,
    scaling_laws,
    serving,
    specs,
    trends,
    units,
)
from llmphys.studies import economics as study_economics
from llmphys.studies import scale_up as study_scale_up
from llmphys.studies import serving as study_serving

from ._core import Check, Registry

CHECKS = Registry("lecture")
check = CHECKS.register


@check
def l01() -> Check:
    batch1_penalty_range = study_serving.batch1_penalty_range()
    return Check(
        value=batch1_penalty_range,
        numbers={
            "batch1_penalty_low": batch1_penalty_range[0],
            "batch1_penalty_high": batch1_penalty_range[1],
        },
    )


@check
def l02() -> Check:
    gb200 = specs.accelerator("gb200")
    b200 = specs.accelerator("b200")
    dsv3 = specs.model("deepseek_v3")
    return Check(
        value=inference.weight_bytes_read(dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0)
        / (specs.scenario("nvl72").n_chips * gb200.hbm_bytes_per_s)
        / units.MS,
        numbers={
            "gb200_drain_ms": inference.hbm_drain_time_s(gb200) / units.MS,
            "min_b200_chips": inference.min_chips(dsv3, b200, weight_dtype="fp8"),
            "min_b200_dsv3_ms": inference.weight_bytes_read(
                dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0
            )
            / (inference.min_chips(dsv3, b200, weight_dtype="fp8") * b200.hbm_bytes_per_s)
            / units.MS,
        },
    )


@check
def l03() -> Check:
    queue = specs.scenario("queue_5000")
    schedule = study_serving.seat_limit(queue)
    return Check(
        value=float(schedule["unlimited"]["latency_s"].max()) / units.MS,
        numbers={
            "worst_wait_ms": batching.schedule_latency_closed_form(interval_s=queue.interval_s)[
                "worst_s"
            ]
            / units.MS,
            "worst_wait_with_service_ms": (
                batching.schedule_latency_closed_form(interval_s=queue.interval_s, service_s=0.005)[
                    "worst_s"
                ]
                / units.MS
            ),
            "tight_max_ms": float(schedule["limited"]["latency_s"].max()) / units.MS,
            "seats": queue.seats,
            "load_at_seats": queue.rate_per_s * queue.interval_s / queue.seats,
            "interval_ms": queue.interval_s / units.MS,
        },
    )


@check
def l04() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    balance_batch_dsv3_h100_fp8 = inference.balance_batch(dsv3, h100, weight_dtype="fp8")
    return Check(
        value=balance_batch_dsv3_h100_fp8
        / (roofline.ridge_point(h100) * accounting.sparsity(dsv3)),
        numbers={
            "balance_batch_dsv3_h100_fp8": balance_batch_dsv3_h100_fp8,
            "ridge_point_h100": roofline.ridge_point(h100),
            "sparsity_dsv3": accounting.sparsity(dsv3),
            "llama70_balance_batch_1k_context": inference.balance_batch(
                llama70, h100, context_tokens=1024
            ),
            "llama70_balance_batch_zero_context": inference.balance_batch(llama70, h100),
        },
    )


@check
def l05() -> Check:
    h100 = specs.accelerator("h100_sxm")
    balance_batch_range_deepseek_v3 = study_serving.balance_batch_range("deepseek_v3")
    balance_batch_range_llama3_70b = study_serving.balance_batch_range("llama3_70b")
    return Check(
        value=balance_batch_range_llama3_70b + balance_batch_range_deepseek_v3,
        numbers={
            "llama70_balance_batch_low": balance_batch_range_llama3_70b[0],
            "llama70_balance_batch_high": balance_batch_range_llama3_70b[1],
            "dsv3_balance_batch_low": balance_batch_range_deepseek_v3[0],
            "dsv3_balance_batch_high": balance_batch_range_deepseek_v3[1],
            "sparsity_for_batch_2k": 2000 / roofline.ridge_point(h100),
            "sparsity_for_batch_3k": 3000 / roofline.ridge_point(h100),
            "bstar_mixtral_h100": inference.balance_batch(specs.model("mixtral_8x7b"), h100),
        },
    )


@check
def l06() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    step = inference.decode_step(
        llama70, h100, batch_size=32, context_tokens=0, n_chips=h100.scale_up_domain_size
    )
    return Check(
        value=step["memory_time_s"] / step["step_time_s"],
        numbers={
            "tensor_busy_pct": 100 * step["compute_time_s"] / step["step_time_s"],
            "balance_batch": inference.balance_batch(llama70, h100),
            "growth_at_2x": study_serving.step_time_growth(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), 2.0
            ),
        },
    )


@check
def l07() -> Check:
    dsv3_rack_floor_ms = (
        study_serving.rack_floor_s("deepseek_v3", specs.scenario("nvl72")) / units.MS
    )
    return Check(
        value=(
            (study_serving.rack_floor_s("llama3_70b", specs.scenario("nvl72")) / units.MS),
            dsv3_rack_floor_ms,
        ),
        numbers={
            "stated_over_dsv3_floor": 20 / dsv3_rack_floor_ms,
            "ep_floor_dsv3_ms": serving.batch1_latency_floor_s(
                specs.model("deepseek_v3"),
                specs.accelerator("gb200"),
                n_chips=specs.scenario("nvl72").n_chips,
                weight_dtype="fp8",
            )["weights_s"]
            / units.MS,
        },
    )


@check
def l08() -> Check:
    growth_hbm_bandwidth_unrounded = trends.registry_growth_all("hbm_bandwidth")
    growth_peak_bf16_unrounded = trends.registry_growth_all("peak_bf16")
    return Check(
        value=round(growth_peak_bf16_unrounded / growth_hbm_bandwidth_unrounded, 3),
        numbers={
            "growth_peak_bf16": round(growth_peak_bf16_unrounded, 3),
            "growth_hbm_bandwidth": round(growth_hbm_bandwidth_unrounded, 3),
        },
    )


@check
def l09() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    return Check(
        value=inference.balance_batch(dsv3, h100, weight_dtype="fp8")
        / inference.balance_batch(llama70, h100),
        numbers={
            "dsv3_all_over_batch1_weight_reads": inference.weight_bytes_read(
                dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0
            )
            / inference.weight_bytes_read(dsv3, batch_size=1, weight_bytes_per_param=1.0)
        },
    )


@check
def l10() -> Check:
    gb200 = specs.accelerator("gb200")
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=(h100.scale_up_domain_size, gb200.scale_up_domain_size),
        numbers={
            "gb200_scale_up_domain_size": gb200.scale_up_domain_size / h100.scale_up_domain_size,
            "gb200_hbm_bytes_per_s": specs.scenario("nvl72").n_chips
            * gb200.hbm_bytes_per_s
            / (h100.scale_up_domain_size * h100.hbm_bytes_per_s),
        },
    )


@check
def l12() -> Check:
    gap = study_scale_up.scale_out_gap(
        hopper=specs.accelerator("h100_sxm"),
        blackwell=specs.accelerator("b200"),
        ampere=specs.accelerator("a100_sxm"),
    )
    return Check(value=(gap["hopper"], gap["blackwell_800g"]), numbers=gap)


@check
def l13() -> Check:
    gb200 = specs.accelerator("gb200")
    return Check(
        value=specs.scenario("nvl72").n_chips
        * economics.price("system_power_w_per_gpu.b200").value
        / units.KILO,
        numbers={
            "gb200_tdp_w": gb200.tdp_w,
            "rack_tdp_kw": specs.scenario("nvl72").n_chips
            * specs.recorded(gb200, "tdp_w")
            / units.KILO,
        },
    )


@check
def l14() -> Check:
    llama70 = specs.model("llama3_70b")
    return Check(
        value=(
            study_serving.long_context_penalty("llama3_70b", "b200", 2000000),
            study_serving.long_context_penalty("deepseek_v3", "b200", 2000000),
        ),
        numbers={
            "llama70_kv_2m_tokens_gb": kv_cache.kv_bytes_per_token(llama70) * 2000000 / units.GB,
            "llama70_128k_penalty": study_serving.long_context_penalty(
                "llama3_70b", "b200", 131072
            ),
            "dsv3_128k_penalty": study_serving.long_context_penalty("deepseek_v3", "b200", 131072),
        },
    )


@check
def l15() -> Check:
    return Check(
        value=(
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "weight_bytes_per_chip"
            ),
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "kv_bytes_per_chip"
            ),
        )
    )


@check
def l16() -> Check:
    conversation = specs.scenario("idle_conversation_32k")  # Llama 3 70B, 32K tokens, 8 H100s
    return Check(
        value=study_economics.tier_ladder(conversation),
        numbers={
            "idle_cache_tiers_breakeven_idle_s": study_economics.kv_keep_s(conversation, "HBM"),
            "dram_breakeven_hours": study_economics.kv_keep_s(conversation, "host DRAM")
            / units.HOUR,
            "nvme_breakeven_days": study_economics.kv_keep_s(conversation, "NVMe") / units.DAY,
        },
    )


@check
def l17() -> Check:
    conversation = specs.scenario("idle_conversation_32k")  # Llama 3 70B, 32K tokens, 8 H100s
    tiers = study_economics.idle_cache_tiers(
        specs.model(conversation.model),
        specs.accelerator(conversation.accelerator),
        context_tokens=conversation.context_tokens,
    )
    return Check(
        value=tuple(100 * f for f in study_economics.cached_input_fraction()),
        numbers={
            "dram_restore_of_recompute_pct": tiers["host DRAM"]["restore_usd"]
            / tiers["recompute"]["restore_usd"]
            * 100
        },
    )


@check
def l18() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    prefill_llama70_h100 = inference.prefill(
        llama70, h100, prompt_tokens=64, n_chips=h100.scale_up_domain_size
    )
    return Check(
        value=study_serving.output_over_input("llama3_70b", "h100_sxm"),
        numbers={
            "compute_over_memory_time": prefill_llama70_h100["compute_time_s"]
            / prefill_llama70_h100["memory_time_s"]
        },
    )


@check
def l19() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    dsv3 = specs.model("deepseek_v3")
    return Check(
        value=(
            inference.balanced_context_tokens(llama70, h100),
            inference.balanced_context_tokens(dsv3, h100, weight_dtype="fp8"),
        )
    )


@check
def l20() -> Check:
    h100 = specs.accelerator("h100_sxm")
    gb200 = specs.accelerator("gb200")
    return Check(
        value=(
            study_scale_up.size_over_domain_hbm(
                specs.model("llama31_405b"), specs.accelerator("h100_sxm")
            ),
            study_scale_up.size_over_domain_hbm(
                specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
            ),
        ),
        numbers={
            "h100_node_max_params_billion": scale_up.max_total_params(
                h100, n_chips=h100.scale_up_domain_size, weight_bytes_per_param=1.0
            )
            / units.GIGA,
            "price_deployment_n_gpus_deepseek_v3_decode": economics.price(
                "deployment_n_gpus.deepseek_v3_decode"
            ).value,
            "gb200_rack_max_params_trillion": scale_up.max_total_params(
                gb200, n_chips=specs.scenario("nvl72").n_chips, weight_bytes_per_param=1.0
            )
            / units.TERA,
        },
    )


@check
def l21() -> Check:
    return Check(
        value=None,
        numbers={
            "equal_cost_overtraining": (
                inference_optimal.overtraining_at_cost_ratio(
                    scaling_laws.parametric_law("besiroglu2024"), cost_ratio=1.0
                )
            )
        },
    )


@check
def l22() -> Check:
    llama8 = specs.model("llama3_8b")
    equal_cost_optimum = compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    return Check(
        value=inference_optimal.overtraining_at_cost_ratio(besiroglu, cost_ratio=1.0),
        numbers={
            "equal_cost_tokens_per_param": equal_cost_optimum["tokens_per_param"],
            "overtraining_llama8": inference_optimal.overtraining_factor(
                besiroglu,
                n_params=accounting.n_active_params(llama8),
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            ),
        },
    )


@check
def l23() -> Check:
    dsv3 = specs.model("deepseek_v3")
    return Check(
        value=(
            (accounting.n_active_params(dsv3) - accounting.embedding_params(dsv3)) / units.GIGA,
            accounting.n_params(dsv3) / units.GIGA,
        )
    )


@check
def l24() -> Check:
    dsv3, h100 = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    n_decode = int(economics.price("deployment_n_gpus.deepseek_v3_decode").value)
    return Check(
        value=(
            study_scale_up.expert_all_to_all_over_compute(
                dsv3, h100, n_chips=n_decode, fabric="scale_out"
            ),
            study_scale_up.expert_all_to_all_over_compute(
                dsv3, h100, n_chips=n_decode, fabric="scale_out", destinations_per_token=4
            ),
        ),
        numbers={
            "a2a_over_compute_h100_sxm_scale_up": study_scale_up.expert_all_to_all_over_compute(
                dsv3, h100, n_chips=n_decode, fabric="scale_up"
            ),
            "price_deployment_n_gpus_deepseek_v3_decode": economics.price(
                "deployment_n_gpus.deepseek_v3_decode"
            ).value,
        },
    )


@check
def l25() -> Check:
    return Check(
        value=study_scale_up.pipelining_against_wide(
            specs.model("llama3_70b"), specs.accelerator("gb200"), "token_latency_s"
        ),
        numbers={
            "throughput_ratio": study_scale_up.pipelining_against_wide(
                specs.model("llama3_70b"), specs.accelerator("gb200"), "tokens_per_s_per_chip"
            ),
            "against_one_stage": study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "token_latency_s"
            ),
            "bubble_16_stages_64_microbatches_pct": 100
            * parallelism.pipeline_bubble_fraction(16, 64),
        },
    )


@check
def l26() -> Check:
    ridge = {
        k: roofline.ridge_point(specs.accelerator(k)) for k in ("h100_sxm", "h200", "b200", "gb200")
    }
    return Check(
        value=float(np.median(list(ridge.values()))),
        numbers={
            "ridge_h100": ridge["h100_sxm"],
            "ridge_h200": ridge["h200"],
            "ridge_b200": ridge["b200"],
            "ridge_gb200": ridge["gb200"],
            "ridge_point_h100_fp8": roofline.ridge_point(specs.accelerator("h100_sxm"), "fp8"),
        },
    )


@check
def l27() -> Check:
    price_ratio, latency_ratio = study_serving.slow_mode_ratios("deepseek_v3", "h200")
    return Check(
        value=price_ratio,
        numbers={
            "slow_batch": int(
                study_serving.at_max_batch("deepseek_v3", "h200", context_tokens=2048)["batch_size"]
            ),
            "slow_mode_latency_ratio": latency_ratio,
        },
    )
