"""Flower simulation with canary clients, run in a subprocess by its test.

``tests/mia/canary/test_flower.py`` runs it as a script. Isolating Flower and ray in their own
process keeps their warnings and background processes out of the pytest process (which turns
warnings into errors). Prints the observed and unseen cosines as JSON on the last line of
stdout.
"""

import json
import warnings

warnings.simplefilter("ignore")

import numpy as np  # noqa: E402
from flwr.client import ClientApp, NumPyClient  # noqa: E402
from flwr.common import parameters_to_ndarrays  # noqa: E402
from flwr.server import ServerApp, ServerAppComponents, ServerConfig  # noqa: E402
from flwr.server.strategy import FedAvg  # noqa: E402
from flwr.simulation import run_simulation  # noqa: E402

from mia.canary.flower import canary_client_fn, canary_cosines  # noqa: E402

D, K, N_REAL = 2000, 20, 10


def main():
    """Run one FedAvg round with K canary clients and N_REAL noisy real clients."""
    rng = np.random.default_rng(0)
    dirs = rng.standard_normal((2 * K, D))  # first K inserted, last K never
    init = [np.zeros((20, 50)), np.zeros(1000)]

    class Real(NumPyClient):
        def __init__(self, pid):
            self.rng = np.random.default_rng(100 + pid)

        def get_parameters(self, config):
            return [p.copy() for p in init]

        def fit(self, parameters, config):
            return [p + 0.05 * self.rng.standard_normal(p.shape) for p in parameters], 1, {}

        def evaluate(self, parameters, config):
            return 0.0, 1, {}

    def real_fn(context):
        return Real(int(context.node_config["partition-id"])).to_client()

    client_fn = canary_client_fn(real_fn, dirs[:K], clip=1.0, canary_ids=range(K))
    final = {}

    class Recording(FedAvg):
        def aggregate_fit(self, rnd, results, failures):
            out = super().aggregate_fit(rnd, results, failures)
            final["params"] = parameters_to_ndarrays(out[0])
            final["n_canary"] = sum(bool(r.metrics.get("canary")) for _, r in results)
            final["n"] = len(results)
            return out

    def server_fn(context):
        # no initial_parameters: the server asks a random node, two times in three a canary
        # node, whose real client answers (mia.canary.flower.canary_client_fn)
        strategy = Recording(
            fraction_evaluate=0.0,
            min_fit_clients=K + N_REAL,
            min_available_clients=K + N_REAL,
        )
        return ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=1))

    run_simulation(
        ServerApp(server_fn=server_fn),
        ClientApp(client_fn=client_fn),
        num_supernodes=K + N_REAL,
        backend_config={"client_resources": {"num_cpus": 1}},
    )
    cos = canary_cosines(dirs, init, final["params"])
    print(
        json.dumps(
            {
                "observed": cos[:K].tolist(),
                "unseen": cos[K:].tolist(),
                "n_canary": final["n_canary"],
                "n": final["n"],
            }
        )
    )


if __name__ == "__main__":
    main()
