"""One-shot audit of the Gaussian mechanism: null law, simulators, estimators, paper table."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from mia.canary import (
    CosineNull,
    epsilon_cosine_null_vs_gaussian,
    epsilon_from_cosines,
    epsilon_from_two_samples,
    epsilon_two_gaussians,
    gaussian_mechanism_epsilon,
    one_shot_gaussian_mechanism,
    simulate_canary_cosines,
)


@pytest.mark.parametrize("d", [3, 5, 40, 1000])
def test_cosine_null_matches_random_unit_vectors(d):
    rng = np.random.default_rng(d)
    y = rng.standard_normal((20000, d))
    v = rng.standard_normal(d)
    tau = (y / np.linalg.norm(y, axis=1, keepdims=True)) @ (v / np.linalg.norm(v))
    null = CosineNull(d)
    assert stats.kstest(tau, null.cdf).pvalue > 1e-3
    assert null.var() == pytest.approx(np.var(tau), rel=0.05)


def test_cosine_null_against_scipy_beta_and_density():
    d = 57
    null = CosineNull(d)
    ref = stats.beta((d - 1) / 2, (d - 1) / 2, loc=-1, scale=2)
    t = np.linspace(-0.9, 0.9, 19)
    np.testing.assert_allclose(null.cdf(t), ref.cdf(t), rtol=1e-12)
    np.testing.assert_allclose(null.logpdf(t), ref.logpdf(t), rtol=1e-10)
    assert integrate.quad(lambda x: math.exp(null.logpdf(x)), -1, 1)[0] == pytest.approx(1.0)
    for q in (1e-12, 1e-6, 0.05, 0.5):
        assert null.sf(null.isf(q)) == pytest.approx(q, rel=1e-9)
    # variance 1/d (Lemma A.1); near N(0, 1/d) for large d (Thm. 3.2)
    var = integrate.quad(lambda x: x * x * math.exp(null.logpdf(x)), -1, 1)[0]
    assert var == pytest.approx(1 / d, rel=1e-8)
    big = CosineNull(10**6)
    assert big.sf(3e-3) == pytest.approx(stats.norm.sf(3.0), rel=2e-3)
    assert (
        CosineNull(10).rvs(size=5, seed=3).tolist() == CosineNull(10).rvs(size=5, seed=3).tolist()
    )


def _hockey_numeric(p_logpdf, q_logpdf, eps, lo, hi, q_outside=0.0):
    def f(x, a, b):
        return max(0.0, math.exp(a(x)) - math.exp(eps + b(x)))

    pts = list(np.linspace(lo, hi, 41))
    d1 = integrate.quad(f, lo, hi, args=(p_logpdf, q_logpdf), points=pts, limit=500)[0]
    d2 = integrate.quad(f, lo, hi, args=(q_logpdf, p_logpdf), points=pts, limit=500)[0]
    return max(d1, d2 + q_outside)


def test_exact_null_epsilon_vs_brute_force_quadrature():
    d, mu, sd, delta = 60, 0.25, 0.14, 1e-4
    eps = epsilon_cosine_null_vs_gaussian(d, mu, sd, delta)
    null = CosineNull(d)
    q = stats.norm(mu, sd)
    outside = q.cdf(-1) + q.sf(1)
    got = _hockey_numeric(
        lambda x: float(null.logpdf(x)), q.logpdf, eps, -1 + 1e-12, 1 - 1e-12, outside
    )
    assert got == pytest.approx(delta, rel=1e-3)


def test_exact_null_approaches_gaussian_null_in_high_dimension():
    for d, tol in ((10**4, 1e-2), (10**6, 1e-4)):
        mu, sd = 1 / (1.54 * math.sqrt(d)), 1.02 / math.sqrt(d)
        a = epsilon_cosine_null_vs_gaussian(d, mu, sd, 1e-6)
        b = epsilon_two_gaussians(0.0, 1 / math.sqrt(d), mu, sd, 1e-6)
        assert a == pytest.approx(b, rel=tol)


def test_vector_and_gram_simulations_agree():
    d, k, sigma = 3000, 30, 0.8
    rng = np.random.default_rng(7)
    a = np.concatenate(
        [simulate_canary_cosines(d, k, sigma, seed=rng, chunk_bytes=8 * d * 7) for _ in range(60)]
    )
    b = np.concatenate(
        [simulate_canary_cosines(d, k, sigma, simulation="gram", seed=rng) for _ in range(60)]
    )
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    # Thm. 3.3: sqrt(d) mean -> 1/sigma, d var -> 1
    assert math.sqrt(d) * b.mean() == pytest.approx(1 / sigma, rel=0.1)


def test_same_seed_same_cosines_and_small_chunks():
    a = simulate_canary_cosines(500, 7, 1.0, seed=11, chunk_bytes=8 * 500 * 2)
    b = simulate_canary_cosines(500, 7, 1.0, seed=11, chunk_bytes=8 * 500 * 2)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (7,) and np.all(np.abs(a) <= 1)


def test_theorem_3_3_scaling():
    r = one_shot_gaussian_mechanism(10**5, 1000, 1.54, 1e-6, simulation="gram", seed=5)
    d = 10**5
    assert math.sqrt(d) * r.mean == pytest.approx(1 / 1.54, rel=0.1)
    assert d * r.std**2 == pytest.approx(1.0, abs=0.15)
    assert r.epsilon_analytic == pytest.approx(3.00836, abs=1e-4)


def test_reproduces_published_table_mean_only():
    """Andrew et al. Table 2: d=1e6, k=1e3, delta=1e-6, mean +- std over 50 runs."""
    published = {4.22: (0.972, 0.148), 1.54: (3.04, 0.137), 0.541: (9.98, 0.190)}
    rng = np.random.default_rng(2023)
    for sigma, (mean, std) in published.items():
        mo, tg = [], []
        for _ in range(50):
            g = simulate_canary_cosines(10**6, 1000, sigma, simulation="gram", seed=rng)
            mo.append(epsilon_from_cosines(g, 10**6, 1e-6, method="mean_only").epsilon)
            tg.append(epsilon_from_cosines(g, 10**6, 1e-6).epsilon)
        assert abs(np.mean(mo) - mean) < std
        assert np.std(mo) == pytest.approx(std, rel=0.5)
        # the fitted-variance estimator is biased upward and noisier at delta = 1e-6
        assert np.mean(tg) > np.mean(mo) and np.std(tg) > np.std(mo)


def test_mean_only_is_balle_wang_of_implied_sigma():
    d = 10**6
    g = np.array([1.0, 2.0, 3.0]) / (1.54 * math.sqrt(d) * 2)
    est = epsilon_from_cosines(g, d, 1e-6, method="mean_only")
    assert est.sigma_hat == pytest.approx(1.54)
    assert est.epsilon == pytest.approx(gaussian_mechanism_epsilon(1.54, 1e-6))
    assert epsilon_from_cosines(-g, d, 1e-6, method="mean_only").epsilon == 0.0


def test_two_gaussian_estimator_definition():
    g = np.array([0.001, 0.002, 0.003])
    est = epsilon_from_cosines(g, 10**6, 1e-6)
    ref = epsilon_two_gaussians(0, 1e-3, g.mean(), g.std(), 1e-6)
    assert est.epsilon == ref and est.std == pytest.approx(np.sqrt(2 / 3) * 1e-3)
    assert epsilon_from_two_samples([-1.0, 1.0], [-0.5, 1.5], 1e-6) == pytest.approx(
        2.2541, abs=1e-4
    )


@pytest.mark.parametrize(
    ("kwargs", "exc", "word"),
    [
        ({"d": 1}, ValueError, "d"),
        ({"k": 0}, ValueError, "k"),
        ({"sigma": 0.0}, ValueError, "sigma"),
        ({"sigma": -1.0}, ValueError, "sigma"),
        ({"delta": 0.0}, ValueError, "delta"),
        ({"delta": 1.5}, ValueError, "delta"),
        ({"d": 10.0}, TypeError, "d"),
        ({"method": "x"}, ValueError, "method"),
        ({"seed": "a"}, TypeError, "seed"),
        ({"simulation": "gram", "d": 5, "k": 10}, ValueError, "gram"),
    ],
)
def test_bad_input(kwargs, exc, word):
    args = {"d": 100, "k": 5, "sigma": 1.0, "delta": 1e-6} | kwargs
    with pytest.raises(exc, match=word):
        one_shot_gaussian_mechanism(
            args.pop("d"), args.pop("k"), args.pop("sigma"), args.pop("delta"), **args
        )


def test_single_canary_mean_only():
    r = one_shot_gaussian_mechanism(1000, 1, 1.0, 1e-6, method="mean_only", seed=0)
    assert r.cosines.shape == (1,) and r.epsilon >= 0


@pytest.mark.parametrize("bad", [[], [1.0, np.nan], [[1.0, 2.0]], ["a", "b"]])
def test_bad_cosines(bad):
    with pytest.raises((ValueError, TypeError), match="cosines"):
        epsilon_from_cosines(bad, 100, 1e-6)


def test_vector_simulation_memory_does_not_grow_with_d_times_k():
    import tracemalloc

    d, k = 100_000, 200  # d * k doubles would be 160 MB
    tracemalloc.start()
    try:
        simulate_canary_cosines(d, k, 1.0, chunk_bytes=2**20, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20
