"""What an audit shows, in one sentence an auditor can cite (:func:`audit_claim`).

A posterior of eps has two ends of very different standing. Its lower end is supported by the
data: no attack strength s <= 1 explains error rates that low with a smaller eps. Its upper end,
when s is inferred, is usually set by the prior: the likelihood is nearly flat along
s * eps = const, so the posterior's upper tail decays like p(eps) / eps and moves with the
prior's scale. :func:`audit_claim` states the one-sided lower bound at a stated posterior
probability and says whether the upper end is the data's or the prior's, judged from
:meth:`~bayes_dp.Posterior.prior_sensitivity` (the draws reweighted to the eps prior with its
scale halved and doubled; no new run). The derivation and the threshold:
``docs/validation/claims.md``,
"What the audit shows".
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from bayes_dp.core.validation import check_real
from bayes_dp.results.claim_counts import model_quantile_words
from bayes_dp.results.claim_parts import insert_after

if TYPE_CHECKING:  # pragma: no cover
    from bayes_dp.results.posterior import Posterior

__all__ = ["AuditClaim", "audit_claim", "headline", "PRIOR_SHIFT_MAX", "HEADLINE_MAX"]

#: An end of the interval counts as set by the data when halving or doubling the scale of the
#: eps prior moves it by at most this fraction; by more, it is set by the prior.
PRIOR_SHIFT_MAX = 0.10
#: The factors of the eps prior's scale the check reweights to.
FACTORS = (0.5, 2.0)
#: Pooled counts that carry less than this fraction of the information independent decisions
#: would (``mia.dependence``) make a claim not reliable, corrected by effective counts or not.
DEPENDENCE_INFO_MIN = 0.5
#: Most characters of a claim's headline (:attr:`AuditClaim.headline`): two sentences a reader
#: can paste into a paper as they are (tests check every kind of evidence against it).
HEADLINE_MAX = 400


def _dependent_groups(settings: dict) -> dict:
    """``{group name: dependence record}`` of the groups below :data:`DEPENDENCE_INFO_MIN`."""
    out = {}
    for g in settings.get("groups", []):
        rec = g.get("dependence") if isinstance(g, dict) else None
        if isinstance(rec, dict) and (rec.get("info_ratio") or 1.0) < DEPENDENCE_INFO_MIN:
            out[g.get("name", "?")] = rec
    return out


def _dependence_words(dep: dict, frequentist: bool = False) -> str:
    """Return the sentence that opens a claim on dependent counts (corrected by deflation or not).

    With ``frequentist`` (the claim states the per-target bound on effective counts first,
    ``claim_scores``), its last words say that bound allows for the dependence and the
    model's figure does not.

    Neither reading is a finding: the raw counts are treated as independent (the interval is
    too narrow), and effective counts (``mia.dependence.effective_counts``, recorded as
    ``corrected``) put the interval above the true eps more often still, as measured on
    Laplace-mechanism score matrices (``docs/validation/lira.md``, "Effective counts against false
    accusations").
    """
    which = "; ".join(
        f"group {n!r}: {r['info_ratio']:.2f} (design effect FP {r['fp_design_effect']:.2f}, FN "
        f"{r['fn_design_effect']:.2f})"
        for n, r in dep.items()
    )
    head = (
        "NOT RELIABLE: the pooled counts are dependent (their decisions share the models' fits; "
        f"the information they carry relative to independent decisions: {which})"
    )
    if frequentist:
        return (
            f"{head}; the bounds stated next allow for it (the per-target bound deflates every "
            "target's counts by the design effects, the pooled bound takes the models as its "
            "units), the model's figure after them does not "
            '(docs/validation/lira.md, "Dependence of the pooled counts"):'
        )
    if all(r.get("corrected", False) for r in dep.values()):
        return (
            f"{head}; the interval was computed on counts deflated for it (effective counts), "
            "which on score matrices of a mechanism with known eps put the interval above the "
            'truth more often than the raw counts did (docs/validation/lira.md, "Effective counts '
            "against "
            'false accusations"). These draws would say:'
        )
    return (
        f"{head} and the likelihood treats them as independent, so the interval below is "
        "optimistic (too narrow, its lower end possibly too high); no likelihood of this "
        'package models that dependence yet (docs/validation/lira.md, "Dependence of the pooled '
        'counts"). These draws would say:'
    )


@dataclass(frozen=True)
class AuditClaim:
    """What a posterior of eps supports, with the sentence that says it.

    Attributes
    ----------
    prob : float
        Posterior probability of the one-sided bounds (0.95: eps >= ``lower`` with
        probability 0.95, and the equal-tailed interval [``lower``, ``upper``] holds
        2 * prob - 1 = 90% of the posterior).
    lower : float
        The (1 - prob) posterior quantile of eps: eps >= lower with probability ``prob``; for
        a Gaussian-DP posterior with score groups, the shape-free bound
        (``shape_free_lower``), which the sentence states first; for a posterior with
        score-matrix groups, ``frequentist_lower`` whatever that quantile is (the bound holds
        without the model; a quantile below it is the model's reading of the targets that
        show nothing: docs/validation/lira.md, "The claim's lower end: the frequentist bound
        alone");
        for a posterior of designed bases, the smaller of that quantile and
        ``frequentist_lower``. When no other bound stands beside that quantile (groups with
        an over-dispersed likelihood only; a Gaussian-DP posterior without score groups) and
        the prior sets it (``lower_shift`` above :data:`PRIOR_SHIFT_MAX`), 0: the quantile is
        then the prior's, not a finding, and is kept in ``posterior_lower`` (in
        ``gaussian_lower`` for a Gaussian-DP posterior). The same when the chains sit in a
        minor mode (``settings["stop_reason"] == "minor_mode"``): the missed mode lies at eps
        ~ 0, below every draw.
    upper : float
        The ``prob`` posterior quantile of eps.
    delta : float or None
        The delta of the run.
    upper_source : str
        ``"data"``: halving or doubling the eps prior's scale moves ``upper`` by at most
        :data:`PRIOR_SHIFT_MAX`; ``"prior"``: by more; ``"unknown"``: not checked (no
        recorded HalfNormal or LogNormal eps prior) or only by an unreliable reweighting;
        ``"attack_level"`` (posteriors with score-matrix groups that record the test's level
        ``alpha``): ``upper`` lies above both the attack's ceiling (the per-target bound a
        target tested at level ``alpha`` on these trials, with its FP count at the level and
        no false negative, would have) and every target's own bound, so no target's evidence
        reaches it and it is set by the model and the prior; it replaces ``"data"`` and
        ``"unknown"`` (the prior check cannot see that the data stop short of it), not
        ``"prior"``, which says more (the sentence then adds the ceiling). See
        ``frequentist["ceiling"]``. ``"model"`` (posteriors with score-matrix groups, within
        the ceiling): what the prior check called ``"data"`` or ``"unknown"``; an audit bounds
        eps from below only, and the score-matrix model pulls the upper end down with every
        target that shows little, so it is never called the data's there
        (:mod:`bayes_dp.results.claim_scores`). ``"minor_mode"`` (score-matrix posteriors
        whose chains missed a mode at eps ~ 0, ``settings["stop_reason"] == "minor_mode"``):
        ``upper`` and ``posterior_lower`` are the draws', not the posterior's, and the
        sentence reports neither (:func:`bayes_dp.results.claim_scores.unconverged_model_words`).
    upper_shift : float or None
        The largest relative move of ``upper`` over the factors (None when not checked).
    upper_moved_to : dict
        ``{factor: upper end after reweighting}`` (empty when not checked).
    lower_shift : float or None
        The same for the posterior's (1 - prob) quantile. Above :data:`PRIOR_SHIFT_MAX` the
        sentence says that the prior sets it and that it is not a finding, and a claim with no
        frequentist bound beside it states eps >= 0 (see ``lower``).
    reliable : bool
        False when the chains did not converge or mix enough (see
        :func:`bayes_dp.results.diagnostics.findings`), or when the counts are dependent
        (see ``dependence``), deflated to effective counts or not; then the sentence says so
        first, except for chains that did not converge on score-matrix evidence: the claim's
        bound reads the counts only, so it comes first, and the sentence after it says that
        the model's figures are not reliable (or, for a minor mode, does not report them).
    sentence : str
        The claim in words, to paste into a paper.
    dependence : dict or None
        For evidence from a score matrix: ``{group: record}`` of the groups whose pooled
        counts carry less than :data:`DEPENDENCE_INFO_MIN` of the information independence
        assumes (``mia.dependence.DependenceDiagnostic.to_dict()``, with ``corrected``); None
        when no group is that dependent or none records it.
    gaussian_shape : str or None
        Gaussian-DP posteriors only (None otherwise): ``"fits"``, ``"does not fit"`` (a score
        group fails the fit check: the whole-ROC figures are not a finding and the sentence
        says so first) or ``"not checked"``.
    gaussian_lower : float or None
        Gaussian-DP posteriors: the whole-ROC posterior's (1 - prob) quantile of eps, which
        holds if the mechanism is Gaussian.
    shape_free_lower : float or None
        Gaussian-DP posteriors with score groups: the lower bound that assumes no shape of the
        trade-off curve (best single threshold fixed in advance, Bonferroni-adjusted;
        docs/validation/gdp.md section 9). When present, it is ``lower``: the bound stated first.
    shape_free : dict or None
        Its threshold, counts, number of thresholds and level.
    posterior_lower : float or None
        Posteriors of counts (None for Gaussian-DP posteriors): the posterior's (1 - prob)
        quantile of eps, what the model says; also set where the prior sets it and the claim
        states 0 in its place (see ``lower``).
    frequentist_lower : float or None
        The same posteriors: the largest per-target Clopper-Pearson lower bound of eps on
        effective counts (every target's counts deflated by its group's design effects;
        Bonferroni over the 2 T rates of all score-matrix targets; confidence ``prob``; at the
        posterior's delta) and the bound pooled over targets, the larger. It is ``lower``
        (see there), and the sentence states it first: the binomial posterior's interval lay
        above the true eps of a Laplace mechanism in 16 of 100 audits, this bound in none of
        200 per design (docs/validation/lira.md, "The claim on score-matrix evidence"). Posteriors
        of
        designed bases
        (binomial groups, no score matrix): the largest per-base Clopper-Pearson lower bound,
        Bonferroni over the 2 n rates of the binomial groups' n bases
        (:func:`bayes_dp.results.claim_counts.count_bound`), and ``lower`` is the smaller of
        it and ``posterior_lower``; the posterior's quantile sits near the point estimate of
        what the attack shows, above the true eps in about half of audits of an optimal
        attack (docs/validation/claims.md, "What the audit shows").
    frequentist : dict or None
        Its inputs and the base that attains it (designed bases:
        :func:`bayes_dp.results.claim_counts.count_bound`; score matrices, below, see
        :func:`bayes_dp.results.claim_scores.score_matrix_bound`): ``lower``, ``raw_lower``
        (the same bound on raw counts), ``group``, ``row``, ``target`` (score-matrix column),
        its ``fp``, ``n_neg``, ``fn``, ``n_pos``, the design effects applied, ``n_rates``,
        ``confidence``, ``level``, ``n_targets``, ``n_positive`` (targets whose own bound
        is above 0), ``top_targets`` (up to 5 of them, largest bound first: ``target``,
        ``lower``, ``group``, ``row``; the sentence names them when more than one is above 0),
        the attack's ceiling (``alpha``, ``ceiling``, ``raw_ceiling``, ``ceiling_fp``,
        ``ceiling_n_neg``, ``ceiling_n_pos``, ``ceiling_group``; None when a group does not
        record its ``alpha``) and ``upper_beyond_ceiling`` (whether ``upper`` lies above both
        the ceiling and ``frequentist_lower``; None when not checked).
    lower_from_counts : bool
        True where ``lower`` reads the counts only, never the draws (score-matrix evidence:
        the frequentist bound alone), so that chains that did not converge leave it standing
        (see ``reliable``).
    headline : str
        The claim in two sentences (at most :data:`HEADLINE_MAX` characters, :func:`headline`):
        what the audit shows (``lower``, its confidence, ``delta`` and ``set_by``), then what the
        posterior says and what sets its upper end. A claim that is not reliable says so first,
        in a few words ("NOT RELIABLE (the pooled counts are dependent): ..."); ``details``
        says why.
    details : tuple of (str, str)
        The explanation, as named parts in reading order (names:
        :data:`bayes_dp.results.claim_parts.NAMES`): the bound and how it is computed, the
        model's figures, the upper end, the warnings' reasons, with the studies behind them.
        ``sentence`` is their texts joined.
    set_by : str or None
        In a few words, what sets ``lower`` (the base, target, audit, game or threshold and its
        counts), as the headline says it.
    """

    prob: float
    lower: float
    upper: float
    delta: float | None
    upper_source: str
    upper_shift: float | None
    upper_moved_to: dict
    lower_shift: float | None
    reliable: bool
    sentence: str
    dependence: dict | None = None
    gaussian_shape: str | None = None
    gaussian_lower: float | None = None
    shape_free_lower: float | None = None
    shape_free: dict | None = None
    posterior_lower: float | None = None
    frequentist_lower: float | None = None
    frequentist: dict | None = None
    lower_from_counts: bool = False
    headline: str = ""
    details: tuple = ()
    set_by: str | None = None

    @property
    def model_lower(self) -> float:
        """The posterior's own (1 - prob) quantile of eps: the lower end of its interval.

        ``posterior_lower`` (counts) or ``gaussian_lower`` (Gaussian DP) where a bound took
        its place in ``lower``; ``lower`` itself where none did.
        """
        for v in (self.posterior_lower, self.gaussian_lower):
            if v is not None:
                return v
        return self.lower

    @property
    def cites_model_lower(self) -> bool:
        """Whether ``lower``, the bound to cite, is the model's own lower end.

        False when another bound (a frequentist or shape-free bound, or 0 where the prior or a
        missed mode sets the quantile) took its place: the credible interval's lower end is
        then what the model says, not a finding, and :meth:`interval_words` says so.
        """
        return math.isclose(self.lower, self.model_lower, rel_tol=1e-12, abs_tol=1e-300)

    @property
    def interval(self) -> tuple[float, float | None]:
        """The interval the summary line prints: (``lower``, ``upper`` or None).

        The lower end is always the bound the claim signs. The upper end is ``upper`` where the
        line prints it as one (the claim is the model's own lower end, or the data set the
        upper end, ``upper_source`` ``"data"``), else None: the line then states the bound
        alone (see :meth:`interval_words`).
        """
        printed = self.cites_model_lower or self.upper_source == "data"
        return self.lower, (self.upper if printed else None)

    def interval_words(self) -> str:
        """Return the line that heads a summary: the interval to read, or the bound alone.

        Where ``lower``, the bound the claim signs, is the model's own lower end
        (:attr:`cites_model_lower`), the line is the equal-tailed ``2 prob - 1`` credible
        interval [``lower``, ``upper``]. Where another bound took its place, the line prints no
        interval with the model's lower end: an interval or a "with 95% probability, eps >= x"
        sentence whose lower end lies above the truth is a false accusation however it is
        labelled, and the model's lower end did that in about half of the audits of an optimal
        attack (docs/validation/claims.md, "What the audit shows") and in 46 of 220 score-matrix
        audits of mechanisms
        of known eps (docs/validation/lira.md, "The claim with the pooled bound, measured"), the
        claim's
        in none. The line is then "eps in [``lower``, ``upper``]" where the data set the upper
        end (``upper_source`` ``"data"``), and "eps >= ``lower``" with the model's quantiles as
        figures otherwise: an upper end the prior or the model sets is not a finding, and on
        score matrices of a Laplace mechanism at eps 3 it lay below the truth in 44 of 50
        audits (docs/validation/lira.md, "The printed interval").

        Examples
        --------
        >>> from bayes_dp.results.claim import AuditClaim
        >>> c = AuditClaim(prob=0.95, lower=0.2, upper=2.0, delta=1e-5, upper_source="prior",
        ...                upper_shift=None, upper_moved_to={}, lower_shift=None,
        ...                reliable=True, sentence="", posterior_lower=0.98,
        ...                frequentist_lower=0.2)
        >>> c.interval_words().split(" (")[0]
        'eps >= 0.2'
        >>> "95% quantile, 2, is set by the prior of eps" in c.interval_words()
        True
        """
        lo = self.model_lower
        if self.cites_model_lower:
            return (
                f"{_pct(2 * self.prob - 1)} credible interval for eps: [{lo:.3g}, {self.upper:.3g}]"
            )
        low = f"what the audit shows at {_pct(self.prob)}, the claim below"
        if self.upper_source == "minor_mode":
            return (
                f"eps >= {self.lower:.3g} ({low}); the model's quantiles are not reported: its "
                "chains missed a mode of much higher posterior density at eps ~ 0"
            )
        own = f"own {_pct(1 - self.prob)} quantile, {lo:.3g}, is not a finding"
        if self.interval[1] is not None:
            return (
                f"eps in [{self.lower:.3g}, {self.upper:.3g}] (lower end: {low}; upper end: the "
                f"model's {_pct(self.prob)} quantile, set by the data); the model's {own}"
            )
        return (
            f"eps >= {self.lower:.3g} ({low}); the model's {_pct(self.prob)} quantile, "
            f"{self.upper:.3g}, is {UPPER_WORDS.get(self.upper_source, self.upper_source)}, and "
            f"its {own}"
        )

    def to_dict(self) -> dict:
        """Return the fields as a JSON-ready dict (non-finite numbers become None).

        Besides the fields: ``model_lower``, ``cites_model_lower`` and ``interval_words`` (see
        those members), and ``interval``: [``lower``, ``upper``], the interval the line prints
        (whose lower end is the bound the claim signs), with None for an upper end the line does
        not print as one (not the data's: see :meth:`interval_words`).
        """
        out = asdict(self)
        out["model_lower"] = self.model_lower
        out["cites_model_lower"] = self.cites_model_lower
        out["interval_words"] = self.interval_words()
        out["interval"] = [v if v is not None and math.isfinite(v) else None for v in self.interval]
        out["upper_moved_to"] = {f"{k:g}": v for k, v in self.upper_moved_to.items()}
        out["details"] = [[name, text] for name, text in self.details]
        for k, v in list(out.items()):
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = None
        if isinstance(out.get("frequentist"), dict):
            out["frequentist"] = {
                k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out["frequentist"].items()
            }
        return out


def _pct(p: float) -> str:
    return f"{100 * p:g}%"


#: How :meth:`AuditClaim.interval_words` names the source of an upper end it does not print as
#: one (``"data"``: the line prints the interval).
UPPER_WORDS = {
    "data": "set by the data",
    "prior": "set by the prior of eps",
    "unknown": "not checked against the prior",
    "attack_level": "beyond what the attack could show at its level",
    "model": "not a finding (an audit shows how large eps is at least, never at most)",
}


def headline(
    *,
    prob: float,
    lower: float,
    delta: float | None,
    set_by: str,
    confidence: bool,
    model_interval: tuple[float, float],
    upper_source: str,
    gaussian_shape: str | None,
    warnings: list[tuple[str, bool]],
) -> str:
    """Return a claim in two sentences: what the audit shows, then what the posterior says.

    The one place the headline of :class:`AuditClaim` is written, for every kind of evidence.
    ``confidence``: ``lower`` is a frequentist bound (else the posterior's quantile);
    ``model_interval``: the posterior's own (1 - prob) and prob quantiles; ``warnings``:
    ``(phrase, model_only)`` pairs, the reasons the claim is not reliable (``model_only``: the
    reason touches the model's figures only, not the bound, and heads the second sentence).

    >>> h = headline(prob=0.95, lower=1.23, delta=1e-5, set_by="set by target 7",
    ...     confidence=True, model_interval=(0.8, 3.1), upper_source="prior",
    ...     gaussian_shape=None, warnings=[("the pooled counts are dependent", False)])
    >>> h.split(": ", 1)[0]
    'NOT RELIABLE (the pooled counts are dependent)'
    >>> h.split(": ", 1)[1].split(". ")[0]
    'With 95% confidence, eps >= 1.23 at delta = 1e-05, set by target 7'
    >>> h.split(". ")[1]
    "The posterior's 90% interval is [0.8, 3.1]; its upper end is set by the prior of eps."
    """
    at = "" if delta is None else f" at delta = {delta:g}"
    kind = "confidence" if confidence else "posterior probability"
    bound_warn = [w for w, model_only in warnings if not model_only]
    model_warn = [w for w, model_only in warnings if model_only]
    head = f"NOT RELIABLE ({'; '.join(bound_warn)}): " if bound_warn else ""
    first = f"{head}With {_pct(prob)} {kind}, eps >= {lower:.3g}{at}, {set_by}."
    lo, hi = model_interval
    interval = f"{_pct(2 * prob - 1)} interval is [{lo:.3g}, {hi:.3g}]"
    if upper_source == "minor_mode":
        second = (
            "The model's figures are not reported: its chains missed a mode of much higher "
            "density at eps ~ 0."
        )
    elif gaussian_shape == "does not fit":
        second = (
            f"The Gaussian shape does not fit these scores, so the posterior's {interval}: not "
            "a finding."
        )
    else:
        who = "If the mechanism is Gaussian, the" if gaussian_shape is not None else "The"
        second = (
            f"{who} posterior's {interval}; its upper end is "
            f"{UPPER_WORDS.get(upper_source, upper_source)}."
        )
    if model_warn:
        second = f"NOT RELIABLE ({'; '.join(model_warn)}): {second[0].lower()}{second[1:]}"
    return f"{first} {second}"


def _model_set_by(posterior: Posterior, strength: str) -> str:
    """Say what sets a claim whose lower end is the posterior's own quantile (no other bound)."""
    from bayes_dp.results.posterior import GdpPosterior

    if isinstance(posterior, GdpPosterior):
        return "if the mechanism is Gaussian, set by the posterior of mu"
    return f"set by the posterior{strength}"


def _restart_words(restart: dict) -> str:
    """Say that the chains were run again from a mode the first chains missed.

    ``restart`` is ``post.settings["mode_restart"]`` (:func:`bayes_dp.inference.runners.
    sample_exact`): the point found by :func:`bayes_dp.inference.modes.find_better_mode` and
    the first chains' quantiles of eps.
    """
    from bayes_dp.results.claim_scores import DOCS_MISSED

    gap = float(restart.get("log_post", math.nan)) - float(restart.get("log_post_draws", math.nan))
    q = restart.get("first_eps_quantiles") or [math.nan] * 3
    return (
        f"The model's figures come from chains started again at a mode of much higher "
        f"posterior density that the first chains missed (eps = "
        f"{float(restart.get('eps', math.nan)):.2g}, {gap:.0f} log units above their best draw): "
        f"the first chains' 5% and 95% quantiles, {q[0]:.3g} and {q[2]:.3g}, were a minor "
        f"mode's, not the posterior's ({DOCS_MISSED})."
    )


def audit_claim(posterior: Posterior, prob: float = 0.95) -> AuditClaim:
    """State what the audit shows: a lower bound of eps, and whose the upper end is.

    Parameters
    ----------
    posterior : Posterior
        A posterior of eps (from :func:`~bayes_dp.estimate_epsilon` or
        :func:`~bayes_dp.load_posterior`).
    prob : float
        Posterior probability of the lower bound, in (0.5, 1). Default 0.95, which pairs with
        the 90% equal-tailed interval shown elsewhere.

    Returns
    -------
    AuditClaim

    Raises
    ------
    TypeError
        If ``posterior`` is not a :class:`~bayes_dp.Posterior`.
    ValueError
        If ``prob`` is not in (0.5, 1) or the posterior has no eps.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> counts = bdp.AttackCounts(fp=[40, 50], n_neg=1000, fn=[250, 200], n_pos=1000)
    >>> post = bdp.estimate_epsilon(counts, delta=1e-5, draws=2000, seed=1, check=False)
    >>> claim = bdp.audit_claim(post)
    >>> claim.lower == min(claim.posterior_lower, claim.frequentist_lower)
    True
    >>> claim.sentence.startswith(f"With 95% confidence, eps >= {claim.lower:.3g}")
    True
    >>> claim.upper_source  # s inferred: the upper end follows the prior
    'prior'
    """
    from bayes_dp.results.claim_game import game_groups, game_words
    from bayes_dp.results.diagnostics import passes_convergence_checks
    from bayes_dp.results.posterior import GdpPosterior, Posterior

    if not isinstance(posterior, Posterior):
        raise TypeError(
            f"`posterior` must be a bayes_dp.Posterior; found {type(posterior).__name__}"
        )
    prob = check_real("prob", prob, low=0.5, high=1.0, low_open=True, high_open=True)
    if "eps" not in posterior.var_names:
        raise ValueError(f"`posterior` has no eps; its variables: {posterior.var_names}")
    interval_prob = 2 * prob - 1
    lower, upper = posterior.interval(interval_prob, "eps")
    st = posterior.settings
    delta = st.get("delta")
    reliable = passes_convergence_checks(posterior)

    shift_hi = shift_lo = None
    moved: dict = {}
    why_unknown = ""
    try:
        sens = posterior.prior_sensitivity(interval_prob, FACTORS)
    except ValueError as e:
        sens, why_unknown = {}, str(e)
    if sens:
        moved = {f: r["interval"][1] for f, r in sens.items()}
        shift_hi = max(abs(r["interval"][1] / upper - 1.0) for r in sens.values())
        shift_lo = max(abs(r["interval"][0] / lower - 1.0) for r in sens.values())
        all_reliable = all(r["reliable"] for r in sens.values())
        if shift_hi > PRIOR_SHIFT_MAX:
            source = "prior"
        elif all_reliable:
            source = "data"
        else:
            source = "unknown"
            why_unknown = "the reweighted draws reach the prior's wider tail too rarely"
    else:
        source = "unknown"

    at = f" at delta = {delta:g}" if delta is not None else ""
    of = "mu (the Gaussian-DP parameter)" if isinstance(posterior, GdpPosterior) else "eps"
    fixed = st.get("fixed", {})
    s_fixed = {k: v for k, v in fixed.items() if k == "s" or k.startswith("s_")}
    if s_fixed:
        given = ", ".join(f"{k} = {float(v):g}" for k, v in s_fixed.items())
        strength = f", assuming the attack strength {given} (fixed, not inferred)"
    else:
        strength = ", with the attack strength inferred from the data"
    words = [
        ("bound", f"With {_pct(prob)} posterior probability, eps >= {lower:.3g}{at}{strength}.")
    ]
    lower_by_prior = shift_lo is not None and shift_lo > PRIOR_SHIFT_MAX
    if lower_by_prior:
        words.append(
            (
                "prior lower end",
                f"The posterior's lower end, {lower:.3g}, is set by the prior of {of}, not by the "
                f"data (it moves by {100 * shift_lo:.0f}% when the prior's scale is halved or "
                "doubled): it is not a finding.",
            )
        )
    interval = f"the model's {_pct(prob)} quantile of eps, {upper:.3g}"
    if source == "prior":
        big = max(moved, key=lambda f: abs(moved[f] / upper - 1.0))
        upper_words = (
            f"The upper end, {interval}, is set by the prior of {of}, not by the data: it "
            f"moves to {moved[big]:.3g} when the prior's scale is multiplied by {big:g}; "
            "cite the lower bound, not the interval, unless the attack strength is known."
        )
    elif source == "data":
        upper_words = (
            f"The upper end, {interval}, is set by the data: halving or doubling the prior's "
            f"scale moves it by {100 * shift_hi:.0f}% at most."
        )
    else:
        upper_words = (
            f"Whether the upper end, {interval}, is set by the data or by the prior was not "
            f"checked ({why_unknown}); cite the lower bound."
        )
    words.append(("upper end", upper_words))
    extra, scores = {}, False
    if isinstance(posterior, GdpPosterior):
        from bayes_dp.results.claim_gdp import gdp_words

        lower, words, extra = gdp_words(st, prob, lower, upper, words, at, strength)
    elif game_groups(st):
        # a guessing game played on a score matrix: its bound (and the pooled one) first
        lower, words, extra = game_words(
            st, prob, lower, words, at, strength, upper=upper, source=source
        )
        source = extra.pop("upper_source", source)
        scores = True
    else:
        from bayes_dp.results.claim_scores import score_matrix_words

        lower, words, extra = score_matrix_words(
            st, prob, lower, words, at, strength, upper=upper, source=source
        )
        source = extra.pop("upper_source", source)
        if not extra:  # counts of designed bases: the classical bound first
            from bayes_dp.results.claim_counts import count_words

            lower, words, extra = count_words(st, prob, lower, words, at, strength, upper)
        else:
            scores = True
    minor = st.get("minor_mode") if st.get("stop_reason") == "minor_mode" else None
    minor = minor if isinstance(minor, dict) else None
    if scores and not reliable:
        # the bound reads the counts, never the draws: the failed check changes the model's
        # sentences after it, not the bound (claim_scores.unconverged_model_words)
        from bayes_dp.results.claim_scores import unconverged_model_words

        words, new_source = unconverged_model_words(
            words, minor, prob, extra["posterior_lower"], upper
        )
        source = new_source or source
    if (
        (lower_by_prior or minor is not None)
        and extra.get("frequentist_lower") is None
        and extra.get("shape_free_lower") is None
    ):
        # no bound beside the posterior's quantile (groups with an over-dispersed likelihood
        # only; a Gaussian-DP posterior without score groups): the quantile is all the claim
        # has, and it is not a finding when the prior sets it or the chains missed a mode
        if minor is not None:
            why = (
                f"the chains missed a mode of higher posterior density at eps = "
                f"{float(minor.get('eps', float('nan'))):.2g} (a minor-mode warning), so the "
                "posterior's lower end lies below what the draws show"
            )
        else:
            why = "the data alone do not bound eps away from 0"
        first = words[0][1]
        if isinstance(posterior, GdpPosterior):  # its first sentence carries the GDP note
            model = "What the model says (not the finding): " + first[0].lower() + first[1:]
        else:
            model = model_quantile_words(prob, lower, at, strength) + "."
        words = [
            ("bound", f"With {_pct(prob)} probability, eps >= 0{at}: {why}."),
            ("model", model),
            *words[1:],
        ]
        extra["set_by"] = why
        if not isinstance(posterior, GdpPosterior):
            extra["posterior_lower"] = lower
        lower = 0.0
    restart = st.get("mode_restart")
    if isinstance(restart, dict) and not restart.get("no_draws") and minor is None:
        # after the model's sentence (on score matrices after "NOT RELIABLE ..." too, when the
        # second run failed another check; designed bases get that first, below)
        words = insert_after(
            words, "model" if scores else "bound", ("restart", _restart_words(restart))
        )
    warnings = []  # (short phrase for the headline, whether it concerns the model's figures only)
    if not reliable and not scores:
        words.insert(
            0,
            (
                "convergence",
                "NOT RELIABLE: the chains did not converge or mix enough (see the warnings); "
                "these draws would say:",
            ),
        )
        warnings.append(("the chains did not converge", False))
    elif not reliable:
        warnings.append(("its chains did not converge", True))
    dep = _dependent_groups(st) or None
    if dep:
        words.insert(
            0, ("dependence", _dependence_words(dep, extra.get("frequentist") is not None))
        )
        warnings.insert(0, ("the pooled counts are dependent", False))
        reliable = False
    set_by = extra.pop("set_by", None) or _model_set_by(posterior, strength)
    details = tuple(words)
    return AuditClaim(
        prob=prob,
        lower=lower,
        upper=upper,
        delta=delta,
        upper_source=source,
        upper_shift=shift_hi,
        upper_moved_to=moved,
        lower_shift=shift_lo,
        reliable=reliable,
        sentence=" ".join(t for _, t in details),
        dependence=dep,
        lower_from_counts=scores,
        headline=headline(
            prob=prob,
            lower=lower,
            delta=delta,
            set_by=set_by,
            confidence=lower in (extra.get("frequentist_lower"), extra.get("shape_free_lower")),
            model_interval=(
                extra.get("posterior_lower", extra.get("gaussian_lower", lower)),
                upper,
            ),
            upper_source=source,
            gaussian_shape=extra.get("gaussian_shape"),
            warnings=warnings,
        ),
        details=details,
        set_by=set_by,
        **extra,
    )
