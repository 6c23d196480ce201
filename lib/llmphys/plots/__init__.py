"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style       palette, rcParams, formatters (shared)
    hardware     plot_roofline, plot_ridge_points
    architecture plot_kv_cache_by_variant, plot_decode_ceilings, plot_attention_vs_weights,
                 plot_router_balance
"""

from ._style import PALETTE, STYLE, series_styles, si_formatter, style
from .architecture import (plot_attention_vs_weights, plot_decode_ceilings,
                           plot_kv_cache_by_variant, plot_router_balance)
from .hardware import plot_ridge_points, plot_roofline

__all__ = ["PALETTE", "STYLE", "series_styles", "si_formatter", "style",
           "plot_ridge_points", "plot_roofline",
           "plot_attention_vs_weights", "plot_decode_ceilings", "plot_kv_cache_by_variant",
           "plot_router_balance"]
