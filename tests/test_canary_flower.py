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
ROOT = pathlib.Path(__file__).resolve().parents[1]


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
        [sys.executable, str(ROOT / "tests" / "_flower_sim.py")],
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
