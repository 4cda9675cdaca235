"""The audit runner: determinism, streaming to disk, resuming without retraining, backends."""

import json

import numpy as np
import pytest

import bayes_dp as bdp
import mia


class CountingMean:
    """A cheap 'training algorithm': parameters are the data mean plus N(0, 0.1^2) noise.

    Membership of z shifts the mean, so the loss ``||x - theta||^2`` carries a signal.
    """

    def __init__(self):
        self.calls = 0

    def fit(self, X, y, seed):
        self.calls += 1
        return X.mean(axis=0) + 0.1 * seed.standard_normal(X.shape[1])

    def loss(self, params, X, y):
        return ((X - params) ** 2).sum(axis=1)


def _bases(n_bases=3, size=10, seed=0):
    rng = np.random.default_rng(seed)
    return [
        mia.ChallengeBase(rng.normal(size=(size, 2)), np.zeros(size, int), rng.normal(3, 1, 2), 0)
        for _ in range(n_bases)
    ]


def test_interrupted_audit_resumes_without_retraining(tmp_path):
    bases, n = _bases(), 10
    ref_algo = CountingMean()
    ref = mia.run_audit(
        ref_algo, bases, n, tmp_path / "ref", chunk_size=4, backend="sequential", progress=False
    )
    assert ref.complete and ref_algo.calls == 3 * 2 * n

    algo = CountingMean()
    part = mia.run_audit(
        algo,
        bases,
        n,
        tmp_path / "run",
        chunk_size=4,
        backend="sequential",
        progress=False,
        max_models=25,
    )
    assert not part.complete and algo.calls == 24  # whole chunks only: 4 + 4 + 2 + 4 + 4 + 2 + 4
    with pytest.raises(ValueError, match="incomplete"):
        part.counts(0.1)
    # interrupt again, from a progress callback, in the middle of the next call
    seen = []

    def stop_after_two(done, total):
        seen.append(done)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mia.run_audit(
            algo,
            bases,
            n,
            tmp_path / "run",
            chunk_size=4,
            backend="sequential",
            progress=stop_after_two,
        )
    assert algo.calls == 24 + 2 + 4
    full = mia.run_audit(
        algo, bases, n, tmp_path / "run", chunk_size=4, backend="sequential", progress=False
    )
    assert full.complete
    assert algo.calls == 3 * 2 * n  # every model trained exactly once over the three calls
    np.testing.assert_array_equal(full.losses, ref.losses)
    assert full.counts(0.1) == ref.counts(0.1)
    again = mia.run_audit(algo, bases, n, tmp_path / "run", chunk_size=4, progress=False)
    assert algo.calls == 3 * 2 * n  # nothing left to do
    np.testing.assert_array_equal(again.losses, ref.losses)
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert all(f.endswith((".npy", ".json")) for f in files)


def test_killed_subprocess_resumes(tmp_path):
    """A runner killed from outside leaves only whole chunk files; a rerun completes them."""
    import subprocess
    import sys
    import time

    script = tmp_path / "run.py"
    script.write_text(
        "import sys, time, numpy as np, mia\n"
        "class Slow:\n"
        "    def fit(self, X, y, seed):\n"
        "        time.sleep(0.05)\n"
        "        return X.mean(0) + 0.1 * seed.standard_normal(X.shape[1])\n"
        "    def loss(self, p, X, y):\n"
        "        return ((X - p) ** 2).sum(1)\n"
        "rng = np.random.default_rng(0)\n"
        "bases = [mia.ChallengeBase(rng.normal(size=(10, 2)), np.zeros(10, int), "
        "rng.normal(3, 1, 2), 0) for _ in range(2)]\n"
        "mia.run_audit(Slow(), bases, 10, sys.argv[1], chunk_size=2, backend='sequential', "
        "progress=False)\n"
    )
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "a")], env=env)
    deadline = time.time() + 30
    while time.time() < deadline and len(list((tmp_path / "a").glob("losses_*.npy"))) < 3:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    n_before = len(list((tmp_path / "a").glob("losses_*.npy")))
    assert 3 <= n_before < 20
    subprocess.run([sys.executable, str(script), str(tmp_path / "a")], env=env, check=True)
    subprocess.run([sys.executable, str(script), str(tmp_path / "b")], env=env, check=True)
    a, b = mia.AuditResult.load(tmp_path / "a"), mia.AuditResult.load(tmp_path / "b")
    assert a.complete
    np.testing.assert_array_equal(a.losses, b.losses)


def test_joblib_matches_sequential_and_counts(tmp_path):
    bases, n = _bases(2), 8
    seq = mia.run_audit(
        CountingMean(), bases, n, tmp_path / "s", backend="sequential", chunk_size=3, progress=False
    )
    par = mia.run_audit(
        CountingMean(),
        bases,
        n,
        tmp_path / "p",
        backend="joblib",
        n_jobs=2,
        chunk_size=3,
        progress=False,
    )
    np.testing.assert_array_equal(seq.losses, par.losses)
    c = par.counts(0.1)
    for b in range(2):
        fp, fn = mia.cross_fed_counts(par.losses[b, 0], par.losses[b, 1], [0.1])
        assert (c.fp[b], c.fn[b]) == (fp[0], fn[0])
    assert c.n_neg.tolist() == [n, n] and c.n_pos.tolist() == [n, n]
    ev = par.to_evidence(0.1, name="toy")
    assert isinstance(ev, bdp.Evidence) and ev.likelihood == "bivariate_normal"
    assert ev.counts == c
    fp, fn = par.error_curves([0.05, 0.5, 0.95])
    assert fp.shape == (2, 3) and (np.diff(fp, axis=1) >= 0).all()


def test_seeds_are_keyed_by_base_hypothesis_index(tmp_path):
    bases = _bases(2)
    r1 = mia.run_audit(
        CountingMean(), bases, 6, tmp_path / "a", chunk_size=6, backend="sequential", progress=False
    )
    r2 = mia.run_audit(
        CountingMean(),
        bases,
        6,
        tmp_path / "b",
        chunk_size=6,
        backend="sequential",
        progress=False,
        seed=1,
    )
    assert not np.array_equal(r1.losses, r2.losses)
    # model (b=1, h=0, j=4) is reproducible on its own
    rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(1, 0, 4)))
    algo = CountingMean()
    want = algo.loss(algo.fit(bases[1].X, bases[1].y, rng), bases[1].z_x[None], [0])[0]
    assert r1.losses[1, 0, 4] == want


def test_seed_may_be_a_generator(tmp_path):
    bases = _bases(2)
    kw = dict(chunk_size=3, backend="sequential", progress=False)
    r1 = mia.run_audit(
        CountingMean(), bases, 6, tmp_path / "a", seed=np.random.default_rng(5), **kw
    )
    r2 = mia.run_audit(
        CountingMean(), bases, 6, tmp_path / "b", seed=np.random.default_rng(5), **kw
    )
    np.testing.assert_array_equal(r1.losses, r2.losses)  # same generator state, same audit
    # the root seed is one draw from the generator, recorded; as an int it gives the same audit
    root = int(np.random.default_rng(5).integers(2**63))
    assert r1.seed == root == json.loads((tmp_path / "a" / "manifest.json").read_text())["seed"]
    r3 = mia.run_audit(CountingMean(), bases, 6, tmp_path / "c", seed=root, **kw)
    np.testing.assert_array_equal(r3.losses, r1.losses)
    r4 = mia.run_audit(
        CountingMean(), bases, 6, tmp_path / "d", seed=np.random.default_rng(6), **kw
    )
    assert not np.array_equal(r4.losses, r1.losses)
    # an advanced generator draws another root seed: the resume is refused, naming the seed
    rng = np.random.default_rng(5)
    rng.random()
    with pytest.raises(ValueError, match=f"pass seed={root} to resume"):
        mia.run_audit(CountingMean(), bases, 6, tmp_path / "a", seed=rng, **kw)
    for bad in (1.5, "0", None, True, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="`seed`"):
            mia.run_audit(CountingMean(), bases, 6, tmp_path / "e", seed=bad, **kw)
    with pytest.raises(ValueError, match="`seed`"):
        mia.run_audit(CountingMean(), bases, 6, tmp_path / "e", seed=-1, **kw)


def test_logit_statistic_and_builtin_model(tmp_path):
    pytest.importorskip("sklearn")
    X, y = mia.load_digits()
    bases = mia.draw_challenge_bases(X, y, 1, size=150, z="mislabelled", seed=0)
    res = mia.run_audit(
        mia.SoftmaxRegression(epochs=5), bases, 6, tmp_path, progress=False, backend="sequential"
    )
    phi = res.statistic("logit")
    np.testing.assert_allclose(phi, mia.lira_logit(res.losses))
    assert res.counts(0.2, statistic="logit").n_bases == 1
    with pytest.raises(ValueError, match="`statistic`"):
        res.statistic("margin")


def test_settings_mismatch_and_bad_arguments(tmp_path):
    bases = _bases(1)
    mia.run_audit(CountingMean(), bases, 4, tmp_path, backend="sequential", progress=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["n_models"] == 4
    with pytest.raises(ValueError, match="n_models"):
        mia.run_audit(CountingMean(), bases, 5, tmp_path, backend="sequential", progress=False)
    with pytest.raises(ValueError, match="bases"):
        mia.run_audit(CountingMean(), _bases(1, seed=9), 4, tmp_path, backend="sequential")
    with pytest.raises(ValueError, match="`backend`"):
        mia.run_audit(CountingMean(), bases, 4, tmp_path / "x", backend="spark", progress=False)
    with pytest.raises(TypeError, match="`algorithm`"):
        mia.run_audit(object(), bases, 4, tmp_path / "y")
    with pytest.raises(TypeError, match="ChallengeBase"):
        mia.run_audit(CountingMean(), [1], 4, tmp_path / "z")
    with pytest.raises(ValueError, match="no audit"):
        mia.AuditResult.load(tmp_path / "nothing")
