"""Ray and Dask backends of the audit runner: same losses, data sent once, extras checked first.

The tests that need ray or dask.distributed skip (with the reason) when the extra is missing;
CI installs the extras in a second stage and runs this file there (see ``.ci/run``).
"""

import importlib.util
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mia

ROOT = Path(__file__).resolve().parents[2]
HAVE_DASK = importlib.util.find_spec("distributed") is not None
HAVE_RAY = importlib.util.find_spec("ray") is not None
NEEDS_DASK = pytest.mark.skipif(
    not HAVE_DASK, reason="dask.distributed is not installed (optional extra `dask`)"
)
NEEDS_RAY = pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (optional extra `ray`)")


class CountingMean:
    """Parameters: the data mean plus N(0, 0.1^2) noise; loss: squared distance."""

    def fit(self, X, y, seed):
        return X.mean(axis=0) + 0.1 * seed.standard_normal(X.shape[1])

    def loss(self, params, X, y):
        return ((X - params) ** 2).sum(axis=1)


def _bases(n_bases=3, size=200, d=16, seed=0):
    rng = np.random.default_rng(seed)
    return [
        mia.ChallengeBase(rng.normal(size=(size, d)), np.zeros(size, int), rng.normal(3, 1, d), 0)
        for _ in range(n_bases)
    ]


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))


def _contains_array(obj) -> bool:
    if isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_contains_array(o) for o in obj)
    return False


# -- no extra needed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "module", "extra"),
    [("ray", "ray", "bayes-dp[ray]"), ("dask", "distributed", "bayes-dp[dask]")],
)
def test_missing_extra_is_reported_before_anything_is_written(
    tmp_path, monkeypatch, backend, module, extra
):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    out = tmp_path / "audit"
    with pytest.raises(ImportError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        mia.run_audit(CountingMean(), _bases(1, 10, 2), 4, out, progress=False, backend=backend)
    assert not out.exists()  # no directory, no manifest.json


def test_unknown_backend_lists_the_choices(tmp_path):
    with pytest.raises(ValueError, match="'dask'") as err:
        mia.run_audit(CountingMean(), _bases(1, 10, 2), 4, tmp_path / "a", backend="spark")
    assert "dask.distributed.Client" in str(err.value)
    assert not (tmp_path / "a").exists()


def test_import_mia_does_not_import_the_extras():
    """``import mia`` (and its optional adapters) must not import ray, dask, flwr or torch."""
    code = (
        "import sys, mia, mia.canary, mia.canary.flower, mia.pytorch\n"
        "heavy = ('ray', 'dask', 'distributed', 'flwr', 'torch', 'opacus')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]"


# -- Dask --------------------------------------------------------------------------------------


@NEEDS_DASK
def test_dask_string_without_a_running_client(tmp_path):
    with pytest.raises(ValueError, match="no.*Client|Client.*none"):
        mia.run_audit(CountingMean(), _bases(1, 10, 2), 4, tmp_path / "a", backend="dask")
    assert not (tmp_path / "a").exists()


class _SpyClient:
    """A dask.distributed.Client that records what is scattered and what each task carries."""

    def __init__(self, client):
        self.client = client
        self.scattered = []
        self.task_args = []

    def scatter(self, data, **kwargs):
        self.scattered.extend(data)
        return self.client.scatter(data, **kwargs)

    def submit(self, fn, *args, **kwargs):
        self.task_args.append(args)
        return self.client.submit(fn, *args, **kwargs)

    def gather(self, *args, **kwargs):  # pragma: no cover - part of the Client interface
        return self.client.gather(*args, **kwargs)


@NEEDS_DASK
def test_dask_sends_each_base_once_and_matches_sequential(tmp_path):
    distributed = pytest.importorskip("distributed")
    bases, n = _bases(), 6
    seq = mia.run_audit(
        CountingMean(), bases, n, tmp_path / "s", backend="sequential", progress=False
    )
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as client:
        spy = _SpyClient(client)
        res = mia.run_audit(
            CountingMean(), bases, n, tmp_path / "d", backend=spy, chunk_size=2, progress=False
        )
        n_tasks = len(bases) * 2 * 3
        assert len(spy.task_args) == n_tasks
        # scattered once: the model and one (X, y, z_x, z_y) per base
        assert len(spy.scattered) == 1 + len(bases)
        assert [d[0] is b.X for d, b in zip(spy.scattered[1:], bases, strict=True)] == [True] * 3
        base_bytes = len(pickle.dumps(spy.scattered[1]))
        for args in spy.task_args:
            # every task gets references to the model and its base, plus (seed, task) indices
            assert isinstance(args[0], distributed.Future)
            assert isinstance(args[1], distributed.Future)
            assert not _contains_array(args)
            assert len(pickle.dumps(args[2:])) < 200
        assert base_bytes > 10_000  # 200 x 16 float32 features
        # the default client is used by backend="dask"
        again = mia.run_audit(
            CountingMean(), bases, n, tmp_path / "d2", backend="dask", chunk_size=3, progress=False
        )
    np.testing.assert_array_equal(res.losses, seq.losses)
    np.testing.assert_array_equal(again.losses, seq.losses)


_SLOW_SCRIPT = """
import sys, time, numpy as np, mia
from distributed import Client

class Slow:
    def fit(self, X, y, seed):
        time.sleep(0.05)
        return X.mean(0) + 0.1 * seed.standard_normal(X.shape[1])

    def loss(self, p, X, y):
        return ((X - p) ** 2).sum(1)

if __name__ == "__main__":
    rng = np.random.default_rng(0)
    bases = [mia.ChallengeBase(rng.normal(size=(10, 2)), np.zeros(10, int), rng.normal(3, 1, 2), 0)
             for _ in range(2)]
    backend = sys.argv[2]
    if backend == "dask":
        backend = Client(processes=False, n_workers=1, threads_per_worker=1,
                         dashboard_address=None)
    mia.run_audit(Slow(), bases, 10, sys.argv[1], chunk_size=2, backend=backend, progress=False)
"""


@NEEDS_DASK
def test_dask_driver_killed_resumes(tmp_path):
    """kill -9 of a driver using Dask leaves whole chunk files; a rerun completes them."""
    script = tmp_path / "run.py"
    script.write_text(_SLOW_SCRIPT)
    out = tmp_path / "a"
    proc = subprocess.Popen([sys.executable, str(script), str(out), "dask"], env=_env())
    deadline = time.time() + 60
    while time.time() < deadline and len(list(out.glob("losses_*.npy"))) < 3:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    n_before = len(list(out.glob("losses_*.npy")))
    assert 3 <= n_before < 20
    subprocess.run([sys.executable, str(script), str(out), "dask"], env=_env(), check=True)
    a = mia.AuditResult.load(out)
    assert a.complete
    # the script's model is CountingMean with a pause: the same losses as a clean run here
    rng = np.random.default_rng(0)
    bases = [
        mia.ChallengeBase(rng.normal(size=(10, 2)), np.zeros(10, int), rng.normal(3, 1, 2), 0)
        for _ in range(2)
    ]
    ref = mia.run_audit(
        CountingMean(),
        bases,
        10,
        tmp_path / "b",
        chunk_size=2,
        backend="sequential",
        progress=False,
    )
    np.testing.assert_array_equal(a.losses, ref.losses)


# -- Ray ---------------------------------------------------------------------------------------


@NEEDS_RAY
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_ray_sends_each_base_once_and_matches_sequential(tmp_path, monkeypatch):
    """Ray workers import by module name, so a built-in algorithm is used (not a test class)."""
    import gc

    ray = pytest.importorskip("ray")
    bases = _bases(3, 100, 4)
    algo = mia.SoftmaxRegression(epochs=2, batch_size=5, n_classes=2)
    seq = mia.run_audit(
        algo, bases, 5, tmp_path / "s", backend="sequential", chunk_size=2, progress=False
    )
    put, remote = ray.put, ray.remote
    stored, task_args = [], []

    def spy_put(obj, **kwargs):
        stored.append(obj)
        return put(obj, **kwargs)

    def spy_remote(fn):
        rf = remote(fn)

        class Spy:
            def remote(self, *args):
                task_args.append(args)
                return rf.remote(*args)

        return Spy()

    monkeypatch.setattr(ray, "put", spy_put)
    monkeypatch.setattr(ray, "remote", spy_remote)
    try:
        res = mia.run_audit(
            algo, bases, 5, tmp_path / "r", backend="ray", n_jobs=2, chunk_size=2, progress=False
        )
    finally:
        monkeypatch.undo()
        ray.shutdown()
        gc.collect()
    np.testing.assert_array_equal(res.losses, seq.losses)
    assert len(task_args) == 3 * 2 * 3
    assert len(stored) == 1 + len(bases)  # the model, then each base once
    assert stored[0] is algo
    for args in task_args:
        assert isinstance(args[0], ray.ObjectRef) and isinstance(args[1], ray.ObjectRef)
        assert not _contains_array(args)
