"""Every figure in the book, in one style.

Each ``plot_*`` function takes specs, arrays and labels, accepts an optional
``ax`` so a chapter can compose panels, computes nothing physical itself (it
calls the model modules) and returns the ``Figure``. Every axis names its unit;
quantities that span decades get log axes. Chapters call ``plots.plot_<name>``;
the functions live in one submodule per topic:

    _style       palette, rcParams, formatters (shared)
    hardware     plot_roofline, plot_ridge_points
    foundations  plot_loss_curves, plot_residual_stream, plot_code_lengths
"""

from ._style import PALETTE, STYLE, series_styles, si_formatter, style
from .foundations import plot_code_lengths, plot_loss_curves, plot_residual_stream
from .hardware import plot_ridge_points, plot_roofline

__all__ = ["PALETTE", "STYLE", "series_styles", "si_formatter", "style",
           "plot_ridge_points", "plot_roofline",
           "plot_code_lengths", "plot_loss_curves", "plot_residual_stream"]
