"""The claim of a Gaussian-DP posterior: the shape-free bound first, the Gaussian figure if fit.

:func:`bayes_dp.audit_claim` calls :func:`gdp_words` for posteriors of
:func:`bayes_dp.estimate_gdp`. eps at small delta from the whole ROC is the Gaussian shape's
extrapolation into the tail, so the sentence states first what holds for any mechanism: the
best single-threshold lower end over the cut points fixed without looking at membership,
Bonferroni-adjusted (``post.settings["shape_free"]``, tabulated by
``bayes_dp.gdp.shape_free``). The whole-ROC figure follows as what holds *if* the mechanism
is Gaussian, with the fit check's verdict in the same sentence; when the check fails, the
sentence says so first and the whole-ROC figure is not stated as a finding. One-run audits
without score groups (no shape-free bound): the claim's lower end is their f-DP bound
(:func:`one_run_gdp_lower`, Mahloujifar, Melis and Chaudhuri), which holds if the mechanism is
Gaussian; the posterior's quantile is stated as the model's figure only
(``docs/validation/one_run_gdp.md``). Reads the posterior's settings only (no model code), so
it sits beside ``claim.py``.
"""

from __future__ import annotations

import math

import numpy as np

#: Posterior predictive p-value below which the Gaussian shape is said not to fit (the value
#: of ``bayes_dp.gdp.core.FIT_P_MIN``, repeated here so that this module reads settings only).
FIT_P_MIN = 0.01


def shape_free_lower(record: dict | None, prob: float) -> dict | None:
    """Return the shape-free lower bound at posterior probability ``prob`` (None if none).

    The error ``1 - prob`` is split between the record's threshold sets by its ``alpha``
    shares (the groups' cut points, ``"bins"``, and the tail set, ``"tail"``; one set in
    records without them), Bonferroni within each: a threshold of a set with share w and T_set
    thresholds is read at tail probability ``(1 - prob) w / T_set`` (interpolated in log level
    between the stored levels), as the smaller of its count posterior's quantile and its
    Clopper-Pearson bound; the largest over thresholds is the bound. Returns a dict with
    ``lower``, ``n_thresholds``, ``level`` and the chosen threshold's ``set``, ``group``,
    ``cut``, ``fp``, ``n_out``, ``fn``, ``n_in``, ``tpr`` and ``fpr``.
    """
    if not record or not record.get("thresholds"):
        return None
    rows = record["thresholds"]
    levels = np.log(np.asarray(record["levels"], dtype=np.float64))
    sets = [r.get("set", "bins") for r in rows]
    share = record.get("alpha") or {"bins": 1.0}
    row_level = [(1.0 - prob) * share[k] / sets.count(k) for k in sets]
    lows = []
    for r, lv in zip(rows, row_level, strict=True):
        x = math.log(max(lv, math.exp(levels[0])))
        lows.append(
            min(
                float(np.interp(x, levels, np.asarray(r["quantiles"]))),
                float(np.interp(x, levels, np.asarray(r.get("cp", r["quantiles"])))),
            )
        )
    best = int(np.argmax(lows))
    r = rows[best]
    out = {k: r[k] for k in ("group", "cut", "fp", "n_out", "fn", "n_in")}
    out.update(
        lower=max(lows[best], 0.0),
        n_thresholds=len(rows),
        level=row_level[best],
        set=sets[best],
        n_set=sets.count(sets[best]),
        tpr=(r["n_in"] - r["fn"]) / r["n_in"],
        fpr=r["fp"] / r["n_out"],
    )
    return out


def one_run_gdp_lower(st: dict, prob: float) -> dict | None:
    """Return the f-DP one-run bound of a Gaussian-DP posterior's one-run audits (None if none).

    Each audit's largest rejected mu (:func:`bayes_dp.core.one_run_bound.one_run_gdp_bounds`;
    Mahloujifar, Melis and Chaudhuri, arXiv 2410.22235) at confidence ``1 - (1 - prob) / k``
    for ``k`` audits (Bonferroni), the largest kept, and its eps at the posterior's delta,
    ``gdp_epsilon(mu, delta)``: what holds if the mechanism is Gaussian (mu-GDP), whatever
    the guesser (no attack strength, no binomial model of the guesses). Rows recorded with
    ``pairs`` (matched pairs: each pair's coin is sqrt(2) mu-GDP) are converted back.

    Parameters
    ----------
    st : dict
        A Gaussian-DP posterior's settings (``delta`` and ``groups`` of ``kind`` ``"one_run"``
        with ``m``, ``r``, ``v``, optionally ``pairs``).
    prob : float
        Confidence, in (0, 1).

    Returns
    -------
    dict or None
        ``lower`` (eps), ``mu``, ``row``, ``m``, ``r``, ``v``, ``pairs``, ``n_audits``,
        ``level`` (of each audit's test) and ``confidence``.
    """
    from bayes_dp.core.gaussians import gaussian_epsilon_array
    from bayes_dp.core.one_run_bound import one_run_gdp_bounds

    groups = [g for g in st.get("groups", []) if isinstance(g, dict) and g.get("kind") == "one_run"]
    delta = st.get("delta")
    if not groups or delta is None:
        return None
    rows = []
    for g in groups:
        m, r, v = (np.atleast_1d(np.asarray(g[k], dtype=np.int64)) for k in ("m", "r", "v"))
        pairs = np.broadcast_to(np.asarray(g.get("pairs", False), dtype=bool), m.shape)
        rows += list(zip(m.tolist(), r.tolist(), v.tolist(), pairs.tolist(), strict=True))
    k = len(rows)
    level = (1.0 - prob) / k
    mus = [float(one_run_gdp_bounds(m, r, v, 1.0 - level, pairs=p)[0]) for m, r, v, p in rows]
    i = int(np.argmax(mus))
    m, r, v, p = rows[i]
    eps = float(gaussian_epsilon_array(np.asarray([mus[i]]), float(delta))[0])
    return {
        "lower": eps,
        "mu": mus[i],
        "row": i,
        "m": m,
        "r": r,
        "v": v,
        "pairs": p,
        "n_audits": k,
        "level": level,
        "confidence": prob,
    }


def shape_verdict(st: dict) -> tuple[str, dict]:
    """Return the fit check's verdict (``"fits"``, ``"does not fit"``, ``"not checked"``).

    Also the p-values of the score groups that fail (or all, when none fails).
    """
    checks = st.get("fit_check")
    if not checks:
        return "not checked", {}
    bad = {k: float(p) for k, p in checks.items() if p < FIT_P_MIN}
    if bad:
        return "does not fit", bad
    return "fits", {k: float(p) for k, p in checks.items()}


def _pct(p: float) -> str:
    return f"{100 * p:g}%"


def gdp_words(
    st: dict,
    prob: float,
    lower: float,
    upper: float,
    words: list[tuple[str, str]],
    at: str,
    strength: str,
) -> tuple[float, list[tuple[str, str]], dict]:
    """Rewrite the claim of a Gaussian-DP posterior.

    ``words`` are the named parts (:mod:`bayes_dp.results.claim_parts`)
    :func:`bayes_dp.audit_claim` wrote for the posterior's own interval [``lower``, ``upper``].
    Returns the lower end the claim states first, the new parts and the extra fields of
    :class:`~bayes_dp.AuditClaim` (``gaussian_shape``, ``gaussian_lower``, ``shape_free_lower``,
    ``shape_free``, ``set_by``).
    """
    kinds = {g.get("kind") for g in st.get("groups", [])}
    verdict, pvals = shape_verdict(st)
    if "gdp" not in kinds:
        verdict = "not checked"
    sf = shape_free_lower(st.get("shape_free"), prob)
    extra = {
        "gaussian_shape": verdict,
        "gaussian_lower": lower,
        "shape_free_lower": None if sf is None else sf["lower"],
        "shape_free": sf,
    }
    others = []
    if "counts" in kinds:
        others.append("count groups through eps_c = gdp_epsilon(mu, delta_c)")
    if "one_run" in kinds:
        others.append("one-run audits through the GDP accuracy band")
    other_note = (
        f" The {' and '.join(others)} assume the Gaussian shape as well (no fit check covers them)."
        if others
        else ""
    )
    fdp = one_run_gdp_lower(st, prob) if sf is None else None
    if fdp is not None:
        coins = "coin pairs" if fdp["pairs"] else "coins"
        audits = "1 audit" if fdp["n_audits"] == 1 else f"{fdp['n_audits']} audits, each"
        first = (
            f"With {_pct(prob)} confidence, if the mechanism is Gaussian (mu-GDP), eps >= "
            f"{fdp['lower']:.3g}{at} (mu >= {fdp['mu']:.3g}), whatever the guesser: the f-DP "
            "one-run bound (Mahloujifar, Melis and Chaudhuri) of audit "
            f"{fdp['row']} ({fdp['v']} of {fdp['r']} guesses right on {fdp['m']} {coins}; "
            f"{audits} at level {1 - prob:g}/{fdp['n_audits']}, Bonferroni)."
        )
        model = (
            f"The model's figure: {_pct(prob)} posterior probability that eps >= {lower:.3g}"
            f"{at}{strength} (the right guesses binomial, their accuracy in the GDP band of the "
            "most confident guesses: a model of the guesser, not a bound)."
        )
        extra.update(frequentist_lower=fdp["lower"], frequentist=fdp)
        if others != ["one-run audits through the GDP accuracy band"]:
            model += other_note
        extra["set_by"] = (
            f"if the mechanism is Gaussian, set by the f-DP one-run bound of audit {fdp['row']} "
            f"({fdp['v']} of {fdp['r']} guesses right on {fdp['m']} {coins})"
        )
        return fdp["lower"], [("bound", first), ("model", model), *words[1:]], extra
    if sf is None:
        note = (
            " This assumes the mechanism is Gaussian (mu-GDP): "
            + "; ".join(others or ["the binormal ROC"])
            + "; without score groups (or with the shape-free bound not tabulated) there is "
            "no bound that holds for any mechanism."
        )
        extra["set_by"] = "if the mechanism is Gaussian, set by the posterior of mu"
        return lower, [(words[0][0], words[0][1] + note), *words[1:]], extra
    cut = "" if sf["cut"] is None else f" at score {sf['cut']:.4g}"
    where = (
        f"group {sf['group']!r}{cut}: {sf['fp']} of {sf['n_out']} out-scores above, "
        f"{sf['fn']} of {sf['n_in']} in-scores at or below, TPR {sf['tpr']:.3g} at FPR "
        f"{sf['fpr']:.3g}"
    )
    n_tail = sf["n_set"] if sf["set"] == "tail" else sf["n_thresholds"] - sf["n_set"]
    split = st.get("shape_free", {}).get("alpha", {})
    if n_tail and "tail" in split:
        w_t = split["tail"]
        level = (
            f"level {1 - prob:g} x {1 - w_t:.3g} over the {sf['n_thresholds'] - n_tail} cut points "
            f"of the fit and {1 - prob:g} x {w_t:.3g} over {n_tail} tail thresholds (Bonferroni "
            f"within each; the best a {'tail threshold' if sf['set'] == 'tail' else 'cut point'}, "
        )
    else:
        level = f"level {1 - prob:g}/{sf['n_thresholds']} (Bonferroni; "
    free = (
        f"With {_pct(prob)} posterior probability and {_pct(prob)} confidence, eps >= "
        f"{sf['lower']:.3g}{at} whatever the shape of the mechanism's trade-off curve: the "
        f"best of {sf['n_thresholds']} thresholds fixed without looking at membership, each "
        "the smaller of its single-threshold posterior's lower end (count model, s = 1) and "
        f"its Clopper-Pearson bound, at {level}{where})."
    )
    extra["set_by"] = (
        f"whatever the mechanism's trade-off curve, set by the best of {sf['n_thresholds']} "
        f"thresholds fixed in advance (group {sf['group']!r}{cut}: FP {sf['fp']}/{sf['n_out']}, "
        f"FN {sf['fn']}/{sf['n_in']})"
    )
    ps = ", ".join(f"{k!r} p = {p:.2g}" for k, p in pvals.items())
    if verdict == "does not fit":
        first = (
            f"THE GAUSSIAN SHAPE DOES NOT FIT these scores (fit check {ps} < {FIT_P_MIN}): the "
            f"whole-ROC figures (eps >= {lower:.3g}{at}, interval [{lower:.3g}, {upper:.3g}]) "
            "extrapolate a shape the data contradict and are not a finding."
        )
        return (
            sf["lower"],
            [
                ("gaussian shape", first),
                ("bound", "What holds without that shape: " + free),
            ],
            extra,
        )
    check = f"the fit check passes: {ps}" if verdict == "fits" else "its fit check was not run"
    gauss = (
        f"If the mechanism is Gaussian (mu-GDP; {check}), the whole ROC gives eps >= "
        f"{lower:.3g}{at}{strength}."
    )
    return sf["lower"], [("bound", free), ("model", gauss + other_note), *words[1:]], extra
