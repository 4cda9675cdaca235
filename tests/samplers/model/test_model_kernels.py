"""Numba kernels against plain numpy / scipy versions of the same quantities."""

import numpy as np
import pytest
from numba import njit
from scipy import stats

import bayes_dp as bdp
from samplers.mhaar import aux_proposals
from samplers.model import band_geometry, band_quadrature, codes, densities, region
from samplers.model.band_quadrature import QUAD_NODES
from samplers.model.densities import BSD0, BSD1, M0, M1, N0, N1, SD0, SD1, X, Y
from samplers.model.params import aux_params
from samplers.numerics.quadrature import gauss_legendre_table


@pytest.mark.parametrize(
    "eps, s, delta",
    [(0.5, 0.0, 0.0), (2.0, 0.6, 1e-5), (8.0, 0.95, 0.1), (40.0, 0.5, 1e-10), (1e-4, 0.5, 0.0)],
)
def test_log_area_matches_region_module(eps, s, delta):
    np.testing.assert_allclose(
        np.exp(region.log_area_paper(eps, s, delta)),
        bdp.strength_region_area(eps, s, delta),
        rtol=1e-9,
        atol=0,
    )


def test_in_rs_matches_region_module():
    rng = np.random.default_rng(2)
    a, b = rng.random((2, 20_000))
    for eps, s, delta in [(1.0, 0.4, 0.0), (3.0, 0.8, 1e-3), (0.3, 0.0, 0.05)]:
        expect = bdp.in_strength_region(a, b, eps, s, delta)
        got = np.empty(a.size, dtype=bool)
        for i in range(a.size):
            lo, hi = band_geometry.fold(a[i], b[i])
            got[i] = band_geometry.in_rs(lo, hi, np.exp(eps), np.exp(s * eps), delta, s)
        np.testing.assert_array_equal(got, expect)


def test_columns_of_P_are_named_once():
    """The named columns of the per-base matrix cover 0..N_PARAMS-1 once each, as filled."""
    names = "A0 B0 A1 B1 LB0 LB1 M0 SD0 LN0 M1 SD1 LN1 X N0 Y N1 BSD0 BSD1".split()
    cols = [getattr(densities, name) for name in names]
    assert sorted(cols) == list(range(densities.N_PARAMS))
    P = aux_params([3, 40], [50, 1000], [7, 250], [60, 1000])
    assert P.shape == (2, densities.N_PARAMS)
    np.testing.assert_array_equal(P[:, [X, N0, Y, N1]], [[3, 50, 7, 60], [40, 1000, 250, 1000]])
    np.testing.assert_array_equal(P[:, densities.A0], [4, 41])
    np.testing.assert_array_equal(P[:, densities.B1], [54, 751])
    np.testing.assert_allclose(P[:, M0], [4 / 52, 41 / 1002])
    np.testing.assert_allclose(P[:, SD1], 1.5 * P[:, BSD1])


def test_betaln_and_normal_cdf_of_aux_params_match_scipy_and_mpmath():
    """samplers.mhaar computes them without SciPy (samplers import only numpy and numba)."""
    import mpmath
    from scipy import special

    from samplers.model.params import betaln, norm_cdf

    rng = np.random.default_rng(3)
    a = np.concatenate([[1, 1, 2, 29, 30, 7, 5e6], 10 ** rng.uniform(0, 7, 200)])
    b = np.concatenate([[1, 1e7, 29, 1, 30, 1e7 + 1, 5e6], 10 ** rng.uniform(0, 7, 200)])
    got = betaln(a, b)
    # relative to 1 + |log B|: SciPy's own betaln is off by ~1e-10 there at N ~ 1e7
    np.testing.assert_allclose(got, special.betaln(a, b), rtol=1e-9, atol=1e-9)
    with mpmath.workdps(40):
        ref = np.array(
            [float(mpmath.log(mpmath.beta(x, y))) for x, y in zip(a[:40], b[:40], strict=True)]
        )
    assert np.max(np.abs(got[:40] - ref) / (1 + np.abs(ref))) < 1e-13
    x = np.linspace(-37, 37, 741)
    np.testing.assert_allclose(norm_cdf(x), stats.norm.cdf(x), rtol=1e-12, atol=0)


def test_log_priors_match_scipy_up_to_constant():
    x = np.array([0.1, 0.7, 2.0, 9.0])
    hn = np.array([densities.log_prior_eps(v, 0, 3.0, 0.0) for v in x])
    d = hn - stats.halfnorm(scale=3.0).logpdf(x)
    np.testing.assert_allclose(d, d[0])
    ln = np.array([densities.log_prior_eps(v, 1, 0.5, 1.3) for v in x])
    d = ln - stats.lognorm(s=1.3, scale=np.exp(0.5)).logpdf(x)
    np.testing.assert_allclose(d, d[0])
    s = np.array([0.05, 0.4, 0.93])
    bb = np.array([densities.log_prior_s(v, 2.5, 0.7) for v in s])
    d = bb - stats.beta(2.5, 0.7).logpdf(s)
    np.testing.assert_allclose(d, d[0])
    assert densities.log_prior_eps(0.0, 0, 1.0, 0.0) == -np.inf
    assert densities.log_prior_s(1.0, 1.0, 1.0) == -np.inf


@pytest.mark.parametrize("x, n0, y, n1", [(40, 1000, 250, 1000), (0, 50, 50, 50), (3, 10, 0, 7)])
def test_log_q_is_the_proposal_density(x, n0, y, n1):
    """r = log g - log q up to a constant, for every proposal, against scipy densities."""
    rng = np.random.default_rng(5)
    a = np.clip(rng.beta(x + 1, n0 - x + 1, 50), 1e-12, 1 - 1e-12)
    b = np.clip(rng.beta(y + 1, n1 - y + 1, 50), 1e-12, 1 - 1e-12)
    P = aux_params([x], [n0], [y], [n1])
    pa0, pb0, pa1, pb1 = x + 1.0, n0 - x + 1.0, y + 1.0, n1 - y + 1.0
    logg = stats.binom(n0, a).logpmf(x) + stats.binom(n1, b).logpmf(y)
    qb = stats.beta(pa0, pb0).pdf(a) * stats.beta(pa1, pb1).pdf(b)
    ta = stats.truncnorm(-P[0, M0] / P[0, SD0], (1 - P[0, M0]) / P[0, SD0], P[0, M0], P[0, SD0])
    tb = stats.truncnorm(-P[0, M1] / P[0, SD1], (1 - P[0, M1]) / P[0, SD1], P[0, M1], P[0, SD1])
    qn = ta.pdf(a) * tb.pdf(b)
    cases = [
        (codes.PROP_UNIFORM, 0.0, 1.0),
        (codes.PROP_BETA_MIX, 0.05, qb),
        (codes.PROP_BETA_MIX, 0.0, qb),
        (codes.PROP_NORMAL_MIX, 0.05, qn),
        (codes.PROP_NORMAL_MIX, 0.0, qn),
    ]
    for kind, lam, q in cases:
        r = np.array([_log_weight_ratio(a[i], b[i], P, 0, kind, lam) for i in range(a.size)])
        d = r - (logg - np.log((1 - lam) * q + lam))
        np.testing.assert_allclose(d, d[0], atol=1e-8)


@njit
def _log_weight_ratio(a, b, P, i, kind, lam):
    """r = log g - log q of an auxiliary pair, for the binomial likelihood."""
    g = densities.log_g(a, b, P, i, codes.LIK_BINOMIAL, 0.0, 0.0)
    return g - aux_proposals.log_q(a, b, P, i, kind, lam)


@njit
def _draw_many(rng, n, P, kind, lam):
    out = np.empty((n, 2))
    for i in range(n):
        out[i, 0], out[i, 1] = aux_proposals.draw_aux(rng, P, 0, kind, lam)
    return out


def test_draw_aux_distribution():
    rng = np.random.default_rng(7)
    P = aux_params([40], [1000], [250], [1000])
    d = _draw_many(rng, 40_000, P, codes.PROP_BETA_MIX, 0.1)
    # mixture CDF of the first coordinate: 0.9 Beta + 0.1 Uniform
    cdf = lambda t: 0.9 * stats.beta(41.0, 961.0).cdf(t) + 0.1 * np.clip(t, 0, 1)  # noqa: E731
    assert stats.kstest(d[:, 0], cdf).pvalue > 1e-3
    u = _draw_many(rng, 20_000, P, codes.PROP_UNIFORM, 0.0)
    assert stats.kstest(u[:, 1], "uniform").pvalue > 1e-3
    n = _draw_many(rng, 40_000, P, codes.PROP_NORMAL_MIX, 0.0)
    tb = stats.truncnorm(-P[0, M1] / P[0, SD1], (1 - P[0, M1]) / P[0, SD1], P[0, M1], P[0, SD1])
    assert stats.kstest(n[:, 1], tb.cdf).pvalue > 1e-3


@njit
def _is_ratio(rng, m, P, e1, s1, e2, s2, delta, kind, lam):
    """Plain importance-sampling estimate of L(e2, s2) / L(e1, s1) with the kernel's pieces."""
    t1 = 0.0
    t2 = 0.0
    for _ in range(m):
        a, b = aux_proposals.draw_aux(rng, P, 0, kind, lam)
        w = np.exp(_log_weight_ratio(a, b, P, 0, kind, lam))
        lo, hi = band_geometry.fold(a, b)
        if band_geometry.in_rs(lo, hi, np.exp(e1), np.exp(s1 * e1), delta, s1):
            t1 += w
        if band_geometry.in_rs(lo, hi, np.exp(e2), np.exp(s2 * e2), delta, s2):
            t2 += w
    return (
        t2
        / t1
        * np.exp(region.log_area_paper(e1, s1, delta) - region.log_area_paper(e2, s2, delta))
    )


def test_importance_weights_estimate_the_likelihood_ratio():
    """The kernel's weights average to the marginal likelihood ratio, computed here by a
    plain 2-D grid integral of the binomial likelihood over R_s."""
    x, n0, y, n1, delta = 12, 60, 20, 60, 1e-3
    grid = (np.arange(2000) + 0.5) / 2000
    A, B = np.meshgrid(grid, grid, indexing="ij")
    like = stats.binom(n0, A).pmf(x) * stats.binom(n1, B).pmf(y)

    def L(eps, s):
        inside = bdp.in_strength_region(A, B, eps, s, delta)
        return like[inside].sum() / grid.size**2 / bdp.strength_region_area(eps, s, delta)

    e1, s1, e2, s2 = 1.5, 0.3, 2.2, 0.5
    exact = L(e2, s2) / L(e1, s1)
    rng = np.random.default_rng(11)
    P = aux_params([x], [n0], [y], [n1])
    for kind, lam in [
        (codes.PROP_BETA_MIX, 0.05),
        (codes.PROP_UNIFORM, 0.0),
        (codes.PROP_NORMAL_MIX, 0.05),
    ]:
        est = _is_ratio(rng, 400_000, P, e1, s1, e2, s2, delta, kind, lam)
        assert est == pytest.approx(exact, rel=0.02)


@pytest.mark.parametrize("tau, rho", [(0.0, 0.0), (0.05, 0.01), (0.3, -0.2), (-0.001, 0.0)])
def test_bivariate_normal_matches_scipy(tau, rho):
    x, n0, y, n1 = 30.0, 200.0, 55.0, 300.0
    for a, b in [(0.15, 0.2), (0.1, 0.18), (0.3, 0.1)]:
        c0, c1 = 1 + (n0 - 1) * tau, 1 + (n1 - 1) * tau
        sa, sb = (n0 * a + 0.5) / (n0 + 1), (n1 * b + 0.5) / (n1 + 1)  # half-count floor
        va, vb = sa * (1 - sa) * n0 * c0, sb * (1 - sb) * n1 * c1
        cov = n0 * n1 * rho * np.sqrt(sa * (1 - sa) * sb * (1 - sb))
        ref = stats.multivariate_normal([n0 * a, n1 * b], [[va, cov], [cov, vb]]).logpdf([x, y])
        assert densities.log_bvn(a, b, x, n0, y, n1, tau, rho) == pytest.approx(ref, rel=1e-10)


def test_bivariate_normal_is_bounded_at_zero_counts():
    # eq. 7 as printed diverges as a -> 0 when X = 0; with the half-count floor it stays bounded
    vals = [
        densities.log_bvn(a, 0.3, 0.0, 1000.0, 300.0, 1000.0, 0.0, 0.0) for a in (1e-3, 1e-6, 1e-12)
    ]
    assert np.all(np.isfinite(vals)) and max(vals) < 0.0
    assert vals[2] == pytest.approx(vals[1], abs=0.01)


def test_rho_max_is_the_positive_definiteness_boundary():
    for tau, n0, n1 in [(0.0, 100.0, 100.0), (0.1, 50.0, 200.0), (-0.005, 100.0, 120.0)]:
        r = densities.rho_max(tau, n0, n1)
        assert np.isfinite(densities.log_bvn(0.2, 0.3, 20, n0, 30, n1, tau, 0.999 * r))
        assert densities.log_bvn(0.2, 0.3, 20, n0, 30, n1, tau, 1.001 * r) == -np.inf


def test_beta_binomial_matches_scipy_and_its_binomial_limit():
    P = aux_params([12], [100], [30], [80])
    pts = [(0.1, 0.3), (0.2, 0.45), (0.05, 0.5)]
    for tau in (0.5, 0.01, 1e-6):
        phi = 1 / tau - 1
        d = [
            densities.log_g(a, b, P, 0, codes.LIK_BETA_BINOMIAL, tau, 0.0)
            - stats.betabinom(100, a * phi, (1 - a) * phi).logpmf(12)
            - stats.betabinom(80, b * phi, (1 - b) * phi).logpmf(30)
            for a, b in pts
        ]
        np.testing.assert_allclose(d, d[0], atol=1e-6)
        # the same constant at every tau, so ratios across tau are right
        np.testing.assert_allclose(
            d[0],
            -np.log(stats.binom(100, 0.5).pmf(12) / 0.5**100)
            - np.log(stats.binom(80, 0.5).pmf(30) / 0.5**80),
            rtol=1e-6,
        )
    # continuity at the switch to the tau -> 0 limit
    a, b = pts[0]
    lo = densities.log_g(a, b, P, 0, codes.LIK_BETA_BINOMIAL, 1e-11, 0.0)
    hi = densities.log_g(a, b, P, 0, codes.LIK_BETA_BINOMIAL, 1e-9, 0.0)
    assert lo == pytest.approx(hi, abs=1e-5)


@njit
def _dense_band_integral(P, lik, tau, rho, eps, s, delta, m):
    # midpoint rule on an m x m grid of the unit square with the band's indicator: slow and
    # first-order at the band's edges, but independent of the windowed quadrature in the scores
    e1 = np.exp(eps)
    e2 = np.exp(s * eps)
    shift = densities.log_g(
        (P[0, X] + 0.5) / (P[0, N0] + 1), (P[0, Y] + 0.5) / (P[0, N1] + 1), P, 0, lik, tau, rho
    )
    tot = 0.0
    h = 1.0 / m
    for ia in range(m):
        a = (ia + 0.5) * h
        for ib in range(m):
            b = (ib + 0.5) * h
            lo, hi = band_geometry.fold(a, b)
            if band_geometry.in_rs(lo, hi, e1, e2, delta, s):
                tot += np.exp(densities.log_g(a, b, P, 0, lik, tau, rho) - shift)
    return np.log(tot * h * h) + shift


@pytest.mark.parametrize(
    "lik, x, n0, y, n1, tau, rho_frac, eps, s, delta",
    [
        (codes.LIK_BIVARIATE_NORMAL, 30, 100, 40, 100, 0.01, 0.0, 2.0, 0.5, 1e-5),
        (codes.LIK_BIVARIATE_NORMAL, 120, 1000, 300, 1000, 0.003, 0.9, 1.5, 0.3, 0.0),
        (codes.LIK_BIVARIATE_NORMAL, 0, 200, 150, 200, 0.05, -0.8, 3.0, 0.0, 0.05),
        (codes.LIK_BIVARIATE_NORMAL, 455, 1000, 187, 1000, 0.001, 0.1, 2.4, 0.62, 0.05),
        (codes.LIK_BETA_BINOMIAL, 5, 20, 9, 20, 0.2, 0.0, 1.0, 0.7, 1e-5),
        (codes.LIK_BETA_BINOMIAL, 60, 500, 210, 400, 0.01, 0.0, 2.5, 0.4, 0.0),
        (codes.LIK_BINOMIAL, 40, 1000, 250, 1000, 0.0, 0.0, 3.0, 0.5, 1e-5),
        # small counts (likelihood skewed in the rate) and rho near its bound (thin conditional):
        # the earlier rules in the rates missed the first two by 0.58 and 0.045 in log
        (codes.LIK_BIVARIATE_NORMAL, 6, 100, 60, 100, 0.0011, -0.999, 2.008, 0.522, 1e-5),
        (codes.LIK_BIVARIATE_NORMAL, 3, 100, 49, 100, 0.0045, -0.99, 2.3, 0.46, 1e-5),
        (codes.LIK_BIVARIATE_NORMAL, 7, 100, 38, 100, 0.12, 0.97, 1.97, 0.52, 1e-5),
        (codes.LIK_BETA_BINOMIAL, 2, 100, 45, 100, 0.02, 0.0, 2.0, 0.5, 1e-5),
    ],
)
def test_band_integral_matches_dense_grid(lik, x, n0, y, n1, tau, rho_frac, eps, s, delta):
    P = aux_params([x], [n0], [y], [n1])
    rho = rho_frac * densities.rho_max(tau, n0, n1)
    XG, WG = gauss_legendre_table(QUAD_NODES)
    got = band_quadrature.log_band_integral(0, lik, tau, rho, eps, s, delta, P, XG, WG)
    ref = _dense_band_integral(P, lik, tau, rho, eps, s, delta, 3000)
    assert abs(got - ref) < 0.003, (got, ref)


def test_band_integral_of_binomial_is_the_incomplete_beta_integral():
    # binomial likelihood: the normalised likelihood is a Beta density in each rate, so over
    # the whole square (s = 0, eps large, delta = 0: R_s is all of the square but the line
    # a + b = 1) the integral is 1
    P = aux_params([40], [1000], [250], [1000])
    XG, WG = gauss_legendre_table(QUAD_NODES)
    got = band_quadrature.log_band_integral(
        0, codes.LIK_BINOMIAL, 0.0, 0.0, 30.0, 0.0, 0.0, P, XG, WG
    )
    assert abs(got) < 1e-5


@njit
def _draw_pairs(rng, n, P, Q, lam):
    out = np.empty((n, 3))
    for i in range(n):
        a, b = aux_proposals.draw_aux_pair(rng, P, 0, Q, lam)
        out[i, 0] = a
        out[i, 1] = b
        out[i, 2] = aux_proposals.log_q_pair(a, b, P, 0, Q, lam, 0.0, 0.0)
    return out


@pytest.mark.parametrize("lik, tau, rho", [(1, 0.05, 0.02), (1, 0.2, -0.15), (2, 0.1, 0.0)])
def test_pair_normal_proposal_density_and_draws(lik, tau, rho):
    """PROP_PAIR_NORMAL: the density is the mixture of scipy bivariate normals (and the
    uniform part), its shape follows (tau, rho) as documented, and the draws follow it."""
    P = aux_params([12], [100], [30], [80])
    Q = np.empty(6)
    aux_proposals.pair_shape(P, 0, lik, tau, rho, Q, 0)
    aux_proposals.pair_shape(P, 0, lik, 0.5 * tau, 0.3 * rho, Q, 3)
    f0, f1 = 1 + 99 * tau, 1 + 79 * tau
    assert Q[0] == pytest.approx(1.5 * P[0, BSD0] * np.sqrt(f0))
    assert Q[1] == pytest.approx(1.5 * P[0, BSD1] * np.sqrt(f1))
    rc = rho * np.sqrt(100 * 80 / (f0 * f1)) if lik == 1 else 0.0
    assert Q[2] == pytest.approx(rc)
    lam = 0.05
    m = [P[0, M0], P[0, M1]]

    def q(a, b):
        out = 0.0
        for o in (0, 3):
            c = Q[o + 2] * Q[o] * Q[o + 1]
            cov = [[Q[o] ** 2, c], [c, Q[o + 1] ** 2]]
            out = out + 0.5 * stats.multivariate_normal(m, cov).pdf(np.c_[a, b])
        inside = (a > 0) & (a < 1) & (b > 0) & (b < 1)
        return (1 - lam) * out + lam * inside

    rng = np.random.default_rng(3)
    d = _draw_pairs(rng, 200_000, P, Q, lam)
    np.testing.assert_allclose(d[:500, 2], np.log(q(d[:500, 0], d[:500, 1])), rtol=1e-10)
    # importance identity: E_q[1{in square} / q] = 1 (the square's area)
    inside = (d[:, 0] > 0) & (d[:, 0] < 1) & (d[:, 1] > 0) & (d[:, 1] < 1)
    w = np.where(inside, np.exp(-d[:, 2]), 0.0)
    assert w.mean() == pytest.approx(1.0, abs=5 * w.std() / np.sqrt(w.size))
    # and E_q[a b / q] over the square = 1/4
    w2 = w * d[:, 0] * d[:, 1]
    assert w2.mean() == pytest.approx(0.25, abs=5 * w2.std() / np.sqrt(w2.size))


@njit
def _draw_box(rng, n, V, NV, AR, tot):
    out = np.empty((n, 2))
    for k in range(n):
        out[k, 0], out[k, 1] = band_geometry.draw_band_box(rng, V, NV, AR, tot)
    return out


@pytest.mark.parametrize(
    "eps, s, delta, box",
    [
        (1.5, 0.5, 1e-5, (0.0, 1.0, 0.0, 1.0)),
        (1.5, 0.5, 1e-5, (0.05, 0.25, 0.3, 0.7)),
        (2.2, 0.97, 1e-3, (0.0, 0.2, 0.05, 0.3)),
        (0.8, 0.2, 0.05, (0.55, 0.95, -0.1, 0.3)),
    ],
)
def test_band_box_area_and_draws(eps, s, delta, box):
    """The band part of PROP_PAIR_NORMAL: the area of R_s inside a box equals the closed form
    (whole square) or a dense midpoint grid, and its draws are uniform on that set."""
    box = np.array(box)
    V = np.empty((4, 12, 2))
    NV = np.empty(4, dtype=np.int64)
    AR = np.empty(4)
    tot = band_geometry.band_box(
        eps, s, delta, box, V, NV, AR, np.empty((12, 2)), np.empty((12, 2))
    )
    m = 3000
    g = (np.arange(m) + 0.5) / m
    A, B = np.meshgrid(g, g, indexing="ij")
    inside = bdp.in_strength_region(A, B, eps, s, delta)
    inside &= (A >= box[0]) & (A <= box[1]) & (B >= box[2]) & (B <= box[3])
    if box[1] - box[0] == 1.0:
        assert tot == pytest.approx(np.exp(region.log_area_paper(eps, s, delta)), rel=1e-12)
    assert tot == pytest.approx(inside.mean(), rel=3e-3, abs=1e-6)
    d = _draw_box(np.random.default_rng(1), 100_000, V, NV, AR, tot)
    ok = [
        band_geometry.in_rs(*band_geometry.fold(a, b), np.exp(eps), np.exp(s * eps), delta, s)
        for a, b in d[:2000]
    ]
    assert all(ok)
    assert np.all((d[:, 0] >= box[0]) & (d[:, 0] <= box[1]) & (d[:, 1] >= box[2]))
    for col, G in ((0, A), (1, B)):
        ref = G[inside].mean()
        se = d[:, col].std() / np.sqrt(d.shape[0])
        assert d[:, col].mean() == pytest.approx(ref, abs=5 * se + 2e-4)
