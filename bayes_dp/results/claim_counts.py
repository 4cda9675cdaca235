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
(:func:`one_run_bound`).

What the bound assumes: each base's decisions are independent Bernoulli trials given its
rates (the binomial likelihood's assumption too). Groups with an over-dispersed likelihood
(bivariate normal, beta-binomial) are left out of it, since their counts are not binomial; a
posterior of such groups only keeps its own sentence, and the record says so
(``frequentist["skipped"]``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_bound", "count_words", "one_run_bound"]

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


def count_bound(st: dict, prob: float) -> dict | None:
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

    Returns
    -------
    dict or None
        ``lower``, ``group``, ``row`` (the base that sets it, a row of its group's counts),
        ``fp``, ``n_neg``, ``fn``, ``n_pos`` (its counts), ``n_bases``, ``n_rates``,
        ``confidence``, ``level`` (of each rate's interval) and ``skipped`` (the names of the
        over-dispersed groups left out). None without a binomial group or a recorded delta.
    """
    from bayes_dp.core.region import clopper_pearson_target_bounds

    delta = st.get("delta")
    groups = [g for g in st.get("groups", []) if isinstance(g, dict) and "counts" in g]
    binom = [g for g in groups if g.get("likelihood", "binomial") in BINOMIAL_LIKELIHOODS]
    if delta is None or not binom:
        return None
    cols = [
        {k: np.atleast_1d(np.asarray(g["counts"][k])) for k in ("fp", "n_neg", "fn", "n_pos")}
        for g in binom
    ]
    n_bases = sum(c["fp"].size for c in cols)
    n_rates = 2 * n_bases
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
                n_rates=n_rates,
                reflect=bool(g.get("reflect", True)),
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
        confidence=prob,
        level=1.0 - (1.0 - prob) / n_rates,
        skipped=[g.get("name", "?") for g in groups if g not in binom],
    )
    return best


def one_run_bound(st: dict, prob: float) -> dict | None:
    """Return the largest one-run lower bound of eps of a one-run posterior's audits.

    Each audit's bound (:func:`bayes_dp.core.one_run_bound.one_run_bounds`, the computation of
    :func:`bayes_dp.one_run_epsilon_bound`; Steinke, Nasr and
    Jagielski's Theorem 3.3) at confidence ``1 - (1 - prob) / k`` for ``k`` audits
    (Bonferroni); the largest is kept. None without one-run groups or a recorded delta.

    Parameters
    ----------
    st : dict
        A one-run posterior's settings (``post.settings``: ``delta`` and its ``groups`` of
        ``kind`` ``"one_run"`` with ``m``, ``r``, ``v``).
    prob : float
        Confidence of the bound, in (0.5, 1).

    Returns
    -------
    dict or None
        ``lower``, ``row`` (the audit that sets it), ``m``, ``r``, ``v`` (its counts),
        ``n_audits``, ``confidence`` and ``level`` (of each audit's test).
    """
    from bayes_dp.core.one_run_bound import one_run_bounds

    delta = st.get("delta")
    groups = [g for g in st.get("groups", []) if isinstance(g, dict) and g.get("kind") == "one_run"]
    if delta is None or not groups:
        return None
    m, r, v = (np.concatenate([np.atleast_1d(g[k]) for g in groups]) for k in ("m", "r", "v"))
    k = m.size
    level = (1.0 - prob) / k
    lows = one_run_bounds(m, r, v, delta, 1.0 - level)
    i = int(np.argmax(lows))
    return {
        "lower": float(lows[i]),
        "row": i,
        "m": int(m[i]),
        "r": int(r[i]),
        "v": int(v[i]),
        "n_audits": k,
        "confidence": prob,
        "level": level,
    }


def count_words(
    st: dict,
    prob: float,
    lower: float,
    words: list[str],
    at: str,
    strength: str,
    upper: float | None = None,
) -> tuple[float, list[str], dict]:
    """Rewrite the claim of a posterior of counts or one-run audits (identity without either).

    ``words`` are the sentences :func:`bayes_dp.audit_claim` wrote for the posterior's own
    interval (the first of them its lower bound) and ``lower`` its (1 - ``prob``) quantile.
    Returns the lower end the claim states (the smaller of ``lower`` and the per-base bound of
    :func:`count_bound`, or of a one-run posterior's :func:`one_run_bound`), the sentences and
    the extra fields of :class:`~bayes_dp.AuditClaim`
    (``posterior_lower``, ``frequentist_lower``, ``frequentist``). Where the posterior's
    ``prob`` quantile ``upper`` lies below the per-base bound, a last sentence says that the
    data rule the model's answer out (the chains' mode at eps ~ 0, docs/validation/lira.md, "A mode
    the
    chains missed").
    """
    fb = count_bound(st, prob)
    if fb is None:
        fb = one_run_bound(st, prob)
        if fb is None:
            return lower, words, {}
        what = (
            f"the largest one-run bound of the audits (Steinke, Nasr and Jagielski, Theorem 3.3: "
            f"canaries included independently with probability 1/2; {fb['n_audits']} audits at "
            f"level {1 - prob:g}/{fb['n_audits']}, Bonferroni), set by audit {fb['row']} "
            f"({fb['v']} of {fb['r']} guesses right, {fb['m']} canaries)"
        )
        return _words(fb, what, prob, lower, words, at, strength, upper)
    skipped = (
        f" (groups {fb['skipped']} are left out of it: their likelihood does not read them as "
        "binomial)"
        if fb["skipped"]
        else ""
    )
    what = (
        f"the largest per-base Clopper-Pearson bound of the counts (each base's decisions "
        f"independent given its rates; all {fb['n_rates']} rates of {fb['n_bases']} bases at level "
        f"{1 - prob:g}/{fb['n_rates']}, Bonferroni){skipped}, set by row {fb['row']} of group "
        f"{fb['group']!r} (FP {fb['fp']}/{fb['n_neg']}, FN {fb['fn']}/{fb['n_pos']})"
    )
    return _words(fb, what, prob, lower, words, at, strength, upper)


def _words(fb, what, prob, lower, words, at, strength, upper=None):
    """Return the claim's lower end, sentences and fields, given the bound ``fb`` and its words."""
    f = fb["lower"]
    extra = {"posterior_lower": lower, "frequentist_lower": f, "frequentist": fb}
    if lower <= f:
        # the model's bound is the smaller: it is the claim, and the classical one is beside it
        rest = list(words)
        rest[0] = (
            rest[0][:-1] + f"; what the attack shows without a model is eps >= {f:.3g} ({what})."
        )
        if upper is not None and upper < f:
            rest.append(
                f"The posterior's {100 * prob:g}% quantile, {upper:.3g}, lies below what the "
                "attack shows without a model: the data rule the model's answer out (many "
                "bases that show little outvote the few that show more); the claim keeps the "
                "smaller lower end."
            )
        return lower, rest, extra
    pct = f"{100 * prob:g}%"
    first = f"With {pct} confidence, eps >= {f:.3g}{at}, whatever the attack strength: {what}."
    model = (
        f"{model_quantile_words(prob, lower, at, strength)}; where the attack is optimal (its "
        "error point on the boundary of R(eps, delta)) that figure lies above the true eps in "
        f"about half of audits ({DOCS})."
    )
    return f, [first, model, *words[1:]], extra
