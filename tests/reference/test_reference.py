"""Self-checks of the exact quadrature reference (tests/reference/)."""

import time

import numpy as np
import pytest
from scipy import integrate, stats

from tests.reference import (
    bvn_band_integral,
    bvn_posterior_bruteforce,
    in_region,
    log_marginal_likelihood,
    marginal_likelihood,
    posterior_grid,
    posterior_grid_groups,
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


# ------------------------------------------------------------------ s = 1 (boundary)


@pytest.mark.parametrize(
    "x,n0,y,n1,eps,delta",
    [
        (200, 1000, 200, 1000, 1.4, 1e-5),
        (3, 20, 7, 20, 1.0, 0.01),
        (0, 50, 0, 50, 8.0, 0.0),
        (0, 20, 20, 20, 0.5, 0.1),
        (40, 1000, 250, 1000, 2.5, 0.1),
        (10, 20, 9, 20, 0.05, 0.0),
        (3, 10**6, 5, 10**6, 12.0, 1e-5),
    ],
)
def test_s_equal_one_is_the_limit(x, n0, y, n1, eps, delta):
    # L(eps, s) = L(eps, 1) + O(1 - s): the differences shrink 100-fold from 1e-4 to 1e-6
    l1 = log_marginal_likelihood(x, n0, y, n1, eps, 1.0, delta)
    d4 = log_marginal_likelihood(x, n0, y, n1, eps, 1 - 1e-4, delta) - l1
    d6 = log_marginal_likelihood(x, n0, y, n1, eps, 1 - 1e-6, delta) - l1
    assert np.isfinite(l1)
    assert abs(d6) < 1e-4
    assert abs(d6) < 0.02 * abs(d4) + 1e-9


def test_posterior_at_s_one_is_the_limit_of_fixed_s():
    counts = ([40, 50], [1000, 1000], [250, 200], [1000, 1000])
    one = posterior_grid(counts, 1e-5, ("halfnormal", 10.0), ("fixed", 1.0))
    near = posterior_grid(counts, 1e-5, ("halfnormal", 10.0), ("fixed", 1 - 1e-6))
    xs = np.linspace(0, 10, 2001)
    assert np.abs(one.eps_cdf(xs) - near.eps_cdf(xs)).max() < 1e-3
    assert one.s_quantile(0.5) == 1.0


def test_s_one_interval_near_the_joint_beta_interval():
    # FPR = FNR = 0.2, N = 1000: privacy-estimates' joint-beta 90% interval is [1.295, 1.533];
    # the posterior at s = 1 (HalfNormal(10)) gives [1.315, 1.515], a different method
    pg = posterior_grid(([200], [1000], [200], [1000]), 1e-5, ("halfnormal", 10.0), ("fixed", 1.0))
    lo, hi = pg.eps_quantile([0.05, 0.95])
    assert lo == pytest.approx(1.3148, abs=2e-3)
    assert hi == pytest.approx(1.5148, abs=2e-3)
    assert abs(lo - 1.295) < 0.05 and abs(hi - 1.533) < 0.05


# --------------------------------------------------------------------------- groups


def test_group_without_information_leaves_the_other_alone():
    counts = ([0, 2], [5, 5], [1, 3], [5, 5])
    single = posterior_grid(counts, 0.01, ("lognormal", 0.3, 0.6), ("beta", 2.0, 3.0))
    gp = posterior_grid_groups(
        [(counts, ("beta", 2.0, 3.0)), (([0], [0], [0], [0]), ("beta", 2.0, 5.0))],
        0.01,
        ("lognormal", 0.3, 0.6),
    )
    xs = np.linspace(0, 15, 1501)
    assert np.abs(gp.eps_cdf(xs) - single.eps_cdf(xs)).max() < 1e-6
    ss = np.linspace(0, 1, 501)
    assert np.abs(gp.s_cdf(0, ss) - single.s_cdf(ss)).max() < 1e-6
    assert np.abs(gp.s_cdf(1, ss) - stats.beta(2, 5).cdf(ss)).max() < 1e-4


def test_groups_with_the_same_fixed_s_are_one_group():
    a = ([3, 1], [20, 15], [6, 9], [25, 30])
    b = ([10, 0, 12], [100, 50, 100], [30, 2, 28], [100, 50, 100])
    both = tuple(list(u) + list(v) for u, v in zip(a, b, strict=True))
    one = posterior_grid(both, 1e-2, ("halfnormal", 3.0), ("fixed", 0.6))
    gp = posterior_grid_groups(
        [(a, ("fixed", 0.6)), (b, ("fixed", 0.6))], 1e-2, ("halfnormal", 3.0)
    )
    xs = np.linspace(0, 15, 1501)
    assert np.abs(gp.eps_cdf(xs) - one.eps_cdf(xs)).max() < 1e-6
    assert gp.group(1).s_quantile(0.5) == 0.6


def test_repeated_rows_are_evaluated_once():
    counts = ([3, 3, 3, 1], [20, 20, 20, 15], [6, 6, 6, 9], [25, 25, 25, 30])
    gp = posterior_grid_groups([(counts, ("beta", 1.0, 1.0))], 1e-5, ("halfnormal", 3.0))
    assert gp.info["n_distinct_rows"] == [2]
    lv = log_marginal_likelihood(3, 20, 6, 25, 1.2, 0.4, 1e-5)
    lw = log_marginal_likelihood(1, 15, 9, 30, 1.2, 0.4, 1e-5)
    g = _grid_loglik(counts, 1.2, 0.4, 1e-5)
    assert g == pytest.approx(3 * lv + lw, rel=1e-10)


def _grid_loglik(counts, eps, s, delta):
    # the groups engine's fixed-s row evaluation, with multiplicities
    from tests.reference.posterior import _fixed_log_z, _parse_group

    g = _parse_group((counts, ("fixed", s)))
    return float(_fixed_log_z(g, np.array([eps]), delta)[0])


def test_two_groups_vs_importance_sampling():
    rng = np.random.default_rng(3)
    ga, gb = ([0, 1], [6, 6], [1, 0], [6, 6]), ([3], [6], [2], [6])
    delta, n = 0.01, 1_000_000
    eps = rng.lognormal(0.3, 0.6, n)
    s1, s2 = rng.beta(2.0, 2.0, n), rng.beta(2.0, 2.0, n)
    logw = np.zeros(n)
    ok = np.ones(n, bool)
    for counts, s in ((ga, s1), (gb, s2)):
        logw -= np.log(region_area(eps, s, delta)) * len(counts[0])
        for x, n0, y, n1 in zip(*counts, strict=True):
            a, b = rng.random(n), rng.random(n)
            ok &= in_region(a, b, eps, delta) & ~in_region(a, b, s * eps, s * delta)
            logw += stats.binom.logpmf(x, n0, a) + stats.binom.logpmf(y, n1, b)
    w = np.where(ok, np.exp(logw - logw[ok].max()), 0.0)
    gp = posterior_grid_groups(
        [(ga, ("beta", 2.0, 2.0)), (gb, ("beta", 2.0, 2.0))], delta, ("lognormal", 0.3, 0.6)
    )
    _check_cdf(eps, w, gp.eps_cdf, np.quantile(eps, [0.1, 0.3, 0.5, 0.7, 0.9]))
    _check_cdf(s1, w, lambda v: gp.s_cdf(0, v), [0.2, 0.4, 0.6, 0.8])
    _check_cdf(s2, w, lambda v: gp.s_cdf(1, v), [0.2, 0.4, 0.6, 0.8])


def test_zoomed_grid_agrees_with_the_full_grid():
    counts = ([8, 22, 11, 30, 5], [100] * 5, [56, 31, 40, 20, 60], [100] * 5)
    full = posterior_grid_groups(
        [(counts, ("beta", 1.0, 1.0))], 1e-5, ("halfnormal", 10.0), zoom=False
    )
    zoom = posterior_grid_groups(
        [(counts, ("beta", 1.0, 1.0))], 1e-5, ("halfnormal", 10.0), zoom=True
    )
    assert zoom.info["zoom"] and not full.info["zoom"]
    q = full.eps_quantile([1e-4, 1 - 1e-4])
    xs = np.linspace(q[0], q[1], 2001)
    assert np.abs(zoom.eps_cdf(xs) - full.eps_cdf(xs)).max() < 5e-4
    ss = np.linspace(0, 1, 1001)
    assert np.abs(zoom.s_cdf(0, ss) - full.s_cdf(0, ss)).max() < 5e-4


# ------------------------------------------------------- hard regimes: grid convergence


@pytest.mark.slow
@pytest.mark.parametrize(
    "counts,delta,s_prior",
    [
        (([0] * 5, [50] * 5, [0] * 5, [50] * 5), 1e-5, ("beta", 1.0, 1.0)),  # perfect attack
        (([10] * 3, [20] * 3, [9] * 3, [20] * 3), 1e-5, ("beta", 1.0, 1.0)),  # weak, tiny N
        (([301234], [10**6], [88421], [10**6]), 1e-5, ("beta", 1.0, 1.0)),  # N = 1e6
        (([0, 1, 0, 2], [1000] * 4, [1, 0, 0, 0], [1000] * 4), 0.0, ("beta", 1.0, 1.0)),
        (([480, 470, 495], [1000] * 3, [505, 520, 490], [1000] * 3), 0.0, ("fixed", 0.5)),
        (([4, 7, 2, 9], [20] * 4, [5, 3, 8, 6], [20] * 4), 0.1, ("beta", 1.0, 1.0)),
        (([140, 60], [1000] * 2, [180, 350], [1000] * 2), 0.1, ("fixed", 0.9)),
        (
            ([1, 30, 400, 2], [20, 100, 1000, 10**4], [5, 20, 100, 7], [50, 100, 200, 10**4]),
            1e-5,
            ("beta", 1.0, 1.0),
        ),
        (([200], [1000], [200], [1000]), 1e-5, ("fixed", 1.0)),
    ],
    ids=[
        "perfect",
        "weak-n20",
        "n1e6",
        "near-perfect",
        "diagonal",
        "delta0.1-n20",
        "delta0.1-s0.9",
        "mixed-n",
        "s1",
    ],
)
def test_hard_regimes_converged(counts, delta, s_prior):
    kw = dict(eps_prior=("halfnormal", 10.0), s_prior=s_prior)
    pg = posterior_grid(counts, delta, zoom=None, **kw)
    fine = posterior_grid(counts, delta, zoom=None, refine=2.0, **kw)
    q = pg.eps_quantile([1e-4, 1 - 1e-4])
    xs = np.linspace(q[0], q[1], 4001)
    assert np.abs(pg.eps_cdf(xs) - fine.eps_cdf(xs)).max() < 1e-3
    if s_prior[0] == "beta":
        ss = np.linspace(0, 1, 1001)
        assert np.abs(pg.s_cdf(ss) - fine.s_cdf(ss)).max() < 1e-3


@pytest.mark.slow
def test_thousand_bases_in_reasonable_time():
    rng = np.random.default_rng(7)
    # 1000 bases, N = 100, rates spread over a band (not from the model: any spread will do)
    a = rng.uniform(0.05, 0.45, 1000)
    b = np.clip(0.62 - a + rng.normal(0, 0.08, 1000), 0.01, 0.95)
    counts = (rng.binomial(100, a), [100] * 1000, rng.binomial(100, b), [100] * 1000)
    t0 = time.perf_counter()
    gp = posterior_grid_groups([(counts, ("beta", 1.0, 1.0))], 0.0, ("halfnormal", 10.0))
    seconds = time.perf_counter() - t0
    assert gp.info["zoom"]
    assert seconds < 180, seconds  # ~60-80 s on 2 shared cores
    assert np.all(np.diff(gp.eps_cdf_values) >= 0) and gp.eps_cdf_values[-1] == pytest.approx(1)


# ------------------------------------------------------------------------------ eq. 7


def _mc_band_integral(x, n0, y, n1, tau, rho, eps, s, delta, n=2_000_000, seed=0):
    """Importance sampling from a wide normal around the data (independent of the quadrature)."""
    from tests.reference.correlated import _BVNBase

    b = _BVNBase(x, n0, y, n1, tau, rho)
    rng = np.random.default_rng(seed)
    (mx, sx), (my, sy) = b.moments()
    a = rng.normal(mx, 3 * sx, n)
    bb = rng.normal(my, 3 * sy, n)
    inside = (a > 0) & (a < 1) & (bb > 0) & (bb < 1)
    a, bb = np.where(inside, a, 0.5), np.where(inside, bb, 0.5)
    band = inside & in_region(a, bb, eps, delta) & ~in_region(a, bb, s * eps, s * delta)
    lq = stats.norm.logpdf(a, mx, 3 * sx) + stats.norm.logpdf(bb, my, 3 * sy)
    val = np.where(band, np.exp(b.logg(a, bb) - lq), 0.0)
    return val.mean(), val.std() / np.sqrt(n)


@pytest.mark.parametrize(
    "x,n0,y,n1,tau,rho_frac,eps,s,delta",
    [
        (8, 100, 56, 100, 0.03, 0.0, 1.5, 0.5, 0.0),
        (22, 100, 31, 100, 0.01, 0.7, 1.2, 0.3, 1e-5),
        (6, 100, 40, 100, 0.05, -0.9, 2.0, 0.8, 1e-3),
        (150, 1000, 120, 1000, 0.001, 0.5, 1.6, 0.9, 0.0),
    ],
)
def test_bvn_band_integral_vs_monte_carlo(x, n0, y, n1, tau, rho_frac, eps, s, delta):
    rho = rho_frac * np.sqrt((1 + (n0 - 1) * tau) * (1 + (n1 - 1) * tau) / (n0 * n1))
    got = np.exp(bvn_band_integral(x, n0, y, n1, tau, rho, eps, s, delta))
    mc, sd = _mc_band_integral(x, n0, y, n1, tau, rho, eps, s, delta)
    assert abs(float(got[0]) - mc) < 4.5 * sd + 1e-12, (got, mc, sd)
    assert sd < 0.01 * mc


@pytest.mark.slow
@pytest.mark.statistical
def test_bvn_posterior_vs_brute_force_grid():
    # also the accuracy (1e-3) of the brute-force reference of the fast eq. 7 sampler checks
    # (tests/statistical/test_correlated_likelihoods.py)
    fp, n0, fn, n1 = [8, 22, 11], [100] * 3, [56, 31, 40], [100] * 3
    lik = {"likelihood": "bivariate_normal", "tau": 0.03, "rho": 0.0}
    gp = posterior_grid_groups(
        [((fp, n0, fn, n1), ("beta", 1.0, 1.0), lik)], 0.0, ("halfnormal", 10.0)
    )
    grid, cdf = bvn_posterior_bruteforce(fp, n0, fn, n1, 0.03, 0.0, m=1000)
    xs = np.linspace(0.05, 39.0, 3000)
    assert np.abs(np.interp(xs, grid, cdf) - gp.eps_cdf(xs)).max() < 1e-3


# ----------------------------------------------------------------------------- CDF between nodes


def test_cdf_between_nodes_is_hermite_with_the_density_as_slope():
    # a Beta(3, 5) CDF known at the nodes with its density: between them the Hermite rule is
    # fourth order (halving the spacing cuts its error ~16 times; linear interpolation's only 4
    # times), never leaves the two node values, is 0 / 1 outside the grid, and keeps the shape
    # of scalars and arrays
    from tests.reference.grid import _cdf_at

    dist = stats.beta(3.0, 5.0)
    x = np.linspace(-0.1, 1.1, 2001)
    err, err_lin = [], []
    for n in (13, 25):
        grid = np.linspace(0.0, 1.0, n)
        cdf, pdf = dist.cdf(grid), dist.pdf(grid)
        got = _cdf_at(x, grid, cdf, pdf)
        err.append(np.abs(got - dist.cdf(x)).max())
        err_lin.append(np.abs(np.interp(x, grid, cdf, left=0.0, right=1.0) - dist.cdf(x)).max())
        i = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
        inside = (x > 0.0) & (x < 1.0)
        assert np.all(got[inside] >= cdf[i][inside]) and np.all(got[inside] <= cdf[i + 1][inside])
        assert np.all(got[x < 0.0] == 0.0) and np.all(got[x > 1.0] == 1.0)
    print("max error, Hermite", err, "linear", err_lin)
    assert err[0] < err_lin[0] / 20 and err[1] < err_lin[1] / 100
    assert err[0] / err[1] > 10 and err_lin[0] / err_lin[1] < 5
    assert isinstance(_cdf_at(0.3, grid, cdf, pdf), float)
    assert _cdf_at(np.array([[0.2, 0.4]]), grid, cdf, pdf).shape == (1, 2)


# ------------------------------------------------------------ exposure mixture


@pytest.mark.parametrize(
    "x,n0,y,n1,eps,s,pi,kappa,delta",
    [
        (3, 32, 1, 32, 3.0, 0.4, 0.2, 0.1, 1e-5),
        pytest.param(16, 32, 15, 32, 2.0, 0.6, 0.05, 0.3, 1e-5, marks=pytest.mark.slow),
        pytest.param(5, 20, 12, 20, 1.0, 0.2, 0.7, 0.5, 0.01, marks=pytest.mark.slow),
    ],
)
def test_mixture_likelihood_vs_brute_force(x, n0, y, n1, eps, s, pi, kappa, delta):
    """pi * (band mass / |R_s|) + (1 - pi) * (mass of R(kappa eps, delta) / its area), each by
    nested adaptive quadrature of the raw inequalities (the unexposed component is the band at
    strength 0: R(0, 0) is the diagonal)."""
    from tests.reference.mixture import mixture_log_lik

    ref = pi * _brute_likelihood(x, n0, y, n1, eps, s, delta) + (1 - pi) * _brute_likelihood(
        x, n0, y, n1, kappa * eps, 0.0, delta
    )
    got = np.exp(mixture_log_lik(x, n0, y, n1, eps, s, pi, kappa, delta))
    assert got == pytest.approx(ref, rel=1e-8)


# ------------------------------------------------- the atom at s = 1 (boundary_prior)


@pytest.mark.parametrize(
    "counts", [(100, 1000, 728, 1000), (269, 1000, 269, 1000), (12, 128, 90, 128)]
)
def test_boundary_prior_parts_match_the_grid_posterior(counts):
    """The study's two parts (band, s ~ U(0, 1); atom, s = 1) against ``posterior_grid``.

    ``tests/reference/boundary_prior.py`` reads the posterior off the distribution of the
    visible eps by Monte Carlo; ``posterior_grid`` integrates the band deterministically (s fixed
    at 1: its limit on the boundary). The 90% intervals agree to 0.01 (measured: 1e-3).
    """
    from tests.reference.boundary_prior import interval, log_likelihoods

    band, atom = log_likelihoods([counts], np.random.default_rng(0), 200_000)
    for w, s_prior in ((0.0, ("beta", 1.0, 1.0)), (1.0, ("fixed", 1.0))):
        g = posterior_grid(counts, 1e-5, ("halfnormal", 10.0), s_prior)
        want = (g.eps_quantile(0.05), g.eps_quantile(0.95))
        assert interval(band, atom, w) == pytest.approx(want, abs=0.01)
    # a mixture lies between its parts
    lo = [interval(band, atom, w)[0] for w in (0.0, 0.5, 1.0)]
    assert lo[0] > lo[1] > lo[2]
