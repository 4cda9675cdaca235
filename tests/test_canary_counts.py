"""Scores to counts, Evidence groups and the max-over-threshold empirical epsilon."""

import math

import numpy as np
import pytest
from scipy import stats

from bayes_dp import AttackCounts, Evidence
from mia.canary import (
    CosineNull,
    counts_from_scores,
    empirical_epsilon,
    epsilon_from_rates,
    to_evidence,
)


def test_fp_near_alpha_times_n_unseen():
    rng = np.random.default_rng(0)
    alpha, n = 0.05, 2000
    r = counts_from_scores(rng.normal(1, 1, 500), rng.normal(0, 1, n), alpha)
    assert r.counts.fp[0] == math.floor(alpha * n) and r.counts.n_neg[0] == n
    # split: fp is a binomial count on the held-out half, mean alpha * n / 2
    fps = [
        counts_from_scores(
            rng.normal(1, 1, 50), rng.normal(0, 1, n), alpha, split=True, seed=rng
        ).counts.fp[0]
        for _ in range(300)
    ]
    se = math.sqrt(alpha * (1 - alpha) * n / 2 / 300) * 1.5  # threshold noise inflates the var
    assert abs(np.mean(fps) - alpha * n / 2) < 4 * se
    # the split count varies, the same-data count cannot
    assert np.std(fps) > 3


def test_analytic_null_gives_binomial_fp_and_unbiased_fn():
    rng = np.random.default_rng(1)
    d, alpha = 10**4, 0.1
    null = CosineNull(d)
    shift = 2.0 / math.sqrt(d)
    fps, fns = [], []
    for _ in range(200):
        obs = shift + null.rvs(size=400, seed=rng)
        r = counts_from_scores(obs, null, alpha, seed=rng)
        assert r.threshold == pytest.approx(float(null.isf(alpha)))
        fps.append(r.counts.fp[0])
        fns.append(r.counts.fn[0])
    assert np.mean(fps) == pytest.approx(alpha * 400, abs=4 * math.sqrt(0.09 * 400 / 200))
    fnr = float(null.cdf(null.isf(alpha) - shift))
    assert np.mean(fns) / 400 == pytest.approx(fnr, abs=0.01)
    # a frozen scipy law works too
    r = counts_from_scores([3.0, 4.0], stats.norm(), 0.05, n_null=100, seed=2)
    assert r.counts.n_neg[0] == 100 and r.threshold == pytest.approx(1.6448536)


def test_evidence_helper():
    r = counts_from_scores([1.0, 2.0, 3.0], [0.0, 0.5, 1.5, 2.5], 0.25)
    ev = r.to_evidence()
    assert isinstance(ev, Evidence) and ev.likelihood == "binomial" and ev.strength == "own"
    assert to_evidence(AttackCounts(1, 10, 2, 10), name="lira", strength="shared").name == "lira"
    with pytest.raises(TypeError, match="result"):
        to_evidence([1, 2])


def _brute_force_eps(pos, neg, delta):
    best = 0.0
    for t in np.concatenate([pos, neg]):
        fpr = np.mean(neg >= t)
        fnr = np.mean(pos < t)
        if fpr == 0 and fnr == 0:
            return math.inf
        for num, den in ((1 - delta - fpr, fnr), (1 - delta - fnr, fpr)):
            if num > 0 and den > 0:
                best = max(best, math.log(num / den))
    return best


def test_empirical_epsilon_vs_brute_force_and_cap():
    rng = np.random.default_rng(3)
    for _ in range(20):
        pos, neg = rng.normal(1.5, 1, 50), rng.normal(0, 1, 50)
        e = empirical_epsilon(pos, neg, 0.01)
        assert e.epsilon == pytest.approx(_brute_force_eps(pos, neg, 0.01))
        assert e.lower <= e.epsilon <= e.upper
    # 50/50 with one error on each side: ln(48.5), the CANIFE ceiling at n = 100
    e = empirical_epsilon([1.0] * 49 + [-1.0], [-1.0] * 49 + [1.0], 0.01)
    assert e.epsilon == pytest.approx(3.882, abs=1e-3) and e.accuracy == pytest.approx(0.98)
    hi_fp = stats.beta.ppf(0.975, 2, 49)  # Clopper-Pearson upper limit of 1/50
    assert e.lower == pytest.approx(epsilon_from_rates(hi_fp, hi_fp, 0.01), rel=1e-6)
    assert empirical_epsilon([1.0, 2.0], [-1.0, 0.0], 0.01).epsilon == math.inf


@pytest.mark.parametrize(
    ("args", "exc", "word"),
    [
        (([], [1.0], 0.1), ValueError, "observed"),
        (([1.0], [np.inf], 0.1), ValueError, "unseen"),
        (([1.0], [0.0], 0.0), ValueError, "alpha"),
        (([1.0], [0.0], 1.0), ValueError, "alpha"),
        (("abc", [0.0], 0.1), TypeError, "observed"),
    ],
)
def test_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        counts_from_scores(*args)
    with pytest.raises(ValueError, match="delta"):
        empirical_epsilon([1.0], [0.0], 0.0)
