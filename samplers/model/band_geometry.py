"""Geometry of the band R_s(eps, delta) as MHAAR's kernels use it (numpy and numba only).

R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta) is the set of (alpha, beta) allowed a
priori (uniform on it). MHAAR tests membership in folded coordinates: (a, b) mapped into the
lower-left half of the square (:func:`fold`, :func:`in_rs`), draws uniformly from the band
(:func:`draw_band`) and from its part inside a box around the data (:func:`band_box`,
:func:`draw_band_box`, the band part of the PROP_PAIR_NORMAL proposal of
:mod:`samplers.mhaar.aux_proposals`).

The band's edges in the unit square and its area (both samplers' ``log_area``) are in
:mod:`samplers.model.region`.
"""

from __future__ import annotations

import math

from numba import njit

from ..numerics.jit import JIT


# ---------------------------------------------------------- membership, uniform draws
@njit(**JIT)
def fold(a, b):
    """Map (a, b) into the lower-left half and return (lo, hi)."""
    if a + b > 1.0:
        a = 1.0 - a
        b = 1.0 - b
    if a < b:
        return a, b
    return b, a


@njit(**JIT)
def in_rs(lo, hi, e_eps, e_seps, delta, s):
    """Whether a folded point is in R(eps, delta) but not in R(s eps, s delta)."""
    return (hi + e_eps * lo >= 1.0 - delta) and (hi + e_seps * lo < 1.0 - s * delta)


@njit(**JIT)
def draw_band(rng, eps, s, delta):
    """Draw (a, b) uniformly from the band R_s(eps, delta).

    In the folded coordinates (lo, hi) the band is the quadrilateral A = (0, t1), B = (0, t2),
    C = (d2, d2), D = (d1, d1) with t1 = 1 - delta, t2 = 1 - s delta, d1 = t1 / (1 + e^eps),
    d2 = t2 / (1 + e^(s eps)), cut into the triangles ABC and ACD; the point is then mapped to
    one of its four images in the unit square at random.
    """
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    d1 = t1 / (1.0 + math.exp(eps))
    d2 = t2 / (1.0 + math.exp(s * eps))
    area_abc = (t2 - t1) * d2
    area_acd = t1 * (d2 - d1)
    r1 = rng.random()
    r2 = rng.random()
    if r1 + r2 > 1.0:
        r1 = 1.0 - r1
        r2 = 1.0 - r2
    if rng.random() * (area_abc + area_acd) < area_abc:
        # A + r1 (B - A) + r2 (C - A)
        lo = r2 * d2
        hi = t1 + r1 * (t2 - t1) + r2 * (d2 - t1)
    else:
        # A + r1 (C - A) + r2 (D - A)
        lo = r1 * d2 + r2 * d1
        hi = t1 + r1 * (d2 - t1) + r2 * (d1 - t1)
    u = rng.random()
    if u < 0.5:
        a, b = lo, hi
    else:
        a, b = hi, lo
    if rng.random() < 0.5:
        return 1.0 - a, 1.0 - b
    return a, b


# ------------------------------------------------- the band within a box (PROP_PAIR_NORMAL)
@njit(**JIT)
def _clip_half(V, nv, W, axis, bound, keep_below):
    """Sutherland-Hodgman: clip polygon V[:nv] to {v[axis] <= bound} (or >=) into W."""
    m = 0
    for k in range(nv):
        ax, ay = V[k, 0], V[k, 1]
        bx, by = V[(k + 1) % nv, 0], V[(k + 1) % nv, 1]
        ca = V[k, axis]
        cb = V[(k + 1) % nv, axis]
        ina = ca <= bound if keep_below else ca >= bound
        inb = cb <= bound if keep_below else cb >= bound
        if ina:
            W[m, 0] = ax
            W[m, 1] = ay
            m += 1
        if ina != inb:
            t = (bound - ca) / (cb - ca)
            W[m, 0] = ax + t * (bx - ax)
            W[m, 1] = ay + t * (by - ay)
            m += 1
    return m


@njit(**JIT)
def band_box(eps, s, delta, box, V, NV, AR, W, U):
    """Clip the four quadrilaterals that make up R_s(eps, delta) to a box.

    The quadrilaterals are R_s in the unit square (the images of the folded band, see
    :func:`draw_band`); box = (a_lo, a_hi, b_lo, b_hi).

    Writes each clipped polygon into V[img, :NV[img]], its area into AR[img] and returns the
    total area of R_s within the box. W and U are (12, 2) scratch arrays.
    """
    t1 = 1.0 - delta
    t2 = 1.0 - s * delta
    d1 = t1 / (1.0 + math.exp(eps))
    d2 = t2 / (1.0 + math.exp(s * eps))
    tot = 0.0
    for img in range(4):
        NV[img] = 0
        AR[img] = 0.0
        # the image's bounding box: (a, b) ranges over [0, t2] x [d1, t2] or its transpose,
        # or their reflections through (1/2, 1/2)
        if img == 0 or img == 2:
            alo, ahi, blo, bhi = 0.0, d2, d1, t2
        else:
            alo, ahi, blo, bhi = d1, t2, 0.0, d2
        if img >= 2:
            alo, ahi, blo, bhi = 1.0 - ahi, 1.0 - alo, 1.0 - bhi, 1.0 - blo
        if alo > box[1] or ahi < box[0] or blo > box[3] or bhi < box[2]:
            continue
        # folded vertices A, B, C, D mapped to this image
        for k in range(4):
            if k == 0:
                lo, hi = 0.0, t1
            elif k == 1:
                lo, hi = 0.0, t2
            elif k == 2:
                lo, hi = d2, d2
            else:
                lo, hi = d1, d1
            a, b = (lo, hi) if (img == 0 or img == 2) else (hi, lo)
            if img >= 2:
                a, b = 1.0 - a, 1.0 - b
            U[k, 0] = a
            U[k, 1] = b
        m = _clip_half(U, 4, W, 0, box[0], False)
        m = _clip_half(W, m, U, 0, box[1], True)
        m = _clip_half(U, m, W, 1, box[2], False)
        m = _clip_half(W, m, U, 1, box[3], True)
        area = 0.0
        for k in range(m):
            V[img, k, 0] = U[k, 0]
            V[img, k, 1] = U[k, 1]
            kk = (k + 1) % m
            area += U[k, 0] * U[kk, 1] - U[kk, 0] * U[k, 1]
        area = abs(0.5 * area) if m >= 3 else 0.0
        NV[img] = m
        AR[img] = area
        tot += area
    return tot


@njit(**JIT)
def draw_band_box(rng, V, NV, AR, tot):
    """Draw uniformly from the clipped band of :func:`band_box` (tot > 0)."""
    u = rng.random() * tot
    img = 3
    acc = 0.0
    for k in range(4):
        acc += AR[k]
        if AR[k] > 0.0 and u <= acc:
            img = k
            break
    while AR[img] <= 0.0:
        img -= 1
    m = NV[img]
    # fan triangulation from vertex 0 (the polygon is convex)
    u = rng.random() * AR[img]
    acc = 0.0
    t = m - 2
    for k in range(1, m - 1):
        ar = 0.5 * abs(
            (V[img, k, 0] - V[img, 0, 0]) * (V[img, k + 1, 1] - V[img, 0, 1])
            - (V[img, k + 1, 0] - V[img, 0, 0]) * (V[img, k, 1] - V[img, 0, 1])
        )
        acc += ar
        if u <= acc:
            t = k
            break
    r1 = rng.random()
    r2 = rng.random()
    if r1 + r2 > 1.0:
        r1 = 1.0 - r1
        r2 = 1.0 - r2
    a = V[img, 0, 0] + r1 * (V[img, t, 0] - V[img, 0, 0]) + r2 * (V[img, t + 1, 0] - V[img, 0, 0])
    b = V[img, 0, 1] + r1 * (V[img, t, 1] - V[img, 0, 1]) + r2 * (V[img, t + 1, 1] - V[img, 0, 1])
    return a, b


@njit(**JIT)
def in_box(a, b, box):
    """Whether (a, b) lies in the box (a_lo, a_hi, b_lo, b_hi)."""
    return a >= box[0] and a <= box[1] and b >= box[2] and b <= box[3]
