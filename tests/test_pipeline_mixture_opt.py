"""RegMix-style mixture search: the closed-form optimum of the log regression, the regression's
recovery of a known optimum, the byte n-gram proxy's loss against hand counts, and a constructed
crawl in which the right domain is known."""

import numpy as np
import pytest
from scipy import stats

from llmphys.pipeline import mixture_opt as mo


def test_optimal_mixture_is_minus_beta_normalised_when_eps_vanishes():
    beta = np.array([-0.5, -0.25, -0.15, -0.1])
    w = mo.optimal_mixture(beta, eps=1e-12)
    np.testing.assert_allclose(w, -beta / -beta.sum(), atol=1e-9)  # closed form, eps -> 0


def test_optimal_mixture_satisfies_the_kkt_conditions():
    # minimise sum beta_d ln(w_d + eps) on the simplex: active domains share one multiplier
    # -beta_d / (w_d + eps) = lambda; an inactive one has -beta_d / eps <= lambda
    beta, eps = np.array([-0.9, -0.4, -0.05, -0.004, 0.3]), 0.02
    w = mo.optimal_mixture(beta, eps=eps)
    assert w.sum() == pytest.approx(1.0, abs=1e-12) and np.all(w >= 0)
    active = w > 0
    lam = -beta[active] / (w[active] + eps)
    np.testing.assert_allclose(lam, lam[0], rtol=1e-10)
    assert np.all(-beta[~active] / eps <= lam[0] + 1e-12)
    assert not active[-1] and not active[-2]  # beta > 0 hurts; -0.004 is below the water line


def test_optimal_mixture_matches_a_brute_force_grid_on_three_domains():
    beta, eps = np.array([-0.3, -0.2, -0.02]), 0.05
    g = np.linspace(0, 1, 401)
    a, b = np.meshgrid(g, g)
    ok = a + b <= 1
    grid = np.column_stack([a[ok], b[ok], 1 - a[ok] - b[ok]])
    best = grid[np.argmin(np.log(grid + eps) @ beta)]
    # the grid step is 1/400 = 0.0025; the optimum is within one step of the closed form
    np.testing.assert_allclose(mo.optimal_mixture(beta, eps=eps), best, atol=0.0025)


def test_regression_recovers_a_known_optimum_from_noisy_proxy_losses():
    # a world whose loss is exactly c + sum beta ln(w + eps), measured with noise of 0.01 bits:
    # the fitted mixture lands within 0.02 of the true one (noise / sqrt(n) over 200 proxies)
    rng = np.random.default_rng(7)
    beta, eps = np.array([-0.42, -0.21, -0.12, -0.08, -0.05]), 0.01
    w = mo.dirichlet_mixtures(200, 5, concentration=3.0, rng=rng)
    y = 3.1 + np.log(w + eps) @ beta + rng.normal(0, 0.01, size=200)
    c, b = mo.fit_log_regression(w, y, eps=eps)
    assert c == pytest.approx(3.1, abs=0.02)
    np.testing.assert_allclose(mo.optimal_mixture(b, eps=eps),
                               mo.optimal_mixture(beta, eps=eps), atol=0.02)


def test_ngram_loss_of_an_alternation_matches_the_hand_count():
    # 50 copies of "abababab": c(ab) = 200, c(ba) = 150, c(a.) = 200, c(b.) = 150 inside pieces;
    # P1(x) = (c(x) + 1/256) / (400 + 1); P(b|a) = (200 + P1(b)) / 201, P(a|b) = (150 + P1(a)) / 151
    t = np.frombuffer(b"abababab", dtype=np.uint8)
    p1 = (200 + 1 / 256) / 401
    pba, pab = (200 + p1) / 201, (150 + p1) / 151
    want = -(4 * np.log2(pba) + 3 * np.log2(pab)) / 7
    assert mo.ngram_loss_bits([t] * 50, t, order=2) == pytest.approx(want, rel=1e-12)


def test_unigram_loss_is_the_dirichlet_smoothed_cross_entropy():
    rng = np.random.default_rng(3)
    train = rng.integers(0, 20, size=500).astype(np.uint8)
    target = rng.integers(0, 25, size=300).astype(np.uint8)
    c = np.bincount(train, minlength=256)
    p = (c + 1.0 / 256) / (c.sum() + 1.0)  # alpha = 1 over the uniform byte prior
    want = -np.mean(np.log2(p[target]))
    assert mo.ngram_loss_bits([train], target, order=1) == pytest.approx(want, rel=1e-12)


def test_an_empty_model_spends_eight_bits_and_more_data_spends_fewer():
    rng = np.random.default_rng(0)
    words = [b"the", b"cat", b"sat", b"on", b"mat", b"and", b"dog", b"log"]
    text = np.frombuffer(b" ".join(words[i] for i in rng.integers(0, 8, 3000)), np.uint8)
    held = np.frombuffer(b" ".join(words[i] for i in rng.integers(0, 8, 500)), np.uint8)
    assert mo.ngram_loss_bits([], held, order=3) == 8.0
    losses = [mo.ngram_loss_bits([text[:n]], held, order=2) for n in (50, 400, 4000)]
    assert losses[0] > losses[1] > losses[2]


def test_draw_mixture_takes_contiguous_windows_of_the_asked_sizes():
    pools = [np.arange(200, dtype=np.uint8), np.arange(50, dtype=np.uint8)[::-1].copy()]
    parts = mo.draw_mixture(pools, np.array([0.75, 0.25]), n_bytes=80,
                            rng=np.random.default_rng(2))
    assert [len(p) for p in parts] == [60, 20]
    assert np.all(np.diff(parts[0].astype(int)) == 1)
    assert np.all(np.diff(parts[1].astype(int)) == -1)
    with pytest.raises(ValueError, match="pool 1 holds 50 bytes"):
        mo.draw_mixture(pools, np.array([0.0, 1.0]), n_bytes=80, rng=np.random.default_rng(2))


def test_rank_correlation_is_spearmans():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=40), rng.normal(size=40)
    assert mo.rank_correlation(a, b) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-12)


def test_regmix_puts_the_weight_on_the_domain_the_target_is_written_in():
    # two domains with disjoint alphabets; the target is written in the first alphabet only,
    # so every byte spent on the second domain is wasted: the chosen mixture must favour the
    # first and beat uniform at the larger size. (The optimum is all on the first; the log form,
    # fitted on 24 noisy proxies, leaves some weight on the second, hence 0.6, not 1.)
    rng = np.random.default_rng(11)
    pool_a = rng.choice(np.frombuffer(b"abcdefgh ", np.uint8), size=60_000)
    pool_b = rng.choice(np.frombuffer(b"XYZUVW.", np.uint8), size=60_000)
    target = rng.choice(np.frombuffer(b"abcdefgh ", np.uint8), size=5_000)
    out = mo.regmix_trial([pool_a, pool_b], target, {"uniform": np.array([0.5, 0.5])},
                          rng=np.random.default_rng(1), n_proxies=24, proxy_bytes=2_000,
                          large_bytes=20_000)
    assert out["chosen"][0] > 0.6
    assert out["large_loss"]["chosen"] < out["large_loss"]["uniform"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mo.optimal_mixture(np.array([0.1, 0.2])), "no domain lowers"),
        (lambda: mo.dirichlet_mixtures(0, 3, concentration=1.0, rng=np.random.default_rng()),
         "n_mixtures"),
        (lambda: mo.fit_log_regression(np.ones((3, 3)) / 3, np.ones(3)), "n > n_domains"),
        (lambda: mo.ngram_loss_bits([], np.zeros(1, np.uint8), order=2), "at least order"),
        (lambda: mo.draw_mixture([np.zeros(5, np.uint8)], np.array([0.5]), n_bytes=2,
                                 rng=np.random.default_rng()), "summing to 1"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()
