"""Flower adapter, run with Flower's simulation engine when flwr is installed."""

import importlib.util
import warnings

import numpy as np
import pytest

from mia.canary.flower import canary_cosines

HAVE_FLWR = importlib.util.find_spec("flwr") is not None


def test_canary_cosines():
    dirs = np.eye(4)[:2]
    c = canary_cosines(dirs, [np.zeros((2, 2))], [np.array([[3.0, 0.0], [4.0, 0.0]])])
    np.testing.assert_allclose(c, [0.6, 0.0])
    with pytest.raises(ValueError, match="directions"):
        canary_cosines(np.eye(3), [np.zeros(4)], [np.ones(4)])


@pytest.mark.skipif(not HAVE_FLWR, reason="flwr is not installed (optional extra `flower`)")
@pytest.mark.filterwarnings("ignore")  # flwr, ray and click emit import/runtime warnings
@pytest.mark.slow
def test_canary_clients_in_flower_simulation():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from flwr.client import ClientApp, NumPyClient
        from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
        from flwr.server import ServerApp, ServerAppComponents, ServerConfig
        from flwr.server.strategy import FedAvg
        from flwr.simulation import run_simulation

    from mia.canary.flower import canary_client_fn

    d, k = 2000, 20
    rng = np.random.default_rng(0)
    dirs = rng.standard_normal((2 * k, d))  # first k inserted, last k never
    shapes = [(20, 50), (1000,)]
    init = [np.zeros(s) for s in shapes]

    class Real(NumPyClient):
        def __init__(self, pid):
            self.rng = np.random.default_rng(100 + pid)

        def fit(self, parameters, config):
            return [p + 0.05 * self.rng.standard_normal(p.shape) for p in parameters], 1, {}

        def evaluate(self, parameters, config):
            return 0.0, 1, {}

    def real_fn(context):
        return Real(int(context.node_config["partition-id"])).to_client()

    client_fn = canary_client_fn(real_fn, dirs[:k], clip=1.0, canary_ids=range(k))
    final = {}

    class Recording(FedAvg):
        def aggregate_fit(self, rnd, results, failures):
            out = super().aggregate_fit(rnd, results, failures)
            final["params"] = parameters_to_ndarrays(out[0])
            final["n_canary"] = sum(bool(r.metrics.get("canary")) for _, r in results)
            final["n"] = len(results)
            return out

    def server_fn(context):
        strategy = Recording(initial_parameters=ndarrays_to_parameters(init), fraction_evaluate=0.0)
        return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=1))

    run_simulation(
        ServerApp(server_fn=server_fn),
        ClientApp(client_fn=client_fn),
        num_supernodes=k + 10,
        backend_config={"client_resources": {"num_cpus": 1}},
    )
    cos = canary_cosines(dirs, init, final["params"])
    assert final["n_canary"] == k and final["n"] == k + 10
    observed, unseen = cos[:k], cos[k:]
    assert observed.min() > unseen.max()
    # delta ~ (sum of k unit canaries + 10 noise vectors of norm 0.05 sqrt(d)) / (k + 10)
    assert np.mean(observed) == pytest.approx(1 / np.sqrt(k + 10 * 0.05**2 * d), rel=0.1)
    assert abs(unseen.mean()) < 4 / np.sqrt(d * k)
