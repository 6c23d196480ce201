"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style        palette, rcParams, formatters (shared)
    hardware      plot_roofline, plot_ridge_points
    architecture  plot_kv_cache_by_variant, plot_decode_ceilings, plot_attention_vs_weights, plot_router_balance,
                  plot_rope_scaling
    data          plot_funnel, plot_s_curve, plot_decontam_sweep, plot_fertility, plot_mixture, plot_collapse
    economics     plot_decode_cost_latency, plot_schedule_latency, plot_kv_restore, plot_lifetime_split
    foundations   plot_loss_curves, plot_residual_stream, plot_code_lengths, plot_schedules
    memory_wall   plot_growth_trends, plot_measured_roofline, plot_scaling_error, plot_comm_share, plot_goodput
    claims        plot_claim_ratios
    predict       plot_predicted_vs_measured
    scaling       plot_isoflop_curves, plot_fit_residuals, plot_inference_optimal, plot_epoch_value, plot_emergence, plot_scaling_lab, plot_batch_tradeoff
"""

from ._style import PALETTE, STYLE, series_styles, si_formatter, style
from .hardware import plot_roofline, plot_ridge_points
from .architecture import (
    plot_kv_cache_by_variant, plot_decode_ceilings, plot_attention_vs_weights,
    plot_router_balance, plot_rope_scaling,
)
from .data import (
    plot_funnel, plot_s_curve, plot_decontam_sweep, plot_fertility, plot_mixture,
    plot_collapse,
)
from .economics import (
    plot_decode_cost_latency, plot_schedule_latency, plot_kv_restore,
    plot_lifetime_split,
)
from .claims import plot_claim_ratios
from .predict import plot_predicted_vs_measured
from .foundations import (
    plot_loss_curves, plot_residual_stream, plot_code_lengths, plot_schedules,
)
from .memory_wall import (
    plot_growth_trends, plot_measured_roofline, plot_scaling_error, plot_comm_share,
    plot_goodput,
)
from .scaling import (
    plot_isoflop_curves, plot_fit_residuals, plot_inference_optimal,
    plot_epoch_value, plot_emergence, plot_scaling_lab, plot_batch_tradeoff,
)

__all__ = [
    "PALETTE", "STYLE", "series_styles", "si_formatter", "style", "plot_roofline",
    "plot_ridge_points", "plot_kv_cache_by_variant", "plot_decode_ceilings",
    "plot_attention_vs_weights", "plot_router_balance", "plot_rope_scaling", "plot_funnel",
    "plot_s_curve", "plot_decontam_sweep", "plot_fertility", "plot_mixture",
    "plot_collapse", "plot_decode_cost_latency", "plot_schedule_latency",
    "plot_kv_restore", "plot_lifetime_split", "plot_loss_curves",
    "plot_residual_stream", "plot_code_lengths", "plot_schedules", "plot_growth_trends",
    "plot_measured_roofline", "plot_scaling_error", "plot_comm_share",
    "plot_goodput", "plot_isoflop_curves", "plot_fit_residuals",
    "plot_inference_optimal", "plot_epoch_value", "plot_emergence",
    "plot_scaling_lab", "plot_batch_tradeoff", "plot_claim_ratios",
    "plot_predicted_vs_measured",
]
