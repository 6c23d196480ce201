"""mup: the muP rules, their equivalence to the standard parametrisation at the base width, and
the stored sweep of data/mup_sweep.toml, a slice of which is re-run here."""

import math

import numpy as np
import pytest

from llmphys import init_scale, mup

SWEEP = mup.load_sweep()
LRS, WIDTHS, BITS = SWEEP["lrs"], SWEEP["widths"], SWEEP["bits"]


def test_at_the_base_width_both_parametrisations_are_the_same_model():
    # m = 1: every multiplier is 1 and the attention scale is 1/sqrt(d_head) under both.
    for role in mup.ROLES:
        assert mup.lr_multiplier("mup", role, 1.0) == mup.lr_multiplier("sp", role, 1.0) == 1.0
    assert mup.attention_scale("mup", 16, 16) == mup.attention_scale("sp", 16, 16) == 0.25
    # so the stored sweep's base-width rows agree exactly (same seeds, same arithmetic)
    assert np.array_equal(BITS["sp"][0], BITS["mup"][0])


def test_mup_attention_scale_falls_as_one_over_d_head():
    # Yang et al. 2022 sec. 4: 1/d instead of 1/sqrt(d); doubling d_head halves the scale.
    a, b = mup.attention_scale("mup", 32, 16), mup.attention_scale("mup", 64, 16)
    assert a / b == pytest.approx(2.0, rel=1e-15)


def test_the_wq_multiplier_turns_tinylm_attention_into_the_mup_scale():
    # tinylm divides q k^T by sqrt(d_head); a multiplier a on W_q makes the scale a / sqrt(d_head).
    m = mup.forward_multipliers("mup", d_model=128, base_d_model=32, n_heads=2, n_layers=1)
    assert m["l0.wq"] / math.sqrt(64) == pytest.approx(mup.attention_scale("mup", 64, 16))


def test_multiplied_gradients_match_finite_differences_of_the_multiplied_model():
    # The chain rule dL/dW = a dL/dW_eff, checked by a central difference on one entry.
    rng = np.random.default_rng(0)
    p = init_scale.init_params(  # the sweep's 1/sqrt(fan-in) initialisation
        "fan_in", vocab_size=8, context_tokens=4, d_model=8, n_heads=2, n_layers=1, d_ff=16, rng=rng
    )
    mults = mup.forward_multipliers("mup", d_model=8, base_d_model=4, n_heads=2, n_layers=1)
    x = rng.integers(0, 8, (3, 5))
    _, g = mup.loss_and_grads(p, mults, x[:, :-1], x[:, 1:])
    for name in ("unembed", "l0.wq"):
        ij = np.unravel_index(np.argmax(np.abs(g[name])), g[name].shape)  # the largest entry
        h, q = 1e-5, {k: v.copy() for k, v in p.items()}
        q[name][ij] += h
        up = mup.loss_and_grads(q, mults, x[:, :-1], x[:, 1:])[0]
        q[name][ij] -= 2 * h
        down = mup.loss_and_grads(q, mults, x[:, :-1], x[:, 1:])[0]
        # central difference: truncation O(h^2) ~1e-10, round-off ~eps L / h ~ 4e-11, against
        # largest entries above 1e-3 here: agreement to 1e-5 relative
        assert abs(g[name][ij]) > 1e-3
        assert g[name][ij] == pytest.approx((up - down) / (2 * h), rel=1e-5)


def test_stored_sweep_best_rate_falls_with_width_under_sp_but_not_under_mup():
    best = {k: mup.best_lr(LRS, b) for k, b in BITS.items()}
    # SP: the 8x wider model's best rate is at least 4x smaller (the 1/width argument: 8x).
    assert best["sp"][-1] <= best["sp"][0] / 4
    assert all(np.diff(best["sp"]) <= 0)
    # muP: every width's best rate within one grid step (a factor of 2) of every other.
    assert best["mup"].max() / best["mup"].min() <= 2.0


def test_a_slice_of_the_stored_sweep_reproduces():
    # Width 64 (m = 2), one rate per parametrisation: 2 of the 72 runs, about 1.5 CPU-s. The
    # stored numbers put SP's 2^-8 at 2.217 and muP's 2^-7 at 2.101 bits; a run that misses
    # either by the 5e-4 tolerance means the sweep's code or data has changed.
    # Float64 and fixed seeds: the runs repeat to round-off; a different BLAS changes the sums'
    # order, which 100 Adam steps amplify to ~1e-6 bits, far inside the 5e-4 tolerance (the
    # file stores 5 decimals).
    corpus, windows = mup.sweep_data()
    for kind, j in (("sp", 3), ("mup", 4)):  # each one's best rate at width 64
        got = mup.train_final_bits(
            kind,
            d_model=64,
            base_d_model=32,
            lr=float(LRS[j]),
            corpus=corpus,
            eval_windows=windows,
            **mup.sweep_train_kwargs(),
        )
        assert got == pytest.approx(BITS[kind][1, j], abs=5e-4), (kind, j)


def test_best_lr_skips_diverged_runs():
    assert mup.best_lr([0.1, 1.0], np.array([[2.0, math.inf]])).tolist() == [0.1]


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(kind="adam", role="hidden", width_mult=2.0), "kind"),
        (dict(kind="mup", role="bias", width_mult=2.0), "role"),
        (dict(kind="mup", role="hidden", width_mult=0.0), "width_mult"),
    ],
)
def test_lr_multiplier_rejects_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        mup.lr_multiplier(kw["kind"], kw["role"], kw["width_mult"])


def test_role_of_rejects_an_unknown_parameter():
    with pytest.raises(ValueError, match="name"):
        mup.role_of("l0.gate")
