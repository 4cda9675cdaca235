"""The claim on score-matrix evidence (bayes_dp.results.claim_scores): the per-target
Clopper-Pearson bound on effective counts first, the claim's lower end the smaller of it and the
posterior's.

References: the bound against scipy's beta quantiles and the DP inequalities written out by
hand; the claim on a simulated Laplace-mechanism score matrix; a claim without score-matrix
groups against the sentence the version before this change printed.
"""

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
import mia
from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound
from bayes_dp.core.region import clopper_pearson_target_bounds
from bayes_dp.results.claim import UPPER_WORDS
from bayes_dp.results.claim_scores import _column, score_matrix_bound

from tests._support.balanced_rates import selected_by_hand


def _by_hand(fp, n_neg, fn, n_pos, delta, confidence, n_rates, f_fp=1.0, f_fn=1.0, reflect=True):
    """Per-target bound: scipy beta quantiles, then the region's lower constraints by hand."""
    a = (1 - confidence) / n_rates  # each two-sided interval at level 1 - a (Bonferroni)
    out = []
    for k0, n0, k1, n1 in zip(fp, n_neg, fn, n_pos, strict=True):
        f_fp, f_fn = max(f_fp, 1.0), max(f_fn, 1.0)
        k0, n0, k1, n1 = k0 / f_fp, n0 / f_fp, k1 / f_fn, n1 / f_fn
        fp_lo = 0.0 if k0 == 0 else stats.beta.ppf(a / 2, k0, n0 - k0 + 1)
        fp_hi = 1.0 if k0 == n0 else stats.beta.ppf(1 - a / 2, k0 + 1, n0 - k0)
        fn_lo = 0.0 if k1 == 0 else stats.beta.ppf(a / 2, k1, n1 - k1 + 1)
        fn_hi = 1.0 if k1 == n1 else stats.beta.ppf(1 - a / 2, k1 + 1, n1 - k1)
        cands = [0.0]
        # (eps, delta)-DP: x + e^eps y >= 1 - delta and y + e^eps x >= 1 - delta for the error
        # pair (x, y) and for (1 - x, 1 - y); eps is at least what the most extreme rates in the
        # box force: at (fp_hi, fn_hi) below the diagonal, at (1 - fp_lo, 1 - fn_lo) above it
        pairs = ((fp_hi, fn_hi), (1 - fp_lo, 1 - fn_lo)) if reflect else ((fp_hi, fn_hi),)
        for x, y in pairs:
            if 1 - delta - x > 0:
                cands.append(math.log((1 - delta - x) / y))
            if 1 - delta - y > 0:
                cands.append(math.log((1 - delta - y) / x))
        out.append(max(cands))
    return np.array(out)


@pytest.mark.parametrize(
    "fp, n_neg, fn, n_pos, delta, f_fp, f_fn, n_rates",
    [
        ([3, 10], [50, 60], [10, 30], [40, 45], 1e-5, 1.0, 1.0, None),
        ([0, 2, 1], [32, 32, 32], [1, 4, 0], [32, 32, 32], 1e-5, 0.7, 2.6, None),
        ([45], [50], [36], [40], 0.0, 1.5, 2.5, 10),  # above the diagonal: reflected rates
        ([1, 5], [100, 100], [2, 50], [100, 100], 1e-3, 1.0, 3.0, 40),
    ],
)
def test_bound_matches_scipy_and_the_dp_inequalities(
    fp, n_neg, fn, n_pos, delta, f_fp, f_fn, n_rates
):
    args = (fp, n_neg, fn, n_pos, delta, 0.9)
    kw = {"n_rates": n_rates, "fp_design_effect": f_fp, "fn_design_effect": f_fn}
    hand = (*args, n_rates or 2 * len(fp), f_fp, f_fn)
    got = clopper_pearson_target_bounds(*args, reflect=True, **kw)
    want = _by_hand(*hand)
    # both are exact computations of the same quantities (beta quantiles to ~1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got.max() > 0  # the cases are chosen so that some target shows eps > 0
    # the default reads the decisions as made only
    made = clopper_pearson_target_bounds(*args, **kw)
    want = _by_hand(*hand, reflect=False)
    np.testing.assert_allclose(made, want, rtol=1e-9, atol=1e-12)
    assert np.all(made <= got)


def test_bound_is_the_lower_end_of_clopper_pearson_epsilon_without_deflation():
    args = ([40, 50], [1000, 1000], [250, 200], [1000, 1000], 1e-5)
    lo, _ = bdp.clopper_pearson_epsilon(*args)
    assert clopper_pearson_target_bounds(*args).max() == lo


@pytest.mark.parametrize(
    "kw, err, words",
    [
        ({"n_rates": 3}, ValueError, "`n_rates` must be >= 4; found 3"),
        ({"fn_design_effect": 0.0}, ValueError, "`fn_design_effect` must be > 0.0; found 0.0"),
        ({"fp_design_effect": "2"}, TypeError, "`fp_design_effect` must be a real number"),
        ({"confidence": 1.0}, ValueError, "`confidence` must be < 1.0; found 1.0"),
    ],
)
def test_bound_bad_input(kw, err, words):
    with pytest.raises(err, match=words):
        clopper_pearson_target_bounds([1, 2], 10, [3, 4], 10, 1e-5, **kw)


def test_companion_bound_on_effective_counts_is_the_same_function():
    scores, keep = mia.simulate_score_matrix(32, 40, mu=5.0, seed=0)
    res = mia.counts_from_score_matrix(scores, keep, alpha=0.1)
    row = mia.companion_bounds(res, delta=1e-5)["bounds"][1]
    d, c = res.dependence, res.counts
    want = clopper_pearson_target_bounds(
        c.fp,
        c.n_neg,
        c.fn,
        c.n_pos,
        1e-5,
        0.95,
        fp_design_effect=d.fp_design_effect,
        fn_design_effect=d.fn_design_effect,
    ).max()
    assert row["name"] == "max over targets, effective counts" and row["eps"] == want > 0


def test_rows_map_to_score_matrix_columns():
    assert [_column({"skipped_targets": [0, 2]}, r) for r in range(3)] == [1, 3, 4]
    assert _column({"skipped_targets": []}, 5) == 5
    assert _column({}, 5) is None  # a record written before the columns were kept


@pytest.fixture(scope="module")
def laplace_claim():
    # a Laplace mechanism (eps = 6 at delta = 0) seen through a 64 x 64 score matrix, two
    # targets skipped (too few OUT models) so that rows and columns differ
    rng = np.random.default_rng(2)
    _, keep = mia.simulate_score_matrix(64, 64, 0.0, seed=rng)
    keep[:62, :2] = True
    scores = rng.laplace(0.0, 1.0, keep.shape) + 6.0 * keep
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    post = bdp.estimate_epsilon(
        res.to_evidence(), delta=1e-5, chains=2, draws=400, tune=300, seed=3, check=False
    )
    matrix = (scores[:, res.targets], keep[:, res.targets])  # the counted columns
    return res, post, bdp.audit_claim(post), matrix


def test_claim_states_the_per_target_bound_first(laplace_claim):
    res, post, c, (scores, keep) = laplace_claim
    assert res.n_skipped == 2
    q = post.quantile(0.05, "eps")
    f = c.frequentist
    assert c.posterior_lower == pytest.approx(q)
    assert c.frequentist_lower == f["lower"] > 0
    # the claim is the frequentist bound, whatever the posterior's lower end
    assert c.lower == f["lower"]
    # the target named is the row with the largest bound, and its column in the matrix; the
    # per-target bounds get half of the error, the bound pooled over targets the other half
    d, cnt = res.dependence, res.counts
    per = clopper_pearson_target_bounds(
        cnt.fp,
        cnt.n_neg,
        cnt.fn,
        cnt.n_pos,
        1e-5,
        0.95,
        fp_design_effect=d.fp_design_effect,
        fn_design_effect=d.fn_design_effect,
        share=0.5,
    )
    assert f["row"] == int(np.argmax(per)) and f["target_lower"] == per.max()
    # the pooled rates: a test fitted on a seed-0 half of the models, over the kept columns,
    # and over the 8 with the largest |Welch t| on the reference half (worked out here); the
    # two candidates share the pooled half of the error equally
    rates = mia.pooled_model_rates(scores, keep, alpha=0.1, seed=0)
    n = rates["n_test"]  # the bets' horizon: every test model, used or not
    assert n == 32
    pooled = pooled_rates_epsilon_bound(
        rates["fpr"], rates["fnr"], 1e-5, 0.95, share=0.25, horizon=n
    )
    top, fpr, fnr = selected_by_hand(scores, keep, rates)
    picked = pooled_rates_epsilon_bound(fpr, fnr, 1e-5, 0.95, share=0.25, horizon=n)
    assert [x["eps"] for x in f["pooled"]["candidates"]] == [pooled["eps"], picked["eps"]]
    assert f["pooled"]["eps"] == max(pooled["eps"], picked["eps"])
    assert f["pooled"]["n_models"] == 31 and f["pooled"]["share"] == 0.25
    # an optimal attack on every target: the pooled bound is far above any target's own
    assert f["lower"] == f["pooled"]["eps"] > 2 * f["target_lower"]
    assert f["target"] == int(res.targets[f["row"]]) and f["n_positive"] == int((per > 0).sum())
    assert (f["fp"], f["n_neg"]) == (int(cnt.fp[f["row"]]), int(cnt.n_neg[f["row"]]))
    assert f["n_rates"] == 2 * len(cnt) and f["confidence"] == 0.95
    # the five largest own bounds, ties in row order, named by their columns
    rows = np.argsort(-per, kind="stable")[:5]
    assert [t["target"] for t in f["top_targets"]] == [int(res.targets[r]) for r in rows]
    assert [t["lower"] for t in f["top_targets"]] == [float(per[r]) for r in rows]
    # the ceiling: the level recorded by to_evidence, the same deflation (every target 32 + 32)
    want = _ceiling_by_hand(0.1, 32, 32, 1e-5, 0.975, f["n_rates"], f_fn=d.fn_design_effect)[0]
    assert f["alpha"] == 0.1 and f["ceiling"] == pytest.approx(want, rel=1e-9)
    # the pooled bound's own ceiling: its upper FP rate with no false negative at all
    pc = math.log((1 - 1e-5) / min(pooled["fpr_upper"], picked["fpr_upper"]))
    assert f["pooled_ceiling"] == pytest.approx(pc)
    assert f["upper_beyond_ceiling"] == (c.upper > max(f["ceiling"], f["lower"], pc))
    raw = clopper_pearson_target_bounds(cnt.fp, cnt.n_neg, cnt.fn, cnt.n_pos, 1e-5, share=0.5)
    assert f["raw_lower"] == pytest.approx(raw.max())
    s = c.sentence
    # first the bound (after the dependence note, when the counts are that dependent)
    first = s.index(f"With 95% confidence, eps >= {c.lower:.3g} at delta = 1e-05")
    assert s.startswith("NOT RELIABLE: the pooled counts are dependent") or first == 0
    which = "62 targets" if f["pooled"]["targets"] == "all" else "8 targets most exposed"
    assert f"the error rates pooled over the {which}" in s
    assert "with its 31 test models as the units" in s
    assert "Beside it, the largest per-target Clopper-Pearson bound" in s
    assert f"is {f['target_lower']:.3g}; it is set by target {f['target']}" in s
    assert f"target {f['target']} (score-matrix column) of group 'lira'" in s
    assert f"(FP {f['fp']}/{f['n_neg']}, FN {f['fn']}/{f['n_pos']})" in s
    assert f"{f['n_positive']} of {len(cnt)} targets have a bound of their own above 0" in s
    model = s.index("What the model says (not the finding): the posterior's 5% quantile of eps")
    assert first < model < s.index(f"eps is {q:.3g}", model) and "16 of 100 audits" in s
    assert "posterior probability, eps >=" not in s
    assert "this model's (binomial) 90% interval" in s
    # JSON round trip
    d = c.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["frequentist"]["target"] == f["target"] and d["posterior_lower"] == c.posterior_lower


def test_a_posterior_lower_end_below_the_bound_leaves_the_claim():
    # a posterior whose 5% quantile (about 0.67) lies below the per-target bound of its counts:
    # the bound holds without the model, so it is the claim, and the model's figure follows
    # it with the reason it is lower; the interval line cites the bound
    rng = np.random.default_rng(4)
    counts = {"fp": [0, 3], "n_neg": [60, 60], "fn": [0, 30], "n_pos": [60, 60]}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0}
    st = {"delta": 1e-5, "groups": [{"name": "g", "counts": counts, "dependence": rec}]}
    post = bdp.Posterior({"eps": rng.normal(1.0, 0.2, 40_000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    f = score_matrix_bound(st, 0.95)["lower"]
    assert c.posterior_lower < f == c.frequentist_lower == c.lower
    assert c.sentence.startswith(
        f"With 95% confidence, eps >= {f:.3g} at delta = 1e-05, whatever the attack strength"
    )
    model = f"the posterior's 5% quantile of eps is {c.posterior_lower:.3g} at delta = 1e-05"
    assert model in c.sentence
    assert "it lies below the bound above, which holds without the model" in c.sentence
    assert not c.cites_model_lower and c.upper_source == "model"
    assert c.interval_words() == (
        f"eps >= {f:.3g} (what the audit shows at 95%, the claim below); the model's 95% "
        f"quantile, {c.upper:.3g}, is not a finding (an audit shows how large eps is at least, "
        f"never at most), and its own 5% quantile, {c.posterior_lower:.3g}, is not a finding"
    )
    assert c.to_dict()["interval"] == [f, None]


def test_corrected_counts_are_not_deflated_again():
    counts = {"fp": [0, 3], "n_neg": [30, 30], "fn": [0, 15], "n_pos": [15, 15]}
    rec = {"fp_design_effect": 2.0, "fn_design_effect": 2.0, "info_ratio": 0.5, "corrected": True}
    st = {"delta": 1e-5, "groups": [{"name": "g", "counts": counts, "dependence": rec}]}
    b = score_matrix_bound(st, 0.95)
    assert (b["fp_design_effect"], b["fn_design_effect"]) == (1.0, 1.0)
    assert b["lower"] == b["raw_lower"] > 0


def test_a_dependent_score_matrix_says_which_bound_allows_for_it():
    counts = {"fp": [0, 3], "n_neg": [30, 30], "fn": [0, 15], "n_pos": [30, 30]}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 3.0, "info_ratio": 1 / 3}
    st = {"delta": 1e-5, "groups": [{"name": "g", "counts": counts, "dependence": rec}]}
    post = bdp.Posterior({"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    assert not c.reliable and c.sentence.startswith("NOT RELIABLE: the pooled counts are dependent")
    assert "the per-target bound deflates every target's counts" in c.sentence
    assert "the pooled bound takes the models as its units" in c.sentence
    assert c.frequentist["fn_design_effect"] == 3.0
    # no per-model rates recorded: no pooled bound, and the per-target bounds get all the error
    assert c.frequentist["pooled"] is None and c.frequentist["per_target_share"] == 1.0


def _designed_settings(counts, likelihoods=("binomial",)):
    groups = [
        {"name": f"g{k}", "likelihood": lik, "strength": "shared", "counts": counts, "fix": {}}
        for k, lik in enumerate(likelihoods)
    ]
    return {"eps_prior": ["HalfNormal", 10.0], "delta": 1e-5, "groups": groups}


def _cp_by_hand(fp, n0, fn, n1, delta, level):
    """The bound of one base from scipy's Beta quantiles (both readings of the base)."""
    t = (1.0 - level) / 2.0
    a_hi = stats.beta.ppf(1.0 - t, fp + 1, n0 - fp) if fp < n0 else 1.0
    b_hi = stats.beta.ppf(1.0 - t, fn + 1, n1 - fn) if fn < n1 else 1.0
    a_lo = stats.beta.ppf(t, fp, n0 - fp + 1) if fp > 0 else 0.0
    b_lo = stats.beta.ppf(t, fn, n1 - fn + 1) if fn > 0 else 0.0

    def g(a, b):  # smallest eps whose region holds (a, b), below the diagonal
        v = [np.log((1 - delta - b) / a) if a > 0 and 1 - delta - b > 0 else -np.inf]
        v.append(np.log((1 - delta - a) / b) if b > 0 and 1 - delta - a > 0 else -np.inf)
        return max(0.0, *v)

    return max(g(a_hi, b_hi), g(1.0 - a_lo, 1.0 - b_lo))


def test_claim_on_designed_bases_states_the_classical_bound_first():
    """The posterior's 5% quantile (2.67) is above the classical bound (2.51): the claim states
    the bound, checked against scipy's Beta quantiles, and the model's figure after it."""
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    st = _designed_settings(counts)
    post = bdp.Posterior({"eps": rng.normal(3.0, 0.2, 40000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    level = 1.0 - 0.05 / 4
    by_hand = max(
        _cp_by_hand(40, 1000, 250, 1000, 1e-5, level), _cp_by_hand(50, 1000, 200, 1000, 1e-5, level)
    )
    assert c.frequentist_lower == pytest.approx(by_hand, rel=1e-9)
    assert c.posterior_lower == post.quantile(0.05, "eps")
    assert c.lower == c.frequentist_lower < c.posterior_lower
    assert c.sentence.startswith(f"With 95% confidence, eps >= {by_hand:.3g} at delta = 1e-05")
    assert (
        "What the model says (not the finding): the posterior's 5% quantile of eps is 2.67"
        in c.sentence
    )
    assert c.frequentist["row"] == 0 and c.frequentist["group"] == "g0"
    assert c.to_dict()["frequentist"]["n_rates"] == 4
    assert c.upper_source == "data"  # the upper end's sentence is kept


def test_claim_on_designed_bases_keeps_a_smaller_posterior_bound():
    """Where the posterior's quantile is below the classical bound, it is the claim."""
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    post = bdp.Posterior(
        {"eps": rng.normal(2.0, 0.2, 40000).reshape(4, -1)}, {}, _designed_settings(counts)
    )
    c = bdp.audit_claim(post)
    assert c.lower == c.posterior_lower == post.quantile(0.05, "eps") < c.frequentist_lower
    assert c.sentence.startswith(f"With 95% posterior probability, eps >= {c.lower:.3g}")
    assert (
        f"what the attack shows without a model is eps >= {c.frequentist_lower:.3g}" in c.sentence
    )


def test_claim_on_designed_bases_leaves_over_dispersed_groups_out():
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    draws = {"eps": rng.normal(3.0, 0.2, 40000).reshape(4, -1)}
    post = bdp.Posterior(draws, {}, _designed_settings(counts, ("binomial", "beta_binomial")))
    c = bdp.audit_claim(post)
    assert c.frequentist["skipped"] == ["g1"] and c.frequentist["n_bases"] == 2
    assert "groups ['g1'] are left out of it" in c.sentence
    only = bdp.Posterior(draws, {}, _designed_settings(counts, ("bivariate_normal",)))
    c = bdp.audit_claim(only)  # no binomial group: the posterior's sentence alone
    assert c.frequentist is None and c.lower == only.quantile(0.05, "eps")
    assert c.sentence.startswith("With 95% posterior probability")


def _ceiling_by_hand(alpha, n0, n1, delta, confidence, n_rates, f_fp=1.0, f_fn=1.0):
    """Bound of the target FP = round(alpha n0), FN = 0: scipy beta quantiles, DP by hand."""
    a = (1 - confidence) / n_rates
    k0 = round(alpha * n0) / f_fp
    n0, n1 = n0 / f_fp, n1 / f_fn
    fp_lo = 0.0 if k0 == 0 else stats.beta.ppf(a / 2, k0, n0 - k0 + 1)
    fp_hi = stats.beta.ppf(1 - a / 2, k0 + 1, n0 - k0)
    fn_hi = 1 - (a / 2) ** (1 / n1)  # Beta(1, n1)'s 1 - a/2 quantile in closed form (FN = 0)
    # below the diagonal: FNR >= 1 - delta - e^eps FPR (the test's own constraint, at most
    # log((1 - delta) / FPR)) and FPR >= 1 - delta - e^eps FNR (limited by the IN trials only)
    cands = [0.0, math.log((1 - delta - fp_hi) / fn_hi), math.log((1 - delta - fn_hi) / fp_hi)]
    # above it, at (1 - fp_lo, 1 - fn_lo = 1): 1 - delta - 1 < 0 and fp_lo - delta < 1, vacuous
    assert math.log(max(fp_lo - delta, 1e-300)) < 0
    return max(cands), math.log((1 - delta - fn_hi) / fp_hi)


def _st(counts, rec, delta=1e-5):
    st = {"delta": delta, "groups": [{"name": "g", "counts": counts, "dependence": rec}]}
    st["eps_prior"] = ["HalfNormal", 10.0]
    return st


@pytest.mark.parametrize(
    "alpha, n_neg, n_pos, f_fp, f_fn",
    [
        (0.1, [32, 32, 32], [32, 32, 32], 1.0, 2.06),
        (0.05, [20, 40, 40], [60, 30, 45], 1.3, 1.0),
        (0.1, [2000, 2000], [2000, 2000], 1.0, 1.0),
    ],
)
def test_ceiling_matches_scipy_and_the_dp_inequalities(alpha, n_neg, n_pos, f_fp, f_fn):
    t = len(n_neg)
    counts = {"fp": [0] * t, "n_neg": n_neg, "fn": [n // 2 for n in n_pos], "n_pos": n_pos}
    rec = {"fp_design_effect": f_fp, "fn_design_effect": f_fn, "info_ratio": 1.0, "alpha": alpha}
    delta = 1e-5
    b = score_matrix_bound(_st(counts, rec, delta), 0.95)
    hand = [
        _ceiling_by_hand(alpha, n0, n1, delta, 0.95, 2 * t, f_fp, f_fn)
        for n0, n1 in zip(n_neg, n_pos, strict=True)
    ]
    j = int(np.argmax([h[0] for h in hand]))
    # both are exact computations of the same quantities (beta quantiles to ~1e-12)
    assert b["ceiling"] == pytest.approx(hand[j][0], rel=1e-9, abs=1e-12)
    assert (b["ceiling_n_neg"], b["ceiling_n_pos"]) == (n_neg[j], n_pos[j])
    assert b["ceiling_fp"] == round(alpha * n_neg[j]) and b["alpha"] == alpha
    raw = max(
        _ceiling_by_hand(alpha, n0, n1, delta, 0.95, 2 * t)[0]
        for n0, n1 in zip(n_neg, n_pos, strict=True)
    )
    assert b["raw_ceiling"] == pytest.approx(raw, rel=1e-9, abs=1e-12)
    assert b["raw_ceiling"] >= b["ceiling"]
    # the test's own constraint never shows more than log((1 - delta) / alpha) (the issue's
    # "about log(1/alpha)") since its FPR upper end is above alpha; the other one is limited
    # only by the IN trials, so with 2,000 a side the ceiling passes log(1 / alpha)
    assert all(h[1] < math.log((1 - delta) / alpha) for h in hand)
    assert (b["ceiling"] > math.log(1 / alpha)) == (n_pos[0] == 2000)


def test_to_evidence_records_the_level():
    scores, keep = mia.simulate_score_matrix(16, 4, mu=2.0, seed=0)
    res = mia.counts_from_score_matrix(scores, keep, alpha=0.05)
    assert res.to_evidence().dependence["alpha"] == 0.05


def _narrow_post(st, seed=7):
    rng = np.random.default_rng(seed)
    return bdp.Posterior({"eps": rng.normal(3.0, 0.2, 40_000).reshape(4, -1)}, {}, st)


def test_upper_end_beyond_the_ceiling_is_the_attack_levels():
    # 32 trials a side at alpha = 0.1: no target can show much more than 1, the posterior's
    # upper end is about 3.3 and the prior check calls it the data's
    counts = {"fp": [3, 1, 4], "n_neg": [32] * 3, "fn": [10, 0, 20], "n_pos": [32] * 3}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0}
    before = bdp.audit_claim(_narrow_post(_st(counts, rec)))  # a record without the level
    # the prior check calls it the data's; on score-matrix evidence the claim calls it the model's
    assert before.upper_source == "model" and before.frequentist["ceiling"] is None
    assert before.frequentist["upper_beyond_ceiling"] is None
    c = bdp.audit_claim(_narrow_post(_st(counts, {**rec, "alpha": 0.1})))
    f = c.frequentist
    assert f["ceiling"] == pytest.approx(_ceiling_by_hand(0.1, 32, 32, 1e-5, 0.95, 6)[0])
    assert c.upper > max(f["ceiling"], f["lower"]) and f["upper_beyond_ceiling"] is True
    assert c.upper_source == "attack_level" and "is the model's, not a finding" in before.sentence
    assert "set by the data" not in c.sentence and "set by the data" not in before.sentence
    assert (
        f"The upper end, the model's 95% quantile of eps, {c.upper:.3g}, "
        "lies beyond what the attack could show at its level: a target tested at false-positive "
        f"rate alpha = 0.1 with 32 OUT and 32 IN models, its FP count at that level (3) and no "
        f"false negative, would have a bound of {f['ceiling']:.3g}"
    ) in c.sentence
    assert (
        "No target's own evidence reaches it: it is set by the model (which pools the targets) "
        "and the prior of eps, not by what the attack showed; cite the lower bound."
    ) in c.sentence
    # everything before the upper end's sentence is the same
    head = before.sentence[: before.sentence.index("The upper end")]
    assert c.sentence.startswith(head)
    assert json.loads(json.dumps(c.to_dict(), allow_nan=False))["upper_source"] == "attack_level"


def test_upper_end_within_the_ceiling_is_the_models():
    # 2,000 trials a side: the ceiling (about 5.4) is above the upper end (about 3.3); the prior
    # check alone would call it the data's, the claim calls it the model's
    counts = {"fp": [200, 150], "n_neg": [2000] * 2, "fn": [900, 1000], "n_pos": [2000] * 2}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0}
    before = bdp.audit_claim(_narrow_post(_st(counts, rec)))
    c = bdp.audit_claim(_narrow_post(_st(counts, {**rec, "alpha": 0.1})))
    assert c.frequentist["ceiling"] > c.upper and c.frequentist["upper_beyond_ceiling"] is False
    assert c.upper_source == before.upper_source == "model" and c.sentence == before.sentence
    assert "beyond what the attack could show" not in c.sentence
    assert "set by the data" not in c.sentence
    assert (
        f"The upper end, the model's 95% quantile of eps, {c.upper:.3g}, is "
        "the model's, not a finding: an audit shows how large eps is at least, never at most"
    ) in c.sentence
    assert "here no target's own bound is above 0" not in c.sentence  # targets show eps > 0
    assert c.frequentist["n_positive"] > 0
    # a matrix where no target shows anything says so
    flat = {"fp": [200, 210], "n_neg": [2000] * 2, "fn": [1790, 1800], "n_pos": [2000] * 2}
    n = bdp.audit_claim(_narrow_post(_st(flat, {**rec, "alpha": 0.1})))
    assert n.frequentist["n_positive"] == 0 and n.upper_source == "model"
    assert "is the model's, not a finding (here no target's own bound is above 0)" in n.sentence
    assert json.loads(json.dumps(n.to_dict(), allow_nan=False))["upper_source"] == "model"


def test_upper_end_set_by_the_prior_says_both():
    rng = np.random.default_rng(5)
    counts = {"fp": [3, 1], "n_neg": [32] * 2, "fn": [10, 0], "n_pos": [32] * 2}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0, "alpha": 0.1}
    # draws from the prior itself: the upper end moves with the prior's scale
    draws = np.abs(rng.normal(0.0, 10.0, 40_000)).reshape(4, -1)
    c = bdp.audit_claim(bdp.Posterior({"eps": draws}, {}, _st(counts, rec)))
    assert c.upper_source == "prior" and c.frequentist["upper_beyond_ceiling"] is True
    s = c.sentence
    assert s.index("is set by the prior of eps") < s.index(
        "It also lies beyond what the attack could show at its level: a target tested at "
        "false-positive rate alpha = 0.1"
    )


def test_top_targets_name_the_largest_bounds_by_column():
    # two groups; group a has columns 0 and 3 skipped, so its rows 0..5 are columns 1, 2, 4..7
    a = {"fp": [0, 5, 1, 0, 8, 2], "n_neg": 40, "fn": [0, 20, 3, 10, 30, 1], "n_pos": 40}
    b = {"fp": [0, 2], "n_neg": 40, "fn": [1, 2], "n_pos": 40}
    rec_a = {"fp_design_effect": 1.0, "fn_design_effect": 1.5, "skipped_targets": [3, 0]}
    rec_b = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "skipped_targets": []}
    st = {
        "delta": 1e-5,
        "groups": [
            {"name": "a", "counts": a, "dependence": rec_a},
            {"name": "b", "counts": b, "dependence": rec_b},
        ],
    }
    per = {
        name: clopper_pearson_target_bounds(
            c["fp"],
            c["n_neg"],
            c["fn"],
            c["n_pos"],
            1e-5,
            0.95,
            n_rates=16,
            fn_design_effect=f,
        )
        for name, c, f in (("a", a, 1.5), ("b", b, 1.0))
    }
    cols = {"a": [1, 2, 4, 5, 6, 7], "b": [0, 1]}
    want = sorted(
        ((float(v), g, cols[g][r]) for g in "ab" for r, v in enumerate(per[g]) if v > 0),
        key=lambda t: -t[0],
    )
    assert len(want) > 5  # the list is cut at 5
    f = score_matrix_bound(st, 0.95)
    got = [(t["lower"], t["group"], t["target"]) for t in f["top_targets"]]
    assert [t[0] for t in got] == pytest.approx([t[0] for t in want[:5]], rel=1e-12)
    # largest first, the groups' rows mapped to their columns (no ties among these bounds)
    assert [(g, t) for _, g, t in got] == [(g, t) for _, g, t in want[:5]]
    assert f["n_positive"] == len(want) and f["alpha"] is None and f["ceiling"] is None
    post = bdp.Posterior({"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}, {}, st)
    s = bdp.audit_claim(post).sentence
    named = ", ".join(f"target {t['target']} ({t['lower']:.3g})" for t in f["top_targets"])
    assert f"the targets that drive the lower end; the largest: {named})" in s
    # a single target above 0 is the one that sets the bound: no list
    one = {**st, "groups": st["groups"][1:]}
    one["groups"][0] = {**one["groups"][0], "counts": {**b, "fp": [0, 20], "fn": [1, 20]}}
    f1 = score_matrix_bound(one, 0.95)
    assert f1["n_positive"] == 1 and f1["top_targets"][0]["target"] == 0
    s1 = bdp.audit_claim(
        bdp.Posterior({"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}, {}, one)
    ).sentence
    assert "the largest:" not in s1 and "1 of 2 targets have a bound of their own above 0" in s1


@pytest.mark.parametrize("f_fn", [1.0, 2.0])
@pytest.mark.parametrize("n", [32, 128])
def test_best_target_bound_closed_form_under_padding(n, f_fn):
    # docs/validation/lira.md, "The claim's ceiling": a target with no error in n OUT and n IN
    # trials,
    # among T targets, each rate at level 1 - a with a = (1 - p) / (2 T): the two-sided
    # Clopper-Pearson upper end of a rate with 0 errors in m trials is 1 - (a / 2)^(1 / m), so
    # with q_x = (a / 2)^(f_x / n) the bound is max(0, log((q_fp - delta) / (1 - q_fn)),
    # log((q_fn - delta) / (1 - q_fp))); with f_fp = f_fn it is -log(expm1(c)) up to delta,
    # c = f log(4 T / (1 - p)) / n. Against the beta quantiles of the function.
    delta, p = 1e-5, 0.95
    prev = np.inf
    for T in (15, 315, 1015, 10015, 50015):
        a2 = (1 - p) / (4 * T)
        q_fp, q_fn = a2 ** (1 / n), a2 ** (f_fn / n)
        closed = max(
            0.0, math.log((q_fp - delta) / (1 - q_fn)), math.log((q_fn - delta) / (1 - q_fp))
        )
        got = clopper_pearson_target_bounds(
            0, n, 0, n, delta, p, n_rates=2 * T, fn_design_effect=f_fn
        )[0]
        assert got == pytest.approx(closed, rel=1e-9, abs=1e-12)
        if f_fn == 1.0:
            c = math.log(4 * T / (1 - p)) / n
            # the two differ by log(q / (q - delta)) ~ delta / q
            assert got == pytest.approx(-math.log(math.expm1(c)), abs=2 * delta / q_fp)
        assert got < prev  # more targets, a stricter level, a lower bound
        prev = got


def test_the_claim_reads_the_decisions_as_made_not_reflected():
    # docs/validation/lira.md, "Cross-fed decisions that point the wrong way": on a score matrix of
    # a
    # mechanism with eps = 0 (scores independent of membership; 256 models x 1,000 targets,
    # seed 1) some targets have every IN model decided "non-member" and most OUT models
    # "member" (the leave-one-out fit of the held-out model's own side); read reflected, such a
    # target shows eps > 0, a false accusation. The claim's bound reads the decisions as made
    # (reflect=False) and is 0 there; both against the by-hand bound.
    scores, keep = mia.simulate_score_matrix(256, 1000, 0.0, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1)
    c, d = res.counts, res.dependence
    deff = {"fp_design_effect": d.fp_design_effect, "fn_design_effect": d.fn_design_effect}
    args = (c.fp, c.n_neg, c.fn, c.n_pos, 1e-5, 0.95)
    reflected = clopper_pearson_target_bounds(*args, reflect=True, **deff)
    made = clopper_pearson_target_bounds(*args, **deff)  # the default: as made
    i = int(np.argmax(reflected))
    assert reflected[i] > 0.1  # the false accusation the reflection makes (0.265 when run)
    assert c.fn[i] >= c.n_pos[i] - 8 and c.fp[i] > 0.3 * c.n_neg[i]  # wrong on both sides
    assert made.max() == 0.0
    n = 2 * len(c)
    for r in (i, int(np.argmax(c.fp / c.n_neg))):
        row = ([c.fp[r]], [c.n_neg[r]], [c.fn[r]], [c.n_pos[r]], 1e-5, 0.95, n)
        hand = {"f_fp": max(d.fp_design_effect, 1), "f_fn": max(d.fn_design_effect, 1)}
        assert reflected[r] == pytest.approx(_by_hand(*row, **hand)[0], rel=1e-9, abs=1e-12)
        assert made[r] == pytest.approx(
            _by_hand(*row, **hand, reflect=False)[0], rel=1e-9, abs=1e-12
        )
    st = {
        "delta": 1e-5,
        "groups": [
            {
                "name": "lira",
                "counts": {k: getattr(c, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")},
                "dependence": res.to_evidence().dependence,
            }
        ],
    }
    fb = score_matrix_bound(st, 0.95)
    assert fb["lower"] == 0.0 and fb["raw_lower"] == 0.0 and fb["n_positive"] == 0
    # a target that shows something keeps its bound: the reflection does not matter there
    assert clopper_pearson_target_bounds(1, 32, 0, 32, 1e-5, reflect=False)[0] == pytest.approx(
        clopper_pearson_target_bounds(1, 32, 0, 32, 1e-5, reflect=True)[0]
    )


def test_claim_of_a_one_run_posterior_states_the_one_run_bound_first():
    """Two audits: the bound at 0.975 each (Bonferroni), the larger stated first."""
    from bayes_dp.one_run.core import OneRunCounts, estimate_one_run, one_run_epsilon_bound

    c = OneRunCounts(m=1000, r=[1000, 400], v=[737, 300])
    post = estimate_one_run(c, delta=0.0, seed=3)
    claim = bdp.audit_claim(post)
    each = one_run_epsilon_bound(c, 0.0, 0.975)
    assert claim.frequentist_lower == pytest.approx(each.max(), rel=1e-12)
    assert claim.frequentist["row"] == int(np.argmax(each)) and claim.frequentist["n_audits"] == 2
    assert claim.posterior_lower == pytest.approx(post.quantile(0.05, "eps"))
    assert claim.lower == min(claim.posterior_lower, claim.frequentist_lower)
    if claim.lower < claim.posterior_lower:
        assert claim.sentence.startswith(f"With 95% confidence, eps >= {claim.lower:.3g}")
        assert "the largest one-run bound of the audits" in claim.sentence


def test_the_model_sentence_cites_the_models_own_record():
    # each score-matrix model is cited with its own measured false-accusation count
    # (MODEL_ACCUSATIONS), an unmeasured one says so and cites the default's
    from bayes_dp.results.claim_scores import MODEL_ACCUSATIONS, _model_record

    def st(lik, reflect):
        return {"groups": [{"dependence": {}, "counts": {}, "likelihood": lik, "reflect": reflect}]}

    k, n, _ = MODEL_ACCUSATIONS[("exposure_mixture", False)]
    words = _model_record(st("exposure_mixture", False))
    assert "(exposure-mixture, decisions read as made) 90% interval" in words
    assert f"in {k} of {n} audits" in words and "not measured" not in words
    k, n, _ = MODEL_ACCUSATIONS[("binomial", True)]
    words = _model_record(st("beta_binomial", True))
    assert words.startswith("this model (beta_binomial) was not measured")
    assert f"the binomial's 90% interval lay entirely above the true eps in {k} of {n}" in words
    # two score groups of different models: each cites its own record
    both = {"groups": st("binomial", True)["groups"] + st("exposure_mixture", False)["groups"]}
    words = _model_record(both)
    assert "this model's (binomial) 90% interval" in words
    assert "this model's (exposure-mixture, decisions read as made) 90% interval" in words


def test_the_pooled_bound_needs_enough_test_models():
    # 30 models: 15 test models, 14 used (the last one's memberships are known from the
    # others'), below POOLED_MIN_MODELS (a rule of the design, not of the data): the claim
    # keeps all of its error for the per-target bounds; 32 models: 16, 15 used, it pools
    from bayes_dp.results.claim_scores import POOLED_MIN_MODELS

    assert POOLED_MIN_MODELS == 15
    for n_models, pooled in ((30, False), (32, True)):
        scores, keep = mia.simulate_score_matrix(n_models, 40, mu=3.0, seed=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mia.counts_from_score_matrix(scores, keep, 0.1)
        ev = res.to_evidence()
        assert len(ev.dependence["pooled_rates"]["fpr"]) == n_models // 2 - 1
        c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
        st = {"delta": 1e-5, "groups": [{"name": "g", "counts": c, "dependence": ev.dependence}]}
        b = score_matrix_bound(st, 0.95)
        assert (b["pooled"] is not None) == pooled
        assert b["per_target_share"] == (0.5 if pooled else 1.0)
        per = clopper_pearson_target_bounds(
            res.counts.fp,
            res.counts.n_neg,
            res.counts.fn,
            res.counts.n_pos,
            1e-5,
            0.95,
            fp_design_effect=max(res.dependence.fp_design_effect, 1.0),
            fn_design_effect=max(res.dependence.fn_design_effect, 1.0),
            share=b["per_target_share"],
        )
        assert b["target_lower"] == pytest.approx(per.max())
        assert b["pooled_too_few"] == (not pooled)
        draws = {"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}
        sentence = bdp.audit_claim(bdp.Posterior(draws, {}, st)).sentence
        said = "no bound pooled over the targets: fewer than 15 test models" in sentence
        assert said == (not pooled)


def test_plain_rates_of_an_earlier_record_give_no_pooled_bound():
    # a record without ``n_test`` holds the plain per-model rates of an earlier version (which
    # LiRA's balanced design can tilt): the claim keeps all its error for the per-target
    # bounds and says why, instead of pooling them
    scores, keep = mia.simulate_score_matrix(64, 40, mu=3.0, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1)
    dep = dict(res.to_evidence().dependence)
    c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
    now = score_matrix_bound(
        {"delta": 1e-5, "groups": [{"name": "g", "counts": c, "dependence": dep}]}, 0.95
    )
    assert now["pooled"] is not None and not now["pooled_legacy"]
    dep["pooled_rates"] = {k: v for k, v in dep["pooled_rates"].items() if k != "n_test"}
    st = {"delta": 1e-5, "groups": [{"name": "g", "counts": c, "dependence": dep}]}
    old = score_matrix_bound(st, 0.95)
    assert old["pooled"] is None and old["pooled_legacy"] and not old["pooled_too_few"]
    assert old["per_target_share"] == 1.0 and old["lower"] == old["target_lower"]
    draws = {"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}
    sentence = bdp.audit_claim(bdp.Posterior(draws, {}, st)).sentence
    assert "recorded before they were balanced for LiRA's design" in sentence


def test_the_interval_line_gives_the_bound_to_cite_where_the_model_lower_end_is_not_it():
    """The line above the sentence (``interval_words``): the model's 90% interval where its lower
    end is the claim; where a smaller bound took the lower end's place, no interval with the
    model's lower end: the bound is the lower end, the model's own a figure "not a finding"."""
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    st = _designed_settings(counts)
    for centre, cites in ((3.0, False), (2.0, True)):
        post = bdp.Posterior({"eps": rng.normal(centre, 0.2, 40000).reshape(4, -1)}, {}, st)
        c = bdp.audit_claim(post)
        lo, hi = post.interval(0.9, "eps")
        assert c.model_lower == pytest.approx(lo, rel=1e-12)
        assert c.upper == pytest.approx(hi, rel=1e-12)
        assert c.cites_model_lower is cites and (c.lower == c.posterior_lower) is cites
        words = c.interval_words()
        if cites:
            assert words == f"90% credible interval for eps: [{lo:.3g}, {hi:.3g}]"
        else:  # a narrow posterior: the data set its upper end, so the line is an interval
            f = c.frequentist_lower
            assert c.upper_source == "data"
            assert words.startswith(f"eps in [{f:.3g}, {hi:.3g}] (lower end: what the audit shows")
            assert "upper end: the model's 95% quantile, set by the data)" in words
            assert words.endswith(f"the model's own 5% quantile, {lo:.3g}, is not a finding")
            assert f"[{lo:.3g}," not in words  # no interval with the model's lower end
        d = c.to_dict()
        assert d["interval_words"] == words and d["cites_model_lower"] is cites
        assert d["interval"] == [c.lower, c.upper]
        assert d["model_lower"] == c.model_lower
    # where the prior sets the upper end, the line states the bound alone: no printed interval
    wide = bdp.audit_claim(
        bdp.Posterior({"eps": 3.0 + rng.exponential(5.0, 40000).reshape(4, -1)}, {}, st)
    )
    assert not wide.cites_model_lower and wide.upper_source == "prior"
    words = wide.interval_words()
    assert words.startswith(f"eps >= {wide.lower:.3g} (what the audit shows at 95%")
    assert f"quantile, {wide.upper:.3g}, is {UPPER_WORDS['prior']}, and its own 5%" in words
    assert wide.to_dict()["interval"] == [wide.lower, None]


def test_chains_that_did_not_converge_leave_the_bound_and_void_the_models_figures():
    # the frequentist bound reads the counts only: chains that did not converge change the
    # model's sentences after it, never the bound; a minor mode (a point of much higher density
    # at eps ~ 0 that no chain visited, the DP-SGD runs of docs/validation/lira.md) withdraws the
    # draws'
    # quantiles, which are not the posterior's
    counts = {"fp": [200, 150], "n_neg": [2000] * 2, "fn": [900, 1000], "n_pos": [2000] * 2}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0, "alpha": 0.1}
    ok = bdp.audit_claim(_narrow_post(_st(counts, rec)))
    assert ok.reliable and ok.lower_from_counts and ok.lower == ok.frequentist_lower > 0
    found = {"eps": 1e-6, "log_post": -10.0, "log_post_draws": -783.0}
    minor = {**_st(counts, rec), "converged": False, "stop_reason": "minor_mode"}
    stuck = {**_st(counts, rec), "converged": False, "stop_reason": "max_time"}
    m = bdp.audit_claim(_narrow_post({**minor, "minor_mode": found}))
    t = bdp.audit_claim(_narrow_post(stuck))
    first = ok.sentence.split(". What the model says")[0]
    for c in (m, t):
        assert not c.reliable and c.lower_from_counts
        assert (c.lower, c.frequentist) == (ok.lower, ok.frequentist)  # the bound is untouched
        assert c.sentence.startswith(first) and "NOT RELIABLE: the chains" not in c.sentence
        assert c.sentence.endswith("does not depend on the chains.") or "NOT RELIABLE" in c.sentence
    # a minor mode: neither the draws' quantiles nor the posterior are reported as figures
    assert m.upper_source == "minor_mode" and m.interval == (m.lower, None)
    assert "What the model says is not reported: its chains missed a mode" in m.sentence
    assert "at eps = 1e-06 (a minor-mode warning: 773 log units above the best draw)" in m.sentence
    assert f"95% quantile {m.upper:.3g}, are not the posterior's" in m.sentence
    assert "What the model says (not the finding)" not in m.sentence
    assert "The upper end" not in m.sentence and "set by the data" not in m.sentence
    assert m.interval_words() == (
        f"eps >= {m.lower:.3g} (what the audit shows at 95%, the claim below); the model's "
        "quantiles are not reported: its chains missed a mode of much higher posterior density "
        "at eps ~ 0"
    )
    d = json.loads(json.dumps(m.to_dict(), allow_nan=False))
    assert d["interval"] == [m.lower, None] and d["lower_from_counts"] is True
    # another failed check: the model's sentences stay, after one that says they are not reliable
    assert t.upper_source == ok.upper_source and t.interval == ok.interval
    after = t.sentence[len(first) :]
    assert after.startswith(". The model's figures that follow are NOT RELIABLE: its chains did")
    assert ok.sentence[len(first) :][1:].strip() in after  # then the model's sentences, unchanged
    # a designed-bases claim that rests on the draws still says NOT RELIABLE first
    designed = bdp.audit_claim(
        _narrow_post({**_designed_settings(counts), "converged": False, "stop_reason": "max_time"})
    )
    assert not designed.lower_from_counts and designed.sentence.startswith("NOT RELIABLE")


def test_a_model_upper_end_below_the_bound_is_ruled_out_by_the_data():
    # the band model's dominant mode at eps ~ 0 (the chains sampled again from it,
    # docs/validation/lira.md,
    # "A mode the chains missed") while the counts alone bound eps above 0: the model's answer
    # is contradicted by a bound that holds without it, and the claim says so
    counts = {"fp": [200, 150], "n_neg": [2000] * 2, "fn": [900, 1000], "n_pos": [2000] * 2}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0, "alpha": 0.1}
    restart = {
        "eps": 1e-6,
        "log_post": -10.0,
        "log_post_draws": -783.0,
        "z": [-13.8, 0.0],
        "chains": [0, 1, 2, 3],
        "first_draws": 1000,
        "first_eps_quantiles": [0.84, 0.92, 0.99],
        "first_stop_reason": "max_draws",
    }
    st = {**_st(counts, rec), "converged": True, "mode_restart": restart}
    rng = np.random.default_rng(3)
    post = bdp.Posterior({"eps": rng.uniform(1e-8, 2e-6, 40_000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    assert c.reliable and c.lower == c.frequentist_lower > c.upper > 0
    assert c.upper_source == "model" and c.interval == (c.lower, None)
    assert (
        f"The upper end, the model's 95% quantile of eps, {c.upper:.3g}, lies below the bound "
        "above, which holds without the model: the data rule the model's answer out."
    ) in c.sentence
    assert f"outvote the {c.frequentist['n_positive']} whose own bound is above 0" in c.sentence
    # the restart is said after the model's figures, with the first chains' quantiles
    model_at = c.sentence.index("What the model says (not the finding)")
    restart_at = c.sentence.index("The model's figures come from chains started again")
    assert model_at < restart_at < c.sentence.index("The upper end")
    assert "(eps = 1e-06, 773 log units above their best draw)" in c.sentence
    first = "the first chains' 5% and 95% quantiles, 0.84 and 0.99, were a minor mode's"
    assert first in c.sentence
    # the second run ran out of time: the figures are not reliable, and still the second run's
    stuck = {**st, "converged": False, "stop_reason": "max_time"}
    c2 = bdp.audit_claim(bdp.Posterior({"eps": post.draws("eps")}, {}, stuck))
    assert not c2.reliable
    unreliable_at = c2.sentence.index("The model's figures that follow are NOT RELIABLE")
    model_at = c2.sentence.index("What the model says (not the finding)")
    assert unreliable_at < model_at < c2.sentence.index("chains started again")
    # a second miss: no figure of the model, so no word of where they came from
    missed = {**stuck, "stop_reason": "minor_mode", "minor_mode": restart}
    c3 = bdp.audit_claim(bdp.Posterior({"eps": post.draws("eps")}, {}, missed))
    assert "started again" not in c3.sentence and c3.upper_source == "minor_mode"
    # without the restart record, no such sentence
    del st["mode_restart"]
    plain = bdp.Posterior({"eps": post.draws("eps")}, {}, st)
    assert "started again" not in bdp.audit_claim(plain).sentence


def test_a_designed_bases_posterior_below_the_classical_bound_is_said_to_be_ruled_out():
    # designed bases keep the smaller lower end (the posterior's), and say when the posterior's
    # upper end lies below the classical bound; not when it lies above
    counts = {"fp": [200, 150], "n_neg": [2000] * 2, "fn": [900, 1000], "n_pos": [2000] * 2}
    rng = np.random.default_rng(3)
    low = bdp.Posterior(
        {"eps": rng.uniform(1e-8, 2e-6, 40_000).reshape(4, -1)}, {}, _designed_settings(counts)
    )
    c = bdp.audit_claim(low)
    assert c.lower == c.posterior_lower < c.upper < c.frequentist_lower
    assert c.sentence.endswith(
        f"The posterior's 95% quantile, {c.upper:.3g}, lies below what the attack shows without "
        "a model: the data rule the model's answer out (many bases that show little outvote the "
        "few that show more); the claim keeps the smaller lower end."
    )
    high = bdp.audit_claim(_narrow_post(_designed_settings(counts)))
    assert high.upper > high.frequentist_lower
    assert "rule the model's answer out" not in high.sentence
