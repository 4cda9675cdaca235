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
- prob) / T`` of each, and the largest of them. If each single-threshold lower end at level a
lies above the true eps with probability at most a, the largest of the T at level a / T does
with probability at most T (a / T) = a. ``docs/validation/gdp.md`` section 9 derives it and
records the checks. The quantiles are stored per threshold at :data:`LEVELS` in the posterior's
settings, so that :func:`bayes_dp.audit_claim` (``bayes_dp.results.claim_gdp``) reads the bound
at any probability without the model.

The cut points of the groups serve the Gaussian fit (about 50 scores a bin); a few very exposed
members sit beyond them. With the scores at hand, :func:`tail_thresholds` adds a second set: the
``TAIL_SCAN`` thresholds at pooled quantiles (label-free), the share of pooled scores above them
geometric from ``TAIL_FROM`` down to ``TAIL_FEWEST`` scores. The error is split between the two
sets,
``1 - TAIL_ALPHA`` to the groups' cut points and ``TAIL_ALPHA`` to the tail set, Bonferroni within
each (``docs/validation/gdp.md`` section 10); a tail threshold's Clopper-Pearson bound is
one-sided (:func:`threshold_cp_upper_rates`).
"""

from __future__ import annotations

import numpy as np

#: Tail probabilities at which each threshold's posterior quantile of eps is stored.
LEVELS = np.geomspace(1e-7, 0.5, 57)
#: Prior of eps of each single-threshold posterior (the count model's default) and its grid.
EPS_PRIOR_SCALE = 10.0
_EPS_MAX = 80.0
_COARSE = 400
#: The tail set: TAIL_SCAN thresholds at pooled quantiles, the share above them geometric from
#: TAIL_FROM down to TAIL_FEWEST scores; TAIL_ALPHA of the error goes to them.
TAIL_SCAN = 20
TAIL_FROM = 0.5
TAIL_FEWEST = 5
TAIL_ALPHA = 0.5


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


def threshold_cp_upper_rates(fp: int, n_out: int, fn: int, n_in: int, delta: float) -> np.ndarray:
    """One-sided Clopper-Pearson lower bounds of eps at each of :data:`LEVELS`.

    At level a: the upper Clopper-Pearson bounds of FPR and FNR at a / 2 each (scipy's beta
    quantiles), put into the two inequalities of R(eps, delta), TPR <= e^eps FPR + delta and
    TNR <= e^eps FNR + delta (``bayes_dp.core.region._eps_lower``, decreasing in both rates). Both
    bounds hold together with probability >= 1 - a, and then so does the eps bound. The
    reflected branch of :func:`~bayes_dp.clopper_pearson_epsilon` (scores that rank members
    low) is left out: it would need the lower rate bounds as well.
    """
    from scipy import stats

    from bayes_dp.core.region import _eps_lower

    half = 0.5 * LEVELS
    fpr_hi = stats.beta.isf(half, fp + 1, n_out - fp) if fp < n_out else np.ones(LEVELS.size)
    fnr_hi = stats.beta.isf(half, fn + 1, n_in - fn) if fn < n_in else np.ones(LEVELS.size)
    return np.asarray(_eps_lower(fpr_hi, fnr_hi, delta), dtype=np.float64)


def tail_thresholds(in_scores, out_scores) -> list[dict]:
    """Return the tail set: thresholds at pooled quantiles reaching into the top, label-free.

    ``TAIL_SCAN`` cut points at the ``1 - q`` quantiles of the pooled scores (numpy's default,
    linear interpolation), q geometric from ``TAIL_FROM`` down to ``TAIL_FEWEST`` pooled scores
    (``TAIL_FEWEST / n``). Returns per threshold ``cut``, ``k`` (pooled scores above), ``fp``
    (out-scores above) and ``fn`` (in-scores at or below); thresholds with the same counts, or
    with no score above, are dropped.
    """
    x_in = np.asarray(in_scores, dtype=np.float64)
    x_out = np.asarray(out_scores, dtype=np.float64)
    pooled = np.concatenate([x_in, x_out])
    n = pooled.size
    if TAIL_FROM * n <= TAIL_FEWEST:
        return []
    cuts = np.quantile(pooled, 1.0 - np.geomspace(TAIL_FROM, TAIL_FEWEST / n, TAIL_SCAN))
    rows, seen = [], set()
    for cut in cuts:
        fp, fn = int(np.sum(x_out > cut)), int(np.sum(x_in <= cut))
        k = fp + x_in.size - fn
        if (fp, fn) in seen or k == 0:
            continue
        seen.add((fp, fn))
        rows.append({"cut": float(cut), "k": k, "fp": fp, "fn": fn})
    return rows


def shape_free_record(groups, delta: float, tails: dict | None = None) -> dict:
    """Tabulate every cut point of the score groups (and the tail set) for the shape-free bound.

    ``groups`` are :class:`~bayes_dp.GdpEvidence` (their merged counts); ``tails`` maps a
    group's name to its :func:`tail_thresholds` rows. Returns the record stored as
    ``post.settings["shape_free"]``: the levels, the share of the error of each set
    (``alpha``), and per threshold its set (``"bins"`` or ``"tail"``), group, cut point,
    counts and quantiles of eps.
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
                    "set": "bins",
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
    tail_rows = []
    for ev in groups:
        for t in (tails or {}).get(ev.name, []):
            q = threshold_quantiles(t["fp"], ev.n_out, t["fn"], ev.n_in, delta)
            cp = threshold_cp_upper_rates(t["fp"], ev.n_out, t["fn"], ev.n_in, delta)
            tail_rows.append(
                {
                    "set": "tail",
                    "group": ev.name,
                    "cut": t["cut"],
                    "k": t["k"],
                    "fp": t["fp"],
                    "n_out": ev.n_out,
                    "fn": t["fn"],
                    "n_in": ev.n_in,
                    "quantiles": [float(x) for x in q],
                    "cp": [float(x) for x in cp],
                }
            )
    alpha = {"bins": 1.0 - TAIL_ALPHA, "tail": TAIL_ALPHA} if tail_rows else {"bins": 1.0}
    return {
        "delta": delta,
        "s": 1.0,
        "alpha": alpha,
        "eps_prior": f"HalfNormal({EPS_PRIOR_SCALE:g})",
        "levels": [float(x) for x in LEVELS],
        "thresholds": rows + tail_rows,
    }
