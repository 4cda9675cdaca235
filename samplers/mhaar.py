"""Run MHAAR chains (validated arrays in, raw draw arrays out), in parallel threads."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .codes import (
    LIK_BINOMIAL,
    PROP_BETA_MIX,
    PROP_NORMAL_MIX,
    PROP_PAIR_NORMAL,
    PROP_UNIFORM,
    S_BETA,
)
from .densities import (
    A0,
    A1,
    B0,
    B1,
    BSD0,
    BSD1,
    LB0,
    LB1,
    LN0,
    LN1,
    M0,
    M1,
    N0,
    N1,
    N_PARAMS,
    SD0,
    SD1,
    X,
    Y,
)
from .mhaar_chain import Priors, Start, run_chain
from .mhaar_moves import Data, Groups, Settings

__all__ = ["SamplerConfig", "run_mhaar", "AUX_PROPOSALS"]

#: Names of the auxiliary proposals q(alpha, beta) -> kernel codes.
AUX_PROPOSALS = {
    "uniform": PROP_UNIFORM,
    "likelihood": PROP_BETA_MIX,
    "normal": PROP_NORMAL_MIX,
}

#: sd inflation of the truncated-normal auxiliary proposal relative to the Beta it imitates.
NORMAL_SD_INFLATION = 1.5
#: Most Gauss-Legendre nodes of the inner rule of the band integrals of over-dispersed groups.
QUAD_NODES = 24


def gauss_legendre_table(n_max):
    """Rules on [-1, 1] for 1..n_max nodes: row n of (nodes, weights) holds the n-point rule."""
    XG = np.zeros((n_max + 1, n_max))
    WG = np.zeros((n_max + 1, n_max))
    for n in range(1, n_max + 1):
        XG[n, :n], WG[n, :n] = np.polynomial.legendre.leggauss(n)
    return XG, WG


#: binomial bases with fewer errors (or successes) than this keep the Beta-shaped proposal
#: under ``aux_proposal="normal"``.
NORMAL_MIN_COUNT = 20


_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _stirling_tail(x):
    """lgamma(x) - [(x - 1/2) log x - x + log(2 pi) / 2]: four terms, < 1e-16 for x >= 30."""
    x2 = x * x
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0) / x2) / x2) / x2) / x


def betaln(a, b) -> np.ndarray:
    """Return log B(a, b), elementwise, for a, b > 0 (in place of ``scipy.special.betaln``).

    Where the larger argument M is >= 30, Stirling's series for lgamma(M) - lgamma(m + M) with
    the ``log1p`` form keeps the digits that plain lgamma differences lose (lgamma(1e7) is
    1.5e8); elsewhere the arguments are small and lgamma is exact to rounding.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    m, big_m = np.minimum(a, b), np.maximum(a, b)
    out = _lgamma(m) + _lgamma(big_m) - _lgamma(m + big_m)
    far = big_m >= 30.0
    m, big_m = m[far], big_m[far]
    out[far] = (
        _lgamma(m)
        - (big_m - 0.5) * np.log1p(m / big_m)
        - m * np.log(m + big_m)
        + m
        + _stirling_tail(big_m)
        - _stirling_tail(m + big_m)
    )
    return out


def norm_cdf(x) -> np.ndarray:
    """Return the standard normal distribution function, elementwise.

    In place of ``scipy.stats.norm``.
    """
    return 0.5 * _erfc(-np.asarray(x, dtype=np.float64) / math.sqrt(2.0))


def aux_params(fp, n_neg, fn, n_pos) -> np.ndarray:
    """Per-base parameter matrix P (n, N_PARAMS) read by the kernels.

    Its columns are named in :mod:`samplers.densities` (A0, ..., BSD1).
    """
    fp, n_neg, fn, n_pos = (np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos))
    P = np.empty((fp.size, N_PARAMS))
    # the false positives of the negatives (alpha), then the false negatives of the positives
    for x, n, cols in (
        (fp, n_neg, (A0, B0, LB0, M0, SD0, LN0, X, N0, BSD0)),
        (fn, n_pos, (A1, B1, LB1, M1, SD1, LN1, Y, N1, BSD1)),
    ):
        c_a, c_b, c_lb, c_m, c_sd, c_ln, c_x, c_n, c_bsd = cols
        a = x + 1.0
        b = n - x + 1.0
        P[:, c_a] = a
        P[:, c_b] = b
        P[:, c_lb] = betaln(a, b)
        m = a / (a + b)
        sd = NORMAL_SD_INFLATION * np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
        z = norm_cdf((1.0 - m) / sd) - norm_cdf(-m / sd)
        P[:, c_m] = m
        P[:, c_sd] = sd
        P[:, c_ln] = np.log(sd * np.sqrt(2.0 * np.pi)) + np.log(z)
        P[:, c_x] = x
        P[:, c_n] = n
        P[:, c_bsd] = sd / NORMAL_SD_INFLATION
    return P


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
