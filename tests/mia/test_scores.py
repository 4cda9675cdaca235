"""Score matrices to cross-fed counts (mia.counts_from_score_matrix) against independent references.

References: loops over the public per-base test (mia.learn_and_decide) on explicit shadow sets,
explicit one-sided thresholds from numpy means/variances and scipy.stats.norm quantiles, and the
closed-form error rates of the plug-in Gaussian tests (Student t / noncentral t / normal).
"""

import numpy as np
import pytest
from scipy import stats

import bayes_dp as bdp
import mia
from bayes_dp.cli import main


def _random_design(seed, n_models=14, n_targets=7, p=0.5, mu=1.2):
    rng = np.random.default_rng(seed)
    while True:
        keep = rng.random((n_models, n_targets)) < p
        n_in = keep.sum(axis=0)
        if ((n_in >= 3) & (n_models - n_in >= 3)).all() and len(set(n_in.tolist())) > 1:
            break
    sd = np.where(keep, 0.7, 1.3)  # unequal variances: the LRT region is an interval
    scores = rng.normal(0.0, 1.0, keep.shape) * sd + keep * mu
    return scores, keep


def _held_out_sets(scores, keep, m, t):
    others = np.arange(scores.shape[0]) != m
    out = scores[others & ~keep[:, t], t]
    inn = scores[others & keep[:, t], t]
    return out, inn


# -- the decisions equal independent references --------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_online_matches_loop_over_learn_and_decide(seed):
    scores, keep = _random_design(seed)
    res = mia.counts_from_score_matrix(scores, keep, 0.2)
    ref = np.zeros(keep.shape, dtype=bool)
    for t in range(keep.shape[1]):
        for m in range(keep.shape[0]):
            out, inn = _held_out_sets(scores, keep, m, t)
            ref[m, t] = mia.learn_and_decide(scores[m, t], out, inn, 0.2)
    np.testing.assert_array_equal(res.decisions, ref)
    np.testing.assert_array_equal(res.counts.fp, (ref & ~keep).sum(axis=0))
    np.testing.assert_array_equal(res.counts.fn, (~ref & keep).sum(axis=0))
    np.testing.assert_array_equal(res.counts.n_neg, (~keep).sum(axis=0))
    np.testing.assert_array_equal(res.counts.n_pos, keep.sum(axis=0))
    assert res.method == "online" and res.variance is None and res.side is None
    assert res.n_skipped == 0 and res.targets.tolist() == list(range(keep.shape[1]))


@pytest.mark.parametrize("sign, side", [(1.0, "greater"), (-1.0, "less"), (-1.0, "auto")])
def test_offline_matches_explicit_one_sided_threshold(sign, side):
    scores, keep = _random_design(3, mu=1.5 * sign)
    alpha = 0.15
    res = mia.counts_from_score_matrix(scores, keep, alpha, "offline", side=side)
    assert res.side == ("greater" if sign > 0 else "less")
    z = stats.norm.isf(alpha)
    ref = np.zeros(keep.shape, dtype=bool)
    for t in range(keep.shape[1]):
        for m in range(keep.shape[0]):
            out, _ = _held_out_sets(scores, keep, m, t)
            mu0, sd0 = np.mean(out), np.std(out, ddof=1)
            ref[m, t] = sign * (scores[m, t] - mu0) >= sd0 * z
    np.testing.assert_array_equal(res.decisions, ref)


@pytest.mark.parametrize("method", ["online", "offline"])
def test_fixed_variance_matches_explicit_pool(method):
    scores, keep = _random_design(4, n_models=10, n_targets=5)
    alpha = 0.1
    res = mia.counts_from_score_matrix(scores, keep, alpha, method, fixed_variance=True)
    z = stats.norm.isf(alpha)
    n_models, n_targets = keep.shape

    def pooled(drop_m, drop_t):
        # within-target sums of squares over the within-target degrees of freedom
        ss, df = 0.0, 0
        sides = (False, True) if method == "online" else (False,)
        for t in range(n_targets):
            for side in sides:
                rows = [
                    m for m in range(n_models) if keep[m, t] == side and (m, t) != (drop_m, drop_t)
                ]
                v = scores[rows, t]
                ss += float(np.sum((v - v.mean()) ** 2))
                df += len(rows) - 1
        return ss / df

    everything = pooled(-1, -1)
    assert res.variance == pytest.approx(everything, rel=1e-12)
    for t in range(n_targets):
        for m in range(n_models):
            out, inn = _held_out_sets(scores, keep, m, t)
            in_pool = method == "online" or not keep[m, t]
            sd = np.sqrt(pooled(m, t) if in_pool else everything)
            sign = np.sign(inn.mean() - out.mean()) if method == "online" else 1.0
            ref = sign * (scores[m, t] - out.mean()) >= sd * z
            assert res.decisions[m, t] == ref, (m, t)


def test_augmentations_are_averaged():
    scores, keep = _random_design(5)
    two = np.stack([scores, scores], axis=2)  # (x + x) / 2 == x exactly
    a = mia.counts_from_score_matrix(scores, keep, 0.1)
    b = mia.counts_from_score_matrix(two, keep, 0.1)
    np.testing.assert_array_equal(a.decisions, b.decisions)
    rng = np.random.default_rng(0)
    three = scores[..., None] + rng.normal(size=(*scores.shape, 3))
    c = mia.counts_from_score_matrix(three, keep.astype(int), 0.1)
    d = mia.counts_from_score_matrix(three.mean(axis=2), keep, 0.1)
    assert c.counts == d.counts


# -- error rates against the closed-form rates of the plug-in tests (one audit) -----------------
def _rate_tolerance(per_target_counts, n_per_target, p):
    """4 standard errors of the pooled rate: binomial, or the spread between targets if larger
    (decisions of one target share their shadow fits; targets are independent)."""
    t = per_target_counts.size
    binom = np.sqrt(p * (1 - p) / (n_per_target * t))
    between = np.std(per_target_counts / n_per_target, ddof=1) / np.sqrt(t)
    return 4 * max(binom, between)


def test_offline_error_rates_match_closed_form():
    # OUT ~ N(0, 1), IN ~ N(mu, 1); every target has n = 20 OUT and 20 IN models.
    n_models, n_targets, mu, alpha = 40, 500, 1.5, 0.1
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=11)
    res = mia.counts_from_score_matrix(scores, keep, alpha, "offline", side="greater")
    n = n_models // 2
    z = stats.norm.isf(alpha)
    # held-out OUT score minus the mean of the n - 1 others ~ N(0, n / (n - 1)), independent of
    # their sd: a Student t with n - 2 degrees of freedom
    fpr = stats.t.sf(z * np.sqrt((n - 1) / n), n - 2)
    # IN score minus the mean of all n OUT scores ~ N(mu, 1 + 1 / n): noncentral t, n - 1 dof
    k = np.sqrt(1 + 1 / n)
    fnr = stats.nct.cdf(z / k, n - 1, mu / k)
    c = res.counts
    assert (c.n_neg == n).all() and (c.n_pos == n).all()
    assert abs(c.fp.sum() / (n * n_targets) - fpr) < _rate_tolerance(c.fp, n, fpr)
    assert abs(c.fn.sum() / (n * n_targets) - fnr) < _rate_tolerance(c.fn, n, fnr)
    # and the plug-in inflation of the size is visible: the reference is not alpha itself
    assert fpr > alpha + 0.01


def test_online_fixed_variance_error_rates_match_closed_form():
    n_models, n_targets, mu, alpha = 40, 500, 1.5, 0.1
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=12)
    res = mia.counts_from_score_matrix(scores, keep, alpha, fixed_variance=True)
    n = n_models // 2
    z = stats.norm.isf(alpha)
    # pooled sd over ~19000 degrees of freedom: taken as known (1); one-sided at the upper side
    fpr = stats.norm.sf(z * np.sqrt((n - 1) / n))
    fnr = stats.norm.cdf((z - mu) / np.sqrt(1 + 1 / n))
    assert res.variance == pytest.approx(1.0, abs=0.05)
    c = res.counts
    assert abs(c.fp.sum() / (n * n_targets) - fpr) < _rate_tolerance(c.fp, n, fpr)
    assert abs(c.fn.sum() / (n * n_targets) - fnr) < _rate_tolerance(c.fn, n, fnr)
    # the exact test at level alpha with known normals, for scale
    assert abs(fnr - stats.norm.cdf(z - mu)) < 0.02


# -- skipping and diagnostics --------------------------------------------------------------------
def _design_with_thin_targets():
    scores, keep = _random_design(6, n_models=12, n_targets=6)
    keep = keep.copy()
    keep[:, 2] = False
    keep[:2, 2] = True  # 2 IN models
    keep[:, 4] = True
    keep[0, 4] = False  # 1 OUT model
    return scores, keep


def test_too_few_models_error_names_targets():
    scores, keep = _design_with_thin_targets()
    with pytest.raises(ValueError, match=r"2 of 6 targets.*target 2 \(2 IN, 10 OUT\), 4 \(11 IN"):
        mia.counts_from_score_matrix(scores, keep, 0.1)


def test_skip_reports_skipped_targets():
    scores, keep = _design_with_thin_targets()
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    assert res.skipped.tolist() == [2, 4] and res.n_skipped == 2
    assert res.targets.tolist() == [0, 1, 3, 5] and len(res.counts) == 4
    np.testing.assert_array_equal(res.counts.n_pos, res.n_in[res.targets])
    assert not res.decisions[:, [2, 4]].any()
    full = mia.counts_from_score_matrix(scores[:, [0, 1, 3, 5]], keep[:, [0, 1, 3, 5]], 0.1)
    assert full.counts == res.counts
    # fixed variance needs only 2 models a side; target 4 (1 OUT) is still skipped
    fv = mia.counts_from_score_matrix(scores, keep, 0.1, fixed_variance=True, skip=True)
    assert fv.skipped.tolist() == [4]
    # a higher minimum skips more
    assert mia.counts_from_score_matrix(scores, keep, 0.1, min_models=5, skip=True).n_skipped > 2
    assert "2 skipped" in repr(res)


def test_offline_needs_only_one_in_model():
    scores, keep = _design_with_thin_targets()
    keep[:, 2] = False
    keep[0, 2] = True
    res = mia.counts_from_score_matrix(scores, keep, 0.1, "offline", skip=True)
    assert res.skipped.tolist() == [4]
    assert res.counts.n_pos[res.targets.tolist().index(2)] == 1


def test_zero_spread_error_and_skip():
    scores, keep = _random_design(7)
    scores = scores.copy()
    scores[~keep[:, 3], 3] = 0.5  # all OUT scores of target 3 equal
    with pytest.raises(ValueError, match="no spread.*target 3"):
        mia.counts_from_score_matrix(scores, keep, 0.1)
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    assert res.skipped.tolist() == [3]
    assert mia.counts_from_score_matrix(scores, keep, 0.1, fixed_variance=True).n_skipped == 0


def test_to_evidence_is_the_binomial_by_default():
    scores, keep = mia.simulate_score_matrix(20, 3, 1.0, seed=0)
    res = mia.counts_from_score_matrix(scores, keep, 0.1)
    ev = res.to_evidence(name="mine", strength="own")
    assert isinstance(ev, bdp.Evidence)
    assert ev.likelihood == "binomial" and ev.name == "mine" and ev.strength == "own"
    old = res.to_evidence(likelihood="bivariate_normal", fix={"tau": 0.01})  # still available
    assert old.likelihood == "bivariate_normal" and old.fix["tau"] == 0.01
    assert res.to_evidence(likelihood="exposure_mixture").likelihood == "exposure_mixture"


# -- input validation ----------------------------------------------------------------------------
GOOD_S, GOOD_K = mia.simulate_score_matrix(8, 4, 1.0, seed=0)


def _nan_at(i, j):
    s = GOOD_S.copy()
    s[i, j] = np.nan
    return s


def _keep_with(value):
    k = GOOD_K.astype(int)
    k[5, 2] = value
    return k


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"scores": GOOD_S[0]}, ValueError, r"2-D .*found shape \(4,\)"),
        ({"scores": "abc"}, TypeError, "`scores`"),
        ({"scores": np.zeros((8, 0))}, ValueError, "empty"),
        ({"scores": _nan_at(3, 1)}, ValueError, r"finite; found nan at \(model 3, target 1\)"),
        ({"scores": np.where(GOOD_K, np.inf, GOOD_S)}, ValueError, "found inf at"),
        ({"keep": GOOD_K[:, :3]}, ValueError, r"`keep` must have shape .*\(8, 4\).*\(8, 3\)"),
        ({"keep": GOOD_K.astype(str)}, TypeError, "`keep`.*dtype"),
        ({"keep": _keep_with(2)}, ValueError, r"0/1; found 2 at \(model 5, target 2\)"),
        ({"alpha": 0.0}, ValueError, r"`alpha` .*\(0, 1\); found 0.0"),
        ({"alpha": 1.5}, ValueError, "`alpha`"),
        ({"alpha": "0.1"}, TypeError, "`alpha`"),
        ({"alpha": [0.1, 0.2]}, ValueError, "single value"),
        ({"method": "lira"}, ValueError, "`method` must be one of"),
        ({"side": "greater"}, ValueError, "`side` applies to method='offline'"),
        ({"side": "up", "method": "offline"}, ValueError, "`side` must be one of"),
        ({"min_models": 2}, ValueError, "`min_models` must be >= 3.*found 2"),
        ({"min_models": 1.5}, TypeError, "`min_models`"),
        ({"fixed_variance": "yes"}, TypeError, "`fixed_variance`"),
        ({"skip": 1}, TypeError, "`skip`"),
    ],
)
def test_bad_input(kwargs, err, match):
    args = {"scores": GOOD_S, "keep": GOOD_K, "alpha": 0.1, **kwargs}
    with pytest.raises(err, match=match):
        mia.counts_from_score_matrix(**args)


def test_scores_3d_nan_names_augmentation():
    s = np.repeat(GOOD_S[..., None], 2, axis=2)
    s[2, 3, 1] = -np.inf
    with pytest.raises(ValueError, match=r"model 2, target 3, augmentation 1"):
        mia.counts_from_score_matrix(s, GOOD_K, 0.1)


# -- simulate_score_matrix -----------------------------------------------------------------------
def test_simulate_score_matrix_design_and_distribution():
    scores, keep = mia.simulate_score_matrix(400, 50, 2.0, p_in=0.25, seed=1)
    assert (keep.sum(axis=0) == 100).all()
    out, inn = scores[~keep], scores[keep]
    # 15000 OUT and 5000 IN draws: means within 5 standard errors, sds close to 1
    assert abs(out.mean()) < 5 / np.sqrt(out.size) and abs(inn.mean() - 2.0) < 5 / np.sqrt(5000)
    assert abs(out.std() - 1) < 0.03 and abs(inn.std() - 1) < 0.03
    assert stats.kstest(out, "norm").pvalue > 1e-3
    # every model trains on a different random subset
    assert len({tuple(r) for r in keep}) > 300


def test_simulate_score_matrix_seeds_and_per_target_mu():
    a = mia.simulate_score_matrix(10, 4, [0.0, 1.0, -1.0, 3.0], seed=3)
    b = mia.simulate_score_matrix(10, 4, [0.0, 1.0, -1.0, 3.0], seed=np.random.default_rng(3))
    c = mia.simulate_score_matrix(10, 4, [0.0, 1.0, -1.0, 3.0], seed=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    rng = np.random.default_rng(0)
    mia.simulate_score_matrix(10, 4, 1.0, seed=rng)
    assert not np.array_equal(
        mia.simulate_score_matrix(10, 4, 1.0, seed=rng)[0],
        mia.simulate_score_matrix(10, 4, 1.0, seed=rng)[0],
    )


@pytest.mark.parametrize(
    "args, kwargs, err, match",
    [
        ((1, 4, 1.0), {}, ValueError, "`n_models` must be >= 2"),
        ((10, 0, 1.0), {}, ValueError, "`n_targets`"),
        ((10, 4, [1.0, 2.0]), {}, ValueError, r"`mu` .*shape \(4,\)"),
        ((10, 4, np.nan), {}, ValueError, "`mu` must be finite"),
        ((10, 4, "x"), {}, TypeError, "`mu`"),
        ((10, 4, 1.0), {"p_in": 1.0}, ValueError, "`p_in`"),
        ((10, 4, 1.0), {"seed": "x"}, TypeError, "`seed`"),
    ],
)
def test_simulate_score_matrix_bad_input(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        mia.simulate_score_matrix(*args, **kwargs)


# -- score files and the command line ------------------------------------------------------------
def _write_long_csv(path, scores, keep, shuffle_seed=0, target_names=None):
    rows = [
        (
            m,
            t if target_names is None else target_names[t],
            repr(float(scores[m, t])),
            int(keep[m, t]),
        )
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]
    order = np.random.default_rng(shuffle_seed).permutation(len(rows))
    path.write_text(
        "model,target,score,member\n" + "".join(",".join(map(str, rows[i])) + "\n" for i in order)
    )
    return path


def test_read_score_file_npz_and_csv(tmp_path):
    scores, keep = mia.simulate_score_matrix(12, 11, 1.0, seed=2)
    np.savez(tmp_path / "s.npz", scores=scores, keep=keep)
    s, k = mia.read_score_file(tmp_path / "s.npz")
    np.testing.assert_array_equal(s, scores)
    np.testing.assert_array_equal(k, keep)
    # integer labels sort numerically (10 after 9), rows in any order
    s, k = mia.read_score_file(_write_long_csv(tmp_path / "s.csv", scores, keep))
    np.testing.assert_array_equal(s, scores)
    np.testing.assert_array_equal(k, keep)
    names = [f"img_{i:02d}" for i in range(11)]
    s, k = mia.read_score_file(_write_long_csv(tmp_path / "n.csv", scores, keep, 1, names))
    np.testing.assert_array_equal(s, scores)


@pytest.mark.parametrize(
    "text, match",
    [
        ("model,target,score\n0,0,1.0\n", "missing column 'member'"),
        ("model,target,score,member\n", "no data rows"),
        ("model,target,score,member\n0,0,abc,1\n", r"row 1, column 'score'.*'abc'"),
        ("model,target,score,member\n0,0,1.0,1\n0,1,nan,0\n", r"row 2, column 'score'"),
        ("model,target,score,member\n0,0,1.0,yes\n", r"row 1, column 'member'.*'yes'"),
        ("model,target,score,member\n0,0,1.0,1\n0,0,2.0,0\n", r"rows 1 and 2 .*\(0, 0\)"),
        ("model,target,score,member\n0,a,1.0,1\n1,b,2.0,0\n", r"no row for .*\(0, b\)"),
        ("model,target,score,member\n,0,1.0,1\n", r"row 1, column 'model': empty"),
    ],
)
def test_read_score_file_csv_errors(tmp_path, text, match):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        mia.read_score_file(p)


def test_read_score_file_npz_missing_array(tmp_path):
    np.savez(tmp_path / "x.npz", scores=GOOD_S, member=GOOD_K)
    with pytest.raises(ValueError, match="no array 'keep' .*scores, member"):
        mia.read_score_file(tmp_path / "x.npz")


FAST = ["--draws", "200", "--tune", "100", "--chains", "2", "--progress-every", "0", "--no-report"]
#: the cross-fed counts these tests check (the default, the guessing game: test_score_evidence.py)
TARGETS = ["--evidence", "targets"]


def test_cli_estimate_from_score_files(tmp_path, capsys):
    scores, keep = mia.simulate_score_matrix(24, 5, 2.0, seed=0)
    np.savez(tmp_path / "scores.npz", scores=scores, keep=keep)
    rc = main(
        ["estimate", str(tmp_path / "scores.npz"), "--delta", "1e-5"]
        + ["--out", str(tmp_path / "o1"), *FAST, *TARGETS]
    )
    captured = capsys.readouterr()
    post = bdp.load_posterior(tmp_path / "o1" / "posterior.nc")
    # 3 when these short runs fail the convergence checks (the status says so, the draws are kept)
    assert rc == _status(post), captured.err
    assert "online test at alpha=0.1, 5 targets counted, 0 skipped" in captured.err  # a log line
    assert "tau_lira" not in post.var_names  # binomial: no tau (docs/validation/lira.md)
    csv = _write_long_csv(tmp_path / "scores.csv", scores, keep)
    rc = main(
        ["estimate", str(csv), "--delta", "1e-5", "--out", str(tmp_path / "o2"), *FAST]
        + ["--alpha", "0.05", "--score-method", "offline-fixed", *TARGETS]
    )
    captured = capsys.readouterr()
    assert rc == _status(bdp.load_posterior(tmp_path / "o2" / "posterior.nc")), captured.err
    assert "offline-fixed test at alpha=0.05" in captured.err


def _status(post) -> int:
    """The exit status bayes-dp owes a run: 0 when it passes the convergence checks, else 3."""
    from bayes_dp.results.diagnostics import passes_convergence_checks

    return 0 if passes_convergence_checks(post) else 3


def test_cli_score_file_error_is_one_line(tmp_path, capsys):
    p = tmp_path / "bad.csv"
    p.write_text("model,target,score,member\n0,0,1.0,1\n0,0,2.0,0\n")
    rc = main(["estimate", str(p), "--delta", "1e-5", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "rows 1 and 2" in err
    assert not (tmp_path / "o").exists()


def test_cli_focus_targets_reach_the_claim(tmp_path, capsys):
    import json

    scores, keep = mia.simulate_score_matrix(24, 6, np.r_[4.0, 4.0, np.zeros(4)], seed=1)
    np.savez(tmp_path / "scores.npz", scores=scores, keep=keep)
    (tmp_path / "canaries.txt").write_text("0\n1\n")
    args = ["estimate", str(tmp_path / "scores.npz"), "--delta", "1e-5", *FAST, "--json", *TARGETS]
    rc = main(
        [*args, "--out", str(tmp_path / "o"), "--focus-targets", str(tmp_path / "canaries.txt")]
    )
    captured = capsys.readouterr()
    assert rc in (0, 3), captured.err
    assert "targets declared in advance: 2, of which 2 counted" in captured.err
    claim = json.loads(captured.out)["claim"]
    assert claim["frequentist"]["focus"]["counted"] == 2
    assert "2 targets declared in advance" in claim["sentence"]
    # a bad declaration ends the run with one error line naming the argument
    (tmp_path / "bad.txt").write_text("0 9\n")
    rc = main([*args, "--out", str(tmp_path / "o2"), "--focus-targets", str(tmp_path / "bad.txt")])
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert (
        rc == 1 and last == "bayes-dp: error: `focus` must hold target columns in [0, 6); found 9"
    )
