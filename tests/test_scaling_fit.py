import numpy as np
import pytest

from llmphys import scaling_fit as sf
from llmphys import scaling_laws as sl

RUNS = sf.load_chinchilla_runs()
PUBLISHED = sl.parametric_law("besiroglu2024")
# Bootstrap standard errors printed by the replication (notebook output, 4,000 resamples).
PUBLISHED_SE = {"E": 0.026, "A": 124.5, "B": 1293.3, "alpha": 0.0154, "beta": 0.0206}


def test_the_extracted_data_has_245_runs_and_240_after_dropping_outliers():
    assert sf.load_chinchilla_runs(drop_highest=0)["loss"].size == 245
    assert RUNS["loss"].size == 240
    # Tokens are D = C / (6N), as the replication defines them.
    assert np.allclose(6 * RUNS["n_params"] * RUNS["n_tokens"], RUNS["train_flop"])


def test_fitter_recovers_known_parameters_from_synthetic_data(rng):
    # Losses from a known law with 0.1% log-normal noise on the Chinchilla (N, D) grid. At
    # this noise E and the exponents come back to a few thousandths and A, B to ~10%, because
    # A trades off against alpha (and B against beta). At the real data's ~0.3% scatter A and
    # B move by tens of percent between seeds: the replication's wide errors are not a bug.
    truth = sl.ParametricLaw(key="t", name="t", E=1.8, A=450.0, B=1800.0, alpha=0.35, beta=0.36)
    clean = sl.loss(truth, n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"])
    noisy = clean * np.exp(0.001 * rng.standard_normal(clean.size))
    fit = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"], loss=noisy)
    assert pytest.approx(1.8, abs=0.005) == fit.E
    assert fit.alpha == pytest.approx(0.35, abs=0.005)
    assert fit.beta == pytest.approx(0.36, abs=0.005)
    assert pytest.approx(450.0, rel=0.1) == fit.A and pytest.approx(1800.0, rel=0.1) == fit.B


def test_fitter_is_exact_on_noiseless_data():
    truth = sl.parametric_law("hoffmann2022")
    clean = sl.loss(truth, n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"])
    fit = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"], loss=clean,
                                inits=[np.log(300), np.log(300), 0.4, 0.3, 0.3])
    for name in sf.PARAM_NAMES:
        assert getattr(fit, name) == pytest.approx(getattr(truth, name), rel=1e-3), name


def test_refit_of_the_real_data_lands_on_the_replications_estimates():
    # Tolerance: a quarter of the replication's own bootstrap standard error for each
    # parameter. The pure Huber objective (ours, and the replication's first pass, which
    # printed A = 477.8, B = 2143.9) differs slightly from their final likelihood fit.
    fit = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"],
                                loss=RUNS["loss"])
    for name, se in PUBLISHED_SE.items():
        assert abs(getattr(fit, name) - getattr(PUBLISHED, name)) < 0.25 * se, name


def test_one_start_is_not_enough_on_this_data():
    # From (a, b, e) = (5, 10, -1) L-BFGS stops in a worse local minimum: beta ~ 1.3, E ~ 1.90.
    # ((0, 10, 0.5) used to, but only because ftol 1e-15 stopped it early on a slope.)
    local = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"],
                                  loss=RUNS["loss"], inits=[5.0, 10.0, -1.0, 0.5, 0.2])
    assert local.beta > 0.9


def test_bootstrap_spread_is_close_to_the_published_standard_errors():
    # 1,000 resamples, as in the chapter (the replication used 4,000): a standard deviation
    # from n draws has relative error ~ 1/sqrt(2n) ~ 2% for a normal spread, more for B, whose
    # resampled values are skewed (B trades off against beta). Allow 25% either way: our
    # spread of B is ~15% above theirs (different resamples of a skewed distribution), the
    # others are within 6%.
    fit = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"],
                                loss=RUNS["loss"])
    boot = sf.bootstrap_laws(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"],
                             loss=RUNS["loss"], n_boot=1_000, rng=np.random.default_rng(1),
                             start=fit)
    sd = boot.std(axis=0, ddof=1)
    for (name, se), s in zip(PUBLISHED_SE.items(), (sd[0], sd[1], sd[2], sd[3], sd[4]),
                             strict=True):
        assert 0.8 * se < s < 1.25 * se, name


def test_huber_is_quadratic_inside_and_linear_outside():
    r = np.array([0.0, 0.5e-3, 1e-3, 1.0])
    assert sf.huber(r, 1e-3).tolist() == pytest.approx([0.0, 1.25e-7, 5e-7, 1e-3 * (1 - 5e-4)])


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="n_params"):
        sf.fit_parametric_law(n_params=[1, 2], n_tokens=[1, 2], loss=[1, 2])
    with pytest.raises(ValueError, match="kind"):
        sf.initial_grid("huge")
    with pytest.raises(ValueError, match="level"):
        sf.percentile_interval(np.ones((3, 2)), level=1.5)


def test_batched_bootstrap_reproduces_scipy_one_resample_at_a_time():
    # Same draws, same objective, same start: the batched BFGS must land where scipy's L-BFGS
    # does. 1e-6 relative: both stop where float precision ends the descent (they agree to
    # ~2e-7 here), far inside the bootstrap spread (several percent).
    fit = sf.fit_parametric_law(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"],
                                loss=RUNS["loss"])
    kw = dict(n_params=RUNS["n_params"], n_tokens=RUNS["n_tokens"], loss=RUNS["loss"],
              n_boot=12, start=fit)
    batched = sf.bootstrap_laws(**kw, rng=np.random.default_rng(5))
    one_by_one = sf.bootstrap_laws_scipy(**kw, rng=np.random.default_rng(5))
    assert batched == pytest.approx(one_by_one, rel=1e-6)


def test_batched_bfgs_finds_the_minimum_of_independent_quadratics():
    # f_b(x) = (x - c_b)' Q (x - c_b): every problem's minimum is its own c_b.
    q = np.diag([1.0, 10.0, 100.0])
    centres = np.arange(12.0).reshape(4, 3)

    def fun(x, rows=None):
        c = centres if rows is None else centres[rows]
        d = x - c
        return np.einsum("bi,ij,bj->b", d, q, d), 2 * d @ q

    x = sf._bfgs_batch(np.zeros((4, 3)), fun, gtol=1e-9)
    assert x == pytest.approx(centres, abs=1e-8)
