"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style        palette, rcParams, formatters (shared)
    hardware      plot_roofline, plot_ridge_points
    ridge_trend   plot_ridge_generations
    waves         plot_wave_efficiency
    limits        plot_ceilings, plot_power_clock
    init_scale    plot_init_scales
    mup           plot_lr_transfer
    offload       plot_offload_tiers, plot_reasoning_cost
    architecture  plot_kv_cache_by_variant, plot_decode_ceilings, plot_attention_vs_weights,
                  plot_router_balance, plot_rope_scaling, plot_norm_placement
    architecture_depth  plot_kv_memory, plot_moe_drops, plot_mixer_costs, plot_block_savings,
                  plot_nonmatmul_time
    data          plot_funnel, plot_s_curve, plot_decontam_sweep, plot_fertility, plot_mixture,
                  plot_collapse, plot_vocab_tradeoff
    data_filters  plot_filter_pr, plot_threshold_sweep, plot_dedup_cost, plot_bloom_fpr
    data_depth    plot_mixture_search, plot_tokenizer_comparison
    economics     plot_decode_cost_latency, plot_schedule_latency, plot_kv_restore,
                  plot_lifetime_split
    decoding      plot_decoding_tradeoff
    foundations   plot_loss_curves, plot_residual_stream, plot_code_lengths, plot_schedules,
                  plot_step_scan, plot_zero_stages
    memory_wall   plot_growth_trends, plot_measured_roofline, plot_scaling_error, plot_comm_share,
                  plot_goodput
    claims        plot_claim_ratios
    sampling      plot_best_of_n
    predict       plot_predicted_vs_measured, plot_serving_predicted_vs_measured,
                  plot_latency_under_load, plot_out_of_source_errors, plot_gemm_efficiency
    plan          plot_layout_search
    scaling       plot_isoflop_curves, plot_fit_residuals, plot_inference_optimal, plot_epoch_value,
                  plot_emergence, plot_scaling_lab, plot_batch_tradeoff
    scaling_depth plot_batch_vs_compute, plot_downstream_fit, plot_moe_breakeven

Home: chapters/hardware_tour.ipynb.
"""

import importlib

# name -> submodule. Nothing is imported until a name is used (PEP 562), so
# `from llmphys import plots` costs no matplotlib or scipy import in a kernel that never plots.
_WHERE = {
    "_style": ("PALETTE", "STYLE", "series_styles", "si_formatter", "style"),
    "hardware": ("plot_roofline", "plot_ridge_points"),
    "ridge_trend": ("plot_ridge_generations",),
    "waves": ("plot_wave_efficiency",),
    "limits": ("plot_ceilings", "plot_power_clock"),
    "init_scale": ("plot_init_scales",),
    "mup": ("plot_lr_transfer",),
    "offload": ("plot_offload_tiers", "plot_reasoning_cost"),
    "architecture": (
        "plot_kv_cache_by_variant",
        "plot_decode_ceilings",
        "plot_attention_vs_weights",
        "plot_router_balance",
        "plot_rope_scaling",
        "plot_norm_placement",
    ),
    "architecture_depth": (
        "plot_kv_memory",
        "plot_moe_drops",
        "plot_mixer_costs",
        "plot_block_savings",
        "plot_nonmatmul_time",
    ),
    "data": (
        "plot_funnel",
        "plot_s_curve",
        "plot_decontam_sweep",
        "plot_fertility",
        "plot_mixture",
        "plot_collapse",
        "plot_vocab_tradeoff",
    ),
    "economics": (
        "plot_decode_cost_latency",
        "plot_schedule_latency",
        "plot_kv_restore",
        "plot_lifetime_split",
    ),
    "data_filters": ("plot_filter_pr", "plot_threshold_sweep", "plot_dedup_cost", "plot_bloom_fpr"),
    "data_depth": ("plot_mixture_search", "plot_tokenizer_comparison"),
    "claims": ("plot_claim_ratios",),
    "sampling": ("plot_best_of_n",),
    "predict": (
        "plot_predicted_vs_measured",
        "plot_serving_predicted_vs_measured",
        "plot_latency_under_load",
        "plot_out_of_source_errors",
        "plot_gemm_efficiency",
    ),
    "plan": ("plot_layout_search",),
    "decoding": ("plot_decoding_tradeoff",),
    "foundations": (
        "plot_loss_curves",
        "plot_residual_stream",
        "plot_code_lengths",
        "plot_schedules",
        "plot_step_scan",
        "plot_zero_stages",
    ),
    "memory_wall": (
        "plot_growth_trends",
        "plot_measured_roofline",
        "plot_scaling_error",
        "plot_comm_share",
        "plot_goodput",
    ),
    "scaling": (
        "plot_isoflop_curves",
        "plot_fit_residuals",
        "plot_inference_optimal",
        "plot_epoch_value",
        "plot_emergence",
        "plot_scaling_lab",
        "plot_batch_tradeoff",
    ),
    "scaling_depth": ("plot_batch_vs_compute", "plot_downstream_fit", "plot_moe_breakeven"),
}
_MODULE_OF = {name: mod for mod, names in _WHERE.items() for name in names}


def __getattr__(name: str):
    if name in _WHERE:  # a submodule, e.g. plots.hardware
        return importlib.import_module(f".{name}", __name__)
    mod = _MODULE_OF.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "PALETTE",
    "STYLE",
    "plot_attention_vs_weights",
    "plot_batch_tradeoff",
    "plot_batch_vs_compute",
    "plot_best_of_n",
    "plot_block_savings",
    "plot_bloom_fpr",
    "plot_claim_ratios",
    "plot_code_lengths",
    "plot_collapse",
    "plot_comm_share",
    "plot_decode_ceilings",
    "plot_decode_cost_latency",
    "plot_decontam_sweep",
    "plot_downstream_fit",
    "plot_emergence",
    "plot_epoch_value",
    "plot_fertility",
    "plot_fit_residuals",
    "plot_funnel",
    "plot_goodput",
    "plot_growth_trends",
    "plot_inference_optimal",
    "plot_isoflop_curves",
    "plot_kv_cache_by_variant",
    "plot_kv_memory",
    "plot_kv_restore",
    "plot_lifetime_split",
    "plot_loss_curves",
    "plot_lr_transfer",
    "plot_measured_roofline",
    "plot_mixer_costs",
    "plot_mixture",
    "plot_mixture_search",
    "plot_moe_breakeven",
    "plot_moe_drops",
    "plot_nonmatmul_time",
    "plot_norm_placement",
    "plot_offload_tiers",
    "plot_predicted_vs_measured",
    "plot_reasoning_cost",
    "plot_residual_stream",
    "plot_ridge_points",
    "plot_roofline",
    "plot_rope_scaling",
    "plot_router_balance",
    "plot_s_curve",
    "plot_scaling_error",
    "plot_scaling_lab",
    "plot_schedule_latency",
    "plot_schedules",
    "plot_serving_predicted_vs_measured",
    "plot_tokenizer_comparison",
    "plot_vocab_tradeoff",
    "series_styles",
    "si_formatter",
    "style",
]
