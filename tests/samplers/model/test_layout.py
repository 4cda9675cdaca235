"""Helpers that ``bayes_dp`` keeps in numpy beside the kernels' own: the two agree."""

import numpy as np
import pytest

from bayes_dp.core.likelihoods import rho_max
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


def test_rho_max_broadcasts_like_numpy():
    tau = np.array([0.0, 0.1, 0.5])[None, :, None]
    n0 = np.array([10.0, 200.0])[:, None, None]
    got = rho_max(tau, n0, 30)
    assert got.shape == (2, 3, 1)
    want = np.sqrt((1 + (n0 - 1) * tau) * (1 + 29 * tau) / (n0 * 30))
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert np.ndim(rho_max(0.2, 5, 7)) == 0


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


def _sampler_imports():
    """(sub-package of a samplers module, sub-package it imports) for every relative import."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "samplers"
    out = set()
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).parts
        here = rel[0] if len(rel) > 1 else ""
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                if node.level == 1:
                    target = here
                else:
                    target = (node.module or "").split(".")[0]
                out.add((path.relative_to(root).as_posix(), here, target))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("samplers."):
                out.add((path.relative_to(root).as_posix(), here, node.module.split(".")[1]))
    return out


def test_samplers_subpackages_import_one_way():
    # numerics <- model <- {exact, mhaar}; neither sampler imports the other
    allowed = {
        "numerics": {"numerics"},
        "model": {"numerics", "model"},
        "exact": {"numerics", "model", "exact"},
        "mhaar": {"numerics", "model", "mhaar"},
        "": {"numerics", "model", "exact", "mhaar", ""},
    }
    imports = _sampler_imports()
    assert any(here == "exact" and target == "model" for _, here, target in imports)
    bad = [(f, t) for f, here, t in imports if t not in allowed[here]]
    assert not bad, bad


def test_ridge_step_keeps_s_eps_and_returns_its_log_jacobian():
    from samplers.model.moves import ridge_step

    # z = (log eps, logit s_1, logit s_2); s_2 fixed (s_z = -1)
    z = np.array([np.log(3.0), np.log(0.6 / 0.4)])
    s_z = np.array([1, -1])
    zp = np.empty(2)
    ok, ljac = ridge_step(z, s_z, 0.1, zp)
    assert ok
    eps, s = np.exp(z[0]), 0.6
    eps_p, s_p = np.exp(zp[0]), 1 / (1 + np.exp(-zp[1]))
    assert eps_p * s_p == pytest.approx(eps * s, rel=1e-13)
    assert eps_p == pytest.approx(eps * np.exp(0.1), rel=1e-13)
    # the map (log eps, logit s) -> (log eps + u, logit(s e^-u)) has Jacobian
    # d logit(s') / d logit(s) = (1 - s) / (1 - s'), by finite differences here
    h = 1e-6
    zq = np.empty(2)
    ridge_step(z + np.array([0.0, h]), s_z, 0.1, zq)
    assert (zq[1] - zp[1]) / h == pytest.approx(np.exp(ljac), rel=1e-5)
    # a step that would take s past 1 is refused
    assert not ridge_step(z, s_z, -1.0, zp)[0]


def test_log_sum_exp_helpers_match_scipy():
    from scipy.special import logsumexp as ref

    from samplers.numerics.logsum import logaddexp, logsumexp, lse_push

    rng = np.random.default_rng(1)
    x = rng.normal(0.0, 30.0, 50)
    assert logsumexp(x) == pytest.approx(ref(x), rel=1e-13)
    assert logsumexp(np.full(3, -np.inf)) == -np.inf
    assert logaddexp(700.0, 699.0) == pytest.approx(np.logaddexp(700.0, 699.0), rel=1e-15)
    m, acc = -np.inf, 0.0
    for v in x:
        m, acc = lse_push(m, acc, v)
    assert m + np.log(acc) == pytest.approx(ref(x), rel=1e-13)
