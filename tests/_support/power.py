"""The reach of a statistical check: its power against a named defect and its false-failure
rate, computed with scipy (``docs/validation/test_power.md`` tabulates them per test).

Two kinds of check:

**Counts of events** (a bound above the truth, an interval that misses it): ``k`` of ``n``
audits, each an event with probability ``p``. A check that accepts ``k <= c`` fails falsely
with probability P(K > c | p0) and catches a defect that raises the rate to p1 with
probability P(K > c | p1) (:func:`count_limit`, :func:`count_power`). For a *valid* bound the
rate p0 is at most its error (5% for a 95% bound); where the study behind the check found the
rate far below that, p0 is that study's exact upper confidence limit (:func:`rate_upper`).

**Quantiles against an exact reference** (``mc_error.check_quantiles``): a defect moves the
sampled q-quantile x_q to x'_q (``narrow15``: x'_q = m + 0.85 (x_q - m), m the median;
``shift02``: x'_q = x_q + 0.2), so the reference mass below it is off by
d = |F_ref(x'_q) - q|, whatever the draws; the check measures it with standard error
se = sqrt(q (1 - q) / n_q) (n_q the quantile's effective sample size) and fails when the error
exceeds tol, so the defect is caught at that quantile with probability
P(|N(d, se)| > tol) (:func:`quantile_reach`; the check fails when any quantile does, so the
largest of these is a lower bound of its power).

Names of the defects (``DEFECTS``) are those of the mutation check
(``tests/_support/mutations.py``).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

#: defects of a posterior by name: the q-quantile x_q of a posterior with median m -> x'_q
DEFECTS = {
    "narrow15": lambda x, m: m + 0.85 * (x - m),
    "shift02": lambda x, m: x + 0.2,
}
#: the power a check must have against its named defect, and its largest false-failure rate
MIN_POWER = 0.8
MAX_FALSE_FAILURE = 0.01


def count_limit(n: int, p0: float, alpha: float = MAX_FALSE_FAILURE) -> int:
    """Smallest c with P(K > c) <= alpha for K ~ Binomial(n, p0): accept k <= c."""
    c = int(stats.binom.isf(alpha, n, p0))
    while c > 0 and stats.binom.sf(c - 1, n, p0) <= alpha:
        c -= 1
    while stats.binom.sf(c, n, p0) > alpha:
        c += 1
    return c


def count_false_failure(n: int, c: int, p0: float) -> float:
    """P(K > c) for K ~ Binomial(n, p0)."""
    return float(stats.binom.sf(c, n, p0))


def count_power(n: int, c: int, p1: float) -> float:
    """P(K > c) for K ~ Binomial(n, p1): a rate p1 is caught."""
    return float(stats.binom.sf(c, n, p1))


def at_least_power(n: int, k: int, p: float) -> float:
    """P(K < k) for K ~ Binomial(n, p): a check that asks for at least k events fails."""
    return float(stats.binom.cdf(k - 1, n, p))


def rate_upper(k: int, n: int, level: float = 0.99) -> float:
    """Exact one-sided upper confidence limit of a rate from k events in n (Clopper-Pearson)."""
    return 1.0 if k >= n else float(stats.beta.ppf(level, k + 1, n - k))


def _ppf(cdf, q: float, lo: float, hi: float) -> float:
    while float(cdf(lo)) > q and lo > 1e-300:
        lo /= 10.0
    while float(cdf(hi)) < q:
        hi *= 2.0
    return float(optimize.brentq(lambda x: float(cdf(x)) - q, lo, hi, xtol=1e-12, rtol=1e-10))


def quantile_reach(
    draws, cdf, qs, *, k: float = 4.0, ref_err: float = 5e-4, tol=None, defects=tuple(DEFECTS)
):
    """Power of a check of quantiles ``qs`` against the reference ``cdf`` to catch each defect.

    ``draws``: the run's (chains, draws) array, for the quantiles' effective sample sizes; ``tol``:
    a fixed tolerance in probability (the stress grid's) instead of ``k se + ref_err``; ``defects``:
    names of :data:`DEFECTS`. Returns ``{defect: (power, q, d, tol)}`` for the quantile where the
    defect is most visible, and ``{"false_failure": ...}``: the largest single-quantile chance of a
    false failure, P(|N(0, se)| > tol), times the number of quantiles (a union bound).
    """
    from tests._support.mc_error import quantile_ess

    draws = np.asarray(draws, dtype=np.float64)
    lo, hi = float(np.min(draws)), float(np.max(draws))
    lo = lo / 2.0 if lo > 0 else lo - (hi - lo)
    m = _ppf(cdf, 0.5, lo, hi)
    out = {}
    false_fail = 0.0
    for name in defects:
        move = DEFECTS[name]
        best = (0.0, None, 0.0, 0.0)
        for q in np.atleast_1d(qs):
            q = float(q)
            se = np.sqrt(q * (1 - q) / quantile_ess(draws, q))
            t = k * se + ref_err if tol is None else tol
            d = abs(float(cdf(move(_ppf(cdf, q, lo, hi), m))) - q)
            power = float(stats.norm.sf((t - d) / se) + stats.norm.cdf((-t - d) / se))
            false_fail = max(false_fail, float(2 * stats.norm.sf(t / se)))
            if power > best[0]:
                best = (power, q, d, t)
        out[name] = best
    out["false_failure"] = min(1.0, false_fail * len(np.atleast_1d(qs)))
    return out


def describe_reach(label: str, reach: dict) -> str:
    """One line: each defect's power at its best quantile, and the false-failure rate."""
    parts = [
        f"{name} power {v[0]:.3f} (q = {v[1]}, off by {v[2] * 100:.2f} pp, tolerance "
        f"{v[3] * 100:.2f} pp)"
        for name, v in reach.items()
        if name != "false_failure"
    ]
    return f"{label}: " + "; ".join(parts) + f"; false failure <= {reach['false_failure']:.1e}"


def quantile_rel_se(draws, q: float, h: float = 0.01) -> float:
    """Relative Monte Carlo standard error of the q-quantile of ``draws`` (chains, draws):
    sqrt(q (1 - q) / n_q) / (f(x_q) x_q), the density f(x_q) read from the draws' own
    quantiles at q -+ h."""
    from tests._support.mc_error import quantile_ess

    draws = np.asarray(draws, dtype=np.float64)
    lo, x, hi = np.quantile(draws, [q - h, q, q + h])
    dens = 2 * h / max(hi - lo, 1e-300)
    return float(np.sqrt(q * (1 - q) / quantile_ess(draws, q)) / (dens * x))


def ratio_check_reach(rel_se: float, band: float = 0.1, defect: float = 0.8) -> dict:
    """A check that a ratio of two estimates is within 1 -+ ``band``, each estimate with
    relative standard error such that the ratio's is ``rel_se``: its false-failure rate when
    the true ratio is 1, and its power when it is ``defect``."""
    ff = float(stats.norm.sf(band / rel_se) * 2)
    power = float(
        stats.norm.cdf((1 - band - defect) / rel_se) + stats.norm.sf((1 + band - defect) / rel_se)
    )
    return {"false_failure": ff, "power": power}
