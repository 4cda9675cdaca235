"""One-run audits (Steinke, Nasr and Jagielski 2023) as evidence, and their frequentist bound.

In a one-run audit ``m`` canaries are each included in the training set independently with
probability 1/2; the auditor guesses inclusion for ``r`` of them and ``v`` guesses are right.
For an eps-DP mechanism the number of right guesses is stochastically dominated by
Binomial(r, e^eps / (1 + e^eps)) (their Theorem 3.1; with delta > 0 a correction term).
``docs/validation/gdp.md`` derives the likelihood used here and states its assumptions.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from bayes_dp.core.observations import OneRunCounts
from bayes_dp.core.one_run_bound import one_run_bounds
from bayes_dp.core.priors import Prior
from bayes_dp.core.thresholds import GRID_DRAWS
from bayes_dp.core.validation import check_delta, check_positive_int, check_real

__all__ = ["OneRunCounts", "estimate_one_run", "one_run_epsilon_bound", "one_run_log_likelihood"]


def one_run_epsilon_bound(counts: OneRunCounts, delta: float = 0.0, confidence: float = 0.95):
    """Frequentist lower bound of eps from each one-run audit (Steinke, Nasr and Jagielski).

    The largest eps whose (eps, delta)-DP hypothesis the audit rejects at level
    ``1 - confidence``: the p-value of v or more right guesses of r,
    ``P[Bin(r, q) >= v] + 2 m delta max_i P[v - i <= Bin(r, q) < v] / i`` with
    ``q = e^eps / (1 + e^eps)`` (their Theorem 3.3), is below ``1 - confidence`` for every
    smaller eps. Found by bisection (60 halvings) after a doubling bracket. With ``delta = 0``
    it is the logit of the one-sided Clopper-Pearson lower bound of the accuracy. Rows of
    matched pairs (``counts.pairs``, where the field exists) are bounded on 2 eps at 2 delta
    and halved.

    Parameters
    ----------
    counts : OneRunCounts
        The audits.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1); default 0.95.

    Returns
    -------
    ndarray
        One bound per audit (0 where the audit rejects nothing).

    Examples
    --------
    >>> one_run_epsilon_bound(OneRunCounts(1000, 1000, 1000), delta=0.0).round(3).tolist()
    [5.809]
    """
    if not isinstance(counts, OneRunCounts):
        raise TypeError(f"`counts` must be a OneRunCounts; found {type(counts).__name__}")
    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    pairs = getattr(counts, "pairs", False)  # matched pairs: (2 eps, 2 delta)-DP coins
    return one_run_bounds(counts.m, counts.r, counts.v, delta, confidence, pairs=pairs)


def one_run_log_likelihood(eps, s, counts: OneRunCounts) -> np.ndarray:
    """Log likelihood of one-run audits at (eps, s), the guesser's accuracy integrated out.

    Each audit's right guesses are Binomial(r, p) with p uniform on
    ``[e^{c s eps} / (1 + e^{c s eps}), e^{c eps} / (1 + e^{c eps})]`` (between an s-strong and
    the optimal guesser of an eps-DP mechanism; c = 2 for audits of pairs of models, whose
    coins are (2 eps, 2 delta)-DP, else 1), so the marginal is a difference of Beta(v + 1,
    r - v + 1) CDFs over ``(r + 1) (hi - lo)``; at ``hi = lo`` the binomial pmf at ``hi``.
    Binomial coefficients are dropped (constant in eps and s).

    This is the grid posterior's vectorised form (:func:`estimate_one_run`); the samplers of
    :func:`~bayes_dp.estimate_epsilon` use the kernel
    :func:`samplers.model.guesses.log_lik_row` (the "guesses" likelihood, binomial
    coefficients included), and the tests hold the two to each other and to quadrature
    (``tests/reference/guesses.py``).

    Parameters
    ----------
    eps, s : array_like of float
        Broadcast against each other.
    counts : OneRunCounts

    Returns
    -------
    ndarray
        Summed over audits, shaped like ``eps`` and ``s`` broadcast.

    Examples
    --------
    >>> c = OneRunCounts(m=100, r=10, v=[9, 9], pairs=[False, True])
    >>> a = one_run_log_likelihood(1.0, 0.5, c[0]) + one_run_log_likelihood(2.0, 0.5, c[0])
    >>> bool(np.isclose(one_run_log_likelihood(1.0, 0.5, c), a))
    True
    """
    eps, s = np.broadcast_arrays(np.asarray(eps, dtype=np.float64), np.asarray(s, np.float64))
    if counts.pairs.any():
        # a pair's coin is (2 eps, 2 delta)-DP: its band is the bits' band at 2 eps
        total = np.zeros(eps.shape)
        for c, rows in ((1.0, ~counts.pairs), (2.0, counts.pairs)):
            if rows.any():
                sub = counts[rows]
                bits = OneRunCounts(sub.m, sub.r, sub.v)
                total = total + one_run_log_likelihood(c * eps, s, bits)
        return total
    return accuracy_band_log_likelihood(
        special.expit(s * eps),
        special.expit(eps),
        special.log_expit(eps),
        special.log_expit(-eps),
        counts,
    )


def accuracy_band_log_likelihood(lo, hi, log_hi, log_1m_hi, counts: OneRunCounts) -> np.ndarray:
    """Log likelihood of one-run audits with the accuracy p uniform on [``lo``, ``hi``].

    ``log_hi`` and ``log_1m_hi`` are ``log(hi)`` and ``log(1 - hi)``, given separately so that
    they keep their precision near 1 (used where the band is thinner than 1e-9 relative, where
    the likelihood is the binomial's at ``hi``). Binomial coefficients are dropped.
    """
    total = np.zeros(np.shape(hi))
    for r, v in zip(counts.r, counts.v, strict=True):
        a, b = float(v) + 1.0, float(r - v) + 1.0
        point = v * log_hi + (r - v) * log_1m_hi
        # log of P[lo < X < hi] for X ~ Beta(a, b), subtracting on the smaller side
        lc_hi, lc_lo = stats.beta.logcdf(hi, a, b), stats.beta.logcdf(lo, a, b)
        ls_hi, ls_lo = stats.beta.logsf(hi, a, b), stats.beta.logsf(lo, a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            from_cdf = lc_hi + np.log(-np.expm1(lc_lo - lc_hi))
            from_sf = ls_lo + np.log(-np.expm1(ls_hi - ls_lo))
            # int p^v (1 - p)^(r - v) dp over [lo, hi] = B(a, b) P[lo < X < hi]
            band = np.where(lc_hi < ls_lo, from_cdf, from_sf) + special.betaln(a, b)
            band -= np.log(hi - lo)
        band = np.where(np.isnan(band), -np.inf, band)  # both ends rounded to 1
        thin = (hi - lo) < 1e-9 * np.maximum(hi, 1e-300)
        total += np.where(thin, point, band)
    return total


def estimate_one_run(
    counts: OneRunCounts,
    *,
    delta: float = 0.0,
    prior: Prior | None = None,
    chains: int = 4,
    draws: int = GRID_DRAWS,
    seed=None,
):
    """Posterior of eps (and s) from one-run audits, on a grid.

    The likelihood is :func:`one_run_log_likelihood`; eps has the prior ``prior.eps`` and s
    ``prior.s`` (a Beta, or a float that fixes it). The posterior of (eps, s) is tabulated on
    a grid (fine where the likelihood is high) and sampled exactly, so the draws are
    independent; ``chains`` only splits them for the diagnostics.

    delta enters only as a record: the binomial model is the eps-DP bound of Steinke et al.,
    which an (eps, delta)-DP mechanism can exceed by at most about ``2 m delta`` in probability
    (their Theorem 3.3); ``post.settings["delta_slack"]`` holds ``2 m delta`` per audit
    (``2 m (2 delta)`` for an audit of pairs, whose coins are (2 eps, 2 delta)-DP), and the
    model is meant for audits where it is small (``docs/validation/gdp.md``).

    Parameters
    ----------
    counts : OneRunCounts
        The audits.
    delta : float
        In [0, 1); recorded (see above).
    prior : Prior, optional
        Priors of eps and s (default ``Prior()``: HalfNormal(10), Beta(1, 1)).
    chains, draws : int
        The posterior holds ``chains * draws`` independent draws.
    seed : int, numpy.random.Generator or None
        Seeds the draws.

    Returns
    -------
    Posterior
        Variables ``eps`` and ``s`` (unless fixed).

    Examples
    --------
    >>> post = estimate_one_run(OneRunCounts(1000, 1000, 700), prior=Prior(s=1.0), seed=0)
    >>> lo, hi = post.interval(0.9)
    >>> bool(lo < float(np.log(0.7 / 0.3)) < hi)
    True
    """
    from bayes_dp.inference.grid_posterior import GRID_COARSE, refine_grid, s_cells, sample_grid
    from bayes_dp.results.posterior import OneRunPosterior
    from bayes_dp.results.run_record import _generator, _versions

    if not isinstance(counts, OneRunCounts):
        raise TypeError(f"`counts` must be a OneRunCounts; found {type(counts).__name__}")
    delta = check_delta(delta)
    prior = Prior() if prior is None else prior
    if not isinstance(prior, Prior):
        raise TypeError(f"`prior` must be a Prior; found {type(prior).__name__}")
    chains = check_positive_int("chains", chains)
    draws = check_positive_int("draws", draws)
    rng, seed_record = _generator(seed)

    frac = (counts.v.sum() + 1.0) / (counts.r.sum() + 2.0)
    top = max(float(prior.eps._dist.ppf(1.0 - 1e-6)), 2.0 * float(special.logit(frac)) + 5.0)
    coarse = np.linspace(0.0, top, GRID_COARSE + 1)
    grid = refine_grid(coarse, [one_run_log_likelihood(coarse, 1.0, counts)])
    s_mid, s_edges = s_cells(prior.s)
    mid = 0.5 * (grid[1:] + grid[:-1])
    log_lik = one_run_log_likelihood(mid[:, None], s_mid[None, :], counts)
    eps, s_draw, cell = sample_grid(grid, log_lik, prior.eps, prior.s, s_edges, chains * draws, rng)
    out = {"eps": eps.reshape(chains, draws)}
    if s_edges is not None:
        out["s"] = s_draw.reshape(chains, draws)
    settings = {
        "model": "one_run",
        "delta": delta,
        "delta_slack": (2.0 * counts.m * (counts.factor * delta)).tolist(),
        "groups": [{"kind": "one_run", **counts.to_dict()}],
        "eps_prior": [type(prior.eps).__name__, *[float(x) for x in vars(prior.eps).values()]],
        "s_prior": repr(prior.s),
        "method": "grid",
        "chains": chains,
        "draws": draws,
        "grid": {"eps_points": int(grid.size), "s_cells": int(s_mid.size)},
        "seed": seed_record,
        "versions": _versions(),
    }
    if s_edges is None:
        settings["fixed"] = {"s": float(prior.s)}
    return OneRunPosterior(out, {"grid_cell": cell.reshape(chains, draws)}, settings)
