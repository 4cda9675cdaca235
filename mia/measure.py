"""Measuring the attack's errors on one challenge base (paper Sec. 3.2, Alg. 4 and Alg. 5)."""

from __future__ import annotations

import numpy as np

from .lira import as_alphas, check_losses, decide

__all__ = ["cross_fed_counts", "cross_fed_decisions", "independent_counts"]


def loo_sums(x: np.ndarray, mask: np.ndarray | None = None):
    """Compute sums for leave-one-out normal fits along axis 0 (optionally within ``mask``).

    For every column ``t``, with ``n`` the number of entries of the column in ``mask`` (all of
    them when ``mask`` is None), returns ``n``, the mean, ``q`` (the sum of squared deviations)
    and, for every entry, the mean and ``q`` of its column with that entry left out:
    ``mean_loo = mean - dev / (n - 1)`` and ``q_loo = q - dev**2 n / (n - 1)`` (clipped at 0),
    ``dev = x - mean``. The unbiased variances are ``q / (n - 1)`` and ``q_loo / (n - 2)``.
    Entries outside ``mask`` get meaningless leave-one-out values; so do columns with
    ``n < 2`` (no warning is raised).
    """
    if mask is None:
        n = np.asarray(x.shape[0])
        mean = x.sum(axis=0) / n
        dev = x - mean
    else:
        n = mask.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(mask, x, 0.0).sum(axis=0) / n
        dev = np.where(mask, x - mean, 0.0)
    q = (dev * dev).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_loo = mean - dev / (n - 1)
        q_loo = np.maximum(q - dev * dev * n / (n - 1), 0.0)
    return n, mean, q, mean_loo, q_loo


def _loo_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out mean and unbiased variance of ``x`` (length N >= 3), each of shape (N,)."""
    n, _, _, mean_loo, q_loo = loo_sums(x)
    return mean_loo, q_loo / (n - 2)


def _check_spread(name: str, var) -> None:
    v = np.asarray(var)
    if not (v > 0).all():
        raise ValueError(
            f"`{name}` leaves zero variance among the shadow losses (values all equal); the "
            "Gaussian LRT needs spread"
        )


def cross_fed_decisions(losses_out, losses_in, alphas) -> tuple[np.ndarray, np.ndarray]:
    """Decisions of the cross-fed measurement (Alg. 5) for every target and target alpha.

    Parameters
    ----------
    losses_out, losses_in, alphas
        As in :func:`cross_fed_counts`.

    Returns
    -------
    dec_out : numpy.ndarray of bool, shape (len(alphas), N0)
        "Member" decisions for the H0 models (each True is a false positive).
    dec_in : numpy.ndarray of bool, shape (len(alphas), N1)
        "Member" decisions for the H1 models (each False is a false negative).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> out, inn = rng.normal(2, 1, 50), rng.normal(0, 1, 50)  # losses of z: H0, H1 models
    >>> dec_out, dec_in = cross_fed_decisions(out, inn, [0.1, 0.5])
    >>> dec_out.shape, dec_in.shape
    ((2, 50), (2, 50))
    >>> fp, fn = cross_fed_counts(out, inn, [0.1, 0.5])  # the counts of these decisions
    >>> bool((dec_out.sum(axis=1) == fp).all() and ((~dec_in).sum(axis=1) == fn).all())
    True
    """
    a = as_alphas(alphas)
    out = check_losses("losses_out", losses_out)
    inn = check_losses("losses_in", losses_in)
    for name, arr in (("losses_out", out), ("losses_in", inn)):
        if arr.size < 3:
            raise ValueError(
                f"`{name}` needs at least 3 models so that 2 shadow losses remain after leaving "
                f"the target out; found {arr.size}"
            )
    mu0, var0 = out.mean(), out.var(ddof=1)
    mu1, var1 = inn.mean(), inn.var(ddof=1)
    mu0_loo, var0_loo = _loo_moments(out)
    mu1_loo, var1_loo = _loo_moments(inn)
    _check_spread("losses_out", var0_loo)
    _check_spread("losses_in", var1_loo)
    al = a[:, None]
    dec_out = decide(out, mu0_loo, np.sqrt(var0_loo), mu1, np.sqrt(var1), al)
    dec_in = decide(inn, mu0, np.sqrt(var0), mu1_loo, np.sqrt(var1_loo), al)
    return dec_out, dec_in


def cross_fed_counts(losses_out, losses_in, alphas) -> tuple[np.ndarray, np.ndarray]:
    """Error counts of the cross-fed (leave-one-out) measurement, paper Alg. 5.

    ``N0`` models were trained without ``z`` and ``N1`` with it. Each model in turn is the
    target; the other models are its shadow models (the target's own loss is left out of the
    fit of its hypothesis), and :func:`~mia.learn_and_decide` decides at each target type-I
    error in ``alphas``.

    Parameters
    ----------
    losses_out : array_like of float, shape (N0,)
        Statistic of ``z`` under the models trained on ``D`` (H0); ``N0 >= 3`` so that at least
        two shadow losses remain after leaving one out.
    losses_in : array_like of float, shape (N1,)
        Statistic of ``z`` under the models trained on ``D + {z}`` (H1); ``N1 >= 3``.
    alphas : float or array_like of float
        Target type-I errors in (0, 1). A grid gives an error curve (paper Fig. 4).

    Returns
    -------
    fp, fn : numpy.ndarray of int64, shape (len(alphas),)
        False positives among the ``N0`` H0 models and false negatives among the ``N1`` H1
        models, one entry per alpha.

    Raises
    ------
    ValueError
        On non-finite losses, alphas outside (0, 1), fewer than 3 models on a side, or zero
        spread among the shadow losses.

    Notes
    -----
    The decisions share shadow models, so they are correlated: feed the counts to the
    ``"bivariate_normal"`` likelihood (paper eq. 7), not the binomial one.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fp, fn = cross_fed_counts(rng.normal(2, 1, 100), rng.normal(0, 1, 100), [0.1])
    >>> fp.shape, fn.shape
    ((1,), (1,))
    """
    dec_out, dec_in = cross_fed_decisions(losses_out, losses_in, alphas)
    fp = dec_out.sum(axis=1).astype(np.int64)
    fn = (~dec_in).sum(axis=1).astype(np.int64)
    return fp, fn


def independent_counts(
    targets_out, targets_in, shadows_out, shadows_in, alphas
) -> tuple[np.ndarray, np.ndarray]:
    """Error counts with independent shadow sets for every target, paper Alg. 4.

    Parameters
    ----------
    targets_out : array_like of float, shape (N0,)
        Statistic of ``z`` under ``N0`` target models trained without ``z`` (H0).
    targets_in : array_like of float, shape (N1,)
        Statistic of ``z`` under ``N1`` target models trained with ``z`` (H1).
    shadows_out : array_like of float, shape (N0 + N1, M0)
        Row ``j`` holds the ``M0 >= 2`` H0 shadow losses used to attack target ``j``; rows
        ``0..N0-1`` belong to ``targets_out``, rows ``N0..N0+N1-1`` to ``targets_in``.
    shadows_in : array_like of float, shape (N0 + N1, M1)
        The H1 shadow losses, rows ordered as in ``shadows_out``; ``M1 >= 2``.
    alphas : float or array_like of float
        Target type-I errors in (0, 1).

    Returns
    -------
    fp, fn : numpy.ndarray of int64, shape (len(alphas),)
        Given the true error rates of the test, the decisions are independent, so
        ``fp ~ Binomial(N0, alpha_true)`` and ``fn ~ Binomial(N1, beta_true)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fp, fn = independent_counts(rng.normal(2, 1, 5), rng.normal(0, 1, 5),
    ...                             rng.normal(2, 1, (10, 8)), rng.normal(0, 1, (10, 8)), 0.1)
    >>> int(fp[0]) <= 5 and int(fn[0]) <= 5
    True
    """
    a = as_alphas(alphas)
    t0 = check_losses("targets_out", targets_out)
    t1 = check_losses("targets_in", targets_in)
    s0 = check_losses("shadows_out", shadows_out, min_size=2, ndim=2)
    s1 = check_losses("shadows_in", shadows_in, min_size=2, ndim=2)
    n = t0.size + t1.size
    for name, s in (("shadows_out", s0), ("shadows_in", s1)):
        if s.shape[0] != n:
            raise ValueError(
                f"`{name}` must have one row per target (N0 + N1 = {n}); found {s.shape[0]} rows"
            )
    var0 = s0.var(axis=1, ddof=1)
    var1 = s1.var(axis=1, ddof=1)
    _check_spread("shadows_out", var0)
    _check_spread("shadows_in", var1)
    dec = decide(
        np.concatenate([t0, t1]),
        s0.mean(axis=1),
        np.sqrt(var0),
        s1.mean(axis=1),
        np.sqrt(var1),
        a[:, None],
    )
    fp = dec[:, : t0.size].sum(axis=1).astype(np.int64)
    fn = (~dec[:, t0.size :]).sum(axis=1).astype(np.int64)
    return fp, fn
