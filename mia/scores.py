"""Bring your own attack: LiRA-style score matrices to cross-fed attack counts.

A LiRA-style experiment (Carlini et al., 2022) trains ``n_models`` models, each on a random
subset (typically half) of a pool of ``n_targets`` examples, and records a score of every target
under every model: ``scores[m, t]`` (a loss, or LiRA's logit-scaled confidence
:func:`mia.lira_logit`; optionally ``scores[m, t, a]`` for several augmentations) and
``keep[m, t]`` (True when model ``m`` trained on target ``t``). :func:`counts_from_score_matrix`
turns these into :class:`bayes_dp.AttackCounts` with the cross-fed measurement of the paper's
Alg. 5: every target is its own challenge base, and every model in turn is held out and
attacked with the others as shadow models. How this design differs from the paper's challenge
bases is discussed in ``docs/validation/lira.md`` ("Bring your own scores").

:func:`simulate_score_matrix` draws a score matrix from a Gaussian mechanism with known epsilon
(for calibration); :func:`mia.readers.read_score_file` reads ``.npz`` and long ``.csv`` score
files, and :mod:`mia.score_checks` checks the arrays and options.

It is long because it holds the score-matrix attack end to end: the online/offline/fixed-variance
LiRA tests and the conversion into counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from bayes_dp import AttackCounts, Evidence
from bayes_dp.core.validation import as_generator, check_positive_int, check_real

from .dependence import DependenceDiagnostic, estimate_dependence, warn_if_dependent
from .lira import check_alpha, decide
from .measure import loo_sums
from .model_rates import pooled_record, pooled_summary
from .score_checks import (
    METHODS,
    check_focus,
    check_keep,
    check_options,
    check_score_matrix,
)

__all__ = [
    "METHODS",
    "ScoreMatrixCounts",
    "counts_from_score_matrix",
    "simulate_score_matrix",
]

_SHOW = 5  # targets named in an error message


@dataclass(frozen=True, eq=False)
class ScoreMatrixCounts:
    """Cross-fed counts from a score matrix, with the diagnostics of how they were made.

    Attributes
    ----------
    counts : bayes_dp.AttackCounts
        One row per counted target (challenge base): ``fp`` out of ``n_neg`` OUT models and
        ``fn`` out of ``n_pos`` IN models.
    targets : numpy.ndarray of int
        Index (column of ``scores``) of the target behind each row of ``counts``.
    skipped : numpy.ndarray of int
        Targets left out (``skip=True``): fewer than the required IN or OUT models, or (with
        per-target variances) no spread among their shadow scores.
    n_in, n_out : numpy.ndarray of int, shape (n_targets,)
        IN and OUT models of every target, skipped ones included.
    decisions : numpy.ndarray of bool, shape (n_models, n_targets)
        "Member" decisions of the held-out models; False for skipped targets.
    alpha : float
        Target type-I error of the test.
    method : {"online", "offline"}
        The test used.
    fixed_variance : bool
        Whether one variance pooled over targets was used.
    variance : float or None
        The pooled variance (all models counted) when ``fixed_variance``, else None.
    side : {"greater", "less"} or None
        For ``method="offline"``: whether high or low scores were taken as evidence of
        membership.
    dependence : mia.dependence.DependenceDiagnostic or None
        How much information the pooled counts carry relative to independent decisions
        (design effect per side, per-model effect); ``docs/validation/lira.md``, "Dependence of the
        pooled counts". A :class:`~bayes_dp.core.exceptions.DependenceWarning` was raised when it
        is below one half.
    pooled : dict or None
        The per-model error rates of :func:`mia.pooled_model_rates` (``fpr``, ``fnr``,
        ``test_models``, ``n_targets``, ``n_reference``, ``seed``, ``exposure``; a test fitted
        on a random half of the models, the split seeded by ``counts_from_score_matrix``'s
        ``seed``), from
        which the claim computes the bound pooled over targets (``docs/validation/lira.md``, "The
        pooled
        bound"); None with fewer than 8 models or where the reference half fits no target.
    """

    counts: AttackCounts
    targets: np.ndarray
    skipped: np.ndarray
    n_in: np.ndarray
    n_out: np.ndarray
    decisions: np.ndarray
    alpha: float
    method: str
    fixed_variance: bool
    variance: float | None
    side: str | None
    dependence: DependenceDiagnostic | None = None
    pooled: dict | None = None

    @property
    def n_skipped(self) -> int:
        """Number of targets left out."""
        return int(self.skipped.size)

    def __repr__(self) -> str:
        fv = ", fixed variance" if self.fixed_variance else ""
        return (
            f"ScoreMatrixCounts({len(self.counts)} targets, {self.n_skipped} skipped, "
            f"method={self.method!r}{fv}, alpha={self.alpha:g}, "
            f"FP {int(self.counts.fp.sum())}/{int(self.counts.n_neg.sum())}, "
            f"FN {int(self.counts.fn.sum())}/{int(self.counts.n_pos.sum())})"
        )

    def to_evidence(
        self, *, name: str = "lira", likelihood: str = "binomial", focus=None, **kwargs
    ) -> Evidence:
        """Return the counts as a :class:`bayes_dp.Evidence` group.

        Parameters
        ----------
        name : str
            Name of the group.
        likelihood : {"binomial", "exposure_mixture", "bivariate_normal", "beta_binomial"}
            ``"binomial"`` (the default) puts every target's error point in the band
            R_s(eps, delta); on score matrices where most targets show nothing, those pull eps
            down. ``"exposure_mixture"``: each target is exposed (its error point uniform on
            R_s(eps, delta)) with probability pi, else unexposed (uniform on R(kappa eps,
            delta), kappa < 1), pi and kappa sampled; targets that show nothing no longer pull
            eps towards 0. It is not the default: on Laplace-mechanism score matrices its 90%
            interval lay above the true eps more often than the binomial's, and at 64 x 10,000
            it did not converge in 15 min (``docs/validation/lira.md``, "The exposure mixture").
            ``"bivariate_normal"`` (paper eq. 7, tau and rho inferred unless fixed with
            ``fix``) has a dominant mode at eps ~ 0 there (``docs/validation/lira.md``, "Which
            likelihood
            for a score matrix").
            The counts are the raw pooled counts; the binomial on effective counts
            (:func:`mia.effective_counts`) put its interval above the true eps more often, not
            less (``docs/validation/lira.md``, "Effective counts against false accusations").
            Whatever the likelihood, :func:`bayes_dp.audit_claim` states first the largest
            per-target Clopper-Pearson bound on effective counts and takes the smaller of it
            and the posterior's lower end (``docs/validation/lira.md``, "The claim on score-matrix
            evidence"); the group's ``dependence`` record carries the design effects it needs,
            ``skipped_targets`` (the columns left out), which maps a row of the counts to its
            column of the score matrix, and ``alpha`` (the test's level), from which the claim
            says whether the posterior's upper end lies beyond what a test at that level could
            show.
        focus : array_like of int or of bool, or str or path-like, optional
            The targets declared before the audit as those it is about (canaries): their
            columns of the score matrix, a boolean mask over the columns, or a file of either
            (``.npy``, or text of integers separated by commas, spaces or new lines). The claim's
            per-target bound then gives their rates
            :data:`~bayes_dp.results.claim_scores.FOCUS_SHARE` of its error and the other
            targets the rest (a weighted Bonferroni correction), so that targets that show
            nothing, however many, cost the declared ones little (``docs/validation/lira.md``,
            "Declared
            targets"). Valid only when chosen without looking at the scores. The posterior does
            not use it.
        **kwargs
            Passed to ``Evidence`` (``strength``, ``fix``, ``reflect``: ``reflect=False`` reads
            every target's decisions as made, its error point in the band's lower-left half;
            not the default, ``docs/validation/lira.md``, "Decisions as made in the model").

        Returns
        -------
        bayes_dp.Evidence

        Examples
        --------
        >>> scores, keep = simulate_score_matrix(16, 4, mu=2.0, seed=0)
        >>> res = counts_from_score_matrix(scores, keep, alpha=0.1)
        >>> res.to_evidence().likelihood
        'binomial'
        >>> res.to_evidence(likelihood="exposure_mixture").likelihood
        'exposure_mixture'
        """
        dep = None
        if self.dependence is not None:
            # the skipped columns map a row of the counts back to its column of the score
            # matrix (rows are the kept columns in increasing order), so that the claim can name
            # the target that sets its lower bound; a short list, unlike the kept columns. The
            # test's level bounds what any target can show (the claim's ceiling)
            dep = {
                **self.dependence.to_dict(),
                "skipped_targets": self.skipped.tolist(),
                "alpha": float(self.alpha),
            }
            if focus is not None:
                dep["focus_targets"] = check_focus(focus, self.n_in.size).tolist()
            rates = self._pooled_record(dep.get("focus_targets"))
            if rates is not None:
                dep["pooled_rates"] = rates
        elif focus is not None:
            raise ValueError("`focus` needs the counts' dependence record; found none")
        return Evidence(self.counts, likelihood=likelihood, name=name, dependence=dep, **kwargs)

    def _pooled_record(self, focus):
        """Return the per-model rates the claim pools (:func:`mia.model_rates.pooled_record`)."""
        return pooled_record(self.pooled, focus)


def _describe(targets, n_in, n_out) -> str:
    shown = ", ".join(f"{int(t)} ({n_in[t]} IN, {n_out[t]} OUT)" for t in targets[:_SHOW])
    more = f" and {targets.size - _SHOW} more" if targets.size > _SHOW else ""
    return shown + more


#: (method, fixed_variance) -> (IN, OUT) models a target needs by default, and the command
#: line's name of the method (``bayes-dp estimate --score-method``).
_NEEDS = {
    ("online", False): (3, 3, "online"),
    ("online", True): (2, 2, "online-fixed"),
    ("offline", False): (1, 3, "offline"),
    ("offline", True): (1, 2, "offline-fixed"),
}


def _range(v: np.ndarray) -> str:
    lo, hi = int(v.min()), int(v.max())
    return f"{lo}" if lo == hi else f"{lo} to {hi}"


def _why_too_few(n_in, n_out, t_in: int, t_out: int, method: str, fixed: bool) -> str:
    """Say what the targets have and which method counts how many of them."""
    have = (
        f"the targets have {_range(n_in)} IN and {_range(n_out)} OUT models each, "
        f"method={method!r} with fixed_variance={fixed} needs {t_in} IN and {t_out} OUT"
    )
    works = []
    for (m, f), (need_in, need_out, cli) in _NEEDS.items():
        if (m, f) == (method, fixed):
            continue
        ok = int(((n_in >= need_in) & (n_out >= need_out)).sum())
        if ok:
            works.append(
                f"method={m!r}, fixed_variance={f} counts {ok} (command line: --score-method {cli})"
            )
    fix = "; ".join(works) if works else "no method works with so few models: train more"
    return f"{have}; {fix}"


#: Score-matrix entries per block of targets in :func:`counts_from_score_matrix` (2**20
#: float64 = 8 MiB per temporary).
_BLOCK_ENTRIES = 2**20


def _blocks(n_targets: int, n_models: int):
    """Yield slices of consecutive targets, about :data:`_BLOCK_ENTRIES` entries each."""
    step = max(1, _BLOCK_ENTRIES // max(1, n_models))
    for lo in range(0, n_targets, step):
        yield slice(lo, min(n_targets, lo + step))


def _side_sums(x, k, cols):
    """Leave-one-out sums (:func:`mia.measure.loo_sums`) of the IN and OUT scores of ``cols``."""
    xs, ks = x[:, cols], k[:, cols]
    return loo_sums(xs, ks), loo_sums(xs, ~ks)


def counts_from_score_matrix(
    scores,
    keep,
    alpha: float,
    method: str = "online",
    *,
    fixed_variance: bool = False,
    side: str = "auto",
    min_models: int | None = None,
    skip: bool = False,
    seed=0,
) -> ScoreMatrixCounts:
    """Cross-fed attack counts (paper Alg. 5) from a LiRA-style score matrix.

    Every target is one challenge base. For each target and each model ``m`` in turn, model
    ``m`` is the attacked model and the other models are the shadow models: normals are fitted
    (sample mean, unbiased variance) to the target's scores under the other IN models and the
    other OUT models, with ``m`` left out of its own side, and the score under ``m`` is tested
    with the exact Gaussian likelihood-ratio test at type-I error ``alpha``
    (:func:`mia.learn_and_decide`; the same implementation). A held-out OUT model decided
    "member" is a false positive, a held-out IN model decided "non-member" a false negative.

    Parameters
    ----------
    scores : array_like of float, shape (n_models, n_targets) or (n_models, n_targets, n_augs)
        Score of every target under every model: a loss, or LiRA's logit-scaled confidence
        (:func:`mia.lira_logit`). With several augmentations per example the scores are
        averaged over the last axis first (the mean of jointly normal scores is normal, so the
        test keeps its exact size).
    keep : array_like of bool or 0/1, shape (n_models, n_targets)
        True (1) where the model was trained on the target (IN), False (0) where not (OUT).
    alpha : float
        Target type-I error of the test, in (0, 1).
    method : {"online", "offline"}
        ``"online"``: LiRA's online attack, the likelihood-ratio test between the IN and OUT
        normals. ``"offline"``: LiRA's offline attack, which fits only the OUT normal and
        decides "member" when the score is beyond its ``1 - alpha`` quantile on the side given
        by ``side`` (a one-sided test of size ``alpha``); the IN models only serve as held-out
        targets.
    fixed_variance : bool
        Use one variance for all targets, pooled over targets (the within-target sums of
        squares over the within-target degrees of freedom; online: over IN and OUT scores,
        offline: over OUT scores), as LiRA does with few models. The held-out model's score is
        left out of the pool. Then the online test is one-sided as well.
    side : {"auto", "greater", "less"}
        Offline only: ``"greater"`` when high scores indicate membership (LiRA's logit
        confidences), ``"less"`` when low ones do (losses). ``"auto"`` takes the sign of the
        mean over targets of (mean IN score - mean OUT score); this uses one bit of
        information from the IN models.
    min_models : int, optional
        Minimum number of IN and of OUT models a target needs. The default is the least the
        method can work with: 3 on each side for ``"online"`` (2 shadow scores remain after
        leaving one out) and 3 OUT / 1 IN for ``"offline"``; with ``fixed_variance``, 2 instead
        of 3. A larger value may be given, a smaller one may not.
    skip : bool
        What to do with targets that have fewer models than that (or, with per-target
        variances, whose shadow scores have no spread): raise ``ValueError`` naming the first
        few (False, the default), or leave them out and list them in the result's ``skipped``
        (True).
    seed : int or numpy.random.Generator
        The random split of the models behind the result's ``pooled`` rates
        (:func:`mia.pooled_model_rates`: a test fitted on half of the models, applied to the
        others); the counts do not depend on it. Default 0: the same split for the same matrix.

    Returns
    -------
    ScoreMatrixCounts
        ``.counts`` (``AttackCounts``, one row per counted target with ``n_neg`` = its OUT
        models and ``n_pos`` = its IN models), ``.to_evidence(name=...)`` and diagnostics.

    Raises
    ------
    ValueError, TypeError
        For bad shapes or dtypes, non-finite scores (naming the first (model, target)),
        ``alpha`` outside (0, 1), and targets with too few models or no spread (unless
        ``skip=True``).

    Notes
    -----
    The decisions of one target share their shadow models and are correlated; so are the
    decisions of different targets, because the same models score all targets. Measured by
    simulation, the false-positive count of a target is less dispersed than a binomial and the
    false-negative count more (about twice the binomial variance with 32 models a side), and the
    two are weakly correlated (:attr:`ScoreMatrixCounts.dependence` measures it). ``to_evidence``
    uses binomial decisions by default; ``docs/validation/lira.md`` ("The exposure mixture") says
    why the
    mixture is not the default.

    Examples
    --------
    >>> scores, keep = simulate_score_matrix(16, 4, mu=2.0, seed=0)
    >>> res = counts_from_score_matrix(scores, keep, alpha=0.1)
    >>> res.counts.n_neg.tolist(), res.counts.n_pos.tolist()
    ([8, 8, 8, 8], [8, 8, 8, 8])
    >>> res.to_evidence(name="lira").likelihood
    'binomial'
    """
    arr = check_score_matrix(scores)
    k = check_keep(keep, arr.shape[:2])
    a = check_alpha("alpha", alpha)
    if a.ndim != 0:
        raise ValueError(f"`alpha` must be a single value; found shape {a.shape}")
    alpha = float(a)
    t_in, t_out = check_options(method, fixed_variance, skip, side, min_models)
    rng = as_generator(seed)
    x = arr.mean(axis=2) if arr.ndim == 3 else arr
    n_models, n_targets = x.shape
    n_in = k.sum(axis=0).astype(np.int64)
    n_out = n_models - n_in
    kept = _choose_targets(
        x, k, n_in, n_out, t_in, t_out, method, fixed_variance, skip, min_models is None
    )
    skipped = np.setdiff1d(np.arange(n_targets), kept)
    n0 = n_out[kept]
    n1 = n_in[kept]
    variance, pool, used_side = _pool_and_side(x, k, kept, n0, n1, method, fixed_variance, side)
    decisions, fp, fn, threshold_var = _count_blocks(
        x, k, kept, n0, n1, alpha, method, pool, variance, used_side
    )
    counts = AttackCounts(fp=fp, n_neg=n0, fn=fn, n_pos=n1)
    for v in (kept, skipped, n_in, n_out, decisions):
        v.flags.writeable = False
    dependence = estimate_dependence(
        decisions[:, kept], k[:, kept], threshold_var=threshold_var, scores=x[:, kept]
    )
    warn_if_dependent(dependence)
    pooled = pooled_summary(
        x[:, kept],
        k[:, kept],
        alpha=alpha,
        method=method,
        fixed_variance=fixed_variance,
        side=used_side or "auto",
        seed=rng,
        seed_record=seed if isinstance(seed, int) else None,
    )
    if pooled is not None:
        pooled["columns"] = kept[pooled["columns"]]  # columns of the score matrix
    return ScoreMatrixCounts(
        counts=counts,
        targets=kept,
        skipped=skipped,
        n_in=n_in,
        n_out=n_out,
        decisions=decisions,
        alpha=alpha,
        method=method,
        fixed_variance=bool(fixed_variance),
        variance=variance,
        side=used_side,
        dependence=dependence,
        pooled=pooled,
    )


def _choose_targets(x, k, n_in, n_out, t_in, t_out, method, fixed_variance, skip, default_min):
    """Choose the targets to count; return their indices in increasing order.

    A target needs ``t_in`` IN and ``t_out`` OUT models and, with per-target variances, spread
    in every fit (full and leave-one-out) of its shadow scores; one that fails either raises
    ``ValueError`` or, with ``skip``, is left out. ``default_min``: ``min_models`` was not
    given (then an error about too few models says which method would count the targets).
    """
    n_models, n_targets = x.shape
    few = np.flatnonzero((n_in < t_in) | (n_out < t_out))
    if few.size and not skip:
        why = (
            f"; {_why_too_few(n_in, n_out, t_in, t_out, method, bool(fixed_variance))}"
            if few.size == n_targets and default_min
            else ""
        )
        raise ValueError(
            f"`keep`: {few.size} of {n_targets} targets have fewer than {t_in} IN or {t_out} "
            f"OUT models, e.g. target {_describe(few, n_in, n_out)}; train more models, or pass "
            f"skip=True to leave such targets out{why}"
        )
    kept = np.setdiff1d(np.arange(n_targets), few)
    # Every matrix-sized step runs on blocks of targets (columns), so that the peak memory is a
    # few copies of the score matrix, not one per whole-matrix temporary (docs/validation/lira.md).
    flat = np.zeros(kept.size, dtype=bool)
    if not fixed_variance:
        for b in _blocks(kept.size, n_models):
            ins, outs = _side_sums(x, k, kept[b])
            ks = k[:, kept[b]]
            with np.errstate(divide="ignore", invalid="ignore"):
                f = ~(outs[2] > 0) | ~np.where(ks, True, outs[4] > 0).all(axis=0)
                if method == "online":
                    f |= ~(ins[2] > 0) | ~np.where(ks, ins[4] > 0, True).all(axis=0)
            flat[b] = f
        if flat.any():
            if not skip:
                bad = kept[flat]
                raise ValueError(
                    f"`scores`: {bad.size} target(s) have no spread among their shadow scores "
                    f"(equal values), e.g. target {_describe(bad, n_in, n_out)}; the Gaussian "
                    "test needs spread (use fixed_variance=True, or skip=True)"
                )
            kept = kept[~flat]
    if kept.size == 0:
        parts = []
        if few.size:
            parts.append(
                f"{few.size} had fewer than {t_in} IN or {t_out} OUT models ("
                + _why_too_few(n_in, n_out, t_in, t_out, method, bool(fixed_variance))
                + ")"
            )
        if flat.any():
            parts.append(
                f"{int(flat.sum())} had no spread among their shadow scores (fixed_variance=True,"
                " --score-method online-fixed on the command line, pools the variance over "
                "targets)"
            )
        raise ValueError(
            f"no target left to count: all {n_targets} targets were skipped: {'; '.join(parts)}"
        )
    return kept


def _pool_and_side(x, k, kept, n0, n1, method, fixed_variance, side):
    """Pool the variance and choose the offline test's side over the counted targets ``kept``.

    Returns ``(variance, pool, side)``: ``variance`` and ``pool`` (the pooled sum of squares
    and its degrees of freedom) are None without ``fixed_variance``, ``side`` is None for the
    online test and ``"greater"`` or ``"less"`` for the offline one (``"auto"`` resolved).
    """
    n_models = x.shape[0]
    mean0, q0, mean1, q1 = (np.empty(kept.size) for _ in range(4))
    for b in _blocks(kept.size, n_models):
        ins, outs = _side_sums(x, k, kept[b])
        mean1[b], q1[b], mean0[b], q0[b] = ins[1], ins[2], outs[1], outs[2]
    variance = pool = None
    if fixed_variance:
        if method == "online":
            q_all, df = q0.sum() + q1.sum(), int((n0 - 1).sum() + (n1 - 1).sum())
        else:
            q_all, df = q0.sum(), int((n0 - 1).sum())
        if df < 2 or not q_all > 0:
            raise ValueError(
                "`scores`: too few models or no spread to pool a variance over targets "
                f"({df} degrees of freedom, sum of squares {q_all:g})"
            )
        variance = float(q_all / df)
        pool = (q_all, df)
    used_side = None
    if method == "offline":
        if side == "auto":
            diff = float(np.mean(mean1 - mean0))
            if diff == 0.0:
                raise ValueError(
                    "`side='auto'`: IN and OUT scores have the same mean; give side='greater' "
                    "or side='less'"
                )
            side = "greater" if diff > 0 else "less"
        used_side = side
    return variance, pool, used_side


def _count_blocks(x, k, kept, n0, n1, alpha, method, pool, variance, side):
    """Decide every (model, counted target) pair with that model held out; count the errors.

    ``pool`` is the pooled ``(sum of squares, degrees of freedom)`` of the fixed-variance test
    (None: per-target variances), ``side`` the offline test's side (None: online). Returns
    the decision matrix (False outside ``kept``), the FP and FN counts of the targets ``kept``
    and the jackknife variances of their thresholds (:func:`_threshold_jackknife`).
    """
    n_models, n_targets = x.shape
    decisions = np.zeros((n_models, n_targets), dtype=bool)
    fp = np.empty(kept.size, dtype=np.int64)
    fn = np.empty(kept.size, dtype=np.int64)
    threshold_var = np.empty(kept.size)  # jackknife variance of the OUT-fit threshold / IN var
    z_alpha = float(ndtri(1.0 - alpha))
    for b in _blocks(kept.size, n_models):
        cols = kept[b]
        xs, ks = x[:, cols], k[:, cols]
        ins, outs = _side_sums(x, k, cols)
        _, bmean1, bq1, mean1_loo, q1_loo = ins
        _, bmean0, bq0, mean0_loo, q0_loo = outs
        # Held-out OUT models (ks False) use the leave-one-out OUT fit and the full IN fit;
        # held-out IN models the full OUT fit and the leave-one-out IN fit.
        mu0 = np.where(ks, bmean0, mean0_loo)
        mu1 = np.where(ks, mean1_loo, bmean1)
        if pool is not None:
            q_all, df = pool
            if method == "online":
                q_held = np.where(ks, q1_loo - bq1, q0_loo - bq0)  # change of the pool if m leaves
            else:
                q_held = np.where(ks, 0.0, q0_loo - bq0)
            df_held = np.where(ks, df - 1 if method == "online" else df, df - 1)
            sd0 = np.sqrt((q_all + q_held) / df_held)
            if not (sd0 > 0).all():
                raise ValueError(
                    "`scores`: no spread left in the pooled variance of a held-out model"
                )
            sd1 = sd0
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                sd0 = np.sqrt(np.where(ks, bq0 / (n0[b] - 1), q0_loo / (n0[b] - 2)))
                sd1 = np.sqrt(np.where(ks, q1_loo / (n1[b] - 2), bq1 / (n1[b] - 1)))
        threshold_var[b] = _threshold_jackknife(
            ks, bmean0, bq0, mean0_loo, q0_loo, bmean1, bq1, variance, z_alpha, side
        )
        del ins, outs, mean0_loo, mean1_loo, q0_loo, q1_loo
        if method == "offline":
            # a one-sided test of size alpha: the LRT against an equal-variance normal shifted
            # to the membership side (any shift gives the same region)
            mu1 = mu0 + (1.0 if side == "greater" else -1.0)
            sd1 = sd0
        dec = decide(xs, mu0, sd0, mu1, sd1, alpha)
        fp[b] = (dec & ~ks).sum(axis=0)
        fn[b] = (~dec & ks).sum(axis=0)
        decisions[:, cols] = dec
    return decisions, fp, fn, threshold_var


def _threshold_jackknife(ks, mean0, q0, mean0_loo, q0_loo, mean1, q1, variance, z, side):
    """Jackknife variance of each target's OUT-fit threshold, in units of its IN variance.

    The threshold is ``mean0 +- z sd0`` (the one-sided test of size alpha; for the online
    test the side of the IN mean), refitted without each OUT model in turn; ``v_T`` of the
    FN design effect (:func:`mia.dependence.estimate_dependence`).
    """
    out = ~ks
    n0 = out.sum(axis=0)
    n1 = ks.sum(axis=0)
    if side is None:
        sign = np.where(mean1 >= mean0, 1.0, -1.0)
    else:
        sign = 1.0 if side == "greater" else -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if variance is not None:
            t_loo = mean0_loo
            var1 = np.full(n0.shape, variance)
        else:
            t_loo = mean0_loo + sign * z * np.sqrt(q0_loo / (n0 - 2))
            var1 = np.where(n1 >= 2, q1 / (n1 - 1), q0 / (n0 - 1))
            var1 = np.where(var1 > 0, var1, q0 / (n0 - 1))
        t_bar = np.where(out, t_loo, 0.0).sum(axis=0) / n0
        jack = (n0 - 1) / n0 * np.where(out, (t_loo - t_bar) ** 2, 0.0).sum(axis=0)
        v = jack / var1
    return np.where(np.isfinite(v), v, 0.0)


def simulate_score_matrix(n_models: int, n_targets: int, mu, *, p_in: float = 0.5, seed=None):
    """Score matrix of a Gaussian mechanism with known privacy, for calibration.

    Each target ``t`` is IN for exactly ``round(p_in * n_models)`` models chosen at random
    (LiRA's balanced design) and OUT for the others. A model's score of a target is
    ``N(0, 1)`` when OUT and ``N(mu_t, 1)`` when IN, independently: the output of a Gaussian
    mechanism with sensitivity ``|mu_t|`` and noise standard deviation 1, whose
    ``(eps, delta)`` curve is known, ``mia.canary.gaussian_mechanism_epsilon(1.0, delta,
    sensitivity=max |mu_t|)``.

    Parameters
    ----------
    n_models : int
        Number of models (>= 2).
    n_targets : int
        Number of targets (>= 1).
    mu : float or array_like of float, shape (n_targets,)
        Mean shift of the IN scores (``sensitivity / sigma``), one value or one per target; a
        negative shift imitates losses (members score lower).
    p_in : float
        Fraction of the models that train on each target, in (0, 1); at least one model is IN
        and one OUT.
    seed : int or numpy.random.Generator, optional
        Randomness (no global state is used).

    Returns
    -------
    scores : numpy.ndarray of float, shape (n_models, n_targets)
    keep : numpy.ndarray of bool, shape (n_models, n_targets)

    Examples
    --------
    >>> scores, keep = simulate_score_matrix(10, 3, mu=1.5, seed=0)
    >>> scores.shape, keep.sum(axis=0).tolist()
    ((10, 3), [5, 5, 5])
    """
    n_models = check_positive_int("n_models", n_models, minimum=2)
    n_targets = check_positive_int("n_targets", n_targets)
    p_in = check_real("p_in", p_in, low=0.0, high=1.0, low_open=True, high_open=True)
    if isinstance(mu, (str, bytes, bool)):
        raise TypeError(f"`mu` must be a real number or an array of them; found {mu!r}")
    try:
        m = np.asarray(mu, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`mu` must be a real number or an array of them; found {mu!r}") from None
    if m.ndim > 1 or (m.ndim == 1 and m.size != n_targets):
        raise ValueError(
            f"`mu` must be a scalar or have shape ({n_targets},) (one per target); found shape "
            f"{m.shape}"
        )
    if not np.isfinite(m).all():
        raise ValueError(f"`mu` must be finite; found {m[~np.isfinite(m)].flat[0]!r}")
    rng = as_generator(seed)
    n_in = min(max(round(p_in * n_models), 1), n_models - 1)
    rank = rng.random((n_models, n_targets)).argsort(axis=0).argsort(axis=0)
    keep = rank < n_in
    scores = rng.standard_normal((n_models, n_targets)) + keep * np.broadcast_to(m, (n_targets,))
    return scores, keep
