"""Whole-ROC claims on mechanisms that are not Gaussian (issue 33; docs/validation/gdp.md section
9).

The claim of a Gaussian-DP posterior states first a bound that assumes no shape (best single
threshold over cut points fixed in advance, Bonferroni), and the whole-ROC figure only as what
holds if the mechanism is Gaussian, with the fit check's verdict; a failed check comes first.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
from bayes_dp.gdp.shape_free import LEVELS, threshold_counts, threshold_quantiles
from bayes_dp.results.claim_gdp import shape_free_lower

from benchmarks._support.gdp_shapes import audit
from tests.reference.privacy_loss import (
    laplace_delta,
    laplace_epsilon,
    mixture_logpdf,
    pair_delta,
    pair_epsilon,
)


def test_privacy_loss_reference_matches_the_laplace_and_gaussian_closed_forms():
    def lap(e0):
        return lambda x: stats.laplace.logpdf(x, e0, 1.0)

    for e0, e in ((1.0, 0.3), (3.0, 2.0)):
        got = pair_delta(lap(e0), lap(0.0), e, -60.0, 60.0, panels=4000)
        assert got == pytest.approx(laplace_delta(e0, e), rel=1e-7)
    got = pair_epsilon(lap(0.5), lap(0.0), 1e-5, -60.0, 60.0, panels=4000)
    assert got == pytest.approx(laplace_epsilon(0.5, 1e-5), abs=1e-6)
    gauss = pair_delta(lambda x: stats.norm.logpdf(x, 1.0), stats.norm.logpdf, 2.0, -40, 40, 4000)
    assert gauss == pytest.approx(bdp.gdp_delta(1.0, 2.0), rel=1e-7)
    # a mixture with w = 0: the standard normal pair, delta 0 at every eps
    same = pair_delta(mixture_logpdf(1e-12, 3.0), stats.norm.logpdf, 0.0, -40, 40, 4000)
    assert same < 1e-9


def test_threshold_counts_match_a_loop_over_cut_points():
    rng = np.random.default_rng(3)
    x_in, x_out = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    ev = bdp.gdp_evidence(x_in, x_out)
    fp, fn = threshold_counts(ev.in_counts, ev.out_counts)
    for j, c in enumerate(ev.edges):
        assert fp[j] == np.sum(x_out > c) and fn[j] == np.sum(x_in <= c)


def test_threshold_quantiles_match_the_count_model_sampler():
    # the grid posterior of one threshold against estimate_epsilon's draws (s = 1); 16,000
    # draws: the Monte Carlo sd of the 5% and 50% quantiles is about 0.004 here (posterior sd
    # 0.17, ESS >= 8,000), so 0.03 is > 5 sd
    q = threshold_quantiles(30, 1000, 600, 1000, 1e-5)
    counts = bdp.AttackCounts(fp=30, n_neg=1000, fn=600, n_pos=1000)
    post = bdp.estimate_epsilon(
        counts, delta=1e-5, prior=bdp.Prior(s=1.0), seed=1, progress=False, draws=4000
    )
    for level in (0.05, 0.5):
        i = int(np.argmin(np.abs(LEVELS - level)))
        assert q[i] == pytest.approx(post.quantile(LEVELS[i], "eps"), abs=0.03)


def test_shape_free_lower_is_the_best_threshold_at_the_bonferroni_level():
    levels = np.geomspace(1e-7, 0.5, 57)
    rec = {
        "levels": levels.tolist(),
        "thresholds": [
            {"group": "g", "cut": c, "fp": 1, "n_out": 9, "fn": 2, "n_in": 9,
             "quantiles": (a + np.log(levels)).tolist(), "cp": (b + np.log(levels)).tolist()}
            for c, a, b in ((0.0, 10.0, 9.0), (1.0, 9.5, 12.0))
        ],
    }  # fmt: skip
    got = shape_free_lower(rec, 0.95)
    x = math.log(0.05 / 2)  # two thresholds
    assert got["n_thresholds"] == 2 and got["level"] == pytest.approx(0.025)
    # threshold 0: min(10 + x, 9 + x) = 9 + x; threshold 1: min(9.5 + x, 12 + x) = 9.5 + x
    assert got["lower"] == pytest.approx(9.5 + x) and got["cut"] == 1.0
    assert shape_free_lower(None, 0.95) is None


def _laplace_post(eps0=1.0, n=1000, seed=4):
    rng = np.random.default_rng(seed)
    x_in, x_out = rng.laplace(eps0, 1, n), rng.laplace(0, 1, n)
    with pytest.warns(bdp.GdpFitWarning):
        return bdp.estimate_gdp(x_in, x_out, delta=1e-5, seed=seed, draws=1000)


def test_a_failed_shape_is_never_the_finding():
    # the case: a Laplace mechanism that is exactly 1-DP
    post = _laplace_post()
    claim = bdp.audit_claim(post)
    truth = laplace_epsilon(1.0, 1e-5)
    assert claim.gaussian_shape == "does not fit"
    assert claim.gaussian_lower > truth  # the whole-ROC figure would accuse it
    assert claim.sentence.startswith("THE GAUSSIAN SHAPE DOES NOT FIT")
    assert "What holds without that shape" in claim.sentence
    assert claim.lower == claim.shape_free_lower <= truth
    d = claim.to_dict()
    assert d["gaussian_shape"] == "does not fit" and d["shape_free"]["n_thresholds"] > 10
    json.dumps(d)


def test_a_fitting_shape_is_stated_as_conditional_after_the_shape_free_bound():
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(
            rng.normal(1.0, 1, 1000), rng.normal(0, 1, 1000), delta=1e-5, seed=5, draws=1000
        )
    claim = bdp.audit_claim(post)
    assert claim.gaussian_shape == "fits"
    assert claim.sentence.startswith(
        f"With 95% posterior probability and 95% confidence, eps >= {claim.lower:.3g}"
    )
    assert "If the mechanism is Gaussian (mu-GDP; the fit check passes" in claim.sentence
    assert claim.lower == claim.shape_free_lower < claim.gaussian_lower
    assert claim.gaussian_lower == pytest.approx(post.quantile(0.05, "eps"))


def test_counts_enter_through_the_gaussian_shape_and_the_claim_says_so():
    # a non-Gaussian case: counts of a Laplace mechanism (exactly 1-DP) at one threshold,
    # audited at delta_c = 1e-5 and reported at delta = 1e-8. The Gaussian privacy profile
    # extrapolates eps_c to a larger eps at the smaller delta, above the truth (1.0)
    rng = np.random.default_rng(6)
    n = 20000
    x_in, x_out = rng.laplace(1.0, 1, n), rng.laplace(0, 1, n)
    counts = bdp.AttackCounts(
        fp=int(np.sum(x_out > 0.5)), n_neg=n, fn=int(np.sum(x_in <= 0.5)), n_pos=n
    )
    post = bdp.estimate_gdp(counts, delta=1e-8, counts_delta=1e-5, seed=6, draws=1000)
    claim = bdp.audit_claim(post)
    assert claim.gaussian_shape == "not checked" and claim.shape_free_lower is None
    assert "This assumes the mechanism is Gaussian (mu-GDP)" in claim.sentence
    assert "count groups through eps_c = gdp_epsilon(mu, delta_c)" in claim.sentence
    assert claim.lower > laplace_epsilon(1.0, 1e-8)  # why the sentence must say it


def test_compare_marks_the_rows_that_assume_the_gaussian_shape():
    rng = np.random.default_rng(7)
    x_in, x_out = rng.laplace(1.0, 1, 1000), rng.laplace(0, 1, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bdp.GdpFitWarning)
        tab = bdp.compare_estimators(x_in, x_out, delta=1e-5, seed=0)
    truth = laplace_epsilon(1.0, 1e-5)
    shaped = tab[tab["gaussian_shape"]]
    assert shaped.index.tolist() == ["whole ROC posterior (GDP)", "GDP bound, Pareto frontier"]
    assert (shaped["lower"] > truth).all()  # both accuse the 1-DP mechanism
    free = tab[~tab["gaussian_shape"]]
    bounds = free.loc[
        ["shape-free bound (fixed thresholds)", "Clopper-Pearson, best threshold",
         "one-run bound (Steinke et al.)"], "lower"
    ]  # fmt: skip
    assert (bounds <= truth).all()


def test_cli_exit_status_and_json_when_the_shape_fails(tmp_path, capsys):
    from bayes_dp.cli import main

    rng = np.random.default_rng(8)
    npz = tmp_path / "lap.npz"
    np.savez(npz, in_scores=rng.laplace(1.0, 1, 1000), out_scores=rng.laplace(0, 1, 1000))
    argv = ["estimate", str(npz), "--delta", "1e-5", "--out", str(tmp_path / "r"), "--draws"]
    code = main([*argv, "500", "--json", "-q"])
    res = json.loads(capsys.readouterr().out)
    assert code == 4 and res["exit_status"] == 4 and "does not fit" in res["exit_status_meaning"]
    assert res["gaussian_shape"] == "does not fit"
    assert res["shape_free_lower"] == res["claim"]["lower"] <= 1.0
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "The Gaussian shape does not fit the scores</b>" in page


# -- studies with known truth (docs/validation/gdp.md section 9; benchmarks/gdp_shapes.py prints
# them) ----
def _rate_ok(k: int, n: int, rate: float = 0.05) -> bool:
    """Whether k exceedances in n are consistent with a rate <= ``rate`` (binomial, 1% level)."""
    return stats.binom.sf(k - 1, n, rate) > 0.01


@pytest.mark.slow
@pytest.mark.parametrize("name", ["laplace_0.5", "laplace_1", "laplace_3", "t3_2"])
def test_the_claim_never_accuses_non_gaussian_mechanisms(name):
    # >= 100 audits each, 1,000 scores a side: the stated lower end lies above the true eps in
    # at most 5% (binomial test at the 1% level); the whole-ROC figure is never stated first
    # unless the shape fits
    rows = [audit(name, 1000, 1000 + i) for i in range(100)]
    above = sum(r["claim_above"] for r in rows)
    print(f"{name}: claim above the truth in {above}/{len(rows)}")
    assert _rate_ok(above, len(rows))
    for r in rows:
        assert r["sentence_flags"] == (r["shape"] == "does not fit")


def _shape_free_ceiling(n: int = 1000, delta: float = 1e-5) -> float:
    """The most the shape-free bound can state with n scores a side: its value for scores that
    separate perfectly (every threshold between the two sides makes no error)."""
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(
            rng.normal(100.0, 1, n), rng.normal(0.0, 1, n), delta=delta, seed=0, draws=1000
        )
    return float(bdp.audit_claim(post).shape_free_lower)


#: mechanisms whose true eps (1.0, 2.2, 3.0) lies below the shape-free ceiling (4.91 at 1,000
#: scores a side); the mixtures' (19.9-33.0) lie above it, so no claim could accuse them
REDUCED_SHAPES = ("laplace_1", "t3_2", "laplace_3")


@pytest.mark.slow
@pytest.mark.statistical
def test_the_claim_never_accuses_non_gaussian_mechanisms_reduced():
    """15 audits of each of three mechanisms that are not Gaussian (Laplace 1- and 3-DP,
    Student-t), 1,000 scores a side (45 in all, ~2 min): the stated lower end above the true eps
    in at most 6 of the 45.

    Reach, asserted first: the shape-free bound's ceiling (its value for scores that separate
    perfectly, 4.91; 4.87 before issue 54's tail set) lies above each mechanism's true eps, so
    the claim can pass it. (The 2% mixture this test had, true eps 33.0, lies above it: no
    claim could have accused it.)
    Sizing (scipy): a valid 95% claim (rate <= 5%) has more than 6 of 45 with probability
    0.0066; a claim above the truth in 20% of audits (the named defect) fails with probability
    0.82 (the earlier 8 audits a mechanism, at most 2 of 8 each, let it pass with probability
    0.80).
    """
    from benchmarks._support.gdp_shapes import true_epsilon
    from tests._support.power import count_false_failure, count_power

    n, c = 45, 6
    assert count_false_failure(n, c, 0.05) <= 0.01 and count_power(n, c, 0.20) >= 0.8
    ceiling = _shape_free_ceiling()
    truths = {name: true_epsilon(name, 1e-5) for name in REDUCED_SHAPES}
    print(f"shape-free ceiling {ceiling:.3f}; true eps {truths}")
    assert all(ceiling > t for t in truths.values()), (ceiling, truths)
    rows = [audit(name, 1000, 2000 + i) for name in REDUCED_SHAPES for i in range(n // 3)]
    above = sum(r["claim_above"] for r in rows)
    print(f"claim above the truth in {above} of {len(rows)}")
    assert above <= c, above
    for r in rows:
        assert r["claim_lower"] == r["shape_free"]
        assert r["sentence_flags"] == (r["shape"] == "does not fit")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mix_10%_4", "mix_2%_6", "mix_0.5%_6"])
def test_a_few_exposed_members_are_not_averaged_away(name):
    # the stated lower end is the shape-free one (the best fixed threshold, not the whole-ROC
    # average), below the truth; where the whole ROC says less and the shape passes, it is
    # stated only as conditional
    rows = [audit(name, 1000, 3000 + i) for i in range(40)]
    assert _rate_ok(sum(r["claim_above"] for r in rows), len(rows))
    for r in rows:
        assert r["claim_lower"] == r["shape_free"]
