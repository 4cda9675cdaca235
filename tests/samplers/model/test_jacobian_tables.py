"""The shared Jacobian tables of the bivariate-normal band integral (issue 23).

Rows of a group with a count in common share that count's table
(:func:`samplers.model.band_quadrature.fill_jacobian_tables`); the band integral that reads them
(:func:`samplers.model.band_quadrature.log_band_integral_tab`) must agree with the one that
computes the Jacobian at every node (:func:`samplers.model.band_quadrature.log_band_integral`)
and with the independent quadrature reference of ``tests/reference``.
"""

import numpy as np
import pytest

from samplers.model import band_quadrature as bq
from samplers.model.codes import LIK_BETA_BINOMIAL, LIK_BIVARIATE_NORMAL
from samplers.model.densities import rho_max
from samplers.model.params import aux_params
from samplers.numerics.quadrature import gauss_legendre_table

XG, WG = gauss_legendre_table(bq.QUAD_NODES)


def _tables(xs, n0, ys, n1, tau):
    """Tables of the rows' first counts (rows 0..m-1) and second counts (rows m..2m-1)."""
    m = len(xs)
    k_c = np.concatenate([xs, ys]).astype(np.float64)
    k_n = np.concatenate([np.full(m, n0), np.full(m, n1)]).astype(np.float64)
    JT = np.empty((2 * m, bq.JAC_POINTS))
    JZ = np.empty((2 * m, 3))
    bq.fill_jacobian_tables(k_c, k_n, np.full(2 * m, tau), JT, JZ)
    return JT, JZ


@pytest.mark.parametrize(
    "n0, n1, tau",
    [(32, 32, 0.0), (32, 32, 0.02), (32, 32, 0.3), (20, 44, 0.05), (5, 7, 0.5), (128, 128, 0.01)],
)
def test_tabulated_band_integral_matches_the_computed_jacobian(n0, n1, tau):
    rng = np.random.default_rng(n0 + n1)
    m = 12
    xs = rng.integers(0, n0 + 1, m)
    ys = rng.integers(0, n1 + 1, m)
    xs[:3], ys[:3] = [0, n0, 1], [n1, 0, 0]  # zero and full counts
    P = aux_params(xs, np.full(m, n0), ys, np.full(m, n1))
    JT, JZ = _tables(xs, n0, ys, n1, tau)
    assert JZ[:, 2].mean() > 0.5  # most tables pass their check here
    rm = rho_max(tau, n0, n1)
    worst = 0.0
    n_finite = 0
    for rho_frac in (0.0, 0.9, -0.99):
        for eps, s, delta in (
            (0.05, 0.5, 1e-5),
            (1.0, 0.2, 1e-5),
            (4.0, 0.01, 0.0),
            (2.0, 0.9, 0.05),
        ):
            for i in range(m):
                args = (i, LIK_BIVARIATE_NORMAL, tau, rho_frac * rm, eps, s, delta, P, XG, WG)
                a = bq.log_band_integral(*args)
                b = bq.log_band_integral_tab(*args, JT, JZ, i, m + i)
                if a == b == -np.inf:  # (underflow far from the likelihood's peak)
                    continue
                assert np.isfinite(a) and np.isfinite(b)
                worst = max(worst, abs(a - b))
                n_finite += 1
    # the rule's own relative tolerance is QUAD_TOL = 1e-4; the tables add at most ~3e-5
    # (the worst over a larger grid of scratch runs, docs/validation/correlated.md)
    assert worst < 5e-5, worst
    assert n_finite > 100


@pytest.mark.parametrize(
    "x, n0, y, n1, tau, rho_frac, eps, s",
    [
        (3, 32, 20, 32, 0.02, 0.0, 2.0, 0.4),
        (16, 32, 16, 32, 0.05, 0.8, 0.7, 0.5),
        (0, 32, 31, 32, 0.1, -0.9, 3.0, 0.1),
    ],
)
def test_tabulated_band_integral_matches_the_reference(x, n0, y, n1, tau, rho_frac, eps, s):
    from tests.reference import bvn_band_integral

    P = aux_params([x], [n0], [y], [n1])
    JT, JZ = _tables([x], n0, [y], n1, tau)
    assert JZ[:, 2].all()
    rho = rho_frac * rho_max(tau, n0, n1)
    got = bq.log_band_integral_tab(
        0, LIK_BIVARIATE_NORMAL, tau, rho, eps, s, 1e-5, P, XG, WG, JT, JZ, 0, 1
    )
    ref = bvn_band_integral(x, n0, y, n1, tau, rho, eps, s, 1e-5)
    assert abs(got - float(np.ravel(ref)[0])) < 1e-4, (got, ref)


def test_a_table_that_fails_its_check_is_not_used():
    # a zero count of a large N at a large tau: the Jacobian changes within a small fraction of
    # a standard score near the rate 0, which a table of JAC_POINTS points cannot follow
    JT, JZ = _tables([0], 1000, [1000], 1000, 0.95)
    assert (JZ[:, 2] == 0.0).all()
    P = aux_params([0], [1000], [1000], [1000])
    rho = 0.99 * rho_max(0.95, 1000, 1000)
    args = (0, LIK_BIVARIATE_NORMAL, 0.95, rho, 0.05, 0.5, 1e-5, P, XG, WG)
    assert bq.log_band_integral_tab(*args, JT, JZ, 0, 1) == bq.log_band_integral(*args)


def test_table_interpolation_is_within_its_tolerance_between_its_points():
    n, tau = 32, 0.05
    f = 1 + (n - 1) * tau
    counts = np.arange(n + 1)
    JT = np.empty((counts.size, bq.JAC_POINTS))
    JZ = np.empty((counts.size, 3))
    bq.fill_jacobian_tables(
        counts.astype(float), np.full(counts.size, float(n)), np.full(counts.size, tau), JT, JZ
    )
    assert JZ[:, 2].all()
    rng = np.random.default_rng(0)
    for k, x in enumerate(counts):
        z0, z1 = JZ[k, 0], JZ[k, 1]
        assert (z0, z1) == bq.jacobian_range(float(x), float(n), f)
        for z in rng.uniform(z0, z1, 50):
            exact = bq._dp_dz(bq._p_of(z, x, n, f), z, n, f)
            assert abs(bq._jac_interp(JT, k, z0, z1, z) - exact) <= 2 * bq.JAC_TOL * exact


def test_rows_index_the_tables_of_their_counts():
    from samplers.exact.driver import build_model

    # group 0: bivariate normal, two rows with fp = 3 of 30; group 1: beta-binomial (no tables)
    fp, n_neg, fn, n_pos = [3, 3, 7, 5], [30, 30, 30, 30], [20, 11, 20, 9], [40, 40, 40, 40]
    grp = [0, 0, 0, 1]
    _, corr, _, _ = build_model(
        fp, n_neg, fn, n_pos, grp,
        g_lik=[LIK_BIVARIATE_NORMAL, LIK_BETA_BINOMIAL], g_sidx=[0, 0], g_tau=[0.02, 0.02],
        g_rho=[0.0, 0.0], g_tau_free=[True, True], g_rho_free=[True, False], s_fixed=[np.nan],
        delta=1e-5, eps_prior=(0, 10.0, 0.0), s_prior=(1.0, 1.0), tau_prior=(1.0, 1.0),
    )  # fmt: skip
    P = corr.P
    bvn = corr.c_lik == LIK_BIVARIATE_NORMAL
    assert bvn.sum() == 3 and (corr.c_kx[~bvn] == -1).all() and (corr.c_ky[~bvn] == -1).all()
    # (group, size, count) of the tables: 3 of 30, 7 of 30, 20 of 40, 11 of 40, each once
    assert corr.k_grp.size == 4 and (corr.k_grp == 0).all()
    for i in np.flatnonzero(bvn):
        assert corr.k_c[corr.c_kx[i]] == P[i, 12] and corr.k_n[corr.c_kx[i]] == P[i, 13]
        assert corr.k_c[corr.c_ky[i]] == P[i, 14] and corr.k_n[corr.c_ky[i]] == P[i, 15]
    # the two rows with fp = 3 share one table
    rows3 = np.flatnonzero(bvn & (P[:, 12] == 3))
    assert rows3.size == 2 and corr.c_kx[rows3[0]] == corr.c_kx[rows3[1]]


def test_log_posterior_with_tables_matches_it_without():
    from samplers.exact import chain as exact
    from samplers.exact.driver import build_model

    from benchmarks._support.lira_sim import lira_counts

    c = lira_counts(32, 60, 3).counts
    model, corr, names, _ = build_model(
        c.fp, c.n_neg, c.fn, c.n_pos, np.zeros(c.fp.size, dtype=np.int64),
        g_lik=[LIK_BIVARIATE_NORMAL], g_sidx=[0], g_tau=[0.02], g_rho=[0.0], g_tau_free=[True],
        g_rho_free=[True], s_fixed=[np.nan], delta=1e-5, eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0), tau_prior=(1.0, 1.0),
    )  # fmt: skip
    assert names == ["eps", ("s", 0), ("tau", 0), ("rho", 0)]
    assert corr.k_grp.size < 2 * corr.c_grp.size  # rows share tables
    off = corr._replace(c_kx=np.full_like(corr.c_kx, -1), c_ky=np.full_like(corr.c_ky, -1))
    for z in ([0.3, -1.0, -3.5, 0.8], [1.5, 0.5, -2.0, -1.5], [-2.0, 0.0, -4.0, 0.0]):
        z = np.asarray(z)
        ll_on, ll_off = np.empty(corr.c_grp.size), np.empty(corr.c_grp.size)
        lp_on = exact.log_posterior(z, model, corr, np.empty(0), ll_on)
        lp_off = exact.log_posterior(z, model, off, np.empty(0), ll_off)
        np.testing.assert_allclose(ll_on, ll_off, rtol=0, atol=2e-5)
        assert abs(lp_on - lp_off) < 1e-3
