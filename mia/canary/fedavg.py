"""DP-FedAvg on scikit-learn digits with random canary clients (Andrew et al., Alg. 2 and 3).

A small numpy simulator: real clients hold shards of the digits training set and run local
gradient descent on a one-hidden-layer tanh network (:class:`mia.MLP`, Glorot-uniform
initialisation, parameters as one flat vector); every update is clipped to ``clip`` (L2), the
server adds ``N(0, (noise_multiplier * clip)^2 I_d)`` to the sum, divides by the number of
participants (clients plus canaries) and takes a server step. Canary clients return a fixed
random unit direction scaled to the clip norm whenever they participate; unseen canaries are
drawn the same way and never inserted. Both threat models are measured in the same run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

from .._accounting import poisson_gaussian_epsilon
from ..data import digits_split
from ..training import MLP
from ._clip import clip_l2
from ._gaussians import gaussian_mechanism_epsilon
from ._null import CosineNull
from .counts import CountsResult, counts_from_scores
from .oneshot import epsilon_from_cosines, epsilon_from_two_samples

__all__ = ["FedAvgCanaryResult", "run_dp_fedavg_with_canaries"]

SAMPLINGS = ("shuffle", "bernoulli")


@dataclass(frozen=True)
class FedAvgCanaryResult:
    """Canary statistics and estimates of one DP-FedAvg run.

    Attributes
    ----------
    epsilon_final : float
        Final-model estimate: exact two-Gaussian epsilon between ``N(0, 1/d)`` and a Gaussian
        fitted to the observed canaries' cosines with ``theta_T - theta_0`` (Alg. 2).
    epsilon_final_mean_only : float
        Final-model estimate with the mean-only estimator (no fitted variance).
    epsilon_all_iterates : float
        All-iterates estimate: two-Gaussian epsilon between Gaussians fitted to the max over
        rounds of the cosine with each round's noised aggregate, unseen vs observed (Alg. 3).
    epsilon_theory : float
        Theoretical epsilon for one canary's participation, see ``accounting``: exact for fixed
        repetitions, ``dp_accounting``'s RDP bound for Bernoulli sampling (``nan`` there when
        ``dp_accounting`` is not installed).
    accounting : str
        What ``epsilon_theory`` accounts for.
    epsilon_theory_clients : float
        Theoretical epsilon for a real client of the run: the most frequent participant's
        repetitions of the Gaussian mechanism for shuffled epochs (no amplification), the
        Poisson-subsampled Gaussian over all rounds for Bernoulli sampling.
    accuracy : float
        Test accuracy of the final model.
    d : int
        Number of model parameters.
    final_observed, final_unseen : numpy.ndarray
        Cosines with the final model delta.
    max_observed, max_unseen : numpy.ndarray
        Max over rounds of the cosine with each round's noised aggregate.
    participations : numpy.ndarray
        Number of rounds each observed canary took part in.
    """

    epsilon_final: float
    epsilon_final_mean_only: float
    epsilon_all_iterates: float
    epsilon_theory: float
    accounting: str
    epsilon_theory_clients: float
    accuracy: float
    d: int
    delta: float
    noise_multiplier: float
    final_observed: np.ndarray = field(repr=False)
    final_unseen: np.ndarray = field(repr=False)
    max_observed: np.ndarray = field(repr=False)
    max_unseen: np.ndarray = field(repr=False)
    participations: np.ndarray = field(repr=False)

    def counts_final(self, alpha: float = 0.05, *, seed=None) -> CountsResult:
        """Count the final-model attack's errors, threshold from the exact cosine null."""
        return counts_from_scores(
            self.final_observed,
            CosineNull(self.d),
            alpha,
            n_null=self.final_unseen.size,
            seed=seed,
        )

    def counts_all_iterates(self, alpha: float = 0.05, *, split: bool = True, seed=None):
        """Count the all-iterates attack's errors, threshold from the unseen canaries."""
        return counts_from_scores(self.max_observed, self.max_unseen, alpha, split=split, seed=seed)


def _canary_schedule(rng, k, rounds, repeats, q, sampling):
    """Boolean (rounds, k): canary j participates in round t."""
    sched = np.zeros((rounds, k), dtype=bool)
    if repeats is None:
        if sampling == "bernoulli":
            return rng.random((rounds, k)) < q
        repeats = max(1, rounds // max(1, int(round(1 / q))))  # once per epoch, like clients
    edges = np.linspace(0, rounds, repeats + 1).astype(int)
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        sched[rng.integers(a, b, size=k), np.arange(k)] = True
    return sched


def _client_schedule(rng, n_clients, per_round, rounds, sampling):
    """List of participating client indices per round."""
    if sampling == "bernoulli":
        q = per_round / n_clients
        return [np.flatnonzero(rng.random(n_clients) < q) for _ in range(rounds)]
    out, order = [], np.empty(0, dtype=int)
    for _ in range(rounds):  # shuffled epochs, fixed batch size
        if order.size < per_round:
            order = np.concatenate([order, rng.permutation(n_clients)])
        out.append(order[:per_round])
        order = order[per_round:]
    return out


def _cos_rows(c: np.ndarray, v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return c @ v / n if n > 0 else np.zeros(c.shape[0])


def run_dp_fedavg_with_canaries(
    *,
    noise_multiplier=1.0,
    rounds=200,
    n_clients=100,
    clients_per_round=10,
    sampling="shuffle",
    clip=1.0,
    client_lr=0.5,
    local_steps=5,
    server_lr=1.0,
    hidden=64,
    n_canaries=200,
    n_unseen=200,
    canary_repeats=1,
    delta=1e-5,
    seed=None,
) -> FedAvgCanaryResult:
    """Run DP-FedAvg on digits with canary clients and estimate epsilon for both threat models.

    Parameters
    ----------
    noise_multiplier : float, default 1.0
        Noise std divided by the clip norm (> 0).
    rounds : int, default 200
        Number of server rounds T.
    n_clients : int, default 100
        Real clients; the training set is split into ``n_clients`` i.i.d. shards.
    clients_per_round : int, default 10
        Batch size of clients (``"shuffle"``) or expected number (``"bernoulli"``).
    sampling : {"shuffle", "bernoulli"}
        ``"shuffle"``: every epoch is a random permutation of the clients, cut into rounds.
        ``"bernoulli"``: each client joins each round independently with probability
        ``q = clients_per_round / n_clients``.
    clip : float, default 1.0
        L2 clip norm of every client update; canaries have exactly this norm.
    client_lr, local_steps : float, int
        Local full-batch gradient descent on the client's shard.
    server_lr : float, default 1.0
        Server learning rate eta.
    hidden : int, default 64
        Hidden units (d = 75 hidden + 10 parameters; 4810 for 64).
    n_canaries : int, default 200
        Observed canary clients (inserted).
    n_unseen : int, default 200
        Unseen canaries (never inserted), used as the all-iterates null.
    canary_repeats : int or None, default 1
        Each canary is inserted once in each of ``canary_repeats`` equal periods of the run
        (uniform round within the period). ``None``: canaries are sampled like real clients
        (Bernoulli with ``q``, or once per epoch with ``"shuffle"``).
    delta : float, default 1e-5
        Target delta in (0, 1).
    seed : int or numpy.random.Generator, optional
        Random seed.

    Returns
    -------
    FedAvgCanaryResult

    Notes
    -----
    ``epsilon_theory`` accounts for one canary: with a fixed number of repetitions r (the
    adversary may know the rounds) it is r-fold composition of the Gaussian mechanism with
    ``noise_multiplier`` (no amplification), which is the Gaussian mechanism with noise
    ``noise_multiplier / sqrt(r)``: exact by ``gaussian_mechanism_epsilon`` (Balle and Wang
    2018); with ``canary_repeats=None`` and Bernoulli sampling it is the Poisson-subsampled
    Gaussian over T rounds (RDP accountant, ``mia._accounting``).
    Add/remove of one client changes the clipped sum by at most ``clip``; the data-dependent
    denominator (number of participants) is treated as public, as in the paper.

    Examples
    --------
    >>> r = run_dp_fedavg_with_canaries(rounds=20, n_canaries=20, n_unseen=20, seed=0)
    >>> r.d
    4810
    """
    z = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    rounds = check_positive_int("rounds", rounds)
    n_clients = check_positive_int("n_clients", n_clients)
    per_round = check_positive_int("clients_per_round", clients_per_round)
    if per_round > n_clients:
        raise ValueError(f"`clients_per_round` must be <= n_clients={n_clients}; found {per_round}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"`sampling` must be one of {SAMPLINGS}; found {sampling!r}")
    clip = check_real("clip", clip, low=0.0, low_open=True)
    client_lr = check_real("client_lr", client_lr, low=0.0, low_open=True)
    local_steps = check_positive_int("local_steps", local_steps)
    server_lr = check_real("server_lr", server_lr, low=0.0, low_open=True)
    hidden = check_positive_int("hidden", hidden)
    k1 = check_positive_int("n_canaries", n_canaries, minimum=2)
    k0 = check_positive_int("n_unseen", n_unseen, minimum=2)
    if canary_repeats is not None:
        canary_repeats = check_positive_int("canary_repeats", canary_repeats)
        if canary_repeats > rounds:
            raise ValueError(f"`canary_repeats` must be <= rounds={rounds}; found {canary_repeats}")
    delta = check_delta(delta, positive=True)
    rng = as_generator(seed)

    xtr, ytr, xte, yte = digits_split(rng)
    shards = np.array_split(np.arange(len(ytr)), n_clients)
    model = MLP(hidden=hidden, activation="tanh", n_features=xtr.shape[1])
    d = model.n_params()
    theta0 = model.init_params(rng)
    theta = theta0.copy()
    canaries = rng.standard_normal((k1 + k0, d))
    canaries /= np.linalg.norm(canaries, axis=1, keepdims=True)  # rows 0..k1-1 observed
    q = per_round / n_clients
    sched = _canary_schedule(rng, k1, rounds, canary_repeats, q, sampling)
    clients = _client_schedule(rng, n_clients, per_round, rounds, sampling)
    running_max = np.full(k1 + k0, -np.inf)
    for t in range(rounds):
        rho = np.zeros(d)
        for i in clients[t]:
            local = theta.copy()
            xs, ys = xtr[shards[i]], ytr[shards[i]]
            for _ in range(local_steps):
                local -= client_lr * model.gradient(local, xs, ys)
            rho += clip_l2(local - theta, clip)
        present = np.flatnonzero(sched[t])
        rho += clip * canaries[present].sum(axis=0)
        m = max(1, len(clients[t]) + present.size)
        rho_bar = (rho + z * clip * rng.standard_normal(d)) / m
        running_max = np.maximum(running_max, _cos_rows(canaries, rho_bar))
        theta = theta + server_lr * rho_bar
    final = _cos_rows(canaries, theta - theta0)
    eps_final = epsilon_from_cosines(final[:k1], d, delta).epsilon
    eps_mean = epsilon_from_cosines(final[:k1], d, delta, method="mean_only").epsilon
    eps_all = epsilon_from_two_samples(running_max[k1:], running_max[:k1], delta)
    if canary_repeats is None and sampling == "bernoulli":
        how = f"Poisson-subsampled Gaussian, q={q:g}, {rounds} rounds (RDP)"
        theory = _safe(poisson_gaussian_epsilon, [(z, q, rounds)], delta)
    else:
        r = int(sched.sum(axis=0).max())
        how = f"{r}-fold Gaussian mechanism, no amplification (exact: noise z / sqrt({r}))"
        theory = _repeated_gaussian_epsilon(z, r, delta)
    if sampling == "bernoulli":
        theory_clients = _safe(poisson_gaussian_epsilon, [(z, q, rounds)], delta)
    else:
        most = int(np.bincount(np.concatenate(clients), minlength=n_clients).max())
        theory_clients = _repeated_gaussian_epsilon(z, most, delta)
    return FedAvgCanaryResult(
        eps_final,
        eps_mean,
        eps_all,
        theory,
        how,
        theory_clients,
        model.accuracy(theta, xte, yte),
        d,
        delta,
        z,
        final[:k1],
        final[k1:],
        running_max[:k1],
        running_max[k1:],
        sched.sum(axis=0),
    )


def _repeated_gaussian_epsilon(z: float, repeats: int, delta: float) -> float:
    """Epsilon of ``repeats`` Gaussian mechanisms of noise ``z``: one of noise ``z / sqrt(r)``."""
    if repeats == 0:
        return 0.0
    return gaussian_mechanism_epsilon(z / math.sqrt(repeats), delta)


def _safe(fn, *args) -> float:
    try:
        return fn(*args)
    except ImportError:
        return math.nan
