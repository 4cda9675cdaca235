"""Cross-fed counts (Alg. 5): the correlated likelihood covers eps at the nominal rate, the
binomial one is over-confident (slow; the study is mia.coverage.cross_fed_coverage, printed by
examples/correlated_counts.py)."""

import pytest

from mia.coverage import cross_fed_audit, cross_fed_coverage


@pytest.mark.slow
@pytest.mark.statistical
def test_correlated_likelihood_covers_where_binomial_is_over_confident():
    out = cross_fed_coverage(200, seed=7, n_jobs=2)
    corr = out.rate("bivariate_normal")
    binom = out.rate("binomial")
    assert 0.85 <= corr <= 0.95, corr
    # over-confident: below the nominal band, and below the correlated model
    assert binom < 0.85 and binom < corr, binom


def test_one_replicate_runs():
    res = cross_fed_audit(3, draws=200)
    assert list(res) == ["binomial", "bivariate_normal"]
    for lo, hi, truth in res.values():
        assert 0 < lo < hi and truth > 0
    assert res["binomial"][2] == res["bivariate_normal"][2]  # the same audit, two analyses
    with pytest.raises(ValueError, match="`n_models`"):
        cross_fed_audit(3, n_models=2)
