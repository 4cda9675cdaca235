"""compare_estimators and the frequentist GDP bound (bayes_dp.evaluation.compare)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

import bayes_dp as bdp


def test_gdp_lower_bound_matches_an_independent_computation():
    rng = np.random.default_rng(1)
    x_in, x_out = rng.normal(1.5, 1, 400), rng.normal(0, 1, 400)
    got = bdp.gdp_lower_bound(x_in, x_out, delta=1e-5, confidence=0.9, bins=8)
    cuts = np.quantile(np.r_[x_in, x_out], np.arange(1, 8) / 8)
    level = 1 - 0.1 / (2 * cuts.size)
    best = 0.0
    for c in cuts:
        fpr_hi = stats.binomtest(int(np.sum(x_out > c)), 400).proportion_ci(level).high
        fnr_hi = stats.binomtest(int(np.sum(x_in <= c)), 400).proportion_ci(level).high
        # the mu whose trade-off curve passes through (fpr_hi, fnr_hi), by root finding
        mu = optimize.brentq(
            lambda m, a=fpr_hi, b=fnr_hi: stats.norm.cdf(stats.norm.ppf(1 - a) - m) - b, -10, 10
        )
        best = max(best, mu)
    assert got["mu"] == pytest.approx(best, abs=1e-8)
    assert got["eps"] == pytest.approx(bdp.gdp_epsilon(best, 1e-5), rel=1e-12)
    assert got["mu"] < 1.5  # a lower bound


def test_whole_roc_beats_one_threshold_on_a_mu_2_gaussian_mechanism():
    # 1,000 in and 1,000 out scores, mu = 2, eps at delta = 1e-5 (true 9.997)
    rng = np.random.default_rng(2026)
    x_in, x_out = rng.normal(2, 1, 1000), rng.normal(0, 1, 1000)
    tab = bdp.compare_estimators(x_in, x_out, delta=1e-5, s=1.0, seed=0)
    print(tab.drop(columns="assumes").round(3).to_string())
    gdp, one = tab.loc["whole ROC posterior (GDP)"], tab.loc["single threshold posterior"]
    assert gdp["width"] < one["width"]
    assert gdp["lower"] >= tab.loc["GDP bound, Pareto frontier", "lower"]
    assert tab.loc["Clopper-Pearson, best threshold", "lower"] <= one["median"]
    assert list(tab.columns) == ["lower", "median", "upper", "width", "assumes"]
