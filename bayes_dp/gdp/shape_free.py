"""A lower bound of eps from binned scores that assumes nothing about the trade-off curve.

Every cut point of a :class:`~bayes_dp.GdpEvidence` group is a threshold fixed without looking
at membership ("member" above it). At each, the out-scores above and the in-scores at or below
are attack counts (fp of n_out, fn of n_in) whose error rates, for any (eps, delta)-DP
mechanism, lie in the region R(eps, delta). The count model of
:func:`~bayes_dp.estimate_epsilon` with the attack strength fixed at s = 1 (error rates on the
boundary of R(eps, delta): the smallest eps that explains them) gives a posterior of eps per
threshold, computed here on a grid with the count model's own likelihood kernel
(:func:`samplers.exact.grid.log_lik_points`) and its default eps prior, HalfNormal(10).

The posterior's lower end alone is not a frequentist bound where the likelihood is flat
toward large eps (no false positive beyond a tail threshold: its lower tail is then set by the
prior's mass above), so each threshold's lower end is the smaller of it and the exact
Clopper-Pearson bound (:func:`~bayes_dp.clopper_pearson_epsilon`) at the same level.
Over T thresholds the bound is Bonferroni-adjusted: the lower end at posterior probability ``1 - (1
- prob) / T`` of each, and the largest of them. If each single-threshold lower end at level a lies
above the true eps with probability at most a, the largest of the T at level a / T does with
probability at most T (a / T) = a. ``docs/validation/gdp.md`` section 9 derives it and records the
checks. The
quantiles are stored per threshold at :data:`LEVELS` in the posterior's settings, so that
:func:`bayes_dp.audit_claim` (``bayes_dp.results.claim_gdp``) reads the bound at any probability
without the model.
"""

from __future__ import annotations

import numpy as np

#: Tail probabilities at which each threshold's posterior quantile of eps is stored.
LEVELS = np.geomspace(1e-7, 0.5, 57)
#: Prior of eps of each single-threshold posterior (the count model's default) and its grid.
EPS_PRIOR_SCALE = 10.0
_EPS_MAX = 80.0
_COARSE = 400


def threshold_counts(in_counts, out_counts) -> tuple[np.ndarray, np.ndarray]:
    """Return (fp, fn) at each cut point of binned counts ("member" above the cut point).

    At the cut point between bins j and j + 1, fp counts the out-scores in bins above j and
    fn the in-scores in bins up to j.
    """
    a = np.asarray(out_counts, dtype=np.int64)
    b = np.asarray(in_counts, dtype=np.int64)
    fp = a.sum() - np.cumsum(a)[:-1]
    fn = np.cumsum(b)[:-1]
    return fp, fn


def _log_lik(model, eps: np.ndarray) -> np.ndarray:
    from samplers.exact.grid import log_lik_points

    out = np.empty(eps.size)
    log_lik_points(model, None, eps.copy(), np.ones(eps.size), out, np.zeros(1, np.int64))
    return out


def threshold_quantiles(fp: int, n_out: int, fn: int, n_in: int, delta: float) -> np.ndarray:
    """Quantiles of eps at :data:`LEVELS` of the single-threshold count posterior (s = 1).

    The posterior of eps given ``fp`` of ``n_out`` and ``fn`` of ``n_in`` under the count model
    of :func:`~bayes_dp.estimate_epsilon` with ``Prior(eps=HalfNormal(10), s=1)``, tabulated on
    a grid of eps (400 points up to 80, refined where the likelihood is within 40 of its
    maximum) and inverted by linear interpolation of its CDF.
    """
    from bayes_dp.core.observations import AttackCounts
    from bayes_dp.core.priors import HalfNormal, Prior
    from bayes_dp.inference.grid_posterior import refine_grid
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model

    counts = AttackCounts(fp=int(fp), n_neg=int(n_out), fn=int(fn), n_pos=int(n_in))
    prior = Prior(eps=HalfNormal(EPS_PRIOR_SCALE), s=1.0)
    model = kernel_model(Model.build(counts, delta=delta, prior=prior))[0]
    coarse = np.linspace(0.0, _EPS_MAX, _COARSE + 1)
    coarse[0] = 1e-9
    ll = _log_lik(model, coarse)
    ll = np.where(np.isfinite(ll), ll, -1e10)
    grid = refine_grid(coarse, [ll])
    extra = np.setdiff1d(grid, coarse)
    ll_all = np.concatenate([ll, _log_lik(model, extra)])
    order = np.argsort(np.concatenate([coarse, extra]))
    grid = np.concatenate([coarse, extra])[order]
    ll_all = np.where(np.isfinite(ll_all), ll_all, -1e10)[order]
    log_post = ll_all - 0.5 * (grid / EPS_PRIOR_SCALE) ** 2
    dens = np.exp(log_post - log_post.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
    cdf /= cdf[-1]
    keep = np.concatenate([[True], np.diff(cdf) > 0])
    return np.interp(LEVELS, cdf[keep], grid[keep])


def threshold_cp(fp: int, n_out: int, fn: int, n_in: int, delta: float) -> np.ndarray:
    """Clopper-Pearson lower bounds of eps at confidence ``1 - level`` for each of :data:`LEVELS`.

    :func:`~bayes_dp.clopper_pearson_epsilon` on the one threshold: exact, for any mechanism.
    """
    from bayes_dp.core.region import clopper_pearson_epsilon

    return np.array(
        [clopper_pearson_epsilon(fp, n_out, fn, n_in, delta, 1.0 - a)[0] for a in LEVELS]
    )


def shape_free_record(groups, delta: float) -> dict:
    """Tabulate every cut point of the score groups for the shape-free bound.

    ``groups`` are :class:`~bayes_dp.GdpEvidence` (their merged counts). Returns the record
    stored as ``post.settings["shape_free"]``: the levels, and per threshold its group, cut
    point, counts and quantiles of eps.
    """
    rows = []
    for ev in groups:
        fp, fn = threshold_counts(ev.in_counts, ev.out_counts)
        edges = ev.edges if ev.edges is not None else [None] * fp.size
        seen = set()
        for j in range(fp.size):
            if (fp[j], fn[j]) in seen:  # an empty bin: the same threshold twice
                continue
            seen.add((fp[j], fn[j]))
            q = threshold_quantiles(fp[j], ev.n_out, fn[j], ev.n_in, delta)
            rows.append(
                {
                    "group": ev.name,
                    "cut": None if edges[j] is None else float(edges[j]),
                    "fp": int(fp[j]),
                    "n_out": ev.n_out,
                    "fn": int(fn[j]),
                    "n_in": ev.n_in,
                    "quantiles": [float(x) for x in q],
                    "cp": [float(x) for x in threshold_cp(fp[j], ev.n_out, fn[j], ev.n_in, delta)],
                }
            )
    return {
        "delta": delta,
        "s": 1.0,
        "eps_prior": f"HalfNormal({EPS_PRIOR_SCALE:g})",
        "levels": [float(x) for x in LEVELS],
        "thresholds": rows,
    }
