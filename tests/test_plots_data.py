import matplotlib.pyplot as plt
import numpy as np

from llmphys import plots
from llmphys.pipeline import collapse, mixture
from plot_checks import assert_units_in_labels



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
    ]
    for fig in figs:
        assert_units_in_labels(fig)
        plt.close(fig)
    assert figs[4].axes[0].get_xscale() == "log"


def test_s_curve_draws_into_a_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plots.plot_s_curve([(14, 8)], ax=b) is fig and b.lines and not a.lines
    plt.close(fig)
