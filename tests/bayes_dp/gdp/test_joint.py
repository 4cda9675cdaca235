"""One posterior of mu from GDP scores, one-run audits and attack counts (bayes_dp.gdp.joint).

The count likelihood at eps_c = gdp_epsilon(mu, delta_c) is checked against the quadrature
reference of tests/reference/ (independent of the samplers' kernels).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import bayes_dp as bdp
from bayes_dp.gdp import core as gdp

from tests._support.mc_error import prior_calibration
from tests.reference import log_marginal_likelihood

Q = [0.05, 0.5, 0.95]
BASES = [(40, 1000, 250, 1000), (55, 1000, 200, 1000)]  # fp, n_neg, fn, n_pos


def _counts(bases=BASES):
    fp, n0, fn, n1 = (list(x) for x in zip(*bases, strict=True))
    return bdp.AttackCounts(fp=fp, n_neg=n0, fn=fn, n_pos=n1)


def _ref_count_log_lik(mu, s, delta_c, bases=BASES):
    eps = bdp.gdp_epsilon(mu, delta_c)
    return sum(log_marginal_likelihood(x, n0, y, n1, eps, s, delta_c) for x, n0, y, n1 in bases)


def _quantiles(x, log_post):
    w = np.exp(log_post - log_post.max())
    cdf = np.cumsum(w)
    return np.interp(Q, cdf / cdf[-1], x)


@pytest.mark.parametrize("s", [1.0, 0.5])
def test_counts_alone_match_quadrature_of_the_count_likelihood_at_eps_of_mu(s):
    delta_c = 1e-5
    post = bdp.estimate_gdp(_counts(), delta=1e-3, s=s, counts_delta=delta_c, seed=1)
    assert post.var_names == ["mu", "eps"]
    mu = np.linspace(1e-4, 6, 3001)
    ref = _quantiles(mu, _ref_count_log_lik(mu, s, delta_c) + stats.halfnorm.logpdf(mu, scale=5))
    np.testing.assert_allclose(post.quantile(Q, "mu"), ref, rtol=0.015)
    # eps is reported at delta (1e-3), not at the counts' delta
    np.testing.assert_allclose(post.draws("eps"), bdp.gdp_epsilon(post.draws("mu"), 1e-3))
    g = post.settings["groups"][0]
    assert g["kind"] == "counts" and g["name"] == "counts" and g["delta"] == delta_c


def test_scores_and_counts_combine_as_the_product_of_their_likelihoods():
    rng = np.random.default_rng(11)
    ev = bdp.gdp_evidence(rng.normal(0.8, 1, 300), rng.normal(0, 1, 300), bins=8)
    post = bdp.estimate_gdp([ev, _counts()], delta=1e-5, seed=2, fit_check=False)
    mu = np.linspace(1e-4, 3, 3001)
    a, b = ev.merged()
    log_z = gdp.laplace_log_marginal(mu, a, b)[0]  # checked against quadrature in test_gdp.py
    lp = log_z + _ref_count_log_lik(mu, 1.0, 1e-5) + stats.halfnorm.logpdf(mu, scale=5)
    np.testing.assert_allclose(post.quantile(Q, "mu"), _quantiles(mu, lp), rtol=0.015)
    # the product is narrower than the scores alone
    alone = bdp.estimate_gdp(ev, delta=1e-5, seed=2, fit_check=False)
    assert np.diff(post.interval(0.9, "mu"))[0] < np.diff(alone.interval(0.9, "mu"))[0]
    assert [g["kind"] for g in post.settings["groups"]] == ["gdp", "counts"]


def test_counts_delta_per_group_and_validation():
    c1 = bdp.Evidence(_counts(BASES[:1]), name="a")
    c2 = bdp.Evidence(_counts(BASES[1:]), name="b")
    post = bdp.estimate_gdp(
        [c1, c2], delta=1e-5, counts_delta={"a": 1e-5, "b": 1e-3}, seed=0, draws=500
    )
    assert [g["delta"] for g in post.settings["groups"]] == [1e-5, 1e-3]
    with pytest.raises(
        ValueError, match=r"`counts_delta` has no delta for count group\(s\) \['b'\]"
    ):
        bdp.estimate_gdp([c1, c2], delta=1e-5, counts_delta={"a": 1e-5})
    with pytest.raises(ValueError, match=r"`counts_delta` names no count group: \['z'\]"):
        bdp.estimate_gdp([c1], delta=1e-5, counts_delta={"a": 1e-5, "z": 1e-5})
    with pytest.raises(ValueError, match=r"`counts_delta\['a'\]` must be"):
        bdp.estimate_gdp([c1], delta=1e-5, counts_delta=0.0)
    with pytest.raises(ValueError, match="`counts_delta` is given"):
        bdp.estimate_gdp(bdp.OneRunCounts(100, 100, 70), delta=1e-5, counts_delta=1e-5)
    bvn = bdp.Evidence(_counts(), likelihood="bivariate_normal", name="c", fix={"tau": 0.0})
    with pytest.raises(ValueError, match="only likelihood='binomial' combines"):
        bdp.estimate_gdp(bvn, delta=1e-5)
    ev = bdp.gdp_evidence([1.0, 2.0, 3.0], [0.0, 1.5, 0.5], bins=2, name="a")
    with pytest.raises(ValueError, match="group names must differ"):
        bdp.estimate_gdp([ev, c1], delta=1e-5)
    with pytest.raises(ValueError, match="`strength` must be 'shared' or 'own'; found 'mine'"):
        bdp.gdp_evidence([1.0, 2.0], [0.0, 1.5], strength="mine")


def test_a_lone_score_group_with_its_own_strength_is_the_shared_model():
    # with one group, integrating its own s over the s cells is what the shared model does
    rng = np.random.default_rng(12)
    x_in, x_out = rng.normal(1.0, 1, 400), rng.normal(0, 1, 400)
    prior = bdp.Beta(2, 2)
    shared = bdp.estimate_gdp(x_in, x_out, delta=1e-5, s=prior, seed=3, fit_check=False)
    own_ev = bdp.gdp_evidence(x_in, x_out, strength="own", name="can")
    own = bdp.estimate_gdp(own_ev, delta=1e-5, s=prior, seed=4, fit_check=False)
    assert own.var_names == ["mu", "eps", "s_can", "mu_can"]
    for a, b in (("mu", "mu"), ("s", "s_can"), ("mu_gdp", "mu_can")):
        sd = np.std(shared.draws(a))
        for q in Q:
            assert abs(shared.quantile(q, a) - own.quantile(q, b)) < 0.12 * sd, (a, q)
    assert np.all(own.draws("mu_can") <= own.draws("mu") + 1e-12)
    assert np.all(own.draws("mu_can") >= own.draws("s_can") * own.draws("mu") - 1e-12)


@pytest.mark.slow
@pytest.mark.statistical
def test_own_strengths_of_count_groups_match_two_dimensional_quadrature():
    # two count groups, each with its own s ~ Beta(1, 1): mu's posterior is
    # p(mu) prod_g int L_g(eps_c(mu), s) ds, and s_a's marginal weights group a's s by it
    delta_c = 1e-3
    bases = {"a": [(40, 500, 150, 500)], "b": [(10, 500, 300, 500)]}
    evs = [bdp.Evidence(_counts(b), name=n, strength="own") for n, b in bases.items()]
    post = bdp.estimate_gdp(evs, delta=1e-5, s=bdp.Beta(1, 1), counts_delta=delta_c, seed=1)
    assert post.var_names == ["mu", "eps", "s_a", "s_b"]
    mu = np.linspace(1e-3, 8, 400)
    sg = (np.arange(200) + 0.5) / 200
    tabs = {n: _ref_count_log_lik(mu[:, None], sg[None, :], delta_c, b) for n, b in bases.items()}
    lp = stats.halfnorm.logpdf(mu, scale=5)
    for t in tabs.values():
        lp = lp + special.logsumexp(t, axis=1)
    np.testing.assert_allclose(post.quantile(Q, "mu"), _quantiles(mu, lp), rtol=0.04)
    t = tabs["a"]
    joint = np.exp(lp[:, None] - lp.max() + t - special.logsumexp(t, axis=1)[:, None])
    marg = joint.sum(axis=0)
    np.testing.assert_allclose(
        post.quantile(Q, "s_a"), _quantiles(sg, np.log(marg)), rtol=0.05, atol=0.005
    )


def _one_run_coverage(mu, n_audits, m, seed):
    """Share of 90% intervals of mu that cover the truth, for one-run audits of a Gaussian
    mechanism simulated directly: each canary's bit b ~ Bernoulli(1/2) is released as
    N(mu b, 1), and the optimal guess is b = [y > mu / 2] (accuracy Phi(mu / 2))."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_audits):
        b = rng.random(m) < 0.5
        y = rng.normal(mu * b, 1.0)
        v = int(np.sum((y > mu / 2) == b))
        post = bdp.estimate_gdp(bdp.OneRunCounts(m, m, v), delta=1e-5, seed=rng, draws=500)
        lo, hi = post.interval(0.9, "mu")
        hits += lo <= mu <= hi
    return hits / n_audits


def _one_run_prior_calibration(n_audits, m, seed, scale=2.0):
    """As _one_run_coverage with mu drawn from the analysis prior HalfNormal(scale): coverage
    and PIT values against the two-sided criteria of tests/_support/mc_error.py."""

    def audit(rng, mu):
        b = rng.random(m) < 0.5
        v = int(np.sum((rng.normal(mu * b, 1.0) > mu / 2) == b))
        return bdp.estimate_gdp(
            bdp.OneRunCounts(m, m, v),
            delta=1e-5,
            mu_prior=bdp.HalfNormal(scale),
            seed=rng,
            chains=2,
            draws=500,
        )

    return prior_calibration(n_audits, seed, audit, "mu", scale=scale)


def test_one_run_evidence_under_gdp_is_calibrated_quick():
    # 300 audits (about 8 s): coverage 252-286 of 300 and mean z^2 in 0.75-1.30 (each side
    # false-fails with probability <= 5e-4); 10% too narrow intervals pass with probability
    # <= 0.72, 80% intervals in place of 90% ones < 0.01
    _one_run_prior_calibration(300, 1000, seed=21)


@pytest.mark.slow
@pytest.mark.statistical
def test_one_run_evidence_under_gdp_calibration_truth_from_the_prior():
    # 2,000 audits (about 1 min): 10% too narrow intervals pass with probability < 0.001,
    # 10% too wide <= 0.003
    _one_run_prior_calibration(2000, 1000, seed=22)


@pytest.mark.slow
@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_one_run_evidence_under_gdp_calibration_200_audits(mu):
    assert abs(_one_run_coverage(mu, 200, 1000, seed=22) - 0.9) <= 0.04
