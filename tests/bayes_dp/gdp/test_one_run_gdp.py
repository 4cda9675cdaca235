"""One-run audits under Gaussian DP: the accuracy of the most confident guesses and the f-DP bound.

``one_run_accuracy_gdp`` against a root found by scipy and against simulation of the Gaussian
pair; ``one_run_gdp_bounds`` against values computed with jax_privacy's implementation of the
f-DP one-run audit (Mahloujifar, Melis and Chaudhuri, arXiv 2410.22235), run outside the repo.
"""

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

import bayes_dp as bdp
from bayes_dp.core.one_run_bound import (
    _gdp_rejects,
    one_run_accuracy_gdp,
    one_run_bounds,
    one_run_gdp_bounds,
)
from bayes_dp.gdp.core import _one_run_log_lik, _one_run_shift

#: (m, guesses, right, significance, delta, eps, mu) from jax_privacy's
#: ``jax_privacy/auditing.py::_epsilon_one_run_fdp(0.0, m, guesses, right, significance, delta)``
#: (google-deepmind/jax_privacy, snapshot 8967688, the module imported by path with
#: dp-accounting 0.6.0 in a separate venv, no jax), and mu = 1 / dp_accounting's
#: ``get_sigma_gaussian(eps, delta)``: the Gaussian curve whose eps at delta is that eps.
JAX_PRIVACY_FDP = [
    (1000, 100, 95, 0.05, 1e-05, 3.323300, 0.786812),
    (1000, 100, 95, 0.01, 1e-05, 2.709681, 0.657295),
    (1000, 1000, 700, 0.05, 1e-05, 1.371980, 0.357211),
    (2000, 100, 89, 0.05, 1e-05, 2.132610, 0.531195),
    (2000, 400, 300, 0.01, 1e-05, 1.137730, 0.301434),
    (10000, 500, 450, 0.05, 1e-05, 2.586213, 0.630689),
    (200, 50, 40, 0.01, 1e-05, 0.852678, 0.231799),
    (2000, 2000, 1400, 0.05, 1e-05, 1.375817, 0.358115),
    (1000, 100, 60, 0.05, 1e-05, 0.043523, 0.015267),
    (1000, 100, 60, 0.01, 1e-05, 0.0, 0.0),
    (1000, 100, 95, 0.05, 0.001, 2.338213, 0.786812),
    (2000, 400, 300, 0.05, 0.001, 0.918450, 0.361638),
    (200, 50, 40, 0.05, 0.001, 0.863333, 0.343320),
]


def _accuracy_by_root(mu, rate):
    """A(mu, rate) with t from scipy's brentq on the rate equation (no shared code)."""
    if rate == 1.0:
        return stats.norm.cdf(mu / 2)

    def excess(t):
        return stats.norm.cdf(mu / 2 - t) + stats.norm.cdf(-mu / 2 - t) - rate

    t = optimize.brentq(excess, 0.0, 50.0, xtol=1e-14)
    a, b = stats.norm.cdf(mu / 2 - t), stats.norm.cdf(-mu / 2 - t)
    return a / (a + b)


@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("rate", [1.0, 0.5, 0.05, 1e-3])
def test_accuracy_matches_the_root_of_the_rate_equation(mu, rate):
    assert one_run_accuracy_gdp(mu, rate) == pytest.approx(_accuracy_by_root(mu, rate), abs=1e-10)


def test_accuracy_at_every_guess_is_phi_of_half_mu_and_grows_as_guesses_drop():
    mu = np.array([0.0, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(one_run_accuracy_gdp(mu, 1.0), special.ndtr(mu / 2), rtol=1e-12)
    acc = one_run_accuracy_gdp(1.0, np.array([1.0, 0.5, 0.2, 0.05, 0.01]))
    assert np.all(np.diff(acc) > 0)


def test_accuracy_is_what_the_most_confident_guesses_reach_on_the_gaussian_pair():
    # m = 400,000 fair coins through N(mu b, 1); the r most confident guesses (largest
    # |x - mu / 2|): their accuracy within 4 binomial standard errors of A(mu, r / m)
    rng = np.random.default_rng(3)
    m, mu = 400_000, 1.0
    b = rng.random(m) < 0.5
    x = rng.normal(mu * b, 1.0)
    order = np.argsort(-np.abs(x - mu / 2))
    right = (x > mu / 2) == b
    for rate in (0.02, 0.2, 1.0):
        r = int(rate * m)
        acc = right[order[:r]].mean()
        a = one_run_accuracy_gdp(mu, rate)
        assert abs(acc - a) < 4 * math.sqrt(a * (1 - a) / r)


@pytest.mark.parametrize("row", JAX_PRIVACY_FDP)
def test_fdp_bound_matches_jax_privacy(row):
    m, r, v, sig, delta, eps, mu = row
    got = one_run_gdp_bounds(m, r, v, 1.0 - sig)[0]
    assert got == pytest.approx(mu, abs=2e-6)
    if mu > 0:
        assert bdp.gdp_epsilon(got, delta) == pytest.approx(eps, abs=2e-5)


def test_fdp_bound_at_large_m_asks_for_the_accuracy_of_the_top_level_share():
    # The f-DP analysis does not use concentration across coins: at large m the smallest
    # accuracy that rejects mu is A(mu, level * r / m), not A(mu, r / m) (the accuracy the r
    # most confident guesses reach). Recorded in docs/validation/one_run_gdp.md.
    m, level = 400_000, 0.05
    for mu, rate in ((0.5, 0.2), (1.0, 1.0), (1.0, 0.05)):
        r = int(rate * m)
        lo, hi = r // 2, r
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if _gdp_rejects(mu, m, r, mid, level) else (mid, hi)
        assert hi / r == pytest.approx(one_run_accuracy_gdp(mu, level * rate), abs=2e-3)
        assert hi / r > one_run_accuracy_gdp(mu, rate) + 0.04


def test_pairs_convert_the_coins_bound_back():
    m, r, v = [2000, 2000], [100, 400], [95, 330]
    np.testing.assert_allclose(
        one_run_gdp_bounds(m, r, v, 0.95, pairs=True),
        one_run_gdp_bounds(m, r, v, 0.95) / math.sqrt(2.0),
    )
    np.testing.assert_allclose(
        one_run_bounds(m, r, v, 1e-5, 0.95, pairs=True),
        0.5 * one_run_bounds(m, r, v, 2e-5, 0.95),
    )


def test_one_run_likelihood_at_every_guess_is_the_binomial_at_phi_of_half_mu():
    # r = m: unchanged by the abstention fix (the binomial at Phi(mu / 2) when s = 1)
    c = bdp.OneRunCounts(1000, 1000, 700)
    mu = np.array([0.5, 1.0, 1.5])
    want = stats.binom.logpmf(700, 1000, special.ndtr(mu / 2)) - math.log(math.comb(1000, 700))
    np.testing.assert_allclose(_one_run_log_lik(mu, 1.0, c), want, rtol=1e-9)


def test_one_run_likelihood_below_every_guess_uses_the_top_share_accuracy():
    c = bdp.OneRunCounts(2000, 100, 89)
    mu = np.array([0.3, 1.0, 2.0])
    acc = np.array([_accuracy_by_root(x, 0.05) for x in mu])
    want = stats.binom.logpmf(89, 100, acc) - math.log(math.comb(100, 89))
    np.testing.assert_allclose(_one_run_log_lik(mu, 1.0, c), want, rtol=1e-7)
    # the location used for the grid: the mu whose A(mu, r / m) is the smoothed accuracy
    loc = _one_run_shift(c)
    assert _accuracy_by_root(loc, 0.05) == pytest.approx(90 / 102, abs=1e-6)


def test_a_lucky_top_share_no_longer_signs_a_false_accusation():
    # issue 49: Gaussian mechanism mu = 1 (eps(1e-5) = 4.38), m = 2,000, r = 100, v = 89:
    # with the accuracy bounded by Phi(mu / 2) the claim was eps >= 9.5
    post = bdp.estimate_gdp(bdp.OneRunCounts(2000, 100, 89), delta=1e-5, seed=0)
    assert post.quantile(0.05, "mu") < 1.0
    assert bdp.audit_claim(post).lower < bdp.gdp_epsilon(1.0, 1e-5)


def test_the_claim_of_one_run_audits_under_gdp_is_their_f_dp_bound():
    c = bdp.OneRunCounts(2000, [100, 400], [89, 330])
    post = bdp.estimate_gdp(c, delta=1e-5, seed=0, draws=1000)
    claim = bdp.audit_claim(post)
    # Bonferroni over the two audits; the larger bound of mu at level 0.025, turned into eps
    mus = one_run_gdp_bounds(c.m, c.r, c.v, 1.0 - 0.025)
    want = bdp.gdp_epsilon(float(mus.max()), 1e-5)
    assert claim.lower == pytest.approx(want, rel=1e-9) == claim.frequentist_lower
    assert claim.frequentist["row"] == int(np.argmax(mus))
    assert claim.gaussian_lower == pytest.approx(post.quantile(0.05, "eps"), rel=1e-9)
    assert claim.sentence.startswith("With 95% confidence, if the mechanism is Gaussian (mu-GDP)")
    assert "2 audits, each at level 0.05/2" in claim.sentence
    assert "The model's figure: 95% posterior probability" in claim.sentence


def test_pairs_may_be_given_per_audit():
    m, r, v = [2000, 2000], [100, 400], [95, 330]
    mixed = one_run_bounds(m, r, v, 1e-5, 0.95, pairs=[False, True])
    assert mixed[0] == pytest.approx(one_run_bounds(2000, 100, 95, 1e-5, 0.95)[0])
    assert mixed[1] == pytest.approx(0.5 * one_run_bounds(2000, 400, 330, 2e-5, 0.95)[0])
    mus = one_run_gdp_bounds(m, r, v, 0.95, pairs=[True, False])
    assert mus[0] == pytest.approx(one_run_gdp_bounds(2000, 100, 95, 0.95)[0] / math.sqrt(2.0))
    assert mus[1] == pytest.approx(one_run_gdp_bounds(2000, 400, 330, 0.95)[0])


def test_a_row_of_pairs_sees_sqrt_2_mu_in_the_gdp_likelihood():
    """``estimate_gdp``'s one-run likelihood reads a row of matched pairs at sqrt(2) mu: its log
    likelihood at (mu, s) is the bits row's at (sqrt(2) mu, s), and a mixed input sums the two."""
    from bayes_dp.gdp.core import _one_run_log_lik

    mu, s = np.array([0.3, 1.0, 2.5]), np.array([0.2, 0.5, 0.9])
    bits = bdp.OneRunCounts(2000, 200, 150)
    pairs = bdp.OneRunCounts(2000, 200, 150, pairs=True)
    np.testing.assert_allclose(
        _one_run_log_lik(mu, s, pairs), _one_run_log_lik(math.sqrt(2.0) * mu, s, bits), rtol=1e-12
    )
    assert not np.allclose(_one_run_log_lik(mu, s, pairs), _one_run_log_lik(mu, s, bits))
    mixed = bdp.OneRunCounts([2000, 2000], [200, 100], [150, 80], pairs=[True, False])
    np.testing.assert_allclose(
        _one_run_log_lik(mu, s, mixed),
        _one_run_log_lik(mu, s, pairs) + _one_run_log_lik(mu, s, bdp.OneRunCounts(2000, 100, 80)),
        rtol=1e-12,
    )
