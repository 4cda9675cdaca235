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
from bayes_dp.core.region import clopper_pearson_target_bounds
from bayes_dp.results.claim_scores import _column, score_matrix_bound


def _by_hand(fp, n_neg, fn, n_pos, delta, confidence, n_rates, f_fp=1.0, f_fn=1.0):
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
        for x, y in ((fp_hi, fn_hi), (1 - fp_lo, 1 - fn_lo)):
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
    got = clopper_pearson_target_bounds(
        fp,
        n_neg,
        fn,
        n_pos,
        delta,
        0.9,
        n_rates=n_rates,
        fp_design_effect=f_fp,
        fn_design_effect=f_fn,
    )
    want = _by_hand(fp, n_neg, fn, n_pos, delta, 0.9, n_rates or 2 * len(fp), f_fp, f_fn)
    # both are exact computations of the same quantities (beta quantiles to ~1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got.max() > 0  # the cases are chosen so that some target shows eps > 0


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
    return res, post, bdp.audit_claim(post)


def test_claim_states_the_per_target_bound_first(laplace_claim):
    res, post, c = laplace_claim
    assert res.n_skipped == 2
    q = post.quantile(0.05, "eps")
    f = c.frequentist
    assert c.posterior_lower == pytest.approx(q)
    assert c.frequentist_lower == f["lower"] > 0
    assert c.lower == min(c.posterior_lower, f["lower"]) and c.lower <= f["lower"]
    assert c.lower <= q * (1 + 1e-12)
    # the target named is the row with the largest bound, and its column in the matrix
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
    )
    assert f["row"] == int(np.argmax(per)) and f["lower"] == per.max()
    assert f["target"] == int(res.targets[f["row"]]) and f["n_positive"] == int((per > 0).sum())
    assert (f["fp"], f["n_neg"]) == (int(cnt.fp[f["row"]]), int(cnt.n_neg[f["row"]]))
    assert f["n_rates"] == 2 * len(cnt) and f["confidence"] == 0.95
    raw = bdp.clopper_pearson_epsilon(cnt.fp, cnt.n_neg, cnt.fn, cnt.n_pos, 1e-5)[0]
    assert f["raw_lower"] == pytest.approx(raw)
    s = c.sentence
    # first the bound (after the dependence note, when the counts are that dependent)
    first = s.index(f"With 95% confidence, eps >= {c.lower:.3g} at delta = 1e-05")
    assert s.startswith("NOT RELIABLE: the pooled counts are dependent") or first == 0
    assert f"target {f['target']} (score-matrix column) of group 'lira'" in s
    assert f"(FP {f['fp']}/{f['n_neg']}, FN {f['fn']}/{f['n_pos']})" in s
    assert f"{f['n_positive']} of {len(cnt)} targets have a bound of their own above 0" in s
    model = s.index("What the model says (not the finding): with 95% posterior probability")
    assert first < model < s.index(f"eps >= {q:.3g}", model) and "16 of 100 audits" in s
    # JSON round trip
    d = c.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["frequentist"]["target"] == f["target"] and d["posterior_lower"] == c.posterior_lower


def test_claim_keeps_the_posterior_end_when_it_is_lower():
    # a posterior whose 5% quantile (about 0.67) lies below the per-target bound of its counts
    rng = np.random.default_rng(4)
    counts = {"fp": [0, 3], "n_neg": [60, 60], "fn": [0, 30], "n_pos": [60, 60]}
    rec = {"fp_design_effect": 1.0, "fn_design_effect": 1.0, "info_ratio": 1.0}
    st = {"delta": 1e-5, "groups": [{"name": "g", "counts": counts, "dependence": rec}]}
    post = bdp.Posterior({"eps": rng.normal(1.0, 0.2, 40_000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    f = score_matrix_bound(st, 0.95)["lower"]
    assert c.lower == c.posterior_lower < f == c.frequentist_lower
    assert c.sentence.startswith(
        f"With 95% confidence, eps >= {c.lower:.3g} at delta = 1e-05: the smaller"
    )


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
    assert "the per-target bound stated next allows for it" in c.sentence
    assert c.frequentist["fn_design_effect"] == 3.0


def test_claim_without_score_matrix_groups_is_unchanged():
    # the sentence of the version before the score-matrix claim, on the same draws and settings
    rng = np.random.default_rng(7)
    counts = {"fp": [40, 50], "n_neg": [1000, 1000], "fn": [250, 200], "n_pos": [1000, 1000]}
    st = {
        "eps_prior": ["HalfNormal", 10.0],
        "delta": 1e-5,
        "groups": [
            {
                "name": "bases",
                "likelihood": "binomial",
                "strength": "shared",
                "counts": counts,
                "fix": {},
            }
        ],
    }
    post = bdp.Posterior({"eps": rng.normal(3.0, 0.2, 40000).reshape(4, -1)}, {}, st)
    c = bdp.audit_claim(post)
    assert c.sentence == (
        "With 95% posterior probability, eps >= 2.67 at delta = 1e-05, with the attack strength "
        "inferred from the data. The upper end of the 90% credible interval [2.67, 3.33] is set "
        "by the data: halving or doubling the prior's scale moves it by 0% at most."
    )
    assert c.lower == post.quantile(0.05, "eps")
    assert (c.posterior_lower, c.frequentist_lower, c.frequentist) == (None, None, None)
