"""Independence proposal drawn from the tabulated posterior (numpy and numba only).

After the warm-up :mod:`samplers.exact.surrogate` tabulates the binomial log likelihood of every
strength variable. :func:`build` turns the tabulated posterior (priors included) into a proposal
q(z) that can be drawn from and evaluated exactly, and :mod:`samplers.exact.chain` uses it in an
independence Metropolis-Hastings move: propose y ~ q, accept with probability
min(1, pi(y) q(z) / (pi(z) q(y))), pi the exact posterior. The move leaves pi invariant whatever
q is; the closer q is to pi, the closer the draws are to independent.

q is piecewise constant in the coordinates that follow the posterior's shape. Given eps, the
strengths s_k are independent under the tabulated posterior, so q draws z0 = log eps first, from
``Z_CELLS`` cells across the box, and then, for each free strength k, u_k = log(s_k eps) from
``U_CELLS`` cells of its conditional given that eps cell; v_k = logit s_k follows from u_k and
z0. The data pin s eps down much more tightly than either factor (the likelihood is nearly flat
along the ridge s eps = const), so u_k given eps is narrow where v_k given eps would be a thin
curve across a wide box. Given eps, u_k runs over [ulo_k, min(uhi_k, z0)] (s_k < 1), cut into
``U_CELLS`` equal cells whose probabilities are those at the centre of z0's cell; the cells
stretch with z0, so s_k reaches up to 1 at every eps. The density in z (z0, v_k) carries the
Jacobian |du_k / dv_k| = 1 - s_k. Every z0 of the range lies above every ulo_k
(:func:`z_range`), so each u range is non-empty.

Cells where the table is -inf (outside its box, or a cliff) get probability zero: the move never
proposes there and never leaves a point whose q is zero (the exact random walk of
:mod:`samplers.exact.chain` covers those).
"""

from __future__ import annotations

import math
from collections import namedtuple

from numba import njit

from ..model.transforms import log_prior_z0, log_prior_zs
from ..numerics.jit import JIT
from ..numerics.logsum import logsumexp
from ..numerics.special import log_expit as _log_expit
from . import surrogate

__all__ = [
    "Z_CELLS",
    "U_CELLS",
    "Proposal",
    "build",
    "draw",
    "log_density",
]


#: The tabulated proposal of one chain (its state's ``q``): ``zr`` the range of z0, ``L0`` /
#: ``C0`` the log probabilities and cumulative sums of the eps cells, ``LS[k, i]`` / ``CS[k, i]``
#: those of the u cells of free strength k given eps cell i.
Proposal = namedtuple("Proposal", ["zr", "L0", "C0", "LS", "CS"])

#: Cells of z0 = log eps across the box.
Z_CELLS = 1024
#: Cells of u_k = log(s_k eps) given an eps cell, per free strength.
U_CELLS = 128


@njit(**JIT)
def _normalise(lw, cum):
    """Turn log weights lw into log probabilities (in place) and their cumulative sums.

    Returns the log of the sum of the weights (-inf when every weight is zero).
    """
    ln = logsumexp(lw)
    if ln == -math.inf:
        cum[:] = 0.0
        return -math.inf
    run = 0.0
    for i in range(lw.shape[0]):
        lw[i] -= ln
        run += math.exp(lw[i])
        cum[i] = run
    return ln


@njit(**JIT)
def z_range(tb):
    """Return the range of z0 the proposal covers: where every table's box has points.

    A fixed strength's table spans [lo[0], hi[0]] in z0; a free strength's box (u, v) spans
    z0 = u - log expit(v) from ulo - log expit(hi_v) to uhi - log expit(lo_v).
    """
    lo, hi, ulo, uhi = tb.lo, tb.hi, tb.ulo, tb.uhi
    z_lo, z_hi = -math.inf, math.inf
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        if a >= 0:
            z_lo = max(z_lo, ulo[k] - _log_expit(hi[a]))
            z_hi = min(z_hi, uhi[k] - _log_expit(lo[a]))
        else:
            z_lo = max(z_lo, lo[0])
            z_hi = min(z_hi, hi[0])
    return max(z_lo, surrogate.Z0_MIN), min(z_hi, surrogate.Z0_MAX)


@njit(**JIT)
def _u_top(k, z0, uhi):
    """Upper end of the u cells of strength k at log eps z0 (u < z0: s < 1)."""
    return min(uhi[k], z0)


@njit(**JIT)
def build(tb, pz, q):
    """Tabulate q into the :class:`Proposal` ``q`` from the tables ``tb`` and the priors ``pz``.

    ``zr`` gets the range of z0, ``L0``/``C0`` the log probabilities and cumulative sums of the
    eps cells, ``LS[k, i]``/``CS[k, i]`` those of the u cells of free strength k given eps cell
    i. Returns False when the tabulated posterior is zero on the whole box.
    """
    ulo, uhi = tb.ulo, tb.uhi
    zr, L0, C0, LS, CS = q.zr, q.L0, q.C0, q.LS, q.CS
    z_lo, z_hi = z_range(tb)
    zr[0] = z_lo
    zr[1] = z_hi
    if not (z_hi > z_lo):
        return False
    F = Z_CELLS
    d0 = (z_hi - z_lo) / F
    for i in range(F):
        z0 = z_lo + (i + 0.5) * d0
        w = log_prior_z0(z0, pz)
        for k in range(tb.s_z.shape[0]):
            a = tb.s_z[k]
            if a < 0:
                if w > -math.inf:
                    w += surrogate.value_k(k, z0, 0.0, tb)
                continue
            top = _u_top(k, z0, uhi)
            if not (w > -math.inf and top > ulo[k]):
                LS[k, i, :] = -math.inf
                CS[k, i, :] = 0.0
                w = -math.inf
                continue
            du = (top - ulo[k]) / U_CELLS
            for j in range(U_CELLS):
                u = ulo[k] + (j + 0.5) * du
                ls = u - z0  # log s
                v = ls - math.log1p(-math.exp(ls))
                # target in (z0, u): pi(z0, v) |dv/du| = pi(z0, v) / (1 - s)
                LS[k, i, j] = (
                    log_prior_zs(v, pz)
                    + surrogate.value_k(k, z0, v, tb)
                    - math.log1p(-math.exp(ls))
                )
            w += _normalise(LS[k, i], CS[k, i]) + math.log(du)
        L0[i] = w
    return _normalise(L0, C0) > -math.inf


@njit(**JIT)
def _pick(cum, u):
    """Smallest index i with u < cum[i] (cum nondecreasing)."""
    lo_i, hi_i = 0, cum.shape[0] - 1
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if u < cum[mid]:
            hi_i = mid
        else:
            lo_i = mid + 1
    return lo_i


@njit(**JIT)
def draw(rng, tb, q, out):
    """Draw z from q into ``out`` (z0 and the free strengths' coordinates)."""
    ulo, uhi, zr, C0, CS = tb.ulo, tb.uhi, q.zr, q.C0, q.CS
    F = Z_CELLS
    i = _pick(C0, rng.random() * C0[F - 1])
    z0 = zr[0] + (i + rng.random()) * (zr[1] - zr[0]) / F
    out[0] = z0
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        if a >= 0:
            j = _pick(CS[k, i], rng.random() * CS[k, i, U_CELLS - 1])
            top = _u_top(k, z0, uhi)
            u = ulo[k] + (j + rng.random()) * (top - ulo[k]) / U_CELLS
            ls = min(u - z0, -1e-300)
            out[a] = ls - math.log1p(-math.exp(ls))


@njit(**JIT)
def log_density(z, tb, q):
    """Return log q(z) in the coordinates of z (-inf where q is zero)."""
    ulo, uhi, zr, L0, LS = tb.ulo, tb.uhi, q.zr, q.L0, q.LS
    F = Z_CELLS
    x = (z[0] - zr[0]) / (zr[1] - zr[0]) * F
    if not (x >= 0.0 and x < F):
        return -math.inf
    i = int(x)
    out = L0[i] - math.log((zr[1] - zr[0]) / F)
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        if a >= 0:
            top = _u_top(k, z[0], uhi)
            lse = _log_expit(z[a])
            y = (z[0] + lse - ulo[k]) / (top - ulo[k]) * U_CELLS
            if not (y >= 0.0 and y < U_CELLS):
                return -math.inf
            # q(u | i) / du times |du/dv| = 1 - s
            out += LS[k, i, int(y)] - math.log((top - ulo[k]) / U_CELLS) + _log_expit(-z[a])
    return out
