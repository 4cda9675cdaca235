"""Scores to counts, Evidence groups and the max-over-threshold empirical epsilon."""

import math

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp import AttackCounts, Evidence
from mia.canary import (
    CosineNull,
    counts_from_scores,
    empirical_epsilon,
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


def _canife_eps(tpr, fpr, delta):
    """``CanaryAnalyser.empirical_eps`` of the CANIFE code, transcribed."""
    x = []
    if 1 - tpr > 0:
        x.append((1 - delta - fpr) / (1 - tpr))
    if fpr > 0:
        x.append((1 - delta - (1 - tpr)) / fpr)
    if len(x) <= 1 or max(x) < 0:
        return math.inf
    return math.log(max(x))


def _brute_force_eps(pos, neg, delta):
    """CANIFE's ``_compute_empirical_eps`` loop: inf counts only at accuracy 1."""
    best = 0.0
    for t in np.unique(np.concatenate([pos, neg])):
        fpr, fnr = np.mean(neg >= t), np.mean(pos < t)
        e = _canife_eps(1 - fnr, fpr, delta)
        if e > best and (e != math.inf or (fpr == 0 and fnr == 0)):
            best = e
    return best


def test_empirical_epsilon_vs_canife_code_and_cap():
    rng = np.random.default_rng(3)
    for i in range(40):
        pos, neg = rng.normal(1.5 + 0.1 * i, 1, 50), rng.normal(0, 1, 50)
        if i % 2:  # ties, as with discrete scores
            pos, neg = np.round(pos), np.round(neg)
        e = empirical_epsilon(pos, neg, 0.01)
        assert e.epsilon == pytest.approx(_brute_force_eps(pos, neg, 0.01))
        assert e.lower <= e.epsilon <= e.upper
    # 50/50 with one error on each side: ln(48.5), the CANIFE ceiling at n = 100
    e = empirical_epsilon([1.0] * 49 + [-1.0], [-1.0] * 49 + [1.0], 0.01)
    assert e.epsilon == pytest.approx(3.882, abs=1e-3) and e.accuracy == pytest.approx(0.98)
    hi_fp = stats.beta.ppf(0.975, 2, 49)  # Clopper-Pearson upper limit of 1/50
    want = math.log((0.99 - hi_fp) / hi_fp)
    assert e.lower == pytest.approx(want, rel=1e-8)
    lo_fp = stats.beta.ppf(0.025, 1, 50)
    assert e.upper == pytest.approx(math.log((0.99 - lo_fp) / lo_fp), rel=1e-8)
    assert empirical_epsilon([1.0, 2.0], [-1.0, 0.0], 0.01).epsilon == math.inf


def test_empirical_epsilon_skips_thresholds_with_one_zero_rate():
    # at t = 1: FPR = 0, FNR = 1/50. No finite eps admits it (classical_epsilon is inf), and it
    # is not a perfect attack, so the threshold is skipped (CANIFE); it used to give ln(49.5)
    pos, neg = [1.0] * 49 + [-1.0], [-1.0] * 49 + [0.5]
    assert bdp.classical_epsilon(0.0, 1 / 50, 0.01, reflect=False) == math.inf
    e = empirical_epsilon(pos, neg, 0.01)
    assert e.epsilon == pytest.approx(math.log(48.5))  # t = 0.5: FP = FN = 1
    assert (int(e.counts.fp[0]), int(e.counts.fn[0])) == (1, 1)


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
