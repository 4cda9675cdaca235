"""The dependence diagnostic of score-matrix counts (mia.dependence) against simulation truth.

References: replicate score matrices with a known mechanism, whose pooled counts' variance over
replicates is the design effect's definition; independent Bernoulli decisions (design effect 1);
exactly known pooled error rates of a threshold fixed in advance (coverage of effective counts).
The claim it changes (bayes_dp.audit_claim) is checked on a real posterior.
"""

import warnings

import numpy as np
import pytest
from scipy import special, stats

import bayes_dp as bdp
import mia
from bayes_dp.core.exceptions import DependenceWarning
from mia.dependence import DependenceDiagnostic, effective_counts, estimate_dependence


def _fixed_fit_decisions(rng, n_models, n_targets, mu, shift, z):
    """Decisions at the true OUT quantile (no fit) of a Gaussian mechanism with a model shift."""
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    scores = scores + shift * rng.standard_normal((n_models, 1))
    return scores > z * np.sqrt(1 + shift**2), keep, scores


def test_bad_input():
    with pytest.raises(TypeError, match="boolean"):
        estimate_dependence(np.zeros((4, 3)), np.zeros((4, 3), bool))
    with pytest.raises(ValueError, match="same shape"):
        estimate_dependence(np.zeros((4, 3), bool), np.zeros((4, 2), bool))
    with pytest.raises(ValueError, match="`fit`"):
        k = np.array([[True, False]] * 2 + [[False, True]] * 2)
        estimate_dependence(np.zeros((4, 2), bool), k, fit="other")
    with pytest.raises(TypeError, match="DependenceDiagnostic"):
        effective_counts(bdp.AttackCounts(1, 10, 1, 10), {"info_ratio": 0.3})


def test_independent_decisions_have_design_effect_one():
    # Bernoulli decisions, independent everywhere: every design effect is 1 in expectation.
    # fp_within is a variance ratio over T targets: sd sqrt(2 / (T - 1)) = 0.045 at T = 1000;
    # the per-model dispersions and the between terms have sd about sqrt(2 / M) = 0.1 at M = 200.
    rng = np.random.default_rng(3)
    m, t = 200, 1000
    keep = rng.random((m, t)) < 0.5
    beta = rng.uniform(0.05, 0.95, t)
    dec = np.where(keep, rng.random((m, t)) >= beta, rng.random((m, t)) < 0.1)
    d = estimate_dependence(dec, keep, threshold_var=0.0, fit="fixed")
    assert abs(d.fp_within - 1) < 5 * np.sqrt(2 / (t - 1))
    assert d.fn_within == 1.0  # threshold fixed: the design formula gives exactly 1
    for x in (d.fp_model_dispersion, d.fn_model_dispersion):
        assert abs(x - 1) < 5 * np.sqrt(2 / m)
    assert 0 <= d.fp_between < 5 * np.sqrt(2 / m)
    assert 0 <= d.fn_between < 5 * np.sqrt(2 / m)
    assert not d.dependent
    assert "information ratio" in repr(d)


def _replicates(rng, reps, fit, shift, n_models=64, n_targets=200, alpha=0.1):
    """Empirical and estimated design effects of the pooled FP and FN counts over replicates."""
    mu = np.linspace(0.0, 2.0, n_targets)
    z = float(special.ndtri(1 - alpha))
    s, per, est = {"FP": [], "FN": []}, {"FP": [], "FN": []}, {"FP": [], "FN": []}
    for _ in range(reps):
        if fit == "fixed":
            dec, keep, scores = _fixed_fit_decisions(rng, n_models, n_targets, mu, shift, z)
            d = estimate_dependence(dec, keep, threshold_var=0.0, scores=scores, fit="fixed")
        else:
            scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=rng)
            scores = scores + shift * rng.standard_normal((n_models, 1))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DependenceWarning)
                res = mia.counts_from_score_matrix(scores, keep, alpha)
            dec, d = res.decisions, res.dependence
        for side, cnt, e in (
            ("FP", (dec & ~keep).sum(axis=0), d.fp_design_effect),
            ("FN", (~dec & keep).sum(axis=0), d.fn_design_effect),
        ):
            s[side].append(cnt.sum())
            per[side].append(cnt)
            est[side].append(e)
    n = n_models // 2  # simulate_score_matrix: every target IN (and OUT) for exactly half
    out = {}
    for side in ("FP", "FN"):
        p = np.mean(per[side], axis=0) / n
        out[side] = (np.var(s[side], ddof=1) / (n * p * (1 - p)).sum(), np.mean(est[side]))
    return out


@pytest.mark.parametrize("shift", [0.25, 0.5])
def test_fixed_fit_per_model_shift_matches_replicates(shift):
    # Thresholds fixed in advance, a per-model shift of sd `shift`: the pooled counts' variance
    # over 200 replicates (relative Monte Carlo sd sqrt(2 / 199) = 0.10) against the mean
    # estimate; 4 sd. Independence would say 1; the truth is 3 to 12.
    rng = np.random.default_rng(11)
    reps = 200
    for side, (emp, est) in _replicates(rng, reps, "fixed", shift).items():
        assert emp > 2.0, side
        assert abs(est / emp - 1) < 4 * np.sqrt(2 / (reps - 1)), (side, emp, est)


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize("shift", [0.0, 0.25])
def test_cross_fed_design_effect_matches_replicates(shift):
    """Cross-fed fits (mia.counts_from_score_matrix, online, alpha = 0.1), 64 x 200: the FN
    design effect (about 2: the shared OUT fit) against the variance of the pooled FN count
    over 150 replicates (relative MC sd sqrt(2 / 149) = 0.116; 3.5 sd: a false failure has
    probability 4.7e-4 per side). FP: the estimate is conservative (it also counts differences
    between the targets' FP rates), so it may not fall below the truth by more than the same
    margin. Reach, asserted from the measured variance: an estimate that ignores the dependence
    (D_FN = 1, the named defect) fails with probability >= 0.8 (0.87-0.92 at the measured 1.9-2.1,
    chi-square law of the replicate variance). docs/validation/lira.md, "Dependence of the pooled
    counts",
    has the full table (benchmarks/dependence_check.py).
    """
    rng = np.random.default_rng(5)
    reps = 150
    tol = 3.5 * np.sqrt(2 / (reps - 1))
    out = _replicates(rng, reps, "cross_fed", shift)
    emp, est = out["FN"]
    assert emp > 1.5
    # P(|1 / emp_hat - 1| > tol) with emp_hat = emp chi^2_{reps - 1} / (reps - 1)
    chi = stats.chi2(reps - 1, scale=1 / (reps - 1))
    power = chi.sf(1 / (emp * (1 - tol))) + chi.cdf(1 / (emp * (1 + tol)))
    print(
        f"FN design effect {emp:.3f} (replicates), {est:.3f} (estimate); D = 1 fails: {power:.3f}"
    )
    assert power >= 0.8, (emp, power)
    assert abs(est / emp - 1) < tol, (emp, est)
    emp, est = out["FP"]
    assert est / emp > 1 - tol, (emp, est)


def test_warning_when_half_the_information_is_lost():
    # alpha = 0.01 and targets at beta ~ 1/2: D_FN ~ 1 + phi(0)^2 (1 + z^2 / 2) / 0.25 ~ 3.4
    scores, keep = mia.simulate_score_matrix(64, 300, mu=2.33, seed=2)
    with pytest.warns(DependenceWarning, match="information") as rec:
        res = mia.counts_from_score_matrix(scores, keep, alpha=0.01, method="offline")
    assert rec[0].message.info_ratio < 0.5
    assert res.dependence.dependent
    assert res.to_evidence().dependence["dependent"] is True
    # a pooled variance: the threshold varies less (v_T = 1 / n0), D_FN ~ 1.6: no warning
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = mia.counts_from_score_matrix(
            scores, keep, alpha=0.01, method="offline", fixed_variance=True
        )
    assert not [w for w in rec if issubclass(w.category, DependenceWarning)]
    assert not res.dependence.dependent


def test_effective_counts_restore_coverage():
    """Fixed thresholds with a per-model shift (sd 0.5): the pooled FP rate is alpha and the
    pooled FN rate the mean of Phi(z - mu_t / sd) exactly. A 90% Clopper-Pearson interval of
    the pooled rate on raw counts covers it far less often than 90% (design effect ~8-12; raw
    coverage expected ~ 2 Phi(1.645 / sqrt(8)) - 1 = 0.44); on effective counts about 90%.

    Sized on 9,000 replicates (seeds 0-29 of this study, 2026-12-07): effective coverage 0.885
    (FP) and 0.911 (FN), exact 99% lower limits 0.877 and 0.904. With 300 replicates the check
    asks for at least 248 covering per side: a false failure has probability 0.0044 per side at
    0.877 (scipy; <= 0.009 for both), and intervals that cover 80% of the time (the named
    defect) fail it with probability 0.86.
    """
    from tests._support.power import count_false_failure, count_power

    rng = np.random.default_rng(4)
    alpha, shift, reps = 0.1, 0.5, 300
    min_hits, p0, defect = 248, 0.877, 0.8
    # reach first: the criterion's false-failure rate and power, recomputed
    assert count_false_failure(reps, reps - min_hits, 1 - p0) <= 0.005
    assert count_power(reps, reps - min_hits, 1 - defect) >= 0.8
    z = float(special.ndtri(1 - alpha))
    mu = np.linspace(0.0, 2.0, 200)
    sd = np.sqrt(1 + shift**2)
    truth = {"FP": alpha, "FN": float(np.mean(stats.norm.cdf(z - mu / sd)))}
    hit = {"raw": {"FP": 0, "FN": 0}, "eff": {"FP": 0, "FN": 0}}
    for _ in range(reps):
        dec, keep, scores = _fixed_fit_decisions(rng, 64, 200, mu, shift, z)
        d = estimate_dependence(dec, keep, threshold_var=0.0, fit="fixed")
        c = bdp.AttackCounts(
            fp=(dec & ~keep).sum(axis=0),
            n_neg=(~keep).sum(axis=0),
            fn=(~dec & keep).sum(axis=0),
            n_pos=keep.sum(axis=0),
        )
        for kind, cc in (("raw", c), ("eff", effective_counts(c, d))):
            for side, k, n in (("FP", cc.fp, cc.n_neg), ("FN", cc.fn, cc.n_pos)):
                lo, hi = bdp.clopper_pearson_interval(int(k.sum()), int(n.sum()), 0.9)
                hit[kind][side] += lo <= truth[side] <= hi
    for side in ("FP", "FN"):
        raw, eff = hit["raw"][side], hit["eff"][side]
        assert raw < 0.75 * reps, (side, raw)
        assert eff >= min_hits, (side, eff)


def test_effective_counts_never_inflate():
    d = DependenceDiagnostic(0.4, 0.8, 0.0, 0.0, 1.0, 1.0, np.nan, np.nan, 8, 2)
    c = bdp.AttackCounts(fp=[3, 0], n_neg=[16, 16], fn=[5, 16], n_pos=[16, 16])
    e = effective_counts(c, d)
    assert e.n_neg.tolist() == [16, 16] and e.fn.tolist() == [5, 16]


def _posterior_with(dependence):
    counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    ev = bdp.Evidence(counts, name="lira", dependence=dependence)
    return bdp.estimate_epsilon(ev, delta=1e-5, draws=2000, seed=1, check=False)


def test_claim_changes_on_dependent_counts():
    d = DependenceDiagnostic(0.4, 3.0, 0.0, 0.0, 1.0, 1.0, np.nan, np.nan, 64, 2)
    post = _posterior_with(d.to_dict())
    assert post.settings["groups"][0]["dependence"]["info_ratio"] == pytest.approx(1 / 3)
    claim = bdp.audit_claim(post)
    assert not claim.reliable
    assert claim.sentence.startswith("NOT RELIABLE: the pooled counts are dependent")
    assert claim.to_dict()["dependence"]["lira"]["fn_design_effect"] == pytest.approx(3.0)
    # deflated by the design effect (effective counts): still not a finding, since effective
    # counts raised false accusations where measured (docs/validation/lira.md)
    rec = {**d.to_dict(), "corrected": True}
    claim = bdp.audit_claim(_posterior_with(rec))
    assert not claim.reliable
    assert claim.sentence.startswith("NOT RELIABLE: the pooled counts are dependent")
    assert "effective counts" in claim.sentence
    # not dependent: nothing said
    ok = DependenceDiagnostic(1.0, 1.5, 0.0, 0.0, 1.0, 1.0, np.nan, np.nan, 64, 2)
    claim = bdp.audit_claim(_posterior_with(ok.to_dict()))
    assert claim.reliable and claim.dependence is None and "dependent" not in claim.sentence


def test_cli_json_and_report_carry_the_diagnostic(tmp_path, capsys):
    import json

    from bayes_dp.cli import main

    # offline test at alpha = 0.01 on targets near beta = 1/2: information ratio ~0.3
    scores, keep = mia.simulate_score_matrix(32, 40, mu=2.33, seed=3)
    p = tmp_path / "s.npz"
    np.savez(p, scores=scores, keep=keep)
    out = tmp_path / "o"
    argv = ["estimate", str(p), "--delta", "1e-5", "--out", str(out), "--json"]
    argv += ["--draws", "200", "--tune", "100", "--chains", "2", "--seed", "1"]
    argv += ["--alpha", "0.01", "--score-method", "offline", "--progress-every", "0"]
    argv += ["--evidence", "targets"]  # the cross-fed counts, whose dependence is diagnosed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DependenceWarning)
        main(argv)
    captured = capsys.readouterr()
    res = json.loads(captured.out)
    assert res["dependence"]["lira"]["dependent"] is True
    assert res["claim"]["reliable"] is False
    assert res["claim"]["sentence"].startswith("NOT RELIABLE: the pooled counts are dependent")
    assert any("optimistic" in w for w in res["warnings"])
    names = [b["name"] for b in res["companion"]["bounds"]]
    assert names[0] == "max over targets, Clopper-Pearson"
    # the claim states the companion's effective-count bound (same delta, 95%) first, and its
    # lower end is never above it nor above the posterior's
    claim = res["claim"]
    f = claim["frequentist"]
    assert claim["frequentist_lower"] == f["lower"] == max(f["target_lower"], f["pooled"]["eps"])
    # the same per-target bound as the companion's row, at half the error (the pooled bound
    # has the other half), and the pooled bound from the same per-model rates
    assert f["target_lower"] <= res["companion"]["bounds"][1]["eps"]
    # the pooled bound: the companion's row over all targets or over the most exposed ones
    # (whichever the claim's larger candidate), at a quarter of the error against the row's all
    rows = {b["name"]: b for b in res["companion"]["bounds"]}
    name = {
        "all": "pooled over targets, models as units (betting)",
        "selected": "pooled over the most exposed targets, models as units (betting)",
    }[f["pooled"]["targets"]]
    assert f["pooled"]["eps"] <= rows[name]["eps"] and f["pooled"]["n_models"] == 15
    assert claim["lower"] == claim["frequentist_lower"]  # whatever the posterior's lower end
    assert "What the model says (not the finding)" in claim["sentence"]
    assert claim["frequentist"]["n_rates"] == 2 * 40 and claim["frequentist"]["group"] == "lira"
    # the same, recorded in the posterior: the report shows it
    post = bdp.load_posterior(out / "posterior.nc")
    assert post.settings["groups"][0]["dependence"]["dependent"] is True
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="dependence"' in page and 'id="companion"' in page
    assert "the per-target bound deflates every target&#x27;s counts" in page or (
        "the per-target bound deflates every target's counts" in page
    )
    assert bdp.audit_claim(post).to_dict() == claim  # read back from the file: the same claim
    assert "Result not reliable" in page
    # the line above the sentence: the model's interval where its lower end is the claim; else
    # the claim's bound as the lower end and the model's lower end as a figure, not a finding
    lo, hi = res["eps"]["credible_interval"]
    assert claim["model_lower"] == pytest.approx(lo, rel=1e-12)
    assert claim["cites_model_lower"] is (claim["lower"] == claim["model_lower"])
    if claim["cites_model_lower"]:
        assert claim["interval_words"] == f"90% credible interval for eps: [{lo:.3g}, {hi:.3g}]"
    elif claim["upper_source"] == "data":
        head = f"eps in [{claim['lower']:.3g}, {hi:.3g}] (lower end: what the audit shows"
        assert claim["interval_words"].startswith(head)
        assert claim["interval"] == [claim["lower"], claim["upper"]]
    else:  # an upper end that is not the data's is not printed as one
        head = f"eps >= {claim['lower']:.3g} (what the audit shows at 95%, the claim below)"
        assert claim["interval_words"].startswith(head)
        assert claim["interval"] == [claim["lower"], None]
    if not claim["cites_model_lower"]:
        assert claim["interval_words"].endswith(f"5% quantile, {lo:.3g}, is not a finding")
    # the text output: by default the claim's two sentences; with --explain also that line
    # (the same run, without --json)
    text_argv = [a if a != str(out) else str(tmp_path / "t") for a in argv if a != "--json"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DependenceWarning)
        main(text_argv)
        text = " ".join(capsys.readouterr().out.split())
        main([*text_argv, "--explain"])
        explained = " ".join(capsys.readouterr().out.split())
    assert " ".join(claim["headline"].split()) in text
    assert " ".join(claim["interval_words"].split()) not in text
    assert " ".join(claim["interval_words"].split()) in explained
