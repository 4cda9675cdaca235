"""Thin Flower adapter for random canary clients (optional extra ``flower``).

Flower is imported lazily: importing this module works without it, and the functions raise an
``ImportError`` naming the extra when it is missing.

Use ``canary_client_fn(real_client_fn, directions, clip=..., canary_ids=...)`` as the
``client_fn`` of a ``flwr.client.ClientApp``: the nodes whose ``partition-id`` is in
``canary_ids`` become canary clients that return ``parameters + clip * direction`` (their
update is the fixed unit direction scaled to the clip norm), all others are the real clients.
After training, ``canary_cosines(directions, initial, final)`` gives the final-model statistic
for ``epsilon_from_cosines``; cosines of directions never inserted are the null.

Initial parameters: a strategy without ``initial_parameters`` (FedAvg's default) asks one
client, picked at random, for them. A canary client has no model of its own, so
``canary_client_fn`` answers that request from the real client of the same node
(``real_client_fn(context).get_parameters``); a canary client made alone by
``make_canary_client`` needs ``parameters_fn`` or raises a ``RuntimeError`` that says to give
the strategy ``initial_parameters``. Giving the strategy ``initial_parameters`` is the
recommended setup: the audit needs the initial model anyway (``canary_cosines``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["canary_client_fn", "canary_cosines", "make_canary_client"]


def _flwr_client():
    try:
        from flwr.client import NumPyClient
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the Flower adapter needs flwr (pip install 'bayes-dp[flower]')") from err
    return NumPyClient


def _flat_size(parameters) -> int:
    return int(sum(np.asarray(p).size for p in parameters))


def _real_parameters(client, config) -> list[np.ndarray]:
    """Return the parameters a real Flower client reports (``Client`` or ``NumPyClient``)."""
    from flwr.common import GetParametersIns, parameters_to_ndarrays

    if hasattr(client, "to_client"):
        client = client.to_client()
    res = client.get_parameters(GetParametersIns(config=dict(config or {})))
    return parameters_to_ndarrays(res.parameters)


def make_canary_client(direction, *, clip=1.0, num_examples=1, parameters_fn=None):
    """Make a Flower ``NumPyClient`` whose update is ``clip * direction`` (unit-normalised).

    Parameters
    ----------
    direction : array_like of float
        Flat direction, one entry per model parameter (normalised here).
    clip : float, default 1.0
        Norm of the update (the clip norm of the round).
    num_examples : int, default 1
        Weight reported to the strategy; DP-FedAvg weights clients equally.
    parameters_fn : callable, optional
        ``parameters_fn(config) -> list of ndarray``, what ``get_parameters`` returns when the
        strategy asks this client for the initial model. Without it that request raises a
        ``RuntimeError`` (give the strategy ``initial_parameters``).

    Returns
    -------
    flwr.client.NumPyClient
    """
    numpy_client = _flwr_client()
    c = np.asarray(direction, dtype=float).ravel()
    norm = np.linalg.norm(c)
    if c.size == 0 or not np.isfinite(norm) or norm == 0:
        raise ValueError("`direction` must be a finite nonzero vector")
    c = c / norm

    class CanaryClient(numpy_client):
        def get_parameters(self, config):
            if parameters_fn is None:
                raise RuntimeError(
                    "a canary client has no model parameters of its own: give the strategy "
                    "`initial_parameters` (e.g. FedAvg(initial_parameters="
                    "ndarrays_to_parameters(init))) or pass `parameters_fn`"
                )
            return [np.asarray(p) for p in parameters_fn(config)]

        def fit(self, parameters, config):
            if _flat_size(parameters) != c.size:
                raise ValueError(
                    f"`direction` has {c.size} entries but the model has "
                    f"{_flat_size(parameters)} parameters"
                )
            out, i = [], 0
            for p in parameters:
                p = np.asarray(p, dtype=float)
                out.append(p + clip * c[i : i + p.size].reshape(p.shape))
                i += p.size
            return out, int(num_examples), {"canary": True}

        def evaluate(self, parameters, config):
            return 0.0, int(num_examples), {}

    return CanaryClient()


def canary_client_fn(real_client_fn, directions, *, clip=1.0, canary_ids=()):
    """Wrap a Flower ``client_fn`` so that some nodes are canary clients.

    Parameters
    ----------
    real_client_fn : callable
        ``client_fn(context) -> flwr.client.Client`` for the real clients.
    directions : array_like, shape (k, d)
        Canary directions; canary ``j`` is the node with partition id ``canary_ids[j]``.
    clip : float, default 1.0
        Update norm of the canaries.
    canary_ids : sequence of int
        Partition ids (``context.node_config["partition-id"]``) of the canary nodes.

    Returns
    -------
    callable
        A ``client_fn`` for ``flwr.client.ClientApp``. When the strategy has no
        ``initial_parameters`` and asks a canary node for them, the node's real client
        (``real_client_fn(context)``) answers.
    """
    dirs = np.atleast_2d(np.asarray(directions, dtype=float))
    ids = [int(i) for i in canary_ids]
    if len(ids) > dirs.shape[0]:
        raise ValueError(
            f"`canary_ids` has {len(ids)} entries but only {dirs.shape[0]} `directions`"
        )
    index = {pid: j for j, pid in enumerate(ids)}

    def client_fn(context):
        pid = int(context.node_config["partition-id"])
        if pid in index:

            def parameters_fn(config):
                return _real_parameters(real_client_fn(context), config)

            return make_canary_client(
                dirs[index[pid]], clip=clip, parameters_fn=parameters_fn
            ).to_client()
        return real_client_fn(context)

    return client_fn


def canary_cosines(directions, initial, final) -> np.ndarray:
    """Cosine of each direction with the flattened model delta ``final - initial``."""
    dirs = np.atleast_2d(np.asarray(directions, dtype=float))
    delta = np.concatenate([np.ravel(f) - np.ravel(i) for i, f in zip(initial, final, strict=True)])
    if delta.size != dirs.shape[1]:
        raise ValueError(
            f"`directions` have {dirs.shape[1]} entries but the model has {delta.size}"
        )
    norms = np.linalg.norm(dirs, axis=1) * np.linalg.norm(delta)
    return dirs @ delta / np.where(norms > 0, norms, 1.0)
