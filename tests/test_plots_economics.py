"""Economics figures return labelled Figures with log axes where values span decades."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from plot_checks import assert_units_in_labels

from llmphys import batching, plots, specs


def test_decode_cost_latency_draws_two_log_log_panels_with_one_line_per_case():
    ms = [specs.model("llama3_70b"), specs.model("deepseek_v3")]
    accs = [specs.accelerator("h100_sxm"), specs.accelerator("b200")]
    fig = plots.plot_decode_cost_latency(ms, accs, usd_per_chip_hour={"h100_sxm": 3.0, "b200": 6.0},
                                         weight_dtypes={"llama3_70b": "bf16", "deepseek_v3": "fp8"},
                                         context_tokens=1024, batch_sizes=2.0 ** np.arange(15))
    assert len(fig.axes) == 2 and all(ax.get_yscale() == "log" for ax in fig.axes)
    assert len(fig.legends[0].get_texts()) == 4
    assert_units_in_labels(fig)
    plt.close(fig)


def test_schedule_latency_histogram(rng):
    r = batching.simulate_schedule(rng, rate_per_s=1000.0, interval_s=0.02, horizon_s=1.0)
    fig = plots.plot_schedule_latency({"sim": r["latency_s"]}, interval_s=0.02)
    assert_units_in_labels(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="runs"):
        plots.plot_schedule_latency({}, interval_s=0.02)


def test_kv_restore_and_lifetime_split_are_log_log():
    fig = plots.plot_kv_restore(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
                                context_tokens=np.array([1024, 8192]), tiers={"DRAM": (63e9, 8)},
                                n_chips=8)
    fig2 = plots.plot_lifetime_split([2.0], inference_tokens=np.logspace(11, 14, 4))
    for f in (fig, fig2):
        assert f.axes[0].get_xscale() == "log" and f.axes[0].get_yscale() == "log"
        assert_units_in_labels(f)
        plt.close(f)
