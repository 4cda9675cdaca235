"""The proposal steps of the moves on theta, in the coordinates z (numba only).

:func:`gaussian_step` is the joint random walk of both samplers (the exact sampler's
:func:`samplers.exact.moves.walk_move`, MHAAR's move 1 in :mod:`samplers.mhaar.chain`);
:func:`ridge_step` the exact sampler's step along the ridge s eps = const in z.

Kept apart on purpose (each sampler's draws depend on its own arithmetic, and sharing would
change one of them): MHAAR's ridge move works in (eps, s) with the factor c^(1 - m) instead of
the logit Jacobian of :func:`ridge_step`; its step factors follow 0/1 acceptances with gain
1 / (t + 1)^0.6, the exact sampler's the acceptance probabilities with gain (t + 1)^-0.6
(:func:`samplers.exact.moves.tune_scale`); over the same warm-up window [tune / 4, tune / 2)
its step covariance comes from Welford sums with each variance times 1 + 1e-3 and floored at
1e-4, the exact sampler's from raw sums with 1e-10 + 1e-6 |variance| added
(``_measure_shape`` in :mod:`samplers.exact.chain`).
"""

from __future__ import annotations

import math

from numba import njit

from ..numerics.jit import JIT
from ..numerics.special import expit, log_expit

__all__ = ["gaussian_step", "ridge_step"]


@njit(**JIT)
def gaussian_step(z, chol, sc, rng, xi, zp):
    """Set zp = z + sc * chol @ xi, xi standard normal (drawn into ``xi``), chol lower-triangular.

    The joint random walk of :mod:`samplers.exact.chain` and of MHAAR's move 1
    (:mod:`samplers.mhaar.chain`).
    """
    d = z.shape[0]
    for a in range(d):
        xi[a] = rng.standard_normal()
    for a in range(d):
        acc = 0.0
        for b in range(a + 1):
            acc += chol[a, b] * xi[b]
        zp[a] = z[a] + sc * acc


@njit(**JIT)
def ridge_step(z, s_z, uu, zp):
    """Set zp = z moved by uu along the ridge s * eps = const: (log eps + uu, log s_k - uu).

    Returns (valid, log Jacobian of the move in z); invalid when some s_k would leave (0, 1).
    """
    for a in range(z.shape[0]):
        zp[a] = z[a]
    zp[0] = z[0] + uu
    ljac = 0.0
    for k in range(s_z.shape[0]):
        ik = s_z[k]
        if ik >= 0:
            s_old = expit(z[ik])
            ls_new = log_expit(z[ik]) - uu
            if not ls_new < 0.0:
                return False, 0.0
            s_new = math.exp(ls_new)
            if not s_new < 1.0:
                return False, 0.0
            zp[ik] = ls_new - math.log1p(-s_new)
            ljac += math.log1p(-s_old) - math.log1p(-s_new)
    return True, ljac
