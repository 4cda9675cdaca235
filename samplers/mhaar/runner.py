"""Run MHAAR chains (validated arrays in, raw draw arrays out), in parallel threads."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..model.band_quadrature import QUAD_NODES
from ..model.codes import (
    LIK_BINOMIAL,
    PROP_BETA_MIX,
    PROP_NORMAL_MIX,
    PROP_PAIR_NORMAL,
    PROP_UNIFORM,
    S_BETA,
)
from ..model.params import aux_params
from ..numerics.quadrature import gauss_legendre_table
from .chain import Priors, Start, run_chain
from .moves import Data, Groups, Settings

__all__ = ["SamplerConfig", "run_mhaar", "AUX_PROPOSALS"]

#: Names of the auxiliary proposals q(alpha, beta) -> kernel codes.
AUX_PROPOSALS = {
    "uniform": PROP_UNIFORM,
    "likelihood": PROP_BETA_MIX,
    "normal": PROP_NORMAL_MIX,
}

#: binomial bases with fewer errors (or successes) than this keep the Beta-shaped proposal
#: under ``aux_proposal="normal"``.
NORMAL_MIN_COUNT = 20


@dataclass(frozen=True)
class SamplerConfig:
    """Settings of the MHAAR sampler (validated by the caller).

    Attributes
    ----------
    draws, tune, chains : int
        Stored draws per chain, warm-up iterations per chain (proposal scales are tuned during
        warm-up and then frozen), number of chains.
    thin : int
        MHAAR iterations per stored draw (the chain keeps every ``thin``-th state).
    n_aux : int
        K, the number of auxiliary (alpha, beta) pairs per challenge base and move, the
        current pair included (K >= 2).
    aux_proposal : {"normal", "likelihood", "uniform"}
        q for the auxiliary pairs of binomial groups: truncated normals shaped like the
        likelihood (default), the normalised binomial likelihood, each mixed with a uniform
        part of weight ``aux_uniform_weight``, or the paper's uniform proposal. Unless
        "uniform", over-dispersed groups use ``codes.PROP_PAIR_NORMAL``.
    aux_uniform_weight : float
        Weight of the uniform component of q.
    aux_band_weight : float
        Weight of the component drawing uniformly from the bands R_s of the current and the
        proposed state (binomial groups; over-dispersed groups have their own band part).
    integrate_latents : bool
        Integrate the latent pair of each base of an over-dispersed group out by quadrature
        (``band_quadrature.log_band_integral``) instead of averaging over auxiliary pairs.
    nuisance_in_joint : bool
        Whether the joint random walk also proposes the free (tau, rho) of over-dispersed
        groups (default False: they move only in their own per-group move, which on the
        20-base benchmark gave ~1.7x the ESS of eps per draw).
    target_accept : float
        Acceptance rate the warm-up aims at for both moves.
    cores : int or None
        Threads to run chains on (None: all cores, at most ``chains``).
    """

    draws: int = 5000
    tune: int = 2000
    chains: int = 4
    thin: int = 2
    n_aux: int = 16
    aux_proposal: str = "normal"
    aux_uniform_weight: float = 0.05
    aux_band_weight: float = 0.0
    integrate_latents: bool = False
    nuisance_in_joint: bool = False
    target_accept: float = 0.3
    cores: int | None = None


def run_mhaar(
    fp,
    n_neg,
    fn,
    n_pos,
    grp,
    *,
    groups,
    delta,
    eps_prior,
    s_priors,
    config,
    rngs,
    eps0,
    s0,
    tau0,
    rho0,
):
    """Run ``config.chains`` chains; returns dict of arrays with leading (chain, draw) axes.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int arrays (n,)
        Counts per challenge base.
    grp : int array (n,)
        Evidence group of each base.
    groups : dict of arrays, one entry per group
        ``sidx`` (strength variable), ``lik`` (likelihood code), ``tau_free``, ``rho_free``
        (bool), ``tau_a``, ``tau_b`` (Beta prior of tau).
    eps_prior : (kind, p1, p2)
    s_priors : list of (kind, a_or_value, b), one per strength variable (kind
        ``codes.S_BETA`` or ``codes.S_FIXED``).
    rngs : list of numpy Generators, one per chain.
    eps0 : (chains,) ; s0 : (chains, G) ; tau0, rho0 : (chains, J) starting values.
    """
    P = aux_params(fp, n_neg, fn, n_pos)
    grp = np.asarray(grp, dtype=np.int64)
    g_sidx = np.asarray(groups["sidx"], dtype=np.int64)
    g_lik = np.asarray(groups["lik"], dtype=np.int64)
    g_tau_free = np.asarray(groups["tau_free"], dtype=np.bool_)
    g_rho_free = np.asarray(groups["rho_free"], dtype=np.bool_)
    tau_a = np.asarray(groups["tau_a"], dtype=np.float64)
    tau_b = np.asarray(groups["tau_b"], dtype=np.float64)
    s_free = np.array([k == S_BETA for k, _, _ in s_priors], dtype=np.bool_)
    s_a = np.array([a for _, a, _ in s_priors], dtype=np.float64)
    s_b = np.array([b for _, _, b in s_priors], dtype=np.float64)
    kind = AUX_PROPOSALS[config.aux_proposal]
    qkind = np.full(grp.size, kind, dtype=np.int64)
    binomial = g_lik[grp] == LIK_BINOMIAL
    if kind == PROP_NORMAL_MIX:
        # a normal imitates Beta(X+1, N-X+1) well only away from the edges: with few errors
        # (or few successes) the Beta is skewed with an exponential tail, so those binomial
        # bases keep the Beta shape
        x = np.minimum(
            np.minimum(fp, np.asarray(n_neg) - fp), np.minimum(fn, np.asarray(n_pos) - fn)
        )
        qkind[binomial & (x < NORMAL_MIN_COUNT)] = PROP_BETA_MIX
    if kind != PROP_UNIFORM:
        # the Beta shape is the binomial likelihood; over-dispersed groups get the bivariate
        # normal whose width and tilt follow their (tau, rho)
        qkind[~binomial] = PROP_PAIR_NORMAL
    eps_kind, eps_p1, eps_p2 = eps_prior
    coll = (g_lik != LIK_BINOMIAL) & bool(config.integrate_latents)
    XG, WG = gauss_legendre_table(QUAD_NODES)
    data = Data(P=P, qkind=qkind, delta=float(delta), XG=XG, WG=WG)
    kgroups = Groups(
        grp=grp,
        g_sidx=g_sidx,
        g_lik=g_lik,
        g_tau_free=g_tau_free,
        g_rho_free=g_rho_free,
        g_coll=coll,
    )
    priors = Priors(
        eps_kind=int(eps_kind),
        eps_p1=float(eps_p1),
        eps_p2=float(eps_p2),
        s_free=s_free,
        s_a=s_a,
        s_b=s_b,
        tau_a=tau_a,
        tau_b=tau_b,
    )
    settings = Settings(
        n_tune=int(config.tune),
        n_draws=int(config.draws),
        thin=int(config.thin),
        K=int(config.n_aux),
        lam=float(config.aux_uniform_weight),
        mu=float(config.aux_band_weight),
        target_accept=float(config.target_accept),
        adapt=True,
        nuis_joint=bool(config.nuisance_in_joint),
    )

    def one(c):
        start = Start(
            eps0=float(eps0[c]),
            s0=np.ascontiguousarray(s0[c], dtype=np.float64),
            tau0=np.ascontiguousarray(tau0[c], dtype=np.float64),
            rho0=np.ascontiguousarray(rho0[c], dtype=np.float64),
        )
        return run_chain(rngs[c], data, kgroups, priors, start, settings)

    workers = config.cores or os.cpu_count() or 1
    workers = max(1, min(workers, config.chains))
    if workers == 1:
        results = [one(c) for c in range(config.chains)]
    else:
        # the kernels release the GIL (nogil=True), so threads run chains in parallel
        with ThreadPoolExecutor(max_workers=workers) as ex:
            results = list(ex.map(one, range(config.chains)))
    keys = ("eps", "s", "tau", "rho", "accept", "scales")
    return {k: np.stack([r[i] for r in results]) for i, k in enumerate(keys)}
