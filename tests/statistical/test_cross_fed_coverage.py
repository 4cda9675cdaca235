"""Cross-fed counts (Alg. 5): the correlated likelihood covers eps at the nominal rate, the
binomial one is over-confident (slow; the study is mia.coverage.cross_fed_coverage, printed by
examples/correlated_counts.py).

One audit of the study takes about 15 s on an idle core at the default length (3,000 draws
after 1,500 tuning steps, both likelihoods), so the full study (200 audits) takes about 26 min on
2 cores and a reduced one (100 audits, 1,000 draws after 500 tuning steps) 7.5 min (a CI run on 2
idle cores): both run under ``-m slow`` only. CI's statistical stage runs a smaller one (60
audits, about 3.6 min on 2 cores), ``test_correlated_likelihood_covers_ci``.
"""

import pytest

from mia.coverage import cross_fed_audit, cross_fed_coverage

from tests._support.mc_error import coverage_bounds, false_pass


@pytest.mark.slow
def test_correlated_likelihood_covers_where_binomial_is_over_confident():
    # the study of docs/validation/correlated.md (same seed): 89.0% and 81.5% measured
    out = cross_fed_coverage(200, seed=7, n_jobs=2)
    corr = out.rate("bivariate_normal")
    binom = out.rate("binomial")
    assert 0.85 <= corr <= 0.95, corr
    # over-confident: below the nominal band, and below the correlated model
    assert binom < 0.85 and binom < corr, binom


@pytest.mark.slow
def test_correlated_likelihood_covers_reduced():
    # 100 audits: the 90% intervals' coverage has standard error sqrt(0.9 * 0.1 / 100) = 0.03,
    # so 4 SE either side is [0.78, 1.0] (a calibrated one fails with probability 1e-4). It is
    # a coarse check: intervals that cover 65% of the time pass with probability 0.3%, 70%
    # with 4.8%, 75% with 29% (binomial tail, scipy); the 200-audit study above is the fine one.
    out = cross_fed_coverage(100, seed=7, n_jobs=2, draws=1000, tune=500)
    corr = out.rate("bivariate_normal")
    binom = out.rate("binomial")
    assert 0.78 <= corr <= 1.0, corr
    # the same audits analysed twice: the binomial, which ignores the counts' correlation,
    # puts the truth below its interval at least as often (13.5% against 2.0% at 200 audits)
    assert out.below("binomial") >= out.below("bivariate_normal"), (binom, corr)
    assert binom <= corr, (binom, corr)


@pytest.mark.slow
@pytest.mark.statistical
def test_correlated_likelihood_covers_ci():
    # 60 audits: the two-sided range of mc_error (each tail <= 5e-4 for calibrated intervals) is
    # 45-60 covering. Coarse, stated with its power and asserted first: intervals that cover
    # 65% of the time (the named defect, 0.57 of the right width) pass with probability 0.07
    # (power 0.93), 70% with 0.24, 75% with 0.57, a posterior 15% too narrow (coverage 0.84)
    # with 0.97: not within its reach (scipy); the 200-audit study above is the fine one. The
    # binomial ordering below: the same audits analysed twice.
    n = 60
    bounds = coverage_bounds(n)
    assert 1 - false_pass(n, bounds, 0.65) >= 0.8
    out = cross_fed_coverage(n, seed=11, n_jobs=2, draws=1000, tune=500)
    k = int(sum(out.hits("bivariate_normal")))
    print(
        f"bivariate normal covers {k}/{n} (accept {bounds[0]}-{bounds[1]}; 70% coverage passes "
        f"with {false_pass(n, bounds, 0.7):.2f}); binomial {out.rate('binomial'):.3f}; truth below:"
        f" binomial {out.below('binomial'):.3f}, bivariate normal "
        f"{out.below('bivariate_normal'):.3f}"
    )
    assert bounds[0] <= k <= bounds[1], k
    assert out.below("binomial") >= out.below("bivariate_normal")


def test_one_replicate_runs():
    res = cross_fed_audit(3, draws=200)
    assert list(res) == ["binomial", "bivariate_normal"]
    for lo, hi, truth in res.values():
        assert 0 < lo < hi and truth > 0
    assert res["binomial"][2] == res["bivariate_normal"][2]  # the same audit, two analyses
    with pytest.raises(ValueError, match="`n_models`"):
        cross_fed_audit(3, n_models=2)
