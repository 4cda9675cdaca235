"""Tests of the hypotheses ``plan_audit`` takes besides (eps, s): GDP mu, and tau / rho.

Independent references: the Gaussian trade-off curve written out with ``scipy.stats.norm`` and
``scipy.integrate.quad`` (the GDP band and its area), the (eps, delta) region that mu-GDP
implies (``gdp_epsilon``), the binomial limit of the beta-binomial likelihood, and, in the slow
test, full ``estimate_epsilon`` runs with tau and rho fixed on the planned audits.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

import bayes_dp as bdp
from bayes_dp.core.simulate import gdp_region_area, sample_gdp_region, simulate_gdp_counts
from bayes_dp.planning.core import grid_posterior

# --------------------------------------------------------------------------- the GDP band


@pytest.mark.parametrize(("mu", "s"), [(0.5, 0.0), (1.0, 0.5), (3.0, 0.9)])
def test_gdp_region_area_matches_quadrature(mu, s):
    def below(m):  # area under the trade-off curve G_m(a) = Phi(Phi^-1(1 - a) - m)
        return integrate.quad(lambda a: stats.norm.cdf(stats.norm.isf(a) - m), 0, 1)[0]

    assert gdp_region_area(mu, s) == pytest.approx(2 * (below(s * mu) - below(mu)), rel=1e-7)


def test_gdp_band_draws_lie_between_the_curves_and_in_the_dp_region():
    mu, s, delta = 1.5, 0.6, 1e-5
    a, b = sample_gdp_region(mu, s, 20_000, seed=1)
    up = a + b > 1
    fa, fb = np.where(up, 1 - a, a), np.where(up, 1 - b, b)  # the lower-left copy
    curve = stats.norm.cdf(stats.norm.isf(fa) - mu)
    weak = stats.norm.cdf(stats.norm.isf(fa) - s * mu)
    assert np.all(fb >= curve) and np.all(fb <= weak)
    # mu-GDP implies (eps, delta)-DP at eps = gdp_epsilon(mu, delta): every test's errors lie in
    # R(eps, delta)
    assert np.all(bdp.in_region(a, b, bdp.gdp_epsilon(mu, delta), delta))
    # uniform on the band: the mirror halves are equally likely, and the share of draws below
    # the curve of an intermediate mu matches its area
    assert abs(up.mean() - 0.5) < 4 * math.sqrt(0.25 / a.size)
    share = gdp_region_area(mu, 0.8) / gdp_region_area(mu, s)
    below = np.mean(fb < stats.norm.cdf(stats.norm.isf(fa) - 0.8 * mu))
    assert abs(below - share) < 4 * math.sqrt(share * (1 - share) / a.size)


def test_simulate_gdp_counts_and_validation():
    c, a, b = simulate_gdp_counts(1.0, 0.5, [200, 300], 100, seed=0)
    assert c.n_neg.tolist() == [200, 300] and c.n_pos.tolist() == [100, 100]
    again, _, _ = simulate_gdp_counts(1.0, 0.5, [200, 300], 100, seed=0)
    assert c == again
    with pytest.raises(ValueError, match="`mu` must be > 0.0; found 0.0"):
        simulate_gdp_counts(0.0, 0.5, 10, 10)
    with pytest.raises(ValueError, match="`s` must be < 1"):
        sample_gdp_region(1.0, 1.0, 10)
    with pytest.raises(ValueError, match="`size` must be >= 1"):
        sample_gdp_region(1.0, 0.5, 0)
    with pytest.raises(ValueError, match="too small to sample"):
        sample_gdp_region(1e-6, 0.5, 10)


# --------------------------------------------------------------------------- mu as truth

DESIGN = [{"bases": 2, "n": 200}, {"bases": 2, "n": 2000}]


def test_mu_truth_plans_eps_at_delta():
    mu, delta = 1.0, 1e-5
    eps = bdp.gdp_epsilon(mu, delta)
    kw = dict(delta=delta, claim=eps, reps=4, seed=2)
    gdp = bdp.plan_audit({"mu": mu, "s": 0.8}, DESIGN, **kw)
    dp = bdp.plan_audit({"eps": eps, "s": 0.8}, DESIGN, **kw)
    # where they must agree: the truth recorded (eps at delta), and the ceiling (a perfect
    # attack's posterior depends on the design and the prior only)
    np.testing.assert_allclose(gdp.truths[..., 0], eps)
    np.testing.assert_allclose(gdp.truths[..., 2], mu)
    assert np.isnan(dp.truths[..., 2]).all()
    np.testing.assert_allclose(gdp.ceiling, dp.ceiling)
    assert "mu=1" in gdp.truth and "eps=4.38" in gdp.truth
    # otherwise: a mu-GDP mechanism is (eps, delta)-DP, so its audits (errors inside R(eps,
    # delta), on Gaussian curves far from R's corner) must not refute the true eps ...
    assert gdp.table.failed.tolist() == [0, 0]
    assert np.all(gdp.p_above < 0.95) and np.all(gdp.power == 0.0)
    assert np.all(gdp.lo < eps)
    # ... and they show less than audits whose errors fill the band up to R's corner
    assert np.all(np.median(gdp.lo, axis=1) < np.median(dp.lo, axis=1))


def test_mu_truth_needs_positive_delta_and_one_of_eps_mu():
    with pytest.raises(ValueError, match="needs delta > 0; found delta=0.0"):
        bdp.plan_audit({"mu": 1.0, "s": 0.5}, {"n": 10}, delta=0.0, reps=1)
    with pytest.raises(ValueError, match="one of 'eps' \\(at delta\\) or 'mu'"):
        bdp.plan_audit({"mu": 1.0, "eps": 2.0, "s": 0.5}, {"n": 10}, delta=1e-5, reps=1)
    with pytest.raises(ValueError, match=r"`truth\['mu'\]` must be > 0"):
        bdp.plan_audit({"mu": -1.0, "s": 0.5}, {"n": 10}, delta=1e-5, reps=1)


# --------------------------------------------------------------------------- tau and rho


def test_beta_binomial_with_tiny_tau_plans_as_binomial():
    """As tau -> 0 the beta-binomial is the binomial: the grid posteriors agree (s fixed)."""
    counts = bdp.AttackCounts(fp=[30, 41, 12], n_neg=100, fn=[45, 38, 70], n_pos=100)
    q = [0.05, 0.5, 0.95]
    prior = bdp.Prior(s=0.5)
    binom = grid_posterior(counts, 1e-5, prior).quantile(q)
    bb = grid_posterior(
        counts, 1e-5, prior, likelihood="beta_binomial", fix={"tau": 1e-7}
    ).quantile(q)
    np.testing.assert_allclose(bb, binom, rtol=5e-3)
    # over-dispersion weakens the evidence: a wider interval
    wide = grid_posterior(
        counts, 1e-5, prior, likelihood="beta_binomial", fix={"tau": 0.05}
    ).quantile(q)
    assert wide[2] - wide[0] > binom[2] - binom[0]


def test_correlated_truth_plan():
    truth = {"eps": 3.0, "s": 0.8, "tau": 0.01, "rho": 0.01}
    kw = dict(delta=1e-5, claim=1.0, reps=3, seed=4)
    plan = bdp.plan_audit(truth, {"bases": 4, "n": 300}, likelihood="bivariate_normal", **kw)
    assert plan.table.failed[0] == 0 and np.all(plan.lo < plan.hi)
    np.testing.assert_allclose(plan.truths[0, :, 3:], [[0.01, 0.01]] * 3)
    assert "tau=0.01, rho=0.01" in plan.truth
    # the counts are those of the simulator with the same stream
    rng = np.random.default_rng(4).spawn(1)[0].spawn(3)[0]
    c, _, _ = bdp.simulate.simulate_counts(
        3.0,
        0.8,
        1e-5,
        [300] * 4,
        [300] * 4,
        likelihood="bivariate_normal",
        tau=0.01,
        rho=0.01,
        seed=rng,
    )
    assert plan.counts[0][0] == c


@pytest.mark.parametrize(
    ("truth", "likelihood", "match"),
    [
        ({"eps": 2.0, "s": 0.5, "tau": 0.1}, "binomial", "'tau' is not a parameter of the"),
        ({"eps": 2.0, "s": 0.5, "rho": 0.1, "tau": 0.1}, "beta_binomial", "'rho' is not a"),
        ({"eps": 2.0, "s": 0.5}, "bivariate_normal", "needs 'tau' with likelihood="),
        ({"eps": 2.0, "s": 0.5, "tau": 0.1}, "bivariate_normal", "needs 'rho' with"),
        ({"eps": 2.0, "s": 0.5, "tau": 0.1, "rho": 1.0}, "bivariate_normal", r"in \(-1, 1\)"),
        ({"eps": 2.0, "s": 0.5, "tau": 1.5}, "beta_binomial", r"`truth\['tau'\]` must be < 1"),
        (
            {"eps": 2.0, "s": 0.5, "tau": 0.01, "rho": 0.5},
            "bivariate_normal",
            r"rho=0.5 is not admissible at tau=0.01 in design '1 x 10': \|rho\| must be < 0.109",
        ),
    ],
)
def test_correlated_truth_validation(truth, likelihood, match):
    with pytest.raises(ValueError, match=match):
        bdp.plan_audit(truth, {"n": 10}, delta=1e-5, reps=1, likelihood=likelihood)


# --------------------------------------------------------------------------- full runs (slow)


@pytest.mark.slow
def test_correlated_plan_matches_full_runs():
    """A bivariate-normal design with tau, rho known, judged as the binomial designs are.

    ``tests/bayes_dp/test_planning.py::check_against_full_runs``: per audit the full run's ECDF at
    the plan's ends within 2 probability points; per design the plan's 10/50/90% points of each
    end within 3 bootstrap sds of the full runs'.
    """
    from tests.bayes_dp.test_planning import check_against_full_runs

    fix = {"tau": 0.005, "rho": 0.005}
    truth = {"eps": 3.0, "s": 0.7, **fix}
    plan = bdp.plan_audit(
        truth, {"bases": 5, "n": 500}, delta=1e-5, reps=15, seed=11, likelihood="bivariate_normal"
    )
    check_against_full_runs(
        plan, lambda counts, r: bdp.Evidence(counts, likelihood="bivariate_normal", fix=fix)
    )


# --------------------------------------------------------------------------- distributions


def test_truth_values_may_be_distributions():
    prior = bdp.Prior(s=0.7)  # a 1-D grid: quick
    kw = dict(delta=1e-5, claim=1.0, reps=4, seed=5, prior=prior)
    truth = {"eps": stats.uniform(1.0, 3.0), "s": 0.7}
    plan = bdp.plan_audit(truth, {"n": 100}, **kw)
    eps = plan.truths[0, :, 0]
    assert np.all((eps >= 1.0) & (eps <= 4.0)) and np.unique(eps).size == 4
    assert "eps ~ uniform(1, 4)" in plan.truth
    np.testing.assert_array_equal(bdp.plan_audit(truth, {"n": 100}, **kw).lo, plan.lo)
    points = {"mu": stats.rv_discrete(values=([0.5, 2.0], [0.5, 0.5])), "s": 0.7}
    gdp = bdp.plan_audit(points, {"n": 100}, **kw)
    assert set(gdp.truths[0, :, 2]) <= {0.5, 2.0}
    np.testing.assert_allclose(gdp.truths[0, :, 0], bdp.gdp_epsilon(gdp.truths[0, :, 2], 1e-5))
    # fixed values are checked at once, drawn ones when drawn (naming the key)
    with pytest.raises(ValueError, match=r"`truth\['s'\]` must be < 1"):
        bdp.plan_audit({"eps": stats.uniform(1, 3), "s": 1.5}, {"n": 10}, delta=1e-5)
    with pytest.raises(ValueError, match=r"`truth\['eps'\]` must be > 0"):
        bdp.plan_audit({"eps": stats.norm(-5, 0.1), "s": 0.5}, {"n": 10}, delta=1e-5)


def test_cli_plan_with_distributions(capsys):
    from bayes_dp.cli import main

    argv = ["plan", "--eps", "1:4", "--s", "0.7", "--delta", "1e-5", "--n", "100"]
    argv += ["--prior-s-fixed", "0.7", "--claim", "1", "--reps", "4", "--seed", "5", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    plan = bdp.plan_audit(
        {"eps": stats.uniform(1.0, 3.0), "s": 0.7},
        {"n": 100},
        delta=1e-5,
        claim=1.0,
        reps=4,
        seed=5,
        prior=bdp.Prior(s=0.7),
    )
    assert out["truth"] == plan.truth
    assert out["designs"][0]["lo_median"] == pytest.approx(plan.table.lo_median[0])


def test_cli_truth_value_syntax():
    from bayes_dp.cli.options import _truth_value

    parse = _truth_value(0.0, low_open=True)
    assert parse("2.5") == 2.5
    assert parse("3:5").support() == (3.0, 5.0)
    d = parse("normal:4,0.5")
    assert d.support()[0] == 0.0 and d.mean() == pytest.approx(4.0)
    pts = parse("1@1,3@3")
    assert pts.xk.tolist() == [1.0, 3.0] and pts.pk.tolist() == [0.25, 0.75]
    assert parse("1,2,4").pk.tolist() == pytest.approx([1 / 3] * 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eps", "5:3"], "argument --eps: LO:HI needs LO < HI, found '5:3'"),
        (["--eps", "0:5"], "argument --eps: must be > 0, found '0'"),
        (["--eps", "normal:4"], "argument --eps: expected normal:MEAN,SD"),
        (["--eps", "normal:-50,1"], "puts no mass in the allowed range"),
        (["--eps", "1@2,3"], "argument --eps: expected V1,V2,... or V1@W1,V2@W2"),
        (["--eps", "1,1"], "argument --eps: points must be distinct"),
        (["--eps", "1@0,2@1"], "argument --eps: must be > 0, found '0'"),
        (["--mu", "1:x"], "argument --mu: expected a number, found 'x'"),
        (["--eps", "3", "--mu", "1"], "argument --mu: not allowed with argument --eps"),
        (["--eps", "3", "--rho", "1"], "argument --rho: must be in (-1, 1), found '1'"),
    ],
)
def test_cli_plan_usage_errors(capsys, args, message):
    from bayes_dp.cli import main

    argv = ["plan", *args, "--s", "0.5", "--delta", "1e-5", "--n", "10"]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- score designs


def test_plan_gdp_audit_is_estimate_gdp_on_the_simulated_scores():
    plan = bdp.plan_gdp_audit(
        {"mu": 1.0, "s": 0.8}, {"bases": 2, "n": 200}, delta=1e-5, claim=3.0, reps=2, seed=7
    )
    # the first audit again, from the same stream: mu_i, in-scores, out-scores, posterior
    rng = np.random.default_rng(7).spawn(1)[0].spawn(2)[0]
    groups = []
    for j in range(2):
        mu_j = rng.uniform(0.8, 1.0)
        ins, outs = rng.normal(mu_j, 1.0, 200), rng.normal(0.0, 1.0, 200)
        groups.append(bdp.gdp_evidence(ins, outs, name=f"g{j}"))
    post = bdp.estimate_gdp(groups, delta=1e-5, seed=rng, fit_check=False)
    np.testing.assert_array_equal(plan.counts[0][0][0].in_counts, groups[0].in_counts)
    np.testing.assert_array_equal(plan.counts[0][0][1].out_counts, groups[1].out_counts)
    np.testing.assert_allclose([plan.lo[0, 0], plan.hi[0, 0]], post.interval(0.9, "eps"))
    np.testing.assert_allclose([plan.mu_lo[0, 0], plan.mu_hi[0, 0]], post.interval(0.9, "mu"))
    assert plan.p_above[0, 0] == pytest.approx(np.mean(post.draws("eps") > 3.0))
    assert np.isnan(plan.ceiling).all() and "scores" in plan.truth and "Prior(eps=" not in str(plan)


def test_plan_gdp_audit_intervals_cover_the_true_mu():
    """Simulation with known truth: s near 1, so each group's mu_i is mu; 90% intervals of mu."""
    plan = bdp.plan_gdp_audit({"mu": 1.5, "s": 0.0}, {"n": 400}, delta=1e-5, reps=20, seed=3)
    cover = np.mean((plan.mu_lo[0] <= 1.5) & (1.5 <= plan.mu_hi[0]))
    # with s = 0 in the truth the groups' mu_i spread over [0, 1.5]: the analysis (s = 1)
    # estimates mu_i, below 1.5 mostly
    assert cover < 0.5
    exact = bdp.plan_gdp_audit({"mu": 1.5, "s": 0.999999}, {"n": 400}, delta=1e-5, reps=20, seed=3)
    cover = np.mean((exact.mu_lo[0] <= 1.5) & (1.5 <= exact.mu_hi[0]))
    assert cover >= 0.7  # Bin(20, 0.9) is below 14 with probability 0.002
    eps = bdp.gdp_epsilon(1.5, 1e-5)
    assert np.mean((exact.lo[0] <= eps) & (eps <= exact.hi[0])) == cover  # eps is monotone in mu


def test_plan_gdp_audit_validation():
    with pytest.raises(ValueError, match="must give 'mu'"):
        bdp.plan_gdp_audit({"eps": 2.0, "s": 0.5}, {"n": 10}, delta=1e-5, reps=1)
    with pytest.raises(ValueError, match="`delta` must be > 0"):
        bdp.plan_gdp_audit({"mu": 1.0, "s": 0.5}, {"n": 10}, delta=0.0, reps=1)
    with pytest.raises(ValueError, match="`reps` must be >= 1"):
        bdp.plan_gdp_audit({"mu": 1.0, "s": 0.5}, {"n": 10}, delta=1e-5, reps=0)
