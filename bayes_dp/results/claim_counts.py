"""The claim on counts of designed challenge bases: what the attack shows, then the model.

The posterior's (1 - prob) quantile of eps is not a lower confidence bound of eps. Under the
paper's prior (each base's error point uniform on the band R_s(eps, delta), s uniform) the
posterior of eps piles up just above the smallest eps whose region holds the observed error
point, and spreads upward from there: its 5% quantile sits near the *point estimate* of the
eps the attack shows, not below it by the sampling error. Where the attack is optimal, its
error point on the boundary of R(eps, delta) (a likelihood-ratio test of a Laplace or a
randomized-response mechanism, a worst-case canary), that point estimate lies above the true
eps about half the time, and so does the posterior's lower end: measured on one base of
1,000 + 1,000 trials at the boundary point (0.1, 0.728) of R(1, 1e-5), the 90% interval lay
entirely above eps = 1 in 15 of 30 audits; the Clopper-Pearson bound of the same counts in 0
(``docs/validation/claims.md``, "What the audit shows", and ``benchmarks/claim_boundary.py``).

So the claim on such counts states first the classical bound, valid for any attack: the
largest per-base Clopper-Pearson lower bound of eps, all 2 n rates of the n bases of the
binomial groups at level (1 - prob) / (2 n) (Bonferroni; :func:`bayes_dp.core.region.
clopper_pearson_target_bounds`, reading each base as its group reads it: reflected too unless
the group has ``reflect=False``), and never a lower end above it; the posterior's figure
follows as what the model says. The claim on score-matrix evidence
(:mod:`bayes_dp.results.claim_scores`) and on scores at every threshold
(:mod:`bayes_dp.results.claim_gdp`) have their own bounds. A one-run posterior
(:func:`bayes_dp.estimate_one_run`) has the same defect (at guesses drawn from the
dominating Binomial(r, e^eps / (1 + e^eps)) of eps = 1, its lower end lay above the truth in
25 of 40 audits): its claim states first the largest one-run bound of its audits
(:func:`one_run_bound`), and so does a posterior of :func:`~bayes_dp.estimate_epsilon` with
groups of one-run audits (likelihood ``"guesses"``; an audit of pairs of models by the bound on
2 eps at 2 delta, halved). Where a posterior holds both bases and audits, the error is shared
among all their tests (Bonferroni over the 2 n rates and the k audits) and the larger bound is
stated, the other named beside it.

What the bound assumes: each base's decisions are independent Bernoulli trials given its
rates (the binomial likelihood's assumption too). Groups with an over-dispersed likelihood
(bivariate normal, beta-binomial) are left out of it, since their counts are not binomial; a
posterior of such groups only keeps its own sentence, and the record says so
(``frequentist["skipped"]``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_bound", "count_words", "n_tests", "one_run_bound", "reads_reflected"]

#: Likelihoods whose counts the bound reads as binomial.
BINOMIAL_LIKELIHOODS = ("binomial", "exposure_mixture")
#: Where the reason is measured and written down.
DOCS = 'docs/validation/claims.md, "What the audit shows"'


def model_quantile_words(prob: float, lower: float, at: str, strength: str) -> str:
    """Return the model's own lower end in words that state no bound ("What the model says").

    Where a bound took the place of the posterior's (1 - prob) quantile, the sentence gives the
    quantile as a figure of the model, never as "with prob posterior probability, eps >= x": an
    auditor who quotes that form makes a claim the tool does not sign, and where the attack is
    optimal it lies above the true eps far more often than 1 - prob (docs/validation/claims.md,
    "What
    the audit shows").

    >>> model_quantile_words(0.95, 2.71, " at delta = 1e-05", "").split(": ")[1]
    "the posterior's 5% quantile of eps is 2.71 at delta = 1e-05"
    """
    return (
        f"What the model says (not the finding): the posterior's {100 * (1 - prob):.3g}% quantile "
        f"of eps is {lower:.3g}{at}{strength}"
    )


def reads_reflected(group: dict) -> bool:
    """Whether the claim reads a group's counts reflected too, or as its decisions were made.

    Score-matrix groups (a ``dependence`` record: ``mia.ScoreMatrixCounts.to_evidence``) are
    read as made (:mod:`bayes_dp.results.claim_scores`: a target whose decisions are worse than
    random shows nothing, never a large eps by the opposite test); other groups as their
    likelihood reads them (``reflect``, default True). The report's per-base figures read
    each group this way too.

    >>> reads_reflected({"counts": {}}), reads_reflected({"counts": {}, "dependence": {}})
    (True, False)
    """
    if isinstance(group.get("dependence"), dict):
        return False
    return bool(group.get("reflect", True))


def _binomial_groups(st: dict) -> tuple[list[dict], list[dict]]:
    """Return the groups of attack counts in ``st`` and those of them the bound reads."""
    groups = [
        g
        for g in st.get("groups", [])
        if isinstance(g, dict) and "counts" in g and g.get("kind") != "one_run"
    ]
    return groups, [g for g in groups if g.get("likelihood", "binomial") in BINOMIAL_LIKELIHOODS]


def _one_run_groups(st: dict) -> list[dict]:
    """Return the groups of one-run audits in ``st`` (``kind`` ``"one_run"``)."""
    return [g for g in st.get("groups", []) if isinstance(g, dict) and g.get("kind") == "one_run"]


def n_tests(st: dict) -> int:
    """Return the number of tests the claim's union bound shares its error among.

    The 2 n rates of the n bases of the binomial groups (:func:`count_bound`) plus the k
    one-run audits (:func:`one_run_bound`) of the settings ``st``.

    >>> n_tests({"groups": [{"counts": {"fp": [1, 2]}}, {"kind": "one_run", "m": [9]}]})
    5
    """
    _, binom = _binomial_groups(st)
    n = sum(2 * np.atleast_1d(g["counts"]["fp"]).size for g in binom)
    return n + sum(np.atleast_1d(g["m"]).size for g in _one_run_groups(st))


def count_bound(st: dict, prob: float, tests: int | None = None) -> dict | None:
    """Return the largest per-base Clopper-Pearson lower bound of eps of a posterior's counts.

    Over the binomial groups (:data:`BINOMIAL_LIKELIHOODS`) of the settings ``st``
    (``post.settings``): every base's two rates get exact intervals at level
    ``1 - (1 - prob) / (2 n)``, n the number of their bases, and the largest per-base bound at
    the recorded delta is kept.

    Parameters
    ----------
    st : dict
        A posterior's settings (``post.settings``): its ``delta`` and ``groups`` are read.
    prob : float
        Confidence of the bound, in (0.5, 1) (validated by :func:`bayes_dp.audit_claim`).
    tests : int, optional
        The number of tests the error ``1 - prob`` is shared among (Bonferroni), when more
        than the 2 n rates (one-run audits beside the bases, :func:`n_tests`); default 2 n.

    Returns
    -------
    dict or None
        ``lower``, ``group``, ``row`` (the base that sets it, a row of its group's counts),
        ``fp``, ``n_neg``, ``fn``, ``n_pos`` (its counts), ``n_bases``, ``n_rates``,
        ``n_tests``, ``confidence``, ``level`` (of each rate's interval) and ``skipped`` (the
        names of the over-dispersed groups left out). None without a binomial group or a
        recorded delta.
    """
    from bayes_dp.core.region import clopper_pearson_target_bounds

    delta = st.get("delta")
    groups, binom = _binomial_groups(st)
    if delta is None or not binom:
        return None
    cols = [
        {k: np.atleast_1d(np.asarray(g["counts"][k])) for k in ("fp", "n_neg", "fn", "n_pos")}
        for g in binom
    ]
    n_bases = sum(c["fp"].size for c in cols)
    n_rates = 2 * n_bases
    tests = n_rates if tests is None else int(tests)
    best = None
    for g, c in zip(binom, cols, strict=True):
        lows = np.atleast_1d(
            clopper_pearson_target_bounds(
                c["fp"],
                c["n_neg"],
                c["fn"],
                c["n_pos"],
                delta,
                prob,
                n_rates=tests,
                reflect=reads_reflected(g),
            )
        )
        i = int(np.argmax(lows))
        if best is None or lows[i] > best["lower"]:
            best = {
                "lower": float(lows[i]),
                "group": g.get("name", "?"),
                "row": i,
                **{k: int(c[k][i]) for k in ("fp", "n_neg", "fn", "n_pos")},
            }
    best.update(
        n_bases=n_bases,
        n_rates=n_rates,
        n_tests=tests,
        confidence=prob,
        level=1.0 - (1.0 - prob) / tests,
        skipped=[g.get("name", "?") for g in groups if g not in binom],
    )
    return best


def one_run_bound(st: dict, prob: float, tests: int | None = None) -> dict | None:
    """Return the largest one-run lower bound of eps of a posterior's one-run audits.

    Each audit's bound (:func:`bayes_dp.core.one_run_bound.one_run_bounds`, the computation of
    :func:`bayes_dp.one_run_epsilon_bound`; Steinke, Nasr and
    Jagielski's Theorem 3.3; for an audit of pairs of models, whose coins are
    (2 eps, 2 delta)-DP, the bound on 2 eps at 2 delta, halved) at confidence
    ``1 - (1 - prob) / k`` for ``k`` audits (Bonferroni); the largest is kept. None without
    one-run groups or a recorded delta.

    Parameters
    ----------
    st : dict
        A posterior's settings (``post.settings``: ``delta`` and its ``groups`` of ``kind``
        ``"one_run"`` with ``m``, ``r``, ``v`` and ``pairs``): of
        :func:`~bayes_dp.estimate_one_run`, or of :func:`~bayes_dp.estimate_epsilon` with
        groups of one-run audits (likelihood ``"guesses"``).
    prob : float
        Confidence of the bound, in (0.5, 1).
    tests : int, optional
        The number of tests the error ``1 - prob`` is shared among (Bonferroni), when more
        than the k audits (challenge bases beside them, :func:`n_tests`); default k.

    Returns
    -------
    dict or None
        ``lower``, ``group`` (the name of the group that sets it, None for
        :func:`~bayes_dp.estimate_one_run`'s audits), ``row`` (the audit that sets it, over all
        one-run audits in group order), ``m``, ``r``, ``v``, ``pairs`` (its counts and
        design), ``n_audits``, ``n_tests``, ``confidence`` and ``level`` (of each audit's test).
    """
    from bayes_dp.core.one_run_bound import one_run_bounds

    delta = st.get("delta")
    groups = _one_run_groups(st)
    if delta is None or not groups:
        return None
    m, r, v = (np.concatenate([np.atleast_1d(g[k]) for g in groups]) for k in ("m", "r", "v"))
    pairs = np.concatenate(
        [
            np.broadcast_to(np.asarray(g.get("pairs", False), dtype=bool), (len(g["m"]),))
            for g in groups
        ]
    )
    names = [g.get("name") for g in groups for _ in range(len(g["m"]))]
    k = m.size
    tests = k if tests is None else int(tests)
    level = (1.0 - prob) / tests
    if pairs.any():
        lows = np.zeros(k)
        bits = ~pairs
        if bits.any():
            lows[bits] = one_run_bounds(m[bits], r[bits], v[bits], delta, 1.0 - level)
        lows[pairs] = one_run_bounds(m[pairs], r[pairs], v[pairs], delta, 1.0 - level, pairs=True)
    else:
        lows = one_run_bounds(m, r, v, delta, 1.0 - level)
    i = int(np.argmax(lows))
    return {
        "lower": float(lows[i]),
        "group": names[i],
        "row": i,
        "m": int(m[i]),
        "r": int(r[i]),
        "v": int(v[i]),
        "pairs": bool(pairs[i]),
        "n_audits": k,
        "n_tests": tests,
        "confidence": prob,
        "level": level,
    }


def count_words(
    st: dict,
    prob: float,
    lower: float,
    words: list[tuple[str, str]],
    at: str,
    strength: str,
    upper: float | None = None,
) -> tuple[float, list[tuple[str, str]], dict]:
    """Rewrite the claim of a posterior of counts or one-run audits (identity without either).

    ``words`` are the named parts (:mod:`bayes_dp.results.claim_parts`)
    :func:`bayes_dp.audit_claim` wrote for the posterior's own interval (the first, ``"bound"``,
    its lower bound) and ``lower`` its (1 - ``prob``) quantile.
    Returns the lower end the claim states (the smaller of ``lower`` and the frequentist bound:
    the per-base bound of :func:`count_bound` or the one-run bound of :func:`one_run_bound`,
    the larger where a posterior holds both, each test then at level (1 - prob) / (the 2 n
    rates + the k audits), :func:`n_tests`; the other is named beside it and kept in the
    record as ``count_bound`` or ``one_run_bound``), the parts and the extra fields of
    :class:`~bayes_dp.AuditClaim`
    (``posterior_lower``, ``frequentist_lower``, ``frequentist``, ``set_by``). Where the
    posterior's ``prob`` quantile ``upper`` lies below the per-base bound, a last part says that the
    data rule the model's answer out (the chains' mode at eps ~ 0, docs/validation/lira.md, "A mode
    the
    chains missed").
    """
    tests = n_tests(st)
    fb = count_bound(st, prob, tests)
    fo = one_run_bound(st, prob, tests)
    if fb is None and fo is None:
        return lower, words, {}
    if fo is not None:
        what_o = _one_run_words(fo, prob)
        if fb is None or fo["lower"] > fb["lower"]:
            if fb is not None:
                what_o += f"; beside it, {_count_what(fb, prob)} is {fb['lower']:.3g}"
                fo = {**fo, "count_bound": fb}
            return _words(fo, what_o, _one_run_short(fo), prob, lower, words, at, strength, upper)
        fb = {**fb, "one_run_bound": fo}
    what = _count_what(fb, prob)
    if fo is not None:
        what += f"; beside it, {what_o} is {fo['lower']:.3g}"
    return _words(fb, what, _count_short(fb), prob, lower, words, at, strength, upper)


def _one_run_words(fo: dict, prob: float) -> str:
    """Say which one-run bound ``fo`` (:func:`one_run_bound`) is and which audit sets it."""
    k = fo["n_audits"]
    tests = fo.get("n_tests", k)
    over = "" if tests == k else f" over them and the {tests - k} rates of the bases"
    coins = (
        "matched pairs of models, which of the two trained on the example a fair coin, "
        "(2 eps, 2 delta)-DP: the bound on 2 eps, halved"
        if fo.get("pairs")
        else "canaries included independently with probability 1/2"
    )
    group = f" of group {fo['group']!r}" if fo.get("group") is not None else ""
    return (
        f"the largest one-run bound of the audits (Steinke, Nasr and Jagielski, Theorem 3.3: "
        f"{coins}; {k} audits at level {1 - prob:g}/{tests}, Bonferroni{over}), set by audit "
        f"{fo['row']}{group} ({fo['v']} of {fo['r']} guesses right, {fo['m']} "
        f"{'pairs' if fo.get('pairs') else 'canaries'})"
    )


def _one_run_short(fo: dict) -> str:
    """Say in a few words which one-run audit sets the bound ``fo``."""
    what = "pairs" if fo.get("pairs") else "canaries"
    return (
        f"one-run audit {fo['row']} ({fo['v']} of {fo['r']} guesses right on {fo['m']} {what}; "
        "Steinke, Nasr and Jagielski's bound)"
    )


def _count_short(fb: dict) -> str:
    """Say in a few words which base sets the per-base bound ``fb``."""
    return (
        f"row {fb['row']} of group {fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, FN "
        f"{fb['fn']}/{fb['n_pos']}; Clopper-Pearson over {fb['n_tests']} tests)"
    )


def _count_what(fb: dict, prob: float) -> str:
    """Say which per-base bound ``fb`` (:func:`count_bound`) is and which base sets it."""
    n = fb["n_rates"]
    tests = fb.get("n_tests", n)
    over = "" if tests == n else f" over them and the {tests - n} one-run audits"
    skipped = (
        f" (groups {fb['skipped']} are left out of it: their likelihood does not read them as "
        "binomial)"
        if fb["skipped"]
        else ""
    )
    return (
        f"the largest per-base Clopper-Pearson bound of the counts (each base's decisions "
        f"independent given its rates; all {n} rates of {fb['n_bases']} bases at level "
        f"{1 - prob:g}/{tests}, Bonferroni{over}){skipped}, set by row {fb['row']} of group "
        f"{fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, FN {fb['fn']}/{fb['n_pos']})"
    )


def _words(fb, what, short, prob, lower, words, at, strength, upper=None):
    """Return the claim's lower end, parts and fields, given the bound ``fb`` and its words.

    ``what`` names the bound and what sets it in full, ``short`` in a few words (the headline's,
    :attr:`bayes_dp.AuditClaim.set_by`).
    """
    f = fb["lower"]
    extra = {"posterior_lower": lower, "frequentist_lower": f, "frequentist": fb}
    if lower <= f:
        # the model's bound is the smaller: it is the claim, and the classical one is beside it
        extra["set_by"] = (
            f"set by the posterior of the counts (the classical bound, {f:.3g}, is larger)"
        )
        name, head = words[0]
        rest = [
            (
                name,
                head[:-1] + f"; what the attack shows without a model is eps >= {f:.3g} ({what}).",
            )
        ]
        rest += words[1:]
        if upper is not None and upper < f:
            rest.append(
                (
                    "ruled out",
                    f"The posterior's {100 * prob:g}% quantile, {upper:.3g}, lies below what the "
                    "attack shows without a model: the data rule the model's answer out (many "
                    "bases that show little outvote the few that show more); the claim keeps the "
                    "smaller lower end.",
                )
            )
        return lower, rest, extra
    pct = f"{100 * prob:g}%"
    first = f"With {pct} confidence, eps >= {f:.3g}{at}, whatever the attack strength: {what}."
    model = (
        f"{model_quantile_words(prob, lower, at, strength)}; where the attack is optimal (its "
        "error point on the boundary of R(eps, delta)) that figure lies above the true eps in "
        f"about half of audits ({DOCS})."
    )
    extra["set_by"] = f"whatever the attack strength, set by {short}"
    return f, [("bound", first), ("model", model), *words[1:]], extra
