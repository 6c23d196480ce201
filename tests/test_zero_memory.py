"""ZeRO stages lined up for one model: the state follows ZeRO's fig. 1 formulas, activations do
not shard, and stage 3 pays 1.5x the data-parallel traffic."""

import pytest

from llmphys import accounting, parallelism, specs, zero_memory

L8 = specs.model("llama3_8b")


def _rows(**kw):
    args = dict(n_dp=64, seq_len=8192, micro_batch=1) | kw
    return zero_memory.zero_stage_memory(L8, **args)


def test_state_follows_zero_fig1_closed_forms():
    n, nd = accounting.n_params(L8), 64
    expected = [16 * n, (4 + 12 / nd) * n, (2 + 14 / nd) * n, 16 / nd * n]  # ZeRO fig. 1, K = 12
    for row, e in zip(_rows(), expected, strict=True):
        assert row["state_bytes"] == pytest.approx(e, rel=1e-12)


def test_zero_paper_7_5b_on_64_gpus():
    # Rajbhandari et al. 2020, fig. 1: 120, 31.4, 16.6 and 1.9 GB for psi = 7.5B, N_d = 64.
    got = [parallelism.zero_bytes_per_param(s, 64) * 7.5e9 / 1e9 for s in zero_memory.STAGES]
    assert got == pytest.approx([120, 31.4, 16.6, 1.9], abs=0.05)


def test_activations_are_the_same_at_every_stage_and_shrink_with_recompute():
    rows = _rows()
    assert len({r["activation_bytes"] for r in rows}) == 1
    per_layer = parallelism.activation_bytes_per_layer(
        seq_len=8192, micro_batch=1, d_model=4096, n_heads=32, recompute="selective",
        n_kv_heads=8, d_ff=14336, gated_mlp=True, dropout=False)
    assert rows[0]["activation_bytes"] == pytest.approx(32 * per_layer, rel=1e-12)
    full = _rows(recompute="full")[0]["activation_bytes"]
    assert full == pytest.approx(32 * 2 * 8192 * 4096, rel=1e-12)  # 2 s b h per layer
    assert full < rows[0]["activation_bytes"] < _rows(recompute="none")[0]["activation_bytes"]


def test_stage_3_sends_one_and_a_half_all_reduces():
    rows = _rows()
    assert rows[3]["dp_traffic_bytes"] == pytest.approx(1.5 * rows[0]["dp_traffic_bytes"])
    assert rows[0]["dp_traffic_bytes"] == pytest.approx(4 * accounting.n_params(L8))


def test_totals_add_up_and_tp_divides_state():
    for r in _rows(tp=2):
        assert r["total_bytes"] == pytest.approx(r["state_bytes"] + r["activation_bytes"])
    assert _rows(tp=2)[3]["state_bytes"] == pytest.approx(_rows()[3]["state_bytes"] / 2)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="recompute"):
        _rows(recompute="some")
    with pytest.raises(ValueError, match="n_dp"):
        _rows(n_dp=0)
