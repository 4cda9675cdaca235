"""Helpers that ``bayes_dp`` keeps in numpy beside the kernels' own: the two agree."""

import numpy as np
import pytest

from bayes_dp.likelihoods import rho_max
from samplers.model.densities import dispersion, group_rho_max
from samplers.model.densities import rho_max as rho_max_kernel


@pytest.mark.parametrize("tau", [0.0, 1e-9, 0.003, 0.2, 0.9, 1.0])
def test_numpy_rho_max_equals_the_kernels(tau):
    n0 = np.array([1.0, 2.0, 37.0, 1000.0, 50_000.0])
    n1 = np.array([1.0, 500.0, 3.0, 1000.0, 7.0])
    want = np.array([rho_max_kernel(tau, a, b) for a, b in zip(n0, n1, strict=True)])
    np.testing.assert_array_equal(rho_max(tau, n0, n1), want)
    # closed form, independently: sqrt((1 + (N0 - 1) tau)(1 + (N1 - 1) tau) / (N0 N1))
    np.testing.assert_allclose(
        want, np.sqrt((1 + (n0 - 1) * tau) * (1 + (n1 - 1) * tau) / (n0 * n1)), rtol=1e-15
    )


def test_rho_max_at_tau_zero_and_one():
    # independent decisions: |rho| < 1 / sqrt(N0 N1); fully correlated ones: |rho| < 1
    assert rho_max_kernel(0.0, 4.0, 9.0) == pytest.approx(1.0 / 6.0, rel=1e-15)
    assert rho_max_kernel(1.0, 4.0, 9.0) == pytest.approx(1.0, rel=1e-15)


def test_dispersion_is_the_variance_factor_of_correlated_decisions():
    # Var(sum of n decisions with variance v, pairwise correlation tau) = n v (1 + (n - 1) tau)
    rng = np.random.default_rng(0)
    n, tau = 5, 0.3
    cov = np.full((n, n), tau) + (1 - tau) * np.eye(n)
    x = rng.multivariate_normal(np.zeros(n), cov, size=200_000).sum(axis=1)
    assert x.var() / n == pytest.approx(dispersion(float(n), tau), rel=0.02)
    assert dispersion(1.0, 0.7) == 1.0


def test_group_rho_max_is_the_smallest_over_the_groups_rows():
    from samplers.model.params import aux_params

    P = aux_params([3, 40, 10], [50, 1000, 20], [7, 250, 5], [60, 1000, 30])
    grp = np.array([0, 1, 0])
    tau = 0.05
    want = min(rho_max_kernel(tau, 50.0, 60.0), rho_max_kernel(tau, 20.0, 30.0))
    assert group_rho_max(tau, 0, grp, P) == want
    assert group_rho_max(tau, 1, grp, P) == rho_max_kernel(tau, 1000.0, 1000.0)
    assert group_rho_max(tau, 2, grp, P) == np.inf
