"""Tabulated stand-in for the binomial log likelihood (numpy and numba only).

The binomial bases of one strength variable k enter the posterior only through
``f_k(log eps, logit s_k)``, the sum of their log likelihoods: a smooth function of at most two
coordinates however many bases there are. After the warm-up, :func:`build` tabulates every
``f_k`` on a uniform grid of ``GRID`` nodes per free coordinate over a box around where the chain
went during the second half of the warm-up (its range plus ``BOX_SD`` standard deviations on each
side), and :func:`log_density` interpolates it with 4-point Lagrange (local cubic) rules: exact
for quadratics, so errors come from the third derivatives only.

The table is never the target. :mod:`samplers.exact` uses it as the proposal mechanism of a
surrogate-transition move (Liu 2001, *Monte Carlo Strategies in Scientific Computing*, Sec. 9.4.3;
Christen and Fox 2005): a few dozen cheap Metropolis steps on the tabulated posterior, then one
exact evaluation and an acceptance ratio that corrects for the table's error. The stored chain
therefore targets the exact posterior whatever the table's error; the error only lowers the
acceptance rate, which the sampler reports.

Where the table is not trustworthy it says so: outside the box it gives -inf (the move then
never leaves the box, and the exact joint random walk of every iteration covers the rest), and
a cell whose 4 x 4 stencil touches a node that is -inf or more than ``DROP`` below the table's
largest value is interpolated bilinearly from its four corners (no overshoot next to a cliff).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._special import expit as _expit
from .binomial_block import fill_log_lik

__all__ = ["GRID", "BOX_SD", "DROP", "build", "log_density"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

#: Nodes per free coordinate.
GRID = 32
#: Margin of the box beyond the range of the warm-up's second half, in its standard deviations.
BOX_SD = 6.0
#: Nodes this far below the table's largest value are treated as a cliff (bilinear there).
DROP = 700.0
#: Results of :func:`build`.
BUILT, FAILED, STOPPED = 1, 0, -1


@njit(**_JIT)
def build(M, lo, hi, V, vmax, stop):
    """Fill the tables ``V`` and their maxima ``vmax``.

    Returns BUILT, or FAILED when none can be built, or STOPPED as soon as ``stop[0]`` is
    nonzero (checked before every row of nodes: a caller's Ctrl-C then waits for one row, not
    for the whole table).

    ``V[k, i, j]`` gets ``f_k`` at the grid nodes and ``vmax[k]`` the largest finite value of
    table k; False when the box is empty or a table has no finite value.

    ``lo``, ``hi``: the box in every coordinate of z (only eps and the free strengths are read).
    Node i of eps is ``lo[0] + i h[0]``; node j of a free strength k is ``lo[s_z[k]] + j h``;
    a fixed strength uses column 0 only.
    """
    G = V.shape[1]
    if not (hi[0] > lo[0]):
        return FAILED
    for k in range(M.s_z.shape[0]):
        a = M.s_z[k]
        if a >= 0 and not (hi[a] > lo[a]):
            return FAILED
    V[:, :, :] = 0.0
    h0 = (hi[0] - lo[0]) / (G - 1)
    ll = np.empty(M.b_grp.shape[0])
    s_all = M.s_fixed.copy()
    for k in range(M.s_z.shape[0]):
        a = M.s_z[k]
        n_j = G if a >= 0 else 1
        for i in range(G):
            if stop[0] != 0:
                return STOPPED
            eps = math.exp(lo[0] + i * h0)
            for j in range(n_j):
                if a >= 0:
                    s_all[k] = _expit(lo[a] + j * (hi[a] - lo[a]) / (G - 1))
                tot = -math.inf
                if fill_log_lik(M.B, M.Q, eps, s_all, M.delta, k, ll):
                    tot = 0.0
                    for b in range(M.b_grp.shape[0]):
                        if M.g_sidx[M.b_grp[b]] == k:
                            tot += M.b_mult[b] * ll[b]
                V[k, i, j] = tot
    for k in range(M.s_z.shape[0]):
        n_j = G if M.s_z[k] >= 0 else 1
        vmax[k] = -math.inf
        for i in range(G):
            for j in range(n_j):
                if V[k, i, j] > vmax[k]:
                    vmax[k] = V[k, i, j]
        if vmax[k] == -math.inf:
            return FAILED
    return BUILT


@njit(**_JIT)
def _weights(t, w):
    """4-point Lagrange weights at t for nodes -1, 0, 1, 2."""
    w[0] = -t * (t - 1.0) * (t - 2.0) / 6.0
    w[1] = (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0
    w[2] = -(t + 1.0) * t * (t - 2.0) / 2.0
    w[3] = (t + 1.0) * t * (t - 1.0) / 6.0


@njit(**_JIT)
def _cell(u, G):
    """Stencil start (node of weight index 1) and offset t for grid coordinate u."""
    i = int(math.floor(u))
    i = min(max(i, 1), G - 3)
    return i, u - i


@njit(**_JIT)
def _interp_1d(row, u, floor_v):
    G = row.shape[0]
    i, t = _cell(u, G)
    ok = True
    for q in range(4):
        if not row[i - 1 + q] > floor_v:
            ok = False
    if ok:
        w = np.empty(4)
        _weights(t, w)
        return w[0] * row[i - 1] + w[1] * row[i] + w[2] * row[i + 1] + w[3] * row[i + 2]
    c = min(int(math.floor(u)), G - 2)
    f = u - c
    a, b = row[c], row[c + 1]
    if a == -math.inf or b == -math.inf:
        return -math.inf
    return (1.0 - f) * a + f * b


@njit(**_JIT)
def _interp_2d(T, u, v, floor_v):
    G = T.shape[0]
    i, t = _cell(u, G)
    j, r = _cell(v, G)
    ok = True
    for p in range(4):
        for q in range(4):
            if not T[i - 1 + p, j - 1 + q] > floor_v:
                ok = False
    if ok:
        wu = np.empty(4)
        wv = np.empty(4)
        _weights(t, wu)
        _weights(r, wv)
        acc = 0.0
        for p in range(4):
            rowv = 0.0
            for q in range(4):
                rowv += wv[q] * T[i - 1 + p, j - 1 + q]
            acc += wu[p] * rowv
        return acc
    c = min(int(math.floor(u)), G - 2)
    d = min(int(math.floor(v)), G - 2)
    f = u - c
    g = v - d
    a, b, e, h = T[c, d], T[c + 1, d], T[c, d + 1], T[c + 1, d + 1]
    if a == -math.inf or b == -math.inf or e == -math.inf or h == -math.inf:
        return -math.inf
    return (1.0 - f) * (1.0 - g) * a + f * (1.0 - g) * b + (1.0 - f) * g * e + f * g * h


@njit(**_JIT)
def log_density(z, M, lo, hi, V, vmax):
    """Sum over strength variables of the tabulated ``f_k`` at z (-inf outside the box).

    ``vmax[k]``: the largest finite value of table k (sets its cliff level).
    """
    G = V.shape[1]
    u = (z[0] - lo[0]) / (hi[0] - lo[0]) * (G - 1)
    if not (u >= 0.0 and u <= G - 1):
        return -math.inf
    tot = 0.0
    for k in range(M.s_z.shape[0]):
        a = M.s_z[k]
        floor_v = vmax[k] - DROP
        if a >= 0:
            v = (z[a] - lo[a]) / (hi[a] - lo[a]) * (G - 1)
            if not (v >= 0.0 and v <= G - 1):
                return -math.inf
            val = _interp_2d(V[k], u, v, floor_v)
        else:
            val = _interp_1d(V[k, :, 0], u, floor_v)
        if val == -math.inf:
            return -math.inf
        tot += val
    return tot
