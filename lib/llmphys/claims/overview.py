"""Checks of the series overview, "is pretraining over?" (``002_1a663014a24a4105.txt``).

The claims themselves are data, in ``data/claims/overview.toml``; each function here recomputes
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
    compute_split,
    data_constrained,
    economics,
    emergence,
    inference_optimal,
    kv_cache,
    moe,
    objective,
    parallelism,
    precision,
    predict,
    reliability,
    roofline,
    scaling_laws,
    specs,
    training,
    trends,
    units,
)
from llmphys.pipeline import studies
from llmphys.studies import economics as study_economics
from llmphys.studies import memory_wall
from llmphys.studies import scaling_laws as study_scaling_laws

from ._core import Check, Registry

CHECKS = Registry("overview")
check = CHECKS.register


@check
def o02() -> Check:
    return Check(
        value=(
            objective.perplexity_from_bits_per_byte(1.0, bytes_per_token=1.0),
            objective.perplexity_from_bits_per_byte(1.0, bytes_per_token=4.0),
        )
    )


@check
def o03() -> Check:
    llama70 = specs.model("llama3_70b")
    llama405 = specs.model("llama31_405b")
    return Check(
        value=llama70.n_layers,
        numbers={"llama70_n_layers": 2 * llama70.n_layers, "llama405_n_layers": llama405.n_layers},
    )


@check
def o04() -> Check:
    llama70 = specs.model("llama3_70b")
    besiroglu = scaling_laws.parametric_law("besiroglu2024")

    def gain(key: str) -> float:
        m = specs.model(key)
        return scaling_laws.doubling_gain_ratio(
            besiroglu,
            n_params=m.published_n_params,
            n_tokens=specs.recorded(m, "n_training_tokens"),
        )

    return Check(
        value=None,
        numbers={
            "llama70_training_tokens_trillion": specs.recorded(llama70, "n_training_tokens")
            / units.TERA,
            "gain_gpt3": gain("gpt3_175b"),
            "gain_chinchilla": gain("chinchilla_70b"),
            "gain_llama70": gain("llama3_70b"),
        },
    )


@check
def o06() -> Check:
    return Check(
        value=studies.dedup_removals(studies.book_run(specs.scenario("crawl_800")))[1],
        numbers={
            "exact_dedup_removed": studies.dedup_removals(
                studies.book_run(specs.scenario("crawl_800"))
            )[0],
            "near_dedup_removed": studies.dedup_removals(
                studies.book_run(specs.scenario("crawl_800"))
            )[1],
            "lsh_candidate_probability_at_half_jaccard": studies.lsh_candidate_probability(0.5),
            "near_over_exact": studies.near_over_exact(specs.scenario("crawl_800")),
        },
    )


@check
def o07() -> Check:
    return Check(
        value=studies.fertility_premium(specs.scenario("crawl_800")),
        numbers={"fertility_premium": studies.fertility_premium(specs.scenario("crawl_800"))},
    )


@check
def o08() -> Check:
    from llmphys.claims import published  # the package imports this module: import on call

    llama1_code_share = published("llama1_code_share")
    llama3_code_share = published("llama3_code_share")
    return Check(
        value=llama3_code_share / llama1_code_share,
        numbers={
            "llama1_code_pct": 100 * llama1_code_share,
            "llama3_code_pct": 100 * llama3_code_share,
            "llama3_math_pct": 100 * published("llama3_math_share"),
        },
    )


@check
def o10() -> Check:
    repetition = study_scaling_laws.repetition_cost(specs.scenario("muennighoff_4_epochs"))
    return Check(
        value=100 * repetition["penalty"] / repetition["fresh_loss"],
        numbers={
            "repetition_penalty_4_epochs": repetition["penalty"],
        },
    )


@check
def o11() -> Check:
    effective_tokens_4_epochs = data_constrained.effective_tokens(n_unique_tokens=1.0, n_tokens=4.0)
    return Check(
        value=effective_tokens_4_epochs,
        numbers={
            "lost_to_repetition_pct": 100 * (1 - effective_tokens_4_epochs / 4),
            "one_plus_r_d_star": 1 + data_constrained.repetition_constants().r_d_star,
        },
    )


@check
def o13() -> Check:
    survivors_by_generation = studies.collapse_survivors(specs.scenario("crawl_800"), "replace")
    return Check(
        value=studies.collapse_words_lost(specs.scenario("crawl_800"), "replace"),
        numbers={
            "survivors_at_start": survivors_by_generation[0],
            "survivors_at_end": survivors_by_generation[-1],
            "collapse_words_lost_accumulate": studies.collapse_words_lost(
                specs.scenario("crawl_800"), "accumulate"
            ),
        },
    )


@check
def o14() -> Check:
    return Check(
        value=None,
        numbers={
            "collapse_survivors_verified": studies.collapse_survivors(
                specs.scenario("crawl_800"), "verified"
            )[-1]
        },
    )


@check
def o15() -> Check:
    n = 13  # GPT-3's n-gram overlap check
    return Check(
        value=studies.decontam_sweep(specs.scenario("crawl_800"), (n,))[n]["recall"],
        numbers={
            "decontam_recall_13_false": studies.decontam_sweep(
                specs.scenario("crawl_800"), (n,), edited=False
            )[n]["recall"]
        },
    )


@check
def o16() -> Check:
    modern_feature_counts = accounting.modern_feature_counts(since_year=2023)
    return Check(
        value=tuple(modern_feature_counts[k] for k in ("rope", "rmsnorm", "swiglu", "shared_kv")),
        numbers={
            "modern_feature_counts_n_models": modern_feature_counts["n_models"],
            "modern_feature_counts_moe": modern_feature_counts["moe"],
        },
    )


@check
def o17() -> Check:
    llama70 = specs.model("llama3_70b")
    return Check(value=100 * accounting.matmul_flop_share(llama70, context_tokens=8192))


@check
def o18() -> Check:
    dsv3 = specs.model("deepseek_v3")
    return Check(
        value=100
        * (accounting.n_active_params(dsv3) - accounting.embedding_params(dsv3))
        / accounting.n_params(dsv3),
        numbers={"n_params_dsv3": accounting.n_params(dsv3) / 1000000000.0},
    )


@check
def o19() -> Check:
    dsv3 = specs.model("deepseek_v3")
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=moe.all_to_all_over_compute(
            dsv3, h100, n_tokens=4096, n_devices=64, fabric="scale_out"
        ),
        numbers={
            "all_to_all_over_compute_dsv3_h100_scale_up": moe.all_to_all_over_compute(
                dsv3, h100, n_tokens=4096, n_devices=h100.scale_up_domain_size, fabric="scale_up"
            )
        },
    )


@check
def o20() -> Check:
    llama70 = specs.model("llama3_70b")
    return Check(
        value=(
            1 / kv_cache.fraction_of_mha(llama70, "gqa", n_tokens=128000),
            1 / kv_cache.fraction_of_mha(llama70, "mla", n_tokens=128000),
        ),
        numbers={
            "mha_kv_128k_gb": kv_cache.kv_cache_bytes(
                kv_cache.with_attention(llama70, "mha"), n_tokens=128000
            )
            / units.GB
        },
    )


@check
def o21() -> Check:
    run = memory_wall.layout(specs.scenario("llama3_405b"))  # PP 16, DP 128, 16M-token batch
    n_micro = int(run.global_batch_tokens) // (run.dp * run.seq_len * run.micro_batch_size)
    return Check(
        value=(
            parallelism.pipeline_bubble_fraction(run.pp, n_micro),
            parallelism.pipeline_bubble_fraction(run.pp, n_micro, n_chunks=4),
        )
    )


@check
def o22() -> Check:
    return Check(
        value=memory_wall.tp_time_over_step(specs.scenario("llama3_405b"), link="scale_out"),
        numbers={
            "llama405_tp_time_over_step_scale_up": memory_wall.tp_time_over_step(
                specs.scenario("llama3_405b"), link="scale_up"
            )
        },
    )


@check
def o23() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(value=precision.precision_speedup(h100, m=1, n=8192, k=8192)["speedup"])


@check
def o24() -> Check:
    h100 = specs.accelerator("h100_sxm")
    h100_fp8_speedup_at_8192_cube = precision.precision_speedup(h100, m=8192, n=8192, k=8192)
    return Check(
        value=roofline.matmul_intensity(16384, 16384, 16384, bytes_per_element=2)
        / roofline.ridge_point(h100),
        numbers={
            "fp8_speedup_h100_8192_speedup": h100_fp8_speedup_at_8192_cube["speedup"],
            "fp8_speedup_h100_8192_peak_ratio": h100_fp8_speedup_at_8192_cube["peak_ratio"],
        },
    )


@check
def o25() -> Check:
    n_gpus = memory_wall.layout(specs.scenario("llama3_405b")).n_chips  # Llama 3's 16,384
    gpu_mtbf = memory_wall.gpu_mtbf_s(specs.scenario("llama3_405b_interruptions"))
    job_h = {n: reliability.job_mtbf_s(n, gpu_mtbf_s=gpu_mtbf) / units.HOUR for n in (2048, 100000)}
    return Check(
        value=reliability.job_mtbf_s(n_gpus, gpu_mtbf_s=gpu_mtbf) / units.HOUR,
        numbers={
            "job_mtbf_2048_gpus_hours": job_h[2048],
            "job_mtbf_100k_gpus_minutes": 60 * job_h[100000],
            "llama3_goodput_pct": 100
            * reliability.optimal_goodput(
                n_gpus, gpu_mtbf_s=gpu_mtbf, checkpoint_s=60.0, restart_s=600.0
            ),
        },
    )


def _mfu_spread() -> float:
    """Highest over lowest published MFU: PaLM's measured, the whole-run Llama 3 / DeepSeek-V3."""
    lo, hi = memory_wall.published_mfu_range(
        [specs.scenario("llama3_405b"), specs.scenario("deepseek_v3_cluster")],
        predict.training_runs()["palm_540b"],
    )
    return hi / lo


@check
def o26() -> Check:
    return Check(
        value=None,
        numbers={"published_mfu_spread": _mfu_spread()},
    )


@check
def o27() -> Check:
    llama405 = specs.model("llama31_405b")
    training_bill_usd = study_economics.training_bill_usd(
        "training_gpu_hours.deepseek_v3_total", usd_per_gpu_hour="gpu_hour_usd.h800_deepseek"
    )
    llama405_bill_usd = study_economics.training_bill_usd(
        "training_gpu_hours.llama31_405b", usd_per_gpu_hour="gpu_hour_usd.h800_deepseek"
    )
    return Check(
        value=training_bill_usd / units.MEGA,
        numbers={
            "llama405_bill_musd": llama405_bill_usd / units.MEGA,
            "llama_over_deepseek_flop": specs.recorded(llama405, "published_train_flop")
            / memory_wall.cluster_train_flop(specs.scenario("deepseek_v3_cluster")),
            "llama405_over_deepseek_bill": llama405_bill_usd
            / units.MEGA
            / (training_bill_usd / units.MEGA),
        },
    )


@check
def o28() -> Check:
    h100_capex = economics.price("capex_usd_per_gpu.h100_sxm")
    headline_usd = study_economics.training_bill_usd(
        "training_gpu_hours.deepseek_v3_total", usd_per_gpu_hour="gpu_hour_usd.h800_deepseek"
    )
    low_usd, high_usd = h100_capex.range
    n_gpus = specs.scenario("deepseek_v3_cluster").n_chips  # DeepSeek-V3's 2,048 H800s
    return Check(
        value=(n_gpus * low_usd / headline_usd, n_gpus * high_usd / headline_usd),
        numbers={
            "h100_capex_low_usd": low_usd,
            "h100_capex_high_usd": high_usd,
            "capex_2048_gpus_musd": n_gpus * h100_capex.value / units.MEGA,
        },
    )


@check
def o30() -> Check:
    return Check(
        value=None,
        numbers={"growth_hbm_capacity": round(trends.registry_growth_all("hbm_capacity"), 3)},
    )


@check
def o31() -> Check:
    return Check(value=study_economics.capital_over_energy("h100_sxm"))


@check
def o32() -> Check:
    price_price_performance_doubling_years_gpu = economics.price(
        "price_performance_doubling_years.gpu"
    )
    return Check(
        value=None,
        numbers={
            "life_hi": study_economics.economic_life_range("h100_sxm")[1],
            "life_lo": study_economics.economic_life_range("h100_sxm")[0],
            "doubling_years_low": (price_price_performance_doubling_years_gpu.range[0]),
            "doubling_years_high": (price_price_performance_doubling_years_gpu.range[1]),
            "earning_power_2y_pct": 100
            * economics.earning_power_fraction(
                2.0, doubling_years=price_price_performance_doubling_years_gpu.value
            ),
            "value_left_2y_pct": (100 * study_economics.value_left("h100_sxm", 2.0)),
        },
    )


@check
def o33() -> Check:
    hoffmann = scaling_laws.parametric_law("hoffmann2022")
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    # Chinchilla was trained at Gopher's budget; models.toml records it with Gopher
    budget_flop = specs.recorded(specs.model("gopher_280b"), "published_train_flop")
    return Check(
        value=scaling_laws.compute_optimal(besiroglu, train_flop=budget_flop)["tokens_per_param"],
        numbers={
            "hoffmann_tokens_per_param": scaling_laws.compute_optimal(
                hoffmann, train_flop=budget_flop
            )["tokens_per_param"],
            "besiroglu_1e25_tokens_per_param": scaling_laws.compute_optimal(
                besiroglu, train_flop=1e25
            )["tokens_per_param"],
        },
    )


@check
def o34() -> Check:
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    # Chinchilla was trained at Gopher's budget; models.toml records it with Gopher
    budget_flop = specs.recorded(specs.model("gopher_280b"), "published_train_flop")
    return Check(
        value=(
            100
            * scaling_laws.isoflop_waste_fraction(
                besiroglu, size_factor=2.0, train_flop=budget_flop
            ),
            100
            * scaling_laws.isoflop_waste_fraction(
                besiroglu, size_factor=0.5, train_flop=budget_flop
            ),
        ),
        numbers={
            "waste_4x_too_large_pct": 100
            * scaling_laws.isoflop_waste_fraction(
                besiroglu, size_factor=4.0, train_flop=budget_flop
            )
        },
    )


@check
def o35() -> Check:
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    llama8 = specs.model("llama3_8b")
    return Check(
        value=100
        * inference_optimal.training_share_at_optimum(
            besiroglu,
            n_params=llama8.published_n_params,
            n_tokens=specs.recorded(llama8, "n_training_tokens"),
        ),
        numbers={
            "break_even_inference_tokens_besiroglu": inference_optimal.break_even_inference_tokens(
                besiroglu,
                n_params=llama8.published_n_params,
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            )
            / 1000000000000.0
        },
    )


@check
def o36() -> Check:
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    llama8 = specs.model("llama3_8b")
    hoffmann = scaling_laws.parametric_law("hoffmann2022")
    sardana_13b_against_optimum = study_scaling_laws.lifetime_saving(specs.scenario("sardana_13b"))
    return Check(
        value=100 * sardana_13b_against_optimum["saving_fraction"],
        numbers={
            "lifetime_optimum_params_billion": (
                sardana_13b_against_optimum["opt_n_params"] / 1000000000.0
            ),
            "overtraining_factor_besiroglu": inference_optimal.overtraining_factor(
                besiroglu,
                n_params=llama8.published_n_params,
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            ),
            "overtraining_factor_hoffmann": inference_optimal.overtraining_factor(
                hoffmann,
                n_params=llama8.published_n_params,
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            ),
        },
    )


@check
def o37() -> Check:
    besiroglu = scaling_laws.parametric_law("besiroglu2024")
    llama8 = specs.model("llama3_8b")
    d_inf = 1e15
    return Check(
        value=compute_split.marginal_saving_at_optimum(
            target_loss=2.0, inference_tokens=d_inf, inference_cost_per_flop=1.0
        ),
        numbers={
            "l8_return": d_inf
            / inference_optimal.break_even_inference_tokens(
                besiroglu,
                n_params=llama8.published_n_params,
                n_tokens=specs.recorded(llama8, "n_training_tokens"),
            )
        },
    )


@check
def o38() -> Check:
    h100 = specs.accelerator("h100_sxm")
    return Check(
        value=None,
        numbers={
            "decode_of_peak_pct": 100
            * roofline.fraction_of_peak(
                h100, roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2)
            )
        },
    )


@check
def o39() -> Check:
    return Check(
        value=np.log10(
            emergence.threshold_n_params(answer_tokens=20)
            / emergence.threshold_n_params(answer_tokens=1)
        ),
        numbers={"emergence_illustrative_alpha": emergence.ILLUSTRATIVE_ALPHA},
    )


@check
def o41() -> Check:
    modern_feature_counts = accounting.modern_feature_counts()
    return Check(
        value=None,
        numbers={
            "modern_feature_counts_moe": modern_feature_counts["moe"],
            "modern_feature_counts_n_models": modern_feature_counts["n_models"],
        },
    )


@check
def o42() -> Check:
    registry_longest = max(m.max_context_tokens for m in specs.models().values())
    gemini = economics.price("context_tokens.gemini_15_pro").value
    return Check(
        value=max(registry_longest, gemini),
        numbers={"registry_longest": registry_longest, "gemini": gemini},
    )


@check
def o44() -> Check:
    llama405 = specs.model("llama31_405b")
    h100 = specs.accelerator("h100_sxm")
    train_flop = accounting.train_flop(
        accounting.n_params(llama405), specs.recorded(llama405, "n_training_tokens")
    )
    runs = predict.training_runs()
    largest = max(runs, key=lambda k: runs[k].n_chips)
    mfu = specs.scenario("llama3_405b").mfu  # the round 40% of the book's Llama 3 step
    return Check(
        value=None,
        numbers={
            "largest_run_chips": runs[largest].n_chips,
            "training_on_100_gpus_years": training.training_time_s(
                train_flop, n_chips=100, peak_flop_per_s=h100.peak_bf16_flop_per_s, mfu=mfu
            )
            / units.YEAR,
            "training_on_100k_gpus_days": training.training_time_s(
                train_flop, n_chips=100000, peak_flop_per_s=h100.peak_bf16_flop_per_s, mfu=mfu
            )
            / units.DAY,
        },
    )


@check
def o45() -> Check:
    state = training.training_state_bytes_per_param()
    optimizer_bytes = state["master_weights"] + state["optimizer_states"]
    stage1_bytes = parallelism.zero_bytes_per_param(1, 64)
    return Check(
        value=(stage1_bytes - state["weights"] - state["gradients"]) / optimizer_bytes,
        numbers={
            "stage0_bytes": parallelism.zero_bytes_per_param(0, 64),
            "optimizer_bytes": optimizer_bytes,
            "stage1_bytes": stage1_bytes,
            "stage3_bytes": parallelism.zero_bytes_per_param(3, 64),
        },
    )
