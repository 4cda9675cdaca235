"""The readers on folders laid out as the peers' own saving code lays them out.

One fixture per case of issue 34's table, each built the way the peer writes its files:

* Privacy Meter 2.0 (``privacytrustlab/ml_privacy_meter``): ``models.utils.
  split_dataset_for_training`` (complementary pairs of models, every sample IN for exactly
  half), ``util.split_dataset_for_training_poisson`` (``run_audit_dp.py``), ``models.utils.
  prepare_models`` (``models/memberships.npy`` bool, ``model_<i>.pkl``,
  ``models_metadata.json``), ``get_signals.get_model_signals`` (``signals/<alg>_signals.npy``
  float32 (audited samples x models), ``_pop`` population files, ``_ramia_`` range files with
  ``sample_size`` rows per sample), ``audit.sample_auditing_dataset`` (a random subset, members
  of model 0 first, indices not saved) and ``audit.get_audit_results``
  (``report/exp/attack_result_<model>.npz`` with the target model's memberships).
* The LiRA reference code (``research/mi_lira_2021``): ``train.py`` (``exp/<dataset>/
  experiment-<expid>_<n>/`` with ``hparams.json``, ``keep.npy`` bool, ``ckpt/<epoch:010d>.npz``),
  ``inference.py`` (``logits/<epoch:010d>.npy``, shape (examples, 1, augmentations, classes))
  and ``score.py`` (``scores/<epoch:010d>.npy``, float64 (examples, augmentations)).
* privacy-estimates (``microsoft/responsible-ai-toolbox-privacy``): ``AttackResults.to_json``
  (``{"FN", "FP", "TN", "TP"}``) and ``DPParameters.save_to_disk`` beside them.

Each is read by the Python reader and by ``bayes-dp estimate``; the command line is stopped at
the sampler (the evidence it would sample from is checked), so that these tests stay fast.
"""

import json

import numpy as np
import pytest

import bayes_dp as bdp
import mia
from bayes_dp.cli import main

from tests._support import tool_outputs as to

# -- Privacy Meter (the writers are in tests/_support/tool_outputs.py) ---------------------------
_pm_pairs = to.pm_pairs
_pm_poisson_pairs = to.pm_poisson_pairs
_pm_softmax = to.pm_softmax
_pm_write = to.write_privacy_meter


def _pm_subset(n_samples, data_size, memberships, rng):
    """The audited subset of sample_auditing_dataset: members of model 0, then non-members."""
    return to.pm_subset(data_size, memberships, rng)


# -- stopping the command line at the sampler -------------------------------------------------
class _Stop(Exception):
    def __init__(self, groups):
        super().__init__("stopped before sampling")
        self.groups = groups


@pytest.fixture
def cli(monkeypatch, tmp_path, capsys):
    """Run ``bayes-dp estimate ARGS``: (exit status, stderr, evidence groups or None)."""

    def fake(groups, **kwargs):
        raise _Stop(groups)

    monkeypatch.setattr(bdp, "estimate_epsilon", fake)

    def run(*args):
        # the counts as read: one base per target (--evidence targets; the default guessing
        # game reads the same scores, tests/bayes_dp/cli/test_score_evidence.py)
        argv = ["estimate", *map(str, args), "--delta", "1e-5", "--out", str(tmp_path / "out")]
        argv += ["--evidence", "targets"]
        try:
            rc, groups = main(argv), None
        except _Stop as e:
            rc, groups = 0, e.groups
        return rc, capsys.readouterr().err, groups

    return run


def _fp_fn(groups):
    (g,) = groups
    return g.counts.fp.tolist(), g.counts.fn.tolist()


# -- Privacy Meter cases ---------------------------------------------------------------------
def test_pm_subset_needs_indices_and_takes_them(tmp_path, cli):
    """run_mia.py with audit.data_size < dataset size: the indices are not saved."""
    rng = np.random.default_rng(0)
    member = _pm_pairs(60, 4, rng)  # 8 models
    idx = _pm_subset(60, 20, member, rng)
    root = tmp_path / "demo_cifar10"
    _pm_write(root, member, idx, rng)
    with pytest.raises(ValueError, match=r"rmia_signals.npy.*20 samples.*60.*subset") as e:
        mia.read_privacy_meter(root)
    assert "indices=" in str(e.value) and "--indices FILE" in str(e.value)
    assert "attack_result_0.npz shows they are not the first 20" in str(e.value)
    rc, err, _ = cli(root)
    assert rc == 1 and "--indices FILE" in err
    run = mia.read_privacy_meter(root, indices=idx)
    np.testing.assert_array_equal(run.keep, member[:, idx])
    np.testing.assert_array_equal(run.samples, idx)
    assert "the 20 samples named by `indices`" in run.notes[0]
    np.save(tmp_path / "idx.npy", idx)
    (tmp_path / "idx.txt").write_text("\n".join(map(str, idx)))
    ref = run.counts(0.1).counts
    for f in ("idx.npy", "idx.txt"):
        rc, err, groups = cli(root, "--indices", tmp_path / f)
        assert rc == 0, err
        assert "the 20 samples named by `indices`" in err
        assert _fp_fn(groups) == (ref.fp.tolist(), ref.fn.tolist())
    with pytest.raises(ValueError, match=r"index 60 is outside \[0, 60\)"):
        mia.read_privacy_meter(root, indices=[*idx[:-1], 60])
    with pytest.raises(ValueError, match="has 20 rows but `indices` names 19"):
        mia.read_privacy_meter(root, indices=idx[:-1])
    with pytest.raises(ValueError, match="not a mask"):
        mia.read_privacy_meter(root, indices=np.ones(20, bool))


def test_pm_audit_dp_first_canaries_confirmed_by_the_report(tmp_path, cli):
    """run_audit_dp.py audits the first canary_size samples."""
    rng = np.random.default_rng(1)
    member = _pm_poisson_pairs(80, 4, rng)
    root = tmp_path / "demo_dp_train_natural_1000"
    _pm_write(root, member, np.arange(30), rng)
    run = mia.read_privacy_meter(root)
    np.testing.assert_array_equal(run.keep, member[:, :30])
    np.testing.assert_array_equal(run.samples, np.arange(30))
    assert "the first 30 of 80 samples" in run.notes[0]
    ref = run.counts(0.1).counts
    rc, err, groups = cli(root)
    assert rc == 0, err
    assert "the first 30 of 80 samples" in err
    assert _fp_fn(groups) == (ref.fp.tolist(), ref.fn.tolist())
    # without the report nothing says which samples: refused with the option that works
    for f in (root / "report" / "exp").glob("attack_result_*.npz"):
        f.unlink()
    with pytest.raises(ValueError, match="no report/exp/attack_result_<model>.npz tells which"):
        mia.read_privacy_meter(root)
    assert mia.read_privacy_meter(root, indices=np.arange(30)).keep.shape == (8, 30)


def test_pm_report_of_every_model_gives_the_memberships(tmp_path, cli):
    rng = np.random.default_rng(2)
    member = _pm_pairs(40, 2, rng)
    idx = _pm_subset(40, 16, member, rng)
    root = tmp_path / "pm"
    _pm_write(root, member, idx, rng, num_experiments=4)
    run = mia.read_privacy_meter(root)
    np.testing.assert_array_equal(run.keep, member[:, idx])
    assert run.samples is None and "dataset indices" in run.notes[0]
    rc, err, groups = cli(root, "--score-method", "online-fixed")
    assert rc == 0, err
    assert "report/exp/attack_result_<model>.npz of every model" in err
    ref = run.counts(0.1, fixed_variance=True).counts
    assert _fp_fn(groups) == (ref.fp.tolist(), ref.fn.tolist())


def test_pm_default_config_four_models(tmp_path, cli):
    """configs/config.yaml: num_ref_models 1 -> 2 pairs, every sample IN for 2 of 4 models."""
    rng = np.random.default_rng(3)
    member = _pm_pairs(50, 2, rng)
    root = tmp_path / "demo"
    _pm_write(root, member, np.arange(50), rng)
    run = mia.read_privacy_meter(root)
    assert (run.keep.sum(axis=0) == 2).all() and run.notes == []
    with pytest.raises(ValueError, match="no target left to count") as e:
        run.counts(0.1, skip=True)
    msg = str(e.value)
    assert "2 IN and 2 OUT models each" in msg and "--score-method online-fixed" in msg
    rc, err, _ = cli(root)
    assert rc == 1 and "--score-method online-fixed" in err
    rc, err, groups = cli(root, "--score-method", "online-fixed")
    assert rc == 0, err
    ref = run.counts(0.1, fixed_variance=True).counts
    assert _fp_fn(groups) == (ref.fp.tolist(), ref.fn.tolist())


def test_pm_several_signal_files_and_ramia(tmp_path, cli):
    rng = np.random.default_rng(4)
    member = _pm_pairs(24, 4, rng)
    root = tmp_path / "two"
    rows = _pm_write(root, member, np.arange(24), rng, alg="loss")
    np.save(root / "signals" / "rmia_signals.npy", _pm_softmax(rows, rng))
    with pytest.raises(ValueError, match="several signal files") as e:
        mia.read_privacy_meter(root)
    assert "signals='loss_signals.npy'" in str(e.value)
    assert "--signals loss_signals.npy" in str(e.value)
    rc, err, _ = cli(root)
    assert rc == 1 and "--signals" in err
    for name in ("loss_signals.npy", "rmia_signals.npy"):
        run = mia.read_privacy_meter(root, signals=name)
        assert name in run.source and run.scores.shape == (8, 24)
        rc, err, groups = cli(root, "--signals", name)
        assert rc == 0 and name in err
        assert len(groups[0].counts) == 24
    with pytest.raises(FileNotFoundError, match="signal files: loss_signals.npy, rmia_signals"):
        mia.read_privacy_meter(root, signals="lira_signals.npy")
    # RAMIA beside the plain file, and alone (run_range_mia.py, sample_size 3)
    ramia = tmp_path / "ramia"
    _pm_write(ramia, member, np.arange(24), rng, ramia_k=3)
    with pytest.raises(ValueError, match="--signals rmia_ramia_signals.npy"):
        mia.read_privacy_meter(ramia)
    only = tmp_path / "ramia_only"
    _pm_write(only, member, np.arange(24), rng, ramia_k=3, plain=False)
    run = mia.read_privacy_meter(only)
    assert run.scores.shape == (8, 24, 3)
    sig = np.load(only / "signals" / "rmia_ramia_signals.npy").astype(np.float64)
    np.testing.assert_allclose(run.scores[:, 5, 2], np.log(sig[17] / (1 - sig[17])))
    np.testing.assert_array_equal(run.keep, member)
    assert "3 range points each" in run.notes[0]
    rc, err, groups = cli(only)
    assert rc == 0 and "range points" in err and len(groups[0].counts) == 24
    # a RAMIA subset: the indices are needed
    sub = tmp_path / "ramia_subset"
    idx = _pm_subset(24, 8, member, rng)
    _pm_write(sub, member, idx, rng, ramia_k=3, plain=False)
    with pytest.raises(ValueError, match="RaMIA range signals.*--indices FILE"):
        mia.read_privacy_meter(sub)
    run = mia.read_privacy_meter(sub, indices=idx)
    assert run.scores.shape == (8, 8, 3)
    np.testing.assert_array_equal(run.keep, member[:, idx])


# -- LiRA reference code ---------------------------------------------------------------------
def _lira_keep(num, expid, n, pkeep=0.5):
    """train.py get_data with expid: every example IN for exactly pkeep * num models."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0, 1, size=(num, n))
    return (u.argsort(0) < int(pkeep * num))[expid].astype(bool)


def _lira_scores(logits, labels):
    """score.py: log(p_true) - log(sum of the other p), the mean over the 1-axis first."""
    z = logits - logits.max(axis=3, keepdims=True)
    p = np.exp(z).astype(np.float64)
    p /= p.sum(axis=3, keepdims=True)
    count = p.shape[0]
    y_true = p[np.arange(count), :, :, labels[:count]]
    p[np.arange(count), :, :, labels[:count]] = 0
    y_wrong = p.sum(axis=3)
    return np.log(y_true.mean(1) + 1e-45) - np.log(y_wrong.mean(1) + 1e-45)


def _lira_write(
    logdir, num=8, n=30, n_aug=2, nclass=4, epochs=(10, 20), scored=None, seed=0, shift=3.0
):
    """exp/<dataset>/ with experiment-<expid>_<num>/ as train.py, inference.py, score.py write it.

    ``scored``: {expid: epochs with logits and scores} (default every model, every epoch);
    models not in it have keep.npy, hparams.json and checkpoints only (still training).
    """
    rng = np.random.default_rng(seed)
    logdir.mkdir(parents=True)
    labels = rng.integers(0, nclass, n)
    np.save(logdir / "x_train.npy", rng.normal(size=(n, 2, 2, 3)).astype(np.float32))
    np.save(logdir / "y_train.npy", labels)
    keeps = []
    for expid in range(num):
        d = logdir / f"experiment-{expid}_{num}"
        (d / "ckpt").mkdir(parents=True)
        (d / "tb").mkdir()
        (d / "hparams.json").write_text(json.dumps({"arch": "wrn28-2", "expid": expid}))
        keep = _lira_keep(num, expid, n)
        np.save(d / "keep.npy", keep)
        keeps.append(keep)
        mine = epochs if scored is None else scored.get(expid, ())
        for e in epochs:
            np.savez(d / "ckpt" / f"{e:010d}.npz", w=np.zeros(1))
        if not mine:
            continue
        (d / "logits").mkdir()
        (d / "scores").mkdir()
        for e in mine:
            logits = rng.normal(0, 1, (n, 1, n_aug, nclass)).astype(np.float32)
            logits[np.arange(n), 0, :, labels] += shift * keep[:, None]
            np.save(d / "logits" / f"{e:010d}.npy", logits)
            np.save(d / "scores" / f"{e:010d}.npy", _lira_scores(logits, labels))
    return np.stack(keeps)


def test_lira_models_still_training_are_skipped(tmp_path, cli):
    root = tmp_path / "exp" / "cifar10"
    keep = _lira_write(root, scored={m: (10, 20) for m in range(7)})  # model 7 still training
    run = mia.read_lira_runs(root)
    assert run.scores.shape == (7, 30, 2)
    np.testing.assert_array_equal(run.keep, keep[:7])
    assert "experiment-7_8" in run.notes[0] and "skipped 1 model folder" in run.notes[0]
    rc, err, groups = cli(root, "--score-method", "online-fixed")
    assert rc == 0, err
    assert "experiment-7_8" in err and len(groups[0].counts) > 0


def test_lira_missing_last_epoch_names_the_models(tmp_path, cli):
    root = tmp_path / "exp" / "cifar10"
    scored = {m: (10, 20) for m in range(8)}
    scored[2] = scored[5] = (10,)
    _lira_write(root, scored=scored)
    with pytest.raises(ValueError, match="2 of 8 models") as e:
        mia.read_lira_runs(root)
    msg = str(e.value)
    assert "experiment-2_8 (last 10)" in msg and "experiment-5_8 (last 10)" in msg
    assert "epoch=10" in msg and "--epoch 10" in msg
    rc, err, _ = cli(root)
    assert rc == 1 and "--epoch 10" in err
    run = mia.read_lira_runs(root, epoch=10)
    assert "epoch 10" in run.source and run.scores.shape == (8, 30, 2)
    rc, err, groups = cli(root, "--epoch", "10")
    assert rc == 0 and "epoch 10" in err


def test_lira_root_one_level_up(tmp_path, cli):
    _lira_write(tmp_path / "exp" / "cifar10")
    run = mia.read_lira_runs(tmp_path / "exp")
    assert run.scores.shape == (8, 30, 2)
    assert "found in" in run.notes[0] and "cifar10" in run.notes[0]
    rc, err, groups = cli(tmp_path / "exp")
    assert rc == 0, err
    assert "cifar10" in err and len(groups[0].counts) == 30
    _lira_write(tmp_path / "exp" / "cifar100", num=4)
    with pytest.raises(ValueError, match="in 2 folders.*give one of them"):
        mia.read_lira_runs(tmp_path / "exp")


def test_lira_keep_saved_as_indices(tmp_path, cli):
    root = tmp_path / "exp" / "cifar10"
    keep = _lira_write(root)
    p = root / "experiment-3_8" / "keep.npy"
    np.save(p, np.flatnonzero(keep[3]))  # the member indices, int64
    with pytest.raises(ValueError, match="indices of the members, where a mask is expected"):
        mia.read_lira_runs(root)
    rc, err, _ = cli(root)
    assert rc == 1 and "where a mask is expected" in err
    np.save(p, keep[3].astype(np.int64))  # a 0/1 mask of integers is a mask
    np.testing.assert_array_equal(mia.read_lira_runs(root).keep, keep)


# -- privacy-estimates -----------------------------------------------------------------------
def _pe_write(root, rows):
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for i, (fn, fp, tn, tp) in enumerate(rows):
        f = root / f"attack_results_{i}.json"
        f.write_text(json.dumps({"FN": fn, "FP": fp, "TN": tn, "TP": tp}))  # to_json's order
        files.append(f)
    return files


def test_pe_one_file_and_several_files(tmp_path, cli):
    files = _pe_write(tmp_path / "pe", [(250, 40, 960, 750), (200, 50, 850, 700)])
    assert mia.read_attack_results(files[0]).fp.tolist() == [40]
    rc, err, groups = cli(files[0])
    assert rc == 0, err
    assert _fp_fn(groups) == ([40], [250])
    rc, err, groups = cli(*files)
    assert rc == 0, err
    assert _fp_fn(groups) == ([40, 50], [250, 200])
    assert "attack results: 2 challenge bases from" in err and "attack_results_1.json" in err
    rc, err, _ = cli(files[0], tmp_path / "counts.csv")
    assert rc == 2 and "several inputs" in err


def test_pe_folder_with_dp_parameters(tmp_path, cli):
    root = tmp_path / "pe"
    _pe_write(root, [(250, 40, 960, 750), (200, 50, 850, 700)])
    (root / "dp_parameters.json").write_text(
        json.dumps({"noise_multiplier": 1.1, "num_steps": 1000, "subsampling_probability": 0.01})
    )
    counts = mia.read_attack_results(root)
    assert counts.fp.tolist() == [40, 50]
    res = mia.read_results(root)
    assert "dp_parameters.json" in res.notes[0] and len(res.files) == 2
    rc, err, groups = cli(root)
    assert rc == 0, err
    assert "skipped 1 JSON file" in err and "dp_parameters.json" in err
    assert _fp_fn(groups) == ([40, 50], [250, 200])
    # a results file with a field missing is still an error, not a skip
    (root / "attack_results_2.json").write_text(json.dumps({"FN": 1, "FP": 2, "TN": 3}))
    with pytest.raises(ValueError, match="'TP' is missing"):
        mia.read_attack_results(root)


def test_folder_options_are_refused_elsewhere(tmp_path, cli):
    (tmp_path / "c.csv").write_text("fp,n_neg,fn,n_pos\n40,1000,250,1000\n")
    rc, err, _ = cli(tmp_path / "c.csv", "--signals", "x.npy")
    assert rc == 1 and "--signals applies to result folders only" in err
    with pytest.raises(ValueError, match="`epoch` does not apply to"):
        mia.read_results(_pe_write(tmp_path / "pe", [(1, 2, 3, 4)])[0], epoch=3)
