"""The claims figure: one point per stated figure, at the right ratio, in the book's style."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from plot_checks import assert_units_in_labels

from llmphys import claims, plots


def test_each_stated_figure_is_one_point_at_its_ratio():
    a = claims.ledger()
    points = claims.ratio_points(a)
    assert len(points) == sum(len(x.ratios) for x in a)
    m01 = next(p for p in points if p[1] == "M01")
    assert m01[2] == pytest.approx(295.3 / 296, rel=2e-4)   # 989.4 TFLOP/s / 3.35 TB/s vs 296
    assert any(p[3] == "by construction" for p in points)
    fig = plots.plot_claim_ratios(points)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    n = sum(len(c.get_offsets()) for c in ax.collections if len(c.get_offsets()))
    assert n == len(points)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_disputed_outliers_are_labelled_and_bad_input_is_refused():
    pts = [("M", "M01", 1.0, "exact"), ("M", "M02", 3.0, "disputed"),
           ("M", "M02", 0.1, "disputed")]
    fig = plots.plot_claim_ratios(pts)
    texts = fig.axes[0].texts
    assert [t.get_text() for t in texts] == ["M02"] and texts[0].xy[0] == 0.1  # the worst point
    plt.close(fig)
    with pytest.raises(ValueError, match="verdict"):
        plots.plot_claim_ratios([("M", "M01", 1.0, "fine")])
    with pytest.raises(ValueError, match="points"):
        plots.plot_claim_ratios([])
