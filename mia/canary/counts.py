"""From canary scores to attack counts, Evidence groups and threshold-based epsilon."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from bayes_dp.core.evidence import Evidence
from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.region import classical_epsilon, clopper_pearson_interval
from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

from .oneshot import check_scores

__all__ = [
    "CountsResult",
    "EmpiricalEpsilon",
    "counts_from_scores",
    "empirical_epsilon",
    "epsilon_from_rates",
    "to_evidence",
]


@dataclass(frozen=True)
class CountsResult:
    """Attack counts at a threshold chosen on null scores.

    Attributes
    ----------
    counts : bayes_dp.AttackCounts
        One row: ``fp`` of ``n_neg`` null scores above the threshold and ``fn`` of ``n_pos``
        observed scores at or below it.
    threshold : float
        Decide "member" (canary present) when ``score > threshold``.
    alpha : float
        Target false-positive rate.
    split : bool
        Whether the threshold was chosen on a half of the null scores not used for counting.
    """

    counts: AttackCounts
    threshold: float
    alpha: float
    split: bool

    def to_evidence(self, name: str = "canary", strength: str = "own") -> Evidence:
        """Wrap the counts as a binomial ``bayes_dp.Evidence`` group (see ``to_evidence``)."""
        return to_evidence(self, name=name, strength=strength)


def _is_distribution(obj) -> bool:
    return all(hasattr(obj, a) for a in ("isf", "rvs")) and not isinstance(obj, np.ndarray)


def counts_from_scores(
    observed,
    unseen,
    alpha: float,
    *,
    split: bool = False,
    n_null: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> CountsResult:
    """Count false positives and negatives at a threshold of target false-positive rate.

    The attack decides "canary present" when a score exceeds a threshold ``t``. ``t`` is set so
    that a fraction ``alpha`` of the null scores (unseen canaries) exceed it; false positives are
    counted on the null side (``fp = #{null > t}`` of ``n_neg``) and false negatives on the
    observed side (``fn = #{observed <= t}`` of ``n_pos``).

    Parameters
    ----------
    observed : array_like of float
        Scores of canaries that were inserted (H1).
    unseen : array_like of float or distribution
        Scores of canaries never inserted (H0), or the analytic null law: any object with
        ``isf`` and ``rvs(size, seed)`` (or scipy's ``random_state``) such as
        ``CosineNull(d)`` or a frozen ``scipy.stats`` law. With a law,
        ``t = unseen.isf(alpha)`` exactly and ``n_null`` fresh null scores are drawn to count
        ``fp`` (as fresh random canaries would give); ``split`` is not needed.
    alpha : float
        Target false-positive rate in (0, 1).
    split : bool, default False
        With null scores: choose ``t`` on a random half of them and count ``fp`` on the other
        half, so that ``fp`` is a binomial count of the threshold's false-positive rate.
    n_null : int, optional
        Number of null scores drawn from a law (default: as many as ``observed``).
    seed : int or numpy.random.Generator, optional
        Random seed for the split or the draws.

    Returns
    -------
    CountsResult
        ``.counts`` is the ``bayes_dp.AttackCounts``.

    Notes
    -----
    Choosing ``t`` on the same null scores it is evaluated on fixes ``fp`` at
    ``floor(alpha n_neg)`` by construction: the count is no longer a binomial draw of the
    threshold's true false-positive rate, so a posterior that treats it as one is too narrow
    and centred at alpha whatever the true rate is (the realised empirical quantile is itself
    random). Splitting restores independence at the cost of half the null scores; the observed
    scores are never used to choose ``t``, so ``fn`` is unbiased either way.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r = counts_from_scores(rng.normal(2, 1, 1000), rng.normal(0, 1, 1000), 0.05)
    >>> int(r.counts.fp[0]), int(r.counts.n_neg[0])
    (50, 1000)
    """
    obs = check_scores("observed", observed)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    rng = as_generator(seed)
    if _is_distribution(unseen):
        n = obs.size if n_null is None else check_positive_int("n_null", n_null)
        t = float(unseen.isf(alpha))
        if hasattr(unseen, "dist"):  # frozen scipy.stats law
            draws = unseen.rvs(size=n, random_state=rng)
        else:
            draws = unseen.rvs(size=n, seed=rng)
        null_count = check_scores("unseen", draws)
        split = False
    else:
        null = check_scores("unseen", unseen, min_size=2 if split else 1)
        if split:
            perm = rng.permutation(null.size)
            half = null.size // 2
            choose, null_count = null[perm[:half]], null[perm[half:]]
        else:
            choose = null_count = null
        t = _threshold_at_fpr(choose, alpha)
    fp = int(np.count_nonzero(null_count > t))
    fn = int(np.count_nonzero(obs <= t))
    counts = AttackCounts(fp=fp, n_neg=null_count.size, fn=fn, n_pos=obs.size)
    return CountsResult(counts, t, alpha, bool(split))


def _threshold_at_fpr(null: np.ndarray, alpha: float) -> float:
    """Smallest sample value ``t`` with ``#{null > t} <= floor(alpha n)``."""
    s = np.sort(null)[::-1]
    j = int(math.floor(alpha * s.size))
    return float(s[min(j, s.size - 1)])


def to_evidence(
    result, *, name: str = "canary", strength: str = "own", likelihood: str = "binomial"
) -> Evidence:
    """Turn an audit's counts into a ``bayes_dp.Evidence`` group.

    Parameters
    ----------
    result : CountsResult, EmpiricalEpsilon or bayes_dp.AttackCounts
        The audit's counts.
    name : str, default "canary"
        Group name (variables ``s_<name>``).
    strength : {"own", "shared"}, default "own"
        Canary audits and LiRA differ in attack strength, so the default gives the canary group
        its own strength; epsilon is shared by all groups of one posterior.
    likelihood : str, default "binomial"
        Canary decisions are independent given the run, hence binomial.

    Returns
    -------
    bayes_dp.Evidence

    Examples
    --------
    >>> to_evidence(AttackCounts(5, 100, 30, 100)).name
    'canary'
    """
    counts = getattr(result, "counts", result)
    if not isinstance(counts, AttackCounts):
        raise TypeError(
            "`result` must be a CountsResult, EmpiricalEpsilon or AttackCounts; "
            f"found {type(result).__name__}"
        )
    return Evidence(counts, likelihood=likelihood, name=name, strength=strength)


def epsilon_from_rates(fpr, fnr, delta) -> float:
    """Return the classical epsilon of one (FPR, FNR) pair (deprecated).

    Deprecated: use ``bayes_dp.classical_epsilon(fpr, fnr, delta, reflect=False)``.

    Kairouz et al. (2015) epsilon of one (FPR, FNR) pair, CANIFE's formula
    ``max(log((1 - delta - fpr) / fnr), log((1 - delta - fnr) / fpr), 0)``, now with the rule of
    :func:`bayes_dp.classical_epsilon` at a zero rate: a zero denominator under a positive
    numerator gives ``inf`` (it used to drop that term, so ``(0, 0.75, 0.01)`` gave 0.278; no
    finite eps admits those rates).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     round(epsilon_from_rates(0.02, 0.02, 0.01), 3), epsilon_from_rates(0.0, 0.75, 0.01)
    (3.882, inf)
    """
    warnings.warn(
        "mia.canary.epsilon_from_rates is deprecated and will be removed in the next release; "
        "use bayes_dp.classical_epsilon(fpr, fnr, delta, reflect=False)",
        DeprecationWarning,
        stacklevel=2,
    )
    return float(classical_epsilon(fpr, fnr, delta, reflect=False))


@dataclass(frozen=True)
class EmpiricalEpsilon:
    """Max-over-thresholds empirical epsilon with Clopper-Pearson bounds.

    Attributes
    ----------
    epsilon : float
        Point estimate (max over thresholds, >= 0; inf for a perfect attack).
    lower, upper : float
        Epsilon at the upper / lower Clopper-Pearson limits of FPR and FNR at the chosen
        threshold (two-sided ``ci`` interval for each rate).
    threshold : float
        The chosen threshold (decide "present" when ``score >= threshold``).
    counts : bayes_dp.AttackCounts
        Counts at the chosen threshold.
    accuracy : float
        Best accuracy over thresholds.
    """

    epsilon: float
    lower: float
    upper: float
    threshold: float
    counts: AttackCounts
    accuracy: float


def empirical_epsilon(positive, negative, delta, *, ci=0.95) -> EmpiricalEpsilon:
    """Per-round empirical epsilon of a score attack, maximised over thresholds (CANIFE).

    Every observed score is tried as threshold ``t`` (decide "present" when ``score >= t``);
    FPR and FNR at ``t`` give epsilon by Kairouz et al. (2015),
    ``bayes_dp.classical_epsilon(fpr, fnr, delta, reflect=False)``, and the largest is kept.
    A threshold where that is ``inf`` counts only when the attack is perfect there (both rates
    0, accuracy 1), as in CANIFE's code: with one rate 0 (e.g. the threshold just above the
    largest negative score, FPR = 0) no finite eps admits the observed rates, but a zero count
    among n / 2 scores is what an extreme threshold gives by chance, and letting it count would
    make the maximum ``inf`` in almost every run. The interval uses two-sided Clopper-Pearson
    limits (``bayes_dp.clopper_pearson_interval``) of both rates at that threshold (as in Nasr
    et al. 2021 and CANIFE): the lower bound from the upper limits, the upper bound from the
    lower (``inf`` when a lower limit is 0).

    Parameters
    ----------
    positive : array_like of float
        Scores with the canary present.
    negative : array_like of float
        Scores without the canary.
    delta : float
        Delta in (0, 1); CANIFE uses ``1 / n``.
    ci : float, default 0.95
        Confidence level of each Clopper-Pearson interval.

    Returns
    -------
    EmpiricalEpsilon

    Notes
    -----
    The threshold is chosen to maximise epsilon on the same scores, so the estimate is biased
    upward (optimistic for the attacker) and the interval is not a valid confidence interval;
    with n scores the largest finite value is about ``log(n / 2 - 1)``.

    Examples
    --------
    >>> e = empirical_epsilon([1.0] * 49 + [-1.0], [-1.0] * 49 + [1.0], 0.01)
    >>> round(e.epsilon, 3)
    3.882
    """
    pos = check_scores("positive", positive)
    neg = check_scores("negative", negative)
    delta = check_delta(delta, positive=True)
    ci = check_real("ci", ci, low=0.0, high=1.0, low_open=True, high_open=True)
    n_pos, n_neg = pos.size, neg.size
    ts = np.unique(np.concatenate([pos, neg]))
    sp, sn = np.sort(pos), np.sort(neg)
    tp = n_pos - np.searchsorted(sp, ts, side="left")  # pos >= t
    fp = n_neg - np.searchsorted(sn, ts, side="left")
    fn = n_pos - tp
    eps = classical_epsilon(fp / n_neg, fn / n_pos, delta, reflect=False)
    eps[np.isinf(eps) & ((fp > 0) | (fn > 0))] = -1.0  # one zero rate: skipped (CANIFE)
    arg = int(np.argmax(eps))  # the first threshold of the largest value
    best = max(float(eps[arg]), 0.0)
    acc = float(np.max((tp + (n_neg - fp)) / (n_pos + n_neg)))
    k_fp, k_fn = int(fp[arg]), int(fn[arg])
    lo_fp, hi_fp = clopper_pearson_interval(k_fp, n_neg, ci)
    lo_fn, hi_fn = clopper_pearson_interval(k_fn, n_pos, ci)
    lower = float(classical_epsilon(hi_fp, hi_fn, delta, reflect=False))
    upper = float(classical_epsilon(lo_fp, lo_fn, delta, reflect=False))
    counts = AttackCounts(fp=k_fp, n_neg=n_neg, fn=k_fn, n_pos=n_pos)
    return EmpiricalEpsilon(best, lower, upper, float(ts[arg]), counts, acc)
