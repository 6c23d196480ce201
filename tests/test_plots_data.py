import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import plots
from llmphys.pipeline import mixture


def test_every_data_figure_returns_a_labelled_figure():
    w = {d: v[0] for d, v in mixture.LLAMA1_MIXTURE.items()}
    e = {d: v[1] for d, v in mixture.LLAMA1_MIXTURE.items()}
    figs = [
        plots.plot_funnel(["a", "b"], {"clean": [3, 2], "spam": [1, 0]}),
        plots.plot_s_curve([(14, 8), (20, 5)], jaccard=np.linspace(0, 1, 50),
                           caught=np.linspace(0, 1, 50) > 0.7),
        plots.plot_decontam_sweep({"verbatim": {3: 1.0, 13: 1.0}, "clean": {3: 0.1, 13: 0.0}}),
        plots.plot_fertility({"ours": {"en": 1.2, "hi": 4.0}, "hf": {"en": 1.2, "hi": 4.1}}),
        plots.plot_mixture(w, e, total_tokens=mixture.LLAMA1_TOTAL_TOKENS),
        plots.plot_collapse({"replace": np.arange(5.0)}, ylabel="types (count)"),
        plots.plot_vocab_tradeoff(np.array([256, 512, 1024]), {"all": np.array([1, 0.5, 0.4])},
                                  {"small": np.array([1.0, 0.7, 0.8])}),
    ]
    for fig in figs:
        assert_units_in_labels(fig)
        plt.close(fig)
    assert figs[4].axes[0].get_xscale() == "log"


def test_s_curve_draws_into_a_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plots.plot_s_curve([(14, 8)], ax=b) is fig and b.lines and not a.lines
    plt.close(fig)


def test_every_data_filter_figure_returns_a_labelled_figure():
    figs = [
        plots.plot_filter_pr(np.array([0.5, 0.8, 1.0]), np.array([1.0, 0.6, 0.1]),
                             {"rules": (0.48, 0.98)}, iso_f1=0.82),
        plots.plot_threshold_sweep([1, 2, 3], {"false positives": [0.4, 0.1, 0.02]}),
        plots.plot_dedup_cost(np.array([1e4, 1e5]), {"MinHash": np.array([0.01, 0.1])},
                              {"MinHash": 1.0}),
        plots.plot_bloom_fpr(np.array([2.0, 10.0]), {"k = 7": np.array([0.5, 0.008])},
                             measured_bits=np.array([10.0]), measured_rate=np.array([0.008]),
                             measured_se=np.array([0.001])),
    ]
    for fig in figs:
        assert_units_in_labels(fig)
        plt.close(fig)
    assert figs[2].axes[0].get_xscale() == "log" and figs[2].axes[0].get_yscale() == "log"
    assert figs[3].axes[0].get_yscale() == "log"
    # the published iso-F1 curve: at recall 1, precision = F1 / (2 - F1)
    iso = figs[0].axes[0].lines[-1]
    assert iso.get_ydata()[-1] == pytest.approx(0.82 / (2 - 0.82))
