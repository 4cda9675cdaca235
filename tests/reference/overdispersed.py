"""Brute-force grid posteriors of the over-dispersed likelihoods with tau (and rho) integrated.

``overdispersed_posterior_bruteforce`` extends ``bvn_posterior_bruteforce``
(``tests/reference/correlated.py``) to the beta-binomial and to free tau and rho: the
likelihood of each base is written out in numpy on an m x m midpoint grid of (alpha, beta), the
band integral at delta = 0 is a difference of cumulative sums over the grid sorted by
E = log((1 - hi) / lo) (folded coordinates), and tau and rho are integrated by the midpoint
rule in probability: tau at the midpoint quantiles of its Beta prior, rho = r rho_max(tau) with
r at the midpoints of (-1, 1) (rho | tau is uniform on its admissible interval).  The model is
the one docs/validation/correlated.md writes down:

* beta-binomial: X | alpha ~ BetaBinomial(N0, alpha phi, (1 - alpha) phi), phi = 1 / tau - 1,
  Y | beta likewise and independent;
* bivariate normal (paper eq. 7): means (N0 alpha, N1 beta), variances at the rates shrunk by
  half a count, N0 a~ (1 - a~) (1 + (N0 - 1) tau), and correlation
  rho sqrt(N0 N1 / ((1 + (N0 - 1) tau) (1 + (N1 - 1) tau))).

Per side (``tau_fp`` given): FP and FN each with their own dispersion, X | alpha at ``tau_fp``
and Y | beta at ``tau``, either a fixed value per base or (``tau`` only) one value shared by the
bases with a Beta prior; a dispersion of 0 is the binomial, whose log pmf is written directly
(the beta-binomial is not evaluated at tiny tau).  The likelihood is a product f(alpha) g(beta),
so the data mass inside R(t, 0) is a 1-D integral over alpha of f(alpha) times g's
integral between R's edges; it is tabulated on a log-spaced eps grid, and with s on the grid
s = e^{-k r} the band mass at (eps, s) is a difference of two tabulated masses.  This path is
accurate with tens of bases, where the 2-D midpoint grid is not: its E values take discrete
levels whose counts, multiplied over 64 bases, put spikes in the posterior (on one 64 x 64
score matrix the binomial's median of eps moved from 0.92 to 1.26 from m = 500 to 1000; the
per-side path gives 1.264 at both).

Priors: eps ~ HalfNormal(eps_scale), s ~ Uniform(0, 1), (alpha, beta) uniform on the band.
numpy and scipy only: no code shared with ``samplers/``.  Accuracy: the midpoint rule at the
band's edges (about a point at m = 500 for the eps CDF, ``test_reference.py`` measures it)
plus the tau and r rules.  Per side: the masses' relative error falls as 1 / m^2 (1.8e-3 at
most at m = 300, ``test_overdispersed_per_side.py``), eps quantiles within 1e-2 at m = 300,
600 eps nodes on 64 bases (doubling both moved them by 6e-4 to 8e-3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats


@dataclass
class BruteForcePosterior:
    """Marginals on grids: eps (CDF at the right ends of its cells), s, and the posterior
    weights of the tau and rho nodes (``tau_nodes``, ``rho_nodes``: arrays of node values,
    ``node_weights``: their posterior mass, same shape)."""

    eps_grid: np.ndarray
    eps_cdf_values: np.ndarray
    s_grid: np.ndarray
    s_cdf_values: np.ndarray
    tau_nodes: np.ndarray
    rho_nodes: np.ndarray
    node_weights: np.ndarray

    def eps_cdf(self, x):
        return np.interp(x, self.eps_grid, self.eps_cdf_values)

    def s_cdf(self, x):
        return np.interp(x, self.s_grid, self.s_cdf_values)

    def eps_quantile(self, q):
        """Quantile(s) of eps: the CDF interpolated linearly within a cell of the eps grid."""
        x = np.concatenate([[0.0], self.eps_grid])
        c = np.concatenate([[0.0], self.eps_cdf_values])
        keep = np.concatenate([[True], np.diff(c) > 0])  # strictly increasing for interp
        return np.interp(q, c[keep], x[keep])

    def mean(self, var):
        """Posterior mean of "tau" or "rho"."""
        nodes = {"tau": self.tau_nodes, "rho": self.rho_nodes}[var]
        return float(np.sum(nodes * self.node_weights))


def _log_bb(x, n, m, tau):
    phi = 1.0 / tau - 1.0
    return special.betaln(x + m * phi, n - x + (1 - m) * phi) - special.betaln(
        m * phi, (1 - m) * phi
    )


def _log_bvn(A, B, x, n0, y, n1, tau, rho):
    c0, c1 = 1 + (n0 - 1) * tau, 1 + (n1 - 1) * tau
    sa, sb = (n0 * A + 0.5) / (n0 + 1), (n1 * B + 0.5) / (n1 + 1)
    va, vb = sa * (1 - sa) * n0 * c0, sb * (1 - sb) * n1 * c1
    r = rho * np.sqrt(n0 * n1 / (c0 * c1))
    zx, zy = (x - n0 * A) / np.sqrt(va), (y - n1 * B) / np.sqrt(vb)
    q = (zx**2 - 2 * r * zx * zy + zy**2) / (1 - r * r)
    return -0.5 * (np.log(va * vb) + np.log(1 - r * r)) - 0.5 * q


def overdispersed_posterior_bruteforce(
    fp,
    n0,
    fn,
    n1,
    likelihood,
    tau,
    *,
    m=500,
    eps_scale=10.0,
    n_tau=24,
    n_r=12,
    eps_max=40.0,
    n_eps=1000,
    n_s=100,
    tau_fp=None,
):
    """Posterior of eps, s, tau (and rho) at delta = 0 by brute force (see the module).

    likelihood: "beta_binomial" or "bivariate_normal" (rho free, uniform given tau); tau:
    ("fixed", t) or ("beta", a, b).  Returns a :class:`BruteForcePosterior`.

    tau_fp: None (the default), tau is shared by FP and FN.  Otherwise (beta-binomial only) the
    FP dispersion, a number or one per base (0: binomial), or "shared" (the FN side's, node by
    node: the model of tau_fp=None, evaluated per side), and tau is the FN side's alone:
    ("fixed", t) with t a number or one per base (0: binomial), or ("beta", a, b), one FN
    dispersion shared by the bases with that prior.  ``tau_nodes`` then holds the FN dispersion
    of each node (the mean over the bases for per-base values).
    """
    if likelihood not in ("beta_binomial", "bivariate_normal"):
        raise ValueError(
            f"likelihood must be beta_binomial or bivariate_normal; found {likelihood}"
        )
    if tau_fp is not None:
        if likelihood != "beta_binomial":
            raise ValueError(f"tau_fp needs likelihood beta_binomial; found {likelihood}")
        return _per_side_posterior(fp, n0, fn, n1, tau, tau_fp, m, eps_scale, n_tau, eps_max, n_eps)
    g = (np.arange(m) + 0.5) / m
    A, B = (v.ravel() for v in np.meshgrid(g, g, indexing="ij"))
    swap = A + B > 1
    lo = np.where(swap, 1 - np.maximum(A, B), np.minimum(A, B))
    hi = np.where(swap, 1 - np.minimum(A, B), np.maximum(A, B))
    order = np.argsort(np.log((1 - hi) / lo))
    Es = np.log((1 - hi) / lo)[order]
    A, B = A[order], B[order]
    h = eps_max / n_eps
    eps_grid = (np.arange(n_eps) + 0.5) * h
    s_grid = (np.arange(n_s) + 0.5) / n_s
    E1, S1 = np.meshgrid(eps_grid, s_grid, indexing="ij")
    log_area = np.log(2 * (1 / (1 + np.exp(S1 * E1)) - 1 / (1 + np.exp(E1))))
    i_hi = np.searchsorted(Es, E1, side="right")
    i_lo = np.searchsorted(Es, S1 * E1, side="right")
    if tau[0] == "fixed":
        taus = np.array([float(tau[1])])
    else:
        taus = stats.beta.ppf((np.arange(n_tau) + 0.5) / n_tau, tau[1], tau[2])
    rs = (np.arange(n_r) + 0.5) / n_r * 2 - 1 if likelihood == "bivariate_normal" else [0.0]
    bases = list(zip(fp, n0, fn, n1, strict=True))
    log_joint, tau_nodes, rho_nodes, node_logm = None, [], [], []
    for t in taus:
        # rho | tau uniform on the interval admissible for every base of the group
        rmax = min(
            np.sqrt((1 + (a0 - 1) * t) * (1 + (a1 - 1) * t) / (a0 * a1)) for _, a0, _, a1 in bases
        )
        for r in rs:
            lp = np.zeros_like(E1)
            rho = r * rmax
            for x, a0, y, a1 in bases:
                if likelihood == "beta_binomial":
                    lg = _log_bb(x, a0, A, t) + _log_bb(y, a1, B, t)
                else:
                    lg = _log_bvn(A, B, x, a0, y, a1, t, rho)
                mx = lg.max()
                c = np.concatenate([[0.0], np.cumsum(np.exp(lg - mx))])
                lp += np.log(np.maximum(c[i_hi] - c[i_lo], 1e-300)) + mx - log_area
            tau_nodes.append(t)
            rho_nodes.append(rho)
            node_logm.append(special.logsumexp(lp - 0.5 * (E1 / eps_scale) ** 2))
            log_joint = lp if log_joint is None else np.logaddexp(log_joint, lp)
    log_joint = log_joint - 0.5 * (E1 / eps_scale) ** 2
    p = np.exp(log_joint - log_joint.max())
    pe, ps = p.sum(axis=1), p.sum(axis=0)
    w = np.exp(np.array(node_logm) - max(node_logm))
    return BruteForcePosterior(
        eps_grid + 0.5 * h,
        np.cumsum(pe) / pe.sum(),
        s_grid + 0.5 / n_s,
        np.cumsum(ps) / ps.sum(),
        np.array(tau_nodes),
        np.array(rho_nodes),
        w / w.sum(),
    )


def _per_base(name, v, n_bases, low, high):
    a = np.broadcast_to(np.asarray(v, dtype=float), (n_bases,))
    if not np.all((a >= low) & (a < high)):
        raise ValueError(f"{name} must lie in [{low}, {high}); found {v!r}")
    return a


def _log_side(k, n, p, tau):
    """log P(k | p) of one side on the rates p (0 and 1 allowed), up to the binomial coefficient."""
    if tau == 0.0:
        return special.xlogy(k, p) + special.xlog1py(n - k, -p)
    return _log_bb(k, n, np.clip(p, 1e-15, 1 - 1e-15), tau)


def _region_geometry(t_grid, m):
    """Where the edges of R(t, 0) cut the beta nodes, for every t of ``t_grid`` and alpha
    midpoint: R(t, 0) at alpha is the interval [lo, up] of beta, lo = max(1 - e^t alpha,
    (1 - alpha) / e^t) clipped to [0, 1], up = 1 - lo(1 - alpha).  Returns the alpha midpoints,
    the beta nodes (40 m + 1, uniform) and, for lo and up, the node below and the weight of the
    node above (linear interpolation)."""
    xa = (np.arange(m) + 0.5) / m
    yb = np.linspace(0.0, 1.0, 40 * m + 1)
    c = np.exp(t_grid)[:, None]
    lo = np.clip(np.maximum(1 - c * xa, (1 - xa) / c), 0.0, 1.0)
    up = 1.0 - np.clip(np.maximum(1 - c * (1 - xa), xa / c), 0.0, 1.0)
    out = [xa, yb]
    for v in (lo, up):
        u = v * (yb.size - 1)
        k = np.minimum(np.floor(u).astype(np.int64), yb.size - 2)
        out += [k, u - k]
    return out


def _log_region_masses(fp_sides, y, n1, t_fn, geometry):
    """log of the data mass inside and outside R(t, 0) for every t of the grid, for one FN side
    (y of n1 at dispersion t_fn) and each FP side (x, n0, t_fp) of ``fp_sides``: two arrays of
    shape (grid size, len(fp_sides)).

    The likelihood is f(alpha) g(beta).  The alpha integral is the midpoint rule on the m cells
    of ``geometry`` (:func:`_region_geometry`); g's integrals up to (G) and from (Gbar) a point
    are cumulative trapezoids on the beta nodes, interpolated linearly.  Inside =
    sum f (G(up) - G(lo)), outside = sum f (G(lo) + Gbar(up)), the difference G(up) - G(lo)
    taken on the side without cancellation.
    """
    xa, yb, k_lo, w_lo, k_up, w_up = geometry
    lf = np.array([_log_side(x, n0, xa, t) for x, n0, t in fp_sides]).T
    mf = lf.max(axis=0)
    f = np.exp(lf - mf) / xa.size
    lg = _log_side(y, n1, yb, t_fn)
    mg = lg.max()
    g = np.exp(lg - mg)
    seg = 0.5 * (g[1:] + g[:-1]) * (yb[1] - yb[0])
    G = np.concatenate([[0.0], np.cumsum(seg)])
    Gbar = np.concatenate([np.cumsum(seg[::-1])[::-1], [0.0]])

    def at(F, k, w):
        return F[k] + w * (F[k + 1] - F[k])

    g_lo, g_up = at(G, k_lo, w_lo), at(G, k_up, w_up)
    gb_lo, gb_up = at(Gbar, k_lo, w_lo), at(Gbar, k_up, w_up)
    inside = np.where(g_lo < gb_up, g_up - g_lo, gb_lo - gb_up)
    with np.errstate(divide="ignore"):
        log_in = np.log(np.maximum(inside, 0.0) @ f)
        log_out = np.log((g_lo + gb_up) @ f)
    return log_in + mf + mg, log_out + mf + mg


def _per_side_posterior(fp, n0, fn, n1, tau, tau_fp, m, eps_scale, n_tau, eps_max, n_eps):
    """FP at tau_fp, FN at tau (see :func:`overdispersed_posterior_bruteforce`).

    eps on a log-spaced grid t_j = eps_max e^{-(n_eps - 1 - j) r} from 1e-5 to eps_max, s on
    s_k = e^{-k r} (k >= 1), so that s eps is again a grid point and the band mass is a
    difference of two tabulated masses (inside R(eps) minus inside R(s eps), or outside R(s eps)
    minus outside R(eps), whichever subtracts less).  Cells: eps at its node with the width of
    its cell, s_k with (e^{-(k-1/2) r}, e^{-(k+1/2) r}) (the first cell reaching s = 1); s below
    1e-5 / eps is left out.
    """
    bases = list(zip(fp, n0, fn, n1, strict=True))
    nb = len(bases)
    shared = isinstance(tau_fp, str) and tau_fp == "shared"
    t_fp = None if shared else _per_base("tau_fp", tau_fp, nb, 0.0, 1.0)
    if tau[0] == "fixed":
        fn_nodes = [_per_base("tau", tau[1], nb, 0.0, 1.0)]
    elif tau[0] == "beta":
        qs = stats.beta.ppf((np.arange(n_tau) + 0.5) / n_tau, tau[1], tau[2])
        fn_nodes = [np.full(nb, t) for t in qs]
    else:
        raise ValueError(f"tau must be ('fixed', t) or ('beta', a, b); found {tau!r}")
    r = np.log(eps_max / 1e-5) / (n_eps - 1)
    t_grid = 1e-5 * np.exp(r * np.arange(n_eps))
    edges = np.concatenate([[0.0], np.sqrt(t_grid[1:] * t_grid[:-1]), [t_grid[-1] * np.exp(r / 2)]])
    i_idx, k_idx = np.tril_indices(n_eps, -1)  # cell (eps_i, s = e^{-(i - j) r}), j < i
    k_idx = i_idx - k_idx
    j_idx = i_idx - k_idx
    eps_c, s_c = t_grid[i_idx], np.exp(-r * k_idx)
    s_hi = np.where(k_idx == 1, 1.0, np.exp(-r * (k_idx - 0.5)))
    log_w = np.log(s_hi - np.exp(-r * (k_idx + 0.5))) + np.log(np.diff(edges))[i_idx]
    log_w += -0.5 * (eps_c / eps_scale) ** 2
    log_area = np.log(2.0) + np.log(special.expit(-s_c * eps_c) - special.expit(-eps_c))
    geometry = _region_geometry(t_grid, m)
    log_joint, node_logm = None, []
    for t_fn in fn_nodes:
        rows = {}
        for (x, a0, y, a1), tf, tn in zip(bases, t_fn if shared else t_fp, t_fn, strict=True):
            key = (int(x), int(a0), int(y), int(a1), float(tf), float(tn))
            rows[key] = rows.get(key, 0) + 1
        by_fn = {}  # bases sharing their FN side share its tables
        for (x, a0, y, a1, tf, tn), mult in rows.items():
            by_fn.setdefault((y, a1, tn), []).append(((x, a0, tf), mult))
        lp = np.zeros(i_idx.size)
        for (y, a1, tn), sides in by_fn.items():
            l_in, l_out = _log_region_masses([v for v, _ in sides], y, a1, tn, geometry)
            for c, (_, mult) in enumerate(sides):
                li, lo_ = l_in[:, c], l_out[:, c]
                use_in = li[j_idx] < lo_[i_idx]
                with np.errstate(divide="ignore", invalid="ignore"):
                    band = np.where(
                        use_in,
                        li[i_idx] + np.log(-np.expm1(np.minimum(li[j_idx] - li[i_idx], 0.0))),
                        lo_[j_idx] + np.log(-np.expm1(np.minimum(lo_[i_idx] - lo_[j_idx], 0.0))),
                    )
                lp += mult * (np.maximum(band, -700.0) - log_area)
        node_logm.append(special.logsumexp(lp + log_w))
        log_joint = lp if log_joint is None else np.logaddexp(log_joint, lp)
    log_joint = log_joint + log_w
    p = np.exp(log_joint - log_joint.max())
    pe = np.bincount(i_idx, p, minlength=n_eps)
    ps = np.bincount(k_idx, p, minlength=n_eps)[::-1][:-1]  # s increasing: k = n_eps - 1 .. 1
    s_right = np.exp(-r * (np.arange(n_eps - 1, 0, -1) - 0.5))
    s_right[-1] = 1.0
    w = np.exp(np.array(node_logm) - max(node_logm))
    return BruteForcePosterior(
        edges[1:],
        np.cumsum(pe) / pe.sum(),
        s_right,
        np.cumsum(ps) / ps.sum(),
        np.array([float(np.mean(t)) for t in fn_nodes]),
        np.zeros(len(fn_nodes)),
        w / w.sum(),
    )
