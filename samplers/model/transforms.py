"""The sampled coordinates z and the prior of z with its Jacobian (numpy and numba only).

The samplers move in unconstrained coordinates: z0 = log eps, v = logit s for a free strength
(logit tau, atanh(rho / rho_max(tau)) for over-dispersion parameters). The prior density of z
is the prior of (eps, s) times the Jacobian of the map: eps for log eps, s (1 - s) for logit s.
:func:`log_prior_z` is that density for eps and the strengths; the exact sampler's posterior,
its table walk, the tabulated proposal and the table's box all use it (or its two factors
:func:`log_prior_z0`, :func:`log_prior_zs`). MHAAR computes the same ratio from
``densities.log_prior_eps`` / ``log_prior_s`` and the Jacobians in its own order of operations
(``samplers.mhaar.chain``), which its draws depend on.
"""

from __future__ import annotations

import math
from collections import namedtuple

from numba import njit

from ..numerics.jit import JIT
from ..numerics.special import expit, log_expit
from .densities import log_prior_eps

__all__ = ["PriorZ", "log_prior_z0", "log_prior_zs", "log_prior_z"]

#: The priors of eps and of a free strength as scalars (the exact sampler's ``pz``, see
#: :class:`samplers.exact.chain.Model`): eps of kind ``eps_kind`` (``codes.EPS_*``) with
#: parameters eps_p1, eps_p2; a free strength s ~ Beta(s_a, s_b). The hot loops take these,
#: not the model (see :class:`samplers.exact.surrogate.Table`).
PriorZ = namedtuple("PriorZ", ["eps_kind", "eps_p1", "eps_p2", "s_a", "s_b"])


@njit(**JIT)
def log_prior_z0(z0, pz):
    """Log prior of the eps coordinate z0 = log eps (Jacobian eps included; pz: PriorZ)."""
    eps = math.exp(z0)
    if not (eps > 0.0 and eps < math.inf):
        return -math.inf
    return log_prior_eps(eps, pz.eps_kind, pz.eps_p1, pz.eps_p2) + z0


@njit(**JIT)
def log_prior_zs(v, pz):
    """Log prior of a free strength's coordinate v = logit s (pz: PriorZ).

    The Beta(a, b) density times the Jacobian s (1 - s) of logit s.
    """
    return pz.s_a * log_expit(v) + pz.s_b * log_expit(-v)


@njit(**JIT)
def log_prior_z(z, s_z, pz):
    """Return the log prior density of z's eps and strength coordinates (Jacobians included).

    ``s_z``: coordinate of each strength variable (-1 when fixed); ``pz``: the priors as
    scalars. -inf outside the support. The one place that knows the prior of z: the exact
    sampler's posterior and its table walk both call it.
    """
    lp = log_prior_z0(z[0], pz)
    if lp == -math.inf:
        return -math.inf
    for k in range(s_z.shape[0]):
        if s_z[k] >= 0:
            zk = z[s_z[k]]
            sk = expit(zk)
            if not (sk > 0.0 and sk < 1.0):
                return -math.inf
            lp += log_prior_zs(zk, pz)
    return lp
