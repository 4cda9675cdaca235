"""CANIFE: crafted canaries for empirical privacy measurement in FL (Maddock et al.), numpy only.

The model is softmax regression (:class:`mia.SoftmaxRegression`, weights ``W`` and bias ``b``)
on scikit-learn's digits, so the per-sample gradient ``g(x) = (x (x) r, r)`` with
``r = softmax(x W + b) - e_y`` and its derivative with respect to the input are analytic. A
canary input is crafted so that its gradient is nearly orthogonal to the clipped updates of
mock clients from a design pool (Eq. 1 of the paper, with the norm term)::

    L(x) = sum_i <u_i, g(x)>^2 + max(C - ||g(x)||, 0)^2

The attack then freezes the model, runs ``n`` fake rounds (the canary in every other round),
scores each noised aggregate by its inner product with the canary update, and turns the
scores into a per-round empirical epsilon (max over thresholds, Clopper-Pearson interval).
Per-round estimates are composed over training through the noise multiplier they imply
(``GetNoise``) and the RDP accountant of the Poisson-subsampled Gaussian (``GetPrivacy``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

from .. import training
from .._accounting import noise_for_epsilon_one_step, poisson_gaussian_epsilon
from ..data import digits_split
from ._clip import clip_l2
from .counts import empirical_epsilon

__all__ = [
    "CanaryDesign",
    "CanifeResult",
    "canife_audit",
    "canife_scores",
    "compose_canife",
    "craft_canary",
]


def _canary_objective(model, theta, x, y, updates, norm_constant):
    """Eq. 1 of CANIFE and its gradient with respect to the input ``x``.

    ``L(x) = sum_i <u_i, g(x)>^2 + max(C - ||g(x)||, 0)^2`` for softmax regression, where
    ``g(x) = (x (x) r, r)`` is the gradient of the loss of ``(x, y)`` and
    ``r = softmax(x W + b) - e_y``. ``updates`` has shape (n, n_params); returns
    ``(loss, dL/dx, ||g(x)||)``.
    """
    if model.hidden is not None:
        raise TypeError(
            "`model` must be a SoftmaxRegression (CANIFE's input gradient is analytic for it); "
            f"found {type(model).__name__}"
        )
    w, b = model.unflatten(theta, x.size)  # (f, k), (k,)
    uw, ub = model.unflatten(updates, x.size)  # (n, f, k), (n, k)
    z = x @ w + b
    p = np.exp(z - z.max())
    p /= p.sum()
    r = p.copy()
    r[y] -= 1.0
    ux = x @ uw + ub  # (n, k): <u_i, x (x) r + r> = ux_i . r
    a = ux @ r
    jac = np.diag(p) - np.outer(p, p)  # d softmax / d z (symmetric)
    wj = w @ jac  # d/dx of <c, r> is wj @ c
    ga = 2.0 * (a @ (uw @ r) + wj @ (a @ ux))
    nr, nx = np.linalg.norm(r), math.sqrt(float(x @ x) + 1.0)
    gnorm = nr * nx
    dn = nx * (wj @ r) / max(nr, 1e-300) + nr * x / nx
    gap = max(norm_constant - gnorm, 0.0)
    loss = float(a @ a + gap * gap)
    return loss, ga - 2.0 * gap * dn, gnorm


def client_update(model, theta, x, y, *, lr, local_steps, clip):
    """Clipped local update of one client (full-batch gradient descent)."""
    local = theta.copy()
    for _ in range(local_steps):
        local -= lr * model.gradient(local, x, y)
    return clip_l2(local - theta, clip)


@dataclass(frozen=True)
class CanaryDesign:
    """A crafted canary.

    Attributes
    ----------
    x : numpy.ndarray
        Crafted input.
    label : int
        Its fixed label.
    update : numpy.ndarray
        The canary client's update direction scaled to the clip norm (``-C g / ||g||``).
    health : float
        ``(L_initial - L_final) / L_initial``; 1 is perfect.
    loss_history : numpy.ndarray
        Loss at every design step.
    """

    x: np.ndarray
    label: int
    update: np.ndarray = field(repr=False)
    health: float
    loss_history: np.ndarray = field(repr=False)


def craft_canary(
    model,
    theta,
    design_updates,
    *,
    label=None,
    steps=500,
    lr=0.05,
    clip=1.0,
    init=None,
    seed=None,
) -> CanaryDesign:
    """Craft a canary input whose gradient is nearly orthogonal to the design updates.

    Parameters
    ----------
    model : mia.SoftmaxRegression
        The model; the loss and its input gradient are analytic for softmax regression.
    theta : numpy.ndarray
        Frozen parameters, a flat vector (``model.flatten``).
    design_updates : numpy.ndarray
        Clipped updates of mock clients, shape (n, len(theta)).
    label : int, optional
        Target class (random if omitted).
    steps : int, default 500
        Adam steps in input space (the paper uses 1000-3000 on deep models).
    lr : float, default 0.05
        Adam step size.
    clip : float, default 1.0
        Clip norm C; the norm term keeps ``||g|| >= C``.
    init : numpy.ndarray, optional
        Initial input (uniform random pixels in [0, 1] if omitted).
    seed : int or numpy.random.Generator, optional
        Random seed.

    Returns
    -------
    CanaryDesign

    Examples
    --------
    >>> from mia import SoftmaxRegression
    >>> model = SoftmaxRegression(n_features=4, n_classes=3)
    >>> rng = np.random.default_rng(0)
    >>> d = model.n_params()
    >>> theta, pool = rng.normal(0, 0.1, d), rng.normal(0, 0.1, (5, d))
    >>> c = craft_canary(model, theta, pool, steps=50, seed=0)
    >>> c.update.shape, round(float(np.linalg.norm(c.update)), 6)  # -C g / ||g||
    ((15,), 1.0)
    >>> bool(c.loss_history[-1] < c.loss_history[0])
    True
    """
    rng = as_generator(seed)
    steps = check_positive_int("steps", steps)
    lr = check_real("lr", lr, low=0.0, low_open=True)
    clip = check_real("clip", clip, low=0.0, low_open=True)
    theta = np.asarray(theta, dtype=float)
    d = theta.size
    u = np.asarray(design_updates, dtype=float)
    if u.ndim != 2 or u.shape[1] != d or u.shape[0] < 1:
        raise ValueError(f"`design_updates` must have shape (n >= 1, {d}); found {u.shape}")
    n_features = model.n_features if model.n_features is not None else d // model.n_classes - 1
    y = int(rng.integers(model.n_classes)) if label is None else int(label)
    x = rng.random(n_features) if init is None else np.array(init, dtype=float)
    m, v = np.zeros_like(x), np.zeros_like(x)
    b1, b2 = 0.9, 0.999
    hist = np.empty(steps + 1)
    for t in range(1, steps + 1):
        loss, g, _ = _canary_objective(model, theta, x, y, u, clip)
        hist[t - 1] = loss
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = x - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + 1e-12)
    hist[steps] = _canary_objective(model, theta, x, y, u, clip)[0]
    g = model.gradient(theta, x[None], np.array([y]))
    update = -clip * g / np.linalg.norm(g)
    health = (hist[0] - hist[-1]) / hist[0] if hist[0] > 0 else 1.0
    return CanaryDesign(x, y, update, float(health), hist)


def canife_scores(
    model,
    theta,
    canary_update,
    clients,
    *,
    noise_multiplier,
    clients_per_round,
    n_trials=100,
    clip=1.0,
    lr=0.5,
    local_steps=1,
    seed=None,
):
    """Scores of fake rounds at a frozen model, with and without the canary (alternating).

    Each round samples ``clients_per_round`` clients (without replacement) from ``clients``
    (a list of ``(x, y)``), sums their clipped updates, adds the canary update in every other
    round and ``N(0, (noise_multiplier clip)^2 I)``, and scores ``<aggregate, u_c> / clip^2``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(positive, negative)`` scores: rounds with and without the canary.

    Examples
    --------
    >>> from mia import SoftmaxRegression
    >>> model = SoftmaxRegression(n_features=4, n_classes=3)
    >>> rng = np.random.default_rng(0)
    >>> clients = [(rng.random((5, 4)), rng.integers(0, 3, 5)) for _ in range(10)]
    >>> u_c = np.zeros(model.n_params()); u_c[0] = 1.0  # a canary update of norm C = 1
    >>> theta = np.zeros(model.n_params())
    >>> pos, neg = canife_scores(model, theta, u_c, clients, noise_multiplier=0.5,
    ...                          clients_per_round=3, n_trials=40, seed=0)
    >>> pos.shape, neg.shape
    ((20,), (20,))
    >>> bool(pos.mean() - neg.mean() > 0.5)  # the canary adds <u_c, u_c> / C^2 = 1
    True
    """
    rng = as_generator(seed)
    n_trials = check_positive_int("n_trials", n_trials, minimum=2)
    z = check_real("noise_multiplier", noise_multiplier, low=0.0)
    d = np.asarray(theta).size
    pos, neg = [], []
    for t in range(n_trials):
        idx = rng.choice(len(clients), size=clients_per_round, replace=False)
        agg = np.zeros(d)
        for i in idx:
            agg += client_update(
                model, theta, *clients[i], lr=lr, local_steps=local_steps, clip=clip
            )
        with_canary = t % 2 == 0
        if with_canary:
            agg += canary_update
        agg += z * clip * rng.standard_normal(d)
        (pos if with_canary else neg).append(agg @ canary_update / clip**2)
    return np.array(pos), np.array(neg)


def compose_canife(
    eps_rounds, steps, q, *, delta_round, delta, eps_floor=0.15, noise_if_infinite=None
) -> float:
    """Whole-training epsilon from per-round estimates, as CANIFE does (Alg. 2).

    Each ``eps_rounds[j]`` is turned into the one-step noise multiplier that gives it at
    ``delta_round`` (``GetNoise``, RDP, q = 1), held for ``steps[j]`` rounds, and all are composed
    as Poisson-subsampled Gaussians with rate ``q`` by the RDP accountant at ``delta``.

    Parameters
    ----------
    eps_rounds : sequence of float
        Per-round empirical epsilons (``inf`` allowed: ``noise_if_infinite`` is used).
    steps : sequence of int
        Rounds covered by each estimate.
    q : float
        Client sampling rate in (0, 1].
    delta_round : float
        Delta of the per-round estimates (``1 / n_trials``).
    delta : float
        Delta of the whole-training estimate.
    eps_floor : float, default 0.15
        Per-round estimates are raised to this floor (as CANIFE's code does).
    noise_if_infinite : float, optional
        Noise multiplier for rounds with infinite estimate (the theoretical one).

    Returns
    -------
    float
    """
    q = check_real("q", q, low=0.0, high=1.0, low_open=True)
    delta_round = check_delta(delta_round, positive=True)
    delta = check_delta(delta, positive=True)
    hist = []
    for e, s in zip(eps_rounds, steps, strict=True):
        if math.isinf(e):
            if noise_if_infinite is None:
                return math.inf
            z = noise_if_infinite
        else:
            z = noise_for_epsilon_one_step(max(e, eps_floor), delta_round)
        hist.append((z, q, int(s)))
    return poisson_gaussian_epsilon(hist, delta)


@dataclass(frozen=True)
class CanifeResult:
    """Result of ``canife_audit``.

    Attributes
    ----------
    rounds : list of int
        Rounds at which the attack ran.
    per_round : list of EmpiricalEpsilon
        Per-round empirical epsilon with Clopper-Pearson interval (delta = 1 / n_trials).
    health : list of float
        Canary health of each design.
    epsilon : float
        Composed whole-training estimate.
    epsilon_lower : float
        Composed from the lower ends of the per-round intervals.
    epsilon_theory : float
        RDP bound of the training run (Poisson-subsampled Gaussian, all rounds).
    epsilon_round_theory : float
        One-step (q = 1) RDP epsilon of the noise at ``1 / n_trials``, comparable to the
        per-round estimates.
    accuracy : float
        Test accuracy of the final model.
    """

    rounds: list
    per_round: list
    health: list
    epsilon: float
    epsilon_lower: float
    epsilon_theory: float
    epsilon_round_theory: float
    accuracy: float


def canife_audit(
    *,
    noise_multiplier=1.0,
    rounds=100,
    attack_every=25,
    n_clients=200,
    clients_per_round=10,
    design_pool=50,
    n_trials=100,
    craft_steps=300,
    clip=1.0,
    client_lr=0.5,
    server_lr=1.0,
    delta=1e-5,
    seed=None,
) -> CanifeResult:
    """Train softmax regression with DP-FedSGD on digits and audit it with CANIFE.

    Training clients hold shards of the training split and are Poisson-sampled with
    ``q = clients_per_round / n_clients``; the design pool is ``design_pool`` mock clients
    built from the test split. Every ``attack_every`` rounds the model is frozen, a canary is
    crafted, ``n_trials`` fake rounds are scored and the per-round epsilon is estimated at
    ``delta = 1 / n_trials``; each estimate covers the ``attack_every`` rounds that follow it.

    Returns
    -------
    CanifeResult

    Examples
    --------
    >>> r = canife_audit(rounds=10, attack_every=10, n_trials=20, craft_steps=20, seed=0)
    >>> len(r.per_round)
    1
    """
    z = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    rounds = check_positive_int("rounds", rounds)
    attack_every = check_positive_int("attack_every", attack_every)
    n_clients = check_positive_int("n_clients", n_clients)
    clients_per_round = check_positive_int("clients_per_round", clients_per_round)
    if clients_per_round > n_clients:
        raise ValueError(
            f"`clients_per_round` must be <= n_clients={n_clients}; found {clients_per_round}"
        )
    delta = check_delta(delta, positive=True)
    rng = as_generator(seed)
    xtr, ytr, xte, yte = digits_split(rng)
    shards = np.array_split(np.arange(len(ytr)), n_clients)
    clients = [(xtr[s], ytr[s]) for s in shards]
    pool = [(xte[s], yte[s]) for s in np.array_split(np.arange(len(yte)), design_pool)]
    model = training.SoftmaxRegression(n_features=xtr.shape[1])
    d = model.n_params()
    theta = np.zeros(d)
    q = clients_per_round / n_clients
    delta_round = 1.0 / n_trials
    at, per, health = [], [], []
    for t in range(rounds):
        if t % attack_every == 0:
            design = np.array(
                [
                    client_update(model, theta, x, y, lr=client_lr, local_steps=1, clip=clip)
                    for x, y in pool
                ]
            )
            canary = craft_canary(model, theta, design, steps=craft_steps, clip=clip, seed=rng)
            pos, neg = canife_scores(
                model,
                theta,
                canary.update,
                clients,
                noise_multiplier=z,
                clients_per_round=clients_per_round,
                n_trials=n_trials,
                clip=clip,
                lr=client_lr,
                seed=rng,
            )
            at.append(t)
            per.append(empirical_epsilon(pos, neg, delta_round))
            health.append(canary.health)
        part = np.flatnonzero(rng.random(n_clients) < q)
        agg = np.zeros(d)
        for i in part:
            agg += client_update(model, theta, *clients[i], lr=client_lr, local_steps=1, clip=clip)
        agg += z * clip * rng.standard_normal(d)
        theta = theta + server_lr * agg / clients_per_round  # fixed denominator (DP-FedSGD)
    steps = np.diff(at + [rounds])
    eps = compose_canife(
        [e.epsilon for e in per],
        steps,
        q,
        delta_round=delta_round,
        delta=delta,
        noise_if_infinite=z,
    )
    eps_lo = compose_canife(
        [e.lower for e in per], steps, q, delta_round=delta_round, delta=delta, noise_if_infinite=z
    )
    theory = poisson_gaussian_epsilon([(z, q, rounds)], delta)
    round_theory = poisson_gaussian_epsilon([(z, 1.0, 1)], delta_round)
    return CanifeResult(
        at, per, health, eps, eps_lo, theory, round_theory, model.accuracy(theta, xte, yte)
    )
