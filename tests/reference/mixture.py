"""Quadrature reference of the exposure mixture (independent of the sampler's code).

Model: each base's error point is drawn from the mixture

    pi * Unif(R(eps, delta) minus R(s eps, s delta)) + (1 - pi) * Unif(R(kappa eps, delta)),

the first component the paper's band (an exposed base), the second an unexposed base whose
error point may lie anywhere in the smaller region R(kappa eps, delta) (delta not scaled), down
to the diagonal. The second component's likelihood is the paper's at strength s = 0 and
privacy level kappa * eps (R(0, 0) is the diagonal, of area zero). Both come from
:func:`tests.reference.binomial.log_marginal_likelihood`.

The posterior is computed on a tensor grid: log eps (geometric), and s, pi and u on logit
grids whose weights are the Beta prior densities in logit coordinates times the spacing, with
kappa = kappa_min^u (log-uniform kappa on (kappa_min, 1) for u ~ Beta(1, 1)).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from tests.reference.binomial import log_marginal_likelihood


def mixture_log_lik(x, n0, y, n1, eps, s, pi, kappa, delta):
    """log of the mixture likelihood of one base (counts x of n0, y of n1); the rest broadcast."""
    eps, s, pi, kappa = np.broadcast_arrays(*(np.asarray(v, float) for v in (eps, s, pi, kappa)))
    l1 = log_marginal_likelihood(x, n0, y, n1, eps, s, delta)
    l2 = log_marginal_likelihood(x, n0, y, n1, kappa * eps, np.zeros_like(s), delta)
    return np.logaddexp(np.log(pi) + l1, np.log1p(-pi) + l2)


def _logit_grid(n, lo, hi, a, b):
    """Nodes u (in (0, 1)) equally spaced in logit from lo to hi, and log weights of Beta(a, b)."""
    z = np.linspace(lo, hi, n)
    u = special.expit(z)
    # density of z = logit(u): Beta(u) * u (1 - u)
    lw = stats.beta.logpdf(u, a, b) + np.log(u) + np.log1p(-u) + np.log(z[1] - z[0])
    return u, lw


def mixture_posterior_grid(
    counts,
    delta,
    *,
    eps_grid=None,
    n_s=12,
    n_pi=41,
    n_kappa=29,
    s_prior=(1.0, 1.0),
    pi_prior=(1.0, 1.0),
    kappa_prior=(1.0, 1.0),
    eps_scale=10.0,
    pi_logit=(-9.0, 6.0),
    kappa_logit=(-6.0, 6.0),
    kappa_min=1e-15,
):
    """Posterior of eps under the exposure mixture, by quadrature on a grid.

    Parameters
    ----------
    counts : sequence of (x, n0, y, n1)
        One row per base (repeat a row for several bases with the same counts).
    delta : float
    eps_grid : array, optional
        Nodes of eps (geometric by default, 1e-4 to 30, 80 nodes).
    n_s, n_pi, n_kappa : int
        Nodes of s, pi, kappa (logit grids; s from -5 to 5).
    s_prior, pi_prior : (a, b)
        Beta priors.
    kappa_prior, kappa_min
        kappa = kappa_min^u with u ~ Beta(kappa_prior) (log-uniform kappa for (1, 1)).
    eps_scale : float
        eps ~ HalfNormal(eps_scale).

    Returns
    -------
    dict
        ``eps`` (grid), ``cdf`` (of eps at the grid, by the trapezoid rule in eps) and
        ``quantile(q)`` (linear interpolation of the CDF).
    """
    rows, mult = np.unique(np.asarray(counts, dtype=np.int64), axis=0, return_counts=True)
    e = np.geomspace(1e-4, 30.0, 80) if eps_grid is None else np.asarray(eps_grid, float)
    s, lws = _logit_grid(n_s, -5.0, 5.0, *s_prior)
    pi, lwp = _logit_grid(n_pi, *pi_logit, *pi_prior)
    u, lwk = _logit_grid(n_kappa, *kappa_logit, *kappa_prior)
    kap = kappa_min**u
    E, S = np.meshgrid(e, s, indexing="ij")  # (ne, ns)
    EK = e[:, None] * kap[None, :]  # (ne, nk)
    # sum over rows of log(pi L1 + (1 - pi) L2) on (ne, ns, nk, npi)
    tot = np.zeros((e.size, s.size, kap.size, pi.size))
    lpi, l1pi = np.log(pi), np.log1p(-pi)
    for (x, n0, y, n1), m in zip(rows, mult, strict=True):
        l1 = log_marginal_likelihood(x, n0, y, n1, E, S, delta)
        l2 = log_marginal_likelihood(x, n0, y, n1, EK, np.zeros_like(EK), delta)
        a = l1[:, :, None, None] + lpi[None, None, None, :]
        b = l2[:, None, :, None] + l1pi[None, None, None, :]
        tot += m * np.logaddexp(a, b)
    tot += lws[None, :, None, None] + lwk[None, None, :, None] + lwp[None, None, None, :]
    lp_e = special.logsumexp(tot, axis=(1, 2, 3)) + stats.halfnorm.logpdf(e, scale=eps_scale)
    dens = np.exp(lp_e - lp_e.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(e))])
    cdf /= cdf[-1]

    def quantile(q):
        return float(np.interp(q, cdf, e))

    return {"eps": e, "cdf": cdf, "log_density": lp_e, "quantile": quantile}
