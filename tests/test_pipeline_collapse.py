import numpy as np
import pytest

from llmphys.pipeline import collapse


def test_gaussian_mle_variance_shrinks_by_n_minus_1_over_n_per_generation():
    # Exact: E[s^2_MLE] = (n-1)/n sigma^2 per generation. 4000 chains: the mean of
    # sigma_g^2 has relative standard error < 3% here; test at 5 sigma.
    v = collapse.gaussian_recursion(20, 30, rng=np.random.default_rng(0), n_chains=4000)
    for g in (10, 30):
        expected = (19 / 20) ** g
        se = v[g].std() / np.sqrt(v.shape[1])
        assert abs(v[g].mean() - expected) < 5 * se


def test_unbiased_variance_keeps_its_mean_yet_its_median_collapses():
    v = collapse.gaussian_recursion(10, 100, rng=np.random.default_rng(1), n_chains=4000,
                                    unbiased=True)
    assert np.median(v[100]) < 0.01 < np.median(v[0])


def test_replacing_data_can_only_lose_types_and_accumulating_loses_none():
    p = collapse.zipf(500)
    rng = np.random.default_rng(2)
    q = collapse.categorical_recursion(p, n_samples=3000, n_generations=40, rng=rng)
    alive = collapse.surviving_types(q)
    assert np.all(np.diff(alive) <= 0) and alive[-1] < 0.6 * alive[0]
    qa = collapse.categorical_recursion(p, n_samples=3000, n_generations=40, rng=rng,
                                        mode="accumulate")
    kept = collapse.surviving_types(qa)   # real data stays in the pool: no type can vanish
    assert np.all(kept == kept[0])


def test_first_generation_missing_mass_matches_the_closed_form():
    # Missing mass after n samples: sum p (1-p)^n. Average over 300 draws; 5 standard errors.
    p = collapse.zipf(2000)
    rng = np.random.default_rng(3)
    lost = [p[rng.multinomial(5000, p) == 0].sum() for _ in range(300)]
    assert (abs(np.mean(lost) - collapse.expected_missing_mass(p, 5000))
            < 5 * np.std(lost) / np.sqrt(300))


def test_verified_and_real_data_regimes_stay_closer_to_the_truth_than_replacement():
    p = collapse.zipf(1000)
    tv = {m: collapse.total_variation(collapse.categorical_recursion(
        p, n_samples=5000, n_generations=60, rng=np.random.default_rng(4), mode=m), p)[-1]
        for m in collapse.MODES}
    assert max(tv["accumulate"], tv["mix_real"], tv["verified"]) < tv["replace"]


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        collapse.categorical_recursion(collapse.zipf(5), n_samples=10, n_generations=1,
                                       rng=np.random.default_rng(0), mode="magic")
