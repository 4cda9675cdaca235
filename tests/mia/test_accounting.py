"""The one dp_accounting wrapper (mia._accounting) against dp_accounting called directly."""

import math

import pytest

import mia
from mia import _accounting
from mia.canary import gaussian_mechanism_epsilon

dpa = pytest.importorskip("dp_accounting", reason="the wrapper wraps dp-accounting")


def _direct(z, q, steps, delta, accountant):
    """dp_accounting by hand: one SelfComposedDpEvent, its default RDP orders or PLD."""
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), steps)
    acc = dpa.rdp.RdpAccountant() if accountant == "rdp" else dpa.pld.PLDAccountant()
    return acc.compose(event).get_epsilon(delta)


def test_rdp_orders_are_dp_accountings_default():
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    assert len(_accounting.RDP_ORDERS) == len(DEFAULT_RDP_ORDERS)
    assert all(
        math.isclose(a, b, rel_tol=1e-12)
        for a, b in zip(_accounting.RDP_ORDERS, DEFAULT_RDP_ORDERS, strict=True)
    )


@pytest.mark.parametrize(
    ("z", "q", "epochs", "delta", "accountant"),
    [
        (1.0, 0.1, 50, 1e-5, "rdp"),
        (0.6, 0.01, 20, 1e-6, "rdp"),
        (2.0, 1.0, 4, 1e-5, "rdp"),
        (0.8, 0.05, 5, 1e-3, "rdp"),
        (1.0, 0.1, 50, 1e-5, "pld"),  # PLD takes seconds per call
        (2.0, 1.0, 4, 1e-5, "pld"),
    ],
)
def test_dp_sgd_epsilon_matches_dp_accounting_directly(z, q, epochs, delta, accountant):
    n = round(100 / q)  # batch_size 100: rate q, epochs * n / 100 steps
    steps = epochs * n // 100
    want = _direct(z, q, steps, delta, accountant)
    got = _accounting.poisson_gaussian_epsilon([(z, q, steps)], delta, accountant=accountant)
    assert got == pytest.approx(want, rel=1e-12)
    algo = mia.MLP(epochs=epochs, batch_size=100, dp=mia.DPSGD(noise_multiplier=z))
    assert algo.steps(n) == steps
    assert algo.epsilon(delta, n, accountant=accountant) == pytest.approx(want, rel=1e-12)


def test_history_composes_phases_in_any_order():
    h = [(1.0, 0.05, 30), (2.0, 0.05, 70), (1.5, 1.0, 0)]
    e = _accounting.poisson_gaussian_epsilon(h, 1e-5)
    assert e == pytest.approx(_accounting.poisson_gaussian_epsilon(h[::-1], 1e-5), rel=1e-12)
    one = _accounting.poisson_gaussian_epsilon(h[:1], 1e-5)
    assert one < e < _accounting.poisson_gaussian_epsilon([(1.0, 0.05, 100)], 1e-5)


def test_full_batch_is_the_gaussian_mechanism():
    # q = 1, r steps: the Gaussian mechanism with noise z / sqrt(r), exact in closed form; PLD is
    # a pessimistic discretisation of it, RDP a looser conversion
    z, r, delta = 2.0, 4, 1e-5
    exact = gaussian_mechanism_epsilon(z / math.sqrt(r), delta)
    pld = _accounting.poisson_gaussian_epsilon([(z, 1.0, r)], delta, accountant="pld")
    rdp = _accounting.poisson_gaussian_epsilon([(z, 1.0, r)], delta)
    assert exact <= pld <= exact * (1 + 1e-3)
    assert exact < rdp < 1.5 * exact


def test_one_step_noise_inverts_the_one_step_epsilon():
    for eps in (0.15, 1.0, 3.88):
        z = _accounting.noise_for_epsilon_one_step(eps, 0.01)
        assert _accounting.poisson_gaussian_epsilon([(z, 1.0, 1)], 0.01) == pytest.approx(
            eps, rel=1e-6
        )


@pytest.mark.parametrize(
    ("history", "kwargs", "exc", "word"),
    [
        ([(1.0, 0.1, 10)], {"accountant": "moments"}, ValueError, "accountant"),
        ([(0.0, 0.1, 10)], {}, ValueError, "noise_multiplier"),
        ([(1.0, 1.5, 10)], {}, ValueError, "`q`"),
        ([(1.0, 0.1, -1)], {}, ValueError, "steps"),
        ([(1.0, 0.1, 2.5)], {}, TypeError, "steps"),
    ],
)
def test_bad_input(history, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        _accounting.poisson_gaussian_epsilon(history, 1e-5, **kwargs)
    with pytest.raises(ValueError, match="delta"):
        _accounting.poisson_gaussian_epsilon([(1.0, 0.1, 10)], 0.0)
