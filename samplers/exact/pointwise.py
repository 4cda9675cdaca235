"""Pointwise log likelihood of stored draws, computed after sampling (numpy and numba only).

The exact sampler can record each base's log likelihood at every draw inside its kernel, but
that array grows as draws x bases (64 x 10,000 LiRA targets ran 100,000 draws per chain:
30.8 GiB). The likelihood is a deterministic function of the draw z = (log eps, logit s, ...),
so it is evaluated here afterwards instead, with the kernel's own
:func:`samplers.exact.chain.log_posterior`, for the distinct bases only and at the draws a caller
chooses (a thinned subset): memory chains x kept draws x distinct bases.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..model.guesses import fill_guesses_log_lik
from ..numerics.arrays import copy_into
from ..numerics.jit import JIT
from . import chain as exact
from .posterior import log_prior

__all__ = ["fill_pointwise", "fill_pointwise_guesses", "pointwise_guesses", "pointwise_log_lik"]


@njit(**JIT)
def fill_pointwise(z, M, C, out_b, out_c):
    """Fill the per-base log likelihoods of the draws ``z`` (draws, d).

    ``out_b`` (draws, distinct binomial bases) and ``out_c`` (draws, over-dispersed rows) get
    the values :func:`samplers.exact.chain.log_posterior` computes at each draw; a draw outside the
    support (log posterior -inf) gets -inf everywhere. Returns the number of such draws.
    """
    n_bad = 0
    llb = np.empty(out_b.shape[1])
    llc = np.empty(out_c.shape[1])
    for r in range(z.shape[0]):
        lp = exact.log_posterior(z[r], M, C, llb, llc)
        if lp == -math.inf:
            n_bad += 1
            out_b[r, :] = -math.inf
            out_c[r, :] = -math.inf
            continue
        copy_into(out_b[r], llb)
        copy_into(out_c[r], llc)
    return n_bad


def pointwise_log_lik(model, corr, z, *, cores: int = 1):
    """Return the distinct bases' log likelihoods at the draws ``z`` (chains, draws, d).

    Parameters
    ----------
    model, corr : from :func:`samplers.exact.driver.build_model`.
    z : array (chains, draws, d) of draws in the sampler's coordinates.
    cores : threads (one chain per thread at a time; the kernel releases the GIL).

    Returns
    -------
    ll_b, ll_c, n_bad : arrays (chains, draws, distinct binomial bases) and (chains, draws,
    over-dispersed rows), and the number of draws outside the support (-inf rows).
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    ch, n, _ = z.shape
    n_c = 0 if corr is None else corr.c_grp.size
    ll_b = np.empty((ch, n, model.b_grp.size))
    ll_c = np.empty((ch, n, n_c))

    def one(c):
        return fill_pointwise(z[c], model, corr, ll_b[c], ll_c[c])

    with ThreadPoolExecutor(max_workers=max(1, min(cores, ch))) as pool:
        n_bad = sum(pool.map(one, range(ch)))
    return ll_b, ll_c, int(n_bad)


@njit(**JIT)
def fill_pointwise_guesses(z, M, out_g):
    """Fill ``out_g`` (draws, distinct guesses rows of ``M.G``) with their log likelihoods.

    The rows' values at each draw z (draws, d), as :func:`samplers.exact.chain.log_posterior`
    sums them; a draw outside the prior's support gets -inf everywhere.
    """
    s = np.empty(M.s_z.shape[0])
    for r in range(z.shape[0]):
        if log_prior(z[r], M, s) == -math.inf:
            out_g[r, :] = -math.inf
            continue
        fill_guesses_log_lik(M.G, math.exp(z[r, 0]), s, out_g[r])


def pointwise_guesses(model, z):
    """Return the distinct guesses rows' log likelihoods at the draws ``z`` (chains, draws, d).

    An array (chains, draws, rows of ``model.G``); see :func:`fill_pointwise_guesses`.
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    ch, n, _ = z.shape
    out = np.empty((ch, n, model.G.r.size))
    for c in range(ch):
        fill_pointwise_guesses(z[c], model, out[c])
    return out
