"""Band geometry of the quadrature reference: the regions R(t, d), their areas and edges.

``R(t, d)`` at abscissa ``x`` is the interval ``[h(x), 1 - h(1 - x)]`` with
``h(u) = clip(max(tl - c u, (tl - u) / c), 0, 1)``, ``c = e^t``, ``tl = 1 - d`` (the overview is
in ``tests/reference/__init__.py``).  numpy and scipy only: no code shared with ``samplers/``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

_EXP_CAP = 700.0


# --------------------------------------------------------------------------- geometry


def region_area(eps, s, delta):
    """Area |R_s(eps, delta)| (paper formula, with a stable logistic)."""
    return np.exp(log_region_area(eps, s, delta))


def log_region_area(eps, s, delta):
    """log |R_s(eps, delta)|, stable for large eps (no underflow of e^{-eps})."""
    eps = np.asarray(eps, dtype=float)
    s = np.asarray(s, dtype=float)
    la = 2.0 * np.log1p(-s * delta) + special.log_expit(-s * eps)
    lb = 2.0 * np.log1p(-delta) + special.log_expit(-eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(2.0) + la + np.log(-np.expm1(lb - la))
    return np.where(np.isnan(out), -np.inf, out)


def in_region(x, y, eps, delta):
    """Indicator of (x, y) in R(eps, delta), straight from the four inequalities."""
    c = np.exp(eps)
    return (
        (x + c * y >= 1 - delta)
        & (y + c * x >= 1 - delta)
        & (y + c * x <= c + delta)
        & (x + c * y <= c + delta)
        & (x >= 0)
        & (x <= 1)
        & (y >= 0)
        & (y <= 1)
    )


def _h(u, c, tl):
    """Upper boundary (in y) of the lower-left corner at abscissa u."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.maximum(tl - c * u, (tl - u) / c)
    return np.clip(v, 0.0, 1.0)


def _params(t, d):
    t = np.atleast_1d(np.asarray(t, dtype=float))
    d = np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    c = np.exp(np.minimum(t, _EXP_CAP))[:, None]
    tl = (1.0 - d)[:, None]
    return c, tl


def _edge(spec, x, rows):
    """An edge y = e(x) of the inner interval, nonincreasing in x; rows index (c, tl)."""
    kind, c, tl = spec
    c, tl = c[rows, 0], tl[rows, 0]
    if kind == "h":  # the lower-left corner's boundary h(x)
        return _h(x, c, tl)
    return 1.0 - _h(1.0 - x, c, tl)  # "up": the upper-right corner's boundary


# --------------------------------------------------------------------------- s = 1


def _log_area_slope(eps, delta):
    """log of lim_{s -> 1} |R_s(eps, delta)| / (1 - s).

    |R_s| = A(s eps, s delta) - A(eps, delta) with A(t, d) = 2 (1 - d)^2 / (1 + e^t) the area
    outside R(t, d), so the limit is -dA/ds at s = 1 = 2 [2 delta tl / (1 + c) +
    eps c tl^2 / (1 + c)^2] with c = e^eps, tl = 1 - delta (one term per corner, two corners).
    """
    eps = np.asarray(eps, dtype=float)
    tl = 1.0 - delta
    sp = np.logaddexp(0.0, eps)
    with np.errstate(divide="ignore"):
        la = np.log(2.0 * delta * tl) - sp
        lb = np.log(eps * tl * tl) + eps - 2.0 * sp
    return np.log(2.0) + np.logaddexp(la, lb)
