"""Self-checks of the exact quadrature reference (tests/exact_posterior.py)."""

import time

import numpy as np
import pytest
from scipy import integrate, stats

from tests.exact_posterior import (
    in_region,
    log_marginal_likelihood,
    marginal_likelihood,
    posterior_grid,
    region_area,
)

# ----------------------------------------------------------------------------- area


@pytest.mark.parametrize(
    "eps,s,delta",
    [(0.5, 0.0, 0.0), (1.0, 0.3, 0.01), (2.5, 0.6, 1e-5), (4.0, 0.9, 0.05), (0.2, 0.5, 0.1)],
)
def test_area_matches_monte_carlo(eps, s, delta):
    rng = np.random.default_rng(1234)
    n = 1_000_000
    u = rng.random((2, n))
    inside = in_region(u[0], u[1], eps, delta) & ~in_region(u[0], u[1], s * eps, s * delta)
    p = inside.mean()
    sd = np.sqrt(p * (1 - p) / n)
    assert abs(region_area(eps, s, delta) - p) < 4 * sd + 1e-12


# ------------------------------------------------------------ marginal likelihood


def _brute_likelihood(x, n0, y, n1, eps, s, delta):
    """Nested adaptive quadrature over R(eps) and R(s eps) from the raw inequalities."""

    def f(b, a):
        return stats.binom.pmf(x, n0, a) * stats.binom.pmf(y, n1, b)

    def mass(t, d):
        c = np.exp(t)

        def lo(a):
            return min(max((1 - d - a) / c, 1 - d - c * a, 0.0), 1.0)

        def up(a):
            return max(min(c + d - c * a, (c + d - a) / c, 1.0), 0.0)

        def inner(a):
            lo_a, up_a = lo(a), up(a)
            if up_a <= lo_a:
                return 0.0
            mb, sb = (y + 1) / (n1 + 2), np.sqrt(0.25 / (n1 + 2))
            pts = [p for p in (mb - 3 * sb, mb, mb + 3 * sb) if lo_a < p < up_a]
            return integrate.quad(
                lambda b: f(b, a), lo_a, up_a, points=pts or None, epsabs=0, epsrel=1e-12, limit=200
            )[0]

        ma, sa = (x + 1) / (n0 + 2), np.sqrt(0.25 / (n0 + 2))
        kinks = [(1 - d) / (1 + c), (1 - d) / c, 1 - d, 1 - (1 - d) / (1 + c), 1 - (1 - d) / c]
        pts = sorted({p for p in kinks + [ma - 4 * sa, ma, ma + 4 * sa] if 0 < p < 1})
        return integrate.quad(inner, 0, 1, points=pts, epsabs=0, epsrel=1e-11, limit=400)[0]

    return (mass(eps, delta) - mass(s * eps, s * delta)) / region_area(eps, s, delta)


@pytest.mark.parametrize(
    "x,n0,y,n1,eps,s,delta",
    [
        (3, 20, 7, 20, 1.0, 0.3, 0.01),
        (10, 20, 2, 20, 2.0, 0.5, 1e-5),
        (0, 20, 20, 20, 0.5, 0.0, 0.0),
        (5, 20, 4, 20, 3.0, 0.8, 0.05),
        (0, 20, 0, 20, 4.0, 0.2, 1e-5),
        (20, 20, 0, 20, 1.5, 0.7, 1e-5),
        pytest.param(40, 200, 50, 200, 1.7, 0.4, 1e-5, marks=pytest.mark.slow),
        pytest.param(12, 200, 60, 200, 2.2, 0.9, 1e-3, marks=pytest.mark.slow),
        (100, 200, 95, 200, 0.3, 0.5, 1e-5),
    ],
)
def test_marginal_likelihood_vs_brute_force(x, n0, y, n1, eps, s, delta):
    ref = _brute_likelihood(x, n0, y, n1, eps, s, delta)
    got = marginal_likelihood(x, n0, y, n1, eps, s, delta)
    assert got == pytest.approx(ref, rel=1e-8)


def test_marginal_likelihood_vectorised_and_log():
    eps = np.array([0.5, 1.0, 3.0])
    s = np.array([0.0, 0.5, 0.9])
    lv = log_marginal_likelihood(4, 30, 9, 30, eps, s, 1e-5)
    assert lv.shape == (3,)
    for i in range(3):
        one = log_marginal_likelihood(4, 30, 9, 30, eps[i], s[i], 1e-5)
        assert isinstance(one, float)
        assert one == pytest.approx(lv[i], rel=1e-12)


def test_marginal_likelihood_integrates_to_one_over_data():
    # sum over all (x, y) of L(eps, s) equals 1 (binomial pmfs sum to one)
    n0, n1 = 6, 5
    tot = sum(
        marginal_likelihood(x, n0, y, n1, 1.3, 0.4, 0.02)
        for x in range(n0 + 1)
        for y in range(n1 + 1)
    )
    assert tot == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize(
    "x,n0,y,n1",
    [(0, 1000, 0, 1000), (1000, 1000, 0, 1000), (0, 1000, 1000, 1000), (0, 10000, 37, 10000)],
)
def test_extreme_counts_are_finite(x, n0, y, n1):
    eps = np.array([0.5, 2.0, 8.0, 30.0])
    s = np.array([0.0, 0.5, 0.9, 0.99])
    lv = log_marginal_likelihood(x, n0, y, n1, eps[:, None], s[None, :], 1e-5)
    assert np.all(np.isfinite(lv))
    assert np.all(lv < 0)


# ---------------------------------------------------------------------- posterior


def test_posterior_without_data_is_prior():
    pg = posterior_grid(([0], [0], [0], [0]), 1e-5, ("halfnormal", 2.0), ("beta", 2.0, 5.0))
    xs = np.linspace(0, 10, 41)
    assert np.abs(pg.eps_cdf(xs) - stats.halfnorm(scale=2.0).cdf(xs)).max() < 1e-4
    ss = np.linspace(0, 1, 41)
    assert np.abs(pg.s_cdf(ss) - stats.beta(2, 5).cdf(ss)).max() < 1e-4
    assert pg.eps_quantile(0.5) == pytest.approx(stats.halfnorm(scale=2.0).ppf(0.5), abs=2e-3)

    pg = posterior_grid(
        ([0, 0], [0, 0], [0, 0], [0, 0]), 0.0, ("lognormal", 0.5, 0.7), ("fixed", 0.4)
    )
    xs = np.linspace(0, 20, 41)
    assert np.abs(pg.eps_cdf(xs) - stats.lognorm(0.7, scale=np.exp(0.5)).cdf(xs)).max() < 1e-4
    assert pg.s_quantile(0.3) == 0.4


def _is_posterior(counts, delta, eps_draw, s_draw, rng, n=1_000_000):
    """Importance sampling from the prior with one uniform (alpha, beta) per base."""
    eps, s = eps_draw(n), s_draw(n)
    logw = -np.log(region_area(eps, s, delta)) * len(counts[0])
    ok = np.ones(n, bool)
    for x, n0, y, n1 in zip(*counts, strict=True):
        a, b = rng.random(n), rng.random(n)
        ok &= in_region(a, b, eps, delta) & ~in_region(a, b, s * eps, s * delta)
        logw += stats.binom.logpmf(x, n0, a) + stats.binom.logpmf(y, n1, b)
    w = np.where(ok, np.exp(logw - logw[ok].max()), 0.0)
    return eps, s, w


def _check_cdf(samples, w, cdf_fn, pts):
    sw = w.sum()
    for p in pts:
        ind = samples <= p
        est = (w * ind).sum() / sw
        sd = np.sqrt((w**2 * (ind - est) ** 2).sum()) / sw
        assert abs(cdf_fn(p) - est) < 4.5 * sd + 2e-3, (p, cdf_fn(p), est, sd)


def test_posterior_vs_importance_sampling_beta_s():
    rng = np.random.default_rng(7)
    counts = ([0, 2], [5, 5], [1, 3], [5, 5])
    delta = 0.01
    eps, s, w = _is_posterior(
        counts,
        delta,
        lambda n: rng.lognormal(0.3, 0.6, n),
        lambda n: rng.beta(2.0, 3.0, n),
        rng,
    )
    pg = posterior_grid(counts, delta, ("lognormal", 0.3, 0.6), ("beta", 2.0, 3.0))
    _check_cdf(eps, w, pg.eps_cdf, np.quantile(eps, [0.1, 0.3, 0.5, 0.7, 0.9]))
    _check_cdf(s, w, pg.s_cdf, [0.1, 0.25, 0.4, 0.6, 0.8])


def test_posterior_vs_importance_sampling_fixed_s():
    rng = np.random.default_rng(11)
    counts = ([1], [5], [0], [5])
    eps, _, w = _is_posterior(
        counts,
        1e-5,
        lambda n: rng.lognormal(0.5, 0.5, n),
        lambda n: np.full(n, 0.5),
        rng,
    )
    pg = posterior_grid(counts, 1e-5, ("lognormal", 0.5, 0.5), ("fixed", 0.5))
    _check_cdf(eps, w, pg.eps_cdf, np.quantile(eps, [0.1, 0.3, 0.5, 0.7, 0.9]))


@pytest.mark.parametrize("s_prior", [("beta", 1.0, 1.0), ("beta", 0.5, 0.5), ("fixed", 0.0)])
def test_posterior_normalised_and_monotone(s_prior):
    counts = ([0, 100], [100, 100], [0, 0], [100, 100])
    pg = posterior_grid(counts, 1e-5, ("halfnormal", 1.5), s_prior)
    assert np.all(np.isfinite(pg.eps_pdf)) and np.all(pg.eps_pdf >= 0)
    assert np.trapezoid(pg.eps_pdf, pg.eps_grid) == pytest.approx(1.0, abs=1e-9)
    assert pg.eps_cdf_values[-1] == pytest.approx(1.0)
    assert np.all(np.diff(pg.eps_cdf_values) >= 0)
    q = pg.eps_quantile([0.05, 0.5, 0.95])
    assert np.all(np.diff(q) > 0)
    assert pg.eps_cdf(q) == pytest.approx([0.05, 0.5, 0.95], abs=1e-6)
    if s_prior[0] == "beta":
        assert np.all(np.diff(pg.s_cdf_values) >= 0)
        assert pg.s_cdf_values[-1] == pytest.approx(1.0)
        if s_prior[1] >= 1 and s_prior[2] >= 1:
            assert np.trapezoid(pg.s_pdf, pg.s_grid) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.slow
def test_grid_refinement_converged_and_timing():
    counts = ([40, 50], [1000, 1000], [250, 200], [1000, 1000])
    t0 = time.perf_counter()
    pg = posterior_grid(counts, 1e-5, ("halfnormal", 10.0), ("beta", 1.0, 1.0))
    assert time.perf_counter() - t0 < 60
    fine = posterior_grid(counts, 1e-5, ("halfnormal", 10.0), ("beta", 1.0, 1.0), refine=2.5)
    xs = np.linspace(0, 80, 4001)
    assert np.abs(pg.eps_cdf(xs) - fine.eps_cdf(xs)).max() < 5e-4
    ss = np.linspace(0, 1, 1001)
    assert np.abs(pg.s_cdf(ss) - fine.s_cdf(ss)).max() < 5e-4
