"""Reference posterior of eps under an s prior with an atom at s = 1 (points on R's boundary).

The band model puts each error point uniformly on R_s(eps, delta) = R(eps) minus R(s eps).
Giving the strength an atom at s = 1, s ~ (1 - w) Beta(1, 1) + w delta_1, puts the point *on*
the boundary of R(eps) with probability w. The atom's likelihood is the band's limit as
s -> 1, g(eps) / |R|'(eps): g is the density of the visible eps e(p) = min{e : p in R(e, delta)}
under the counts' likelihood of the point p, |R|' the derivative of the region's area. The
band's is (G(eps) - G(s eps)) / |R_s(eps)|, G the distribution function of e(p) (the band
R(eps) minus R(s eps) is {p : s eps < e(p) <= eps}, up to the scaled delta of R(s eps, s delta),
which this reference does not scale: a difference of order delta). So the posterior needs only
the distribution of e(p): here by Monte Carlo from the two Beta densities of the rates (flat
prior), seeded, on cells of eps (0.005 wide up to 8, 0.2 up to 60) and 200 midpoints of s,
eps ~ HalfNormal(10).

numpy and scipy only, with the geometry of :mod:`tests.reference.geometry`; no code shared
with ``samplers/``. ``benchmarks/boundary_prior.py`` prints the study; docs/validation/claims.md,
("A prior that expects optimal attacks"), has its table.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from tests.reference.geometry import region_area

DELTA = 1e-5
#: Cells of eps: 0.005 wide up to 8 (where the cases' error points lie), 0.2 wide up to 60 (the
#: HalfNormal(10) prior's tail: its mass beyond 60 is 2e-9); their midpoints and widths.
EDGES = np.concatenate([np.linspace(0.0, 8.0, 1601), np.linspace(8.0, 60.0, 261)[1:]])
EPS = 0.5 * (EDGES[1:] + EDGES[:-1])
WIDTH = np.diff(EDGES)
#: Midpoints of 200 cells of s, for the Beta(1, 1) part of the strength's prior.
S = (np.arange(200) + 0.5) / 200


def visible_eps(a, b, delta=DELTA):
    """e(p): the smallest eps whose region R(eps, delta) holds the error point (a, b)."""
    up = a + b > 1.0
    a, b = np.where(up, 1.0 - a, a), np.where(up, 1.0 - b, b)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    with np.errstate(divide="ignore"):
        return np.maximum(0.0, np.log(np.maximum(1.0 - delta - hi, 1e-300) / lo))


def log_likelihoods(counts, rng, samples):
    """log p(counts | eps, s) of the band on EPS x S, and of the atom s = 1 on EPS (+ const).

    ``counts``: (FP, negatives, FN, positives) of each target; ``samples`` draws of e(p) a
    target. The band's value is taken at the cells' midpoints; the atom's, g / |R|', as the
    cell's mass of e(p) over the cell's growth of |R(eps, delta)|.
    """
    area = region_area(EPS[:, None], S[None, :], DELTA)
    growth = np.diff(region_area(EDGES, 0.0, DELTA))
    band = np.zeros((EPS.size, S.size))
    atom = np.zeros(EPS.size)
    for x, n0, y, n1 in counts:
        e = np.sort(
            visible_eps(rng.beta(x + 1, n0 - x + 1, samples), rng.beta(y + 1, n1 - y + 1, samples))
        )

        def cdf(v, e=e):
            return np.searchsorted(e, v, side="right") / e.size

        mass = np.diff(cdf(EDGES))
        with np.errstate(divide="ignore", invalid="ignore"):
            band += np.log(cdf(EPS[:, None]) - cdf(EPS[:, None] * S[None, :])) - np.log(area)
            atom += np.where(mass > 0, np.log(mass) - np.log(growth), -np.inf)
    return band, atom


def interval(band, atom, w, prob=0.9):
    """Equal-tailed ``prob`` interval of eps under s ~ (1 - w) U(0, 1) + w delta_1."""
    lj = special.logsumexp(band, axis=1) - np.log(S.size)
    if w > 0:
        with np.errstate(divide="ignore"):
            lj = np.logaddexp(np.log1p(-w) + lj if w < 1 else -np.inf, np.log(w) + atom)
    lj = lj + stats.halfnorm(scale=10.0).logpdf(EPS)
    cdf = np.concatenate([[0.0], np.cumsum(np.exp(lj - lj.max()) * WIDTH)])
    cdf /= cdf[-1]
    q = (1.0 - prob) / 2.0
    return tuple(float(np.interp(v, cdf, EDGES)) for v in (q, 1.0 - q))


CASES = {
    # name: (FPR, FNR, trials a side, targets, true eps)
    "laplace": (0.1, 1.0 - DELTA - np.e * 0.1, 1000, 1, 1.0),
    "rr": ((1.0 - DELTA) / (1.0 + np.e), (1.0 - DELTA) / (1.0 + np.e), 1000, 1, 1.0),
    "laplace64": (0.1, 1.0 - DELTA - np.e * 0.1, 128, 64, 1.0),
    "weak": (0.1, 1.0 - DELTA - np.exp(0.5) * 0.1, 1000, 1, 1.0),
}


def study(case, weights, audits, seed, samples):
    """Rows (case, w, audits, above, below, median lower / truth, median upper / truth)."""
    a, b, n, targets, truth = CASES[case]
    rng = np.random.default_rng(seed)
    ends = {w: [] for w in weights}
    for _ in range(audits):
        counts = [(rng.binomial(n, a), n, rng.binomial(n, b), n) for _ in range(targets)]
        band, atom = log_likelihoods(counts, rng, samples)
        for w in weights:
            ends[w].append(interval(band, atom, w))
    rows = []
    for w in weights:
        lo, hi = np.array(ends[w]).T
        rows.append(
            (case, w, audits, int(np.sum(lo > truth)), int(np.sum(hi < truth)),
             float(np.median(lo)) / truth, float(np.median(hi)) / truth)
        )  # fmt: skip
    return rows
