"""Driver of the exact-likelihood sampler: builds the model, starts and runs chains in chunks.

Chains run in parallel threads (the kernels release the GIL) in chunks of a few hundred
milliseconds, so a caller can show progress, check convergence between rounds and stop on
Ctrl-C within about a second; how the iterations are chunked does not change the draws.
Numpy and numba only.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from ..model.band_quadrature import QUAD_NODES
from ..model.binomial import binomial_bases
from ..model.binomial_block import make_blocks
from ..model.codes import (
    LIK_BETA_BINOMIAL,
    LIK_BINOMIAL,
    LIK_BIVARIATE_NORMAL,
    LIK_EXPOSURE_MIXTURE,
)
from ..model.densities import rho_max_array
from ..model.guesses import Guesses, guess_rows
from ..model.params import aux_params
from ..model.transforms import PriorZ
from ..numerics.quadrature import gauss_legendre_table
from . import chain as exact

__all__ = ["ExactRun", "build_model", "chain_settings", "run_kernels", "LIK_BINOMIAL"]

#: Seconds of work per chunk of one chain.
CHUNK_SECONDS = 0.25


def _log_binom_coef(n, k):
    from math import lgamma

    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0)


def _distinct_rows(grp, fp, n_neg, fn, n_pos, sel):
    """Distinct rows (group, fp, n_neg, fn, n_pos) among the bases ``sel``.

    Returns (rows (m, 5), index of each selected base's row, multiplicity of each row).
    """
    rows = np.stack([grp, fp, n_neg, fn, n_pos], axis=1)[sel]
    if not rows.shape[0]:
        return np.zeros((0, 5), dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    uniq, inv, mult = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return uniq, inv.reshape(-1), mult


def _jacobian_keys(c_uniq, c_lik):
    """Index the Jacobian tables of the bivariate-normal rows: one per (group, size, count).

    ``c_uniq`` holds the distinct over-dispersed rows (group, fp, n_neg, fn, n_pos). Returns
    (c_kx, c_ky, k_grp, k_n, k_c): the table of each row's first count (fp of n_neg) and
    second count (fn of n_pos), -1 for rows of another likelihood, and the group, size and
    count of each table (:func:`samplers.model.band_quadrature.fill_jacobian_tables`).
    """
    n_c = c_uniq.shape[0]
    c_kx = np.full(n_c, -1, dtype=np.int64)
    c_ky = np.full(n_c, -1, dtype=np.int64)
    bvn = np.flatnonzero(c_lik == LIK_BIVARIATE_NORMAL)
    if not bvn.size:
        return c_kx, c_ky, np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    g = c_uniq[bvn, 0]
    both = np.concatenate(
        [
            np.stack([g, c_uniq[bvn, 2], c_uniq[bvn, 1]], 1),
            np.stack([g, c_uniq[bvn, 4], c_uniq[bvn, 3]], 1),
        ]
    )
    keys, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    c_kx[bvn] = inv[: bvn.size]
    c_ky[bvn] = inv[bvn.size :]
    return (
        c_kx,
        c_ky,
        keys[:, 0].copy(),
        keys[:, 1].astype(np.float64),
        keys[:, 2].astype(np.float64),
    )


def build_model(
    fp,
    n_neg,
    fn,
    n_pos,
    grp,
    *,
    g_lik,
    g_sidx,
    g_tau,
    g_rho,
    g_tau_free,
    g_rho_free,
    s_fixed,
    delta,
    eps_prior,
    s_prior,
    tau_prior,
    g_pi=None,
    g_kappa=None,
    g_pi_free=None,
    g_kappa_free=None,
    mix_prior=(1.0, 1.0, 1.0, 1.0, -34.538776394910684),
    g_reflect=None,
    guesses: Guesses | None = None,
):
    """Build the :class:`samplers.exact.chain.Model` of validated arrays, and the layout of z.

    Parameters
    ----------
    fp, n_neg, fn, n_pos, grp : arrays (n,)
        Counts of every base and its group index.
    g_lik, g_sidx : sequences (J,)
        Likelihood code (:mod:`samplers.model.codes` ``LIK_*``) and strength variable of each group.
    g_tau, g_rho : sequences (J,)
        Starting or fixed values of tau and rho per group; g_tau_free, g_rho_free say which are
        free.
    s_fixed : sequence (G,)
        Fixed value of each strength variable, or nan where it is free.
    eps_prior : (kind, p1, p2); s_prior : (a, b); tau_prior : (a, b).
    g_pi, g_kappa : sequences (J,), optional
        Starting or fixed values of pi and kappa of the exposure-mixture groups
        (``LIK_EXPOSURE_MIXTURE``; ignored for the others); g_pi_free, g_kappa_free say which
        are free (default: free). mix_prior : (pi_a, pi_b, u_a, u_b, log kappa_min): pi ~ Beta(pi_a,
        pi_b) and kappa = kappa_min^u, u ~ Beta(u_a, u_b) (default: kappa log-uniform on
        (1e-15, 1)); a free kappa's coordinate of z is logit u.
    g_reflect : sequence (J,) of bool, optional
        Per group of binomial bases, whether an error point may lie in the band's reflected
        half (the paper's region; default True for every group) or in the lower-left half only
        (False: the decisions as made, see :func:`samplers.model.binomial.binomial_bases`).
    guesses : Guesses, optional
        The distinct rows of the one-run audits (``LIK_GUESSES`` groups;
        :func:`samplers.model.guesses.guess_rows`, whose strength variables ``k`` are the
        groups' ``g_sidx``); their groups have no bases among ``fp`` ... ``grp``. Default:
        none.

    Returns
    -------
    model, corr, names, base_map : the model, its over-dispersed bases
    (:class:`samplers.exact.chain.Corr`
    or None), the names of the coordinates of z (``"eps"``, ``("s", k)``, ``("tau", j)``,
    ``("rho", j)``, ``("pi", j)``, ``("kappa", j)``) and, per base, (kind, index) with kind 0
    for a distinct binomial base, 1 for a distinct over-dispersed row.
    """
    fp, n_neg, fn, n_pos = (np.asarray(v, dtype=np.int64) for v in (fp, n_neg, fn, n_pos))
    grp = np.asarray(grp, dtype=np.int64)
    g_lik = np.asarray(g_lik, dtype=np.int64)
    # the exposure mixture's bases are binomial bases (the mixture is in the prior of the rates)
    is_bin = (g_lik[grp] == LIK_BINOMIAL) | (g_lik[grp] == LIK_EXPOSURE_MIXTURE)
    # distinct binomial bases and distinct over-dispersed rows (group, counts), each with its
    # multiplicity: LiRA's cross-fed counts repeat a few hundred (fp, fn) pairs over thousands
    # of targets, and each distinct row is evaluated once
    uniq, inv, mult = _distinct_rows(grp, fp, n_neg, fn, n_pos, is_bin)
    g_reflect = np.ones(g_lik.size, bool) if g_reflect is None else np.asarray(g_reflect, bool)
    B = binomial_bases(uniq[:, 1], uniq[:, 2], uniq[:, 3], uniq[:, 4], g_reflect[uniq[:, 0]])
    corr = ~is_bin
    c_uniq, c_inv, c_mult = _distinct_rows(grp, fp, n_neg, fn, n_pos, corr)
    c_fp, c_nneg, c_fn, c_npos = c_uniq[:, 1], c_uniq[:, 2], c_uniq[:, 3], c_uniq[:, 4]
    n_c = c_uniq.shape[0]
    if n_c:
        P = aux_params(c_fp, c_nneg, c_fn, c_npos)
    else:
        P = np.zeros((0, 18))
    c_lik = g_lik[c_uniq[:, 0]]
    c_const = np.zeros(n_c)
    for r in range(n_c):
        # the beta-binomial kernel leaves out the binomial coefficients
        if c_lik[r] == LIK_BETA_BINOMIAL:
            c_const[r] = _log_binom_coef(c_nneg[r], c_fp[r]) + _log_binom_coef(c_npos[r], c_fn[r])
    base_map = np.zeros((fp.size, 2), dtype=np.int64)
    base_map[is_bin, 0] = 0
    base_map[is_bin, 1] = inv
    base_map[corr, 0] = 1
    base_map[corr, 1] = c_inv

    names: list = ["eps"]
    s_fixed = np.asarray(s_fixed, dtype=np.float64)
    s_z = np.full(s_fixed.size, -1, dtype=np.int64)
    G = guess_rows([], [], [], [], [])[0] if guesses is None else guesses
    # the free strengths that only one-run rows read take the last coordinates of z (the
    # fitted t proposes the others, strength_move these; none in a model of bases only)
    g_sidx_a = np.asarray(g_sidx, dtype=np.int64)
    read = set(g_sidx_a[uniq[:, 0]].tolist()) | set(g_sidx_a[c_uniq[:, 0]].tolist())
    s_cheap = np.asarray(
        sorted(int(k) for k in set(G.k.tolist()) - read if np.isnan(s_fixed[k])), dtype=np.int64
    )
    for k in range(s_fixed.size):
        if np.isnan(s_fixed[k]) and k not in s_cheap:
            s_z[k] = len(names)
            names.append(("s", k))
    J = g_lik.size
    g_tau_z = np.full(J, -1, dtype=np.int64)
    g_rho_z = np.full(J, -1, dtype=np.int64)
    for j in range(J):
        if g_tau_free[j]:
            g_tau_z[j] = len(names)
            names.append(("tau", j))
    for j in range(J):
        if g_rho_free[j]:
            g_rho_z[j] = len(names)
            names.append(("rho", j))
    g_mix = (g_lik == LIK_EXPOSURE_MIXTURE).astype(np.int64)
    g_pi = np.full(J, 0.5) if g_pi is None else np.asarray(g_pi, dtype=np.float64)
    g_kappa = np.full(J, 0.1) if g_kappa is None else np.asarray(g_kappa, dtype=np.float64)
    g_pi_free = np.ones(J, bool) if g_pi_free is None else np.asarray(g_pi_free, bool)
    g_kappa_free = np.ones(J, bool) if g_kappa_free is None else np.asarray(g_kappa_free, bool)
    g_pi_z = np.full(J, -1, dtype=np.int64)
    g_kap_z = np.full(J, -1, dtype=np.int64)
    for j in range(J):
        if g_mix[j] and g_pi_free[j]:
            g_pi_z[j] = len(names)
            names.append(("pi", j))
    for j in range(J):
        if g_mix[j] and g_kappa_free[j]:
            g_kap_z[j] = len(names)
            names.append(("kappa", j))
    for k in s_cheap:
        s_z[k] = len(names)
        names.append(("s", int(k)))
    XG, WG = gauss_legendre_table(QUAD_NODES)
    corr = None
    if n_c:
        c_kx, c_ky, k_grp, k_n, k_c = _jacobian_keys(c_uniq, c_lik)
        corr = exact.Corr(
            P=P,
            c_grp=c_uniq[:, 0].copy(),
            c_lik=c_lik.astype(np.int64),
            c_const=c_const,
            c_mult=c_mult.astype(np.float64),
            XG=XG,
            WG=WG,
            c_kx=c_kx,
            c_ky=c_ky,
            k_grp=k_grp,
            k_n=k_n,
            k_c=k_c,
        )
    b_k = np.asarray(g_sidx, dtype=np.int64)[uniq[:, 0]]
    model = exact.Model(
        B=B,
        Q=make_blocks(B, b_k),
        b_grp=uniq[:, 0].astype(np.int64).copy(),
        b_mult=mult.astype(np.float64),
        b_k=b_k,
        g_sidx=np.asarray(g_sidx, dtype=np.int64),
        g_tau_z=g_tau_z,
        g_rho_z=g_rho_z,
        g_tau=np.asarray(g_tau, dtype=np.float64),
        g_rho=np.asarray(g_rho, dtype=np.float64),
        s_z=s_z,
        s_fixed=np.where(np.isnan(s_fixed), 0.5, s_fixed),
        delta=float(delta),
        pz=PriorZ(
            eps_kind=int(eps_prior[0]),
            eps_p1=float(eps_prior[1]),
            eps_p2=float(eps_prior[2]),
            s_a=float(s_prior[0]),
            s_b=float(s_prior[1]),
        ),
        tau_a=float(tau_prior[0]),
        tau_b=float(tau_prior[1]),
        g_mix=g_mix,
        g_pi_z=g_pi_z,
        g_kap_z=g_kap_z,
        g_pi=g_pi,
        g_kap=g_kappa,
        mix_prior=np.asarray(mix_prior, dtype=np.float64),
        n_mix=int(g_mix.sum()),
        G=G,
        s_cheap=s_cheap,
    )
    return model, corr, names, base_map


def _log_post(model, corr, z):
    llb = np.empty(model.b_grp.size)
    llc = np.empty(0 if corr is None else corr.c_grp.size)
    return exact.log_posterior(np.asarray(z, dtype=np.float64), model, corr, llb, llc)


#: Largest number of distinct binomial bases the coarse starting grid evaluates.
START_BASES = 48
#: Fields of :class:`samplers.model.binomial.BinomialBases` with one row per base.
_PER_BASE = ("x", "n0", "y", "n1", "win0", "win1", "lconst", "refl", "tmeta", "twin")


def start_model(model):
    """Return the model the starting grid is evaluated on (at most START_BASES binomial bases).

    With more, each group keeps bases evenly spaced in the order of their summed error rates
    (extremes included) and their multiplicities are scaled so that every group weighs what
    it weighs in the data. The grid only locates the mode roughly (the chains start at its best
    point plus noise and the warm-up does the rest), and its far-off points are where a base's
    likelihood costs most (tails: the wide pass), so this keeps the start-up of a model with
    1,000 bases from costing tens of seconds.
    """
    B = model.B
    n = model.b_grp.size
    if n <= START_BASES:
        return model
    groups = np.unique(model.b_grp)
    per = max(2, START_BASES // groups.size)
    keep, mult = [], []
    score = B.x / B.n0 + B.y / B.n1
    for g in groups:
        members = np.flatnonzero(model.b_grp == g)
        members = members[np.argsort(score[members], kind="stable")]
        pick = members[np.unique(np.linspace(0, members.size - 1, per).round().astype(int))]
        keep.extend(pick.tolist())
        w = model.b_mult[members].sum() / model.b_mult[pick].sum()
        mult.extend((model.b_mult[pick] * w).tolist())
    keep = np.asarray(keep, dtype=np.int64)
    Bs = B._replace(**{f: getattr(B, f)[keep] for f in _PER_BASE})
    base_k = model.b_k[keep]
    return model._replace(
        B=Bs,
        # the same numba type as the model's (None or Blocks), or every kernel compiles twice
        Q=None if model.Q is None else make_blocks(Bs, base_k, none_if_empty=False),
        b_grp=model.b_grp[keep].copy(),
        b_mult=np.asarray(mult, dtype=np.float64),
        b_k=base_k,
    )


#: Values of the exposure mixture's free pi and kappa that the starting grid crosses: kappa
#: spans an unexposed region of constant width delta (kappa eps << delta, where targets that
#: show nothing have their largest likelihood) to one as wide as half of R(eps, delta).
START_PI = (0.05, 0.5, 0.95)
START_KAPPA = (1e-7, 1e-3, 0.5)


def starting_points(model, corr, names, rng, chains, eps_guess):
    """Dispersed starting points near the best point of a coarse grid.

    The grid crosses eps (geometric, around ``eps_guess`` and out to 60) with a common value of
    the free strengths (and of the exposure mixture's pi and kappa, :data:`START_PI`,
    :data:`START_KAPPA`), evaluated on :func:`start_model`; the chains start at the best point
    plus N(0, 0.3^2) noise in z (kept only where the full log posterior is finite). A chain
    that starts far out on a flat tail could take the whole warm-up to find the mode, and one
    that starts where a base has likelihood zero could not move at all.
    """
    grid_model = start_model(model)
    d = len(names)
    z = np.zeros(d)
    for a, nm in enumerate(names):
        if nm != "eps" and nm[0] == "rho":
            z[a] = 0.0
        elif nm != "eps" and nm[0] == "pi":
            v = float(model.g_pi[nm[1]])
            z[a] = np.log(v / (1.0 - v))
        elif nm != "eps" and nm[0] == "kappa":
            u = np.log(float(model.g_kap[nm[1]])) / model.mix_prior[4]
            z[a] = np.log(u / (1.0 - u))
        elif nm != "eps" and nm[0] == "tau":
            # the model's starting tau (0.05 unless a fixed rho needs a larger one)
            t = float(model.g_tau[nm[1]])
            z[a] = np.log(t / (1.0 - t))
    eps_grid = np.unique(
        np.concatenate([np.geomspace(0.01, 60.0, 25), eps_guess * np.array([0.7, 1.0, 1.4])])
    )
    s_free = [a for a, nm in enumerate(names) if nm != "eps" and nm[0] == "s"]
    s_grid = [0.05, 0.3, 0.6, 0.85, 0.95, 0.99] if s_free else [0.5]
    # the exposure mixture: a common pi and kappa of the free ones, crossed with (eps, s)
    pi_free = [a for a, nm in enumerate(names) if nm != "eps" and nm[0] == "pi"]
    kap_free = [a for a, nm in enumerate(names) if nm != "eps" and nm[0] == "kappa"]
    pi_grid = START_PI if pi_free else [None]
    kap_grid = START_KAPPA if kap_free else [None]
    points = []
    for e in eps_grid:
        for sv in s_grid:
            for pv in pi_grid:
                for kv in kap_grid:
                    zz = z.copy()
                    zz[0] = np.log(e)
                    for a in s_free:
                        zz[a] = np.log(sv / (1.0 - sv))
                    for a in pi_free:
                        zz[a] = np.log(pv / (1.0 - pv))
                    for a in kap_free:
                        u = np.log(kv) / model.mix_prior[4]
                        zz[a] = np.log(u / (1.0 - u))
                    points.append(zz)
    # the kernels release the GIL: the grid's points (far-out ones cost most) in parallel
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        values = list(pool.map(lambda zz: _log_post(grid_model, corr, zz), points))
    best, best_z = -np.inf, None
    for zz, v in zip(points, values, strict=True):
        if v > best:
            best, best_z = v, zz
    if best_z is None or not np.isfinite(best):
        raise ValueError(
            "the posterior is zero at every starting point tried (eps from 0.01 to 60): the "
            "counts are incompatible with the model at these settings"
        )
    return starts_near(model, corr, best_z, rng, chains)


def starts_near(model, corr, z, rng, chains, scale=0.3):
    """Return ``chains`` starting points near ``z``: ``z`` plus N(0, ``scale``^2) noise.

    Noise that puts a point where the log posterior is not finite is drawn again (smaller
    after every 20 tries); after 100 tries the chain starts at ``z`` itself. Used for the grid's
    best point (:func:`starting_points`) and to sample again from a mode the chains missed
    (:func:`samplers.exact.runner.run_exact`).

    Parameters
    ----------
    model, corr
        The exact sampler's model and over-dispersed bases (:func:`build_model`).
    z : numpy.ndarray, shape (d,)
        The point, in the sampler's coordinates.
    rng : numpy.random.Generator
    chains : int
        How many points (>= 1).
    scale : float
        Standard deviation of the noise in each coordinate (> 0).

    Returns
    -------
    list of numpy.ndarray
        ``chains`` points of shape (d,), each with a finite log posterior unless 100 draws of
        noise found none (then ``z`` itself).

    Raises
    ------
    ValueError
        If ``z`` is not a finite vector, ``chains`` < 1 or ``scale`` is not positive.
    """
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 1 or not np.isfinite(z).all():
        raise ValueError(f"`z` must be a finite vector of coordinates; found {z!r}")
    if int(chains) != chains or chains < 1:
        raise ValueError(f"`chains` must be an integer >= 1; found {chains!r}")
    if not scale > 0:
        raise ValueError(f"`scale` must be positive; found {scale!r}")
    d = z.size
    starts = []
    for _ in range(int(chains)):
        for k in range(100):
            zz = z + rng.normal(0.0, scale / (1 + k // 20), size=d)
            if np.isfinite(_log_post(model, corr, zz)):
                break
        else:
            zz = z.copy()
        starts.append(zz)
    return starts


def draws_from_z(z, names, n_strengths, g_tau, g_tau_free, grp, n_neg, n_pos, log_kappa_min):
    """Map the chains' coordinates z back to the model's parameters: the inverse of the above.

    ``z`` (chains, draws, coordinates) is named by ``names`` (``"eps"``, ``("s", k)``,
    ``("tau", j)``, ``("rho", j)``): eps = e^z0, s_k and tau_j the logistic of theirs, and
    rho_j = rho_max_j(tau_j) tanh(z), rho_max_j the smallest over group j's bases (``grp[i]``
    is base i's group, of ``n_neg[i]``, ``n_pos[i]`` challenges) at the draw's tau, or at the
    fixed ``g_tau[j]`` where ``g_tau_free[j]`` is False. Returns ``eps`` (chains, draws), ``s``
    (chains, draws, n_strengths), ``tau`` and ``rho`` (chains, draws, groups); nan where a
    parameter is not sampled. An exposure-mixture group j also has ``pi`` (the logistic of its
    coordinate) and ``kappa`` = kappa_min^u, u the logistic of its coordinate and
    ``log_kappa_min`` = log(kappa_min); both (chains, draws, groups).
    """
    n_groups = len(g_tau)
    s_out = np.full(z.shape[:2] + (n_strengths,), np.nan)
    tau_out = np.full(z.shape[:2] + (n_groups,), np.nan)
    rho_out = np.full(z.shape[:2] + (n_groups,), np.nan)
    pi_out = np.full(z.shape[:2] + (n_groups,), np.nan)
    u_out = np.full(z.shape[:2] + (n_groups,), np.nan)
    unit = {"s": s_out, "tau": tau_out, "pi": pi_out, "kappa": u_out}
    for a, nm in enumerate(names):
        if nm == "eps":
            continue
        kind, k = nm
        if kind in unit:
            unit[kind][:, :, k] = 1.0 / (1.0 + np.exp(-z[:, :, a]))
    for a, nm in enumerate(names):
        if nm != "eps" and nm[0] == "rho":
            # rho = rho_max(tau) tanh(z): the sampler's coordinate is unbounded
            j = nm[1]
            tau_j = tau_out[:, :, j] if g_tau_free[j] else g_tau[j]
            rows = grp == j
            tj = np.broadcast_to(tau_j, z.shape[:2])[None]
            n0 = n_neg[rows][:, None, None]
            n1 = n_pos[rows][:, None, None]
            rho_out[:, :, j] = rho_max_array(tj, n0, n1).min(axis=0) * np.tanh(z[:, :, a])
    return {
        "eps": np.exp(z[:, :, 0]),
        "s": s_out,
        "tau": tau_out,
        "rho": rho_out,
        "pi": pi_out,
        "kappa": np.exp(u_out * log_kappa_min),
    }


#: Binomial bases (with multiplicity) from which the exact sampler builds no surrogate table and
#: its independence move proposes from the Student t fitted to the warm-up
#: (:mod:`samplers.exact.fitted_proposal`) instead of the table's proposal, which mixes poorly at
#: that scale (docs/validation/lira.md, "Mixing at scale", has the measurements).
TABLE_MAX_BASES = 1000


def chain_settings(
    corr, names, *, tune, target_accept, store_ll, mixture: bool = False, bases: float = 0.0
) -> exact.Settings:
    """Return the :class:`~samplers.exact.state.Settings` of chains on ``corr`` and ``names``.

    What :class:`ExactRun` runs with. Correlated groups, exposure-mixture groups
    (``mixture``) and :data:`TABLE_MAX_BASES` binomial bases or more (``bases``, with
    multiplicity) get no table (``n_inner=0``).
    """
    tune = int(tune)
    n_free_s = sum(1 for nm in names if nm != "eps" and nm[0] == "s")
    table = corr is None and not mixture and bases < TABLE_MAX_BASES
    return exact.Settings(
        tune=tune,
        cov_start=tune // 4,
        cov_end=tune // 2,
        target_accept=float(target_accept),
        ridge=n_free_s > 0,
        n_inner=exact.N_INNER if table else 0,
        indep=True,
        exact_every=exact.EXACT_EVERY,
        exact_every_indep=exact.EXACT_EVERY_INDEP,
        store_ll=bool(store_ll),
    )


def run_kernels(model, corr, names, settings, *, pointwise: bool, everything: bool = False):
    """Return the kernels a run calls, each with arguments of the types it calls it with.

    A list of (numba dispatcher, arguments): the log posterior (the starting grid; every other
    kernel calls it), the warm-up, what the end of the warm-up needs with ``settings``
    (:func:`samplers.exact.chain.start_table`: the table's build and the pilot of its proposal,
    or the fitted t's pilot), the draws and the pointwise log likelihood (``pointwise``), in an
    order that lets two processes compile them side by side (the draws, which call the
    warm-up's moves, after the warm-up's kernel has compiled them). Left out unless
    ``everything``: the fallbacks a run compiles only if a chain needs them (the fitted t's
    pilot and the table walk, when a table is built and its proposal is piloted first).
    ``settings`` as :func:`chain_settings`.
    """
    from . import moves, table
    from . import pointwise as pw

    d = len(names)
    state = exact.new_state(model, corr, np.zeros(d))
    rng = np.random.default_rng(0)
    w = exact.new_scratch(state)
    stop = np.zeros(1, dtype=np.int64)
    n_ll = model.b_grp.size if settings.store_ll else 0
    n_llc = (0 if corr is None else corr.c_grp.size) if settings.store_ll else 0
    out = exact.Draws(
        z=np.zeros((1, d)),
        ll_b=np.zeros((1, n_ll)),
        ll_c=np.zeros((1, n_llc)),
        acc=np.zeros((1, 3)),
    )
    with_table = settings.n_inner > 0 and corr is None
    start = []  # what the end of the warm-up calls (chain.start_table)
    if with_table:
        start.append((table.build_table, (state, model, stop)))
        if settings.indep:
            start.append((moves.choose_table_proposal, (state, model, corr, rng, w)))
    if settings.indep and (everything or not with_table):
        start.append((moves.choose_fitted, (state, model, corr, rng, w)))
    # the table walk's kernel when the table's proposal is not tried, else the other one
    draws = [exact.advance_draws, exact.advance_walk]
    if with_table and not settings.indep:
        draws.reverse()
    if not (everything and with_table):
        draws = draws[:1]
    draws = [(k, (state, model, corr, settings, rng, 1, out, 0)) for k in draws]
    jobs = [
        (exact.log_posterior, (state.z, model, corr, state.ll_b, state.ll_c)),
        (exact.advance_warm, (state, model, corr, settings, rng, 1)),
        *start[:1],
        *draws[:1],
        *start[1:],
    ]
    if pointwise:
        n_c = 0 if corr is None else corr.c_grp.size
        z2, llb2, llc2 = np.zeros((1, d)), np.zeros((1, model.b_grp.size)), np.zeros((1, n_c))
        jobs.append((pw.fill_pointwise, (z2, model, corr, llb2, llc2)))
        if model.G.r.size:  # the one-run audits' rows
            jobs.append((pw.fill_pointwise_guesses, (z2, model, np.zeros((1, model.G.r.size)))))
    jobs += draws[1:]
    return jobs


@dataclass
class _Chain:
    state: object
    rng: np.random.Generator
    z: np.ndarray
    ll_b: np.ndarray
    ll_c: np.ndarray
    acc: np.ndarray
    rows: int = 0
    sec_per_iter: float = 0.0
    iters_done: int = 0


class ExactRun:
    """Chains of the exact-likelihood sampler that can be extended round by round.

    Parameters
    ----------
    model, corr, names : from :func:`build_model`.
    rngs : list of numpy Generators, one per chain.
    starts : list of starting points z.
    tune : warm-up iterations.
    target_accept : goal of the scale recursions.
    store_ll : keep the per-base log likelihood of every draw.
    cores : threads (default: all cores, at most one per chain).
    """

    def __init__(
        self, model, corr, names, rngs, starts, *, tune, target_accept, store_ll, cores=None
    ):
        self.model = model
        self.corr = corr
        self.names = names
        self.tune = int(tune)
        self.settings = chain_settings(
            corr,
            names,
            tune=tune,
            target_accept=target_accept,
            store_ll=store_ll,
            mixture=model.n_mix > 0,
            bases=float(model.b_mult.sum()),
        )
        self.store_ll = bool(store_ll)
        self.cores = cores or min(len(rngs), os.cpu_count() or 1)
        self.chains = []
        for rng, z0 in zip(rngs, starts, strict=True):
            st = exact.new_state(model, corr, np.asarray(z0, dtype=np.float64))
            self.chains.append(
                _Chain(
                    st,
                    rng,
                    np.zeros((0, len(names))),
                    np.zeros((0, model.b_grp.size if store_ll else 0)),
                    np.zeros((0, st.ll_c.size if store_ll else 0)),
                    np.zeros((0, 3)),
                )
            )
        self._stop = threading.Event()
        # the same signal for the kernels: the table build checks it between rows of nodes
        self._stop_flag = np.zeros(1, dtype=np.int64)

    @property
    def n_draws(self) -> int:
        """Draws stored per chain (the smallest over chains)."""
        return min(c.rows for c in self.chains)

    def _grow(self, c: _Chain, rows: int) -> None:
        if c.z.shape[0] >= rows:
            return

        def grow(a):
            out = np.zeros((rows,) + a.shape[1:])
            out[: a.shape[0]] = a
            return out

        c.z, c.ll_b, c.ll_c, c.acc = grow(c.z), grow(c.ll_b), grow(c.ll_c), grow(c.acc)

    def _work(self, c: _Chain, target_rows: int, deadline: float) -> None:
        """Advance chain c until it holds target_rows draws or the deadline passes.

        Runs in chunks of ~CHUNK_SECONDS; the deadline is a ``time.perf_counter()`` value.
        """
        self._grow(c, target_rows)
        while not self._stop.is_set() and time.perf_counter() < deadline:
            it = int(c.state.it[0])
            left = self.tune + target_rows - it
            if left <= 0:
                return
            if c.sec_per_iter > 0:
                n = int(max(1, min(left, CHUNK_SECONDS / c.sec_per_iter)))
            else:
                n = min(left, 5)
            t0 = time.perf_counter()
            row = c.rows
            c.rows = exact.advance(
                c.state,
                self.model,
                self.corr,
                self.settings,
                c.rng,
                n,
                exact.Draws(z=c.z, ll_b=c.ll_b, ll_c=c.ll_c, acc=c.acc),
                row,
                self._stop_flag,
            )
            dt = time.perf_counter() - t0
            per = dt / n
            c.sec_per_iter = per if c.sec_per_iter == 0 else 0.5 * (c.sec_per_iter + per)
            c.iters_done += n  # reported by the calling thread (see run)

    def run(self, draws: int, progress=None, deadline: float = float("inf")) -> None:
        """Extend every chain to ``draws`` stored draws, or until ``deadline`` has passed.

        The warm-up comes first, if not yet done; ``deadline`` is a ``time.perf_counter()``
        value.

        ``progress(n)`` is called from the calling thread, about every 0.1 s, with the
        iterations the chains did since the last call (never from the workers: a progress bar
        whose lock a worker waits on while Ctrl-C interrupts the caller would deadlock).
        Ctrl-C (KeyboardInterrupt in the calling thread) stops the workers after their current
        chunk and re-raises; the chains keep the draws completed so far. Once ``deadline`` has
        passed, a chain building its table stops within a row of nodes (the table is rebuilt,
        identically, by a later call).
        """
        self._stop.clear()
        self._stop_flag[0] = 0
        reported = sum(c.iters_done for c in self.chains)  # before any worker starts
        with ThreadPoolExecutor(max_workers=self.cores) as pool:
            futs = [pool.submit(self._work, c, int(draws), deadline) for c in self.chains]
            try:
                while True:
                    done, pending = wait(futs, timeout=0.1)
                    if time.perf_counter() > deadline:
                        # a table being built stops within a row of nodes (it is rebuilt
                        # identically by a later round), so the deadline holds during it too
                        self._stop_flag[0] = 1
                    now = sum(c.iters_done for c in self.chains)
                    if progress is not None and now > reported:
                        progress(now - reported)
                    reported = now
                    if not pending:
                        break
            except BaseException:
                self._stop.set()
                self._stop_flag[0] = 1
                wait(futs)
                raise
            for f in futs:
                f.result()

    def iterations_left(self, draws: int) -> int:
        """Return the iterations (all chains) still to run to reach ``draws`` draws per chain."""
        return sum(max(0, self.tune + draws - int(c.state.it[0])) for c in self.chains)

    def result(self) -> dict:
        """Draws of z (chains, draws, d), per-base log likelihoods and acceptance indicators."""
        n = self.n_draws
        return {
            "z": np.stack([c.z[:n] for c in self.chains]),
            "ll_b": np.stack([c.ll_b[:n] for c in self.chains]),
            "ll_c": np.stack([c.ll_c[:n] for c in self.chains]),
            "acc": np.stack([c.acc[:n] for c in self.chains]),
            "log_scale": np.stack([c.state.log_scale for c in self.chains]),
        }
