"""Frequentist lower bounds of eps from a score matrix, to read beside the posterior.

:func:`companion_bounds` gives, for the counts of :func:`mia.counts_from_score_matrix`, the
classical audit's answer "eps >= L with confidence c" three ways, each with what it assumes
(``docs/validation/lira.md``, "The frequentist companion"):

* **max over targets, Clopper-Pearson**: every target's FP and FN rates get exact two-sided
  Clopper-Pearson intervals, all ``2 T`` together at ``confidence`` (Bonferroni), and the
  largest eps lower bound over targets is kept (the lower end of
  :func:`bayes_dp.clopper_pearson_epsilon`, but on the decisions as made, never reflected).
  Assumes each target's decisions are independent Bernoulli trials given its rates. They are
  not: a target's held-out IN models are all tested against the same OUT fit, so its FN count
  is over-dispersed (about twice the binomial variance) and this bound can be optimistic.
* **max over targets, effective counts**: the same on counts deflated by the design effect of
  each side (:func:`mia.dependence.effective_counts`, not rounded): assumes a binomial with the
  deflated number of trials has the tail of the real count (it has its variance). The
  decisions are read as made, never reflected (``docs/validation/lira.md``, "Cross-fed decisions
  that
  point the wrong way": a target that shows nothing can have decisions wrong on both sides).
* **max over selected targets, split models** (a prototype; not what the claim states):
  :func:`split_selection_bound`. The largest of (a) the effective-count bound of the
  :data:`SPLIT_SELECTED` targets that look most exposed on a random half of the models, computed
  on the other half with Bonferroni over their ``2 k`` rates only, and (b) the effective-count
  bound over all targets; each at ``(1 - confidence) / 2``. Its level does not fall with
  targets that show nothing (``docs/validation/lira.md``, "Padding of the claim"). Assumes what the
  effective-count bound does, and that the two halves' models are independent given the
  memberships.
* **one-run (Steinke, Nasr and Jagielski 2023), per model**: every model is a one-run audit of
  the targets (guess "member" for the k highest standardized scores, "non-member" for the k
  lowest; scores standardized by the other models' scores of the target, membership unused),
  the bound of :func:`bayes_dp.one_run_epsilon_bound` per model and k, Bonferroni over all of
  them, the largest kept. Assumes what the theorem does: each target is in a model's training
  set independently with probability 1/2, independently of the other models. A balanced design
  (every target IN for exactly half of the models) breaks it (the other models' memberships
  reveal the model's), so the bound is then not computed.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.region import clopper_pearson_target_bounds

from .dependence import DependenceDiagnostic
from .model_rates import pooled_model_rates, pooled_record
from .scores import ScoreMatrixCounts, counts_from_score_matrix

__all__ = [
    "ONE_RUN_FRACTIONS",
    "SPLIT_SELECTED",
    "companion_bounds",
    "one_run_model_bound",
    "pooled_split_bound",
    "split_selection_bound",
]

#: Targets the split bound selects on one half of the models and bounds on the other.
SPLIT_SELECTED = 5

#: Guesses per side of each model's one-run audit, as fractions of the targets.
ONE_RUN_FRACTIONS = (0.02, 0.05, 0.1, 0.25)


def _effective_cp(counts, dependence: DependenceDiagnostic, delta, confidence):
    """Max over targets of the Clopper-Pearson eps bound on fractional effective counts.

    :func:`bayes_dp.core.region.clopper_pearson_target_bounds` computes it (the one place;
    the claim of a posterior on score-matrix evidence calls it too).
    """
    return float(
        np.max(
            clopper_pearson_target_bounds(
                counts.fp,
                counts.n_neg,
                counts.fn,
                counts.n_pos,
                delta,
                confidence,
                fp_design_effect=dependence.fp_design_effect,
                fn_design_effect=dependence.fn_design_effect,
                reflect=False,
            )
        )
    )


def one_run_model_bound(scores, keep, *, delta, confidence=0.95, fractions=ONE_RUN_FRACTIONS):
    """One-run lower bound of eps (Steinke et al.) from every model, Bonferroni over all audits.

    Model ``m``'s score of target ``t`` is standardized by the mean and standard deviation of
    the target's scores under the other models (all of them, whatever their membership); for
    each ``k = max(1, round(f * T))`` the ``k`` highest are guessed "member", the ``k`` lowest
    "non-member". Each (model, k) audit gets :func:`bayes_dp.one_run_epsilon_bound` at the
    confidence ``1 - (1 - confidence) / (n_models * len(fractions))``; the largest is returned.

    Parameters
    ----------
    scores : array_like of float, shape (n_models, n_targets)
    keep : array_like of bool, shape (n_models, n_targets)
    delta : float
        In [0, 1).
    confidence : float
        Joint confidence, in (0, 1).
    fractions : sequence of float
        Guesses per side as fractions of the targets, fixed in advance.

    Returns
    -------
    dict
        ``{"eps": bound, "model": m, "k": k, "r": guesses, "v": right guesses, "audits": n}``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> keep = rng.random((8, 400)) < 0.5
    >>> scores = rng.standard_normal((8, 400)) + 3.0 * keep
    >>> b = one_run_model_bound(scores, keep, delta=0.0)
    >>> bool(b["eps"] > 1.0)
    True
    """
    from bayes_dp import OneRunCounts, one_run_epsilon_bound

    x = np.asarray(scores, dtype=np.float64)
    k = np.asarray(keep, dtype=bool)
    if x.ndim == 3:
        x = x.mean(axis=2)
    if x.shape != k.shape or x.ndim != 2:
        raise ValueError(f"`scores` and `keep` must have the same 2-D shape; found {x.shape}")
    n_models, n_targets = x.shape
    if n_models < 3:
        raise ValueError(f"`scores` needs at least 3 models; found {n_models}")
    ks = sorted({max(1, round(f * n_targets)) for f in fractions if f * n_targets <= n_targets / 2})
    ks = [kk for kk in ks if 2 * kk <= n_targets] or [max(1, n_targets // 2)]
    n_audits = n_models * len(ks)
    level = 1.0 - (1.0 - confidence) / n_audits
    total = x.sum(axis=0)
    total2 = (x * x).sum(axis=0)
    kk = np.asarray(ks)
    v_all = np.empty((n_models, kk.size), dtype=np.int64)
    for m in range(n_models):
        n = n_models - 1
        mean = (total - x[m]) / n
        var = np.maximum((total2 - x[m] ** 2 - n * mean**2) / (n - 1), 1e-300)
        zs = (x[m] - mean) / np.sqrt(var)
        ranked = k[m][np.argsort(zs, kind="stable")]
        right_low = np.cumsum(~ranked)
        right_top = np.cumsum(ranked[::-1])
        v_all[m] = right_low[kk - 1] + right_top[kk - 1]
    # For fixed (m, r) the bound increases with v: per k only the model with the most right
    # guesses can give the largest bound, but every audit counts in the Bonferroni level.
    top = v_all.argmax(axis=0)
    v = v_all[top, np.arange(kk.size)]
    bounds = one_run_epsilon_bound(OneRunCounts(m=n_targets, r=2 * kk, v=v), delta, level)
    i = int(np.argmax(bounds))
    best = {
        "eps": float(bounds[i]),
        "model": int(top[i]),
        "k": int(kk[i]),
        "r": int(2 * kk[i]),
        "v": int(v[i]),
        "audits": n_audits,
    }
    return best


def companion_bounds(
    res,
    *,
    delta: float,
    confidence: float = 0.95,
    scores=None,
    keep=None,
    split=None,
):
    """Frequentist lower bounds of eps for the counts of a score matrix (see the module).

    Parameters
    ----------
    res : mia.ScoreMatrixCounts
        The counts (from :func:`mia.counts_from_score_matrix`).
    delta : float
        In [0, 1).
    confidence : float
        Confidence of each bound, in (0, 1); default 0.95.
    scores, keep : array_like, optional
        The score matrix, for the one-run bound and the split bound (left out without them).
    split : int or numpy.random.Generator, optional
        Seed of the model split of :func:`split_selection_bound`: with ``scores`` and ``keep``,
        adds its row "max over selected targets, split models" (a prototype, left out by
        default).

    Returns
    -------
    dict
        ``{"confidence": c, "delta": delta, "bounds": [{"name", "eps", "assumes",
        "applicable", ...}, ...]}``, JSON-ready; ``eps`` is None where a bound does not apply.

    Examples
    --------
    >>> import mia
    >>> scores, keep = mia.simulate_score_matrix(16, 20, mu=3.0, seed=0)
    >>> res = mia.counts_from_score_matrix(scores, keep, alpha=0.1)
    >>> b = companion_bounds(res, delta=1e-5)
    >>> [r["name"] for r in b["bounds"]]  # doctest: +NORMALIZE_WHITESPACE
    ['max over targets, Clopper-Pearson', 'max over targets, effective counts',
     'pooled over targets, models as units (betting)',
     'pooled over targets, models as units (t)',
     'pooled over the most exposed targets, models as units (betting)']
    """
    from bayes_dp.core.validation import check_delta, check_real

    if not isinstance(res, ScoreMatrixCounts):
        raise TypeError(f"`res` must be a mia.ScoreMatrixCounts; found {type(res).__name__}")
    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    c = res.counts
    t = len(c)
    rows = []
    # decisions as made, never reflected: cross-fed decisions of a target that shows nothing
    # can be wrong on both sides together (docs/validation/lira.md, "Cross-fed decisions that point
    # the
    # wrong way")
    cp = float(
        np.max(
            clopper_pearson_target_bounds(
                c.fp, c.n_neg, c.fn, c.n_pos, delta, confidence, reflect=False
            )
        )
    )
    rows.append(
        {
            "name": "max over targets, Clopper-Pearson",
            "eps": cp,
            "applicable": True,
            "assumes": (
                f"each target's decisions independent given its rates (Bonferroni over {2 * t} "
                "rates); a target's IN decisions share its OUT fit, so it can be optimistic"
            ),
        }
    )
    if res.dependence is not None:
        d = res.dependence
        rows.append(
            {
                "name": "max over targets, effective counts",
                "eps": _effective_cp(c, d, delta, confidence),
                "applicable": True,
                "assumes": (
                    f"counts deflated by the design effect (FP {max(d.fp_design_effect, 1):.2f}, "
                    f"FN {max(d.fn_design_effect, 1):.2f}) have binomial tails (Bonferroni over "
                    f"{2 * t} rates)"
                ),
            }
        )
    if split is not None and scores is not None and keep is not None:
        sb = split_selection_bound(
            scores,
            keep,
            alpha=res.alpha,
            delta=delta,
            confidence=confidence,
            method=res.method,
            seed=split,
            counts=res,
        )
        rows.append(
            {
                "name": "max over selected targets, split models",
                "eps": sb["eps"],
                "applicable": True,
                "assumes": (
                    f"the {sb['k']} targets that look most exposed on a random half of the "
                    f"models, bounded on the other half (effective counts, Bonferroni over "
                    f"their {2 * sb['k']} rates) and the effective-count bound over all "
                    f"{2 * t} rates, each at {(1 - confidence) / 2:g}, the larger kept: split "
                    f"{sb['split']:.3g} (columns {sb['selected']}), all targets {sb['full']:.3g}; "
                    "a prototype (docs/validation/lira.md, 'Padding of the claim')"
                ),
            }
        )
    rows.extend(_pooled_rows(res, delta, confidence))
    if scores is not None and keep is not None:
        kp = np.asarray(keep, dtype=bool)
        share = kp.mean()
        balanced = np.unique(kp.sum(axis=0)).size == 1 and kp.shape[1] > 1
        name = "one-run (Steinke et al.), per model"
        if balanced or abs(share - 0.5) > 0.05:
            why = (
                "balanced design: every target IN for the same number of models, so the other "
                "models' memberships reveal each model's"
                if balanced
                else f"memberships are not drawn with probability 1/2 (share IN {share:.2f})"
            )
            rows.append(
                {
                    "name": name,
                    "eps": None,
                    "applicable": False,
                    "assumes": f"not applicable: {why}",
                }
            )
        else:
            b = one_run_model_bound(scores, kp, delta=delta, confidence=confidence)
            rows.append(
                {
                    "name": name,
                    "eps": b["eps"],
                    "applicable": True,
                    "assumes": (
                        "memberships independent with probability 1/2 across targets and "
                        f"models (Bonferroni over {b['audits']} audits: models x k); best: "
                        f"model {b['model']}, r={b['r']}, v={b['v']}"
                    ),
                }
            )
    return {"confidence": confidence, "delta": delta, "bounds": rows}


def _pooled_rows(res, delta, confidence) -> list[dict]:
    """Return the rows of the bound pooled over targets: betting (finite-sample), t (asymptotic).

    From the counts' own per-model rates (``res.pooled``), the ones the claim uses.
    """
    r = res.pooled
    if r is None:
        return [
            {
                "name": "pooled over targets, models as units (betting)",
                "eps": None,
                "applicable": False,
                "assumes": (
                    "not applicable: fewer than 8 models, or the reference half of the models "
                    "fits no target"
                ),
            }
        ]
    from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound

    rows = []
    for interval, words in (
        ("betting", "the betting test of R's lower constraints (finite-sample)"),
        ("t", "Student t bounds, asymptotic: not for a claim"),
    ):
        b = pooled_rates_epsilon_bound(
            r["fpr"], r["fnr"], delta, confidence, interval, horizon=r["n_test"]
        )
        rows.append(
            {
                "name": f"pooled over targets, models as units ({interval})",
                "eps": b["eps"],
                "applicable": True,
                "assumes": (
                    f"a test fitted on {r['n_reference']} reference models, the "
                    f"{b['n_models']} others trained independently given their memberships, "
                    "each target's memberships independent of the others', a target's "
                    "decision not following which other targets its model trained on; the mean "
                    "FP rate "
                    f"{b['fpr_mean']:.3g} (upper {b['fpr_upper']:.3g}) and FN rate "
                    f"{b['fnr_mean']:.3g} (upper {b['fnr_upper']:.3g}) over "
                    f"{r['n_targets']} targets, {words}, each at {b['error']:g}"
                ),
            }
        )
    # the same over the targets most exposed on the reference half (the claim's other
    # pooled candidate; the record the claim reads)
    sel = (pooled_record(res.pooled, None) or {}).get("selected")
    if sel:
        b = pooled_rates_epsilon_bound(
            sel["fpr"], sel["fnr"], delta, confidence, "betting", horizon=sel["n_test"]
        )
        cols = ", ".join(str(c) for c in sel["columns"])
        rows.append(
            {
                "name": "pooled over the most exposed targets, models as units (betting)",
                "eps": b["eps"],
                "applicable": True,
                "assumes": (
                    f"the {sel['n_targets']} targets with the largest Welch t of IN against OUT "
                    f"scores on the {r['n_reference']} reference models (columns {cols}), their "
                    f"test fitted there, the {b['n_models']} others trained independently, a "
                    "target's decision not following which other targets its model trained on; "
                    f"the mean FP rate {b['fpr_mean']:.3g} (upper {b['fpr_upper']:.3g}) and FN "
                    f"rate {b['fnr_mean']:.3g} (upper {b['fnr_upper']:.3g}), the betting test of "
                    "R's "
                    f"lower constraints (finite-sample), each at {b['error']:g}"
                ),
            }
        )
    return rows


def split_selection_bound(
    scores,
    keep,
    *,
    alpha: float,
    delta: float,
    confidence: float = 0.95,
    k: int = SPLIT_SELECTED,
    method: str = "online",
    seed=None,
    counts=None,
) -> dict:
    """Lower bound of eps whose multiplicity correction does not grow with the targets.

    The models are split at random into halves A and B. On A's counts
    (:func:`mia.counts_from_score_matrix` at ``alpha``, targets without enough IN or OUT
    models skipped) the ``k`` targets with the largest point estimate of eps (the classical
    estimate of the rates (FP + 1/2) / (n_neg + 1), (FN + 1/2) / (n_pos + 1)) are selected; on
    B's counts their per-target Clopper-Pearson bounds on effective counts (B's design effects)
    are computed with Bonferroni over their ``2 k`` rates at ``(1 - confidence) / 2``. The
    effective-count bound over all targets of the full matrix, at ``(1 - confidence) / 2`` too,
    is the other candidate; the result is the larger. The selection uses A only and B's
    scores are independent of A's given the memberships (each model trained on its own), so
    the split bound holds with probability ``1 - (1 - confidence) / 2`` whatever was selected,
    and the larger of two such bounds with probability ``confidence`` (union bound).

    Parameters
    ----------
    scores, keep : array_like, shape (n_models, n_targets)
        As in :func:`mia.counts_from_score_matrix`.
    alpha : float
        Level of the membership test.
    delta : float
        In [0, 1).
    confidence : float
        Joint confidence, in (0, 1); default 0.95.
    k : int
        Targets selected on half A; default :data:`SPLIT_SELECTED`.
    method : {"online", "offline"}
        Test of :func:`mia.counts_from_score_matrix`.
    seed : int or numpy.random.Generator, optional
        Random split of the models.
    counts : mia.ScoreMatrixCounts, optional
        The counts of the full matrix at ``alpha`` (computed when not given).

    Returns
    -------
    dict
        ``eps`` (the larger), ``split`` (the bound of the selected targets on half B),
        ``full`` (the effective-count bound over all targets at the halved level),
        ``selected`` (their score-matrix columns), ``k``, ``half_a``, ``half_b`` (model
        indices).

    Examples
    --------
    >>> import mia
    >>> mu = [5.0] * 3 + [0.0] * 30          # 3 exposed targets, 30 that show nothing
    >>> scores, keep = mia.simulate_score_matrix(128, 33, mu, seed=0)
    >>> b = mia.split_selection_bound(scores, keep, alpha=0.1, delta=1e-5, seed=1)
    >>> b["eps"] == max(b["split"], b["full"])
    True
    >>> sorted(b["selected"])[:3]            # the exposed targets are among the 5 selected
    [0, 1, 2]
    """
    import warnings

    import bayes_dp as bdp
    from bayes_dp.core.exceptions import DependenceWarning
    from bayes_dp.core.validation import as_generator, check_delta, check_positive_int, check_real

    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    k = check_positive_int("k", k)
    x = np.asarray(scores, dtype=np.float64)
    kp = np.asarray(keep, dtype=bool)
    if x.ndim != 2 or kp.shape != x.shape:
        raise ValueError(
            f"`scores` and `keep` must be 2-D of the same shape; found {x.shape} and {kp.shape}"
        )
    n_models = x.shape[0]
    if n_models < 8:
        raise ValueError(f"`scores` must have at least 8 models to split; found {n_models}")
    rng = as_generator(seed)
    perm = rng.permutation(n_models)
    half_a, half_b = np.sort(perm[: n_models // 2]), np.sort(perm[n_models // 2 :])
    half_conf = 1.0 - (1.0 - confidence) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DependenceWarning)
        full = counts if counts is not None else counts_from_score_matrix(x, kp, alpha, method)
        res_a = counts_from_score_matrix(x[half_a], kp[half_a], alpha, method, skip=True)
        res_b = counts_from_score_matrix(x[half_b], kp[half_b], alpha, method, skip=True)
    full_bound = _effective_cp(full.counts, full.dependence, delta, half_conf)
    a = res_a.counts
    point = bdp.classical_epsilon(
        (a.fp + 0.5) / (a.n_neg + 1.0), (a.fn + 0.5) / (a.n_pos + 1.0), delta
    )
    # the k largest point estimates, ties broken by the column (stable)
    order = np.argsort(-np.asarray(point, dtype=np.float64), kind="stable")
    cols = res_a.targets[order]
    cols = cols[np.isin(cols, res_b.targets)][:k]
    split = 0.0
    if cols.size:
        rows = np.searchsorted(res_b.targets, cols)
        b = res_b.counts
        d = res_b.dependence
        split = float(
            np.max(
                clopper_pearson_target_bounds(
                    b.fp[rows],
                    b.n_neg[rows],
                    b.fn[rows],
                    b.n_pos[rows],
                    delta,
                    half_conf,
                    fp_design_effect=d.fp_design_effect,
                    fn_design_effect=d.fn_design_effect,
                    reflect=False,
                )
            )
        )
    return {
        "eps": max(split, full_bound),
        "split": split,
        "full": full_bound,
        "selected": cols.tolist(),
        "k": int(cols.size),
        "half_a": half_a.tolist(),
        "half_b": half_b.tolist(),
    }


def pooled_split_bound(
    scores,
    keep,
    *,
    alpha: float,
    delta: float,
    confidence: float = 0.95,
    interval: str = "betting",
    method: str = "online",
    fixed_variance: bool = False,
    side: str = "auto",
    seed=0,
) -> dict:
    """Lower bound of eps from the error rates pooled over all targets, models as the units.

    :func:`~mia.model_rates.pooled_model_rates` (a test fitted on a random half of the models,
    applied to the other half; per-model rates balanced model by model,
    :func:`~mia.model_rates.model_rates`) and
    :func:`bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound` (``interval`` ``"betting"``:
    the finite-sample betting test of R's lower constraints, each at ``(1 - confidence) / 2``;
    ``"t"``: Student t upper bounds of the mean rates, asymptotic). R(eps, delta) is convex, so
    under (eps, delta)-DP every test model's expected pair of rates given the models before it
    lies in it: the betting bound holds with probability ``confidence`` when the models are
    trained independently given their memberships and each target's memberships are drawn
    independently of the others' (LiRA's balanced design or independent inclusion), whatever
    the correlation of one model's decisions (a per-model shift of all its scores included).
    Where every target is equally exposed it is far above the max-over-targets bounds; targets
    that show nothing dilute it (``docs/validation/lira.md``, "The pooled bound").

    Parameters
    ----------
    scores, keep : array_like, shape (n_models, n_targets)
    alpha : float
    method, fixed_variance, side
        As in :func:`mia.counts_from_score_matrix`.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1); default 0.95.
    interval : {"betting", "t"}
        Default ``"betting"``.
    seed : int or numpy.random.Generator
        The model split; default 0.

    Returns
    -------
    dict
        The keys of :func:`~bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound` (``eps``,
        ``fpr_upper``, ``fnr_upper``, ``fpr_mean``, ``fnr_mean``, ``n_models``, ``interval``,
        ``error``) and ``n_targets`` (targets the reference half fitted).

    Examples
    --------
    >>> import mia
    >>> rng = np.random.default_rng(0)
    >>> keep = rng.random((128, 500)) < 0.5
    >>> scores = rng.laplace(0.0, 1.0, keep.shape) + 2.0 * keep   # a Laplace mechanism, eps = 2
    >>> b = mia.pooled_split_bound(scores, keep, alpha=0.1, delta=1e-5)
    >>> bool(1.0 < b["eps"] < 2.0)
    True
    """
    from bayes_dp.core.pooled_bound import pooled_rates_epsilon_bound

    r = pooled_model_rates(
        scores,
        keep,
        alpha=alpha,
        method=method,
        fixed_variance=fixed_variance,
        side=side,
        seed=seed,
    )
    if len(r["fpr"]) < 2:
        raise ValueError(
            f"`scores`: only {len(r['fpr'])} test model(s) have both IN and OUT targets; the "
            "pooled bound needs at least 2"
        )
    out = pooled_rates_epsilon_bound(
        r["fpr"], r["fnr"], delta, confidence, interval, horizon=r["n_test"]
    )
    out["n_targets"] = r["n_targets"]
    return out
