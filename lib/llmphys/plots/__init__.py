"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style       palette, rcParams, formatters (shared)
    hardware     plot_roofline, plot_ridge_points
    data         plot_funnel, plot_s_curve, plot_decontam_sweep, plot_fertility,
                 plot_mixture, plot_collapse
"""

from ._style import PALETTE, STYLE, series_styles, si_formatter, style
from .data import (plot_collapse, plot_decontam_sweep, plot_fertility, plot_funnel,
                   plot_mixture, plot_s_curve)
from .hardware import plot_ridge_points, plot_roofline

__all__ = ["PALETTE", "STYLE", "series_styles", "si_formatter", "style",
           "plot_ridge_points", "plot_roofline", "plot_collapse", "plot_decontam_sweep",
           "plot_fertility", "plot_funnel", "plot_mixture", "plot_s_curve"]
