"""The t proposal fitted to the warm-up (samplers/fitted_proposal.py).

The independence move is exact only if ``log_density`` is the density of what ``draw`` draws.
Both are checked against scipy's multivariate t (written independently): the density pointwise,
the draws by the probability of half-spaces and by a Kolmogorov-Smirnov test of a projection.
"""

import numpy as np
import pytest
from scipy import stats

from samplers import fitted_proposal as fp


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
