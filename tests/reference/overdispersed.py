"""Brute-force grid posteriors of the over-dispersed likelihoods with tau (and rho) integrated.

``overdispersed_posterior_bruteforce`` extends ``bvn_posterior_bruteforce``
(``tests/reference/correlated.py``) to the beta-binomial and to free tau and rho: the
likelihood of each base is written out in numpy on an m x m midpoint grid of (alpha, beta), the
band integral at delta = 0 is a difference of cumulative sums over the grid sorted by
E = log((1 - hi) / lo) (folded coordinates), and tau and rho are integrated by the midpoint
rule in probability: tau at the midpoint quantiles of its Beta prior, rho = r rho_max(tau) with
r at the midpoints of (-1, 1) (rho | tau is uniform on its admissible interval).  The model is
the one docs/correlated.md writes down:

* beta-binomial: X | alpha ~ BetaBinomial(N0, alpha phi, (1 - alpha) phi), phi = 1 / tau - 1,
  Y | beta likewise and independent;
* bivariate normal (paper eq. 7): means (N0 alpha, N1 beta), variances at the rates shrunk by
  half a count, N0 a~ (1 - a~) (1 + (N0 - 1) tau), and correlation
  rho sqrt(N0 N1 / ((1 + (N0 - 1) tau) (1 + (N1 - 1) tau))).

Priors: eps ~ HalfNormal(eps_scale), s ~ Uniform(0, 1), (alpha, beta) uniform on the band.
numpy and scipy only: no code shared with ``samplers/``.  Accuracy: the midpoint rule at the
band's edges (about a point at m = 500 for the eps CDF, ``test_reference.py`` measures it)
plus the tau and r rules.
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
):
    """Posterior of eps, s, tau (and rho) at delta = 0 by brute force (see the module).

    likelihood: "beta_binomial" or "bivariate_normal" (rho free, uniform given tau); tau:
    ("fixed", t) or ("beta", a, b).  Returns a :class:`BruteForcePosterior`.
    """
    if likelihood not in ("beta_binomial", "bivariate_normal"):
        raise ValueError(
            f"likelihood must be beta_binomial or bivariate_normal; found {likelihood}"
        )
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
