"""Self-checks of the per-side dispersion of the brute-force reference
(``tests/reference/overdispersed.py``, ``tau_fp``): FP and FN each with their own dispersion.

Every check compares with a computation that shares no code with the per-side path: SciPy's
nested adaptive quadrature with SciPy's pmfs (the region masses), the binomial quadrature
reference ``posterior_grid`` (FP and FN binomial), and the shared-tau path of the same module
(its 2-D midpoint grid; equal dispersions on both sides).
"""

import numpy as np
import pytest
from scipy import integrate, special, stats

from tests.reference import posterior_grid
from tests.reference.overdispersed import (
    _log_region_masses,
    _region_geometry,
    overdispersed_posterior_bruteforce,
)

XS = np.linspace(0.02, 30.0, 3000)


def _scipy_masses(x, n0, y, n1, tau_fn, t):
    """Data mass inside and outside R(t, 0): FP binomial, FN beta-binomial (SciPy's pmfs),
    nested adaptive quadrature of the raw inequalities."""
    c = np.exp(t)
    phi = 1.0 / tau_fn - 1.0

    def g(b):
        return stats.betabinom.pmf(y, n1, b * phi, (1 - b) * phi)

    def lo(a):
        return min(max(1 - c * a, (1 - a) / c, 0.0), 1.0)

    def up(a):
        return 1.0 - lo(1.0 - a)

    def inner(a):
        lo_a, up_a = lo(a), up(a)
        if up_a <= lo_a:
            return 0.0
        return integrate.quad(g, lo_a, up_a, epsabs=0, epsrel=1e-10, limit=200)[0]

    kinks = sorted({p for p in (1 / (1 + c), 1 / c, 1 - 1 / (1 + c), 1 - 1 / c) if 0 < p < 1})
    total = integrate.quad(g, 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0]

    def fa(a):
        return stats.binom.pmf(x, n0, a)

    mass_in = integrate.quad(
        lambda a: fa(a) * inner(a), 0, 1, points=kinks, epsabs=0, epsrel=1e-9, limit=400
    )[0]
    all_mass = total / (n0 + 1)  # int_0^1 binom.pmf(x, n0, a) da = 1 / (n0 + 1)
    return mass_in, all_mass - mass_in


@pytest.mark.parametrize("x,n0,y,n1,tau_fn", [(3, 32, 24, 32, 0.04), (1, 20, 9, 20, 0.1)])
def test_region_masses_match_scipy_nested_quadrature(x, n0, y, n1, tau_fn):
    # the tables the per-side path builds its band masses from. Discretization error (midpoint
    # rule in alpha, trapezoid in beta), O(1 / m^2): at m = 300 measured at most 1.1e-5
    # relative inside and 1.8e-3 outside (a small outside mass, t = 3 with x = 1 of 20), 4 times
    # less at m = 600; the tolerances are twice those
    t_grid = np.array([0.3, 1.0, 1.8, 3.0])
    log_in, log_out = _log_region_masses(
        [(x, n0, 0.0)], y, n1, tau_fn, _region_geometry(t_grid, 300)
    )
    const = special.comb(n0, x) * special.comb(n1, y)  # the reference leaves it out
    for i, t in enumerate(t_grid):
        m_in, m_out = _scipy_masses(x, n0, y, n1, tau_fn, t)
        got_in, got_out = np.exp(log_in[i, 0]) * const, np.exp(log_out[i, 0]) * const
        assert abs(got_in / m_in - 1) < 2.5e-5, (t, got_in, m_in)
        assert abs(got_out / m_out - 1) < 4e-3, (t, got_out, m_out)


@pytest.mark.parametrize(
    "counts",
    [([3], [32], [20], [32]), ([2, 3, 4, 5], [32] * 4, [18, 20, 22, 22], [32] * 4)],
)
def test_binomial_on_both_sides_matches_the_binomial_reference(counts):
    # dispersion 0 on both sides is the binomial: the posterior of eps (delta 0, HalfNormal(10),
    # s ~ U(0, 1)) agrees with the binomial quadrature to 6e-4 in its CDF (measured 1e-4)
    gp = posterior_grid(counts, 0.0, ("halfnormal", 10.0))
    got = overdispersed_posterior_bruteforce(*counts, "beta_binomial", ("fixed", 0.0), tau_fp=0.0)
    assert np.abs(got.eps_cdf(XS) - gp.eps_cdf(XS)).max() < 6e-4
    qs = np.array([0.05, 0.5, 0.95])
    ref = np.array([gp.eps_quantile(q) for q in qs])
    assert np.allclose(got.eps_quantile(qs), ref, rtol=2e-3)
    s = np.array([0.2, 0.5, 0.9])
    assert np.abs(got.s_cdf(s) - np.array([gp.s_cdf(v) for v in s])).max() < 6e-4


@pytest.mark.parametrize("tau", [("fixed", 0.05), ("beta", 1.0, 20.0)])
def test_equal_dispersions_match_the_shared_tau_path(tau):
    # FP and FN at one tau, per side (1-D tables) against the shared path (2-D midpoint grid at
    # m = 500, whose own error is about 1e-3 in the CDF): CDFs within 2e-3, tau means within 1e-4
    fp, n0, fn, n1 = [3, 1, 5], [20] * 3, [6, 9, 4], [20] * 3
    ref = overdispersed_posterior_bruteforce(fp, n0, fn, n1, "beta_binomial", tau, m=500, n_tau=4)
    tau_fp = tau[1] if tau[0] == "fixed" else "shared"
    got = overdispersed_posterior_bruteforce(
        fp, n0, fn, n1, "beta_binomial", tau, tau_fp=tau_fp, n_tau=4
    )
    print("max CDF difference", np.abs(got.eps_cdf(XS) - ref.eps_cdf(XS)).max())
    assert np.abs(got.eps_cdf(XS) - ref.eps_cdf(XS)).max() < 2e-3
    assert abs(got.mean("tau") - ref.mean("tau")) < 1e-4
    assert np.allclose(got.node_weights, ref.node_weights, atol=2e-3)


def test_fn_dispersion_changes_the_posterior_and_free_tau_mixes_the_fixed_ones():
    # a per-base tau_fn moves the posterior off the binomial's; with tau_fn free, the posterior
    # of eps is the mixture of the fixed-tau posteriors at the tau nodes with the node weights
    # (a check of the nodes' normalizing constants), to rounding
    fp, n0, fn, n1 = [3, 2, 4, 3], [32] * 4, [30, 12, 28, 14], [32] * 4
    kw = {"tau_fp": 0.0, "m": 200, "n_eps": 400}
    binom = overdispersed_posterior_bruteforce(
        fp, n0, fn, n1, "beta_binomial", ("fixed", 0.0), **kw
    )
    disp = overdispersed_posterior_bruteforce(
        fp, n0, fn, n1, "beta_binomial", ("fixed", [0.0, 0.1, 0.1, 0.1]), **kw
    )
    assert abs(disp.eps_quantile(0.5) - binom.eps_quantile(0.5)) > 0.05
    assert np.isclose(disp.tau_nodes[0], 0.075)
    free = overdispersed_posterior_bruteforce(
        fp, n0, fn, n1, "beta_binomial", ("beta", 1.0, 20.0), n_tau=4, **kw
    )
    mix = sum(
        w
        * overdispersed_posterior_bruteforce(
            fp, n0, fn, n1, "beta_binomial", ("fixed", t), **kw
        ).eps_cdf_values
        for t, w in zip(free.tau_nodes, free.node_weights, strict=True)
    )
    assert np.abs(mix - free.eps_cdf_values).max() < 1e-10
    assert np.isclose(free.node_weights.sum(), 1.0)


def test_per_side_bad_input():
    with pytest.raises(ValueError, match="tau_fp"):
        overdispersed_posterior_bruteforce(
            [1], [10], [2], [10], "bivariate_normal", ("fixed", 0.1), tau_fp=0.0
        )
    with pytest.raises(ValueError, match="tau_fp"):
        overdispersed_posterior_bruteforce(
            [1], [10], [2], [10], "beta_binomial", ("fixed", 0.1), tau_fp=1.5
        )
    with pytest.raises(ValueError, match="tau"):
        overdispersed_posterior_bruteforce(
            [1], [10], [2], [10], "beta_binomial", ("uniform", 0.1), tau_fp=0.0
        )
