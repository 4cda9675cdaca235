"""The claim of a posterior on score-matrix evidence: the per-target frequentist bound first.

:func:`bayes_dp.audit_claim` calls :func:`score_matrix_words` for a posterior whose evidence
includes score-matrix groups (groups that record a ``dependence`` diagnostic:
``mia.ScoreMatrixCounts.to_evidence()``, the CLI on a score file or a result folder). On
Laplace-mechanism score matrices the binomial posterior's 90% interval lay entirely above the
true eps in 16 of 100 audits (95% CI 9-25%), while the largest per-target Clopper-Pearson bound
lay above it in 0 of 200 audits per design (``docs/lira.md``, "The claim on score-matrix
evidence"). So the claim's lower end is the smaller of the two and the sentence states the
frequentist bound first, the posterior's lower end after it as what the model says.

The bound needs the per-target counts and the design effects; both are in the posterior's
settings already (``settings["groups"][i]["counts"]`` and the ``dependence`` record's
``fp_design_effect`` and ``fn_design_effect``), so nothing new is stored for it; the record's
``skipped_targets`` (written by ``to_evidence``) maps a row of the counts back to its column of
the score matrix. Reads the settings only (no model code), so it sits beside ``claim.py``; the
bound itself is :func:`bayes_dp.core.region.clopper_pearson_target_bounds`, the one place it is
computed (``mia.companion_bounds`` calls it too).
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.region import clopper_pearson_target_bounds

#: Where the docs give the decision and the measured figures.
DOCS = 'docs/lira.md, "The claim on score-matrix evidence"'


def _score_groups(st: dict) -> list[dict]:
    """Return the groups of ``st`` from a score matrix (a ``dependence`` record and counts)."""
    return [
        g
        for g in st.get("groups", [])
        if isinstance(g, dict)
        and isinstance(g.get("dependence"), dict)
        and isinstance(g.get("counts"), dict)
    ]


def _column(rec: dict, row: int) -> int | None:
    """Return the score-matrix column of counts row ``row`` (None when the record cannot say)."""
    skipped = rec.get("skipped_targets")
    if skipped is None:
        return None
    skipped = np.unique(np.asarray(skipped, dtype=np.int64))
    # rows are the kept columns in increasing order: the row-th column not skipped
    col = row
    for s in skipped:
        if s <= col:
            col += 1
        else:
            break
    return int(col)


def score_matrix_bound(st: dict, prob: float) -> dict | None:
    """Return the max-over-targets Clopper-Pearson bound on effective counts (None if none).

    Over all score-matrix groups of the settings ``st``: every target's FP and FN counts are
    deflated by its group's design effects (floored at 1; groups recorded ``corrected``
    already hold effective counts and are not deflated again), each of the ``2 T`` rates of all
    ``T`` targets gets its Clopper-Pearson interval at level ``1 - (1 - prob) / (2 T)``, and
    the largest per-target eps bound at the posterior's delta is kept
    (:func:`~bayes_dp.core.region.clopper_pearson_target_bounds`). The same on the raw counts
    is returned beside it.

    Returns
    -------
    dict or None
        ``lower`` (the bound on effective counts), ``raw_lower`` (on raw counts), ``group``,
        ``row`` (of the group's counts), ``target`` (its score-matrix column, or None when the
        record does not say), ``fp``, ``n_neg``, ``fn``, ``n_pos`` (its raw counts),
        ``fp_design_effect``, ``fn_design_effect`` (the deflation applied), ``n_rates``,
        ``confidence``, ``level`` (of each rate's interval), ``n_targets`` and ``n_positive``
        (targets whose own bound is above 0: those that drive the lower end). None without a
        score-matrix group or a recorded delta.
    """
    groups = _score_groups(st)
    delta = st.get("delta")
    if not groups or delta is None:
        return None
    sizes = [len(np.atleast_1d(g["counts"]["fp"])) for g in groups]
    n_rates = 2 * sum(sizes)
    best = None
    n_positive = 0
    raw_lower = 0.0
    for g, size in zip(groups, sizes, strict=True):
        rec = g["dependence"]
        c = {k: np.atleast_1d(np.asarray(g["counts"][k])) for k in ("fp", "n_neg", "fn", "n_pos")}
        c = {k: np.broadcast_to(v, (size,)) for k, v in c.items()}
        if rec.get("corrected", False):
            f_fp = f_fn = 1.0
        else:
            f_fp = max(float(rec.get("fp_design_effect") or 1.0), 1.0)
            f_fn = max(float(rec.get("fn_design_effect") or 1.0), 1.0)
        args = (c["fp"], c["n_neg"], c["fn"], c["n_pos"], delta, prob)
        eff = clopper_pearson_target_bounds(
            *args, n_rates=n_rates, fp_design_effect=f_fp, fn_design_effect=f_fn
        )
        raw = clopper_pearson_target_bounds(*args, n_rates=n_rates)
        raw_lower = max(raw_lower, float(raw.max()))
        n_positive += int(np.sum(eff > 0))
        i = int(np.argmax(eff))
        if best is None or eff[i] > best["lower"]:
            best = {
                "lower": float(eff[i]),
                "group": g.get("name", "?"),
                "row": i,
                "target": _column(rec, i),
                **{k: int(c[k][i]) for k in ("fp", "n_neg", "fn", "n_pos")},
                "fp_design_effect": f_fp,
                "fn_design_effect": f_fn,
                "corrected": bool(rec.get("corrected", False)),
            }
    best.update(
        raw_lower=raw_lower,
        n_rates=n_rates,
        confidence=prob,
        level=(1.0 - prob) / n_rates,
        n_targets=n_rates // 2,
        n_positive=n_positive,
    )
    return best


def _pct(p: float) -> str:
    return f"{100 * p:g}%"


def score_matrix_words(
    st: dict, prob: float, lower: float, words: list[str], at: str, strength: str
) -> tuple[float, list[str], dict]:
    """Rewrite the claim of a posterior with score-matrix groups (identity without any).

    ``words`` are the sentences :func:`bayes_dp.audit_claim` wrote for the posterior's own
    interval, ``lower`` its (1 - ``prob``) quantile. Returns the lower end the claim states
    (the smaller of ``lower`` and the frequentist bound), the new sentences and the extra
    fields of :class:`~bayes_dp.AuditClaim` (``posterior_lower``, ``frequentist_lower``,
    ``frequentist``; empty without a score-matrix group).
    """
    fb = score_matrix_bound(st, prob)
    if fb is None:
        return lower, words, {}
    f = fb["lower"]
    claim = min(lower, f)
    extra = {"posterior_lower": lower, "frequentist_lower": f, "frequentist": fb}
    who = (
        f"target {fb['target']} (score-matrix column)"
        if fb["target"] is not None
        else f"row {fb['row']} of the counts"
    )
    how = (
        "the recorded counts, already deflated by their design effects"
        if fb["corrected"]
        else (
            f"each target's FP and FN counts and trials divided by its group's design effects "
            f"(FP {fb['fp_design_effect']:.2f}, FN {fb['fn_design_effect']:.2f})"
        )
    )
    what = (
        f"the largest per-target Clopper-Pearson bound of the score matrix on effective counts "
        f"({how}, each deflated count's binomial tail assumed; all {fb['n_rates']} rates at "
        f"level {1 - prob:g}/{fb['n_rates']}, Bonferroni)"
    )
    if fb["n_positive"]:
        where = (
            f"; it is set by {who} of group {fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, FN "
            f"{fb['fn']}/{fb['n_pos']}), and {fb['n_positive']} of {fb['n_targets']} targets "
            "have a bound of their own above 0 (the targets that drive the lower end)"
        )
    else:
        where = (
            f"; no target's own bound is above 0 (of {fb['n_targets']}): at this confidence "
            "the score matrix shows no eps above 0 without a model"
        )
    raw = f"; on the raw counts the same bound is {fb['raw_lower']:.3g}"
    if claim >= f:
        first = (
            f"With {_pct(prob)} confidence, eps >= {f:.3g}{at}, whatever the attack strength: "
            f"{what}{where}{raw}."
        )
    else:
        first = (
            f"With {_pct(prob)} confidence, eps >= {claim:.3g}{at}: the smaller of the model's "
            f"lower end (next sentence) and {what}, {f:.3g}{where}{raw}."
        )
    model = (
        f"What the model says (not the finding): with {_pct(prob)} posterior probability, eps >= "
        f"{lower:.3g}{at}{strength}; on Laplace-mechanism score matrices the binomial "
        "posterior's 90% interval lay entirely above the true eps in 16 of 100 audits "
        f"({DOCS})."
    )
    return claim, [first, model, *words[1:]], extra
