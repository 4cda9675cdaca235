"""Theoretical epsilon of DP-SGD and DP-FedAvg: the package's one wrapper of ``dp_accounting``.

Every accountant call of :mod:`mia` goes through here: ``DPSGD`` models' ``epsilon`` (numpy
``SoftmaxRegression`` / ``MLP``), the DP-FedAvg bound of ``mia.canary.run_dp_fedavg_with_canaries``
and CANIFE's ``GetNoise`` / ``GetPrivacy`` (``mia.canary.compose_canife``, ``canife_audit``).
``dp-accounting`` is an optional dependency (``pip install 'bayes-dp[accounting]'``), imported on
first use.

Two things are deliberately not here. The Gaussian mechanism without subsampling, composed ``r``
times, is the Gaussian mechanism with noise ``z / sqrt(r)``; its epsilon is exact in closed form
(``mia.canary.gaussian_mechanism_epsilon``, Balle and Wang 2018), so no accountant is needed.
``mia.pytorch.TorchAlgorithm.epsilon`` calls Opacus's own accountants, so that it equals the
``PrivacyEngine.get_epsilon`` of a training run (Opacus's RDP orders differ slightly from
:data:`RDP_ORDERS`; the two RDP values agree within about 1%, see docs/validation/lira.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from bayes_dp.core.validation import check_delta, check_positive_int, check_real

__all__ = ["ACCOUNTANTS", "RDP_ORDERS", "noise_for_epsilon_one_step", "poisson_gaussian_epsilon"]

#: The Renyi orders of every RDP computation in :mod:`mia`: 1.1 to 10.9 in steps of 0.1, the
#: integers 11 to 63, and 128, 256, 512, 1024. This is ``dp_accounting``'s default
#: (``DEFAULT_RDP_ORDERS``), written out so that our numbers do not move with a dp_accounting
#: release; it contains the orders of Opacus's default used by CANIFE's code (1.1 to 10.9 by 0.1
#: and 12 to 63). The RDP-to-(eps, delta) conversion minimises over the orders, so a finer list
#: can only lower eps; on the DP-SGD and CANIFE settings of this package this list gives eps at
#: or below the former canary list (1.5, 1.75, 2 to 64, 80, 128, 256, 512), by 0.1 to 30%.
RDP_ORDERS: tuple[float, ...] = tuple(
    [1.0 + k / 10.0 for k in range(1, 100)]
    + [float(a) for a in range(11, 64)]
    + [128.0, 256.0, 512.0, 1024.0]
)

#: ``accountant`` values of :func:`poisson_gaussian_epsilon`.
ACCOUNTANTS = ("rdp", "pld")


def _dp_accounting():
    try:
        import dp_accounting
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "theoretical epsilon needs the optional dependency dp-accounting "
            "(pip install 'bayes-dp[accounting]')"
        ) from err
    return dp_accounting


def poisson_gaussian_epsilon(
    history: Iterable[tuple[float, float, int]], delta: float, *, accountant: str = "rdp"
) -> float:
    """Return the epsilon of composed Poisson-subsampled Gaussian mechanisms (DP-SGD).

    Each entry ``(noise_multiplier, q, steps)`` of ``history`` is ``steps`` runs of the Gaussian
    mechanism with noise ``noise_multiplier`` (relative to the L2 sensitivity) on a Poisson
    subsample of rate ``q`` (``q = 1``: no subsampling); all are composed, add/remove-one
    neighbours, and converted to epsilon at ``delta``.

    Parameters
    ----------
    history : iterable of (float, float, int)
        ``(noise_multiplier > 0, q in (0, 1], steps >= 0)`` per phase.
    delta : float
        Target delta in (0, 1).
    accountant : {"rdp", "pld"}, default "rdp"
        ``dp_accounting``'s RDP accountant on :data:`RDP_ORDERS`, or its PLD accountant
        (tighter, slower; default discretisation).

    Returns
    -------
    float
        The accountant's epsilon (an upper bound on the true one).

    Examples
    --------
    >>> round(poisson_gaussian_epsilon([(1.0, 0.1, 500)], 1e-5), 2)  # needs dp-accounting
    18.16
    """
    delta = check_delta(delta, positive=True)
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"`accountant` must be one of {ACCOUNTANTS}; found {accountant!r}")
    phases = []
    for z, q, steps in history:
        z = check_real("noise_multiplier", z, low=0.0, low_open=True)
        q = check_real("q", q, low=0.0, high=1.0, low_open=True)
        steps = check_positive_int("steps", steps, minimum=0)
        if steps > 0:
            phases.append((z, q, steps))
    dpa = _dp_accounting()
    if accountant == "rdp":
        acc = dpa.rdp.RdpAccountant(orders=list(RDP_ORDERS))
    else:
        acc = dpa.pld.PLDAccountant()
    for z, q, steps in phases:
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), steps)
    return float(acc.get_epsilon(delta))


def noise_for_epsilon_one_step(eps: float, delta: float) -> float:
    """Return CANIFE's ``GetNoise``: the one-step (q = 1) noise multiplier whose RDP eps is ``eps``.

    Bisection in log space on ``[1e-3, 100]`` of :func:`poisson_gaussian_epsilon` with one step
    and ``q = 1`` (RDP); returns the upper end of the final bracket (eps at or below ``eps``),
    or 100 when even that noise gives more than ``eps``.
    """

    def eps_of(z: float) -> float:
        return poisson_gaussian_epsilon([(z, 1.0, 1)], delta)

    lo, hi = 1e-3, 100.0
    if eps_of(hi) >= eps:
        return hi
    for _ in range(60):  # bisection in log space
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if eps_of(mid) > eps else (lo, mid)
    return hi
