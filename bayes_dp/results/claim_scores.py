"""The claim of a posterior on score-matrix evidence: the per-target frequentist bound first.

:func:`bayes_dp.audit_claim` calls :func:`score_matrix_words` for a posterior whose evidence
includes score-matrix groups (groups that record a ``dependence`` diagnostic:
``mia.ScoreMatrixCounts.to_evidence()``, the CLI on a score file or a result folder). On
Laplace-mechanism score matrices the binomial posterior's 90% interval lay entirely above the
true eps in 16 of 100 audits (95% CI 9-25%), the exposure mixture's read as made in 36 of 50
(:data:`MODEL_ACCUSATIONS`), while the largest per-target Clopper-Pearson bound
lay above it in 0 of 200 audits per design (``docs/validation/lira.md``, "The claim on score-matrix
evidence"). So the claim's lower end is the frequentist bound and the sentence states it
first, the posterior's lower end after it as what the model says, above or below it. The
frequentist bound holds without the model; a posterior lower end below it is the model's
reading of the targets that show nothing (each target votes on the shared eps: padding a
matrix with such targets pulls it down, "Padding of the claim"), not evidence against the
bound, so it does not lower the claim (``docs/validation/lira.md``, "The claim's lower end: the
frequentist bound alone").

The frequentist bound is the larger of two parts, each with half of the claim's error
(:data:`POOLED_SHARE`): the per-target bound below, and, where the groups record per-model
rates (``pooled_rates``, from ``mia.counts_from_score_matrix``: a test fitted on a random half
of the models, applied to the other half), the bound pooled over targets with the models as
the units (:func:`bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound`, the finite-sample
betting test of R's lower constraints on rates balanced model by model;
``docs/validation/lira.md``, "The
pooled bound"). The pooled part is what an optimal
attack on many targets alike shows, which the per-target part loses to its correction over
targets; with targets declared in advance it pools over those only.

The bound needs the per-target counts and the design effects; both are in the posterior's
settings already (``settings["groups"][i]["counts"]`` and the ``dependence`` record's
``fp_design_effect`` and ``fn_design_effect``), so nothing new is stored for it; the record's
``skipped_targets`` (written by ``to_evidence``) maps a row of the counts back to its column of
the score matrix. Reads the settings only (no model code), so it sits beside ``claim.py``; the
bound itself is :func:`bayes_dp.core.region.clopper_pearson_target_bounds`, the one place it is
computed (``mia.companion_bounds`` calls it too).

The same function gives the attack's ceiling: the bound of the best target a test at the
recorded level ``alpha`` (the record's ``alpha``) could produce on these trials, its FP count at
the level and no false negative. A posterior whose upper end lies beyond it (and beyond every
target's own bound) has an upper end that no target's evidence could reach: it is the model's
and the prior's, and the claim says so (``upper_source`` ``"attack_level"``). Within the
ceiling, an upper end the prior check did not call the prior's is called the model's
(``"model"``), never the data's: an audit bounds eps from below only, and the binomial band
model with one shared strength puts the upper end far below the strongest target's own eps on
simulated matrices of targets of very different exposure (256 models x 1,000 targets: [0.56,
0.59] where that target's eps is 4.25), an upper end the prior check reads as "data".
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.region import clopper_pearson_target_bounds
from bayes_dp.results.claim_counts import model_quantile_words
from bayes_dp.results.claim_parts import replace

#: Where the docs give the decision and the measured figures.
DOCS = 'docs/validation/lira.md, "The claim on score-matrix evidence"'
#: Where the docs say why a posterior lower end below the frequentist bound leaves the claim.
DOCS_BELOW = 'docs/validation/lira.md, "The claim\'s lower end: the frequentist bound alone"'
#: Where the docs give the bound pooled over targets and its validity.
DOCS_POOLED = 'docs/validation/lira.md, "The pooled bound"'
#: Where the docs measure the pooled bound on decisions that follow the other targets'
#: memberships (the assumption it states).
DOCS_COUPLED = 'docs/validation/pooled_bound.md, "Decisions that follow the other targets"'
#: Where the docs measure the upper end against the strongest target's own eps.
DOCS_UPPER = 'docs/validation/lira.md, "Heterogeneous exposure at scale"'
#: Where the chains' restart at a mode they missed is described and measured.
DOCS_MISSED = 'docs/validation/lira.md, "A mode the chains missed"'
#: How often each score-matrix model's 90% interval lay entirely above the true eps of a Laplace
#: mechanism at mu = 1 (an optimal attack: every target's error point on the boundary of
#: R(1, delta)), 64 models x 64 targets, per-model shift sd 0 and 0.25, online test at alpha
#: 0.1: ``(likelihood, reflect): (audits above the truth, audits, command)``
#: (``docs/validation/lira.md``, "The claim on score-matrix evidence").
MODEL_ACCUSATIONS = {
    ("binomial", True): (16, 100, "--likelihood binomial, seeds 0 and 100"),
    ("binomial", False): (9, 50, "--likelihood binomial --as-made"),
    ("exposure_mixture", True): (10, 10, "--likelihood exposure_mixture --audits 5"),
    ("exposure_mixture", False): (36, 50, "--likelihood exposure_mixture --as-made"),
}
#: Share of the claim's error (1 - its confidence) that goes to the bound pooled over targets
#: (models as units, :func:`bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound`, betting)
#: where the groups record per-model rates (``pooled_rates``); the per-target bounds get the
#: rest. The pooled bound is strong where many targets are exposed alike and weak where a few
#: are (padding dilutes their mean rates); the per-target bound the other way round.
POOLED_SHARE = 0.5
#: Fewest test models (per-model rates) for the pooled bound to enter the claim. The betting
#: bound of a mean over n values in [0, 1] sits at least about log(1 / a) / (0.75 n) above it
#: (5.8 / n at each rate's error a = 0.0125; ``docs/validation/pooled_bound.md``), so with fewer
#: than 16
#: test models its FP bound is above 0.36 + the mean FP rate whatever the data and the pooled
#: bound could say little (at most log(1 / 0.46) = 0.78 at alpha 0.1); the per-target bounds
#: then keep all of the error. 15, not 16: of 32 models' 16 test models the last is never used
#: (:func:`mia.model_rates.model_rates`: its memberships are known from the others').
#: Fixed by the design (the number of models and the memberships), never by the outcomes.
POOLED_MIN_MODELS = 15
#: Targets the claim names (largest own bounds first).
TOP_TARGETS = 5
#: Share of the claim's error (1 - its confidence) that goes to the rates of the targets
#: declared before the audit (``mia.ScoreMatrixCounts.to_evidence(focus=...)``); the other
#: targets share the rest. Where every target is declared, they get all of it.
FOCUS_SHARE = 0.9


def _score_groups(st: dict) -> list[dict]:
    """Return the groups of ``st`` from a score matrix (a ``dependence`` record and counts)."""
    return [
        g
        for g in st.get("groups", [])
        if isinstance(g, dict)
        and isinstance(g.get("dependence"), dict)
        and isinstance(g.get("counts"), dict)
    ]


def _columns(rec: dict, size: int) -> np.ndarray | None:
    """Return the score-matrix columns of the first ``size`` rows of the counts (or None).

    None when the record does not list the skipped targets.
    """
    skipped = rec.get("skipped_targets")
    if skipped is None:
        return None
    skipped = np.unique(np.asarray(skipped, dtype=np.int64))
    # rows are the kept columns in increasing order; the first `size` of them lie below
    # size + (number skipped)
    return np.setdiff1d(np.arange(size + skipped.size), skipped)[:size]


def _column(rec: dict, row: int) -> int | None:
    """Return the score-matrix column of counts row ``row`` (None when the record cannot say)."""
    cols = _columns(rec, row + 1)
    return None if cols is None else int(cols[row])


def _focus_rows(rec: dict, size: int) -> np.ndarray:
    """Return which of the ``size`` rows of a group's counts are targets declared in advance."""
    focus = rec.get("focus_targets")
    cols = _columns(rec, size)
    if not focus or cols is None:
        return np.zeros(size, dtype=bool)
    return np.isin(cols, np.asarray(focus, dtype=np.int64))


def _split_bounds(c: dict, focus: np.ndarray, plan: dict, delta: float, prob: float, **kw):
    """Per-target bounds of counts ``c``, declared rows and the others at their own levels.

    ``plan`` maps True (declared) and False (the others) to ``(n_rates, share)``.
    """
    out = np.zeros(focus.size)
    for declared, (n_rates, share) in plan.items():
        rows = focus == declared
        if rows.any():
            sub = (c[k][rows] for k in ("fp", "n_neg", "fn", "n_pos"))
            out[rows] = clopper_pearson_target_bounds(
                *sub, delta, prob, n_rates=n_rates, share=share, reflect=False, **kw
            )
    return out


def _ceiling(
    c: dict, alpha: float, delta: float, prob: float, n_rates: int, share: float, **deflate
):
    """Return the bounds of the best target a level-``alpha`` test can give on each trial count.

    For every distinct (``n_neg``, ``n_pos``) of the counts ``c``: FP the nearest integer to
    ``alpha * n_neg``, FN 0. Returns ``(bounds, fp, n_neg, n_pos)`` over those distinct pairs.
    """
    pairs = np.unique(np.stack([c["n_neg"], c["n_pos"]], axis=1), axis=0)
    n_neg, n_pos = pairs[:, 0], pairs[:, 1]
    fp = np.rint(alpha * n_neg).astype(np.int64)
    bounds = clopper_pearson_target_bounds(
        fp,
        n_neg,
        np.zeros_like(fp),
        n_pos,
        delta,
        prob,
        n_rates=n_rates,
        share=share,
        reflect=False,
        **deflate,
    )
    return bounds, fp, n_neg, n_pos


def score_matrix_bound(st: dict, prob: float) -> dict | None:
    """Return the max-over-targets Clopper-Pearson bound on effective counts (None if none).

    Over all score-matrix groups of the settings ``st``: every target's FP and FN counts are
    deflated by its group's design effects (floored at 1; groups recorded ``corrected``
    already hold effective counts and are not deflated again), each of the ``2 T`` rates of all
    ``T`` targets gets its Clopper-Pearson interval at level ``1 - (1 - prob) / (2 T)``, and
    the largest per-target eps bound at the posterior's delta is kept. Where the records
    declare targets in advance (``focus_targets``, from ``to_evidence(focus=...)``), the ``2 F``
    rates of the ``F`` declared targets that were counted get levels ``1 - FOCUS_SHARE (1 -
    prob) / (2 F)`` and the ``2 O`` rates of the others ``1 - (1 - FOCUS_SHARE) (1 - prob) /
    (2 O)`` (a weighted Bonferroni correction: the maximum over all targets still holds with
    probability ``prob``, and padding with targets that show nothing costs the declared ones
    only the share given away)
    (:func:`~bayes_dp.core.region.clopper_pearson_target_bounds`, ``reflect=False``: only the
    decisions as made, never the test that says the opposite; a target that shows nothing can
    have cross-fed decisions wrong on both sides together, ``docs/validation/lira.md``, "Cross-fed
    decisions that point the wrong way"). The same on the raw counts is returned beside it.

    The attack's ceiling is the same bound, with the same deflation and level, of the best
    target a test at its group's recorded level ``alpha`` could give on a target's trials: its
    FP count the nearest integer to ``alpha * n_neg``, no false negative; the largest over the
    targets' trial counts. A target whose FP count fell below the level by chance can exceed it;
    the claim compares the posterior's upper end with the larger of the two.

    Where the groups record per-model rates (``pooled_rates``) of at least
    :data:`POOLED_MIN_MODELS` test models, the per-target levels above get
    only ``1 - POOLED_SHARE`` of the error and the bound pooled over targets (:func:`_pooled_bound`)
    the rest; ``lower`` is then the larger of the two. Records without ``n_test`` (the plain
    per-model rates of an earlier version, which LiRA's balanced design can tilt) give no pooled
    bound; ``pooled_legacy`` is then True and the sentence says so.

    Returns
    -------
    dict or None
        ``lower`` (the frequentist part: the larger of ``target_lower``, the per-target bound on
        effective counts, and the pooled bound), ``pooled`` (None without per-model rates, else
        the keys of :func:`~bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound` and
        ``group``, ``n_targets``, ``n_reference``, ``targets`` ("all" or "declared"),
        ``share``), ``pooled_too_few``, ``pooled_legacy``, ``per_target_share``, ``raw_lower``
        (on raw counts), ``group``,
        ``row`` (of the group's counts), ``target`` (its score-matrix column, or None when the
        record does not say), ``fp``, ``n_neg``, ``fn``, ``n_pos`` (its raw counts),
        ``fp_design_effect``, ``fn_design_effect`` (the deflation applied), ``n_rates``,
        ``confidence``, ``level`` (the error of each rate's interval of the targets not
        declared; None when all are), ``n_targets``, ``n_positive`` (targets whose own bound
        is above 0: those that drive the lower end), ``top_targets`` (up to
        :data:`TOP_TARGETS` of them, largest bound first: ``target``, ``lower``, ``group``,
        ``row``, ``declared``), ``focus`` (None without declared targets, else ``declared``,
        ``counted`` (declared and not skipped), ``share``, ``level``, ``lower`` (their largest
        bound) and ``n_positive``), and the ceiling (at the declared targets' level when
        there are some): ``alpha`` (the level of the group that sets it),
        ``ceiling`` (on effective counts), ``raw_ceiling`` (on raw counts), ``ceiling_fp``,
        ``ceiling_n_neg``, ``ceiling_n_pos`` (the hypothetical target's counts; FN 0) and
        ``ceiling_group``, all None when a score-matrix group does not record its ``alpha``.
        None without a score-matrix group or a recorded delta.
    """
    groups = _score_groups(st)
    delta = st.get("delta")
    if not groups or delta is None:
        return None
    sizes = [len(np.atleast_1d(g["counts"]["fp"])) for g in groups]
    n_rates = 2 * sum(sizes)
    alphas = [g["dependence"].get("alpha") for g in groups]
    with_ceiling = all(a is not None for a in alphas)
    focus = [_focus_rows(g["dependence"], size) for g, size in zip(groups, sizes, strict=True)]
    n_focus = sum(int(f.sum()) for f in focus)
    n_other = n_rates // 2 - n_focus
    # records without ``n_test`` hold the plain per-model rates of an earlier version, which
    # the balanced design can tilt (docs/validation/lira.md, "The balanced design, model by
    # model"): no
    # pooled bound from them, and the sentence says why
    recs = [g["dependence"].get("pooled_rates") or {} for g in groups]
    legacy = any(r and "n_test" not in r for r in recs)
    pooled_groups = [
        gi
        for gi, r in enumerate(recs)
        if "n_test" in r and len(r.get("fpr", ())) >= POOLED_MIN_MODELS
    ]
    # the per-target bounds' share of the error; the pooled bound takes the rest
    per_target = 1.0 - POOLED_SHARE if pooled_groups else 1.0
    if n_focus:
        share = FOCUS_SHARE if n_other else 1.0
        plan = {True: (2 * n_focus, share * per_target)}
        if n_other:
            plan[False] = (2 * n_other, (1.0 - share) * per_target)
    else:
        plan = {False: (n_rates, per_target)}
    best = None
    n_positive = 0
    raw_lower = 0.0
    focus_lower = 0.0
    focus_positive = 0
    top: list[tuple[float, int, int]] = []  # (bound, group index, row) of targets above 0
    ceil = dict.fromkeys(
        ("alpha", "ceiling", "raw_ceiling", "ceiling_fp", "ceiling_n_neg", "ceiling_n_pos")
    )
    ceil["ceiling_group"] = None
    for gi, (g, size) in enumerate(zip(groups, sizes, strict=True)):
        rec = g["dependence"]
        c = {k: np.atleast_1d(np.asarray(g["counts"][k])) for k in ("fp", "n_neg", "fn", "n_pos")}
        c = {k: np.broadcast_to(v, (size,)) for k, v in c.items()}
        if rec.get("corrected", False):
            f_fp = f_fn = 1.0
        else:
            f_fp = max(float(rec.get("fp_design_effect") or 1.0), 1.0)
            f_fn = max(float(rec.get("fn_design_effect") or 1.0), 1.0)
        deflate = {"fp_design_effect": f_fp, "fn_design_effect": f_fn}
        eff = _split_bounds(c, focus[gi], plan, delta, prob, **deflate)
        raw = _split_bounds(c, focus[gi], plan, delta, prob)
        raw_lower = max(raw_lower, float(raw.max()))
        pos = np.flatnonzero(eff > 0)
        n_positive += int(pos.size)
        if focus[gi].any():
            focus_lower = max(focus_lower, float(eff[focus[gi]].max()))
            focus_positive += int((eff[focus[gi]] > 0).sum())
        for r in pos[np.argsort(-eff[pos], kind="stable")][:TOP_TARGETS]:
            top.append((float(eff[r]), gi, int(r)))
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
        if with_ceiling:
            alpha = float(alphas[gi])
            # the best target the test could give, at the level of the declared targets if any
            level = plan.get(True, plan.get(False))
            b, fp, n_neg, n_pos = _ceiling(c, alpha, delta, prob, *level, **deflate)
            b_raw = _ceiling(c, alpha, delta, prob, *level)[0]
            j = int(np.argmax(b))
            if ceil["ceiling"] is None or b[j] > ceil["ceiling"]:
                ceil.update(
                    alpha=alpha,
                    ceiling=float(b[j]),
                    ceiling_fp=int(fp[j]),
                    ceiling_n_neg=n_neg[j].item(),
                    ceiling_n_pos=n_pos[j].item(),
                    ceiling_group=g.get("name", "?"),
                )
            ceil["raw_ceiling"] = max(ceil["raw_ceiling"] or 0.0, float(b_raw.max()))
    pooled = _pooled_bound(groups, pooled_groups, delta, prob)
    # groups whose per-model rates are too few for the pooled bound (said in the sentence)
    too_few = any("n_test" in r for r in recs) and not pooled_groups
    top.sort(key=lambda t: (-t[0], t[1], t[2]))
    declared = sum(len(g["dependence"].get("focus_targets") or ()) for g in groups)
    focus_rec = None
    if declared:
        n_r, share = plan.get(True, (0, FOCUS_SHARE * per_target))
        focus_rec = {
            "declared": declared,
            "counted": n_focus,
            "share": share,
            "level": (1.0 - prob) * share / n_r if n_focus else None,
            "lower": focus_lower,
            "n_positive": focus_positive,
        }
    others = plan.get(False)
    target_lower = best["lower"]
    best.update(
        lower=max(target_lower, pooled["eps"]) if pooled else target_lower,
        target_lower=target_lower,
        pooled=pooled,
        pooled_too_few=too_few,
        pooled_legacy=legacy and not pooled_groups,
        per_target_share=per_target,
        raw_lower=raw_lower,
        n_rates=n_rates,
        confidence=prob,
        level=(1.0 - prob) * others[1] / others[0] if others else None,
        n_targets=n_rates // 2,
        n_positive=n_positive,
        top_targets=[
            {
                "target": _column(groups[gi]["dependence"], r),
                "lower": b,
                "group": groups[gi].get("name", "?"),
                "row": r,
                "declared": bool(focus[gi][r]),
            }
            for b, gi, r in top[:TOP_TARGETS]
        ],
        focus=focus_rec,
        **ceil,
    )
    return best


def _pooled_bound(
    groups: list[dict],
    which: list[int],
    delta: float,
    prob: float,
    share: float = POOLED_SHARE,
    kinds: tuple[str, ...] | None = None,
):
    """Return the largest pooled bound of the groups ``which`` (None without any).

    The candidates: each group's per-model rates (its ``dependence`` record's
    ``pooled_rates``: over all its fitted targets, or its declared ones) and, where the record
    holds them from at least :data:`POOLED_MIN_MODELS` test models, the same rates over the
    targets most exposed on the reference half (``selected``, chosen on the reference models
    alone: ``docs/validation/lira.md``, "The pooled bound over the most exposed targets"). Each gets
    :func:`~bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound` with finite-sample betting
    bounds at an equal share ``share / (number of candidates)`` of ``1 - prob`` (``share``:
    :data:`POOLED_SHARE` by default; Bonferroni over the candidates and, inside, over the two
    rates). ``kinds`` keeps only the candidates of these ``targets`` kinds ("all", "declared",
    "selected"; None: every one). The result's ``candidates`` lists each one's ``targets``,
    ``eps`` and ``n_targets``.
    """
    from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound

    cands = []
    for gi in which:
        rec = groups[gi]["dependence"]["pooled_rates"]
        cands.append((gi, rec, rec.get("targets", "all"), rec))
        sel = rec.get("selected")
        if sel and len(sel.get("fpr", ())) >= POOLED_MIN_MODELS:
            cands.append((gi, rec, "selected", sel))
    if kinds is not None:
        cands = [c for c in cands if c[2] in kinds]
    total = share
    share = total / len(cands) if cands else total
    best = None
    listed = []
    for gi, rec, kind, rates in cands:
        g = groups[gi]
        b = pooled_rates_epsilon_bound(
            rates["fpr"],
            rates["fnr"],
            delta,
            prob,
            "betting",
            share=share,
            horizon=rates.get("n_test"),
        )
        listed.append(
            {
                "group": g.get("name", "?"),
                "targets": kind,
                "eps": b["eps"],
                "n_targets": int(rates["n_targets"]),
                "fpr_upper": b["fpr_upper"],
            }
        )
        if best is None or b["eps"] > best["eps"]:
            best = {
                **b,
                "group": g.get("name", "?"),
                "n_targets": int(rates["n_targets"]),
                "n_reference": int(rec["n_reference"]),
                "targets": kind,
                "columns": list(rates["columns"]) if kind == "selected" else None,
                "share": share,
            }
    if best is not None:
        best["candidates"] = listed
    return best


def _pooled_which(pb: dict) -> str:
    """Words for the targets the pooled bound pooled over (all of them: nothing)."""
    if pb["targets"] == "declared":
        return " declared in advance"
    others = [c for c in pb.get("candidates", ()) if c["targets"] != pb["targets"]]
    if pb["targets"] == "selected":
        cols = ", ".join(str(c) for c in pb["columns"])
        return (
            f" most exposed on the reference models alone (score-matrix columns {cols}: the "
            "largest Welch t of IN against OUT scores there, so the test models' rates over "
            f"them are independent of the choice; the larger of {len(others) + 1} pooled "
            "bounds, each at its share of the error)"
        )
    sel = [c for c in others if c["targets"] == "selected"]
    if sel:
        return (
            f" (the larger of {len(others) + 1} pooled bounds, each at its share of the error; "
            f"over the {sel[0]['n_targets']} targets most exposed on the reference models it "
            f"is {sel[0]['eps']:.3g})"
        )
    return ""


def _pooled_ceiling(fb: dict, delta: float) -> float:
    """Return the most the pooled bound could state with its FP rates: log((1 - delta) / FPR+).

    The pooled bound of the smallest upper FP rate of its candidates (stored as
    ``pb["ceiling_fpr_upper"]``) and an FN rate bounded by 0 (no false negative in any test
    model); 0 without a pooled bound. Stored as ``fb["pooled_ceiling"]``.
    """
    pb = fb.get("pooled")
    c = 0.0
    if pb is not None:
        # the smallest upper FP rate of the pooled candidates: the most any of them could state
        fpr = min(x["fpr_upper"] for x in pb.get("candidates", [pb]))
        pb["ceiling_fpr_upper"] = fpr
        # the betting bound of a mean is never 0 (the capital at m = 0 never grows)
        c = max(float(np.log((1.0 - delta) / max(fpr, 1e-300))), 0.0)
    fb["pooled_ceiling"] = c
    return c


def _pct(p: float) -> str:
    return f"{100 * p:g}%"


def _name(t: dict) -> str:
    return f"target {t['target']}" if t["target"] is not None else f"row {t['row']}"


def _named(t: dict) -> str:
    return f"{_name(t)}{' (declared)' if t.get('declared') else ''} ({t['lower']:.3g})"


def _levels(fb: dict, prob: float) -> str:
    """Say at which level each rate's interval was taken (plain or weighted Bonferroni)."""
    f = fb.get("focus")
    if f is None:
        err = fb["per_target_share"] * (1 - prob)
        return f"all {fb['n_rates']} rates at level {err:.3g}/{fb['n_rates']}, Bonferroni"
    skipped = f["declared"] - f["counted"]
    gone = f"; {skipped} declared target(s) were not counted" if skipped else ""
    if not f["counted"]:
        err = fb["per_target_share"] * (1 - prob)
        return (
            f"all {fb['n_rates']} rates at level {err:.3g}/{fb['n_rates']}, Bonferroni; "
            f"none of the {f['declared']} targets declared in advance was counted"
        )
    n_f = 2 * f["counted"]
    words = (
        f"the {n_f} rates of the {f['counted']} targets declared in advance at level "
        f"{f['share'] * (1 - prob):.3g}/{n_f}"
    )
    n_o = fb["n_rates"] - n_f
    if n_o:
        words += f", the {n_o} rates of the others at level {fb['level'] * n_o:.3g}/{n_o}"
    return f"{words}, weighted Bonferroni{gone}"


def _ceiling_words(fb: dict, upper: float) -> str:
    """Say why ``upper`` lies beyond what the attack could show at its level."""
    words = (
        f"a target tested at false-positive rate alpha = {fb['alpha']:g} with "
        f"{fb['ceiling_n_neg']} OUT and {fb['ceiling_n_pos']} IN models, its FP count at that "
        f"level ({fb['ceiling_fp']}) and no false negative, would have a bound of "
        f"{fb['ceiling']:.3g} (the bound and Bonferroni correction above; on raw counts "
        f"{fb['raw_ceiling']:.3g})"
    )
    pb = fb.get("pooled")
    if pb is not None:
        words += (
            f"; pooled over the targets, with their mean FP rate at most "
            f"{pb['ceiling_fpr_upper']:.3g} "
            f"as bounded above and no false negative at all, the pooled bound would be "
            f"{fb['pooled_ceiling']:.3g}"
        )
    if fb["target_lower"] > fb["ceiling"]:
        words += (
            f", and the largest bound a target reached, {fb['target_lower']:.3g} (its counts more "
            f"extreme than those), is below {upper:.3g} too"
        )
    return words


def _model_record(st: dict) -> str:
    """Return the words on how often the posterior's model(s) accused a Laplace mechanism.

    One phrase per distinct (likelihood, reading) of the score-matrix groups, from
    :data:`MODEL_ACCUSATIONS`; an unmeasured one says so and cites the default's record.
    """
    keys = dict.fromkeys(
        (g.get("likelihood", "binomial"), bool(g.get("reflect", True))) for g in _score_groups(st)
    )
    where = "on Laplace-mechanism score matrices at an optimal attack"
    out = []
    for lik, refl in keys:
        name = {"binomial": "binomial", "exposure_mixture": "exposure-mixture"}.get(lik, lik)
        model = f"{name}{'' if refl else ', decisions read as made'}"
        if (lik, refl) in MODEL_ACCUSATIONS:
            k, n, _ = MODEL_ACCUSATIONS[(lik, refl)]
            out.append(
                f"{where} this model's ({model}) 90% interval lay entirely above the true eps "
                f"in {k} of {n} audits"
            )
        else:
            k, n, _ = MODEL_ACCUSATIONS[("binomial", True)]
            out.append(
                f"this model ({model}) was not measured against false accusations; {where} the "
                f"binomial's 90% interval lay entirely above the true eps in {k} of {n} audits"
            )
    return "; ".join(out)


def score_matrix_words(
    st: dict,
    prob: float,
    lower: float,
    words: list[tuple[str, str]],
    at: str,
    strength: str,
    upper: float | None = None,
    source: str | None = None,
) -> tuple[float, list[tuple[str, str]], dict]:
    """Rewrite the claim of a posterior with score-matrix groups (identity without any).

    ``words`` are the named parts (:mod:`bayes_dp.results.claim_parts`)
    :func:`bayes_dp.audit_claim` wrote for the posterior's own
    interval (``"upper end"`` about its upper end); ``lower`` and ``upper`` are the
    posterior's (1 - ``prob``) and ``prob`` quantiles and ``source`` what the prior check said
    of the upper end (``AuditClaim.upper_source``). Returns the lower end the claim states
    (the frequentist bound, whatever ``lower`` is), the new parts and the extra
    fields of :class:`~bayes_dp.AuditClaim` (``posterior_lower``, ``frequentist_lower``,
    ``frequentist``, ``set_by``; empty without a score-matrix group), with ``upper_source``
    among them when the ceiling changes it.

    The upper end: when it lies above both the attack's ceiling and the largest per-target
    bound (:func:`score_matrix_bound`), no target's evidence reaches it. An upper end the
    prior check called ``"data"`` or ``"unknown"`` is then ``"attack_level"`` and its sentence
    is replaced; one it called ``"prior"`` keeps that (moving with the prior says more) and the
    sentence adds that it lies beyond the ceiling too. Otherwise an upper end called
    ``"prior"`` keeps its sentence, and one called ``"data"`` or ``"unknown"`` becomes
    ``"model"``: the model's, not a finding (see the module's docstring).
    """
    fb = score_matrix_bound(st, prob)
    if fb is None:
        return lower, words, {}
    f = fb["lower"]
    # the frequentist bound holds without the model: it is the claim whether the posterior's
    # lower end lies above or below it (module docstring)
    claim = f
    _pooled_ceiling(fb, st["delta"])
    beyond = None
    if fb["ceiling"] is not None and upper is not None:
        beyond = bool(upper > max(fb["ceiling"], f, fb["pooled_ceiling"]))
    fb["upper_beyond_ceiling"] = beyond
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
        f"({how}, each deflated count's binomial tail assumed; {_levels(fb, prob)})"
    )
    if fb["n_positive"]:
        named = ""
        if fb["n_positive"] > 1:
            largest = ", ".join(_named(t) for t in fb["top_targets"])
            named = f"; the largest: {largest}"
        declared = ""
        if fb["focus"] is not None:
            declared = f", {fb['focus']['n_positive']} of them declared in advance"
        where = (
            f"; it is set by {who} of group {fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, FN "
            f"{fb['fn']}/{fb['n_pos']}), and {fb['n_positive']} of {fb['n_targets']} targets "
            f"have a bound of their own above 0{declared} (the targets that drive the lower "
            f"end{named})"
        )
    else:
        where = (
            f"; no target's own bound is above 0 (of {fb['n_targets']}): at this confidence "
            "the score matrix shows no eps above 0 without a model"
        )
    raw = f"; on the raw counts the same bound is {fb['raw_lower']:.3g}"
    pb = fb["pooled"]
    if pb is not None and pb["eps"] > fb["target_lower"]:
        # the pooled bound sets the frequentist part; the per-target one follows it
        what = (
            f"the error rates pooled over the {pb['n_targets']} targets"
            f"{_pooled_which(pb)} of group "
            f"{pb['group']!r}, with its {pb['n_models']} test models as the units (a test fitted "
            f"on its {pb['n_reference']} other models; each model's rates over entries kept so "
            f"that FP and FN weigh the targets alike: mean FP rate {pb['fpr_mean']:.3g}, mean "
            f"FN rate {pb['fnr_mean']:.3g}; a finite-sample betting test of the lower "
            f"constraints of R(eps, delta), each at level {pb['error']:.3g}: such a mixture of "
            f"the targets' error points lies in R when each target's does, if a target's "
            f"decision does not follow which other targets its model trained on; "
            f"{DOCS_POOLED}; {DOCS_COUPLED}). "
            f"Beside it, {what} is {fb['target_lower']:.3g}"
        )
        raw = ""
    elif pb is not None:
        raw += (
            f"; pooled over the {pb['n_targets']} targets{_pooled_which(pb)} with the models "
            "as units "
            f"({DOCS_POOLED}) the bound is {pb['eps']:.3g}"
        )
    elif fb["pooled_too_few"]:
        raw += (
            f"; no bound pooled over the targets: fewer than {POOLED_MIN_MODELS} test models "
            f"({DOCS_POOLED})"
        )
    elif fb.get("pooled_legacy"):
        raw += (
            "; no bound pooled over the targets: the per-model rates of this result were "
            "recorded before they were balanced for LiRA's design (count the score matrix "
            f"again to get it; {DOCS_POOLED})"
        )
    first = (
        f"With {_pct(prob)} confidence, eps >= {f:.3g}{at}, whatever the attack strength: "
        f"{what}{where}{raw}."
    )
    below = ""
    if lower < f:
        below = (
            f"; it lies below the bound above, which holds without the model: the model reads "
            "every target as tested by one attack of a shared strength, so targets that show "
            f"little pull its lower end down ({DOCS_BELOW})"
        )
    model = (
        f"{model_quantile_words(prob, lower, at, strength)}{below}; {_model_record(st)} ({DOCS})."
    )
    rest = list(words[1:])
    if beyond:
        ceiling = _ceiling_words(fb, upper)
        if source == "prior":
            rest.append(
                (
                    "ceiling",
                    f"It also lies beyond what the attack could show at its level: {ceiling}; no "
                    "target's own evidence reaches it.",
                )
            )
        else:
            interval = f"the model's {_pct(prob)} quantile of eps, {upper:.3g}"
            rest = replace(
                rest,
                "upper end",
                f"The upper end, {interval}, lies beyond what the attack could show at its "
                f"level: {ceiling}. No target's own evidence reaches it: it is set by the model "
                "(which pools the targets) and the prior of eps, not by what the attack showed; "
                "cite the lower bound.",
            )
            extra["upper_source"] = "attack_level"
    elif upper is not None and upper < f:
        # the model's answer lies below a bound that holds without it: the data rule it out
        rest = replace(
            rest,
            "upper end",
            f"The upper end, the model's {_pct(prob)} quantile of eps, {upper:.3g}, lies below "
            f"the bound above, which holds without the model: the data rule the model's answer "
            "out. The model reads every target as tested by one attack of a shared strength, so "
            f"the many targets that show little outvote the {fb['n_positive']} whose own bound "
            f"is above 0 ({DOCS_MISSED}); not a finding; cite the lower bound.",
        )
        extra["upper_source"] = "model"
    elif source != "prior":
        interval = f"the model's {_pct(prob)} quantile of eps, {upper:.3g}"
        none = "" if fb["n_positive"] else " (here no target's own bound is above 0)"
        rest = replace(
            rest,
            "upper end",
            f"The upper end, {interval}, is the model's, not a finding{none}: an audit shows "
            "how large eps is at least, never at most, and this model reads every target as "
            "tested by one attack of a shared strength, so targets that show little pull the "
            f"upper end down (on simulated score matrices it lay far below the strongest "
            f"target's own eps: {DOCS_UPPER}); cite the lower bound.",
        )
        extra["upper_source"] = "model"
    extra["set_by"] = f"whatever the attack strength, {_short(fb, who)}"
    return claim, [("bound", first), ("model", model), *rest], extra


def _short(fb: dict, who: str) -> str:
    """Say in a few words what sets the bound ``fb`` (:func:`score_matrix_bound`)."""
    pb = fb["pooled"]
    if pb is not None and pb["eps"] > fb["target_lower"]:
        return (
            f"set by the error rates pooled over {pb['n_targets']} targets of "
            f"{pb['n_models']} test models (a betting test)"
        )
    if not fb["n_positive"]:
        return f"no target's own bound is above 0 (of {fb['n_targets']})"
    return (
        f"set by {who.split(' (')[0]} of group {fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, "
        f"FN {fb['fn']}/{fb['n_pos']}; per-target Clopper-Pearson, {fb['n_positive']} of "
        f"{fb['n_targets']} targets above 0)"
    )


def unconverged_model_words(
    words: list[tuple[str, str]], minor: dict | None, prob: float, lower: float, upper: float
) -> tuple[list[tuple[str, str]], str | None]:
    """Rewrite a score-matrix claim whose chains did not converge (the bound first, as before).

    The claim's lower end, the frequentist bound (:func:`score_matrix_words`), reads the counts
    only, never the draws, so chains that did not converge do not touch it; they touch the
    model's figures that follow it. ``words`` are :func:`score_matrix_words`' named parts (the
    bound first). Returns the new parts and the new ``upper_source`` (None: unchanged).

    * A minor mode (``minor``, ``settings["minor_mode"]``: a point of much higher posterior
      density at eps ~ 0 that no chain visited, :mod:`bayes_dp.inference.modes`): the draws'
      quantiles are not the posterior's, and the posterior itself, its mass near eps = 0, is
      the band model reading the targets that show nothing as a mechanism of eps near 0 (the
      false assurance of issue 32: a DP-SGD audit whose canaries alone give [0, 7e-6] against
      an accountant eps of 2.67, docs/validation/lira.md, "A real run: digits with canaries").
      Neither is
      reported as a figure: the model's sentences give way to one that says why, and the
      upper source becomes ``"minor_mode"`` (the summary line then prints the bound alone).
    * Any other failed convergence check: the model's sentences stay, after one that says they
      are not reliable and that the bound above does not depend on them.

    >>> w, src = unconverged_model_words(
    ...     [("bound", "With 95% confidence, eps >= 0."), ("model", "Model.")],
    ...     {"eps": 1e-6, "log_post": -10.0, "log_post_draws": -783.0}, 0.95, 0.84, 0.99)
    >>> src, w[0]
    ('minor_mode', ('bound', 'With 95% confidence, eps >= 0.'))
    >>> "5% quantile 0.84 and 95% quantile 0.99, are not the posterior's" in w[1][1]
    True
    """
    head = words[0]
    if minor is None:
        return [
            head,
            (
                "convergence",
                "The model's figures that follow are NOT RELIABLE: its chains did not converge or "
                "mix enough (see the warnings); the bound above reads the counts only and does not "
                "depend on them.",
            ),
            *words[1:],
        ], None
    eps = float(minor.get("eps", float("nan")))
    gap = float(minor.get("log_post", float("nan"))) - float(
        minor.get("log_post_draws", float("nan"))
    )
    q = f"{100 * (1 - prob):.3g}% quantile {lower:.3g} and {100 * prob:.3g}% quantile {upper:.3g}"
    return [
        head,
        (
            "model",
            "What the model says is not reported: its chains missed a mode of much higher "
            f"posterior density at eps = {eps:.2g} (a minor-mode warning: {gap:.0f} log units "
            f"above the best draw), so the draws' figures, {q}, are not the posterior's; and "
            "the posterior, its mass near eps = 0, is the model reading every target as tested "
            "by one attack of a shared strength, so that targets that show nothing place the "
            "mechanism near eps = 0: not a finding (an audit shows how large eps is at least, "
            'never at most; docs/validation/lira.md, "A real run: digits with canaries"). The '
            "bound above reads the counts only and does not depend on the chains.",
        ),
    ], "minor_mode"
