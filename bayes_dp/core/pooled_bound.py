r"""A lower bound of eps from error rates pooled over many targets, with models as the units.

Every target ``t`` of a score matrix has its own error point ``(FPR_t, FNR_t)`` of a fixed test,
and under (eps, delta)-DP each lies in R(eps, delta). R is convex, so any mixture of the points
(the same weights for FP and FN) lies in it too. The rates of one model's targets are correlated
(a model that shifts all its targets' scores moves all its decisions together), so the
decisions are not the units; the models are: given a fixed test (fitted on other models),
models trained independently give per-model rates whose dependence needs no model, the idea of
Pillutla et al. (2023), "Unleashing the power of randomization in auditing differentially
private ML", whose intervals adapt to the correlation of the tests that share a model.

The per-model rates are :func:`mia.model_rates.model_rates`'s, balanced given the models before:
model ``i``'s pair of expected rates given models ``1 .. i - 1`` is a mixture of the targets'
points with the same weights for FP and FN, so it lies in R(eps, delta) for every ``i``, though
it may change from model to model (in LiRA's balanced design the test models' memberships are
dependent: each target is IN for a fixed number of them). The bound therefore tests the lower
constraints of R directly, model by model (:func:`constraint_epsilon_bound`): at a candidate
``eps0`` the values ``FP_i + e^eps0 FN_i`` (and ``FN_i + e^eps0 FP_i``) have conditional mean at
least ``1 - delta`` under the null, and a betting capital that grows against it is a
supermartingale under it, whatever the means' drift. The upper bounds of the two mean rates
(:func:`mean_upper_bound`) are reported beside it for reading and give the ``"t"`` interval's
bound (``docs/validation/pooled_bound.md``, "The balanced design").

Two intervals for the mean of ``n`` per-model rates in [0, 1]:

* ``"betting"`` (finite-sample): the one-sided confidence bound of Waudby-Smith and Ramdas
  (2024), "Estimating means of bounded random variables by betting" (JRSS-B), with their
  predictable plug-in bets. For a candidate mean ``m`` the capital
  ``K(m) = prod_i (1 + lambda_i(m) (m - x_i))`` with ``lambda_i(m) = min(lambda_i, c / (1 - m))``
  and ``lambda_i = sqrt(2 log(1 / a) / (n sigma_{i-1}^2))`` (``sigma_{i-1}^2`` the regularized
  running variance of the first ``i - 1`` values) is a nonnegative supermartingale when the
  true mean is at least ``m``, so by Ville's (here Markov's) inequality
  ``P(K(mean) >= 1 / a) <= a``; the bound is the smallest ``m`` with ``K(m) >= 1 / a`` (``K``
  is nondecreasing in ``m``: its derivative in each factor is ``c (1 - x_i) / (1 - m)^2`` where
  the cap binds and ``lambda_i`` where it does not). Valid for any ``n``; the price is the cap
  ``c / (1 - m)``, which makes it wide with few models (32 models: about 0.1 above the mean rate).
* ``"t"`` (asymptotic): Student's t upper bound ``mean + t_{1 - a, n - 1} sd / sqrt(n)``. It
  relies on the per-model rates' mean being nearly normal and fails where they are not (rare
  errors: with no model showing an error its bound is 0); ``docs/validation/lira.md``, "The pooled
  bound", measures where.

The values enter in the order given, which must not depend on their values (the order of the
models, fixed before the audit).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from bayes_dp.core.region import _eps_lower
from bayes_dp.core.validation import check_delta, check_real

__all__ = [
    "INTERVALS",
    "constraint_epsilon_bound",
    "mean_upper_bound",
    "pooled_rates_epsilon_bound",
]

#: The intervals :func:`mean_upper_bound` knows.
INTERVALS = ("betting", "t")
#: Cap of the betting fraction (Waudby-Smith and Ramdas's ``c``): at most ``c / (1 - m)``.
BET_CAP = 0.75
#: Grid of the candidate eps of :func:`constraint_epsilon_bound`: its step (the bound is rounded
#: down to it), its end, and how many points are tested at once.
GRID_STEP = 0.001
GRID_MAX = 50.0
GRID_CHUNK = 500


def _check_values(name: str, x) -> np.ndarray:
    try:
        v = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be an array of numbers in [0, 1]; found {x!r}") from None
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"`{name}` must be 1-D with at least 2 values; found shape {v.shape}")
    bad = ~np.isfinite(v) | (v < 0) | (v > 1)
    if bad.any():
        raise ValueError(f"`{name}` must lie in [0, 1]; found {v[bad][0]!r}")
    return v


def _check_horizon(horizon, n: int):
    if horizon is None:
        return None
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < n:
        raise ValueError(
            f"`horizon` must be an integer at least the number of values ({n}); found {horizon!r}"
        )
    return int(horizon)


def _log_capital(m, x: np.ndarray, lam: np.ndarray):
    """Log of the capital ``prod_i (1 + min(lam_i, c / (1 - m)) (m - x_i))``, over the last axis.

    ``m`` a number or an array of shape ``x.shape[:-1]`` (one candidate mean per row).
    """
    m = np.asarray(m, dtype=np.float64)[..., None]
    bet = np.minimum(lam, BET_CAP / (1.0 - m))
    out = np.log1p(bet * (m - x)).sum(axis=-1)
    return out if out.ndim else float(out)


def _bets(v: np.ndarray, a: float, horizon: int | None = None) -> np.ndarray:
    """Waudby-Smith and Ramdas's predictable plug-in bets of ``v`` (last axis) at error ``a``.

    ``lambda_i = sqrt(2 log(1 / a) / (n sigma_{i-1}^2))``, ``sigma_{i-1}^2`` the running variance
    of the first ``i - 1`` values regularized by a prior value 1/4 (mean 1/2): each bet uses the
    values before it only, and ``n`` is the ``horizon`` fixed before any value is seen (default:
    the number of values, when that is fixed in advance).
    """
    n = v.shape[-1] if horizon is None else horizon
    i = np.arange(1, v.shape[-1] + 1)
    run_mean = (0.5 + np.cumsum(v, axis=-1)) / (i + 1)
    run_var = (0.25 + np.cumsum((v - run_mean) ** 2, axis=-1)) / (i + 1)
    prev_var = np.concatenate((np.full(v.shape[:-1] + (1,), 0.25), run_var[..., :-1]), axis=-1)
    return np.sqrt(2.0 * np.log(1.0 / a) / (n * prev_var))


def mean_upper_bound(x, error: float, interval: str = "betting", *, horizon=None) -> float:
    """Upper confidence bound of the mean of independent values in [0, 1].

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Independent values in [0, 1] (``n >= 2``), in an order fixed before they were seen.
    error : float
        One-sided error ``a`` in (0, 1): the mean lies above the bound with probability at most
        ``a`` (``"betting"``: for any ``n``; ``"t"``: asymptotically).
    interval : {"betting", "t"}
        See the module.
    horizon : int, optional
        ``"betting"``: the number of values its bets plan for, fixed in advance, at least
        ``n`` (default ``n``; :func:`pooled_rates_epsilon_bound`).

    Returns
    -------
    float
        The bound, in [0, 1].

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.binomial(30, 0.1, size=200) / 30
    >>> b, t = mean_upper_bound(x, 0.025), mean_upper_bound(x, 0.025, "t")
    >>> bool(x.mean() < t < b < 0.2)
    True
    """
    v = _check_values("x", x)
    a = check_real("error", error, low=0.0, high=1.0, low_open=True, high_open=True)
    if interval not in INTERVALS:
        raise ValueError(f"`interval` must be one of {INTERVALS}; found {interval!r}")
    n = v.size
    if interval == "t":
        up = v.mean() + stats.t.ppf(1.0 - a, n - 1) * v.std(ddof=1) / np.sqrt(n)
        return float(min(max(up, 0.0), 1.0))
    lam = _bets(v, a, _check_horizon(horizon, n))
    target = np.log(1.0 / a)
    lo, hi = 0.0, 1.0
    if _log_capital(lo, v, lam) >= target:
        return 0.0
    # K(m) -> infinity as m -> 1 unless every value is 1; then 1 is the bound
    if _log_capital(1.0 - 1e-12, v, lam) < target:
        return 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _log_capital(mid, v, lam) >= target:
            hi = mid
        else:
            lo = mid
    return float(hi)


def constraint_epsilon_bound(u, w, delta: float, error: float, *, horizon=None) -> float:
    """Largest eps at which betting rejects ``E[u_i + e^eps w_i | past] >= 1 - delta`` for all i.

    The test of one lower constraint of R(eps, delta) on per-model rates ``u`` and ``w`` (FP and
    FN, or FN and FP). At a candidate ``eps0`` the values ``z_i = (u_i + e^eps0 w_i) /
    (1 + e^eps0)`` lie in [0, 1] and, under the null that every model's conditional mean pair
    (given the models before it) lies in R(eps0, delta), each has conditional mean at least
    ``m = (1 - delta) / (1 + e^eps0)``; the capital ``prod_i (1 + lambda_i (m - z_i))`` of
    :func:`mean_upper_bound` (bets predictable, capped at ``c / (1 - m)``) is then a nonnegative
    supermartingale, so it reaches ``1 / error`` with probability at most ``error`` (Ville).
    The conditional means may change from model to model (the sequential rates of
    :func:`mia.model_rates.model_rates`): the test needs each of them in R, not one common mean.
    The bound is the largest point of the grid ``0, GRID_STEP, 2 GRID_STEP, ...`` up to which
    every grid point is rejected (0 where ``eps0 = 0`` is not): if the truth is below it, the
    first grid point at or above the truth was rejected with its null true.

    Parameters
    ----------
    u, w : array_like of float, shape (n,)
        Per-model rates in [0, 1] (``n >= 2``), in the models' order.
    delta : float
        In [0, 1).
    error : float
        In (0, 1).
    horizon : int, optional
        The number of values the bets plan for, fixed in advance (default: ``n``;
        :func:`pooled_rates_epsilon_bound`).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``u`` or ``w`` is not 1-D in [0, 1] with 2 values or more, their lengths differ, or
        ``delta``, ``error`` or ``horizon`` is out of range.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> fp = rng.binomial(500, 0.1, 400) / 500           # the Laplace test at eps = 1
    >>> fn = rng.binomial(500, 1 - np.e * 0.1, 400) / 500
    >>> b = constraint_epsilon_bound(fn, fp, 0.0, 0.025)  # FN + e^eps FP >= 1
    >>> bool(0.8 < b < 1.0)
    True
    """
    u = _check_values("u", u)
    w = _check_values("w", w)
    if u.size != w.size:
        raise ValueError(f"`u` and `w` must have one value per model; found {u.size} and {w.size}")
    delta = check_delta(delta)
    error = check_real("error", error, low=0.0, high=1.0, low_open=True, high_open=True)
    horizon = _check_horizon(horizon, u.size)
    target = np.log(1.0 / error)
    for start in range(0, int(GRID_MAX / GRID_STEP), GRID_CHUNK):
        eps0 = (start + np.arange(GRID_CHUNK)) * GRID_STEP
        e = np.exp(eps0)[:, None]
        z = (u + e * w) / (1.0 + e)
        m = (1.0 - delta) / (1.0 + e[:, 0])
        rejected = _log_capital(m, z, _bets(z, error, horizon)) >= target
        if not rejected.all():
            first = int(np.argmin(rejected))
            return float(eps0[first - 1]) if first > 0 else 0.0
    return float(GRID_MAX)


def pooled_rates_epsilon_bound(
    fpr,
    fnr,
    delta: float,
    confidence: float = 0.95,
    interval: str = "betting",
    share=1.0,
    *,
    horizon=None,
) -> dict:
    """Lower bound of eps from per-model FP and FN rates pooled over targets (see the module).

    ``"betting"`` (finite-sample): the larger of the two lower constraints' bounds of
    :func:`constraint_epsilon_bound` (``FP + e^eps FN >= 1 - delta`` and ``FN + e^eps FP >=
    1 - delta``), each at error ``share (1 - confidence) / 2``. It holds with probability at
    least ``1 - share (1 - confidence)`` when every model's pair of expected rates, given the
    models before it, lies in R(eps, delta) (:func:`mia.model_rates.model_rates`). ``"t"``
    (asymptotic, never a claim): each rate's mean gets Student's t upper bound at that error,
    and the bound is the eps whose region's lower constraints pass through the point of the
    two: ``max(log((1 - delta - FNR+) / FPR+), log((1 - delta - FPR+) / FNR+), 0)``.
    ``fpr_upper`` and ``fnr_upper`` are these upper bounds of the mean rates (betting or t),
    for reading.

    Parameters
    ----------
    fpr, fnr : array_like of float, shape (n,)
        Per-model false-positive rate (over the model's OUT targets) and false-negative rate
        (over its IN targets), in [0, 1], in the models' order.
    delta : float
        In [0, 1).
    confidence : float
        In (0, 1); default 0.95.
    interval : {"betting", "t"}
        :func:`mean_upper_bound`'s interval.
    share : float
        Share of ``1 - confidence`` this bound gets, in (0, 1] (a weighted Bonferroni
        correction with other bounds); default 1.
    horizon : int, optional
        The number of values the bets plan for, fixed before any is seen, at least the number
        given (default: that number). With :func:`mia.model_rates.model_rates`'s rates, the number
        of test models: which of them are used depends on the memberships of the models before
        each, so how many are used is known only at the end.

    Returns
    -------
    dict
        ``eps``, ``fpr_upper``, ``fnr_upper``, ``fpr_mean``, ``fnr_mean``, ``n_models``,
        ``interval``, ``error`` (of each rate's bound).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> fpr = rng.binomial(500, 0.1, 400) / 500           # the Laplace test at eps = 1:
    >>> fnr = rng.binomial(500, 1 - np.e * 0.1, 400) / 500  # FNR = 1 - e * FPR
    >>> b = pooled_rates_epsilon_bound(fpr, fnr, delta=0.0)
    >>> bool(0.8 < b["eps"] < 1.0)
    True
    """
    f = _check_values("fpr", fpr)
    g = _check_values("fnr", fnr)
    if f.size != g.size:
        raise ValueError(
            f"`fpr` and `fnr` must have one value per model; found {f.size} and {g.size}"
        )
    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    share = check_real("share", share, low=0.0, high=1.0, low_open=True)
    err = share * (1.0 - confidence) / 2.0
    horizon = _check_horizon(horizon, f.size)
    fu = mean_upper_bound(f, err, interval, horizon=horizon)
    gu = mean_upper_bound(g, err, interval, horizon=horizon)
    if interval == "betting":
        eps = max(
            constraint_epsilon_bound(f, g, delta, err, horizon=horizon),
            constraint_epsilon_bound(g, f, delta, err, horizon=horizon),
        )
    else:
        eps = float(_eps_lower(fu, gu, delta))
    return {
        "eps": eps,
        "fpr_upper": fu,
        "fnr_upper": gu,
        "fpr_mean": float(f.mean()),
        "fnr_mean": float(g.mean()),
        "n_models": int(f.size),
        "interval": interval,
        "error": err,
    }
