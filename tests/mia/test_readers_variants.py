"""Issue 51: every ordinary output variant of the tools read, or refused with an option that
then works; no mix of runs read silently; errors that name the file and the fix.

Each folder is written by ``tests/_support/tool_outputs.py`` the way the tool's own saving code
writes it (the upstream file and function are named there). Each case is read from Python and by
``bayes-dp estimate``, the command line stopped at the sampler (the evidence it would sample
from is compared with the Python reader's), so that these tests stay fast.
"""

import json
import sys

import numpy as np
import pytest

import bayes_dp as bdp
import mia
from bayes_dp.cli import main

from tests._support import tool_outputs as to


class _Stop(Exception):
    def __init__(self, evidence):
        super().__init__("stopped before sampling")
        self.evidence = evidence


@pytest.fixture
def cli(monkeypatch, tmp_path, capsys):
    """Run ``bayes-dp estimate ARGS``: (exit status, stderr, evidence or None)."""

    def fake(evidence, **kwargs):
        raise _Stop(evidence)

    monkeypatch.setattr(bdp, "estimate_epsilon", fake)
    monkeypatch.setattr(bdp, "estimate_gdp", fake)

    def run(*args):
        # the counts as read: one base per target (the default guessing game reads the same
        # scores; tests/bayes_dp/cli/test_score_evidence.py covers it)
        argv = ["estimate", *map(str, args), "--delta", "1e-5", "--out", str(tmp_path / "out")]
        argv += ["--evidence", "targets"]
        try:
            rc, ev = main(argv), None
        except _Stop as e:
            rc, ev = 0, e.evidence
        return rc, capsys.readouterr().err, ev

    return run


def _fp_fn(groups):
    (g,) = groups
    return g.counts.fp.tolist(), g.counts.fn.tolist()


def _same_counts(groups, res):
    assert _fp_fn(groups) == (res.counts.fp.tolist(), res.counts.fn.tolist())


# -- LiRA reference code: a mix of runs -----------------------------------------------------------
def test_lira_two_architectures_in_one_logdir_refused_then_selected(tmp_path, cli):
    """The issue's case: --expid runs of one architecture and later --seed runs of another."""
    logdir = tmp_path / "exp" / "cifar10"
    rng = np.random.default_rng(0)
    labels = to.write_lira_dataset(logdir, 30, 4, rng)
    wrn = [
        to.write_lira_model(logdir, labels, rng, expid=i, num_experiments=8)[1] for i in range(8)
    ]
    cnn = [
        to.write_lira_model(logdir, labels, rng, seed=77 + i, arch="cnn32-3-max", shift=0.5)[1]
        for i in range(8)
    ]
    with pytest.raises(ValueError, match="not all made the same way") as e:
        mia.read_lira_runs(logdir)
    msg = str(e.value)
    assert "hparams.json differs in arch" in msg
    assert "8 with arch=cnn32-3-max" in msg and "8 with arch=wrn28-2" in msg
    assert "--select arch=wrn28-2" in msg and "select={'arch': 'wrn28-2'}" in msg
    rc, err, _ = cli(logdir)
    assert rc == 1 and "--select arch=" in err
    run = mia.read_lira_runs(logdir, select={"arch": "wrn28-2"})
    np.testing.assert_array_equal(run.keep, np.stack(wrn))
    assert run.design == "balanced" and run.recorded["arch"] == "wrn28-2"
    assert "selected 8 of 16 runs with arch=wrn28-2" in run.notes[0]
    assert mia.read_lira_runs(logdir, select=["arch=wrn28-2"]).models == run.models
    rc, err, groups = cli(logdir, "--select", "arch=wrn28-2", "--score-method", "online-fixed")
    assert rc == 0, err
    assert "selected 8 of 16 runs" in err and "design balanced" in err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))
    other = mia.read_lira_runs(logdir, select={"arch": "cnn32-3-max"}, skip_one_sided=True)
    assert other.design == "independent"
    np.testing.assert_array_equal(other.keep, np.stack(cnn)[:, other.samples])
    with pytest.raises(ValueError, match="no run under .* has arch=vgg16"):
        mia.read_lira_runs(logdir, select={"arch": "vgg16"})
    with pytest.raises(ValueError, match="`select` names 'depth', which hparams.json"):
        mia.read_lira_runs(logdir, select={"depth": "28"})


def test_lira_other_recorded_differences_are_refused(tmp_path):
    """Learning rate, planned epochs and dataset size (keep.npy length) are compared too."""
    logdir = tmp_path / "exp"
    rng = np.random.default_rng(1)
    labels = to.write_lira_dataset(logdir, 20, 4, rng)
    for i in range(4):
        to.write_lira_model(logdir, labels, rng, expid=i, num_experiments=4, lr=0.1 * (1 + i % 2))
    with pytest.raises(ValueError, match=r"differs in lr\): 2 with lr=0.1 .*2 with lr=0.2"):
        mia.read_lira_runs(logdir)
    run = mia.read_lira_runs(logdir, select=["lr=0.2"], skip_one_sided=True)
    assert run.models == ["experiment-1_4", "experiment-3_4"]
    d = logdir / "experiment-2_4"
    np.save(d / "keep.npy", np.zeros(25, dtype=bool))
    with pytest.raises(ValueError, match="differs in dataset_size"):
        mia.read_lira_runs(logdir, select=["lr=0.1"], skip_one_sided=True)


def test_lira_tunename_folders(tmp_path, cli):
    """train.py --tunename names the folders by the hyper-parameters (not experiment-*)."""
    logdir = tmp_path / "exp"
    rng = np.random.default_rng(2)
    labels = to.write_lira_dataset(logdir, 24, 4, rng)
    keeps = [
        to.write_lira_model(logdir, labels, rng, seed=10 + i, tunename=True)[1] for i in range(8)
    ]
    run = mia.read_lira_runs(logdir, skip_one_sided=True)
    assert all(m.startswith("arch=wrn28-2_augment=weak") for m in run.models)
    np.testing.assert_array_equal(run.keep, np.stack(keeps)[:, run.samples])
    rc, err, groups = cli(logdir, "--skip-one-sided", "--score-method", "online-fixed")
    assert rc == 0, err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))


# -- LiRA: targets without both sides, per-model epochs ---------------------------------------
def test_lira_only_subset_needs_skip_one_sided(tmp_path, cli):
    logdir = tmp_path / "exp"
    keep, _ = to.write_lira_experiment(logdir, num=8, n=30, only_subset=20)
    with pytest.raises(ValueError, match="10 target.*no IN model") as e:
        mia.read_lira_runs(logdir)
    assert "only_subset=20" in str(e.value) and "--skip-one-sided" in str(e.value)
    rc, err, _ = cli(logdir)
    assert rc == 1 and "--skip-one-sided" in err
    run = mia.read_lira_runs(logdir, skip_one_sided=True)
    assert run.keep.shape == (8, 20)
    np.testing.assert_array_equal(run.keep, keep[:, :20])
    np.testing.assert_array_equal(run.dropped, np.arange(20, 30))
    np.testing.assert_array_equal(run.samples, np.arange(20))
    assert "dropped 10 of 30 targets" in run.notes[-1] and run.design == "balanced"
    rc, err, groups = cli(logdir, "--skip-one-sided")
    assert rc == 0, err
    assert "dropped 10 of 30 targets" in err
    _same_counts(groups, run.counts(0.1, skip=True))


def test_lira_seed_mode_target_never_out(tmp_path, cli):
    """--seed runs: each membership its own coin; with 4 models some targets are never OUT."""
    logdir = tmp_path / "exp"
    rng = np.random.default_rng(3)
    labels = to.write_lira_dataset(logdir, 40, 4, rng)
    keep = np.stack([to.write_lira_model(logdir, labels, rng, seed=s)[1] for s in (11, 12, 13, 14)])
    n_in = keep.sum(axis=0)
    one_sided = np.flatnonzero((n_in == 0) | (n_in == 4))
    assert one_sided.size > 0  # the case is within reach of these seeds
    with pytest.raises(ValueError, match="seed mode") as e:
        mia.read_lira_runs(logdir)
    assert f"{(n_in == 4).sum()} target(s) have no OUT model" in str(e.value)
    run = mia.read_lira_runs(logdir, skip_one_sided=True)
    np.testing.assert_array_equal(run.dropped, one_sided)
    assert run.keep.shape[1] == 40 - one_sided.size and run.design == "independent"
    rc, err, groups = cli(logdir, "--skip-one-sided", "--score-method", "online-fixed")
    assert rc == 0, err
    assert f"dropped {one_sided.size} of 40 targets" in err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))


def test_lira_patience_each_model_its_own_last_epoch(tmp_path, cli):
    """train.py --patience: each model stops at its own epoch and saves a checkpoint there."""
    logdir = tmp_path / "exp"
    rng = np.random.default_rng(4)
    labels = to.write_lira_dataset(logdir, 30, 4, rng)
    stops = [37, None, 53, 61, None, 100, 29, 83]  # None: ran all 100 epochs
    dirs = [
        to.write_lira_model(logdir, labels, rng, expid=i, num_experiments=8, stop_at=s)[0]
        for i, s in enumerate(stops)
    ]
    run = mia.read_lira_runs(logdir)
    lasts = [s or 100 for s in stops]
    for m, (d, e) in enumerate(zip(dirs, lasts, strict=True)):
        np.testing.assert_array_equal(run.scores[m], np.load(d / "scores" / f"{e:010d}.npy")[:, :])
    assert "5 of 8 models stopped early" in run.notes[0] and "experiment-0_8 37" in run.notes[0]
    assert "epochs 29-100 (own last)" in run.source
    rc, err, groups = cli(logdir)
    assert rc == 0, err
    assert "stopped early" in err
    _same_counts(groups, run.counts(0.1, skip=True))
    # a model still training (its last scored epoch on the save_steps cadence, short of the
    # planned epochs) is a genuine mix: refused, with the options that read it
    to.write_lira_model(logdir, labels, rng, expid=8, num_experiments=9, stop_at=None, epochs=100)
    d = logdir / "experiment-8_9"
    for e in (80, 100):
        (d / "ckpt" / f"{e:010d}.npz").unlink()
        (d / "scores" / f"{e:010d}.npy").unlink(missing_ok=True)
    np.save(d / "scores" / f"{60:010d}.npy", np.zeros((30, 2)))
    with pytest.raises(ValueError, match="do not show that they finished") as e:
        mia.read_lira_runs(logdir)
    assert "--epoch last" in str(e.value) and "experiment-8_9 (last 60)" in str(e.value)
    rc, err, _ = cli(logdir)
    assert rc == 1 and "--epoch last" in err
    asked = mia.read_lira_runs(logdir, epoch="last")
    assert "epoch='last'" in asked.notes[0] and asked.scores.shape[0] == 9
    rc, err, groups = cli(logdir, "--epoch", "last")
    assert rc == 0, err


# -- LiRA PyTorch port ----------------------------------------------------------------------------
def test_lira_pytorch_port_layout(tmp_path, cli):
    savedir = tmp_path / "exp" / "cifar10"
    keep, _ = to.write_lira_pytorch(savedir, n_shadows=8, n=30)
    assert mia.detect_format(savedir) == "lira_pytorch"
    run = mia.read_lira_pytorch(savedir)
    assert run.scores.shape == (8, 30, 2) and run.design == "balanced"
    np.testing.assert_array_equal(run.keep, keep)
    np.testing.assert_array_equal(run.scores[3], np.load(savedir / "3" / "scores.npy"))
    assert run.recorded["weights_tensors"] == len(to.ARCH_TENSORS["resnet18"])
    rc, err, groups = cli(savedir.parent, "--score-method", "online-fixed")
    assert rc == 0, err
    assert "LiRA PyTorch port runs" in err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))
    # a shadow model not scored yet is skipped with a note
    to.write_lira_pytorch(tmp_path / "more", n_shadows=9, n=30, scored=False, shadow_ids=[8])
    (tmp_path / "more" / "8").rename(savedir / "8")
    again = mia.read_lira_pytorch(savedir)
    assert again.scores.shape[0] == 8 and "without scores.npy yet: 8" in again.notes[0]


def test_lira_pytorch_two_architectures_refused(tmp_path, cli):
    savedir = tmp_path / "exp"
    to.write_lira_pytorch(savedir, n_shadows=8, shadow_ids=range(4), model="resnet18")
    to.write_lira_pytorch(savedir, n_shadows=8, shadow_ids=range(4, 8), model="wresnet28-2")
    with pytest.raises(ValueError, match="differs in weights_bytes, weights_tensors") as e:
        mia.read_lira_pytorch(savedir)
    small = sum(to.ARCH_TENSORS["wresnet28-2"])
    assert f"--select weights_bytes={sum(to.ARCH_TENSORS['resnet18'])}" in str(e.value)
    rc, err, _ = cli(savedir)
    assert rc == 1 and "--select weights_bytes=" in err
    run = mia.read_lira_pytorch(savedir, select={"weights_bytes": small}, skip_one_sided=True)
    assert run.models == ["4", "5", "6", "7"]
    rc, err, _ = cli(savedir, "--select", f"weights_bytes={small}", "--skip-one-sided")
    assert "selected 4 of 8 runs" in err


# -- Privacy Meter --------------------------------------------------------------------------------
def test_pm_ramia_reads_report_ramia(tmp_path, cli):
    """run_range_mia.py writes report_ramia/exp (memberships repeated sample_size times)."""
    rng = np.random.default_rng(5)
    member = to.pm_pairs(24, 4, rng)
    every = tmp_path / "all"
    to.write_privacy_meter(every, member, np.arange(24), rng, ramia_k=3, plain=False)
    assert (every / "report_ramia" / "exp" / "attack_result_0.npz").is_file()
    run = mia.read_privacy_meter(every)
    assert run.scores.shape == (8, 24, 3) and run.design == "balanced"
    assert "report_ramia/exp/attack_result_0.npz" in run.notes[0]
    # the shipped RaMIA configs set audit.data_size: a random subset, every model a target
    sub = tmp_path / "subset"
    idx = to.pm_subset(10, member, rng)
    to.write_privacy_meter(sub, member, idx, rng, ramia_k=3, plain=False, num_experiments=8)
    run = mia.read_privacy_meter(sub)
    np.testing.assert_array_equal(run.keep, member[:, idx])
    assert run.scores.shape == (8, 10, 3) and "10 of 24 samples, 3 range points" in run.notes[0]
    rc, err, groups = cli(sub, "--score-method", "online-fixed")
    assert rc == 0, err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))


def test_pm_reused_log_dir_with_fewer_models(tmp_path, cli):
    """load_models reuses the first models; memberships.npy keeps every row."""
    rng = np.random.default_rng(6)
    member = to.pm_pairs(30, 4, rng)  # an earlier run with 8 models
    root = tmp_path / "demo"
    to.write_privacy_meter(root, member, np.arange(30), rng, n_loaded=4)
    run = mia.read_privacy_meter(root)
    np.testing.assert_array_equal(run.keep, member[:4])
    assert "first 4 rows were read" in run.notes[0] and run.design == "balanced"
    rc, err, groups = cli(root, "--score-method", "online-fixed")
    assert rc == 0, err
    assert "log_dir reused with fewer models" in err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))


def test_pm_models_trained_differently_refused(tmp_path, cli):
    rng = np.random.default_rng(7)
    member = to.pm_pairs(30, 4, rng)
    meta = to.pm_metadata(member)
    for i in range(4, 8):
        meta[str(i)]["model_name"] = "CNN"
    root = tmp_path / "demo"
    to.write_privacy_meter(root, member, np.arange(30), rng, metadata=meta)
    with pytest.raises(ValueError, match="models_metadata.json differs in model_name") as e:
        mia.read_privacy_meter(root)
    assert "4 with model_name=CNN (model 4, model 5, model 6" in str(e.value)
    rc, err, _ = cli(root)
    assert rc == 1 and "--select model_name=" in err
    run = mia.read_privacy_meter(root, select=["model_name=wrn28-2"])
    np.testing.assert_array_equal(run.keep, member[:4])
    rc, err, groups = cli(root, "--select", "model_name=wrn28-2", "--score-method", "online-fixed")
    assert rc == 0, err
    _same_counts(groups, run.counts(0.1, fixed_variance=True, skip=True))


def test_pm_loss_audit_without_reference_model_read_as_one_roc(tmp_path, cli):
    """LOSS with num_ref_models 0: one pair of models, each sample IN for one of them.

    No per-target test can be fitted; a global threshold needs none: model 0's scores of its
    members and non-members are read as one ROC (bins at pooled quantiles, fixed without the
    memberships).
    """
    rng = np.random.default_rng(8)
    member = to.pm_pairs(200, 1, rng)
    root = tmp_path / "loss"
    to.write_privacy_meter(root, member, np.arange(200), rng, alg="loss")
    run = mia.read_privacy_meter(root)
    rc, err, _ = cli(root)
    assert rc == 1 and "--score-method global" in err and "no reference model" in err
    rc, err, evidence = cli(root, "--score-method", "global")
    assert rc == 0, err
    (ev,) = evidence
    assert isinstance(ev, bdp.GdpEvidence)
    x_in, x_out = run.in_out_scores(0)
    assert (ev.n_in, ev.n_out) == (member[0].sum(), (~member[0]).sum()) == (x_in.size, x_out.size)
    ref = bdp.gdp_evidence(x_in, x_out, name="global")
    np.testing.assert_array_equal(ev.in_counts, ref.in_counts)
    np.testing.assert_array_equal(ev.out_counts, ref.out_counts)
    assert "global threshold: the scores of model 0" in err
    rc, err, evidence = cli(root, "--score-method", "global", "--target-model", "1")
    assert evidence[0].n_in == member[1].sum()


def test_pm_damaged_report_names_the_file(tmp_path, cli):
    rng = np.random.default_rng(9)
    member = to.pm_pairs(40, 2, rng)
    idx = to.pm_subset(16, member, rng)
    root = tmp_path / "pm"
    to.write_privacy_meter(root, member, idx, rng, num_experiments=4)
    bad = root / "report" / "exp" / "attack_result_2.npz"
    bad.write_bytes(bad.read_bytes()[:100])  # a partial copy
    with pytest.raises(ValueError, match="attack_result_2.npz' is not a readable .npz") as e:
        mia.read_privacy_meter(root)
    assert "damaged" in str(e.value)
    rc, err, _ = cli(root)
    assert rc == 1 and "attack_result_2.npz" in err and "Traceback" not in err
    assert mia.read_privacy_meter(root, indices=idx).keep.shape == (4, 16)


# -- privacy-estimates ----------------------------------------------------------------------------
def _one_game_at_thresholds(root, n=200, k=9, seed=10):
    rng = np.random.default_rng(seed)
    scores, bits = to.challenge_game(n, rng)
    thrs = to.roc_thresholds(scores, bits)
    pick = thrs[np.linspace(1, thrs.size - 2, k).astype(int)]
    files = [
        to.write_attack_results(
            root / f"attack_results_{i}.json", to.attack_results(scores, bits, t)
        )
        for i, t in enumerate(pick)
    ]
    return scores, bits, pick, files


def test_pe_thresholds_of_one_game_are_one_game(tmp_path, cli):
    root = tmp_path / "pe"
    scores, bits, thrs, files = _one_game_at_thresholds(root)
    with pytest.raises(ValueError, match="9 files under .* same size") as e:
        mia.read_results(root)
    msg = str(e.value)
    assert "nested" in msg and "--same-challenges roc" in msg and "count the same" in msg
    rc, err, _ = cli(root)
    assert rc == 1 and "--same-challenges roc" in err
    # one file named by the user: one challenge base
    rc, err, groups = cli(files[4])
    assert rc == 0 and len(groups[0].counts) == 1
    # the thresholds as one whole ROC: the bins between the thresholds
    run = mia.read_results(root, same_challenges="roc")
    (ev,) = run.roc
    edges = np.sort(thrs)
    ref_in = np.bincount(np.searchsorted(edges, scores[bits == 1], side="right"), minlength=10)
    ref_out = np.bincount(np.searchsorted(edges, scores[bits == 0], side="right"), minlength=10)
    keep = (ref_in + ref_out) > 0
    np.testing.assert_array_equal(ev.in_counts, ref_in[keep])
    np.testing.assert_array_equal(ev.out_counts, ref_out[keep])
    rc, err, evidence = cli(root, "--same-challenges", "roc")
    assert rc == 0, err
    np.testing.assert_array_equal(evidence[0].in_counts, ev.in_counts)
    assert "read as one ROC" in err
    # declared independent: one base per file
    rc, err, groups = cli(root, "--same-challenges", "independent")
    assert rc == 0 and len(groups[0].counts) == 9


def test_pe_results_one_level_down_and_dp_parameters(tmp_path, cli):
    """experiment-<i>/attack_results.json and game_<i>/ with their own dp_parameters.json."""
    rng = np.random.default_rng(11)
    root = tmp_path / "runs"
    written = []
    for i in range(3):
        scores, bits = to.challenge_game(150 + 10 * i, rng)
        res = to.attack_results(scores, bits, 0.75)
        to.write_attack_results(root / f"experiment-{i}" / "attack_results.json", res)
        written.append(res)
    assert mia.detect_format(root) == "attack_results"
    counts = mia.read_attack_results(root)
    assert counts.fp.tolist() == [r["FP"] for r in written]
    rc, err, groups = cli(root)
    assert rc == 0, err
    assert _fp_fn(groups)[1] == [r["FN"] for r in written]
    games = tmp_path / "games"
    for i in range(4):
        scores, bits = to.challenge_game(100 + 7 * i, rng)
        to.write_attack_results(
            games / f"game_{i}" / "attack_results.json", to.attack_results(scores, bits, 0.75)
        )
        to.write_dp_parameters(games / f"game_{i}", noise_multiplier=[1.1, 2.0][i % 2])
    with pytest.raises(ValueError, match="dp_parameters.json differs in noise_multiplier"):
        mia.read_results(games)
    rc, err, _ = cli(games)
    assert rc == 1 and "--select noise_multiplier=" in err
    rc, err, groups = cli(games, "--select", "noise_multiplier=2.0")
    assert rc == 0, err
    assert len(groups[0].counts) == 2 and "selected 2 of 4 runs" in err


def test_pe_pipeline_scores_and_challenge_bits_json_lines(tmp_path, cli):
    """A game's scores and challenge bits, converted to JSON Lines (convert_hfd_to_jsonl)."""
    rng = np.random.default_rng(12)
    scores, bits = to.challenge_game(300, rng)
    root = tmp_path / "game"
    to.write_challenge_scores(root, -scores, bits)  # LiRA's component: lower = member
    run = mia.read_results(root)
    assert isinstance(run, mia.ChallengeScores) and run.design == "independent"
    assert run.direction == "lower" and "do not say which attack" in run.direction_source
    np.testing.assert_array_equal(run.members, bits.astype(bool))
    x_in, x_out = run.in_out_scores()
    np.testing.assert_allclose(np.sort(x_in), np.sort(scores[bits == 1]))
    rc, err, evidence = cli(root)
    assert rc == 0, err
    (ev,) = evidence
    assert (ev.n_in, ev.n_out) == (bits.sum(), (1 - bits).sum())
    ref = bdp.gdp_evidence(scores[bits == 1], scores[bits == 0], name="challenges")
    np.testing.assert_array_equal(ev.in_counts, ref.in_counts)
    # the other column name (components/create_challenge_bits) and the given direction
    other = tmp_path / "other"
    to.write_challenge_scores(other, scores, bits, bits_column="challenge_bits")
    assert mia.read_results(other, direction="higher").direction_source == "given"


def test_pe_pipeline_datasets_need_the_hf_extra(tmp_path, cli, monkeypatch):
    root = tmp_path / "game"
    for part, col in (("scores", "score"), ("challenge_bits", "challenge_bit")):
        (root / part).mkdir(parents=True)
        (root / part / "dataset_info.json").write_text(json.dumps({"features": {col: {}}}))
        (root / part / "state.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if not installed
    with pytest.raises(ValueError, match=r"pip install 'bayes-dp\[hf\]'") as e:
        mia.read_results(root)
    assert "to_json('scores.jsonl')" in str(e.value)
    rc, err, _ = cli(root)
    assert rc == 1 and "bayes-dp[hf]" in err


def test_pe_pipeline_datasets_read_with_the_hf_extra(tmp_path, cli):
    pytest.importorskip("datasets")
    rng = np.random.default_rng(13)
    scores, bits = to.challenge_game(120, rng)
    root = tmp_path / "game"
    to.write_challenge_scores(root, scores, bits, fmt="hf")
    run = mia.read_results(root)
    np.testing.assert_allclose(run.scores, scores)
    np.testing.assert_array_equal(run.members, bits.astype(bool))
    assert "(dataset)" in run.source
    rc, err, evidence = cli(root)
    assert rc == 0 and evidence[0].n_in == bits.sum()


# -- errors and the command line -------------------------------------------------------------------
def test_errors_name_the_file_and_the_fix(tmp_path, cli):
    missing = tmp_path / "no" / "such"
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        mia.read_results(missing)
    rc, err, _ = cli(missing)
    assert rc == 1 and f"no such file or folder: {missing}" in err
    bad = tmp_path / "scores.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip archive")
    rc, err, _ = cli(bad)
    assert rc == 1 and f"{bad} is not a readable .npz archive" in err and "damaged" in err
    # paths anywhere on the line
    a = to.write_attack_results(tmp_path / "a.json", {"FN": 20, "FP": 5, "TN": 95, "TP": 80})
    b = to.write_attack_results(tmp_path / "b.json", {"FN": 30, "FP": 9, "TN": 111, "TP": 90})
    argv = ["estimate", str(a), "--delta", "1e-5", str(b), "--out", str(tmp_path / "o")]
    try:
        main(argv)
    except _Stop as e:
        assert _fp_fn(e.evidence) == ([5, 9], [20, 30])
    else:
        pytest.fail("did not reach the sampler")


def test_json_writes_inf_and_nan_as_null(capsys):
    from bayes_dp.cli import _print_json, json_safe

    _print_json({"eps": float("inf"), "r_hat": np.nan, "b": [np.float64(-np.inf), 1]}, sys.stdout)
    out = json.loads(capsys.readouterr().out, parse_constant=_reject)
    assert out == {"eps": None, "r_hat": None, "b": [None, 1]}
    assert json_safe({"n": np.int64(2), "ok": np.bool_(True)}) == {"n": 2, "ok": True}


def _reject(constant):
    raise ValueError(f"not JSON: {constant}")


# -- every fixture through `bayes-dp estimate --json` ---------------------------------------------
def _fx_lira(tmp):
    to.write_lira_experiment(tmp / "exp", num=8, n=12)
    return tmp / "exp", ["--score-method", "online-fixed"]


def _fx_lira_18_augmentations(tmp):
    to.write_lira_experiment(tmp / "exp", num=8, n=12, n_aug=18)
    return tmp / "exp", ["--score-method", "online-fixed"]


def _fx_lira_mix(tmp):
    rng = np.random.default_rng(0)
    labels = to.write_lira_dataset(tmp / "exp", 12, 4, rng)
    for i in range(4):
        to.write_lira_model(tmp / "exp", labels, rng, expid=i, num_experiments=4)
        to.write_lira_model(tmp / "exp", labels, rng, seed=50 + i, arch="cnn32-3-max")
    return tmp / "exp", []


def _fx_lira_only_subset(tmp):
    to.write_lira_experiment(tmp / "exp", num=8, n=12, only_subset=8)
    return tmp / "exp", ["--skip-one-sided", "--score-method", "online-fixed"]


def _fx_lira_patience(tmp):
    rng = np.random.default_rng(1)
    labels = to.write_lira_dataset(tmp / "exp", 12, 4, rng)
    for i, s in enumerate([37, None, 53, 61, None, 100, 29, 83]):
        to.write_lira_model(tmp / "exp", labels, rng, expid=i, num_experiments=8, stop_at=s)
    return tmp / "exp", ["--score-method", "online-fixed"]


def _fx_lira_pytorch(tmp):
    to.write_lira_pytorch(tmp / "exp", n_shadows=8, n=12)
    return tmp / "exp", ["--score-method", "online-fixed"]


def _fx_pm(tmp):
    rng = np.random.default_rng(2)
    to.write_privacy_meter(tmp / "pm", to.pm_pairs(12, 4, rng), np.arange(12), rng)
    return tmp / "pm", ["--score-method", "online-fixed"]


def _fx_pm_ramia(tmp):
    rng = np.random.default_rng(3)
    m = to.pm_pairs(12, 4, rng)
    to.write_privacy_meter(tmp / "pm", m, np.arange(12), rng, ramia_k=3, plain=False)
    return tmp / "pm", ["--score-method", "online-fixed"]


def _fx_pm_reused(tmp):
    rng = np.random.default_rng(4)
    to.write_privacy_meter(tmp / "pm", to.pm_pairs(12, 4, rng), np.arange(12), rng, n_loaded=4)
    # 4 models: too few for the guessing game's reference half (its error names this option)
    return tmp / "pm", ["--score-method", "online-fixed", "--evidence", "targets"]


def _fx_pm_loss_global(tmp):
    rng = np.random.default_rng(5)
    to.write_privacy_meter(tmp / "pm", to.pm_pairs(60, 1, rng), np.arange(60), rng, alg="loss")
    return tmp / "pm", ["--score-method", "global"]


def _fx_pm_damaged(tmp):
    rng = np.random.default_rng(6)
    m = to.pm_pairs(20, 2, rng)
    to.write_privacy_meter(tmp / "pm", m, to.pm_subset(8, m, rng), rng, num_experiments=4)
    (tmp / "pm" / "report" / "exp" / "attack_result_0.npz").write_bytes(b"PK")
    return tmp / "pm", []


def _fx_pe_files(tmp):
    rng = np.random.default_rng(7)
    for i in range(3):
        s, b = to.challenge_game(60 + 5 * i, rng)
        to.write_attack_results(tmp / "pe" / f"game_{i}" / "r.json", to.attack_results(s, b, 0.7))
    return tmp / "pe", []


def _fx_pe_roc(tmp):
    _one_game_at_thresholds(tmp / "pe", n=80, k=5)
    return tmp / "pe", ["--same-challenges", "roc"]


def _fx_pe_roc_refused(tmp):
    _one_game_at_thresholds(tmp / "pe", n=80, k=5)
    return tmp / "pe", []


def _fx_pe_jsonl(tmp):
    s, b = to.challenge_game(80, np.random.default_rng(8))
    to.write_challenge_scores(tmp / "game", s, b)
    return tmp / "game", []


def _fx_missing(tmp):
    return tmp / "nothing-here", []


FIXTURES = {
    f.__name__[4:]: f
    for f in list(globals().values())
    if getattr(f, "__name__", "").startswith("_fx_")
}
#: fixtures that are refused (a mix of runs, a damaged file, one game at several thresholds,
#: a missing path): their --json output is the failure object
REFUSED = {"lira_mix", "missing", "pe_roc_refused", "pm_damaged"}
#: the smallest sampler settings the command line takes (the Gaussian-DP grid ignores --tune)
SMALL = ["--draws", "20", "--tune", "10", "--chains", "1", "--progress-every", "0"]


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_json_output_parses_for_every_fixture(name, tmp_path, capsys):
    path, extra = FIXTURES[name](tmp_path)
    argv = ["estimate", str(path), "--delta", "1e-5", "--out", str(tmp_path / "out"), "--json"]
    rc = main([*argv, "--no-report", "-q", *SMALL, *extra])
    out = capsys.readouterr().out
    obj = json.loads(out, parse_constant=_reject)
    assert obj["exit_status"] == rc
    # refused inputs give the failure object; the others sampled (3: these runs are too short
    # to pass the convergence checks) and wrote the whole object
    assert (rc == 1) == (name in REFUSED) == ("error" in obj)
    assert rc in (0, 1, 3, 4)
    if rc != 1:
        assert obj["claim"] and obj["files"]["posterior"]
