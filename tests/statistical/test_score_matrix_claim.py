"""The claim on score-matrix evidence never lies above a mechanism's true eps (reduced versions
of docs/validation/lira.md, "The claim on score-matrix evidence" and "No false accusations of the
claim,
wider"; the study: ``benchmarks/lira_false_accusations.py``).

Audits of ``mia.coverage.score_matrix_audit`` (the benchmark's simulator): 64 models x 64
targets, balanced halves, online test at alpha = 0.1, delta = 1e-5, the default evidence
(``to_evidence()``: binomial on raw counts) and short chains.
"""

import warnings

import numpy as np
import pytest

from mia.coverage import score_matrix_audit


@pytest.mark.slow
@pytest.mark.statistical
def test_claim_never_above_the_true_eps_of_a_laplace_mechanism():
    # 20 audits at mu = 1 (eps = 1, where the binomial posterior's 90% interval lay above the
    # truth in 16 of 100 audits), half with a per-model shift of sd 0.25, and 4 at mu = 6 where
    # the per-target bound is well above 0 (about 0.8), so that it, not 0, is what is checked.
    # False failure: the claim is its frequentist part, the larger of the per-target
    # bound on effective counts (above the truth in 0 of 200 audits per design,
    # docs/validation/lira.md,
    # "The frequentist companion") and the pooled bound (betting: 0 of 26,800 audits,
    # docs/validation/pooled_bound.md), each at half the error; at mu = 1 with 32 test models both
    # are 0
    # in practice (0 of 50 in "The claim with the pooled bound, measured"), at mu = 6 the pooled
    # one is about 1.5 of 6. Power: a claim that stated the posterior's lower end (16% of audits
    # above the truth) would pass all 20 audits at mu = 1 with probability 0.84^20 = 3%.
    rows = []
    for mu, shift, seed in [(1.0, 0.0, 0), (1.0, 0.25, 1), (6.0, 0.0, 2)]:
        n = 10 if mu == 1.0 else 4
        for rng in np.random.default_rng(seed).spawn(n):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = score_matrix_audit(
                    rng,
                    mu=mu,
                    n_targets=64,
                    likelihood="binomial",
                    mechanism="laplace",
                    model_shift=shift,
                    draws=500,
                    tune=300,
                )
            rows.append((mu, r))
    truth = {mu: r["true_eps"][2] for mu, r in rows}
    for mu, r in rows:
        assert r["claim_lower"] == r["frequentist_lower"]  # whatever the posterior says
        assert not r["claim_above_truth"], (mu, r["claim_lower"], truth[mu])
    assert all(r["frequentist_lower"] > 0 for mu, r in rows if mu == 6.0)
    # the posterior's own lower end is what it is (no assertion): shown with -s
    above = sum(r["above_truth"] for mu, r in rows if mu == 1.0)
    print(f"posterior's 90% interval above the truth in {above} of 20 audits at mu = 1")


#: (mechanism, mu, models, targets, shift sd, seed, audits) of the reduced check below.
WHERE_IT_CAN_FAIL = [
    ("laplace", 2.0, 256, 64, 0.0, 10, 4),
    ("laplace", 2.0, 256, 64, 0.25, 11, 4),
    ("gaussian", 0.5, 256, 64, 0.25, 12, 3),
    ("laplace", 2.0, 256, 1000, 0.0, 13, 2),
    ("gaussian", 1e-6, 256, 1000, 0.0, 14, 2),  # eps(1e-5) = 0: any claim above 0 accuses
]


@pytest.mark.slow
@pytest.mark.statistical
def test_claim_never_above_the_truth_where_the_design_allows_it():
    # The per-target part is never above its ceiling, the bound of a target with no error in
    # the most trials any target has, at the Bonferroni level over 2 T rates
    # (docs/validation/lira.md,
    # "The claim's ceiling"): with 64 models that is 1.18 at 64 targets and 0.86 at 1,000, so a
    # mechanism whose eps is above it (the Laplace one at mu = 3, the Gaussian one at mu > 0.31)
    # cannot be falsely accused by it. The pooled part has a ceiling of its own, about
    # log(1 / FPR+) (above 1.2 here), so the claim can pass the truth in every case below; the
    # pooled part set the Laplace claims in the study (0.70-0.77 of the truth at most in 50
    # audits at 256 x 64, "The claim with the pooled bound, measured"; its validity: 0 of
    # 26,800 betting bounds above the truth, docs/validation/pooled_bound.md). Here every case has
    # its
    # per-target ceiling above the truth (asserted: the check can fail): 256 models (128
    # decisions a side; ceiling 2.67 at 64 targets, 2.38 at 1,000) and true eps 2.00
    # (Laplace, mu = 2) or 1.99 (Gaussian, mu = 0.5, its eps(1e-5) by the GDP conversion).
    # The Laplace cases' own bounds are above 0 in every audit (asserted: the claim is not 0
    # by default there).
    # False failure: in the study these cases reduce (benchmarks/lira_false_accusations.py,
    # docs/validation/lira.md "No false accusations of the claim, wider") no claim lay above the
    # truth in
    # 0 of 120 Laplace audits (95% upper limit 3.0% per audit) and the largest claim was 0.60
    # of the truth; the Gaussian claims were 0 in 49 of 50 audits (0.009 of the truth at
    # most). If the per-audit rate were at the 95% upper limit, P(>= 1 of these 10 Laplace
    # audits above) <= 1 - 0.97^10 = 26%; the margin (no claim within 40% of the truth in 120)
    # puts it far lower in practice. By construction each audit's bound holds with 95%
    # probability when the deflated counts have binomial tails, which is what the test checks.
    # Power (a false pass): a claim that stated the posterior's median would have been above
    # the truth in 39 of the study's 100 audits at 256 x 64 (29 without a shift, 10 with), so
    # it would fail these 8 audits with probability 1 - 0.71^4 0.90^4 = 83%; a claim that
    # dropped the correction over targets and the deflation (`uncorrected_lower`, 0.91 of the
    # truth at most in those 100) would pass: this check does not see that error, the unit
    # test tests/mia/test_bounds.py::test_clopper_pearson_max_needs_its_correction does.
    # The eps = 0 case (docs/validation/lira.md, "Cross-fed decisions that point the wrong way"):
    # the
    # per-target bound read reflected made the claim 0.40 and 0.47 in 2 of 4 such audits, so
    # these 2 would catch that with probability about 1 - 0.5^2 = 75%; read as made it was 0 in
    # 20 of 20 audits and 10 of 10 count-only matrices (false failure: 95% upper limit of the
    # rate 14% per audit from the 20; in practice far lower: a target's decisions as made
    # scatter about the eps = 0 line FPR + FNR = 1, and a bound above 0 needs both rates'
    # intervals at level 1 - 0.05/2000 below that line).
    rows = []
    for mech, mu, models, targets, shift, seed, n in WHERE_IT_CAN_FAIL:
        for rng in np.random.default_rng(seed).spawn(n):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = score_matrix_audit(
                    rng,
                    mu=mu,
                    n_models=models,
                    n_targets=targets,
                    likelihood="binomial",
                    mechanism=mech,
                    model_shift=shift,
                    draws=200,
                    tune=150,
                )
            rows.append((mech, targets, r))
    for mech, targets, r in rows:
        truth = r["true_eps"][2]
        assert r["claim_ceiling"] > truth, (mech, targets, r["claim_ceiling"], truth)
        assert r["claim_lower"] == r["frequentist_lower"]
        assert r["frequentist_lower"] == max(r["target_lower"], r["pooled_lower"])
        assert r["target_lower"] <= r["claim_ceiling"]
        assert not r["claim_above_truth"], (mech, targets, r["claim_lower"], truth)
        if mech == "laplace":
            assert r["frequentist_lower"] > 0, (targets, r["frequentist_lower"])
    # shown with -s: the claims, the posterior medians and the truth, for comparison
    for mech, targets, r in rows:
        print(
            f"{mech} {targets}: claim {r['claim_lower']:.3f}, posterior median "
            f"{r['median']:.3f}, true eps {r['true_eps'][2]:.3f}"
        )
