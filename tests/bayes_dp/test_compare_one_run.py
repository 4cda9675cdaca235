"""The one-run rows of compare_estimators: scores read as a one-run audit
(bayes_dp.evaluation.compare)."""

from __future__ import annotations

import numpy as np
import pytest

import bayes_dp as bdp


def _naive_counts(x_in, x_out, k):
    """Right guesses of the top-k "in" / bottom-k "out" guesser, by an explicit loop."""
    pooled = [(x, True) for x in x_in] + [(x, False) for x in x_out]
    pooled.sort(key=lambda p: p[0])
    v = sum(1 for _, member in pooled[:k] if not member)
    v += sum(1 for _, member in pooled[-k:] if member)
    return v


def test_scores_as_one_run_audits_match_a_naive_count():
    rng = np.random.default_rng(1)
    x_in, x_out = rng.normal(1, 1, 137), rng.normal(0, 1, 211)
    ks = [1, 5, 30, 174]
    c = bdp.one_run_counts_from_scores(x_in, x_out, ks)
    assert c.m.tolist() == [348] * 4 and c.r.tolist() == [2 * k for k in ks]
    assert c.v.tolist() == [_naive_counts(x_in, x_out, k) for k in ks]
    with pytest.raises(ValueError, match="`k` must be <= m / 2 = 174; found 175"):
        bdp.one_run_counts_from_scores(x_in, x_out, 175)
    with pytest.raises(ValueError, match="`k` must be >= 1; found 0"):
        bdp.one_run_counts_from_scores(x_in, x_out, [0])


def test_compare_table_has_the_one_run_bound_and_posterior():
    rng = np.random.default_rng(3)
    x_in, x_out = rng.normal(2, 1, 400), rng.normal(0, 1, 400)
    ks = [8, 40, 200]
    tab = bdp.compare_estimators(x_in, x_out, delta=1e-5, s=1.0, seed=0, one_run_k=ks)
    bound = tab.loc["one-run bound (Steinke et al.)", "lower"]
    # by hand: each k's bound at the Bonferroni-corrected confidence, the largest kept
    runs = bdp.OneRunCounts(
        m=800, r=[2 * k for k in ks], v=[_naive_counts(x_in, x_out, k) for k in ks]
    )
    per_k = bdp.one_run_epsilon_bound(runs, delta=1e-5, confidence=1 - 0.1 / 3)
    assert bound == pytest.approx(per_k.max(), rel=1e-12)
    # a valid lower bound: below the mechanism's eps at this delta (mu = 2: 9.997)
    assert 0 < bound < bdp.gdp_epsilon(2.0, 1e-5)
    one = tab.loc["one-run posterior"]
    assert one["lower"] < one["median"] < one["upper"]
    best = int(np.argmax(per_k))
    assert (
        f"r={2 * ks[best]}, v={runs.v[best]}"
        in tab.loc["one-run bound (Steinke et al.)", "assumes"]
    )
