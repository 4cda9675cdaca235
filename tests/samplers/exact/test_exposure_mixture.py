"""The exact sampler's exposure mixture against the quadrature reference of ``tests/reference``.

Per base: pi * (band mass of R_s(eps, delta)) / |R_s| + (1 - pi) * (mass of R(kappa eps, delta))
/ |R(kappa eps, delta)|. The reference integrates with regularised incomplete beta functions and
shares no code with the kernels; both are deterministic quadratures of the same integral, so
they agree to the quadrature error (the binomial kernels match the reference to ~1e-9 in log,
``tests/samplers/model/test_binomial_likelihood.py``): tolerance 1e-7 in log.
"""

import math

import numpy as np
import pytest

from samplers.exact import chain as exact
from samplers.exact import driver
from samplers.model.codes import LIK_BINOMIAL, LIK_EXPOSURE_MIXTURE

from tests.reference import log_marginal_likelihood
from tests.reference.mixture import mixture_log_lik

DELTA = 1e-5


def _model(fp, n_neg, fn, n_pos, grp, g_lik, **kw):
    n = len(fp)
    J = len(g_lik)
    return driver.build_model(
        np.asarray(fp),
        np.broadcast_to(n_neg, n),
        np.asarray(fn),
        np.broadcast_to(n_pos, n),
        np.asarray(grp),
        g_lik=g_lik,
        g_sidx=list(range(J)),
        g_tau=[0.0] * J,
        g_rho=[0.0] * J,
        g_tau_free=[False] * J,
        g_rho_free=[False] * J,
        s_fixed=[np.nan] * J,
        delta=DELTA,
        eps_prior=(0, 10.0, 0.0),
        s_prior=(1.0, 1.0),
        tau_prior=(1.0, 1.0),
        **kw,
    )


def _logit(p):
    return math.log(p / (1 - p))


@pytest.mark.parametrize(
    "eps,s,pi,kappa", [(2.0, 0.3, 0.2, 0.1), (4.0, 0.7, 0.9, 0.01), (0.5, 0.05, 0.5, 0.5)]
)
def test_per_base_likelihood_matches_the_reference(eps, s, pi, kappa):
    fp, fn = [3, 16, 2, 15, 5, 0], [1, 15, 0, 17, 20, 32]
    m, _, names, base_map = _model(fp, 32, fn, 32, np.zeros(6, int), [LIK_EXPOSURE_MIXTURE])
    assert names == ["eps", ("s", 0), ("pi", 0), ("kappa", 0)]
    u = math.log(kappa) / math.log(1e-15)  # kappa = 1e-15^u, u ~ Beta(1, 1)
    z = np.array([math.log(eps), _logit(s), _logit(pi), _logit(u)])
    llb = np.empty(m.b_grp.size)
    lp = exact.log_posterior(z, m, None, llb, np.empty(0))
    ref = np.array(
        [
            mixture_log_lik(x, 32, y, 32, eps, s, pi, kappa, DELTA)
            for x, y in zip(fp, fn, strict=True)
        ]
    )
    np.testing.assert_allclose(llb[base_map[:, 1]], ref, rtol=0, atol=1e-7)
    # the log posterior adds the priors in z, up to their constants: HalfNormal(10) on eps
    # (with the Jacobian eps), Beta(1, 1) on s, pi and u in logit coordinates (v (1 - v))
    log_prior = (-(eps**2) / 200 + math.log(eps)) + sum(math.log(v * (1 - v)) for v in (s, pi, u))
    assert lp == pytest.approx(ref.sum() + log_prior, abs=1e-6)


def test_shared_block_quadrature_and_fixed_parameters():
    """Many bases of one size go through the block quadrature (``Blocks``); a second, binomial
    group is left alone by the mixture; pi and kappa fixed are not coordinates of z."""
    rng = np.random.default_rng(3)
    n = 200
    fp = rng.binomial(32, 0.1, n)
    fn = np.where(np.arange(n) < 20, rng.binomial(32, 0.05, n), rng.binomial(32, 0.9, n))
    grp = (np.arange(n) % 2).astype(np.int64)
    m, _, names, base_map = _model(
        fp,
        32,
        fn,
        32,
        grp,
        [LIK_EXPOSURE_MIXTURE, LIK_BINOMIAL],
        g_pi=[0.15, 0.5],
        g_kappa=[0.05, 0.1],
        g_pi_free=[False, False],
        g_kappa_free=[False, False],
    )
    assert m.Q is not None and m.Q.k.shape[0] > 0
    assert names == ["eps", ("s", 0), ("s", 1)]
    eps, s0, s1 = 3.0, 0.4, 0.6
    z = np.array([math.log(eps), _logit(s0), _logit(s1)])
    llb = np.empty(m.b_grp.size)
    exact.log_posterior(z, m, None, llb, np.empty(0))
    rows = np.unique(base_map[:, 1], return_index=True)[1]
    for i in rows[:: max(1, rows.size // 12)]:
        r = base_map[i, 1]
        x, y = int(fp[i]), int(fn[i])
        if grp[i] == 0:
            want = mixture_log_lik(x, 32, y, 32, eps, s0, 0.15, 0.05, DELTA)
        else:  # the binomial group: the band alone
            want = log_marginal_likelihood(x, 32, y, 32, eps, s1, DELTA)
        assert llb[r] == pytest.approx(float(want), abs=1e-7)


def test_designed_bases_model_is_unchanged_by_the_mixture_fields():
    """A binomial-only model has no mixture coordinates and n_mix = 0 (the mixture code is
    skipped), so its log posterior is the band's alone."""
    m, _, names, _ = _model([3, 5], 50, [10, 20], 50, [0, 0], [LIK_BINOMIAL])
    assert names == ["eps", ("s", 0)] and m.n_mix == 0
