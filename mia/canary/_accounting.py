"""Theoretical epsilon from ``dp_accounting`` (optional extra ``accounting``), imported lazily."""

from __future__ import annotations

import math

_RDP_ORDERS = [1.5, 1.75] + [float(a) for a in range(2, 65)] + [80.0, 128.0, 256.0, 512.0]


def _dp_accounting():
    try:
        import dp_accounting
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "theoretical epsilon needs the optional dependency dp-accounting "
            "(pip install 'bayes-dp[accounting]')"
        ) from err
    return dp_accounting


def epsilon_repeated_gaussian(noise_multiplier: float, repeats: int, delta: float) -> float:
    """Epsilon of ``repeats`` Gaussian mechanisms (no amplification), PLD accountant."""
    dpa = _dp_accounting()
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.GaussianDpEvent(noise_multiplier), int(repeats))
    return float(acc.get_epsilon(delta))


def epsilon_poisson_gaussian(noise_multiplier: float, q: float, steps: int, delta: float) -> float:
    """Epsilon of ``steps`` Poisson-subsampled Gaussian mechanisms, RDP accountant."""
    dpa = _dp_accounting()
    acc = dpa.rdp.RdpAccountant(orders=_RDP_ORDERS)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(noise_multiplier)), int(steps))
    return float(acc.get_epsilon(delta))


def noise_for_epsilon_one_step(eps: float, delta: float) -> float:
    """CANIFE's ``GetNoise``: one-step (q = 1) RDP noise multiplier reaching ``eps``."""
    dpa = _dp_accounting()

    def eps_of(z: float) -> float:
        acc = dpa.rdp.RdpAccountant(orders=_RDP_ORDERS)
        acc.compose(dpa.GaussianDpEvent(z))
        return float(acc.get_epsilon(delta))

    lo, hi = 1e-3, 100.0
    if eps_of(hi) >= eps:
        return hi
    for _ in range(60):  # bisection in log space
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if eps_of(mid) > eps else (lo, mid)
    return hi


def epsilon_rdp_history(history, delta: float) -> float:
    """Epsilon of a sequence of ``(noise_multiplier, q, steps)`` Poisson-subsampled Gaussians."""
    dpa = _dp_accounting()
    acc = dpa.rdp.RdpAccountant(orders=_RDP_ORDERS)
    for z, q, steps in history:
        if steps > 0:
            acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), int(steps))
    return float(acc.get_epsilon(delta))
