"""The mixture-search and tokenizer-comparison figures: labelled axes with units, the panels
they promise, and the data they were given."""

import matplotlib.pyplot as plt
import numpy as np
from plot_checks import assert_units_in_labels

from llmphys import plots


def test_mixture_search_figure_has_a_scatter_and_one_bar_per_domain_and_mixture():
    pred = np.array([3.0, 3.2, 3.5, 3.1])
    fig = plots.plot_mixture_search(
        pred, pred + 0.01, np.array([True, True, False, False]), ["en", "de", "fr"],
        {"uniform": np.full(3, 1 / 3), "chosen": np.array([0.5, 0.3, 0.2])},
        spread={"chosen": np.array([0.01, 0.02, 0.01])})
    assert_units_in_labels(fig)
    left, right = fig.axes
    assert len(right.patches) == 6  # 3 domains x 2 mixtures
    # the measured points are what was passed in, fitted and held out apart
    np.testing.assert_allclose(left.lines[0].get_ydata(), [3.01, 3.21])
    np.testing.assert_allclose(left.lines[1].get_ydata(), [3.51, 3.11])
    plt.close(fig)


def test_tokenizer_figure_has_a_log_vocabulary_axis_and_grouped_bars():
    fig = plots.plot_tokenizer_comparison(
        np.array([512, 768, 2304]),
        {"BPE": np.array([0.5, 0.43, 0.32]), "unigram": np.array([0.62, 0.46, 0.32])},
        {"BPE": {"tokens per byte": 1.0, "bytes lost": 0.0},
         "unigram, <unk>": {"tokens per byte": 0.56, "bytes lost": 0.88}})
    assert_units_in_labels(fig)
    left, right = fig.axes
    assert left.get_xscale() == "log" and len(left.lines) == 2
    assert sorted(p.get_height() for p in right.patches) == [0.0, 0.56, 0.88, 1.0]
    plt.close(fig)
