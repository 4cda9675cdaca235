"""The t proposal fitted to the warm-up (samplers/exact/fitted_proposal.py).

The independence move is exact only if ``log_density`` is the density of what ``draw`` draws.
Both are checked against scipy's multivariate t (written independently): the density pointwise,
the draws by the probability of half-spaces and by a Kolmogorov-Smirnov test of a projection.
"""

import numpy as np
import pytest
from scipy import stats

from samplers.exact import fitted_proposal as fp

from benchmarks._support.lira_sim import lira_counts, one_group_model


def _sums(x):
    return float(x.shape[0]), x.sum(axis=0), x.T @ x


def _fitted(mean, cov, n=4000, seed=1):
    x = np.random.default_rng(seed).multivariate_normal(mean, cov, size=n)
    F = fp.empty(len(mean))
    assert fp.fit(*_sums(x), F)
    return F, x


def _scipy_t(F, x):
    cov = np.cov(x.T) * fp.SCALE**2
    return stats.multivariate_t(loc=x.mean(axis=0), shape=cov, df=fp.DF)


MEAN = np.array([1.0, -8.0, -2.0, 0.3])
COV = np.array(
    [
        [0.01, -0.02, 0.0, 0.001],
        [-0.02, 1.0, 0.1, 0.0],
        [0.0, 0.1, 0.5, -0.2],
        [0.001, 0.0, -0.2, 0.3],
    ]
)


def test_fit_takes_the_window_moments_and_the_density_is_scipys_t():
    F, x = _fitted(MEAN, COV)
    ref = _scipy_t(F, x)
    np.testing.assert_allclose(F.mean, x.mean(axis=0), rtol=0, atol=1e-12)
    L = np.linalg.cholesky(np.cov(x.T) * fp.SCALE**2)
    np.testing.assert_allclose(F.L, L, rtol=1e-10, atol=1e-14)
    pts = np.random.default_rng(2).multivariate_normal(MEAN, 4 * COV, size=50)
    mine = np.array([fp.log_density(p, F) for p in pts])
    np.testing.assert_allclose(mine, ref.logpdf(pts), rtol=0, atol=1e-9)


def test_draws_follow_the_density():
    F, x = _fitted(MEAN, COV)
    ref = _scipy_t(F, x)
    rng = np.random.default_rng(3)
    n = 40_000
    out = np.empty((n, 4))
    for i in range(n):
        fp.draw(rng, F, out[i])
    # a projection of a multivariate t is a univariate t with the projected scale
    for w in (np.array([1.0, 0, 0, 0]), np.array([0.3, -0.2, 1.0, 0.5])):
        proj = out @ w
        loc = F.mean @ w
        scale = np.sqrt(w @ ref.shape @ w)
        ks = stats.kstest(proj, stats.t(df=fp.DF, loc=loc, scale=scale).cdf)
        assert ks.pvalue > 1e-3, ks
    # same seed, same draws
    a, b = np.empty(4), np.empty(4)
    fp.draw(np.random.default_rng(5), F, a)
    fp.draw(np.random.default_rng(5), F, b)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", ["too few", "constant coordinate", "collinear"])
def test_fit_refuses_what_it_cannot_use(case):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    if case == "too few":
        x = x[:7]  # fewer than 2 d + 2 points
    elif case == "constant coordinate":
        x[:, 1] = 0.5
    else:
        x[:, 2] = x[:, 0] - x[:, 1]
    F = fp.empty(3)
    assert not fp.fit(*_sums(x), F)


# --- in the exact sampler (samplers/exact/chain.py, samplers/exact/driver.py) -------------


def _lira_counts(n_models, n_targets, seed):
    return lira_counts(n_models, n_targets, seed).counts


def test_over_dispersed_rows_are_evaluated_once_and_weighted_by_multiplicity():
    # against the quadrature reference of tests/reference/, base by base
    import bayes_dp as bdp
    from samplers.exact import chain as exact
    from samplers.model.codes import LIK_BIVARIATE_NORMAL

    from tests.reference import bvn_band_integral, log_region_area

    c = bdp.AttackCounts([3, 8, 3, 20, 8, 3], 30, [20, 11, 20, 2, 11, 20], 40)
    tau, rho = 0.03, 0.01
    model, corr, names, base_map = one_group_model(c, LIK_BIVARIATE_NORMAL, tau, rho)
    assert corr.P.shape[0] == 3
    np.testing.assert_array_equal(np.sort(corr.c_mult), [1.0, 2.0, 3.0])
    eps, s = 2.0, 0.4
    z = np.array([np.log(eps), np.log(s / (1 - s))])
    ll_c = np.empty(3)
    exact.log_posterior(z, model, corr, np.empty(0), ll_c)
    ref = [
        bvn_band_integral(x, 30, y, 40, tau, rho, eps, s, 1e-5) - log_region_area(eps, s, 1e-5)
        for x, y in zip(c.fp, c.fn, strict=True)
    ]
    assert (base_map[:, 0] == 1).all()
    np.testing.assert_allclose(ll_c[base_map[:, 1]], np.ravel(ref), rtol=0, atol=1e-4)
    np.testing.assert_allclose(corr.c_mult @ ll_c, np.sum(ref), rtol=0, atol=1e-3)


def _run(model, corr, names, chains=2, draws=300, tune=600):
    from samplers.exact import driver

    rng = np.random.default_rng(0)
    starts = driver.starting_points(model, corr, names, rng, chains, 3.0)
    run = driver.ExactRun(
        model,
        corr,
        names,
        rng.spawn(chains),
        starts,
        tune=tune,
        target_accept=0.3,
        store_ll=False,
    )
    run.run(draws)
    return run


def test_thousands_of_weak_targets_take_the_fitted_move():
    # many weak LiRA targets: the table's proposal cannot follow the thin line of this posterior
    # in (u, v); the fitted t takes over in chains whose table proposal fails its pilot, and
    # its proposals are accepted
    from samplers.exact import chain as exact
    from samplers.model.codes import LIK_BINOMIAL

    model, corr, names, _ = one_group_model(_lira_counts(64, 3000, 1), LIK_BINOMIAL)
    run = _run(model, corr, names, chains=4, draws=200, tune=400)
    modes = [int(ch.state.sg_on[0]) for ch in run.chains]
    assert exact.TABLE_FIT in modes, modes
    for ch, mode in zip(run.chains, modes, strict=True):
        if mode == exact.TABLE_FIT:
            assert ch.state.fq.on[0] == 1
            assert np.mean(ch.acc[: ch.rows, 2]) > 0.3


def test_over_dispersed_groups_take_the_fitted_move():
    # no table for them: the t is fitted at the middle of the warm-up, refitted at its end
    import bayes_dp as bdp
    from samplers.exact import chain as exact
    from samplers.model.codes import LIK_BIVARIATE_NORMAL

    c = bdp.AttackCounts([8, 22, 11], 100, [56, 31, 40], 100)
    model, corr, names, _ = one_group_model(c, LIK_BIVARIATE_NORMAL, tau=0.03)
    run = _run(model, corr, names)
    for ch in run.chains:
        assert ch.state.sg_on[0] == exact.TABLE_FIT
        assert np.mean(ch.acc[: ch.rows, 2]) > 0.3
        # the exact walk and ridge run on their schedule only (every EXACT_EVERY_INDEP-th)
        assert np.isnan(np.where(ch.acc[: ch.rows, 0] >= 0, 1.0, np.nan)).mean() > 0.8


@pytest.mark.slow
@pytest.mark.statistical
def test_weak_lira_targets_match_the_quadrature_reference():
    # 300 LiRA targets of 64 models (s near 0, eps pinned by a few exposed targets), default
    # run: eps and s quantiles within 1.5 probability points of tests/reference/
    import bayes_dp as bdp

    from tests.reference import posterior_grid_groups

    c = _lira_counts(64, 300, 1)
    post = bdp.estimate_epsilon(c, delta=1e-5, seed=0, log_likelihood=False)
    assert post.converged
    counts = tuple(np.asarray(v) for v in (c.fp, c.n_neg, c.fn, c.n_pos))
    ref = posterior_grid_groups([(counts, ("beta", 1, 1), None)], 1e-5, ("halfnormal", 10.0))
    qs = np.array([0.05, 0.5, 0.95])
    err_eps = np.abs(ref.eps_cdf(np.quantile(post.draws("eps"), qs)) - qs).max()
    err_s = np.abs(ref.s_cdf(0, np.quantile(post.draws("s"), qs)) - qs).max()
    assert max(err_eps, err_s) < 0.015, (err_eps, err_s)
