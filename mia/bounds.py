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

__all__ = [
    "ONE_RUN_FRACTIONS",
    "SPLIT_SELECTED",
    "companion_bounds",
    "kept_entries",
    "model_rates",
    "one_run_model_bound",
    "pooled_model_rates",
    "pooled_record",
    "pooled_split_bound",
    "pooled_summary",
    "split_selection_bound",
]

#: Targets the split bound selects on one half of the models and bounds on the other.
SPLIT_SELECTED = 5

#: Targets the bound pooled over the most exposed targets pools over: the ones with the largest
#: exposure statistic on the reference half of the models (:func:`select_exposed`). Fixed in
#: advance (never from the outcomes): 8 keeps each test model's rates over about 4 OUT and 4 IN
#: targets and picks few enough that a handful of exposed targets among thousands that show
#: nothing fill it (``docs/validation/lira.md``, "The pooled bound over the most exposed targets").
POOLED_SELECTED = 8

#: A test model enters the pooled rates (:func:`model_rates`) when, given the models before it,
#: its kept OUT targets are none with probability at most this; its rate is then
#: :data:`EMPTY_RATE`.
EMPTY_MAX = 0.3
EMPTY_RATE = 0.5

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

    from .scores import ScoreMatrixCounts

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
    sel = (res._pooled_record(None) or {}).get("selected")
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

    from .scores import counts_from_score_matrix

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


def _side_moments(x, keep):
    """Per target: IN and OUT counts, means and sums of squares about the means.

    ``(n1, n0, m1, m0, q1, q0)``; a side with no model gets a NaN mean (and a sum of 0).
    """
    k1 = keep
    k0 = ~keep
    n1 = k1.sum(axis=0)
    n0 = k0.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = np.where(k1, x, 0.0).sum(axis=0) / n1
        m0 = np.where(k0, x, 0.0).sum(axis=0) / n0
        q1 = np.where(k1, (x - m1) ** 2, 0.0).sum(axis=0)
        q0 = np.where(k0, (x - m0) ** 2, 0.0).sum(axis=0)
    return n1, n0, m1, m0, q1, q0


def _fit_reference(x_ref, k_ref, method, fixed_variance, side):
    """Every target's test fitted on the reference models: its normals and the fittable mask.

    Online: normals fitted to the target's IN and OUT scores of the reference models (sample
    mean, unbiased variance; with ``fixed_variance`` one variance pooled over the targets'
    within-side sums of squares). Offline: the OUT normal only, and an IN normal one unit away
    on ``side`` with the same variance (a one-sided test at ``alpha``). Returns
    ``(m0, sd0, m1, sd1, ok)``: arrays over the targets, ``ok`` the boolean mask of targets the
    reference models can fit (enough models on each side, spread); the others get harmless
    parameters (0, 1, 1, 1) and must not be counted.
    """
    n1, n0, m1, m0, q1, q0 = _side_moments(x_ref, k_ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        online = method == "online"
        if fixed_variance:
            ok = (n0 >= 2) & (n1 >= 2) if online else n0 >= 2
            q = (q0[ok].sum() + (q1[ok].sum() if online else 0.0)) / max(
                int((n0[ok] - 1).sum() + ((n1[ok] - 1).sum() if online else 0)), 1
            )
            ok &= q > 0  # no spread in the pool: no target can be fitted
            sd0 = sd1 = np.full(x_ref.shape[1], np.sqrt(q))
        else:
            sd0 = np.sqrt(q0 / (n0 - 1))
            sd1 = np.sqrt(q1 / (n1 - 1))
            ok = (n0 >= 2) & (sd0 > 0)
            if online:
                ok &= (n1 >= 2) & (sd1 > 0)
    ok &= np.isfinite(m0) & (np.isfinite(m1) | (not online))
    if not online:
        side = _resolve_side(m1 - m0, ok & (n1 > 0), side)
        m1 = m0 + (1.0 if side == "greater" else -1.0)
        sd1 = sd0
    return (
        np.where(ok, m0, 0.0),
        np.where(ok, sd0, 1.0),
        np.where(ok, m1, 1.0),
        np.where(ok, sd1, 1.0),
        ok,
    )


def _resolve_side(diff, use, side: str) -> str:
    """Return ``side``, or for ``"auto"`` the side of the mean IN-minus-OUT difference.

    ``diff``: per-target differences of the IN and OUT means; ``use``: the targets to average.
    """
    if side != "auto":
        return side
    with np.errstate(invalid="ignore"):
        mean = float(np.nanmean(np.where(use, diff, np.nan))) if np.any(use) else 0.0
    return "greater" if not mean < 0 else "less"


def reference_exposure(x_ref, k_ref, method: str = "online", side: str = "auto") -> np.ndarray:
    """Each target's exposure on the reference models: Welch's t of its IN against OUT scores.

    ``t = (mean IN - mean OUT) / sqrt(var IN / n IN + var OUT / n OUT)`` (unbiased variances);
    for the online test (which separates the two normals either way) its absolute value, for
    the offline one-sided test ``t`` on the test's side (``"auto"``: the side of the mean
    difference over the targets). Targets with fewer than 2 IN or OUT models, or no spread,
    get ``-inf``. The statistic ranks targets for :func:`select_exposed`; it uses the
    reference models only, so the test half's rates over the targets it selects are as
    independent of the selection as of the fitted test.

    Parameters
    ----------
    x_ref : array_like of float, shape (n_models, n_targets)
        Scores of the reference models.
    k_ref : array_like of bool, shape (n_models, n_targets)
        Their memberships.
    method : {"online", "offline"}
    side : {"auto", "greater", "less"}

    Returns
    -------
    numpy.ndarray of float, shape (n_targets,)

    Examples
    --------
    >>> k = np.array([[True, False], [False, True], [True, False], [False, True]])
    >>> x = np.array([[3.0, 0.1], [0.0, 0.3], [2.0, 0.0], [1.0, 0.5]])
    >>> np.round(reference_exposure(x, k), 3).tolist()   # (2.5 - 0.5) / sqrt(0.5 / 2 + 0.5 / 2)
    [2.828, 3.13]
    """
    from .scores import _SIDES, METHODS

    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    if side not in _SIDES:
        raise ValueError(f"`side` must be one of {_SIDES}; found {side!r}")
    x = np.asarray(x_ref, dtype=np.float64)
    k1 = np.asarray(k_ref, dtype=bool)
    if x.ndim != 2 or k1.shape != x.shape:
        raise ValueError(
            f"`x_ref` and `k_ref` must be 2-D of the same shape; found {x.shape} and {k1.shape}"
        )
    n1, n0, m1, m0, q1, q0 = _side_moments(x, k1)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(q1 / (n1 - 1) / n1 + q0 / (n0 - 1) / n0)
        t = (m1 - m0) / se
    ok = (n1 >= 2) & (n0 >= 2) & (se > 0) & np.isfinite(t)
    if method == "online":
        t = np.abs(t)
    else:
        t = t if _resolve_side(m1 - m0, ok, side) == "greater" else -t
    return np.where(ok, t, -np.inf)


def select_exposed(exposure, k: int = POOLED_SELECTED) -> np.ndarray:
    """Return the indices of the ``k`` largest ``exposure`` values (ties: the lower index first).

    Fewer when there are fewer finite values; none with ``-inf``.

    Parameters
    ----------
    exposure : array_like of float, shape (n_targets,)
        Each target's exposure (:func:`reference_exposure`); ``-inf`` for targets not to pick.
    k : int
        How many to pick, >= 1; default :data:`POOLED_SELECTED`.

    Returns
    -------
    numpy.ndarray of int
        Indices into ``exposure``, largest first.

    Raises
    ------
    ValueError
        If ``k`` is not a positive integer or ``exposure`` is not 1-D or holds NaN.

    Examples
    --------
    >>> select_exposed([0.5, 3.0, -np.inf, 3.0, 1.0], k=3).tolist()
    [1, 3, 4]
    """
    from bayes_dp.core.validation import check_positive_int

    k = check_positive_int("k", k)
    e = np.asarray(exposure, dtype=np.float64)
    if e.ndim != 1 or np.isnan(e).any():
        raise ValueError(f"`exposure` must be 1-D without NaN; found shape {e.shape}")
    order = np.argsort(-e, kind="stable")
    return order[np.isfinite(e[order])][:k]


def _fit_and_decide(x_ref, k_ref, x_test, alpha, method, fixed_variance, side):
    """Fit every target's test on the reference models; decide the test models' scores.

    The fit is :func:`_fit_reference`'s; the test, the exact likelihood-ratio test between the
    two fitted normals at ``alpha`` (:func:`mia.lira._decide`, the implementation of
    :func:`mia.learn_and_decide`). Returns the decisions (True: "member") and the boolean mask
    of targets the reference models can fit; the others are not counted (decided False).
    """
    from .lira import _decide

    m0, sd0, m1, sd1, ok = _fit_reference(x_ref, k_ref, method, fixed_variance, side)
    dec = _decide(x_test, m0, sd0, m1, sd1, alpha)
    return dec & ok, ok


def pooled_model_rates(
    scores,
    keep,
    *,
    alpha: float,
    method: str = "online",
    fixed_variance: bool = False,
    side: str = "auto",
    seed=0,
) -> dict:
    """Per-model error rates of a test fitted on half of the models, on the other half.

    The models are split at random (``seed``) into a reference half (the larger when the
    number is odd) and a test half. Every target's test is fitted on the reference models
    only (:func:`mia.counts_from_score_matrix`'s test: ``method``, ``fixed_variance``,
    ``side``; targets the reference half cannot fit are left out), and each test model's
    scores are decided with it. A test model's FP rate is the share of its OUT targets decided
    "member", its FN rate the share of its IN targets decided "non-member".

    Given the reference half, the test is fixed, so models trained independently give
    independent per-model rates whose means are the targets' mean rates of that test (when a
    target's decision does not depend on how many other targets its model was trained on):
    the units of :func:`bayes_dp.core.pooled_bound.pooled_rates_epsilon_bound`.

    Parameters
    ----------
    scores, keep : array_like, shape (n_models, n_targets)
        As in :func:`mia.counts_from_score_matrix` (a third axis of augmentations is averaged).
    alpha : float
        Level of the test, in (0, 1).
    method : {"online", "offline"}
    fixed_variance : bool
    side : {"auto", "greater", "less"}
        As in :func:`mia.counts_from_score_matrix`.
    seed : int or numpy.random.Generator
        The random split (default 0: the same split for the same matrix).

    Returns
    -------
    dict
        ``fpr``, ``fnr`` (lists, one per used test model, :func:`model_rates`, in the models'
        order), ``test_models`` (the used ones), ``n_test`` (all test models: the bets'
        horizon), ``reference_models`` (row indices), ``n_targets`` (fitted targets),
        ``columns`` (their columns), ``decisions`` and ``keep`` (the test models' decisions and
        memberships over those columns, for :func:`model_rates` over a subset), ``coin_seed``
        (its coins), ``exposure`` (over those columns: each target's
        :func:`reference_exposure` on the reference models, for :func:`select_exposed`).

    Examples
    --------
    >>> import mia
    >>> scores, keep = mia.simulate_score_matrix(32, 200, mu=2.0, seed=0)
    >>> r = pooled_model_rates(scores, keep, alpha=0.1, seed=1)
    >>> len(r["fpr"]), r["n_targets"]   # the last test model's memberships are known: unused
    (15, 200)
    >>> 0.05 < float(np.mean(r["fpr"])) < 0.15
    True
    """
    from bayes_dp.core.validation import as_generator

    from .lira import _check_alpha
    from .scores import _check_keep, _check_options, _check_scores

    arr = _check_scores(scores)
    k = _check_keep(keep, arr.shape[:2])
    a = _check_alpha("alpha", alpha)
    if a.ndim != 0:
        raise ValueError(f"`alpha` must be a single value; found shape {a.shape}")
    _check_options(method, fixed_variance, False, side, None)
    x = arr.mean(axis=2) if arr.ndim == 3 else arr
    n_models = x.shape[0]
    if n_models < 8:
        raise ValueError(f"`scores` must have at least 8 models to split; found {n_models}")
    rng = as_generator(seed)
    perm = rng.permutation(n_models)
    n_test = n_models // 2
    test, ref = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    dec, ok = _fit_and_decide(x[ref], k[ref], x[test], float(a), method, fixed_variance, side)
    if not ok.any():
        raise ValueError(
            "`scores`: the reference half of the models cannot fit the test of any target "
            "(too few IN or OUT models, or no spread)"
        )
    kt = k[test][:, ok]
    dt = dec[:, ok]
    coin_seed = int(rng.integers(2**63 - 1))
    fpr, fnr, use = model_rates(dt, kt, seed=coin_seed)
    exposure = reference_exposure(x[ref], k[ref], method, side)[ok]
    return {
        "fpr": fpr.tolist(),
        "fnr": fnr.tolist(),
        "test_models": test[use].tolist(),
        "n_test": int(test.size),
        "reference_models": ref.tolist(),
        "n_targets": int(ok.sum()),
        "columns": np.flatnonzero(ok),
        "decisions": dt,
        "keep": kt,
        "coin_seed": coin_seed,
        "exposure": exposure,
    }


def pooled_summary(
    scores,
    keep,
    *,
    alpha: float,
    method: str = "online",
    fixed_variance: bool = False,
    side: str = "auto",
    seed=0,
    seed_record: int | None = None,
) -> dict | None:
    """:func:`pooled_model_rates` as the claim's pooled bound keeps it, or None where it cannot.

    None with fewer than 8 models, where the reference half fits no target, or where fewer
    than 2 test models have an OUT and an IN target; otherwise the dict of
    :func:`pooled_model_rates` with ``n_reference`` (the reference models' count, in place of
    their rows) and ``seed`` (``seed_record``: the integer seed of the split, None when it was
    a generator). :func:`pooled_record` turns it into the record the claim reads. Used by
    :func:`mia.counts_from_score_matrix` and :func:`mia.guessing_game`.

    Parameters
    ----------
    scores, keep : array_like, shape (n_models, n_targets)
        As in :func:`pooled_model_rates`.
    alpha, method, fixed_variance, side, seed
        As in :func:`pooled_model_rates`.
    seed_record : int, optional
        The seed to record.

    Returns
    -------
    dict or None

    Examples
    --------
    >>> import mia
    >>> scores, keep = mia.simulate_score_matrix(32, 200, mu=2.0, seed=0)
    >>> p = pooled_summary(scores, keep, alpha=0.1, seed=1, seed_record=1)
    >>> p["n_reference"], p["seed"], len(p["fpr"])
    (16, 1, 15)
    """
    if np.shape(keep)[0] < 8:
        return None
    try:
        pooled = pooled_model_rates(
            scores,
            keep,
            alpha=alpha,
            method=method,
            fixed_variance=fixed_variance,
            side=side,
            seed=seed,
        )
    except ValueError:
        return None  # the reference half fits no target: no pooled bound
    if len(pooled["fpr"]) < 2:
        return None
    pooled["seed"] = seed_record
    pooled["n_reference"] = len(pooled.pop("reference_models"))
    return pooled


def pooled_record(pooled: dict | None, focus=None) -> dict | None:
    """Return the per-model rates the claim pools (None where there are none).

    Over all targets the reference half fitted, or, with declared targets (``focus``:
    columns of the score matrix), over those of them (padding with targets that show nothing
    then leaves it as it is); models with no OUT or no IN target among them are left out, and
    fewer than 2 models give None. Without declared targets, and with more fitted targets than
    :data:`POOLED_SELECTED`, the record also holds ``selected``: the same rates over the
    targets most exposed on the reference half (:func:`select_exposed` of the reference half's
    :func:`reference_exposure`), with their ``columns``, or None where fewer than 2 test models
    have an OUT and an IN target among them.

    Parameters
    ----------
    pooled : dict or None
        :func:`pooled_summary`'s result, its ``columns`` those of the score matrix.
    focus : array_like of int, optional
        Declared targets.

    Returns
    -------
    dict or None
        ``fpr``, ``fnr``, ``n_targets``, ``targets`` ("all" or "declared"), ``n_test``,
        ``n_reference``, ``seed`` and (without ``focus``) ``selected``: JSON-ready.

    Examples
    --------
    >>> import mia
    >>> scores, keep = mia.simulate_score_matrix(32, 200, mu=2.0, seed=0)
    >>> rec = pooled_record(pooled_summary(scores, keep, alpha=0.1, seed=1))
    >>> rec["targets"], rec["n_targets"], len(rec["selected"]["columns"])
    ('all', 200, 8)
    """
    if pooled is None:
        return None
    p = pooled
    cols = None
    if focus is not None:
        cols = np.isin(p["columns"], focus)
        if not cols.any():
            return None
    fpr, fnr, used = model_rates(p["decisions"], p["keep"], cols, seed=p["coin_seed"])
    if used.sum() < 2:
        return None
    rec = {
        "fpr": fpr.tolist(),
        "fnr": fnr.tolist(),
        "n_targets": int(p["columns"].size if cols is None else cols.sum()),
        "targets": "all" if cols is None else "declared",
        "n_test": int(p["keep"].shape[0]),
        "n_reference": int(p["n_reference"]),
        "seed": p.get("seed"),
    }
    if cols is None and p["columns"].size > POOLED_SELECTED:
        sel = select_exposed(p["exposure"], POOLED_SELECTED)
        f_s, n_s, used_s = model_rates(p["decisions"], p["keep"], sel, seed=p["coin_seed"])
        rec["selected"] = None
        if sel.size and used_s.sum() >= 2:
            rec["selected"] = {
                "fpr": f_s.tolist(),
                "fnr": n_s.tolist(),
                "n_targets": int(sel.size),
                "n_test": int(p["keep"].shape[0]),
                "columns": p["columns"][sel].tolist(),
                "exposure": p["exposure"][sel].tolist(),
            }
    return rec


def kept_entries(decisions, keep, columns=None, *, seed=0):
    """Draw the coins of :func:`model_rates`: the entries each test model keeps, the models used.

    :func:`model_rates` turns these into rates (its docstring gives the design); other per-model
    statistics over the same coins read them here, so that the coins are drawn in one place.

    Parameters
    ----------
    decisions, keep : numpy.ndarray of bool, shape (n_models, n_targets)
        "Member" decisions and memberships of the test models, in their order.
    columns : array_like of bool or int, optional
        The targets to keep (default: all); the coins are drawn for all columns first.
    seed : int or numpy.random.Generator
        The coins; default 0.

    Returns
    -------
    decisions, keep : numpy.ndarray of bool
        Over ``columns``.
    p : numpy.ndarray of float
        ``p[i, t]``: the chance, given the models before ``i``, that target ``t`` is a kept IN
        of model ``i``, and also the chance that it is a kept OUT.
    kept_in, kept_out : numpy.ndarray of bool
        The kept entries.
    used : numpy.ndarray of bool, shape (n_models,)
        The models used (kept OUT set empty with chance at most :data:`EMPTY_MAX`).

    Raises
    ------
    ValueError
        If ``decisions`` and ``keep`` are not 2-D of the same shape.

    Examples
    --------
    >>> keep = np.random.default_rng(0).random((20, 50)) < 0.5
    >>> _, _, p, kept_in, kept_out, used = kept_entries(keep, keep, seed=1)
    >>> bool((kept_in <= keep).all() and (kept_out <= ~keep).all() and (p <= 0.5).all())
    True
    """
    from bayes_dp.core.validation import as_generator

    dt = np.asarray(decisions, dtype=bool)
    kt = np.asarray(keep, dtype=bool)
    if dt.ndim != 2 or dt.shape != kt.shape:
        raise ValueError(
            f"`decisions` and `keep` must be 2-D of the same shape; found {dt.shape} and {kt.shape}"
        )
    coins = as_generator(seed).random(kt.shape[::-1]).T  # column by column: appended columns
    if columns is not None:
        dt, kt, coins = dt[:, columns], kt[:, columns], coins[:, columns]
    n = kt.shape[0]
    r_in = np.cumsum(kt[::-1], axis=0)[::-1]
    pi = r_in / (n - np.arange(n))[:, None]
    p = np.minimum(pi, 1.0 - pi)
    kept_in = kt & (coins * pi < p)
    kept_out = ~kt & (coins * (1.0 - pi) < p)
    with np.errstate(divide="ignore"):
        p_empty = np.exp(np.log1p(-p).sum(axis=1))
    used = (p_empty <= EMPTY_MAX) & (kt.shape[1] > 0)
    return dt, kt, p, kept_in, kept_out, used


def model_rates(decisions, keep, columns=None, *, seed=0):
    """Per-model FP and FN rates over a set of targets, balanced given the models before.

    The test models are taken in their order. For model ``i`` and target ``t``, given the
    memberships of the models before ``i``, the chance that ``t`` is IN in model ``i`` is
    ``pi = r_in / r``: the share of IN among the test models from ``i`` on (a target's test-half
    memberships are a uniform arrangement of their fixed counts, in the balanced design given
    the reference half and in the independent design given the counts, independently across
    targets). Each entry is kept with probability ``p / pi`` when IN and ``p / (1 - pi)`` when
    OUT, ``p = min(pi, 1 - pi)`` (independent coins from ``seed``), so that every target is a
    kept IN and a kept OUT of model ``i`` with the same chance ``p``: the model's FP rate (the
    share of its kept OUT targets decided "member") and FN rate (of its kept IN targets decided
    "non-member") then weigh the targets alike, and given the models before, the pair of their
    expectations is a mixture of the targets' error points (in R(eps, delta) under
    (eps, delta)-DP, when a target's decision does not depend on how many other targets its
    model was trained on). Without the coins a test model's FP rate weighs a target by its
    chance to be OUT and its FN rate by its chance to be IN, which differ in the balanced
    design: the pair can leave R (``docs/validation/pooled_bound.md``, "The balanced design").

    A model is used when, given the models before it, its kept OUT (and kept IN) set is empty
    with probability at most :data:`EMPTY_MAX` (decided before its memberships are seen, so
    leaving the others out moves nothing). A used model whose kept OUT or kept IN set is empty
    after all gets the rate :data:`EMPTY_RATE` = 1/2 on that side: both sets are empty with the
    same chance ``q``, so the expected pair is ``(1 - q)`` times a mixture of the targets'
    points plus ``q (1/2, 1/2)``, and ``(1/2, 1/2)`` satisfies every lower constraint of
    R(eps, delta) (``1/2 + e^eps / 2 >= 1 - delta``): the pair stays on the side of R the bound
    tests.

    Parameters
    ----------
    decisions, keep : numpy.ndarray of bool, shape (n_models, n_targets)
        "Member" decisions and memberships of the test models, in their order.
    columns : array_like of bool or int, optional
        The targets to pool over (default: all). The coins are drawn for all columns, column by
        column, so an entry gets the same coin in every subset and when columns are appended.
    seed : int or numpy.random.Generator
        The coins; default 0.

    Returns
    -------
    fpr, fnr : numpy.ndarray of float
        Per used model, in order.
    used : numpy.ndarray of bool, shape (n_models,)
        The models used.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> keep = rng.random((40, 300)) < 0.5
    >>> fpr, fnr, used = model_rates(keep, keep)   # decisions that are always right
    >>> float(fpr.max()), float(fnr.max()), int(used.sum())
    (0.0, 0.0, 39)
    """
    dt, kt, p, kept_in, kept_out, used = kept_entries(decisions, keep, columns, seed=seed)
    n_out = kept_out.sum(axis=1)[used]
    n_in = kept_in.sum(axis=1)[used]
    fp = (dt & kept_out).sum(axis=1)[used]
    fn = (~dt & kept_in).sum(axis=1)[used]
    fpr = np.where(n_out > 0, fp / np.maximum(n_out, 1), EMPTY_RATE)
    fnr = np.where(n_in > 0, fn / np.maximum(n_in, 1), EMPTY_RATE)
    return fpr, fnr, used


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

    :func:`pooled_model_rates` (a test fitted on a random half of the models, applied to the
    other half; per-model rates balanced model by model, :func:`model_rates`) and
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
