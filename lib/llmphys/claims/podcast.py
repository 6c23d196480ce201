"""Checks of Reiner Pope's podcast, in the statement digest ``003_08ad06ea090836a4.txt``.

The claims themselves are data, in ``data/claims/podcast.toml``; each function here recomputes
one of them with the library's study functions (mostly :mod:`llmphys.serving` and
:mod:`llmphys.scale_up`), and returns the value to grade and the numbers its notes quote.

Home: chapters/claims_ledger.ipynb.
"""

from __future__ import annotations

import numpy as np

from llmphys import (
    accounting,
    activation_memory,
    batching,
    compute_split,
    critical_batch,
    economics,
    inference,
    inference_optimal,
    kv_cache,
    kv_tiers,
    parallelism,
    roofline,
    scale_up,
    scaling_laws,
    serving,
    specs,
    trends,
    units,
)

from ._core import Check, Registry, half_unit

CHECKS = Registry("podcast")
check = CHECKS.register


@check
def p01() -> Check:
    batch1_penalty_range_0 = serving.batch1_penalty_range()[0]
    return Check(
        value=batch1_penalty_range_0 / serving.chip_cost_spread(),
        numbers={
            "batch1_penalty_range_0": batch1_penalty_range_0,
            "chip_cost_spread": serving.chip_cost_spread(),
            "long_llama3_70b_131072_usd_per_mtok": serving.long_context(
                "llama3_70b", context_tokens=131072, what="usd_per_mtok"
            )
            / serving.long_context("llama3_70b", context_tokens=1024, what="usd_per_mtok"),
        },
    )


@check
def p02() -> Check:
    dsv3 = specs.model("deepseek_v3")
    batch1_penalty_range = serving.batch1_penalty_range()
    return Check(
        value=serving.batch1_penalty("deepseek_v3", "gb200", n_chips=72, expert_parallel=True)[
            "penalty"
        ],
        numbers={
            "rack_penalty_spread": serving.batch1_penalty("deepseek_v3", "gb200", n_chips=72)[
                "penalty"
            ],
            "batch1_penalty_range_0": batch1_penalty_range[0],
            "batch1_penalty_range_1": batch1_penalty_range[1],
            "batch1_penalty_deepseek_v3_h100_sxm_penalty": serving.batch1_penalty(
                "deepseek_v3", "h100_sxm"
            )["penalty"]
            * inference.weight_bytes_read(dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0)
            / inference.weight_bytes_read(dsv3, batch_size=1, weight_bytes_per_param=1.0),
        },
    )


@check
def p03() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    h200 = specs.accelerator("h200")
    llama70 = specs.model("llama3_70b")
    attn_intensity_dsv3 = kv_cache.decode_attention_intensity(dsv3)
    return Check(
        value=(kv_cache.decode_attention_intensity(llama70), attn_intensity_dsv3),
        threshold=roofline.ridge_point(h100),
        numbers={
            "attn_intensity_dsv3": attn_intensity_dsv3,
            "ridge_point_h100": roofline.ridge_point(h100),
            "ridge_point_h200": roofline.ridge_point(h200),
        },
    )


@check
def p04() -> Check:
    dsv3 = specs.model("deepseek_v3")
    gb200 = specs.accelerator("gb200")
    weight_bytes_dsv3_1000000p0_2 = inference.weight_bytes_read(
        dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0
    )
    return Check(
        value=inference.weight_bytes_read(dsv3, batch_size=256, weight_bytes_per_param=1.0)
        / weight_bytes_dsv3_1000000p0_2,
        numbers={
            "experts_touched_dsv3_256": inference.experts_touched(dsv3, batch_size=256),
            "rack_floor_ms_deepseek_v3": serving.rack_floor_ms("deepseek_v3"),
            "weight_bytes_dsv3_1000000p0": weight_bytes_dsv3_1000000p0_2
            / (72 * gb200.hbm_bytes_per_s)
            / units.MS,
            "rack_floor_ms_llama3_70b": serving.rack_floor_ms("llama3_70b"),
        },
    )


@check
def p05() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h200 = specs.accelerator("h200")
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=(
            inference.balanced_context_tokens(llama70, h100),
            inference.balanced_context_tokens(dsv3, h100, weight_dtype="fp8"),
        ),
        numbers={
            "t_bal_dsv3_h200_fp8": inference.balanced_context_tokens(dsv3, h200, weight_dtype="fp8")
        },
    )


@check
def p06() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    t_bal_llama70_h100 = inference.balanced_context_tokens(llama70, h100)
    return Check(
        value=None,
        numbers={
            "t_bal_llama70_h100": t_bal_llama70_h100,
            "slope_ratio_llama3_70b_h100_sxm": serving.slope_ratio(
                "llama3_70b", "h100_sxm", context_tokens=4096
            ),
        },
    )


@check
def p07() -> Check:
    llama70 = specs.model("llama3_70b")
    kv_bytes_128000_3 = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "gqa"), n_tokens=128000
    )
    kv_bytes_128000_4 = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "swa"), n_tokens=128000
    )
    return Check(
        value=kv_bytes_128000_3 / kv_bytes_128000_4,
        numbers={
            "kv_bytes_128000": kv_bytes_128000_3 / units.GB,
            "kv_bytes_128000_2": kv_bytes_128000_4 / units.GB,
        },
    )


@check
def p08() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=serving.weight_byte_share(
            "llama3_70b", "h100_sxm", batch_size=1, context_tokens=1024
        ),
        numbers={"balance_batch_llama70_h100": inference.balance_batch(llama70, h100)},
    )


@check
def p09() -> Check:
    h100 = specs.accelerator("h100_sxm")
    h200 = specs.accelerator("h200")
    gb200 = specs.accelerator("gb200")
    dsv3 = specs.model("deepseek_v3")
    balance_batch_range_deepseek_v3 = serving.balance_batch_range("deepseek_v3")
    return Check(
        value=serving.balance_batch_range("llama3_70b"),
        threshold=300 + half_unit("300"),
        numbers={
            "ridge_point_h100": roofline.ridge_point(h100),
            "ridge_point_h200": roofline.ridge_point(h200),
            "ridge_point_gb200": roofline.ridge_point(gb200),
            "sparsity_dsv3": accounting.sparsity(dsv3),
            "balance_batch_range_deepseek_v3_0": balance_batch_range_deepseek_v3[0],
            "balance_batch_range_deepseek_v3_1": balance_batch_range_deepseek_v3[1],
        },
    )


@check
def p11() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    balance_batch_llama70_h100_2 = inference.balance_batch(llama70, h100, context_tokens=1024)
    balance_batch_llama70_h100 = inference.balance_batch(llama70, h100)
    return Check(
        value=balance_batch_llama70_h100_2 / balance_batch_llama70_h100,
        numbers={
            "balance_batch_llama70_h100": balance_batch_llama70_h100,
            "balance_batch_llama70_h100_2": balance_batch_llama70_h100_2,
            "t_bal_llama70_h100": inference.balanced_context_tokens(llama70, h100),
        },
    )


@check
def p12() -> Check:
    schedule = batching.seat_limit_study(
        np.random.default_rng(2026),
        rate_per_s=5000.0,
        interval_s=20 * units.MS,
        horizon_s=2.0,
        seats=104,
    )
    return Check(
        value=float(schedule["unlimited"]["latency_s"].max()) / units.MS,
        numbers={
            "schedule_latency_closed_form_mean_s": batching.schedule_latency_closed_form(
                interval_s=20 * units.MS
            )["mean_s"]
            / units.MS,
            "load_104_seats": 5000 * 20 * units.MS / 104,
            "tight_max_ms": float(schedule["limited"]["latency_s"].max()) / units.MS,
        },
    )


@check
def p13() -> Check:
    # The talk does spec-sheet arithmetic: the vendor's headline capacity over its bandwidth
    # (rule 4: the most plausible reading). The capacity a program can allocate is a little
    # larger on these parts; the note gives that reading too.
    flagships = ("h100_sxm", "h200", "b200", "gb200")
    nominal = {
        k: specs.accelerator(k).hbm_bytes_nominal / specs.accelerator(k).hbm_bytes_per_s / units.MS
        for k in flagships
    }
    drain = {
        k: inference.hbm_drain_time_s(specs.accelerator(k)) / units.MS
        for k in (*flagships, "mi325x")
    }
    return Check(
        value=float(np.median([nominal[k] for k in flagships])),
        numbers={
            "drain_h100": nominal["h100_sxm"],
            "drain_h200": nominal["h200"],
            "drain_b200": nominal["b200"],
            "drain_gb200": nominal["gb200"],
            "drain_usable_median": float(np.median([drain[k] for k in flagships])),
            "drain_mi325x": drain["mi325x"],
            "drain_time_ms_min": serving.drain_time_ms("min"),
            "drain_time_ms_max": serving.drain_time_ms("max"),
            "drain_time_ms_median": serving.drain_time_ms("median"),
        },
    )


@check
def p14() -> Check:
    llama8 = specs.model("llama3_8b")
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    llama405 = specs.model("llama31_405b")
    return Check(
        value=serving.balance_batch_spread(context_tokens=0),
        numbers={
            "balance_batch_llama8_h100": inference.balance_batch(llama8, h100, context_tokens=1024),
            "balance_batch_llama70_h100": inference.balance_batch(
                llama70, h100, context_tokens=1024
            ),
            "balance_batch_llama405_h100": inference.balance_batch(
                llama405, h100, context_tokens=1024
            ),
        },
    )


@check
def p15() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    balance_batch_dsv3_h100_fp8 = inference.balance_batch(dsv3, h100, weight_dtype="fp8")
    balance_batch_llama70_h100 = inference.balance_batch(llama70, h100)
    return Check(
        value=balance_batch_dsv3_h100_fp8 / balance_batch_llama70_h100 / accounting.sparsity(dsv3),
        numbers={
            "balance_batch_dsv3_h100_fp8": balance_batch_dsv3_h100_fp8,
            "balance_batch_llama70_h100": balance_batch_llama70_h100,
        },
    )


@check
def p16() -> Check:
    return Check(
        value=None,
        numbers={
            "a2a_over_compute_h100_sxm_scale_up": scale_up.expert_all_to_all_over_compute(
                "h100_sxm", fabric="scale_up"
            ),
            "price_deployment_n_gpus_deepseek_v3_decode": economics.price(
                "deployment_n_gpus.deepseek_v3_decode"
            ).value,
        },
    )


@check
def p17() -> Check:
    gap = scale_up.scale_out_gap()
    return Check(value=(gap["hopper"], gap["blackwell_800g"]), numbers=gap)


@check
def p18() -> Check:
    domain_growth_hbm_bandwidth = scale_up.domain_growth("hbm_bandwidth")
    domain_growth_gpus = scale_up.domain_growth("gpus")
    return Check(
        value=(domain_growth_gpus, domain_growth_hbm_bandwidth),
        numbers={
            "domain_growth_gpus": domain_growth_gpus,
            "domain_growth_hbm_bandwidth": domain_growth_hbm_bandwidth,
            "domain_growth_hbm_capacity": scale_up.domain_growth("hbm_capacity"),
            "domain_growth_link": scale_up.domain_growth("link"),
        },
    )


@check
def p19() -> Check:
    gb200 = specs.accelerator("gb200")
    h100 = specs.accelerator("h100_sxm")
    dsv3 = specs.model("deepseek_v3")
    max_params_gb200_72_2 = scale_up.max_total_params(gb200, n_chips=72, weight_bytes_per_param=1.0)
    return Check(
        value=None,
        numbers={
            "max_params_gb200_72": max_params_gb200_72_2 / units.TERA,
            "max_params_h100_8": scale_up.max_total_params(
                h100, n_chips=8, weight_bytes_per_param=1.0
            )
            / units.GIGA,
            "n_params_dsv3": accounting.n_params(dsv3) / units.GIGA,
        },
    )


@check
def p20() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    gb200 = specs.accelerator("gb200")
    pipeline_product_needed_h100_sxm = scale_up.pipeline_product_needed("h100_sxm")
    return Check(
        value=2 * pipeline_product_needed_h100_sxm,
        numbers={
            "needed_blackwell": 2 * scale_up.pipeline_product_needed("gb200"),
            "pipeline_product_needed_h100_sxm": pipeline_product_needed_h100_sxm,
            "pipeline_boundary_slack_dsv3_h100": scale_up.pipeline_boundary_slack(
                dsv3, h100, layers_per_stage=1
            ),
            "pipeline_boundary_slack_dsv3_gb200": scale_up.pipeline_boundary_slack(
                dsv3, gb200, layers_per_stage=1
            ),
        },
    )


@check
def p21() -> Check:
    return Check(
        value=(
            scale_up.pipelining_ratio("token_latency_s"),
            scale_up.pipelining_ratio("tokens_per_s_per_chip"),
        )
    )


@check
def p22() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    pipelined_decode_llama70_h100 = scale_up.pipelined_decode(
        llama70, h100, n_stages=4, chips_per_stage=8, batch_size=32, context_tokens=8192
    )
    return Check(
        value=scale_up.pipelining_ratio("weight_bytes_per_chip"),
        numbers={
            "pipelined_decode_llama70_h100_weight_bytes_per_c": pipelined_decode_llama70_h100[
                "weight_bytes_per_chip"
            ]
            / units.GB,
            "pipelined_decode_llama70_h100_kv_bytes_per_chip": pipelined_decode_llama70_h100[
                "kv_bytes_per_chip"
            ]
            / units.GB,
        },
    )


@check
def p23() -> Check:
    return Check(
        value=critical_batch.examples(500.0, min_examples=1.0, critical_batch=1000.0)
        / critical_batch.examples(1000.0, min_examples=1.0, critical_batch=1000.0),
        numbers={
            "steps_500p0_1p0": critical_batch.steps(500.0, min_steps=1.0, critical_batch=1000.0)
            / critical_batch.steps(1000.0, min_steps=1.0, critical_batch=1000.0)
        },
    )


@check
def p24() -> Check:
    return Check(
        value=(
            scale_up.pipelining_ratio("kv_bytes_per_chip"),
            scale_up.pipelining_ratio("token_latency_s"),
        )
    )


@check
def p25() -> Check:
    return Check(value=scale_up.pipelining_ratio("kv_bytes_per_chip"))


@check
def p26() -> Check:
    return Check(value=None)


@check
def p27() -> Check:
    domain_growth_hbm_bandwidth = scale_up.domain_growth("hbm_bandwidth")
    domain_growth_gpus = scale_up.domain_growth("gpus")
    return Check(
        value=domain_growth_gpus,
        numbers={
            "domain_growth_gpus": domain_growth_gpus,
            "domain_growth_hbm_bandwidth": domain_growth_hbm_bandwidth,
            "domain_growth_hbm_capacity": scale_up.domain_growth("hbm_capacity"),
            "domain_growth_link": scale_up.domain_growth("link"),
            "domain_growth_hbm_bandwidth_2": domain_growth_hbm_bandwidth / 8,
        },
    )


@check
def p28() -> Check:
    cost_ratio_range = compute_split.cost_ratio_range()
    return Check(
        value=inference_optimal.cost_ratio_for_overtraining(
            scaling_laws.parametric_law("besiroglu2024"), overtraining=100.0
        ),
        numbers={
            "cost_ratio_range_0": cost_ratio_range[0],
            "cost_ratio_range_1": cost_ratio_range[1],
        },
    )


@check
def p29() -> Check:
    optimum_at_cost_ratio_2p0_1p0 = compute_split.optimum_at_cost_ratio(
        target_loss=2.0, cost_ratio=1.0
    )
    return Check(
        value=None,
        numbers={
            "optimum_at_cost_ratio_2p0_1p0_overtraining": (
                inference_optimal.overtraining_at_cost_ratio(
                    scaling_laws.parametric_law("besiroglu2024"), cost_ratio=1.0
                )
            ),
            "optimum_at_cost_ratio_2p0_1p0_tokens_per_param": optimum_at_cost_ratio_2p0_1p0[
                "tokens_per_param"
            ],
        },
    )


@check
def p30() -> Check:
    rl_token_share_pct_slow = serving.rl_token_share_pct("slow")
    rl_token_share_pct_fast = serving.rl_token_share_pct("fast")
    return Check(
        value=(rl_token_share_pct_slow, rl_token_share_pct_fast),
        numbers={
            "rl_token_share_pct_slow": rl_token_share_pct_slow,
            "rl_token_share_pct_fast": rl_token_share_pct_fast,
        },
    )


@check
def p31() -> Check:
    llama8 = specs.model("llama3_8b")
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    return Check(
        value=None,
        numbers={
            "over_at_equal": inference_optimal.overtraining_at_cost_ratio(
                besiroglu, cost_ratio=1.0
            ),
            "cost_ratio_for_overtraining_100p0": inference_optimal.cost_ratio_for_overtraining(
                besiroglu, overtraining=100.0
            ),
            "overtraining_llama8": inference_optimal.overtraining_factor(
                besiroglu,
                n_params=accounting.n_active_params(llama8),
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            ),
        },
    )


@check
def p32() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    prefill_llama70_h100 = inference.prefill(llama70, h100, prompt_tokens=64, n_chips=8)
    return Check(
        value=serving.prefill_decode_bounds(),
        numbers={
            "t_bal_llama70_h100": inference.balanced_context_tokens(llama70, h100),
            "prefill_llama70_h100_compute_time_s": prefill_llama70_h100["compute_time_s"]
            / prefill_llama70_h100["memory_time_s"],
        },
    )


@check
def p33() -> Check:
    llama70 = specs.model("llama3_70b")
    dsv3 = specs.model("deepseek_v3")
    attention_flop_llama70 = kv_cache.decode_attention_flop_per_context_token(llama70)
    attention_flop_dsv3 = kv_cache.decode_attention_flop_per_context_token(dsv3)
    linear_flop_per_token_llama70_2 = inference.linear_flop_per_token(llama70)
    linear_flop_per_token_dsv3_2 = inference.linear_flop_per_token(dsv3)
    return Check(
        value=(
            0.1 * linear_flop_per_token_llama70_2 / attention_flop_llama70,
            0.1 * linear_flop_per_token_dsv3_2 / attention_flop_dsv3,
        ),
        numbers={
            "linear_flop_per_token_llama70": linear_flop_per_token_llama70_2
            / attention_flop_llama70,
            "linear_flop_per_token_dsv3": linear_flop_per_token_dsv3_2 / attention_flop_dsv3,
        },
    )


@check
def p34() -> Check:
    return Check(
        value=(
            serving.long_context("llama3_70b", context_tokens=131072, what="memory_over_compute"),
            serving.long_context("deepseek_v3", context_tokens=131072, what="memory_over_compute"),
        ),
        numbers={
            "long_llama3_70b_131072_usd_per_mtok": serving.long_context(
                "llama3_70b", context_tokens=131072, what="usd_per_mtok"
            )
            / serving.long_context("llama3_70b", context_tokens=1024, what="usd_per_mtok"),
            "long_deepseek_v3_131072_usd_per_mtok": serving.long_context(
                "deepseek_v3", context_tokens=131072, what="usd_per_mtok"
            )
            / serving.long_context("deepseek_v3", context_tokens=1024, what="usd_per_mtok"),
        },
    )


@check
def p35() -> Check:
    long_deepseek_v3_1048576_usd_per_mtok_2 = serving.long_context(
        "deepseek_v3", context_tokens=1048576, what="usd_per_mtok"
    )
    long_llama3_70b_1048576_usd_per_mtok_2 = serving.long_context(
        "llama3_70b", context_tokens=1048576, what="usd_per_mtok"
    )
    return Check(
        value=None,
        numbers={
            "long_llama3_70b_1048576_usd_per_mtok": long_llama3_70b_1048576_usd_per_mtok_2
            / serving.long_context("llama3_70b", context_tokens=131072, what="usd_per_mtok"),
            "long_deepseek_v3_1048576_usd_per_mtok": long_deepseek_v3_1048576_usd_per_mtok_2
            / serving.long_context("deepseek_v3", context_tokens=131072, what="usd_per_mtok"),
            "long_llama3_70b_1048576_usd_per_mtok_2": long_llama3_70b_1048576_usd_per_mtok_2,
            "long_deepseek_v3_1048576_usd_per_mtok_2": long_deepseek_v3_1048576_usd_per_mtok_2,
        },
    )


@check
def p36() -> Check:
    growth_hbm_bandwidth_2 = round(trends.registry_growth_all("hbm_bandwidth"), 3)
    growth_peak_bf16 = round(trends.registry_growth_all("peak_bf16"), 3)
    return Check(
        value=(growth_hbm_bandwidth_2, round(trends.registry_growth_all("hbm_capacity"), 3)),
        threshold=growth_peak_bf16,
        numbers={
            "growth_peak_bf16": growth_peak_bf16,
            "growth_hbm_bandwidth": 100 * (growth_hbm_bandwidth_2**0.5 - 1),
        },
    )


@check
def p39() -> Check:
    rev = activation_memory.reversible_reconstruction(n_blocks=32, d_model=128)
    return Check(
        value=rev["n_rebuilt"],
        numbers={
            "rev_blocks": 32,
            "rev_rtol": activation_memory.REVERSIBLE_RTOL,
            "rev_ratio": rev["stored_bytes_plain"] / rev["stored_bytes_reversible"],
            "llama405_activation_bytes_none": parallelism.llama405_activation_bytes("none")
            / units.GB,
            "llama405_activation_bytes_full": parallelism.llama405_activation_bytes("full")
            / units.GB,
        },
    )


@check
def p40() -> Check:
    return Check(
        value=kv_tiers.kv_keep_hours("host DRAM"),
        numbers={
            "kv_keep_hours_nvme": kv_tiers.kv_keep_hours("NVMe") / 24,
            "kv_keep_hours_hbm": kv_tiers.kv_keep_hours("HBM") * 3600,
        },
    )
