"""Readers of LiRA reference runs, Privacy Meter runs and privacy-estimates attack results
on tiny folders built here."""

import json

import numpy as np
import pytest

import bayes_dp as bdp
import mia


def _lira_dir(tmp_path, n_models=8, n_targets=6, n_aug=2, epochs=(10, 100), mu=3.0, seed=0):
    """Write the reference layout; return the scores (last epoch) and keep it holds."""
    rng = np.random.default_rng(seed)
    keep = np.zeros((n_models, n_targets), dtype=bool)
    for t in range(n_targets):
        keep[rng.permutation(n_models)[: n_models // 2], t] = True
    last = None
    for m in range(n_models):
        d = tmp_path / f"experiment-{m}_{n_models}"
        (d / "scores").mkdir(parents=True)
        np.save(d / "keep.npy", keep[m])
        for e in epochs:
            s = rng.normal(0, 1, (n_targets, n_aug)) + mu * keep[m][:, None]
            np.save(d / "scores" / f"{e:010d}.npy", s)
        last = s
    scores = np.stack(
        [
            np.load(tmp_path / f"experiment-{m}_{n_models}/scores/{epochs[-1]:010d}.npy")
            for m in range(n_models)
        ]
    )
    assert last is not None
    return scores, keep


def test_lira_runs_read_last_epoch_by_number(tmp_path):
    scores, keep = _lira_dir(tmp_path, epochs=(9, 10))  # "9" sorts after "10" as text only
    run = mia.read_lira_runs(tmp_path)
    np.testing.assert_array_equal(run.scores, scores)
    np.testing.assert_array_equal(run.keep, keep)
    assert "epoch 10" in run.source
    assert run.direction == "higher" and run.direction_source.startswith("detected")
    assert "higher = member" in run.describe()
    early = mia.read_lira_runs(tmp_path, epoch=9)
    assert not np.array_equal(early.scores, scores)
    # the counts agree with counts_from_score_matrix on the same arrays
    res = run.counts(0.1)
    ref = mia.counts_from_score_matrix(scores, keep, 0.1)
    np.testing.assert_array_equal(res.counts.fp, ref.counts.fp)
    np.testing.assert_array_equal(res.counts.fn, ref.counts.fn)
    off = run.counts(0.1, "offline")
    assert off.side == "greater"


def test_lira_direction_given_and_detected_for_losses(tmp_path):
    _lira_dir(tmp_path, mu=-3.0)  # losses: members score lower
    run = mia.read_lira_runs(tmp_path)
    assert run.direction == "lower"
    assert "usually have higher = member" in run.direction_source
    given = mia.read_lira_runs(tmp_path, direction="higher")
    assert (given.direction, given.direction_source) == ("higher", "given")
    with pytest.raises(ValueError, match="`direction` must be one of"):
        mia.read_lira_runs(tmp_path, direction="up")


def test_lira_errors_name_the_file(tmp_path):
    _lira_dir(tmp_path)
    with pytest.raises(ValueError, match=r"experiment-0_8/scores.*no scores for epoch 7.*10, 100"):
        mia.read_lira_runs(tmp_path, epoch=7)
    bad = tmp_path / "experiment-2_8" / "scores" / f"{100:010d}.npy"
    s = np.load(bad)
    s[1, 0] = np.nan
    np.save(bad, s)
    with pytest.raises(ValueError, match=r"experiment-2_8.*finite; found nan at index \(1, 0\)"):
        mia.read_lira_runs(tmp_path)
    s[1, 0] = 0.0
    np.save(bad, s[:4])
    with pytest.raises(ValueError, match=r"experiment-2_8.*shape \(4, 2\).*same targets"):
        mia.read_lira_runs(tmp_path)


def test_lira_target_without_out_model_and_missing_layout(tmp_path):
    _lira_dir(tmp_path, n_models=4, n_targets=3)
    for m in range(4):
        p = tmp_path / f"experiment-{m}_4" / "keep.npy"
        k = np.load(p)
        k[2] = True
        np.save(p, k)
    with pytest.raises(ValueError, match=r"1 target\(s\) have no OUT model \(2\)"):
        mia.read_lira_runs(tmp_path)
    with pytest.raises(ValueError, match="no 'experiment-\\*' folder"):
        mia.read_lira_runs(tmp_path / "experiment-0_4")
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        mia.read_lira_runs(tmp_path / "nope")


def _pm_dir(tmp_path, n_models=6, n_samples=5, seed=1):
    rng = np.random.default_rng(seed)
    member = np.zeros((n_models, n_samples), dtype=bool)
    for t in range(n_samples):
        member[rng.permutation(n_models)[: n_models // 2], t] = True
    p = np.where(
        member.T,
        rng.uniform(0.6, 0.99, (n_samples, n_models)),
        rng.uniform(0.1, 0.7, (n_samples, n_models)),
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "signals").mkdir()
    np.save(tmp_path / "models" / "memberships.npy", member)
    np.save(tmp_path / "signals" / "lira_signals.npy", p)
    np.save(tmp_path / "signals" / "lira_signals_pop.npy", p[:2])  # ignored
    return p, member


def test_privacy_meter_logit_scaling(tmp_path):
    p, member = _pm_dir(tmp_path)
    run = mia.read_privacy_meter(tmp_path)
    np.testing.assert_array_equal(run.keep, member)
    np.testing.assert_allclose(run.scores, np.log(p.T / (1 - p.T)), rtol=1e-12)
    # the stable logit agrees with LiRA's statistic from the loss -log p
    np.testing.assert_allclose(run.scores, mia.lira_logit(-np.log(p.T)), rtol=1e-9)
    assert run.direction == "higher"
    # probabilities of exactly 0 and 1 stay finite
    p2 = p.copy()
    p2[0, 0], p2[1, 1] = 1.0, 0.0
    np.save(tmp_path / "signals" / "lira_signals.npy", p2)
    assert np.isfinite(mia.read_privacy_meter(tmp_path).scores).all()


def test_privacy_meter_errors(tmp_path):
    p, member = _pm_dir(tmp_path)
    np.save(tmp_path / "signals" / "rmia_signals.npy", p)
    with pytest.raises(ValueError, match="several signal files.*signals='lira_signals.npy'"):
        mia.read_privacy_meter(tmp_path)
    assert mia.read_privacy_meter(tmp_path, signals="rmia_signals.npy").scores.shape == (6, 5)
    # fewer columns: a log_dir reused with fewer models (load_models takes the first ones)
    np.save(tmp_path / "signals" / "rmia_signals.npy", p[:, :4])
    run = mia.read_privacy_meter(tmp_path, signals="rmia_signals.npy")
    np.testing.assert_array_equal(run.keep, member[:4])
    assert "the first 4 rows were read" in run.notes[0]
    np.save(tmp_path / "signals" / "rmia_signals.npy", np.hstack([p, p[:, :1]]))
    with pytest.raises(ValueError, match=r"rmia_signals.npy' has 7 columns.*has 6 rows"):
        mia.read_privacy_meter(tmp_path, signals="rmia_signals.npy")
    q = p.copy()
    q[3, 2] = np.nan
    np.save(tmp_path / "signals" / "rmia_signals.npy", q)
    with pytest.raises(ValueError, match=r"rmia_signals.npy.*finite; found nan at index \(3, 2\)"):
        mia.read_privacy_meter(tmp_path, signals="rmia_signals.npy")
    q[3, 2] = 1.5
    np.save(tmp_path / "signals" / "rmia_signals.npy", q)
    with pytest.raises(ValueError, match=r"probabilities.*1.5 at index \(3, 2\)"):
        mia.read_privacy_meter(tmp_path, signals="rmia_signals.npy")
    member[:, 4] = False
    np.save(tmp_path / "models" / "memberships.npy", member)
    with pytest.raises(ValueError, match=r"memberships.npy.*1 target\(s\) have no IN model \(4\)"):
        mia.read_privacy_meter(tmp_path, signals="lira_signals.npy")
    with pytest.raises(FileNotFoundError, match="memberships.npy"):
        mia.read_privacy_meter(tmp_path / "signals")


def test_attack_results_json(tmp_path):
    rows = [
        {"FN": 250, "FP": 40, "TN": 960, "TP": 750},
        {"FN": 200, "FP": 50, "TN": 850, "TP": 700, "extra": "ignored"},
    ]
    for i, r in enumerate(rows):
        (tmp_path / f"base_{i}.json").write_text(json.dumps(r))
    counts = mia.read_attack_results(tmp_path)
    assert isinstance(counts, bdp.AttackCounts)
    assert counts.fp.tolist() == [40, 50] and counts.fn.tolist() == [250, 200]
    assert counts.n_neg.tolist() == [1000, 900] and counts.n_pos.tolist() == [1000, 900]
    one = mia.read_attack_results([tmp_path / "base_1.json"])
    assert one.fp.tolist() == [50]
    (tmp_path / "base_2.json").write_text(json.dumps({"FN": 1, "FP": 2, "TN": 3}))
    with pytest.raises(ValueError, match=r"base_2.json.*'TP' is missing"):
        mia.read_attack_results(tmp_path)
    (tmp_path / "base_2.json").write_text(json.dumps({"FN": 1, "FP": -2, "TN": 3, "TP": 4}))
    with pytest.raises(ValueError, match=r"base_2.json.*FP must be a non-negative integer"):
        mia.read_attack_results(tmp_path)
    (tmp_path / "base_2.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"base_2.json' is not a JSON file"):
        mia.read_attack_results(tmp_path)
    (tmp_path / "base_2.json").write_text(json.dumps({"FN": 0, "FP": 2, "TN": 3, "TP": 0}))
    with pytest.raises(ValueError, match=r"base_2.json.*members and non-members"):
        mia.read_attack_results(tmp_path)


# -- the command line on such folders --------------------------------------------------------
FAST = ["--draws", "200", "--tune", "100", "--chains", "2", "--progress-every", "0"]


def test_cli_estimates_from_each_folder(tmp_path, capsys):
    from bayes_dp.cli import main

    lira = tmp_path / "lira"
    lira.mkdir()
    _lira_dir(lira, n_models=8, n_targets=10)
    pm = tmp_path / "pm"
    pm.mkdir()
    _pm_dir(pm, n_models=8, n_samples=10)
    pe = tmp_path / "pe"
    pe.mkdir()
    for i, (fp, fn, n) in enumerate([(40, 250, 1000), (50, 200, 900)]):
        (pe / f"b{i}.json").write_text(json.dumps({"FP": fp, "TN": n - fp, "FN": fn, "TP": n - fn}))
    for folder, needle in [
        (lira, "higher = member"),
        (pm, "Privacy Meter run"),
        (pe, "privacy-estimates attack results: 2"),
    ]:
        out = tmp_path / f"out_{folder.name}"
        args = ["estimate", str(folder), "--delta", "1e-5", "--out", str(out), "--no-report"]
        rc = main([*args, *FAST])
        err = capsys.readouterr().err
        assert rc in (0, 3), err  # 3: these short runs may fail the convergence checks
        assert needle in err
        post = bdp.load_posterior(out / "posterior.nc")
        assert post.draws("eps").shape == (2, 200)
    out = tmp_path / "given"
    args = ["estimate", str(lira), "--direction", "lower", "--delta", "1e-5", "--out", str(out)]
    rc = main([*args, "--no-report", *FAST])
    assert rc in (0, 3)
    assert "lower = member (given)" in capsys.readouterr().err
    rc = main(
        ["estimate", str(lira), "--epoch", "3", "--delta", "1e-5", "--out", str(tmp_path / "x")]
    )
    assert rc == 1
    assert "no scores for epoch 3" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["estimate", str(empty), "--delta", "1e-5", "--out", str(tmp_path / "y")]) == 1
    assert "none that this command reads" in capsys.readouterr().err


def test_cli_report_failure_keeps_the_posterior(tmp_path, capsys, monkeypatch):
    """Injected failure of the HTML report: the posterior is written, the message says what was
    skipped and why, and the exit status is still that of the sampling."""
    from bayes_dp.cli import main
    from bayes_dp.results import posterior as posterior_mod

    def broken(self, path, **kwargs):
        raise MemoryError("no room for the figures")

    monkeypatch.setattr(posterior_mod.Posterior, "report", broken)
    pe = tmp_path / "pe"
    pe.mkdir()
    (pe / "b.json").write_text(json.dumps({"FP": 40, "TN": 960, "FN": 250, "TP": 750}))
    out = tmp_path / "out"
    (out).mkdir()
    (out / "report.html").write_text("an earlier run's report")
    rc = main(["estimate", str(pe), "--delta", "1e-5", "--out", str(out), *FAST])
    err = capsys.readouterr().err
    assert rc in (0, 3)  # that of the sampling (3 when the short run fails the checks)
    assert "HTML report was not written (MemoryError: no room for the figures)" in err
    assert (out / "posterior.nc").is_file()
    assert not (out / "report.html").exists()
