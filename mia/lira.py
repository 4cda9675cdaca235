"""The parametric LiRA test of Yildirim et al. (Alg. 3): Gaussian likelihood-ratio decisions.

Shadow losses under H0 (``z`` not in the training set) and H1 (``z`` in it) are summarised by
normal distributions ``N(mu0, s0^2)`` and ``N(mu1, s1^2)`` (sample mean and unbiased variance);
the target loss is then tested with the exact likelihood-ratio test between those two normals at
type-I error ``alpha``. The derivation of the critical region is in ``docs/validation/lira.md``; in
short,
with ``u = (l - mu0) / s0`` (standard normal under H0):

* ``s0 > s1``: member iff ``|u - c| <= r`` with ``r**2 = ncx2.ppf(alpha, 1, c**2)``;
* ``s0 < s1``: member iff ``|u - c| >= r`` with ``r**2 = ncx2.ppf(1 - alpha, 1, c**2)``;
* ``s0 = s1``: one-sided normal threshold on the side of ``mu1``;

where ``c = (mu0 - mu1) * s0 / (s1**2 - s0**2)``. (The paper prints ``(l + R)`` and
``delta = (mu0 + R) / s0``; the correct signs are ``(l - R)`` and ``(mu0 - R) / s0 = -c``.)
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import ndtri
from scipy.stats import ncx2

__all__ = [
    "fit_normal",
    "learn_and_decide",
    "lira_logit",
    "logit_confidence",
]

#: Beyond this |c| the far boundary of the critical region carries H0 probability below
#: Phi(-2 * 20 + |z_alpha|) (< 1e-300 for any alpha >= 1e-100), so the region is computed from
#: the normal quantile directly; ``ncx2.ppf`` loses accuracy (and returns NaN) for huge c.
_C_ASYMPTOTIC = 20.0


def check_alpha(name: str, alpha) -> np.ndarray:
    if isinstance(alpha, (str, bytes, bool)):
        raise TypeError(f"`{name}` must be a real number in (0, 1); found {alpha!r}")
    try:
        arr = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a real number in (0, 1); found {alpha!r}") from None
    bad = ~((arr > 0) & (arr < 1))
    if bad.any():
        raise ValueError(
            f"`{name}` must lie in the open interval (0, 1); found {arr[bad].flat[0].item()!r}"
        )
    return arr


def check_losses(name: str, value, *, min_size: int = 0, ndim: int | None = 1) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"`{name}` must be an array of real losses; found {value!r}")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be an array of real losses; found {value!r}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-D; found shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape)
        raise ValueError(f"`{name}` must be finite; found {arr[i]!r} at index {tuple(map(int, i))}")
    if ndim is not None and arr.shape[-1] < min_size:
        raise ValueError(
            f"`{name}` needs at least {min_size} shadow losses to fit a normal; found "
            f"{arr.shape[-1]}"
        )
    return arr


def fit_normal(losses) -> tuple[float, float]:
    """Fit ``N(mu, sigma^2)`` to shadow losses by sample mean and unbiased variance.

    Parameters
    ----------
    losses : array_like of float, shape (M,)
        Losses of the challenge point under ``M >= 2`` shadow models.

    Returns
    -------
    mu, var : float
        ``mean(losses)`` and ``var(losses, ddof=1)``.

    Examples
    --------
    >>> fit_normal([1.0, 2.0, 3.0])
    (2.0, 1.0)
    """
    arr = check_losses("losses", losses, min_size=2)
    return float(arr.mean()), float(arr.var(ddof=1))


def decide(loss, mu0, sd0, mu1, sd1, alpha) -> np.ndarray:
    """Exact Gaussian LRT decisions; every argument broadcasts. ``True`` means "member" (H1).

    ``sd0`` and ``sd1`` must be > 0 and all values finite (checked by the callers). The test's
    region is computed at the shape of the parameters (one per target when only the losses
    vary by model), the decisions at the shape of everything broadcast.
    """
    mu0, sd0, mu1, sd1, alpha = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (mu0, sd0, mu1, sd1, alpha))
    )
    d = sd1 * sd1 - sd0 * sd0
    # Equal variances: the log-LR is linear in l, reject on the side of mu1. mu0 == mu1 and
    # equal variances: the likelihood ratio is 1 everywhere; no non-randomised test has size
    # alpha, and the LRT never rejects.
    eq = d == 0
    up = eq & (mu1 > mu0)
    down = eq & (mu1 < mu0)
    thr_up = np.where(up, ndtri(1.0 - alpha), np.inf)
    thr_down = np.where(down, ndtri(alpha), -np.inf)
    neq = ~eq
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        c = np.where(neq, (mu0 - mu1) * sd0 / np.where(neq, d, 1.0), 0.0)
    abs_c = np.abs(c)
    narrow = neq & (d < 0)  # s0 > s1: accept region is outside an interval around c
    wide = neq & (d > 0)  # s0 < s1: reject outside an interval around c
    big = abs_c >= _C_ASYMPTOTIC
    r = np.zeros(c.shape)
    m = narrow & ~big
    if m.any():
        r[m] = np.sqrt(ncx2.ppf(alpha[m], 1, c[m] ** 2))
    m = narrow & big
    r[m] = abs_c[m] + ndtri(alpha[m])
    m = wide & ~big
    if m.any():
        r[m] = np.sqrt(ncx2.ppf(1.0 - alpha[m], 1, c[m] ** 2))
    m = wide & big
    r[m] = abs_c[m] - ndtri(alpha[m])
    u = (np.asarray(loss, dtype=np.float64) - mu0) / sd0
    dist = np.abs(u - c)
    out = (up & (u >= thr_up)) | (down & (u <= thr_down))
    out |= (narrow & (dist <= r)) | (wide & (dist >= r))
    return out


def learn_and_decide(loss, losses_out, losses_in, alpha):
    """Decide membership of ``z`` from its loss with the Gaussian LRT (paper Alg. 3).

    Normal distributions are fitted to the shadow losses under H0 (``losses_out``, models
    trained without ``z``) and H1 (``losses_in``, models trained with ``z``) by sample mean and
    unbiased variance; the target loss is tested with the exact (most powerful) likelihood-ratio
    test between the two fitted normals whose type-I error is ``alpha``.

    Parameters
    ----------
    loss : float or array_like of float
        Loss (or any scalar statistic, e.g. :func:`lira_logit`) of ``z`` under the target
        model(s). Decisions are vectorised over this argument.
    losses_out : array_like of float, shape (M0,)
        Shadow statistics under H0, ``M0 >= 2``.
    losses_in : array_like of float, shape (M1,)
        Shadow statistics under H1, ``M1 >= 2``.
    alpha : float or array_like of float
        Target type-I error in (0, 1); broadcast against ``loss``.

    Returns
    -------
    bool or numpy.ndarray of bool
        ``True`` where the test decides "member" (H1); same shape as ``loss`` broadcast with
        ``alpha``.

    Raises
    ------
    ValueError
        On non-finite values, ``alpha`` outside (0, 1), fewer than two shadow losses on a side,
        or a side whose shadow losses are all equal (zero variance).

    Notes
    -----
    With ``u = (loss - mu0) / s0`` and ``c = (mu0 - mu1) s0 / (s1^2 - s0^2)``, the log
    likelihood ratio is a multiple of ``-(u - c)^2`` when ``s0 > s1`` and of ``(u - c)^2`` when
    ``s0 < s1``; under H0 ``(u - c)^2`` is non-central chi-square with one degree of freedom and
    noncentrality ``c^2``. Hence "member" iff ``(u - c)^2 <= F^{-1}(alpha)`` (``s0 > s1``) or
    ``(u - c)^2 >= F^{-1}(1 - alpha)`` (``s0 < s1``); with equal variances, a one-sided normal
    threshold. See ``docs/validation/lira.md``. If the fitted normals are identical the likelihood
    ratio
    is 1 everywhere and the test never decides "member".

    Examples
    --------
    >>> out = [2.0, 2.2, 1.8, 2.1, 1.9]
    >>> inn = [0.5, 0.7, 0.3, 0.6, 0.4]
    >>> learn_and_decide([0.5, 2.0], out, inn, alpha=0.05).tolist()
    [True, False]
    """
    a = check_alpha("alpha", alpha)
    x = check_losses("loss", loss, ndim=None)
    out = check_losses("losses_out", losses_out, min_size=2)
    inn = check_losses("losses_in", losses_in, min_size=2)
    mu0, var0 = out.mean(), out.var(ddof=1)
    mu1, var1 = inn.mean(), inn.var(ddof=1)
    for name, var in (("losses_out", var0), ("losses_in", var1)):
        if not var > 0:
            raise ValueError(
                f"`{name}` has zero variance (all {name} equal); the Gaussian LRT needs spread"
            )
    res = decide(x, mu0, np.sqrt(var0), mu1, np.sqrt(var1), a)
    if res.ndim == 0:
        return bool(res)
    return res


def lira_logit(loss):
    """LiRA statistic ``phi = log(p / (1 - p))`` from a cross-entropy loss ``-log p``.

    ``p = exp(-loss)`` is the model's confidence in the true label (Carlini et al., 2022); the
    logit is computed stably as ``-loss - log(-expm1(-loss))``. Losses are clipped below at the
    smallest positive double so that a perfect prediction gives a large finite ``phi``.

    Parameters
    ----------
    loss : float or array_like of float
        Cross-entropy losses, ``>= 0``.

    Returns
    -------
    numpy.ndarray or float
        The logit-scaled confidence; decreasing in ``loss``.

    Examples
    --------
    >>> round(float(lira_logit(np.log(2.0))), 12)  # p = 1/2
    0.0
    """
    arr = np.asarray(loss, dtype=np.float64)
    if (arr < 0).any() or np.isnan(arr).any():
        bad = arr[(arr < 0) | np.isnan(arr)].flat[0]
        raise ValueError(f"`loss` must be >= 0 (a cross-entropy); found {bad!r}")
    arr = np.maximum(arr, np.finfo(np.float64).tiny)
    with np.errstate(over="ignore"):
        phi = -arr - np.log(-np.expm1(-arr))
    return phi if phi.ndim else float(phi)


def logit_confidence(logits, labels) -> np.ndarray:
    """LiRA statistic from model logits: ``log p_y - log(1 - p_y)``, computed stably.

    Uses ``phi = z_y - logsumexp_{j != y} z_j``, which never forms ``p_y`` or ``1 - p_y``.

    Parameters
    ----------
    logits : array_like of float, shape (n, k)
        Pre-softmax outputs for ``n`` examples and ``k >= 2`` classes.
    labels : array_like of int, shape (n,)
        True class of each example.

    Returns
    -------
    numpy.ndarray of float, shape (n,)

    Examples
    --------
    >>> logit_confidence([[2.0, 0.0]], [0]).round(6).tolist()
    [2.0]
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] < 2:
        raise ValueError(f"`logits` must have shape (n, k) with k >= 2; found {z.shape}")
    y = np.asarray(labels)
    if y.shape != (z.shape[0],) or y.dtype.kind not in "iu":
        raise ValueError(
            f"`labels` must be {z.shape[0]} integer class indices; found shape {y.shape}, "
            f"dtype {y.dtype}"
        )
    if ((y < 0) | (y >= z.shape[1])).any():
        raise ValueError(f"`labels` must lie in [0, {z.shape[1]}); found {y.min()}..{y.max()}")
    rows = np.arange(z.shape[0])
    zy = z[rows, y]
    other = z.copy()
    other[rows, y] = -np.inf
    mx = other.max(axis=1)
    lse = mx + np.log(np.exp(other - mx[:, None]).sum(axis=1))
    return zy - lse


def as_alphas(alphas) -> np.ndarray:
    if isinstance(alphas, numbers.Real) and not isinstance(alphas, bool):
        alphas = [alphas]
    a = check_alpha("alphas", alphas)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"`alphas` must be a non-empty 1-D sequence; found shape {a.shape}")
    return a
