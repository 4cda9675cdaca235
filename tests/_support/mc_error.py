"""Tolerances sized to the Monte Carlo error of the run they check, and the power of the
calibration criteria.

**Quantiles against a reference.**  For the q-quantile x_q of draws with effective sample size
n_q (ArviZ's quantile ESS), the reference mass below it, F_ref(x_q), is the mean of the
indicators 1[draw <= x_q] and has standard error sqrt(q (1 - q) / n_q) (delta method).  A
tolerance of k = 4 standard errors makes a false failure of one quantile P(|Z| > 4) = 6e-5 (a
check of 5 quantiles of 2 variables: about 1e-3).  A posterior whose quantiles are right but
which is 10% too narrow (every deviation from the median scaled by 0.9) misses the 5% quantile
by Phi(0.9 Phi^-1(0.05)) - 0.05 = 1.94 points (25%: 2.2 points), whatever the draws.  The 5%
tolerance is 4 sqrt(0.0475 / n_q): 0.97 point at n_q = 8,000 (the fast checks run 4 x 10,000
draws for this), 0.4-0.6 point at the slow checks' 4 x 20,000; such a posterior fails (and so
does a lower end shifted by as much).  ``min_ess`` (1,000) guards the other way: a chain that
mixes badly cannot widen its own tolerance beyond 2.8 points at the 5% quantile.

**Coverage studies.**  The number of 90% intervals out of n that cover the truth is
Binomial(n, 0.9) when the intervals are calibrated.  ``coverage_bounds`` gives the two-sided
acceptance range whose two tails each have probability <= 5e-4 (a false failure <= 1e-3), and
``false_pass`` the probability that miscalibrated intervals land inside it: intervals 10% too
narrow (a normal posterior's 90% interval scaled by 0.9) cover with probability
2 Phi(0.9 x 1.645) - 1 = 0.861, 10% too wide ones 0.930.  The PIT check (``z2_bounds``) is
sharper for the width: with u the share of draws below the truth and z = Phi^-1(u), the mean of
z^2 over n calibrated audits is chi^2_n / n; 10% too narrow intervals scale it by 1/0.81.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: coverage of a nominal 90% interval of a normal posterior that is 10% too narrow / too wide
NARROW10 = float(2 * stats.norm.cdf(0.9 * stats.norm.ppf(0.95)) - 1)
WIDE10 = float(2 * stats.norm.cdf(1.1 * stats.norm.ppf(0.95)) - 1)


def quantile_ess(draws, q) -> float:
    """ArviZ's effective sample size of the q-quantile of a (chains, draws) array."""
    import arviz as az

    return float(az.ess(np.asarray(draws, dtype=np.float64), method="quantile", prob=float(q)))


def check_quantiles(
    draws, cdf, qs, *, label, k=4.0, ref_err=5e-4, min_ess=1000.0, reach=(), min_power=0.8
):
    """Assert |F_ref(x_q) - q| <= k sqrt(q (1 - q) / n_q) + ref_err for every q in ``qs``.

    ``draws``: (chains, draws) array; ``cdf``: the reference CDF; ``ref_err``: the reference's
    own error in probability (the quadrature's is below 2e-4).  Asserts n_q >= ``min_ess`` too.
    ``reach``: names of defects (``tests._support.power.DEFECTS``: "narrow15", "shift02") the
    check must catch with power >= ``min_power`` at this run's effective sample sizes, asserted
    first (``power.quantile_reach``: computed from the reference, whatever the draws).
    Returns {q: (error, tolerance)} for printing.
    """
    draws = np.asarray(draws, dtype=np.float64)
    if reach:
        from tests._support.power import describe_reach, quantile_reach

        r = quantile_reach(draws, cdf, qs, k=k, ref_err=ref_err, defects=reach)
        print(describe_reach(label, r))
        for name in reach:
            assert r[name][0] >= min_power, f"{label}: out of reach: {describe_reach(label, r)}"
    out = {}
    for q in np.atleast_1d(qs):
        n_q = quantile_ess(draws, q)
        assert n_q >= min_ess, f"{label}: ESS of the {q:g}-quantile {n_q:.0f} < {min_ess:.0f}"
        err = abs(float(cdf(np.quantile(draws, q))) - q)
        tol = k * np.sqrt(q * (1 - q) / n_q) + ref_err
        out[float(q)] = (err, tol)
    bad = {q: (round(e * 100, 3), round(t * 100, 3)) for q, (e, t) in out.items() if e > t}
    assert not bad, f"{label}: quantile errors over tolerance (q: (error, tol) in points) {bad}"
    return out


def coverage_bounds(n, level=0.9, tail=5e-4):
    """Two-sided acceptance range [lo, hi] of the number of covering intervals out of n:
    P(X < lo) <= tail and P(X > hi) <= tail for X ~ Binomial(n, level)."""
    lo = int(stats.binom.ppf(tail, n, level))
    while lo > 0 and stats.binom.cdf(lo - 1, n, level) > tail:
        lo -= 1
    hi = int(stats.binom.isf(tail, n, level))
    while hi < n and stats.binom.sf(hi, n, level) > tail:
        hi += 1
    return lo, hi


def false_pass(n, bounds, p):
    """P(lo <= X <= hi) for X ~ Binomial(n, p): the chance that intervals covering with
    probability p pass the coverage criterion."""
    lo, hi = bounds
    return float(stats.binom.cdf(hi, n, p) - stats.binom.cdf(lo - 1, n, p))


def pit_z(draws, truth):
    """z = Phi^-1(u) with u = (rank + 0.5) / (L + 1), rank the number of the L draws below."""
    x = np.ravel(np.asarray(draws, dtype=np.float64))
    u = (np.sum(x < truth) + 0.5) / (x.size + 1.0)
    return float(stats.norm.ppf(u))


def z2_bounds(n, tail=5e-4):
    """Two-sided acceptance range of mean(z^2) over n audits: chi^2_n / n quantiles."""
    return float(stats.chi2.ppf(tail, n) / n), float(stats.chi2.isf(tail, n) / n)


def z2_false_pass(n, scale, tail=5e-4):
    """P(mean z^2 in z2_bounds) when every z is scaled by ``scale`` (1 / 0.9: intervals 10%
    too narrow; 1 / 1.1: 10% too wide)."""
    lo, hi = z2_bounds(n, tail)
    s2 = scale**2
    return float(stats.chi2.cdf(hi * n / s2, n) - stats.chi2.cdf(lo * n / s2, n))


def coverage_report(hits, zs, level=0.9):
    """Check a coverage study two-sidedly (coverage count and mean z^2) and describe its power.

    Returns a string with the counts, the bounds and the false-pass probabilities for intervals
    10% too narrow and 10% too wide; raises AssertionError when either criterion fails.
    """
    n = len(hits)
    k = int(np.sum(hits))
    b = coverage_bounds(n, level)
    z2 = float(np.mean(np.square(zs)))
    zb = z2_bounds(n)
    text = (
        f"coverage {k}/{n} (accept {b[0]}-{b[1]}), mean z^2 {z2:.3f} (accept "
        f"{zb[0]:.3f}-{zb[1]:.3f}); false pass: 10% too narrow "
        f"<= {min(false_pass(n, b, NARROW10), z2_false_pass(n, 1 / 0.9)):.2f}, 10% too wide "
        f"<= {min(false_pass(n, b, WIDE10), z2_false_pass(n, 1 / 1.1)):.2f}"
    )
    print(text)
    assert b[0] <= k <= b[1] and zb[0] <= z2 <= zb[1], text
    return text


def prior_calibration(n_audits, seed, audit, var, *, scale=2.0, level=0.9):
    """Calibration study with the truth drawn from the analysis prior HalfNormal(``scale``).

    For each of ``n_audits`` audits: truth ~ HalfNormal(scale) from ``rng =
    numpy.random.default_rng(seed)``, then ``post = audit(rng, truth)`` (simulate with ``rng``,
    analyse with that prior); the ``level`` interval of ``var`` and the PIT value of the truth
    go to :func:`coverage_report`, whose text it returns (calibrated intervals cover at exactly
    ``level`` on average over the prior).
    """
    rng = np.random.default_rng(seed)
    hits, zs = [], []
    for _ in range(n_audits):
        truth = float(stats.halfnorm.rvs(scale=scale, random_state=rng))
        post = audit(rng, truth)
        lo, hi = post.interval(level, var)
        hits.append(lo <= truth <= hi)
        zs.append(pit_z(post.draws(var), truth))
    return coverage_report(hits, zs, level)


def width_for_coverage(coverage, level=0.9):
    """The factor w by which a normal posterior's ``level`` interval must be scaled to cover
    with probability ``coverage``: 2 Phi(w z) - 1 = coverage, z = Phi^-1((1 + level) / 2)."""
    z = stats.norm.ppf(0.5 + level / 2)
    return float(stats.norm.ppf(0.5 + coverage / 2) / z)


def coverage_power(n, coverage, level=0.9, tail=5e-4):
    """A lower bound of the power of :func:`coverage_report` at ``n`` audits against intervals
    that cover with probability ``coverage`` (a normal posterior too narrow by the factor
    :func:`width_for_coverage`): 1 minus the smaller of the two criteria's false-pass
    probabilities (the check fails when either does)."""
    passes = min(
        false_pass(n, coverage_bounds(n, level), coverage),
        z2_false_pass(n, 1.0 / width_for_coverage(coverage, level), tail),
    )
    return 1.0 - passes
