"""The Gaussian LRT of Alg. 3 and the measurements of Alg. 4/5 against independent references."""

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

import mia


# -- brute-force reference: log-LR from scipy log-pdfs, threshold by root finding ----------------
def _brute_lrt(points, mu0, sd0, mu1, sd1, alpha):
    """Decisions ``llr(l) > t`` with ``t`` solving ``P_H0(llr > t) = alpha`` numerically."""

    def llr(x):
        return stats.norm.logpdf(x, mu1, sd1) - stats.norm.logpdf(x, mu0, sd0)

    # The log-LR is a quadratic in x; recover its coefficients from three evaluations.
    xs = np.array([mu0 - 1.0, mu0, mu0 + 1.0]) * 1.0
    coef = np.polyfit(xs, llr(xs), 2)
    if abs(coef[0]) < 1e-12 * max(1.0, abs(coef[1])):
        coef[0] = 0.0

    def p_reject(t):
        # H0 probability of {llr > t}, from the real roots of llr(x) = t.
        c = coef.copy()
        c[-1] -= t
        if c[0] == 0.0:
            root = -c[2] / c[1]
            return stats.norm.sf(root, mu0, sd0) if c[1] > 0 else stats.norm.cdf(root, mu0, sd0)
        roots = np.roots(c)
        roots = np.sort(roots[np.abs(roots.imag) < 1e-12].real)
        if roots.size < 2:  # llr never crosses t
            return 1.0 if c[0] > 0 else 0.0
        lo, hi = roots
        inside = stats.norm.cdf(hi, mu0, sd0) - stats.norm.cdf(lo, mu0, sd0)
        return inside if c[0] < 0 else 1.0 - inside

    ts = np.linspace(-60, 60, 2401)
    ps = np.array([p_reject(t) for t in ts])
    i = np.flatnonzero(ps < alpha)[0]
    t = brentq(lambda t: p_reject(t) - alpha, ts[i - 1], ts[i], xtol=1e-13)
    vals = llr(points)
    return vals > t, vals - t


CASES = {
    "s0>s1": (2.0, 1.5, 0.5, 0.7),
    "s0<s1": (2.0, 0.6, 1.2, 1.3),
    "s0<s1, mu1>mu0": (0.3, 0.2, 0.9, 0.5),
    "s0>s1, close means": (1.0, 1.0, 1.1, 0.4),
    "nearly equal": (1.0, 1.0, 0.0, 1.0 + 1e-9),
}


def _shadows(rng, mu, sd, m):
    z = rng.standard_normal(m)
    z = (z - z.mean()) / z.std(ddof=1)
    return mu + sd * z  # sample mean and sd exactly (mu, sd) up to rounding


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("alpha", [0.01, 0.1, 0.5, 0.9])
def test_learn_and_decide_equals_brute_force_lrt(case, alpha):
    rng = np.random.default_rng(1)
    mu0, sd0, mu1, sd1 = CASES[case]
    out = _shadows(rng, mu0, sd0, 50)
    inn = _shadows(rng, mu1, sd1, 40)
    m0, s0 = out.mean(), out.std(ddof=1)
    m1, s1 = inn.mean(), inn.std(ddof=1)
    points = np.concatenate([rng.normal(m0, 3 * s0, 3000), rng.normal(m1, 3 * s1, 3000)])
    got = mia.learn_and_decide(points, out, inn, alpha)
    want, margin = _brute_lrt(points, m0, s0, m1, s1, alpha)
    clear = np.abs(margin) > 1e-7
    assert clear.mean() > 0.99
    np.testing.assert_array_equal(got[clear], want[clear])


@pytest.mark.parametrize("alpha", [0.05, 0.3])
@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_equal_variances_one_sided_threshold(alpha, direction):
    out = np.array([0.0, 1.0, 2.0, 3.0])
    inn = out + direction * 1.5  # identical sample variance
    assert out.var(ddof=1) == inn.var(ddof=1)
    mu0, sd0 = out.mean(), out.std(ddof=1)
    pts = np.linspace(-10, 10, 4001)
    got = mia.learn_and_decide(pts, out, inn, alpha)
    if direction > 0:
        want = pts >= stats.norm.ppf(1 - alpha, mu0, sd0)
    else:
        want = pts <= stats.norm.ppf(alpha, mu0, sd0)
    np.testing.assert_array_equal(got, want)
    # the rejection probability under H0 is exactly alpha
    assert np.isclose(stats.norm.sf(stats.norm.ppf(1 - alpha, mu0, sd0), mu0, sd0), alpha)


def test_identical_fits_never_reject():
    out = np.array([0.0, 1.0, 2.0])
    assert not mia.learn_and_decide(np.linspace(-5, 5, 11), out, out.copy(), 0.2).any()


@pytest.mark.parametrize("case", ["s0>s1", "s0<s1", "nearly equal"])
def test_size_is_alpha_under_fitted_h0(case):
    """P_H0(member) = alpha, by quadrature of the fitted H0 density over the decision grid."""
    rng = np.random.default_rng(2)
    mu0, sd0, mu1, sd1 = CASES[case]
    out, inn = _shadows(rng, mu0, sd0, 30), _shadows(rng, mu1, sd1, 30)
    grid = np.linspace(mu0 - 12 * sd0, mu0 + 12 * sd0, 200_001)
    dens = stats.norm.pdf(grid, out.mean(), out.std(ddof=1))
    for alpha in (0.05, 0.2):
        dec = mia.learn_and_decide(grid, out, inn, alpha)
        assert abs(np.trapezoid(dens * dec, grid) - alpha) < 2e-4


def test_scalar_and_broadcast():
    out, inn = [2.0, 2.2, 1.8, 2.1], [0.5, 0.7, 0.3, 0.6]
    assert mia.learn_and_decide(0.5, out, inn, 0.1) is True
    res = mia.learn_and_decide(np.full((2, 3), 0.5), out, inn, np.array([0.1, 0.2, 0.3]))
    assert res.shape == (2, 3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"loss": np.nan}, "`loss` must be finite"),
        ({"losses_out": [1.0, np.inf, 2.0]}, "`losses_out` must be finite"),
        ({"losses_in": [1.0]}, "at least 2"),
        ({"losses_out": [1.0]}, "at least 2"),
        ({"alpha": 0.0}, "`alpha` must lie in the open interval"),
        ({"alpha": 1.0}, "`alpha` must lie in the open interval"),
        ({"alpha": -0.1}, "`alpha`"),
        ({"losses_in": [1.0, 1.0, 1.0]}, "zero variance"),
    ],
)
def test_learn_and_decide_errors(kwargs, match):
    args = {"loss": 1.0, "losses_out": [1.0, 2.0, 3.0], "losses_in": [0.0, 0.5, 1.0], "alpha": 0.1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        mia.learn_and_decide(**args)


def test_alpha_type_error():
    with pytest.raises(TypeError, match="`alpha`"):
        mia.learn_and_decide(1.0, [1.0, 2.0], [0.0, 1.0], "0.1")


# -- Alg. 5 ---------------------------------------------------------------------------------------
def test_cross_fed_matches_loop_over_learn_and_decide():
    rng = np.random.default_rng(3)
    out, inn = rng.normal(2, 1, 15), rng.normal(0.5, 0.6, 12)
    alphas = [0.05, 0.3, 0.7]
    fp, fn = mia.cross_fed_counts(out, inn, alphas)
    for k, a in enumerate(alphas):
        fp_ref = sum(mia.learn_and_decide(out[j], np.delete(out, j), inn, a) for j in range(15))
        fn_ref = sum(not mia.learn_and_decide(inn[j], out, np.delete(inn, j), a) for j in range(12))
        assert (fp[k], fn[k]) == (fp_ref, fn_ref)
    assert fp.dtype == np.int64 and fn.shape == (3,)


def _exact_fnr(mu0, sd0, mu1, sd1, alpha):
    """Type-II error of the LRT with the true parameters, by quadrature under H1."""
    grid = np.linspace(min(mu0, mu1) - 15, max(mu0, mu1) + 15, 300_001)
    dec = mia.learn_and_decide(
        grid,
        _shadows(np.random.default_rng(0), mu0, sd0, 5),
        _shadows(np.random.default_rng(1), mu1, sd1, 5),
        alpha,
    )
    return np.trapezoid(stats.norm.pdf(grid, mu1, sd1) * ~dec, grid)


@pytest.mark.parametrize(
    "params", [(2.0, 1.0, 0.0, 0.5), (1.0, 0.5, 0.0, 1.0), (1.0, 1.0, 0.0, 1.0)]
)
def test_cross_fed_rates_by_simulation(params):
    """Averaged over simulated bases, FPR ~ alpha and FNR ~ that of the exact test."""
    mu0, sd0, mu1, sd1 = params
    rng = np.random.default_rng(4)
    alpha, n, bases = 0.1, 100, 400
    fps, fns = [], []
    for _ in range(bases):
        fp, fn = mia.cross_fed_counts(rng.normal(mu0, sd0, n), rng.normal(mu1, sd1, n), [alpha])
        fps.append(fp[0])
        fns.append(fn[0])
    fpr, fnr = np.mean(fps) / n, np.mean(fns) / n
    assert abs(fpr - alpha) < 0.02
    assert abs(fnr - _exact_fnr(mu0, sd0, mu1, sd1, alpha)) < 0.03


def test_independent_counts_binomial_rates():
    """Alg. 4: with many independent shadow sets, FPR ~ alpha; each decision is the Alg. 3 test."""
    rng = np.random.default_rng(5)
    n0 = n1 = 2000
    t0, t1 = rng.normal(2, 1, n0), rng.normal(0, 0.5, n1)
    s0, s1 = rng.normal(2, 1, (n0 + n1, 50)), rng.normal(0, 0.5, (n0 + n1, 50))
    fp, fn = mia.independent_counts(t0, t1, s0, s1, [0.1])
    assert abs(fp[0] / n0 - 0.1) < 0.025
    assert abs(fn[0] / n1 - _exact_fnr(2, 1, 0, 0.5, 0.1)) < 0.03
    j = 7
    assert mia.learn_and_decide(t0[j], s0[j], s1[j], 0.1) == bool(
        mia.independent_counts(t0[j : j + 1], t1[:1], s0[[j, n0]], s1[[j, n0]], 0.1)[0][0]
    )


@pytest.mark.parametrize(
    "args, match",
    [
        (([1.0, 2.0], [0.0, 0.5, 1.0], [0.1]), "at least 3"),
        (([1.0, 2.0, np.nan], [0.0, 0.5, 1.0], [0.1]), "finite"),
        (([1.0, 2.0, 3.0], [0.0, 0.5, 1.0], [0.1, 1.5]), "`alphas`"),
        (([1.0, 2.0, 3.0], [0.0, 0.5, 1.0], []), "non-empty"),
        (([1.0, 1.0, 1.0, 2.0], [0.0, 0.5, 1.0], [0.1]), "zero variance"),
    ],
)
def test_cross_fed_errors(args, match):
    with pytest.raises(ValueError, match=match):
        mia.cross_fed_counts(*args)


def test_independent_counts_shape_error():
    with pytest.raises(ValueError, match="one row per target"):
        mia.independent_counts([1.0], [0.0], np.ones((3, 4)), np.ones((2, 4)), 0.1)


# -- LiRA statistic ------------------------------------------------------------------------------
def test_lira_logit_matches_direct_formula_and_logits():
    p = np.array([1e-8, 0.1, 0.5, 0.9, 1 - 1e-8])
    loss = -np.log(p)
    np.testing.assert_allclose(mia.lira_logit(loss), np.log(p / (1 - p)), rtol=1e-6)
    logits = np.array([[30.0, 0.0, -5.0], [0.0, 1.0, 2.0], [800.0, 0.0, 0.0]])
    labels = np.array([0, 1, 0])
    phi = mia.logit_confidence(logits, labels)
    pr = np.exp(logits[1] - logits[1].max())
    pr /= pr.sum()
    assert np.isclose(phi[1], np.log(pr[1] / (1 - pr[1])))
    assert np.isclose(phi[2], 800.0 - np.log(2.0))  # no overflow
    assert np.isfinite(mia.lira_logit(0.0))
    with pytest.raises(ValueError, match="`loss`"):
        mia.lira_logit(-1.0)
