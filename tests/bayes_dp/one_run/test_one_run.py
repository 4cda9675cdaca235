"""One-run audits (bayes_dp.one_run.core): the Steinke et al. bound, the likelihood, the
posterior."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

import bayes_dp as bdp
from bayes_dp.one_run.core import one_run_log_likelihood

from tests._support.mc_error import prior_calibration


def _naive_p_value(m, r, v, eps, delta):
    """Steinke et al.'s p-value written out term by term (plain loops, no vectorisation)."""
    q = math.exp(eps) / (1 + math.exp(eps))
    tail = sum(stats.binom.pmf(k, r, q) for k in range(v, r + 1))
    best = 0.0
    for i in range(1, v + 1):
        window = sum(stats.binom.pmf(k, r, q) for k in range(v - i, v))
        best = max(best, window / i)
    return min(tail + 2 * m * delta * best, 1.0)


@pytest.mark.parametrize(("m", "r", "v", "delta"), [(1000, 100, 90, 1e-5), (200, 60, 50, 1e-3)])
def test_bound_matches_a_naive_implementation(m, r, v, delta):
    got = bdp.one_run_epsilon_bound(bdp.OneRunCounts(m, r, v), delta=delta)[0]
    ref = optimize.brentq(lambda e: _naive_p_value(m, r, v, e, delta) - 0.05, 0.0, 20.0)
    assert got == pytest.approx(ref, abs=1e-6)


def test_bound_without_delta_is_the_logit_of_clopper_pearson():
    c = bdp.OneRunCounts(m=[1000, 1000, 500], r=[1000, 100, 500], v=[1000, 90, 300])
    ref = special.logit(stats.beta.ppf(0.05, c.v, c.r - c.v + 1))
    np.testing.assert_allclose(bdp.one_run_epsilon_bound(c), ref, rtol=1e-9)
    # more delta, smaller bound; nothing to reject, 0
    assert bdp.one_run_epsilon_bound(c, delta=1e-4)[1] < ref[1]
    assert bdp.one_run_epsilon_bound(bdp.OneRunCounts(100, 100, 50))[0] == 0.0


def test_counts_validate():
    with pytest.raises(ValueError, match="`v` must be <= `r`; found v=5 > r=4 at row 0"):
        bdp.OneRunCounts(10, 4, 5)
    with pytest.raises(ValueError, match="`r` must be <= `m`"):
        bdp.OneRunCounts(3, 4, 1)
    with pytest.raises(ValueError, match="same length"):
        bdp.OneRunCounts(10, [4, 5], [1, 2, 3])
    with pytest.raises(TypeError, match="`counts` must be a OneRunCounts"):
        bdp.one_run_epsilon_bound((10, 4, 2))


@pytest.mark.parametrize(("eps", "s"), [(1.0, 0.0), (2.0, 0.5), (0.7, 0.999999), (3.0, 1.0)])
def test_likelihood_matches_quadrature_of_the_binomial(eps, s):
    c = bdp.OneRunCounts(m=[400, 400], r=[120, 60], v=[90, 40])
    lo, hi = special.expit(s * eps), special.expit(eps)
    ref = 0.0
    for r, v in zip(c.r, c.v, strict=True):
        pmf = lambda p, r=r, v=v: p**v * (1 - p) ** (r - v)  # noqa: E731
        val = pmf(hi) if hi - lo < 1e-9 else integrate.quad(pmf, lo, hi)[0] / (hi - lo)
        ref += math.log(val)
    assert float(one_run_log_likelihood(eps, s, c)) == pytest.approx(ref, rel=1e-6)


def test_posterior_matches_one_dimensional_quadrature():
    c = bdp.OneRunCounts(500, 200, 140)
    prior = bdp.Prior(eps=bdp.HalfNormal(3.0), s=1.0)
    post = bdp.estimate_one_run(c, prior=prior, seed=0, draws=5000)
    assert post.var_names == ["eps"]

    def dens(e):
        return math.exp(
            stats.halfnorm.logpdf(e, scale=3.0) + stats.binom.logpmf(140, 200, special.expit(e))
        )

    z = integrate.quad(dens, 0, 10, points=[0.85])[0]
    for q in (0.05, 0.5, 0.95):
        x = optimize.brentq(lambda e, q=q: integrate.quad(dens, 0, e)[0] / z - q, 0.01, 5.0)
        # Monte Carlo error of a quantile of 20,000 independent draws: well below 0.02
        assert post.quantile(q) == pytest.approx(x, abs=0.02)


def _rr_coverage(n_audits, m, eps, seed):
    """Randomized response with known eps: each canary's bit is reported truthfully w.p.
    e^eps / (1 + e^eps); the guesser guesses the reported bit for every canary (optimal, s = 1).
    """
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_audits):
        v = _rr_guesses(rng, m, eps)
        post = bdp.estimate_one_run(
            bdp.OneRunCounts(m, m, v), prior=bdp.Prior(s=1.0), seed=rng, draws=1000
        )
        lo, hi = post.interval(0.9)
        hits += lo <= eps <= hi
    print(f"eps={eps}: coverage {hits}/{n_audits}")
    return hits / n_audits


def _rr_guesses(rng, m, eps):
    bits = rng.random(m) < 0.5
    truthful = rng.random(m) < special.expit(eps)
    reported = np.where(truthful, bits, ~bits)
    return int(np.sum(reported == bits))


def _rr_prior_calibration(n_audits, m, seed, scale=2.0):
    """Randomized response with eps drawn from the analysis prior HalfNormal(scale): coverage
    of the 90% intervals and PIT values against the two-sided criteria of
    tests/_support/mc_error.py (which prints their false-pass probabilities)."""
    prior = bdp.Prior(eps=bdp.HalfNormal(scale), s=1.0)

    def audit(rng, eps):
        v = _rr_guesses(rng, m, eps)
        return bdp.estimate_one_run(bdp.OneRunCounts(m, m, v), prior=prior, seed=rng, draws=500)

    return prior_calibration(n_audits, seed, audit, "eps", scale=scale)


def test_randomized_response_calibration_quick():
    # 400 audits (about 6 s): coverage 339-378 of 400 and mean z^2 in 0.78-1.25 (each side
    # false-fails with probability <= 5e-4); intervals 10% too narrow pass with probability
    # <= 0.58, 10% too wide <= 0.77, 80% intervals in place of 90% ones < 0.01
    _rr_prior_calibration(400, 500, seed=0)


@pytest.mark.slow
@pytest.mark.statistical
def test_randomized_response_calibration_truth_from_the_prior():
    # 2,000 audits (about 40 s): intervals 10% too narrow pass with probability < 0.001,
    # 10% too wide <= 0.003
    _rr_prior_calibration(2000, 1000, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_randomized_response_calibration_200_audits(eps):
    assert abs(_rr_coverage(200, 1000, eps, 1) - 0.9) <= 0.04
