"""Targets declared in advance (``to_evidence(focus=...)``): the claim's weighted Bonferroni bound.

Checked against scipy's beta quantiles (the per-rate level ``share (1 - p) / n_rates``), the
split of the error between declared targets and the others, the sentence, the readers of the
declaration, and padding (docs/validation/lira.md, "Declared targets").
"""

import warnings

import numpy as np
import pytest

import bayes_dp as bdp
import mia
from bayes_dp.core.region import clopper_pearson_target_bounds
from bayes_dp.results.claim_scores import FOCUS_SHARE, score_matrix_bound

from benchmarks._support.lira_sim import padded_matrix
from tests.bayes_dp.results.test_claim_scores import _by_hand


@pytest.mark.parametrize("share", [1.0, 0.9, 0.1, 0.37])
def test_share_is_the_weighted_bonferroni_level(share):
    fp, n0, fn, n1 = [0, 3, 1], [40, 40, 50], [2, 9, 0], [40, 45, 50]
    got = clopper_pearson_target_bounds(fp, n0, fn, n1, 1e-5, 0.95, n_rates=10, share=share)
    # share s of the error 1 - p over n rates: each interval at level 1 - s (1 - p) / n, i.e.
    # the plain Bonferroni level of confidence 1 - s (1 - p)
    want = _by_hand(fp, n0, fn, n1, 1e-5, 1 - share * 0.05, 10, reflect=False)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert got.max() > 0


@pytest.mark.parametrize(
    "share, err", [(0.0, "`share` must be > 0.0"), (1.5, "`share` must be <=")]
)
def test_share_bad_input(share, err):
    with pytest.raises(ValueError, match=err):
        clopper_pearson_target_bounds([1], 10, [3], 10, 1e-5, share=share)


def _two_groups(focus_a, focus_b=None):
    # group a: columns 0 and 3 skipped, so rows 0..5 are columns 1, 2, 4, 5, 6, 7
    a = {"fp": [0, 5, 1, 0, 8, 2], "n_neg": 40, "fn": [0, 20, 3, 10, 30, 1], "n_pos": 40}
    b = {"fp": [0, 2, 1], "n_neg": 40, "fn": [1, 2, 0], "n_pos": 40}
    rec_a = {"fp_design_effect": 1.0, "fn_design_effect": 1.5, "skipped_targets": [3, 0]}
    rec_b = {"fp_design_effect": 1.2, "fn_design_effect": 1.0, "skipped_targets": []}
    if focus_a is not None:
        rec_a["focus_targets"] = focus_a
    if focus_b is not None:
        rec_b["focus_targets"] = focus_b
    return {
        "delta": 1e-5,
        "groups": [
            {"name": "a", "counts": a, "dependence": rec_a},
            {"name": "b", "counts": b, "dependence": rec_b},
        ],
    }


def _rows(counts, rows, f_fp, f_fn, n_rates, share):
    c = {k: np.broadcast_to(np.asarray(v), (len(counts["fp"]),)) for k, v in counts.items()}
    sub = [c[k][rows] for k in ("fp", "n_neg", "fn", "n_pos")]
    return _by_hand(*sub, 1e-5, 1 - share * 0.05, n_rates, f_fp, f_fn, reflect=False)


def test_declared_targets_get_their_share_of_the_error():
    # declared: column 2 of group a (row 1), column 3 (skipped: declared, not counted) and
    # column 1 of group b (row 1); F = 2 counted, O = 9 - 2 = 7 others
    st = _two_groups([2, 3], [1])
    f = score_matrix_bound(st, 0.95)
    a, b = (g["counts"] for g in st["groups"])
    dec = np.r_[_rows(a, [1], 1.0, 1.5, 4, FOCUS_SHARE), _rows(b, [1], 1.2, 1.0, 4, FOCUS_SHARE)]
    oth = np.r_[
        _rows(a, [0, 2, 3, 4, 5], 1.0, 1.5, 14, 1 - FOCUS_SHARE),
        _rows(b, [0, 2], 1.2, 1.0, 14, 1 - FOCUS_SHARE),
    ]
    assert f["lower"] == pytest.approx(max(dec.max(), oth.max()), rel=1e-9)
    assert f["focus"]["declared"] == 3 and f["focus"]["counted"] == 2
    assert f["focus"]["lower"] == pytest.approx(dec.max(), rel=1e-9)
    assert f["focus"]["n_positive"] == int((dec > 0).sum())
    assert f["focus"]["level"] == pytest.approx(FOCUS_SHARE * 0.05 / 4)
    assert f["level"] == pytest.approx((1 - FOCUS_SHARE) * 0.05 / 14)
    assert f["n_positive"] == int((dec > 0).sum() + (oth > 0).sum())
    # a declared target's bound is above its plain-Bonferroni bound (laxer level), another's
    # below it (stricter)
    plain = score_matrix_bound(_two_groups(None), 0.95)
    assert f["focus"]["lower"] > _rows(a, [1], 1.0, 1.5, 18, 1.0).max()
    assert plain["focus"] is None and plain["level"] == pytest.approx(0.05 / 18)
    top = {(t["group"], t["target"]): t["declared"] for t in f["top_targets"]}
    # column 2 of group a (5/40, 20/40) shows nothing; column 1 of group b is above 0
    assert ("a", 2) not in top and top[("b", 1)] is True
    assert not any(v for k, v in top.items() if k != ("b", 1))
    post = bdp.Posterior({"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}, {}, st)
    s = bdp.audit_claim(post).sentence
    assert "the 4 rates of the 2 targets declared in advance at level 0.045/4" in s
    assert "the 14 rates of the others at level 0.005/14, weighted Bonferroni" in s
    assert "1 declared target(s) were not counted" in s
    assert "target 1 (declared)" in s


def test_all_declared_is_plain_bonferroni():
    every = _two_groups([1, 2, 4, 5, 6, 7], [0, 1, 2])
    f, plain = score_matrix_bound(every, 0.95), score_matrix_bound(_two_groups(None), 0.95)
    assert f["focus"]["share"] == 1.0 and f["level"] is None
    assert f["lower"] == plain["lower"] and f["ceiling"] == plain["ceiling"]


def test_a_declaration_none_of_whose_targets_was_counted_changes_nothing():
    f = score_matrix_bound(_two_groups([0, 3]), 0.95)
    plain = score_matrix_bound(_two_groups(None), 0.95)
    assert f["lower"] == plain["lower"] and f["focus"]["counted"] == 0
    post = bdp.Posterior({"eps": np.linspace(0.5, 3, 4000).reshape(4, -1)}, {}, _two_groups([0]))
    assert "none of the 1 targets declared in advance was counted" in bdp.audit_claim(post).sentence


def _counts():
    scores, keep = mia.simulate_score_matrix(16, 6, mu=2.0, seed=0)
    return mia.counts_from_score_matrix(scores, keep, alpha=0.1)


def test_focus_is_recorded_as_columns(tmp_path):
    res = _counts()
    assert res.to_evidence(focus=[4, 1, 4]).dependence["focus_targets"] == [1, 4]
    mask = np.zeros(6, dtype=bool)
    mask[[0, 5]] = True
    assert res.to_evidence(focus=mask).dependence["focus_targets"] == [0, 5]
    (tmp_path / "c.txt").write_text("5, 2\n3")
    assert res.to_evidence(focus=tmp_path / "c.txt").dependence["focus_targets"] == [2, 3, 5]
    np.save(tmp_path / "m.npy", mask)
    assert res.to_evidence(focus=str(tmp_path / "m.npy")).dependence["focus_targets"] == [0, 5]
    assert "focus_targets" not in res.to_evidence().dependence


@pytest.mark.parametrize(
    "focus, err, words",
    [
        ([], ValueError, r"non-empty 1-D array .* found shape \(0,\)"),
        ([[1]], ValueError, r"found shape \(1, 1\)"),
        (np.zeros(5, dtype=bool), ValueError, r"one entry per target \(6\); found 5"),
        (np.zeros(6, dtype=bool), ValueError, "all-False mask"),
        ([0, 6], ValueError, r"target columns in \[0, 6\); found 6"),
        ([-1], ValueError, r"found -1"),
        ([1.0], TypeError, "found dtype float64"),
        (
            "no_such_file.txt",
            FileNotFoundError,
            "`focus`: no such file or folder: 'no_such_file.txt'",
        ),
    ],
)
def test_focus_bad_input(focus, err, words):
    with pytest.raises(err, match=words):
        _counts().to_evidence(focus=focus)


def test_declared_targets_keep_their_bound_under_padding():
    # docs/validation/lira.md, "Declared targets": 15 exposed targets among 0 or 1,000 that show
    # nothing
    # (seed 1 of the padding study). Declared, their bound moves only through the share given
    # away (0.9 of the error) and the design effects, which padding re-estimates: measured
    # 0.667 -> 0.649; not declared, Bonferroni over 2 T rates takes the per-target part to
    # 0.143, while the bound pooled over the targets most exposed on the reference half picks
    # the same exposed targets (the null ones have no exposure there) from the same split, so
    # it is the same number.
    def bound(n_pad, focus):
        scores, keep = padded_matrix(15, n_pad, seed=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mia.counts_from_score_matrix(scores, keep, 0.1)
        ev = res.to_evidence(focus=focus)
        c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
        st = {"delta": 1e-5, "groups": [{"name": "l", "counts": c, "dependence": ev.dependence}]}
        return score_matrix_bound(st, 0.95)

    alone = bound(0, None)["lower"]
    declared = bound(1000, np.arange(15))
    plain = bound(1000, None)
    alone_all = bound(0, None)
    assert alone > 0.5
    assert declared["lower"] == pytest.approx(alone, rel=0.1)
    assert declared["focus"]["n_positive"] == declared["n_positive"]  # only exposed ones > 0
    assert plain["target_lower"] < 0.5 * alone_all["target_lower"]
    sel = plain["pooled"]
    assert sel["targets"] == "selected" and set(sel["columns"]) <= set(range(15))
    assert alone_all["pooled"]["columns"] == sel["columns"]
    assert plain["lower"] == pytest.approx(alone, rel=1e-12)


def test_the_sentence_names_the_most_exposed_targets_it_pools_over():
    # 15 exposed targets among 300 that show nothing, none declared: the claim pools over the 8
    # most exposed on the reference half, names their columns, and states that bound whatever
    # the posterior's lower end (here a posterior pulled down to about 0.5 by the padding)
    scores, keep = padded_matrix(15, 300, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mia.counts_from_score_matrix(scores, keep, 0.1)
    ev = res.to_evidence()
    c = {k: getattr(res.counts, k).tolist() for k in ("fp", "n_neg", "fn", "n_pos")}
    group = {"name": "l", "counts": c, "dependence": ev.dependence, "likelihood": "binomial"}
    st = {"delta": 1e-5, "eps_prior": ["HalfNormal", 10.0], "groups": [group]}
    rng = np.random.default_rng(3)
    post = bdp.Posterior({"eps": rng.normal(0.8, 0.2, 40_000).reshape(4, -1)}, {}, st)
    claim = bdp.audit_claim(post)
    pb = claim.frequentist["pooled"]
    assert pb["targets"] == "selected" and set(pb["columns"]) <= set(range(15))
    assert claim.lower == claim.frequentist_lower == pb["eps"] > claim.posterior_lower
    cols = ", ".join(str(x) for x in pb["columns"])
    assert "the error rates pooled over the 8 targets most exposed on the reference" in (
        claim.sentence
    )
    assert f"(score-matrix columns {cols}:" in claim.sentence
    assert "it lies below the bound above, which holds without the model" in claim.sentence
