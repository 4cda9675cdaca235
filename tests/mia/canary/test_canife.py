"""CANIFE on softmax regression: analytic gradients, crafting, scores, composition."""

import math

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="CANIFE is run on scikit-learn's digits")

import mia  # noqa: E402
from mia.canary.canife import (  # noqa: E402
    _canary_objective,
    canife_audit,
    canife_scores,
    compose_canife,
    craft_canary,
)


def _ce(model, theta, x, y):
    """Mean cross-entropy by hand from the [W.ravel(), b] layout."""
    x, y = np.atleast_2d(x), np.atleast_1d(y)
    w, b = theta[:-4].reshape(6, 4), theta[-4:]
    z = x @ w + b
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return -np.mean(np.log(p[np.arange(len(y)), y]))


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    model = mia.SoftmaxRegression(n_features=6, n_classes=4)
    theta = rng.normal(0, 0.5, model.n_params())
    updates = rng.normal(0, 0.1, (15, model.n_params()))
    return model, theta, updates, rng


def test_model_gradient_vs_finite_differences(setup):
    model, theta, _, rng = setup
    x, y = rng.random((5, 6)), rng.integers(0, 4, 5)
    g = model.gradient(theta, x, y)
    eps = 1e-6
    num = [
        (_ce(model, theta + eps * e, x, y) - _ce(model, theta - eps * e, x, y)) / (2 * eps)
        for e in np.eye(model.n_params())
    ]
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("norm_constant", [0.1, 50.0])  # norm term off / active
def test_canary_loss_gradient_vs_finite_differences(setup, norm_constant):
    model, theta, updates, rng = setup
    x = rng.random(6)
    loss, grad, gnorm = _canary_objective(model, theta, x, 2, updates, norm_constant)
    g = model.gradient(theta, x[None], [2])
    ref = np.sum((updates @ g) ** 2) + max(norm_constant - np.linalg.norm(g), 0) ** 2
    assert loss == pytest.approx(ref) and gnorm == pytest.approx(np.linalg.norm(g))
    eps = 1e-6
    num = [
        (
            _canary_objective(model, theta, x + eps * e, 2, updates, norm_constant)[0]
            - _canary_objective(model, theta, x - eps * e, 2, updates, norm_constant)[0]
        )
        / (2 * eps)
        for e in np.eye(6)
    ]
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-8)
    with pytest.raises(TypeError, match="`model`"):
        _canary_objective(mia.MLP(hidden=3, n_features=6, n_classes=4), theta, x, 2, updates, 1.0)


def test_crafting_makes_the_gradient_orthogonal(setup):
    model, theta, updates, _ = setup
    updates = updates[:3]  # few enough constraints for near-exact orthogonality in 6 + 4 dims
    c = craft_canary(model, theta, updates, label=1, steps=400, seed=1)
    assert c.health > 0.9 and np.linalg.norm(c.update) == pytest.approx(1.0)
    g = model.gradient(theta, c.x[None], [1])
    assert np.linalg.norm(g) >= 0.95  # the norm term keeps ||g|| near C = 1
    start = model.gradient(theta, np.random.default_rng(1).random((1, 6)), [1])
    ratio = np.abs(updates @ g).mean() / np.linalg.norm(g)
    assert ratio < 0.2 * np.abs(updates @ start).mean() / np.linalg.norm(start)


def test_scores_are_the_gaussian_test_for_an_orthogonal_canary():
    model = mia.SoftmaxRegression(n_features=3, n_classes=2)
    theta = np.zeros(model.n_params())
    # clients whose updates are all zero: the score is exactly N(0 or 1, z^2)
    clients = [(np.zeros((1, 3)), np.array([0]))] * 5
    u = np.zeros(model.n_params())
    u[0] = 1.0
    pos, neg = canife_scores(
        model,
        theta,
        u,
        clients,
        noise_multiplier=2.0,
        clients_per_round=2,
        n_trials=4000,
        lr=0.0 + 1e-12,
        seed=0,
    )
    assert pos.size == neg.size == 2000
    assert pos.mean() - neg.mean() == pytest.approx(1.0, abs=0.15)
    assert neg.std() == pytest.approx(2.0, rel=0.05)


def test_composition_round_trip_and_monotone():
    pytest.importorskip("dp_accounting", reason="composition uses dp-accounting")
    e = compose_canife([2.0], [1], 1.0, delta_round=0.01, delta=0.01)
    assert e == pytest.approx(2.0, rel=0.02)
    a = compose_canife([2.0, 2.0], [10, 10], 0.05, delta_round=0.01, delta=1e-5)
    b = compose_canife([2.0, 3.0], [10, 10], 0.05, delta_round=0.01, delta=1e-5)
    assert a < b
    assert compose_canife([math.inf], [5], 0.1, delta_round=0.01, delta=1e-5) == math.inf


def test_audit_below_theory_at_moderate_noise():
    pytest.importorskip("dp_accounting", reason="composition uses dp-accounting")
    r = canife_audit(
        noise_multiplier=0.5, rounds=60, attack_every=20, n_trials=100, craft_steps=200, seed=0
    )
    assert len(r.per_round) == 3
    for e in r.per_round:
        assert 0 <= e.epsilon <= math.log(49) + 1e-9  # cap for n = 100
        assert e.lower <= e.epsilon
    assert r.epsilon < r.epsilon_theory
    assert min(r.health) > 0.9


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"rounds": 0}, "rounds"),
        ({"clients_per_round": 1000}, "clients_per_round"),
        ({"delta": 0.0}, "delta"),
    ],
)
def test_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        canife_audit(**kwargs)
