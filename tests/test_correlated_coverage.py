"""Cross-fed counts (Alg. 5): the correlated likelihood covers eps at the nominal rate, the
binomial one is over-confident (slow; the study is examples/correlated_counts.py)."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "correlated_counts.py"


def _load():
    spec = importlib.util.spec_from_file_location("correlated_counts", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_correlated_likelihood_covers_where_binomial_is_over_confident():
    out = _load().coverage_study(reps=200, seed=7)
    corr = out["bivariate_normal"]["coverage"]
    binom = out["binomial"]["coverage"]
    assert 0.85 <= corr <= 0.95, corr
    # over-confident: below the nominal band, and below the correlated model
    assert binom < 0.85 and binom < corr, binom


def test_one_replicate_runs():
    res = _load().one_replicate(3, draws=200)
    for lo, hi, truth in res.values():
        assert 0 < lo < hi and truth > 0
