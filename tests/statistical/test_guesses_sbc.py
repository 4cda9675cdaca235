"""Simulation-based calibration of the exact sampler on one-run audits, under its own simulator.

Each replicate draws (eps, s) from the prior (eps ~ HalfNormal(2), s ~ Beta(1, 1)), then for
each audit an accuracy p uniform on [expit(c s eps), expit(c eps)] (an audit of 200 guesses of
bits, c = 1, and one of 100 guesses of pairs of models, c = 2) and v ~ Binomial(r, p): the
simulator is written here with numpy, sharing nothing with the sampler. The sampler's draws are
thinned to L = 99 (nearly independent: ESS ~ 0.9 per draw) and the truth's randomised rank
u = (rank + U) / (L + 1) is uniform on (0, 1) when the posterior is right.

Two tests per variable (eps and s): the mean of z^2, z = Phi^-1(u), against its chi^2_N / N
law (the width, two-sided, level 0.004), and Pearson's chi-square of the ranks in 10 bins (the
shape, level 0.001); a false failure <= 0.01 in all. Against a posterior 15% too narrow (every
draw's distance from the median scaled by 0.85) the chance of a failure is computed with scipy
from the ranks' exact law under that defect (:func:`_power`, the posterior taken normal): the
z^2 test of one variable rejects it with probability 0.91 at N = 400 (the test asserts >= 0.8);
the binned chi-square has less power against it (0.29 at its level) and guards other shapes.
Runtime ~3.5 minutes on 2 loaded cores (400 runs of 2 x 1,000 draws); seeds 0, 1 and 2 pass.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

import bayes_dp as bdp

N_REP = 400
L = 99
R = np.array([200, 100])
PAIRS = np.array([False, True])
SCALE = 2.0
ALPHA_Z2 = 0.004  # per variable
ALPHA_CHI = 0.001  # per variable
BINS = 10
NARROW = 0.85


def _simulate(rng):
    eps = abs(rng.normal(0.0, SCALE))
    s = rng.uniform()
    c = np.where(PAIRS, 2.0, 1.0)
    p = rng.uniform(special.expit(c * s * eps), special.expit(c * eps))
    return eps, s, rng.binomial(R, p)


def _rank_law(scale: float) -> np.ndarray:
    """P(rank = k), k = 0..L, when the draws' distribution is the posterior scaled by
    ``scale`` about its median (the posterior taken normal): the truth's share of draws below
    it is G(u) = Phi(Phi^-1(u) / scale), u uniform, and the rank is Binomial(L, G(u))."""

    def g(u):
        return stats.norm.cdf(stats.norm.ppf(u) / scale)

    out = np.array(
        [
            integrate.quad(lambda u, k=k: stats.binom.pmf(k, L, g(u)), 0.0, 1.0, limit=200)[0]
            for k in range(L + 1)
        ]
    )
    return out / out.sum()


def _z_moments(law: np.ndarray) -> tuple[float, float]:
    """E[z^2] and Var[z^2] of z = Phi^-1((rank + U) / (L + 1)) under the rank law ``law``."""
    m2 = np.empty(L + 1)
    m4 = np.empty(L + 1)
    for k in range(L + 1):
        a, b = k / (L + 1), (k + 1) / (L + 1)
        m2[k] = integrate.quad(lambda x: stats.norm.ppf(x) ** 2, a, b)[0] * (L + 1)
        m4[k] = integrate.quad(lambda x: stats.norm.ppf(x) ** 4, a, b)[0] * (L + 1)
    e2 = float(law @ m2)
    return e2, float(law @ m4) - e2**2


def _z2_bounds(n: int) -> tuple[float, float]:
    return stats.chi2.ppf(ALPHA_Z2 / 2, n) / n, stats.chi2.isf(ALPHA_Z2 / 2, n) / n


def _power(n: int, scale: float) -> tuple[float, float]:
    """The chance that the z^2 test and the binned chi-square reject a posterior scaled by
    ``scale`` (normal approximation of the mean of z^2; non-central chi-square)."""
    law = _rank_law(scale)
    e2, v2 = _z_moments(law)
    lo, hi = _z2_bounds(n)
    sd = np.sqrt(v2 / n)
    p_z2 = stats.norm.cdf((lo - e2) / sd) + stats.norm.sf((hi - e2) / sd)
    edges = np.linspace(0, L + 1, BINS + 1).astype(int)
    p_bin = np.array([law[a:b].sum() for a, b in zip(edges[:-1], edges[1:], strict=True)])
    q = np.diff(edges) / (L + 1)
    lam = n * np.sum((p_bin - q) ** 2 / q)
    p_chi = stats.ncx2.sf(stats.chi2.isf(ALPHA_CHI, BINS - 1), BINS - 1, lam)
    return float(p_z2), float(p_chi)


def _checks(ranks: np.ndarray, u: np.ndarray, label: str) -> None:
    edges = np.linspace(0, L + 1, BINS + 1).astype(int)
    counts = np.histogram(ranks, bins=edges)[0]
    expected = ranks.size * np.diff(edges) / (L + 1)
    chi = stats.chisquare(counts, expected)
    z2 = float(np.mean(stats.norm.ppf(u) ** 2))
    lo, hi = _z2_bounds(ranks.size)
    print(f"{label}: chi-square p {chi.pvalue:.3f}; mean z^2 {z2:.3f} (accept {lo:.3f}-{hi:.3f})")
    assert chi.pvalue >= ALPHA_CHI, f"{label}: ranks not uniform (chi-square p {chi.pvalue:.2g})"
    assert lo <= z2 <= hi, f"{label}: mean z^2 {z2:.3f} outside [{lo:.3f}, {hi:.3f}]"


def run_sbc(seed: int, n_rep: int = N_REP) -> dict:
    rng = np.random.default_rng(seed)
    prior = bdp.Prior(eps=bdp.HalfNormal(SCALE))
    ranks = {"eps": [], "s": []}
    u = {"eps": [], "s": []}
    for _ in range(n_rep):
        eps, s, v = _simulate(rng)
        runs = bdp.OneRunCounts(m=R, r=R, v=v, pairs=PAIRS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bdp.estimate_epsilon(
                runs,
                delta=0.0,
                prior=prior,
                chains=2,
                draws=1000,
                seed=rng,
                check=False,
                log_likelihood=False,
                progress=False,
            )
        for var, truth in (("eps", eps), ("s", s)):
            draws = post.draws(var)[:, ::20].ravel()[:L]
            k = int(np.sum(draws < truth))
            ranks[var].append(k)
            u[var].append((k + rng.uniform()) / (L + 1))
    return {v: (np.array(ranks[v]), np.array(u[v])) for v in ranks}


@pytest.mark.slow
@pytest.mark.statistical
def test_sbc_of_one_run_audits_under_their_own_simulator():
    p_z2, p_chi = _power(N_REP, NARROW)
    print(f"power against a posterior 15% too narrow: z^2 {p_z2:.3f}, chi-square {p_chi:.3f}")
    assert p_z2 >= 0.8
    out = run_sbc(seed=0)
    for var, (ranks, u) in out.items():
        _checks(ranks, u, var)
