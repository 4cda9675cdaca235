"""The reference half of a score matrix: each target's test fitted on it, the targets it exposes.

:func:`fit_reference` fits each target's online or offline test on the reference models (the
fit of :func:`mia.guessing_game` and of the pooled rates, :mod:`mia.model_rates`);
:func:`reference_exposure` ranks the targets by how exposed they look there, and
:func:`select_exposed` picks the :data:`POOLED_SELECTED` most exposed. The reference models
only are read, so that what the other half shows is independent of the choice.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.validation import check_positive_int

from .score_checks import METHODS, SIDES

__all__ = ["POOLED_SELECTED", "fit_reference", "reference_exposure", "select_exposed"]

#: Targets the bound pooled over the most exposed targets pools over: the ones with the largest
#: exposure statistic on the reference half of the models (:func:`select_exposed`). Fixed in
#: advance (never from the outcomes): 8 keeps each test model's rates over about 4 OUT and 4 IN
#: targets and picks few enough that a handful of exposed targets among thousands that show
#: nothing fill it (``docs/validation/lira.md``, "The pooled bound over the most exposed targets").
POOLED_SELECTED = 8


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


def fit_reference(x_ref, k_ref, method, fixed_variance, side):
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
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    if side not in SIDES:
        raise ValueError(f"`side` must be one of {SIDES}; found {side!r}")
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
    k = check_positive_int("k", k)
    e = np.asarray(exposure, dtype=np.float64)
    if e.ndim != 1 or np.isnan(e).any():
        raise ValueError(f"`exposure` must be 1-D without NaN; found shape {e.shape}")
    order = np.argsort(-e, kind="stable")
    return order[np.isfinite(e[order])][:k]
