"""Run MHAAR chains (validated arrays in, raw draw arrays out), in parallel threads."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.special import betaln
from scipy.stats import norm

from . import _kernels

__all__ = ["SamplerConfig", "run_mhaar", "AUX_PROPOSALS"]

#: Names of the auxiliary proposals q(alpha, beta) -> kernel codes.
AUX_PROPOSALS = {
    "uniform": _kernels.PROP_UNIFORM,
    "likelihood": _kernels.PROP_BETA_MIX,
    "normal": _kernels.PROP_NORMAL_MIX,
}

#: sd inflation of the truncated-normal auxiliary proposal relative to the Beta it imitates.
NORMAL_SD_INFLATION = 1.5


def aux_params(fp, n_neg, fn, n_pos) -> np.ndarray:
    """Per-base parameter matrix P (n, 12) read by the kernels (see ``_kernels.N_PARAMS``)."""
    fp, n_neg, fn, n_pos = (np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos))
    P = np.empty((fp.size, _kernels.N_PARAMS))
    for col, (x, n) in enumerate(((fp, n_neg), (fn, n_pos))):
        a = x + 1.0
        b = n - x + 1.0
        P[:, 2 * col] = a
        P[:, 2 * col + 1] = b
        P[:, 4 + col] = betaln(a, b)
        m = a / (a + b)
        sd = NORMAL_SD_INFLATION * np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
        z = norm.cdf((1.0 - m) / sd) - norm.cdf(-m / sd)
        P[:, 6 + 3 * col] = m
        P[:, 7 + 3 * col] = sd
        P[:, 8 + 3 * col] = np.log(sd * np.sqrt(2.0 * np.pi)) + np.log(z)
    return P


@dataclass(frozen=True)
class SamplerConfig:
    """Settings of the MHAAR sampler (validated by the caller).

    Attributes
    ----------
    draws, tune, chains : int
        Stored draws per chain, warm-up iterations per chain (proposal scales are tuned during
        warm-up and then frozen), number of chains.
    n_aux : int
        K, the number of auxiliary (alpha, beta) pairs per challenge base and move, the
        current pair included (K >= 2).
    aux_proposal : {"likelihood", "uniform"}
        q for the auxiliary pairs: the normalised binomial likelihood mixed with a uniform part
        of weight ``aux_uniform_weight`` (default), or the paper's uniform proposal.
    aux_uniform_weight : float
        Weight of the uniform component in the "likelihood" proposal.
    target_accept : float
        Acceptance rate the warm-up aims at for both moves.
    cores : int or None
        Threads to run chains on (None: all cores, at most ``chains``).
    """

    draws: int = 5000
    tune: int = 1000
    chains: int = 4
    n_aux: int = 32
    aux_proposal: str = "likelihood"
    aux_uniform_weight: float = 0.05
    target_accept: float = 0.3
    cores: int | None = None


def run_mhaar(fp, n_neg, fn, n_pos, sidx, *, delta, eps_prior, s_priors, config, rngs, eps0, s0):
    """Run ``config.chains`` chains; returns dict of arrays with leading (chain, draw) axes.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int arrays (n,)
        Counts per challenge base.
    sidx : int array (n,)
        Strength variable of each base.
    eps_prior : (kind, p1, p2)
    s_priors : list of (kind, a_or_value, b), one per strength variable (kind 1: fixed).
    rngs : list of numpy Generators, one per chain.
    eps0 : float array (chains,) ; s0 : float array (chains, G)
    """
    P = aux_params(fp, n_neg, fn, n_pos)
    sidx = np.asarray(sidx, dtype=np.int64)
    s_free = np.array([k == 0 for k, _, _ in s_priors], dtype=np.bool_)
    s_a = np.array([a for _, a, _ in s_priors], dtype=np.float64)
    s_b = np.array([b for _, _, b in s_priors], dtype=np.float64)
    kind = AUX_PROPOSALS[config.aux_proposal]
    eps_kind, eps_p1, eps_p2 = eps_prior

    def one(c):
        return _kernels.run_chain(
            rngs[c],
            sidx,
            P,
            float(delta),
            int(eps_kind),
            float(eps_p1),
            float(eps_p2),
            s_free,
            s_a,
            s_b,
            float(eps0[c]),
            np.ascontiguousarray(s0[c], dtype=np.float64),
            int(config.tune),
            int(config.draws),
            int(config.n_aux),
            int(kind),
            float(config.aux_uniform_weight),
            float(config.target_accept),
            True,
        )

    workers = config.cores or os.cpu_count() or 1
    workers = max(1, min(workers, config.chains))
    if workers == 1:
        results = [one(c) for c in range(config.chains)]
    else:
        # the kernels release the GIL (nogil=True), so threads run chains in parallel
        with ThreadPoolExecutor(max_workers=workers) as ex:
            results = list(ex.map(one, range(config.chains)))
    return {
        "eps": np.stack([r[0] for r in results]),
        "s": np.stack([r[1] for r in results]),
        "accept": np.stack([r[2] for r in results]),
        "scales": np.stack([r[3] for r in results]),
    }
