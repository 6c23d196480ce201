"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style       palette, rcParams, formatters (shared)
    hardware     plot_roofline, plot_ridge_points
    scaling      plot_isoflop_curves, plot_fit_residuals, plot_inference_optimal,
                 plot_epoch_value, plot_emergence, plot_scaling_lab, plot_batch_tradeoff
"""

from ._style import PALETTE, STYLE, series_styles, si_formatter, style
from .hardware import plot_ridge_points, plot_roofline
from .scaling import (plot_batch_tradeoff, plot_emergence, plot_epoch_value, plot_fit_residuals,
                      plot_inference_optimal, plot_isoflop_curves, plot_scaling_lab)

__all__ = ["PALETTE", "STYLE", "series_styles", "si_formatter", "style",
           "plot_ridge_points", "plot_roofline",
           "plot_batch_tradeoff", "plot_emergence", "plot_epoch_value", "plot_fit_residuals",
           "plot_inference_optimal", "plot_isoflop_curves", "plot_scaling_lab"]
