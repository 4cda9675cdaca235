"""Side by side: the whole-ROC posterior, a single-threshold posterior and frequentist bounds."""

from __future__ import annotations

import numpy as np
from scipy import special

from bayes_dp.core.priors import Beta, Prior
from bayes_dp.core.region import clopper_pearson_epsilon, clopper_pearson_interval
from bayes_dp.core.validation import check_delta, check_real
from bayes_dp.gdp.core import gdp_epsilon, gdp_evidence
from bayes_dp.one_run.core import OneRunCounts, estimate_one_run, one_run_epsilon_bound
from bayes_dp.results.claim_gdp import shape_free_lower

__all__ = ["compare_estimators", "gdp_lower_bound", "one_run_counts_from_scores"]


def _threshold_counts(ev, in_scores, out_scores):
    """Return the cut points and the FP and FN counts when "member" is decided above each."""
    x_in = np.asarray(in_scores, dtype=np.float64)
    x_out = np.asarray(out_scores, dtype=np.float64)
    cuts = ev.edges
    fp = np.array([int(np.sum(x_out > c)) for c in cuts])
    fn = np.array([int(np.sum(x_in <= c)) for c in cuts])
    return cuts, fp, fn


#: Guesses per side of the one-run audit read from scores, as fractions of the pooled scores:
#: the top k are guessed "in" and the bottom k "out", for each k tried (fixed in advance).
ONE_RUN_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def one_run_counts_from_scores(in_scores, out_scores, k) -> OneRunCounts:
    """Read scores as one-run audits: guess "in" for the top ``k`` and "out" for the bottom ``k``.

    Every score is a canary (``m = len(in_scores) + len(out_scores)``); for each ``k`` the
    auditor guesses for ``r = 2 k`` of them (the k highest pooled scores "member", the k lowest
    "non-member", abstaining on the rest) and ``v`` counts the right guesses, as in Steinke,
    Nasr and Jagielski (2023). Ties are broken by the order of the scores (in-scores first).

    Parameters
    ----------
    in_scores, out_scores : array_like of float
        Scores of members and non-members; higher means "member".
    k : int or sequence of int
        Guesses per side, ``1 <= k <= m / 2``; one audit row per value.

    Returns
    -------
    OneRunCounts

    Examples
    --------
    >>> c = one_run_counts_from_scores([3.0, 2.0, 0.5], [0.0, 1.0, 2.5], k=[1, 2])
    >>> c.r.tolist(), c.v.tolist()
    ([2, 4], [2, 2])
    """
    from bayes_dp.core.validation import check_int_array, check_scores

    x_in = check_scores("in_scores", in_scores)
    x_out = check_scores("out_scores", out_scores)
    m = x_in.size + x_out.size
    ks = check_int_array("k", k, min_value=1)
    if ks.max() > m // 2:
        raise ValueError(f"`k` must be <= m / 2 = {m // 2}; found {int(ks.max())}")
    member = np.concatenate([np.ones(x_in.size, bool), np.zeros(x_out.size, bool)])
    order = np.argsort(np.concatenate([x_in, x_out]), kind="stable")
    ranked = member[order]  # lowest score first
    right_low = np.cumsum(~ranked)  # non-members among the j lowest
    right_top = np.cumsum(ranked[::-1])  # members among the j highest
    v = right_low[ks - 1] + right_top[ks - 1]
    return OneRunCounts(m=m, r=2 * ks, v=v)


def gdp_lower_bound(in_scores, out_scores, *, delta: float, confidence: float = 0.95, bins=None):
    """Frequentist lower bound of mu (and eps at ``delta``) from the ROC's Pareto frontier.

    At each threshold (the cut points of :func:`~bayes_dp.gdp_evidence`, fixed without looking
    at membership) the error rates get Clopper-Pearson upper bounds, all 2T of them together
    at ``confidence`` (union bound). Any test of a mu-GDP mechanism has
    ``FNR >= Phi(Phi^-1(1 - FPR) - mu)``, so ``mu >= Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi)`` at
    every threshold; the largest is the bound (the idea of Nasr et al. 2023 and jax_privacy's
    ``epsilon_from_gdp``). The bound on mu holds for any mechanism; eps at delta assumes the
    mechanism's privacy profile is exactly the Gaussian one.

    Parameters
    ----------
    in_scores, out_scores : array_like of float
        Scores; higher means "member".
    delta : float
        In (0, 1).
    confidence : float
        Joint confidence level in (0, 1).
    bins : int or array_like of float, optional
        As in :func:`~bayes_dp.gdp_evidence`.

    Returns
    -------
    dict
        ``{"mu": bound, "eps": eps at delta, "threshold": the cut point that gives it}``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> b = gdp_lower_bound(rng.normal(2, 1, 1000), rng.normal(0, 1, 1000), delta=1e-5)
    >>> bool(1.5 < b["mu"] < 2.0)
    True
    """
    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    ev = gdp_evidence(in_scores, out_scores, bins=bins)
    cuts, fp, fn = _threshold_counts(ev, in_scores, out_scores)
    level = 1.0 - (1.0 - confidence) / (2 * cuts.size)
    fpr_hi = clopper_pearson_interval(fp, ev.n_out, level)[1]
    fnr_hi = clopper_pearson_interval(fn, ev.n_in, level)[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mus = special.ndtri(1.0 - fpr_hi) - special.ndtri(fnr_hi)
    mus = np.where(np.isfinite(mus), mus, 0.0)
    best = int(np.argmax(mus))
    mu = max(float(mus[best]), 0.0)
    return {"mu": mu, "eps": float(gdp_epsilon(mu, delta)), "threshold": float(cuts[best])}


def compare_estimators(
    in_scores,
    out_scores,
    *,
    delta: float,
    s: Beta | float = 1.0,
    prior: Prior | None = None,
    bins=None,
    confidence: float = 0.9,
    one_run_k=None,
    seed=None,
    companion: dict | None = None,
):
    """One table: the whole-ROC posterior, a single-threshold posterior, frequentist bounds.

    Rows (eps at ``delta``):

    * ``whole ROC posterior (GDP)``: :func:`~bayes_dp.estimate_gdp` on the binned scores;
    * ``shape-free bound (fixed thresholds)``: the bound :func:`~bayes_dp.audit_claim` states
      first for that posterior: the best single-threshold lower end (count model, s = 1) over
      the cut points and the tail set, fixed without looking at membership, Bonferroni-adjusted
      within each (its level is
      ``(1 + confidence) / 2``, the one-sided level of the intervals' lower ends);
    * ``single threshold posterior``: :func:`~bayes_dp.estimate_epsilon` on the counts at one
      threshold, the cut point whose own Clopper-Pearson eps bound (at ``confidence``, no
      correction) is largest: chosen on the same data, which flatters it;
    * ``Clopper-Pearson, best threshold``: :func:`~bayes_dp.clopper_pearson_epsilon` over all
      cut points with the union-bound correction for their number;
    * ``GDP bound, Pareto frontier``: :func:`gdp_lower_bound`;
    * ``one-run bound (Steinke et al.)``: the scores read as one-run audits
      (:func:`one_run_counts_from_scores`) for each k of ``one_run_k`` fixed in advance,
      :func:`~bayes_dp.one_run_epsilon_bound` at ``delta`` for each with the confidence
      corrected for their number (Bonferroni), the largest bound kept;
    * ``one-run posterior``: :func:`~bayes_dp.estimate_one_run` on the audit of the k that
      gave that bound (chosen on the same data, which flatters it), with the same s.
      It is the eps of a randomized-response-like (pure eps-DP) mechanism explaining the
      guesses, not eps at ``delta`` of a Gaussian mechanism.
    * with ``companion``: one row per bound of :func:`mia.bounds.companion_bounds` (the
      score matrix's max-over-targets Clopper-Pearson bound, the same on effective counts,
      the per-model one-run bound), named ``"<bound> (score matrix)"``.

    Parameters
    ----------
    in_scores, out_scores : array_like of float
        Scores; higher means "member".
    delta : float
        In (0, 1).
    s : Beta or float
        Attack strength of the GDP posterior (see :func:`~bayes_dp.estimate_gdp`).
    prior : Prior, optional
        Prior of the single-threshold posterior; default ``Prior(s=s)`` (the same strength).
    bins : int or array_like of float, optional
        Binning (:func:`~bayes_dp.gdp_evidence`); its cut points are the thresholds tried.
    confidence : float
        Probability of the credible intervals and confidence of the bounds, in (0, 1).
    one_run_k : int or sequence of int, optional
        Guesses per side of the one-run audits tried. Default: the fractions
        :data:`ONE_RUN_FRACTIONS` of the pooled scores. Choosing k after looking at the
        results would need the same multiplicity correction over every k looked at.
    seed : int, numpy.random.Generator or None
        Seeds both posteriors.
    companion : dict, optional
        The frequentist bounds of the score matrix behind the scores
        (:func:`mia.bounds.companion_bounds`, at the same ``delta``); its rows are appended.

    Returns
    -------
    pandas.DataFrame
        Index the seven rows above; columns ``lower`` (the ``(1 - confidence) / 2`` quantile
        of a posterior, or the bound at ``confidence``), ``median`` and ``upper`` (posteriors
        only; NaN for bounds), ``width``, ``assumes`` and ``gaussian_shape`` (True for the rows
        whose eps assumes the Gaussian shape, :data:`GAUSSIAN_SHAPE_ROWS`: on a mechanism that
        is not Gaussian they can lie above its eps).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> tab = compare_estimators(rng.normal(2, 1, 500), rng.normal(0, 1, 500), delta=1e-5,
    ...                          seed=1)  # doctest: +SKIP
    >>> list(tab.columns)  # doctest: +SKIP
    ['lower', 'median', 'upper', 'width', 'assumes', 'gaussian_shape']
    """
    import pandas as pd

    from bayes_dp.core.observations import AttackCounts
    from bayes_dp.core.validation import as_generator
    from bayes_dp.gdp.core import estimate_gdp
    from bayes_dp.inference.estimate import estimate_epsilon

    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    rng = as_generator(seed)
    prior = Prior(s=s) if prior is None else prior
    ev = gdp_evidence(in_scores, out_scores, bins=bins)
    cuts, fp, fn = _threshold_counts(ev, in_scores, out_scores)
    q = [(1 - confidence) / 2, 0.5, (1 + confidence) / 2]
    rows = {}

    # from the scores (binned as ``ev``), so that the shape-free row has the tail set as well
    post = estimate_gdp(in_scores, out_scores, bins=bins, delta=delta, s=s, seed=rng)
    lo, med, hi = post.quantile(q, "eps")
    rows["whole ROC posterior (GDP)"] = (lo, med, hi, "binormal ROC (mu-GDP), mu_i in [s mu, mu]")
    sf = shape_free_lower(post.settings.get("shape_free"), (1 + confidence) / 2)
    rows["shape-free bound (fixed thresholds)"] = (
        sf["lower"],
        np.nan,
        np.nan,
        f"none; best of {sf['n_thresholds']} thresholds fixed in advance, single-threshold "
        "posteriors (s = 1), Bonferroni",
    )

    per_cut = [
        clopper_pearson_epsilon(f, ev.n_out, n, ev.n_in, delta, confidence)[0]
        for f, n in zip(fp, fn, strict=True)
    ]
    best = int(np.argmax(per_cut))
    counts = AttackCounts(fp=fp[best], n_neg=ev.n_out, fn=fn[best], n_pos=ev.n_in)
    single = estimate_epsilon(counts, delta=delta, prior=prior, seed=rng, progress=False)
    lo, med, hi = single.quantile(q, "eps")
    rows["single threshold posterior"] = (
        lo,
        med,
        hi,
        f"errors uniform on R(eps) minus R(s eps); threshold {cuts[best]:.4g} picked on the data",
    )

    cp_lo = clopper_pearson_epsilon(fp, ev.n_out, fn, ev.n_in, delta, confidence)[0]
    rows["Clopper-Pearson, best threshold"] = (
        cp_lo,
        np.nan,
        np.nan,
        f"none (union bound over {cuts.size} thresholds)",
    )
    g = gdp_lower_bound(in_scores, out_scores, delta=delta, confidence=confidence, bins=bins)
    rows["GDP bound, Pareto frontier"] = (
        g["eps"],
        np.nan,
        np.nan,
        "mu bound: none; eps from it: Gaussian privacy profile",
    )
    m = ev.n_in + ev.n_out
    if one_run_k is None:
        one_run_k = sorted({max(1, int(f * m / 2)) for f in ONE_RUN_FRACTIONS})
    runs = one_run_counts_from_scores(in_scores, out_scores, one_run_k)
    corrected = 1.0 - (1.0 - confidence) / len(runs)
    bounds = one_run_epsilon_bound(runs, delta=delta, confidence=corrected)
    pick = int(np.argmax(bounds))
    r, v = int(runs.r[pick]), int(runs.v[pick])
    rows["one-run bound (Steinke et al.)"] = (
        float(bounds[pick]),
        np.nan,
        np.nan,
        f"none; m={m}, best of {len(runs)} k fixed in advance (Bonferroni): r={r}, v={v}",
    )
    best_run = OneRunCounts(m=m, r=r, v=v)
    post_1 = estimate_one_run(best_run, delta=delta, prior=prior, seed=rng)
    lo, med, hi = post_1.quantile(q, "eps")
    rows["one-run posterior"] = (
        lo,
        med,
        hi,
        f"v binomial, accuracy uniform on [q(s eps), q(eps)] (pure eps-DP); r={r} picked "
        "on the data",
    )
    if companion is not None:
        if not isinstance(companion, dict) or "bounds" not in companion:
            raise TypeError(
                "`companion` must be the dict of mia.bounds.companion_bounds; found "
                f"{type(companion).__name__}"
            )
        if companion.get("delta") != delta:
            raise ValueError(
                f"`companion` was computed at delta={companion.get('delta')!r}; found "
                f"delta={delta!r} here"
            )
        for b in companion["bounds"]:
            eps = np.nan if b["eps"] is None else float(b["eps"])
            at = f" ({100 * companion['confidence']:g}% confidence)"
            rows[f"{b['name']} (score matrix)"] = (eps, np.nan, np.nan, b["assumes"] + at)
    tab = pd.DataFrame.from_dict(
        rows, orient="index", columns=["lower", "median", "upper", "assumes"]
    )
    tab.insert(3, "width", tab["upper"] - tab["lower"])
    tab["gaussian_shape"] = [name in GAUSSIAN_SHAPE_ROWS for name in tab.index]
    return tab


#: Rows of :func:`compare_estimators` whose eps assumes the Gaussian shape (the binormal ROC,
#: or the Gaussian privacy profile that turns a bound on mu into eps at delta).
GAUSSIAN_SHAPE_ROWS = ("whole ROC posterior (GDP)", "GDP bound, Pareto frontier")
