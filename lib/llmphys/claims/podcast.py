"""Checks of Reiner Pope's podcast, in the statement digest ``003_08ad06ea090836a4.txt``.

The claims themselves are data, in ``data/claims/podcast.toml``; each function here recomputes
one of them with the library's study functions (mostly :mod:`llmphys.serving` and
:mod:`llmphys.scale_up`), and returns the value to grade and the numbers its notes quote.

Longer than 400 lines because it holds one typed check per claim of one source document, beside
that document's data file; split, a claim's check would leave its document's module.

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
    roofline,
    scale_up,
    scaling_laws,
    specs,
    trends,
    units,
)
from llmphys.studies import economics as study_economics
from llmphys.studies import memory_wall
from llmphys.studies import scale_up as study_scale_up
from llmphys.studies import serving as study_serving

from ._core import Check, Registry, half_unit

CHECKS = Registry("podcast")
check = CHECKS.register


@check
def p01() -> Check:
    batch1_penalty_low = study_serving.batch1_penalty_range()[0]
    return Check(
        value=batch1_penalty_low / study_serving.chip_cost_spread("llama3_70b"),
        numbers={
            "batch1_penalty_low": batch1_penalty_low,
            "chip_cost_spread": study_serving.chip_cost_spread("llama3_70b"),
            "long_llama3_70b_131072_usd_per_mtok": study_serving.long_context_penalty(
                "llama3_70b", "b200", 131072
            ),
        },
    )


@check
def p02() -> Check:
    dsv3 = specs.model("deepseek_v3")
    batch1_penalty_range = study_serving.batch1_penalty_range()
    return Check(
        value=study_serving.batch1_penalty(
            "deepseek_v3", "gb200", n_chips=specs.scenario("nvl72").n_chips, expert_parallel=True
        )["penalty"],
        numbers={
            "rack_penalty_spread": study_serving.batch1_penalty(
                "deepseek_v3", "gb200", n_chips=specs.scenario("nvl72").n_chips
            )["penalty"],
            "batch1_penalty_low": batch1_penalty_range[0],
            "batch1_penalty_high": batch1_penalty_range[1],
            "batch1_penalty_deepseek_v3_h100_sxm_penalty": study_serving.batch1_penalty(
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
    dsv3_all_weights_bytes = inference.weight_bytes_read(
        dsv3, batch_size=1000000.0, weight_bytes_per_param=1.0
    )
    return Check(
        value=inference.weight_bytes_read(dsv3, batch_size=256, weight_bytes_per_param=1.0)
        / dsv3_all_weights_bytes,
        numbers={
            "experts_touched_by_256_sequences": inference.experts_touched(dsv3, batch_size=256),
            "dsv3_rack_floor_ms": (
                study_serving.rack_floor_s("deepseek_v3", specs.scenario("nvl72")) / units.MS
            ),
            "dsv3_all_weights_read_ms": dsv3_all_weights_bytes
            / (specs.scenario("nvl72").n_chips * gb200.hbm_bytes_per_s)
            / units.MS,
            "llama70_rack_floor_ms": (
                study_serving.rack_floor_s("llama3_70b", specs.scenario("nvl72")) / units.MS
            ),
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
            "slope_ratio_llama3_70b_h100_sxm": study_serving.slope_ratio(
                "llama3_70b", "h100_sxm", context_tokens=4096
            ),
        },
    )


@check
def p07() -> Check:
    llama70 = specs.model("llama3_70b")
    gqa_kv_128k_bytes = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "gqa"), n_tokens=128000
    )
    swa_kv_128k_bytes = kv_cache.kv_cache_bytes(
        kv_cache.with_attention(llama70, "swa"), n_tokens=128000
    )
    return Check(
        value=gqa_kv_128k_bytes / swa_kv_128k_bytes,
        numbers={
            "gqa_kv_128k_gb": gqa_kv_128k_bytes / units.GB,
            "swa_kv_128k_gb": swa_kv_128k_bytes / units.GB,
        },
    )


@check
def p08() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=study_serving.weight_byte_share(
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
    balance_batch_range_deepseek_v3 = study_serving.balance_batch_range("deepseek_v3")
    return Check(
        value=study_serving.balance_batch_range("llama3_70b"),
        threshold=300 + half_unit("300"),
        numbers={
            "ridge_point_h100": roofline.ridge_point(h100),
            "ridge_point_h200": roofline.ridge_point(h200),
            "ridge_point_gb200": roofline.ridge_point(gb200),
            "sparsity_dsv3": accounting.sparsity(dsv3),
            "dsv3_balance_batch_low": balance_batch_range_deepseek_v3[0],
            "dsv3_balance_batch_high": balance_batch_range_deepseek_v3[1],
        },
    )


@check
def p11() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    llama70_balance_batch_1k_context = inference.balance_batch(llama70, h100, context_tokens=1024)
    balance_batch_llama70_h100 = inference.balance_batch(llama70, h100)
    return Check(
        value=llama70_balance_batch_1k_context / balance_batch_llama70_h100,
        numbers={
            "balance_batch_llama70_h100": balance_batch_llama70_h100,
            "llama70_balance_batch_1k_context": llama70_balance_batch_1k_context,
            "t_bal_llama70_h100": inference.balanced_context_tokens(llama70, h100),
        },
    )


@check
def p12() -> Check:
    queue = specs.scenario("queue_5000")
    schedule = study_serving.seat_limit(queue)
    return Check(
        value=float(schedule["unlimited"]["latency_s"].max()) / units.MS,
        numbers={
            "mean_wait_ms": batching.schedule_latency_closed_form(interval_s=queue.interval_s)[
                "mean_s"
            ]
            / units.MS,
            "load_at_seats": queue.rate_per_s * queue.interval_s / queue.seats,
            "seats": queue.seats,
            "rate_per_s": queue.rate_per_s,
            "interval_ms": queue.interval_s / units.MS,
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
            "drain_min_ms": (study_serving.drain_time_s("min") / units.MS),
            "drain_max_ms": (study_serving.drain_time_s("max") / units.MS),
            "drain_median_ms": (study_serving.drain_time_s("median") / units.MS),
        },
    )


@check
def p14() -> Check:
    llama8 = specs.model("llama3_8b")
    h100 = specs.accelerator("h100_sxm")
    llama70 = specs.model("llama3_70b")
    llama405 = specs.model("llama31_405b")
    return Check(
        value=study_serving.balance_batch_spread(
            tuple(specs.model(k) for k in ("llama3_8b", "llama3_70b", "llama31_405b")),
            specs.accelerator("h100_sxm"),
            context_tokens=0,
        ),
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
            "a2a_over_compute_h100_sxm_scale_up": study_scale_up.expert_all_to_all_over_compute(
                specs.model("deepseek_v3"),
                specs.accelerator("h100_sxm"),
                n_chips=int(economics.price("deployment_n_gpus.deepseek_v3_decode").value),
                fabric="scale_up",
            ),
            "price_deployment_n_gpus_deepseek_v3_decode": economics.price(
                "deployment_n_gpus.deepseek_v3_decode"
            ).value,
        },
    )


@check
def p17() -> Check:
    gap = study_scale_up.scale_out_gap(
        hopper=specs.accelerator("h100_sxm"),
        blackwell=specs.accelerator("b200"),
        ampere=specs.accelerator("a100_sxm"),
    )
    return Check(value=(gap["hopper"], gap["blackwell_800g"]), numbers=gap)


@check
def p18() -> Check:
    domain_growth_hbm_bandwidth = study_scale_up.domain_growth(
        specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "hbm_bandwidth"
    )
    domain_growth_gpus = study_scale_up.domain_growth(
        specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "gpus"
    )
    return Check(
        value=(domain_growth_gpus, domain_growth_hbm_bandwidth),
        numbers={
            "domain_growth_gpus": domain_growth_gpus,
            "domain_growth_hbm_bandwidth": domain_growth_hbm_bandwidth,
            "domain_growth_hbm_capacity": study_scale_up.domain_growth(
                specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "hbm_capacity"
            ),
            "domain_growth_link": study_scale_up.domain_growth(
                specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "link"
            ),
        },
    )


@check
def p19() -> Check:
    gb200 = specs.accelerator("gb200")
    h100 = specs.accelerator("h100_sxm")
    dsv3 = specs.model("deepseek_v3")
    gb200_rack_max_params = scale_up.max_total_params(
        gb200, n_chips=specs.scenario("nvl72").n_chips, weight_bytes_per_param=1.0
    )
    return Check(
        value=None,
        numbers={
            "gb200_rack_max_params_trillion": gb200_rack_max_params / units.TERA,
            "h100_node_max_params_billion": scale_up.max_total_params(
                h100, n_chips=h100.scale_up_domain_size, weight_bytes_per_param=1.0
            )
            / units.GIGA,
            "dsv3_params_billion": accounting.n_params(dsv3) / units.GIGA,
        },
    )


@check
def p20() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    gb200 = specs.accelerator("gb200")
    pipeline_product_needed_h100_sxm = study_scale_up.pipeline_product_needed(
        specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    )
    return Check(
        value=2 * pipeline_product_needed_h100_sxm,
        numbers={
            "needed_blackwell": 2
            * study_scale_up.pipeline_product_needed(
                specs.model("deepseek_v3"), specs.accelerator("gb200")
            ),
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
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "token_latency_s"
            ),
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "tokens_per_s_per_chip"
            ),
        )
    )


@check
def p22() -> Check:
    llama70 = specs.model("llama3_70b")
    h100 = specs.accelerator("h100_sxm")
    pipelined_decode_llama70_h100 = scale_up.pipelined_decode(
        llama70,
        h100,
        n_stages=4,
        chips_per_stage=h100.scale_up_domain_size,
        batch_size=32,
        context_tokens=8192,
    )
    return Check(
        value=study_scale_up.pipelining_ratio(
            specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "weight_bytes_per_chip"
        ),
        numbers={
            "weights_per_chip_gb": pipelined_decode_llama70_h100["weight_bytes_per_chip"]
            / units.GB,
            "kv_per_chip_gb": pipelined_decode_llama70_h100["kv_bytes_per_chip"] / units.GB,
        },
    )


@check
def p23() -> Check:
    return Check(
        value=critical_batch.examples(500.0, min_examples=1.0, critical_batch=1000.0)
        / critical_batch.examples(1000.0, min_examples=1.0, critical_batch=1000.0),
        numbers={
            "steps_at_half_critical_batch_ratio": critical_batch.steps(
                500.0, min_steps=1.0, critical_batch=1000.0
            )
            / critical_batch.steps(1000.0, min_steps=1.0, critical_batch=1000.0)
        },
    )


@check
def p24() -> Check:
    return Check(
        value=(
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "kv_bytes_per_chip"
            ),
            study_scale_up.pipelining_ratio(
                specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "token_latency_s"
            ),
        )
    )


@check
def p25() -> Check:
    return Check(
        value=study_scale_up.pipelining_ratio(
            specs.model("llama3_70b"), specs.accelerator("h100_sxm"), "kv_bytes_per_chip"
        )
    )


@check
def p26() -> Check:
    return Check(value=None)


@check
def p27() -> Check:
    domain_growth_hbm_bandwidth = study_scale_up.domain_growth(
        specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "hbm_bandwidth"
    )
    domain_growth_gpus = study_scale_up.domain_growth(
        specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "gpus"
    )
    return Check(
        value=domain_growth_gpus,
        numbers={
            "domain_growth_gpus": domain_growth_gpus,
            "domain_growth_hbm_bandwidth": domain_growth_hbm_bandwidth,
            "domain_growth_hbm_capacity": study_scale_up.domain_growth(
                specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "hbm_capacity"
            ),
            "domain_growth_link": study_scale_up.domain_growth(
                specs.accelerator("h100_sxm"), specs.scenario("nvl72"), "link"
            ),
            "domain_growth_over_eightfold": domain_growth_hbm_bandwidth / 8,
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
            "cost_ratio_low": cost_ratio_range[0],
            "cost_ratio_high": cost_ratio_range[1],
        },
    )


@check
def p29() -> Check:
    equal_cost_optimum = compute_split.optimum_at_cost_ratio(target_loss=2.0, cost_ratio=1.0)
    return Check(
        value=None,
        numbers={
            "equal_cost_overtraining": (
                inference_optimal.overtraining_at_cost_ratio(
                    scaling_laws.parametric_law("besiroglu2024"), cost_ratio=1.0
                )
            ),
            "equal_cost_tokens_per_param": equal_cost_optimum["tokens_per_param"],
        },
    )


@check
def p30() -> Check:
    rl_tokens_slow_pct = 100 * study_serving.rl_token_share(
        "deepseek_v3",
        "h200",
        batch_size=int(
            study_serving.at_max_batch("deepseek_v3", "h200", context_tokens=2048)["batch_size"]
        ),
    )
    rl_tokens_fast_pct = 100 * study_serving.rl_token_share("deepseek_v3", "h200", batch_size=16)
    return Check(
        value=(rl_tokens_slow_pct, rl_tokens_fast_pct),
        numbers={
            "rl_tokens_slow_pct": rl_tokens_slow_pct,
            "rl_tokens_fast_pct": rl_tokens_fast_pct,
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
            "cost_ratio_for_100x_overtraining": inference_optimal.cost_ratio_for_overtraining(
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
    prefill_llama70_h100 = inference.prefill(
        llama70, h100, prompt_tokens=64, n_chips=h100.scale_up_domain_size
    )
    return Check(
        value=study_serving.prefill_decode_bounds("llama3_70b", "h100_sxm"),
        numbers={
            "t_bal_llama70_h100": inference.balanced_context_tokens(llama70, h100),
            "compute_over_memory_time": prefill_llama70_h100["compute_time_s"]
            / prefill_llama70_h100["memory_time_s"],
        },
    )


@check
def p33() -> Check:
    llama70 = specs.model("llama3_70b")
    dsv3 = specs.model("deepseek_v3")
    llama70_attention_flop_per_context_token = kv_cache.decode_attention_flop_per_context_token(
        llama70
    )
    dsv3_attention_flop_per_context_token = kv_cache.decode_attention_flop_per_context_token(dsv3)
    llama70_linear_flop_per_token = inference.linear_flop_per_token(llama70)
    dsv3_linear_flop_per_token = inference.linear_flop_per_token(dsv3)
    return Check(
        value=(
            0.1 * llama70_linear_flop_per_token / llama70_attention_flop_per_context_token,
            0.1 * dsv3_linear_flop_per_token / dsv3_attention_flop_per_context_token,
        ),
        numbers={
            "llama70_attention_equals_matmul_tokens": llama70_linear_flop_per_token
            / llama70_attention_flop_per_context_token,
            "dsv3_attention_equals_matmul_tokens": dsv3_linear_flop_per_token
            / dsv3_attention_flop_per_context_token,
        },
    )


@check
def p34() -> Check:
    return Check(
        value=(
            study_serving.long_context(
                "llama3_70b", "b200", context_tokens=131072, what="memory_over_compute"
            ),
            study_serving.long_context(
                "deepseek_v3", "b200", context_tokens=131072, what="memory_over_compute"
            ),
        ),
        numbers={
            "long_llama3_70b_131072_usd_per_mtok": study_serving.long_context_penalty(
                "llama3_70b", "b200", 131072
            ),
            "long_deepseek_v3_131072_usd_per_mtok": study_serving.long_context_penalty(
                "deepseek_v3", "b200", 131072
            ),
        },
    )


@check
def p35() -> Check:
    dsv3_1m_usd_per_mtok = study_serving.long_context(
        "deepseek_v3", "b200", context_tokens=1048576, what="usd_per_mtok"
    )
    llama70_1m_usd_per_mtok = study_serving.long_context(
        "llama3_70b", "b200", context_tokens=1048576, what="usd_per_mtok"
    )
    return Check(
        value=None,
        numbers={
            "llama70_1m_over_128k_cost": llama70_1m_usd_per_mtok
            / study_serving.long_context(
                "llama3_70b", "b200", context_tokens=131072, what="usd_per_mtok"
            ),
            "dsv3_1m_over_128k_cost": dsv3_1m_usd_per_mtok
            / study_serving.long_context(
                "deepseek_v3", "b200", context_tokens=131072, what="usd_per_mtok"
            ),
            "llama70_1m_usd_per_mtok": llama70_1m_usd_per_mtok,
            "dsv3_1m_usd_per_mtok": dsv3_1m_usd_per_mtok,
        },
    )


@check
def p36() -> Check:
    hbm_growth_per_2y = round(trends.registry_growth_all("hbm_bandwidth"), 3)
    growth_peak_bf16 = round(trends.registry_growth_all("peak_bf16"), 3)
    return Check(
        value=(hbm_growth_per_2y, round(trends.registry_growth_all("hbm_capacity"), 3)),
        threshold=growth_peak_bf16,
        numbers={
            "growth_peak_bf16": growth_peak_bf16,
            "hbm_growth_per_year_pct": 100 * (hbm_growth_per_2y**0.5 - 1),
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
            "llama405_activations_none_gb": memory_wall.first_stage_activation_bytes(
                specs.scenario("llama3_405b"), recompute="none"
            )
            / units.GB,
            "llama405_activations_full_gb": memory_wall.first_stage_activation_bytes(
                specs.scenario("llama3_405b"), recompute="full"
            )
            / units.GB,
        },
    )


@check
def p40() -> Check:
    conversation = specs.scenario("idle_conversation_32k")  # Llama 3 70B, 32K tokens, 8 H100s
    return Check(
        value=(study_economics.kv_keep_s(conversation, "host DRAM") / units.HOUR),
        numbers={
            "nvme_keep_days": (study_economics.kv_keep_s(conversation, "NVMe") / units.HOUR) / 24,
            "hbm_keep_s": (study_economics.kv_keep_s(conversation, "HBM") / units.HOUR) * 3600,
        },
    )
