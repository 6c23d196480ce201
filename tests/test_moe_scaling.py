"""Break-even effective size of a mixture of experts under a dense loss law."""

import numpy as np
import pytest

from llmphys import moe_scaling as ms
from llmphys import scaling_laws as sl

LAW = sl.parametric_law("besiroglu2024")


def test_a_full_speed_moe_needs_no_extra_effective_size_and_a_slower_one_does():
    # eta = 1: same tokens, so m = 1 matches the dense model exactly (closed form).
    assert ms.breakeven_multiplier_throughput(
        LAW, n_active=7e9, n_tokens=1.4e11, throughput_ratio=1.0) == pytest.approx(1.0, abs=1e-12)
    m = ms.breakeven_multiplier_throughput(
        LAW, n_active=7e9, n_tokens=1.4e11, throughput_ratio=np.array([0.9, 0.7, 0.5]))
    assert np.all(np.diff(m) > 0) and m[0] > 1


def test_throughput_breakeven_satisfies_the_loss_equality():
    # Independent check: plug the multiplier back into L(N, D) for both models.
    n, d, eta = 2e9, 4e10, 0.6
    m = ms.breakeven_multiplier_throughput(LAW, n_active=n, n_tokens=d, throughput_ratio=eta)
    moe = sl.loss(LAW, n_params=m * n, n_tokens=eta * d)
    dense = sl.loss(LAW, n_params=n, n_tokens=d)
    assert moe == pytest.approx(dense, rel=1e-12)


def test_memory_breakeven_satisfies_the_loss_equality_and_falls_with_sparsity():
    n_tot, c = 24e9, 1e24
    s = np.array([1.0, 2.0, 8.0, 64.0])
    f = ms.breakeven_fraction_memory(LAW, n_total=n_tot, sparsity=s, train_flop=c)
    assert f[0] == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(f) < 0) and np.all(f > 0)
    d_dense = c / (6 * n_tot)
    for k, fk in zip(s, f, strict=True):
        moe = sl.loss(LAW, n_params=fk * n_tot, n_tokens=k * d_dense)
        assert moe == pytest.approx(sl.loss(LAW, n_params=n_tot, n_tokens=d_dense), rel=1e-12)


def test_the_less_memory_binds_the_less_of_its_size_an_moe_must_use():
    # At 1e24 FLOP the compute-optimal dense model has ~96B parameters. Holding a quarter of
    # that, the dense competitor is overtrained and the MoE must turn more of its size into
    # effective size (61% at s = 8) than holding the full 96B (31%): the closed form, pinned.
    f24 = ms.breakeven_fraction_memory(LAW, n_total=24e9, sparsity=8.0, train_flop=1e24)
    f96 = ms.breakeven_fraction_memory(LAW, n_total=96e9, sparsity=8.0, train_flop=1e24)
    assert f96 < f24 < 1


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="throughput_ratio"):
        ms.breakeven_multiplier_throughput(LAW, n_active=1e9, n_tokens=1e10, throughput_ratio=1.5)
    with pytest.raises(ValueError, match="sparsity"):
        ms.breakeven_fraction_memory(LAW, n_total=1e9, sparsity=0.5, train_flop=1e20)


def test_an_moe_of_compute_optimal_active_size_breaks_even_at_no_extra_size():
    # If N_act and D are the compute-optimal pair for C = 6 N_act D, the MoE with m = 1 is the
    # compute-optimal dense model itself (closed form, Hoffmann et al. eq. 4).
    opt = sl.compute_optimal(LAW, train_flop=1e23)
    m = ms.breakeven_multiplier_compute(LAW, n_active=opt["n_params"], n_tokens=opt["n_tokens"])
    assert m == pytest.approx(1.0, rel=1e-9)
    # Overtrained active size (DeepSeek-V3: 37B on 14.8T): it needs m > 1 to catch up.
    assert ms.breakeven_multiplier_compute(LAW, n_active=37e9, n_tokens=14.8e12) > 1.5
