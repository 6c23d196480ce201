"""The parameter-breakdown figure of chapters/your_own_model.ipynb."""

import matplotlib.pyplot as plt
import pytest
from plot_checks import assert_units_in_labels

from llmphys import specs
from llmphys.plots import breakdown


def test_shares_sum_to_one_and_a_dense_model_has_no_idle_experts():
    s = breakdown.param_shares(specs.model("llama3_8b"))
    assert sum(s.values()) == pytest.approx(1.0, abs=1e-12)
    assert s["experts idle per token"] == 0.0
    # Llama 3 8B: 2 x 128256 x 4096 embedding parameters of 8,030,261,248 (models.toml)
    assert s["embeddings"] == pytest.approx(2 * 128256 * 4096 / 8_030_261_248, rel=1e-12)


def test_mixtral_leaves_three_quarters_of_its_experts_idle():
    s = breakdown.param_shares(specs.model("mixtral_8x7b"))
    # top-2 of 8: 6 of the 8 SwiGLU experts (3 x 4096 x 14336 each) in all 32 layers are idle,
    # of the HF total 46,702,792,704 (models.toml)
    idle = 32 * 6 * 3 * 4096 * 14336
    assert s["experts idle per token"] == pytest.approx(idle / 46_702_792_704, rel=1e-12)


def test_one_stacked_bar_per_model_filling_100_percent():
    models = [specs.model("llama3_8b"), specs.model("mixtral_8x7b")]
    fig = breakdown.plot_param_breakdown(models)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 * len(breakdown.PARTS)
    right = max(p.get_x() + p.get_width() for p in ax.patches)
    assert right == pytest.approx(100.0)
    assert_units_in_labels(fig)
    plt.close(fig)


def test_no_models_is_an_error():
    with pytest.raises(ValueError, match="models must not be empty"):
        breakdown.plot_param_breakdown([])
