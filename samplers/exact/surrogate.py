"""Tabulated stand-in for the binomial log likelihood (numpy and numba only).

The binomial bases of one strength variable k (and its one-run audits' guesses rows,
:mod:`samplers.model.guesses`) enter the posterior only through
``f_k(log eps, logit s_k)``, the sum of their log likelihoods: a smooth function of at most two
coordinates however many bases there are. After the warm-up, :func:`build` tabulates every
``f_k`` on a uniform grid of ``GRID`` nodes per free coordinate over a box around where the chain
went during the second half of the warm-up (its range plus ``BOX_SD`` standard deviations on each
side), and :func:`log_density` interpolates it with 4-point Lagrange (local cubic) rules: exact
for quadratics, so errors come from the third derivatives only.

The table is never the target. :mod:`samplers.exact.chain` uses it as the proposal mechanism of a
surrogate-transition move (Liu 2001, *Monte Carlo Strategies in Scientific Computing*, Sec. 9.4.3;
Christen and Fox 2005): a few dozen cheap Metropolis steps on the tabulated posterior, then one
exact evaluation and an acceptance ratio that corrects for the table's error. The stored chain
therefore targets the exact posterior whatever the table's error; the error only lowers the
acceptance rate, which the sampler reports.

Far below the mode the table holds upper bounds, not values: a base whose band lies in its tails
(mass over the fast windows below ``TAIL_PASS_BELOW``) would need the likelihood's wide pass,
~3 ms a base, and such nodes were most of a table's cost. :func:`build` first stores the bound
:func:`samplers.model.binomial.log_tail_bound` there, then recomputes exactly every node whose
bound is within ``REFINE_GAP`` of the table's largest exact value (repeating while that value
rises). A node left with a bound is certainly more than ``REFINE_GAP`` below the maximum, and
the bound only makes the table's far tails heavier, which a proposal may be.

Where the table is not trustworthy it says so: outside the box it gives -inf (the move then
never leaves the box, and the exact joint random walk of every iteration covers the rest), and
a cell whose 4 x 4 stencil touches a node that is -inf or more than ``DROP`` below the table's
largest value is interpolated bilinearly from its four corners (no overshoot next to a cliff).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..model.binomial_block import fill_log_lik
from ..model.guesses import guesses_log_lik
from ..numerics.jit import JIT
from ..numerics.special import expit as _expit
from ..numerics.special import log_expit as _log_expit

__all__ = ["Table", "GRID", "BOX_SD", "DROP", "REFINE_GAP", "build", "log_density", "value_k"]


#: Nodes per free coordinate.
GRID = 32
#: Margin of the box beyond the range of the warm-up's second half, in its standard deviations.
BOX_SD = 6.0
#: Nodes this far below the table's largest value are treated as a cliff (bilinear there).
DROP = 700.0
#: Table nodes with log eps outside [Z0_MIN, Z0_MAX] get -inf (eps from 2e-9 to 8,100).
Z0_MIN, Z0_MAX = -20.0, 9.0
#: Nodes whose upper bound is within this of the table's largest exact value are recomputed
#: exactly (more than the box rules of :mod:`samplers.exact.chain` look at: EDGE_GAP and SHRINK_GAP
#: see exact values or nodes certainly below them).
REFINE_GAP = 40.0
#: Results of :func:`build`.
BUILT, FAILED, STOPPED = 1, 0, -1

#: The tables of one chain as their readers take them: ``s_z`` (the model's: coordinate of z of
#: each strength variable, -1 when fixed), the box (``lo``, ``hi`` per coordinate of z; ``ulo``,
#: ``uhi`` of u per strength variable), the values ``V`` and their maxima ``vmax`` (the chain
#: state's ``tb``, filled in place by :func:`build`). Not the whole model or chain
#: state: numba passes every array of a tuple argument on each call (~15 ns an array,
#: measured), and the table walk reads the table ~80 times an iteration.
Table = namedtuple("Table", ["s_z", "lo", "hi", "ulo", "uhi", "V", "vmax"])


@njit(**JIT)
def build(M, tb, stop):
    """Fill the tables ``tb.V`` and their maxima ``tb.vmax`` (a :class:`Table` on the box).

    Returns BUILT, or FAILED when none can be built (an empty box, or a table without a finite
    value), or STOPPED as soon as ``stop[0]`` is nonzero (checked before every row of nodes: a
    caller's Ctrl-C then waits for one row, not for the whole table).

    A fixed strength k: ``V[k, i, 0]`` is ``f_k`` at z0 = ``lo[0] + i h``, h = (hi[0] - lo[0]) /
    (G - 1). A free strength k (coordinate a = ``s_z[k]`` of z): ``V[k, i, j]`` is ``f_k`` at
    u = ``ulo[k] + i (uhi[k] - ulo[k]) / (G - 1)`` (u = log(s eps)) and v = ``lo[a] + j (hi[a] -
    lo[a]) / (G - 1)`` (v = logit s). ``vmax[k]``: the largest finite value of table k.
    """
    lo, hi, ulo, uhi, V, vmax = tb.lo, tb.hi, tb.ulo, tb.uhi, tb.V, tb.vmax
    G = V.shape[1]
    for k in range(M.s_z.shape[0]):
        a = M.s_z[k]
        if a >= 0:
            if not (hi[a] > lo[a] and uhi[k] > ulo[k]):
                return FAILED
        elif not (hi[0] > lo[0]):
            return FAILED
    V[:, :, :] = -math.inf
    bounded = np.zeros(V.shape, dtype=np.bool_)
    ll = np.empty(M.b_grp.shape[0])
    s_all = M.s_fixed.copy()
    # bound_tails as a run-time value (a literal would compile fill_log_lik again)
    yes = stop.shape[0] > 0
    for k in range(M.s_z.shape[0]):
        n_j = G if M.s_z[k] >= 0 else 1
        for i in range(G):
            if stop[0] != 0:
                return STOPPED
            for j in range(n_j):
                _node(M, tb, bounded, k, i, j, s_all, ll, yes)
        # recompute exactly the bounds that might be within REFINE_GAP of the largest value
        while True:
            vmax[k] = -math.inf
            for i in range(G):
                for j in range(n_j):
                    if not bounded[k, i, j] and V[k, i, j] > vmax[k]:
                        vmax[k] = V[k, i, j]
            n_refined = 0
            for i in range(G):
                if stop[0] != 0:
                    return STOPPED
                for j in range(n_j):
                    if bounded[k, i, j] and V[k, i, j] >= vmax[k] - REFINE_GAP:
                        _node(M, tb, bounded, k, i, j, s_all, ll, not yes)
                        n_refined += 1
            if n_refined == 0:
                break
        if vmax[k] == -math.inf:
            return FAILED
    return BUILT


@njit(**JIT)
def _node(M, tb, bounded, k, i, j, s_all, ll, bound_tails):
    """Set V[k, i, j] (see :func:`build`) and whether it is only an upper bound."""
    lo, hi, ulo, uhi, V = tb.lo, tb.hi, tb.ulo, tb.uhi, tb.V
    G = V.shape[1]
    a = M.s_z[k]
    if a >= 0:
        v = lo[a] + j * (hi[a] - lo[a]) / (G - 1)
        s_all[k] = _expit(v)
        z0 = ulo[k] + i * (uhi[k] - ulo[k]) / (G - 1) - _log_expit(v)
    else:
        z0 = lo[0] + i * (hi[0] - lo[0]) / (G - 1)
    V[k, i, j] = -math.inf
    bounded[k, i, j] = False
    if not (z0 >= Z0_MIN and z0 <= Z0_MAX):
        return
    status = fill_log_lik(M.B, M.Q, M.b_k, math.exp(z0), s_all, M.delta, k, ll, bound_tails)
    if status != 0:
        tot = 0.0
        for b in range(M.b_grp.shape[0]):
            if M.b_k[b] == k:
                tot += M.b_mult[b] * ll[b]
        if M.G.r.shape[0] > 0:
            # the one-run audits' rows of strength variable k (exact: no bound needed)
            tot += guesses_log_lik(M.G, math.exp(z0), s_all, k)
        V[k, i, j] = tot
        bounded[k, i, j] = status == 2


@njit(**JIT)
def _weights(t):
    """4-point Lagrange weights at t for nodes -1, 0, 1, 2 (a tuple: no array to allocate)."""
    return (
        -t * (t - 1.0) * (t - 2.0) / 6.0,
        (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0,
        -(t + 1.0) * t * (t - 2.0) / 2.0,
        (t + 1.0) * t * (t - 1.0) / 6.0,
    )


@njit(**JIT)
def _cell(u, G):
    """Stencil start (node of weight index 1) and offset t for grid coordinate u."""
    i = int(math.floor(u))
    i = min(max(i, 1), G - 3)
    return i, u - i


@njit(**JIT)
def _interp_1d(row, u, floor_v):
    G = row.shape[0]
    i, t = _cell(u, G)
    ok = True
    for q in range(4):
        if not row[i - 1 + q] > floor_v:
            ok = False
    if ok:
        w0, w1, w2, w3 = _weights(t)
        return w0 * row[i - 1] + w1 * row[i] + w2 * row[i + 1] + w3 * row[i + 2]
    c = min(int(math.floor(u)), G - 2)
    f = u - c
    a, b = row[c], row[c + 1]
    if a == -math.inf or b == -math.inf:
        return -math.inf
    return (1.0 - f) * a + f * b


@njit(**JIT)
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
        wu = _weights(t)
        wv = _weights(r)
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


@njit(**JIT)
def value_k(k, z0, v, tb):
    """Return the tabulated ``f_k`` at z0 = log eps and v = logit s_k (``tb``: a :class:`Table`).

    v is ignored for a fixed strength; -inf outside the table's box.
    """
    lo, hi, ulo, uhi, V, vmax = tb.lo, tb.hi, tb.ulo, tb.uhi, tb.V, tb.vmax
    G = V.shape[1]
    a = tb.s_z[k]
    floor_v = vmax[k] - DROP
    if a >= 0:
        x = (z0 + _log_expit(v) - ulo[k]) / (uhi[k] - ulo[k]) * (G - 1)
        y = (v - lo[a]) / (hi[a] - lo[a]) * (G - 1)
        if not (x >= 0.0 and x <= G - 1 and y >= 0.0 and y <= G - 1):
            return -math.inf
        return _interp_2d(V[k], x, y, floor_v)
    x = (z0 - lo[0]) / (hi[0] - lo[0]) * (G - 1)
    if not (x >= 0.0 and x <= G - 1):
        return -math.inf
    return _interp_1d(V[k, :, 0], x, floor_v)


@njit(**JIT)
def log_density(z, tb):
    """Sum over strength variables of the tabulated ``f_k`` at z (-inf outside the box)."""
    tot = 0.0
    for k in range(tb.s_z.shape[0]):
        a = tb.s_z[k]
        val = value_k(k, z[0], z[a] if a >= 0 else 0.0, tb)
        if val == -math.inf:
            return -math.inf
        tot += val
    return tot
