"""Per-model error rates of a test fitted on one half of the models, on the other half.

:func:`pooled_model_rates` fits every target's test on a random half of the models
(:func:`mia.selection.fit_reference`) and measures each model of the other half: its FP and FN
rates over the targets, balanced model by model (:func:`model_rates`, whose coins
:func:`kept_entries` draws). :func:`pooled_summary` keeps them as the claim's pooled bound needs
them, :func:`pooled_record` as the claim records them (over all targets, or the declared or
most exposed ones). Read by :mod:`mia.scores`, :mod:`mia.guessing` and :mod:`mia.bounds`.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.validation import as_generator

from .lira import check_alpha, decide
from .score_checks import check_keep, check_options, check_score_matrix
from .selection import POOLED_SELECTED, fit_reference, reference_exposure, select_exposed

__all__ = [
    "EMPTY_MAX",
    "EMPTY_RATE",
    "kept_entries",
    "model_rates",
    "pooled_model_rates",
    "pooled_record",
    "pooled_summary",
]

#: A test model enters the pooled rates (:func:`model_rates`) when, given the models before it,
#: its kept OUT targets are none with probability at most this; its rate is then
#: :data:`EMPTY_RATE`.
EMPTY_MAX = 0.3


EMPTY_RATE = 0.5


def _fit_and_decide(x_ref, k_ref, x_test, alpha, method, fixed_variance, side):
    """Fit every target's test on the reference models; decide the test models' scores.

    The fit is :func:`~mia.selection.fit_reference`'s; the test, the exact likelihood-ratio test
    between the two fitted normals at ``alpha`` (:func:`mia.lira.decide`, the implementation of
    :func:`mia.learn_and_decide`). Returns the decisions (True: "member") and the boolean mask
    of targets the reference models can fit; the others are not counted (decided False).
    """
    m0, sd0, m1, sd1, ok = fit_reference(x_ref, k_ref, method, fixed_variance, side)
    dec = decide(x_test, m0, sd0, m1, sd1, alpha)
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
        :func:`~mia.selection.reference_exposure` on the reference models, for
        :func:`~mia.selection.select_exposed`).

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
    arr = check_score_matrix(scores)
    k = check_keep(keep, arr.shape[:2])
    a = check_alpha("alpha", alpha)
    if a.ndim != 0:
        raise ValueError(f"`alpha` must be a single value; found shape {a.shape}")
    check_options(method, fixed_variance, False, side, None)
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
    :data:`~mia.selection.POOLED_SELECTED`, the record also holds ``selected``: the same rates
    over the targets most exposed on the reference half (:func:`~mia.selection.select_exposed`
    of the reference half's :func:`~mia.selection.reference_exposure`), with their ``columns``,
    or None where fewer than 2 test models have an OUT and an IN target among them.

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
