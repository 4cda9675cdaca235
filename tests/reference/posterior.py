"""The posterior on a grid (``posterior_grid``, ``posterior_grid_groups``): evidence groups with
their own strengths, the s-integral by product integration against the Beta prior, and the
coarse pass that locates a concentrated posterior before a fine pass (``zoom``).

The overview of the method is in ``tests/reference/__init__.py``.  numpy and scipy only: no
code shared with ``samplers/``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from tests.reference.binomial import _Base
from tests.reference.correlated import _BVNBase
from tests.reference.geometry import _log_area_slope, log_region_area
from tests.reference.grid import (
    PosteriorGrid,
    _beta_seg_weights,
    _cdf_at,
    _cumtrapz,
    _default_eps_max,
    _eps_prior_tail,
    _inv_cdf,
    _lagrange,
    _lobatto,
    _log_eps_prior,
    _t_grid,
    _t_grid_h0,
)
from tests.reference.quadrature import _coarse_quadrature


@dataclass
class _Group:
    """One evidence group: unique count rows (with multiplicities) and its s prior."""

    terms: list
    mult: np.ndarray
    s_kind: str  # "beta" or "fixed"
    a: float = 1.0
    b: float = 1.0
    s0: float = 0.0
    likelihood: str = "binomial"

    @property
    def n_rows(self):
        return int(self.mult.sum())


def _unique_rows(counts):
    x, n0, y, n1 = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v)).astype(int) for v in counts))
    rows = np.stack([x, n0, y, n1], axis=1)
    uniq, mult = np.unique(rows, axis=0, return_counts=True)
    return uniq, mult


def _parse_group(spec):
    counts, s_prior = spec[0], spec[1]
    lik = dict(spec[2]) if len(spec) > 2 and spec[2] else {}
    kind = lik.pop("likelihood", "binomial")
    uniq, mult = _unique_rows(counts)
    if kind == "binomial":
        if lik:
            raise ValueError(f"binomial groups take no parameters; found {lik}")
        terms = [_Base(*r) for r in uniq]
    elif kind == "bivariate_normal":
        terms = [_BVNBase(*r, tau=float(lik["tau"]), rho=float(lik["rho"])) for r in uniq]
    else:
        raise ValueError(f"unknown likelihood {kind!r}")
    if s_prior[0] == "beta":
        return _Group(
            terms, mult, "beta", a=float(s_prior[1]), b=float(s_prior[2]), likelihood=kind
        )
    if s_prior[0] == "fixed":
        s0 = float(s_prior[1])
        if not 0.0 <= s0 <= 1.0:
            raise ValueError(f"fixed s must be in [0, 1]; found {s0}")
        return _Group(terms, mult, "fixed", s0=s0, likelihood=kind)
    raise ValueError(f"unknown s prior {s_prior!r}")


def _n_dnodes(delta, refine):
    if delta == 0:
        return 1
    k = 4 if delta <= 1e-3 else 8
    return int(round(k * max(refine, 1.0)))


def _fixed_log_z(g, E, delta):
    """sum_i mult_i log L_i(E, s0) for a group with fixed s0 (exact in d, no tables)."""
    out = np.zeros(E.size)
    pos = E > 0
    Ep = E[pos]
    acc = np.zeros(Ep.size)
    for term, m in zip(g.terms, g.mult, strict=True):
        if g.s0 == 1.0:
            lv = term.log_boundary(Ep, delta) - _log_area_slope(Ep, delta)
        else:
            with np.errstate(divide="ignore"):
                lv = term.log_lens(g.s0 * Ep, g.s0 * delta, Ep, delta) - log_region_area(
                    Ep, g.s0, delta
                )
        acc += m * (lv - term.log_norm)
    out[pos] = acc
    out[~pos] = np.nan  # eps = 0: filled by extrapolation
    return out


def _beta_rows(g, T, rows, u_lo, u_hi, dn, delta):
    """Per row k (eps = T[k]): s-nodes sig and sum_i mult_i log L_i(eps, sig).

    u-nodes are the T[j] in [u_lo, min(u_hi, eps)) with j < k; the node s = 1 (the exact limit
    of ``_log_boundary_mass``) is added when u_hi >= eps.  The band mass is a difference of the
    tabulated corner masses C (or inside masses M) at (T[j], s delta) and (T[k], delta); C and M
    are tabulated on T x (Chebyshev-Lobatto nodes in d) and interpolated in d.
    """
    K = dn.size
    nT = T.size
    uidx = np.flatnonzero((T >= u_lo) & (T <= u_hi))
    nb = len(g.terms)
    tabC = np.full((nb, K, nT), np.nan)
    tabM = np.full((nb, K, nT), np.nan)
    need_top = np.zeros(nT, bool)
    need_top[rows] = True
    for i, term in enumerate(g.terms):
        for m, dm in enumerate(dn):
            idx = uidx if m < K - 1 else np.union1d(uidx, rows)
            if idx.size:
                lc, lm = term.log_tables(T[idx], dm)
                tabC[i, m, idx] = lc
                tabM[i, m, idx] = lm
    mult = g.mult.astype(float)
    lnorm = float(sum(m * t.log_norm for t, m in zip(g.terms, g.mult, strict=True)))
    E = T[rows]
    top = np.full(E.size, -np.inf)
    tops = E <= u_hi
    pos = tops & (E > 0)
    if pos.any():
        acc = np.zeros(int(pos.sum()))
        for term, m in zip(g.terms, g.mult, strict=True):
            acc += m * (term.log_boundary(E[pos], delta) - _log_area_slope(E[pos], delta))
        top[pos] = acc - lnorm
    out = []
    for r, k in enumerate(rows):
        ek = T[k]
        J = uidx[uidx < k]
        sig = T[J] / ek if ek > 0 else np.zeros(0)
        if J.size:
            lag = _lagrange(dn, sig * delta)  # (nj, K)
            larea = log_region_area(ek, sig, delta)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                lc1 = _interp_log_b(lag, tabC[:, :, J])
                lm1 = _interp_log_b(lag, tabM[:, :, J])
                lc2 = tabC[:, K - 1, k][:, None]
                lm2 = tabM[:, K - 1, k][:, None]
                via_c = lc1 + np.log(-np.expm1(np.minimum(lc2 - lc1, 0.0)))
                via_m = lm2 + np.log(-np.expm1(np.minimum(lm1 - lm2, 0.0)))
                ld = np.where(lc1 <= lm2, via_c, via_m)
            ld = np.where(np.isnan(ld), -np.inf, ld)
            lg = (mult[:, None] * ld).sum(axis=0) - mult.sum() * larea - lnorm
            lg = np.where(np.isnan(lg), -np.inf, lg)
        else:
            lg = np.zeros(0)
        if tops[r] and ek > 0:
            sig = np.append(sig, 1.0)
            lg = np.append(lg, top[r])
        out.append((sig, lg))
    return out


def _interp_log_b(lag, logtab):
    """Batched ``_interp_log``: logtab (nb, K, nj), lag (nj, K) -> (nb, nj)."""
    mx = logtab.max(axis=1)
    mxs = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = np.einsum("jm,bmj->bj", lag, np.exp(logtab - mxs[:, None, :]))
        out = mxs + np.log(np.maximum(val, 0.0))
    return np.where(np.isfinite(mx), out, -np.inf)


def _s_partials(sig, g, i0, i1, s_grid, I0s, I1s):
    """int_0^s p(s') g(s') ds' (g piecewise linear on sig, p the Beta density) on s_grid."""
    dl = np.diff(sig)
    w_left = (sig[1:] * np.diff(i0) - np.diff(i1)) / dl
    w_right = (np.diff(i1) - sig[:-1] * np.diff(i0)) / dl
    seg = w_left * g[:-1] + w_right * g[1:]
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    j = np.clip(np.searchsorted(sig, s_grid, side="right") - 1, 0, sig.size - 2)
    slope = (g[j + 1] - g[j]) / dl[j]
    q0 = I0s - i0[j]
    q1 = I1s - i1[j]
    part = cum[j] + g[j] * q0 + slope * (q1 - sig[j] * q0)
    part = np.where(s_grid < sig[0], 0.0, np.where(s_grid >= sig[-1], cum[-1], part))
    dens = np.interp(s_grid, sig, g, left=0.0, right=0.0)
    return part, dens


@dataclass
class GroupsPosterior:
    """Reference marginals of eps and of each group's s (``posterior_grid_groups``).

    ``s[j]`` is a PosteriorGrid-like record of group j's strength: (s_grid, s_pdf,
    s_cdf_values) or s_fixed.  ``group(j)`` returns a :class:`PosteriorGrid` with the eps
    marginal and group j's s marginal.
    """

    eps_grid: np.ndarray
    eps_pdf: np.ndarray
    eps_cdf_values: np.ndarray
    s: list
    info: dict = field(default_factory=dict)

    def group(self, j):
        sg = self.s[j]
        return PosteriorGrid(self.eps_grid, self.eps_pdf, self.eps_cdf_values, info=self.info, **sg)

    def eps_cdf(self, x):
        return _cdf_at(x, self.eps_grid, self.eps_cdf_values, self.eps_pdf)

    def eps_quantile(self, q):
        return _inv_cdf(self.eps_grid, self.eps_cdf_values, q)

    def s_cdf(self, j, x):
        return self.group(j).s_cdf(x)

    def s_quantile(self, j, q):
        return self.group(j).s_quantile(q)


def _solve(G, delta, eps_prior, T, rows, uwin, dn, n_s, s_extra=None):
    """Posterior on eps rows T[rows] (and each beta group's s) given u-windows.

    Returns a dict with E, log pdf (unnormalised), per-group log Z and row data, and the
    normalised marginals.
    """
    E = T[rows]
    lprior = _log_eps_prior(eps_prior, E)
    logZ, rowdata = [], []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            logZ.append(_fixed_log_z(g, E, delta))
            rowdata.append(None)
            continue
        rd = _beta_rows(g, T, rows, uwin[j][0], uwin[j][1], dn, delta)
        gmax = max((lg.max() for _, lg in rd if lg.size and np.isfinite(lg).any()), default=0.0)
        z = np.full(E.size, -np.inf)
        for r, (sig, lg) in enumerate(rd):
            if E[r] == 0:
                z[r] = np.nan
            elif sig.size >= 2:
                w, _, _ = _beta_seg_weights(g.a, g.b, sig)
                val = w @ np.exp(lg - gmax)
                z[r] = np.log(val) + gmax if val > 0 else -np.inf
        logZ.append(z)
        rowdata.append((rd, gmax))
    logZ = np.array(logZ)  # (n_groups, n_rows)
    # eps = 0 (only as the first row of a grid starting at 0): linear extrapolation of the
    # likelihood product from the next two rows
    llik = logZ.sum(axis=0)
    zero = E == 0
    if zero.any():
        i = np.flatnonzero(zero)[0]
        m = np.nanmax(llik[i + 1 : i + 3])
        if np.isfinite(m):
            l1, l2 = np.exp(llik[i + 1] - m), np.exp(llik[i + 2] - m)
            l0 = l1 + (l1 - l2) * (E[i + 1] - E[i]) / (E[i + 2] - E[i + 1])
            llik[i] = np.log(l0) + m if l0 > 0 else -np.inf
        else:
            llik[i] = -np.inf
    lpdf = lprior + llik
    lpdf = np.where(np.isnan(lpdf), -np.inf, lpdf)
    M = lpdf.max()
    pdf = np.exp(lpdf - M)
    cdf = _cumtrapz(E, pdf)
    norm = cdf[-1]
    pdf, cdf = pdf / norm, cdf / norm
    wE = np.zeros(E.size)
    dE = np.diff(E)
    wE[:-1] += 0.5 * dE
    wE[1:] += 0.5 * dE
    s_out = []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            s_out.append({"s_fixed": g.s0})
            continue
        rd, gmax = rowdata[j]
        s_grid = np.union1d(np.linspace(0.0, 1.0, n_s), np.geomspace(1e-6, 1e-3, 61))
        if s_extra is not None and s_extra[j] is not None:
            s_grid = np.union1d(s_grid, s_extra[j])
        a, bb = g.a, g.b
        I0s = special.betainc(a, bb, s_grid)
        I1s = special.betainc(a + 1.0, bb, s_grid) * (a / (a + bb))
        with np.errstate(divide="ignore"):
            ps = np.exp(
                special.xlogy(a - 1, s_grid)
                + special.xlog1py(bb - 1, -s_grid)
                - special.betaln(a, bb)
            )
        # weight of each row: the eps posterior with this group's own factor divided out
        with np.errstate(invalid="ignore", over="ignore"):
            lw = lpdf - logZ[j] + gmax - M
            wp = np.where(np.isfinite(lw), wE * np.exp(lw) / norm, 0.0)
        s_cdf = np.zeros(s_grid.size)
        s_den = np.zeros(s_grid.size)
        parts = []
        for r, (sig, lg) in enumerate(rd):
            if sig.size < 2 or wp[r] == 0:
                parts.append(None)
                continue
            gv = np.exp(lg - gmax)
            _, i0, i1 = _beta_seg_weights(a, bb, sig)
            part, dens = _s_partials(sig, gv, i0, i1, s_grid, I0s, I1s)
            s_cdf += wp[r] * part
            s_den += wp[r] * dens
            parts.append((part, dens))
        if zero.any():
            # the eps = 0 row: its eps mass spread like the s-integrand extrapolated from the
            # next two rows
            i = np.flatnonzero(zero)[0]
            if i + 2 < len(parts) and parts[i + 1] is not None and parts[i + 2] is not None:
                f = (E[i + 1] - E[i]) / (E[i + 2] - E[i + 1])
                p0 = np.maximum(0.0, parts[i + 1][0] + (parts[i + 1][0] - parts[i + 2][0]) * f)
                d0 = np.maximum(0.0, parts[i + 1][1] + (parts[i + 1][1] - parts[i + 2][1]) * f)
                if p0[-1] > 0:
                    c0 = wE[i] * pdf[i] / p0[-1]
                    s_cdf += c0 * p0
                    s_den += c0 * d0
        tot = s_cdf[-1]
        s_cdf = np.maximum.accumulate(np.clip(s_cdf / tot, 0.0, 1.0)) if tot > 0 else s_cdf
        with np.errstate(invalid="ignore"):
            s_pdf = s_den * ps / tot if tot > 0 else s_den
        s_out.append({"s_grid": s_grid, "s_pdf": s_pdf, "s_cdf_values": s_cdf})
    return {
        "E": E,
        "lpdf": lpdf,
        "pdf": pdf,
        "cdf": cdf,
        "logZ": logZ,
        "lprior": lprior,
        "rowdata": rowdata,
        "s": s_out,
    }


_WIN = 30.0  # window: where the log density is within 30 of its maximum (plus padding)


def _windows(G, res, T, rows, pad=2):
    """eps window and each beta group's u-window from a (coarse) solution."""
    E = res["E"]
    lpdf = res["lpdf"]
    ok = np.flatnonzero(lpdf > lpdf.max() - _WIN)
    k0, k1 = max(ok[0] - pad, 0), min(ok[-1] + pad, E.size - 1)
    ewin = (E[k0], E[k1])
    uwins = []
    for j, g in enumerate(G):
        if g.s_kind == "fixed":
            uwins.append(None)
            continue
        rd, gmax = res["rowdata"][j]
        best = -np.inf
        cells = []
        for r, (sig, lg) in enumerate(rd):
            if sig.size == 0 or not np.isfinite(res["lpdf"][r]):
                continue
            with np.errstate(divide="ignore"):
                lps = special.xlogy(g.a - 1, sig) + special.xlog1py(g.b - 1, -sig)
            other = res["lprior"][r] + res["logZ"][:, r].sum() - res["logZ"][j, r]
            jl = other + lps + lg
            jl = np.where(np.isnan(jl), -np.inf, jl)
            cells.append((sig * E[r], jl))
            if jl.size:
                best = max(best, jl.max())
        us = np.concatenate([u[jl > best - _WIN] for u, jl in cells])
        i0 = max(np.searchsorted(T, us.min()) - pad, 0)
        i1 = min(np.searchsorted(T, us.max()) + pad, T.size - 1)
        uwins.append((T[i0], T[i1]))
    return ewin, uwins


def posterior_grid_groups(
    groups,
    delta,
    eps_prior=("halfnormal", 1.0),
    eps_max=None,
    n_s=2001,
    refine=1.0,
    zoom=None,
    n_window=120,
    n_eps=None,
):
    """Reference marginals of eps and of each group's strength for several evidence groups.

    groups: list of (counts, s_prior) or (counts, s_prior, likelihood) where counts is
    (x, n0, y, n1) as in :func:`posterior_grid`, s_prior is ("beta", a, b) or ("fixed", s0)
    with 0 <= s0 <= 1 (s0 = 1: the band collapses onto the boundary of R, see
    ``_log_boundary_mass``), and likelihood is None (binomial) or
    {"likelihood": "bivariate_normal", "tau": tau, "rho": rho} (paper eq. 7 at fixed tau, rho;
    a few bases only).  Each group has its own strength; eps is shared.  Given eps the groups
    are independent, so p(eps | data) is prop. to p(eps) prod_g int p(s_g) L_g(eps, s_g) ds_g,
    and the marginal of s_g weights the per-row s-integrals of group g by the other groups'
    factors.  Identical count rows within a group are evaluated once (multiplicities).

    zoom: None (automatic), True or False.  Without zoom the eps/u grid is the data-adaptive
    grid of :func:`posterior_grid` over [0, eps_max].  With zoom (automatic when the number of
    distinct rows times the grid size is large, e.g. 1000 bases) a coarse pass locates the
    window where the joint density of (eps, u = s eps) is within e^-30 of its maximum, and a
    fine pass (n_window points across each window, times refine) is computed there; windows
    whose edges are not negligible (log density within 20 of the maximum) are widened and
    recomputed.  Mass outside the final window is neglected (< e^-20 relative).

    Returns a :class:`GroupsPosterior`.
    """
    G = [_parse_group(spec) for spec in groups]
    delta = float(delta)
    t_max = float(eps_max) if eps_max is not None else _default_eps_max(eps_prior)
    all_terms = [t for g in G for t in g.terms]
    dn = _lobatto(delta, _n_dnodes(delta, refine))
    T0 = T0base = _t_grid(all_terms, delta, t_max, refine)
    if n_eps is not None and T0.size < n_eps:
        T0 = np.union1d(T0, np.linspace(0.0, t_max, int(n_eps)))
    for s0 in {g.s0 for g in G if g.s_kind == "fixed" and 0.0 < g.s0 < 1.0}:
        T0 = np.union1d(T0, (T0base / s0)[T0base / s0 <= t_max])
    # cost in table entries: K per grid point for beta groups, ~2 per row for fixed ones
    n_beta = sum(len(g.terms) for g in G if g.s_kind == "beta")
    n_fixed = sum(len(g.terms) for g in G if g.s_kind == "fixed")
    work = (n_beta * dn.size + 2 * n_fixed) * T0.size
    if zoom is None:
        zoom = work > 60_000
    info = {"eps_max": t_max, "prior_tail_mass": _eps_prior_tail(eps_prior, t_max)}
    full = [(0.0, np.inf)] * len(G)
    if not zoom:
        rows = np.arange(T0.size)
        res = _solve(G, delta, eps_prior, T0, rows, full, dn, n_s)
        info.update({"t_grid_size": int(T0.size), "zoom": False})
    else:
        T1 = _t_grid(all_terms, delta, t_max, 1.0, n_dense_max=60, tail_rel=0.1, growth=0.3)
        rows1 = np.arange(T1.size)
        with _coarse_quadrature():
            res = _solve(G, delta, eps_prior, T1, rows1, full, dn, n_s)
        ewin, uwins = _windows(G, res, T1, rows1, pad=2)
        n_fine = int(n_window * refine)
        # never coarser than a quarter of the narrowest feature of the likelihood in t
        h_max = 2.0 * _t_grid_h0(all_terms, delta, refine)
        n_pts, final, passes = max(n_fine // 3, 30), False, []
        for _ in range(12):
            T2, rows, uw2, s_extra = _zoom_grid(ewin, uwins, n_pts, h_max if final else np.inf)
            with _coarse_quadrature() if not final else contextlib.nullcontext():
                res = _solve(G, delta, eps_prior, T2, rows, uw2, dn, n_s, s_extra)
            passes.append((ewin, uwins, int(T2.size)))
            grow = _edge_check(G, res, ewin, uwins, t_max)
            if grow:
                ewin, uwins = grow
                continue
            new_e, new_u = _windows(G, res, T2, rows, pad=max(n_pts // 20, 2))
            if _shrunk(ewin, new_e) or any(
                uo is not None and _shrunk(uo, un) for uo, un in zip(uwins, new_u, strict=True)
            ):
                ewin, uwins = new_e, new_u
                continue
            if final:
                break
            final, n_pts = True, n_fine
        info.update(
            {
                "t_grid_size": int(T2.size),
                "zoom": True,
                "eps_window": ewin,
                "u_windows": uwins,
                "zoom_passes": passes,
                "coarse_grid_size": int(T1.size),
            }
        )
    info["n_eps"] = int(res["E"].size)
    info["n_distinct_rows"] = [len(g.terms) for g in G]
    return GroupsPosterior(res["E"], res["pdf"], res["cdf"], res["s"], info=info)


def _zoom_grid(ewin, uwins, n, h_max):
    def pts(w):
        return np.linspace(w[0], w[1], max(n, int(np.ceil((w[1] - w[0]) / h_max))) + 1)

    pieces = [pts(ewin)]
    for uw in uwins:
        if uw is not None:
            pieces.append(pts(uw))
    T2 = _dedupe(np.concatenate(pieces))
    rows = np.flatnonzero((T2 >= ewin[0]) & (T2 <= ewin[1]))
    uw2 = [uw if uw is not None else (0.0, np.inf) for uw in uwins]
    s_extra = [
        None
        if uw is None
        else np.linspace(uw[0] / ewin[1], min(1.0, uw[1] / max(ewin[0], 1e-300)), 1001)
        for uw in uwins
    ]
    return T2, rows, uw2, s_extra


def _dedupe(t, rel=1e-7):
    """Sorted unique points, dropping those within rel * spacing-scale of the previous one."""
    t = np.unique(t)
    if t.size < 3:
        return t
    tol = rel * (t[-1] - t[0])
    keep = np.concatenate([[True], np.diff(t) > tol])
    return t[keep]


def _shrunk(old, new):
    return (new[1] - new[0]) < 0.75 * (old[1] - old[0])


_EDGE = 20.0


def _edge_check(G, res, ewin, uwins, t_max):
    """Widened windows where an edge of the fine solution is not negligible, else None."""
    lp = res["lpdf"]
    top = lp.max()
    w = ewin[1] - ewin[0]
    grow = False
    lo, hi = ewin
    if lp[0] > top - _EDGE and ewin[0] > 0:
        lo, grow = max(0.0, ewin[0] - w), True
    if lp[-1] > top - _EDGE and ewin[1] < t_max:
        hi, grow = min(t_max, ewin[1] + w), True
    new_u = []
    for j, g in enumerate(G):
        uw = uwins[j]
        if uw is None:
            new_u.append(None)
            continue
        rd, _ = res["rowdata"][j]
        best, at_lo, at_hi = -np.inf, -np.inf, -np.inf
        for r, (sig, lg) in enumerate(rd):
            if sig.size == 0 or not np.isfinite(lp[r]):
                continue
            with np.errstate(divide="ignore"):
                lps = special.xlogy(g.a - 1, sig) + special.xlog1py(g.b - 1, -sig)
            other = res["lprior"][r] + res["logZ"][:, r].sum() - res["logZ"][j, r]
            jl = np.where(np.isnan(other + lps + lg), -np.inf, other + lps + lg)
            best = max(best, jl.max())
            at_lo = max(at_lo, jl[0])
            if sig[-1] < 1.0:
                at_hi = max(at_hi, jl[-1])
        ulo, uhi = uw
        wu = uw[1] - uw[0]
        if at_lo > best - _EDGE and uw[0] > 0:
            ulo, grow = max(0.0, uw[0] - wu), True
        if at_hi > best - _EDGE:
            uhi, grow = uw[1] + wu, True
        new_u.append((ulo, uhi))
    return ((lo, hi), new_u) if grow else None


def posterior_grid(
    counts,
    delta,
    eps_prior=("halfnormal", 1.0),
    s_prior=("beta", 1.0, 1.0),
    eps_max=None,
    n_eps=None,
    n_s=2001,
    refine=1.0,
    zoom=False,
):
    """Reference marginal posteriors of eps and s.

    counts: (x, n0, y, n1) array-likes (false positives, negatives challenged,
    false negatives, positives challenged) for the n challenge bases.
    eps_prior: ("halfnormal", scale) or ("lognormal", mu, sigma).
    s_prior: ("beta", a, b) or ("fixed", s0) with 0 <= s0 <= 1 (s0 = 1: the limit where the
    band R_s collapses onto the boundary of R(eps, delta)).
    n_eps: ignored unless given, then the dense spacing is capped so that at least
    n_eps points cover [0, eps_max] (the grid is otherwise data-adaptive).
    n_s: number of uniform points of the s output grid.
    refine: grid refinement factor (>1 = finer t/eps grid and more d nodes; for convergence
    checks).
    zoom: see :func:`posterior_grid_groups` (off by default here: one grid over [0, eps_max];
    None = automatic).
    """
    gp = posterior_grid_groups(
        [(counts, s_prior)],
        delta,
        eps_prior,
        eps_max=eps_max,
        n_s=n_s,
        refine=refine,
        zoom=zoom,
        n_eps=n_eps,
    )
    return gp.group(0)
