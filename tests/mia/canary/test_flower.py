"""Flower adapter, run with Flower's simulation engine when flwr is installed."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from mia.canary.flower import canary_cosines

HAVE_FLWR = importlib.util.find_spec("flwr") is not None
ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_canary_cosines():
    dirs = np.eye(4)[:2]
    c = canary_cosines(dirs, [np.zeros((2, 2))], [np.array([[3.0, 0.0], [4.0, 0.0]])])
    np.testing.assert_allclose(c, [0.6, 0.0])
    with pytest.raises(ValueError, match="directions"):
        canary_cosines(np.eye(3), [np.zeros(4)], [np.ones(4)])


@pytest.mark.skipif(not HAVE_FLWR, reason="flwr is not installed (optional extra `flower`)")
@pytest.mark.slow
def test_canary_clients_in_flower_simulation():
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "_support" / "flower_sim.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    k, d = 20, 2000
    assert res["n_canary"] == k and res["n"] == k + 10
    observed, unseen = np.array(res["observed"]), np.array(res["unseen"])
    assert observed.min() > unseen.max()
    # delta ~ (sum of k unit canaries + 10 noise vectors of norm 0.05 sqrt(d)) / (k + 10)
    assert np.mean(observed) == pytest.approx(1 / np.sqrt(k + 10 * 0.05**2 * d), rel=0.1)
    assert abs(unseen.mean()) < 4 / np.sqrt(d * k)


@pytest.mark.skipif(not HAVE_FLWR, reason="flwr is not installed (optional extra `flower`)")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # raised by flwr's imports
def test_canary_node_answers_for_initial_parameters_from_its_real_client():
    """FedAvg without initial_parameters may ask a canary node; its real client answers."""
    from types import SimpleNamespace

    from flwr.client import NumPyClient
    from flwr.common import GetParametersIns, parameters_to_ndarrays

    from mia.canary.flower import canary_client_fn, make_canary_client

    init = [np.arange(6.0).reshape(2, 3), np.ones(2)]

    class Real(NumPyClient):
        def get_parameters(self, config):
            return init

    client_fn = canary_client_fn(lambda ctx: Real().to_client(), np.eye(8)[:1], canary_ids=[0])
    canary = client_fn(SimpleNamespace(node_config={"partition-id": 0}))
    res = canary.get_parameters(GetParametersIns(config={}))
    got = parameters_to_ndarrays(res.parameters)
    assert len(got) == 2 and all(np.array_equal(a, b) for a, b in zip(got, init, strict=True))
    # a canary client made alone says what to do instead of returning no parameters
    alone = make_canary_client(np.ones(8))
    with pytest.raises(RuntimeError, match="initial_parameters"):
        alone.get_parameters({})
    with_fn = make_canary_client(np.ones(8), parameters_fn=lambda config: init)
    assert with_fn.get_parameters({})[0].shape == (2, 3)
