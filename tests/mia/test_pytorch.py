"""The PyTorch adapter (``mia.pytorch.TorchAlgorithm``) and DP-SGD through Opacus.

Skipped, with the reason, when torch (or opacus, for the DP tests) is not installed; CI installs
the ``torch`` extra in a second stage and runs this file there (see ``.ci/run``).
"""

import importlib.util
import sys

import numpy as np
import pytest

import mia

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_OPACUS = importlib.util.find_spec("opacus") is not None
NEEDS_TORCH = pytest.mark.skipif(
    not HAVE_TORCH, reason="torch is not installed (optional extra `torch`)"
)
NEEDS_OPACUS = pytest.mark.skipif(
    not (HAVE_TORCH and HAVE_OPACUS), reason="opacus is not installed (optional extra `torch`)"
)


def tiny_net():
    import torch

    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def other_net():
    import torch

    return torch.nn.Sequential(torch.nn.Linear(4, 2))


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(np.int64)


def _bases(n_bases=2):
    X, y = _data(200, seed=1)
    return [
        mia.ChallengeBase(X[i * 50 : i * 50 + 49], y[i * 50 : i * 50 + 49], X[i * 50 + 49], 1)
        for i in range(n_bases)
    ]


def test_missing_torch_names_the_extra(monkeypatch):
    from mia.pytorch import TorchAlgorithm

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"bayes-dp\[torch\]"):
        TorchAlgorithm(tiny_net)


@NEEDS_TORCH
def test_fit_loss_protocol_is_deterministic_and_leaves_torch_state_alone():
    import torch

    from mia.pytorch import TorchAlgorithm

    X, y = _data()
    algo = TorchAlgorithm(tiny_net, epochs=5, batch_size=10, learning_rate=0.1)
    assert isinstance(algo, mia.TrainingAlgorithm)
    state, threads = torch.random.get_rng_state(), torch.get_num_threads()
    m1 = algo.fit(X, y, np.random.default_rng(3))
    assert torch.equal(torch.random.get_rng_state(), state)  # global generator untouched
    assert torch.get_num_threads() == threads  # restored after training on 1 thread
    l1 = algo.loss(m1, X, y)
    assert l1.dtype == np.float64 and l1.shape == (len(X),)
    l2 = algo.loss(algo.fit(X, y, np.random.default_rng(3)), X, y)
    np.testing.assert_array_equal(l1, l2)
    l3 = algo.loss(algo.fit(X, y, np.random.default_rng(4)), X, y)
    assert not np.array_equal(l1, l3)
    # it learns: training loss well below log(2) of the untrained net on this separable task
    assert l1.mean() < 0.4
    # read-only input (as Ray hands out) is fine
    Xr = X.copy()
    Xr.flags.writeable = False
    np.testing.assert_array_equal(algo.loss(algo.fit(Xr, y, np.random.default_rng(3)), Xr, y), l1)


@NEEDS_TORCH
def test_bad_arguments():
    from mia.pytorch import TorchAlgorithm

    with pytest.raises(TypeError, match="`module_fn`"):
        TorchAlgorithm("net")
    with pytest.raises(TypeError, match="torch.nn.Module"):
        TorchAlgorithm(lambda: 3).fit(*_data(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="`epochs`"):
        TorchAlgorithm(tiny_net, epochs=0)
    with pytest.raises(TypeError, match="`dp`"):
        TorchAlgorithm(tiny_net, dp=1.0)
    with pytest.raises(ValueError, match="dp=None"):
        TorchAlgorithm(tiny_net).epsilon(1e-5, 100)


@NEEDS_TORCH
def test_audit_runner_joblib_matches_sequential_and_checks_the_architecture(tmp_path):
    from mia.pytorch import TorchAlgorithm

    bases = _bases()
    algo = TorchAlgorithm(tiny_net, epochs=3, batch_size=10)
    seq = mia.run_audit(
        algo, bases, 4, tmp_path / "s", backend="sequential", chunk_size=2, progress=False
    )
    par = mia.run_audit(
        algo, bases, 4, tmp_path / "p", backend="joblib", n_jobs=2, chunk_size=2, progress=False
    )
    assert seq.complete
    np.testing.assert_array_equal(seq.losses, par.losses)
    # model (b=1, h=1, j=3) on its own
    rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(1, 1, 3)))
    X, y = bases[1].dataset(1)
    want = algo.loss(algo.fit(X, y, rng), bases[1].z_x[None], [bases[1].z_y])[0]
    assert seq.losses[1, 1, 3] == want
    # a resume with another network (or other settings) is refused
    with pytest.raises(ValueError, match="algorithm"):
        mia.run_audit(
            TorchAlgorithm(other_net, epochs=3, batch_size=10),
            bases,
            4,
            tmp_path / "s",
            backend="sequential",
            chunk_size=2,
        )


@NEEDS_OPACUS
def test_dp_sgd_through_opacus_and_its_accountant():
    from mia.pytorch import TorchAlgorithm

    X, y = _data(100)
    dp = mia.DPSGD(noise_multiplier=1.0, clip_norm=1.0)
    algo = TorchAlgorithm(tiny_net, epochs=2, batch_size=10, dp=dp)
    assert algo.steps(100) == 20 and algo.sample_rate(100) == 0.1
    module, engine = algo.train(X, y, np.random.default_rng(0))
    # the eps reported without training is the accountant's eps of a real run
    assert engine.get_epsilon(1e-5) == pytest.approx(algo.epsilon(1e-5, 100), rel=1e-12)
    assert not hasattr(module, "_module")  # Opacus's wrapper is removed
    l1 = algo.loss(module, X, y)
    np.testing.assert_array_equal(l1, algo.loss(algo.fit(X, y, np.random.default_rng(0)), X, y))
    assert not np.array_equal(l1, algo.loss(algo.fit(X, y, np.random.default_rng(1)), X, y))
    assert algo.config()["dp"] == {"noise_multiplier": 1.0, "clip_norm": 1.0}
    eps = {a: algo.epsilon(1e-5, 1000, accountant=a) for a in ("rdp", "prv")}
    assert 0 < eps["prv"] < eps["rdp"]  # PRV is the tighter accountant
    with pytest.raises(ValueError, match="`accountant`"):
        algo.epsilon(1e-5, 100, accountant="moments")
    # same DP-SGD settings as the numpy MLP: Opacus's RDP and dp-accounting's RDP agree
    if importlib.util.find_spec("dp_accounting") is not None:
        ref = mia.MLP(epochs=2, batch_size=10, dp=dp).epsilon(1e-5, 1000)
        assert algo.epsilon(1e-5, 1000) == pytest.approx(ref, rel=0.05)


@NEEDS_OPACUS
@pytest.mark.slow
# the quick audit (2 bases x 6 models) is weak evidence; a short-run warning is not a failure
def test_torch_digits_example_quick(run_script):
    pytest.importorskip("sklearn")
    # the binomial likelihood keeps this test about the torch pipeline
    out = run_script(
        "examples/torch_digits.py", "--quick", "--jobs", "1", "--likelihood", "binomial"
    ).stdout
    assert "DP-SGD" in out and "Opacus eps" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("SGD ", "DP-SGD "))]
    # label, FP, FN, of, median, interval..., Opacus eps ("-" without DP), time
    assert [r[0] for r in rows] == ["SGD", "DP-SGD"]
    assert rows[0][-2] == "-" and float(rows[1][-2]) > 0
    assert all(int(r[3]) == 2 * 6 for r in rows)
