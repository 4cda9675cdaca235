"""Score-matrix audits of a Gaussian mechanism with known eps (mia.coverage; the study is printed by
benchmarks/score_matrix_coverage.py).

The slow test runs the coverage study for one mechanism. What holds, and is asserted: no 90%
interval lies entirely above the true eps (the audit does not overstate the privacy loss), and
the intervals cover the eps visible to a level-alpha test (the tightest (eps, delta) region
through the exact test's error point) in most audits. The coverage of the true eps itself is
low at delta = 1e-5 (about 5%, see docs/validation/lira.md): the Gaussian mechanism's eps there is
set by
the far tails of its trade-off curve, which a test at alpha = 0.1 never probes.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from mia.coverage import score_matrix_audit, score_matrix_coverage


def test_one_audit_runs():
    r = score_matrix_audit(0, mu=1.0, n_targets=4, draws=200, tune=100)
    lo, hi, truth = r["true_eps"]
    assert 0 < lo < hi and r["visible_eps"][:2] == (lo, hi)
    assert truth == pytest.approx(4.377, abs=1e-3) and r["visible_eps"][2] < truth
    assert 0 < r["fpr"] < 0.3 and 0.3 < r["fnr"] < 0.9 and lo <= r["median"] <= hi
    assert r["width"] == pytest.approx(hi - lo) and r["max_r_hat"] >= 1.0
    assert r["fp_design_effect"] > 0 and r["fn_design_effect"] > 0
    # the printed line's interval, a triple the coverage harness reads (inf: no upper end printed)
    c_lo, c_hi, c_truth = r["claim_interval"]
    assert c_lo == r["claim_lower"] and c_truth == truth and c_hi >= c_lo
    # every value the audit returns is one coverage_study accepts (one audit, the study's path)
    one = score_matrix_coverage(mus=(1.0,), n_audits=1, seed=0, n_targets=4, draws=200, tune=100)
    assert set(one[1.0].labels) == {"true_eps", "visible_eps", "claim_interval"}
    with pytest.raises(ValueError, match="`dependence`.*'drop'"):
        score_matrix_audit(0, mu=1.0, n_targets=4, dependence="drop")
    with pytest.raises(ValueError, match="`mu`"):
        score_matrix_audit(0, mu=0.0)
    with pytest.raises(ValueError, match="`likelihood`.*'poisson'"):
        score_matrix_audit(0, mu=1.0, n_targets=4, likelihood="poisson")
    with pytest.raises(ValueError, match="`mus`"):
        score_matrix_coverage(mus=(), n_audits=1)
    with pytest.raises(ValueError, match="`mus`"):
        score_matrix_coverage(mus=(1.0, -1.0), n_audits=1)


@pytest.mark.slow
def test_coverage_study_gaussian_mechanism():
    out = score_matrix_coverage(mus=(1.0,), n_audits=40, seed=3, n_jobs=2)[1.0]
    summary = out.summary()
    assert out.below("true_eps") == 0.0, summary  # never an interval entirely above the true eps
    assert out.rate("visible_eps") >= 0.8, summary
    fpr, fnr = out.stats["fpr"].mean(), out.stats["fnr"].mean()
    assert abs(fpr - 0.1) < 0.02 and abs(fnr - 0.61) < 0.03, (fpr, fnr)


def test_one_audit_binomial_same_counts_narrower():
    # the same simulated matrix (same seed) analysed with both likelihoods: identical counts
    # (pooled rates), and the binomial interval, which ignores the FN counts' over-dispersion, is
    # the narrower one here (docs/validation/lira.md, "How over-confident is the binomial?")
    kw = dict(mu=1.0, n_targets=8, draws=400, tune=200)
    b = score_matrix_audit(5, likelihood="binomial", **kw)
    c = score_matrix_audit(5, **kw)
    assert (b["fpr"], b["fnr"]) == (c["fpr"], c["fnr"])
    assert b["true_eps"][2] == c["true_eps"][2] and b["width"] < c["width"]


@pytest.mark.slow
@pytest.mark.statistical
def test_coverage_study_binomial():
    """The band model on cross-fed counts (binomial, the option it stays; 40 audits of the
    Gaussian mechanism at mu = 1, 64 models x 64 targets, ~1.6 min on 2 cores): the visible eps
    covered by at least 31 of the 40 intervals, intervals narrower than 2 (docs/validation/lira.md
    measures 0.41-1.09 at 16 and 64 targets).

    Sizing (scipy): calibrated intervals (90%) cover fewer than 31 of 40 with probability
    0.005; intervals that cover 65% of the time (the named defect, about 0.57 times the right
    width) fail with probability 0.94; a posterior 15% too narrow (coverage about 0.84) is not
    within this study's reach (it passes with probability 0.90): the quadrature checks of the
    score-matrix posterior (``test_lira_scale_mixing.py``, ``test_lira_model.py``) catch it.
    Not asserted any more, because they could not fail: "no interval above the true eps" (the
    truth, 4.38, is far above every interval: the test at alpha = 0.1 never probes the tails
    that set it) and "the printed line's lower end never above the truth" (the claim's
    ceiling, 1.38 at 32 decisions a side, is below 4.38); the claim is checked where it can
    pass the truth in ``test_score_matrix_claim.py``.
    """
    from tests._support.power import at_least_power

    n, k_min = 40, 31
    assert at_least_power(n, k_min, 0.9) <= 0.01 and at_least_power(n, k_min, 0.65) >= 0.8
    out = score_matrix_coverage(mus=(1.0,), n_audits=n, seed=3, n_jobs=2, likelihood="binomial")[
        1.0
    ]
    summary = out.summary()
    covered = int(sum(out.hits("visible_eps")))
    print(f"visible eps covered {covered} of {n}; {summary}")
    assert covered >= k_min, summary
    assert np.median(out.stats["width"]) < 2.0, summary


@pytest.mark.slow
@pytest.mark.statistical
def test_effective_counts_do_not_prevent_false_accusations():
    # docs/validation/lira.md, "Effective counts against false accusations": on the same
    # Laplace-mechanism
    # matrices (eps exactly 1) the binomial on effective counts puts its 90% interval above the
    # truth more often than on raw counts (61 of 100 against 16 of 100 there; 46 audits accused
    # by effective counts alone, 1 by raw counts alone), which is why to_evidence() keeps the raw
    # counts. Paired one-sided sign test on the discordant audits, asked for p < 0.05 (e.g. 5 to
    # 0, 7 to 1). With 28 audits and the measured per-audit rates (0.46 effective only, 0.01 raw
    # only; the third outcome 0.53) the multinomial probability of missing it (a false failure)
    # is 0.0049 (24 audits: 0.015). Fails once the correction stops making things worse (the
    # named defect: both accuse alike, e.g. 0.1 and 0.1: it fails with probability 0.985), the
    # signal to measure it again.
    raw_only = eff_only = 0
    for rng in np.random.default_rng(2032).spawn(28):
        seed = int(rng.integers(2**31))
        kw = dict(mu=1.0, n_targets=64, likelihood="binomial", mechanism="laplace")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = score_matrix_audit(seed, dependence="ignore", **kw)["above_truth"] > 0
            eff = score_matrix_audit(seed, dependence="correct", **kw)["above_truth"] > 0
        raw_only += raw and not eff
        eff_only += eff and not raw
    assert eff_only > 0, (eff_only, raw_only)
    p = stats.binomtest(eff_only, raw_only + eff_only, 0.5, alternative="greater").pvalue
    assert p < 0.05, (eff_only, raw_only)
