r"""The privacy region R(eps, delta) and the attack-strength region R_s.

By Kairouz et al. (Thm. 2.1 of the paper's ref. [16]), an algorithm is (eps, delta)-DP iff every
membership test's error pair (alpha, beta) = (type I, type II) lies in

.. math::

    R(\epsilon, \delta) = \{(x, y) \in [0,1]^2 : x + e^\epsilon y \ge 1 - \delta,\;
    y + e^\epsilon x \ge 1 - \delta,\; y + e^\epsilon x \le e^\epsilon + \delta,\;
    x + e^\epsilon y \le e^\epsilon + \delta\}.

The paper's prior for a test of strength s puts (alpha, beta) uniformly on
``R_s = R(eps, delta) \ R(s eps, s delta)``, the band between the eps-curve and the
(s eps)-curve.

Implementation note: R is symmetric under (x, y) -> (1 - x, 1 - y), which swaps its two upper
constraints with its two lower ones, and for x + y <= 1 the upper constraints hold automatically.
After folding a point into the lower-left half, membership reduces to
``hi + e^eps * lo >= 1 - delta`` with ``lo = min(x, y)``, ``hi = max(x, y)``. The sampler uses
the same reduction (``samplers._kernels``); this module is the plain-numpy public version.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_delta, check_real

__all__ = [
    "in_region",
    "in_strength_region",
    "region_area",
    "strength_region_area",
    "classical_epsilon",
    "clopper_pearson_epsilon",
]


def _fold(alpha, beta):
    a = np.asarray(alpha, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    if np.any((a < 0) | (a > 1) | (b < 0) | (b > 1)) or np.any(np.isnan(a) | np.isnan(b)):
        raise ValueError("`alpha` and `beta` must lie in [0, 1]")
    upper = a + b > 1.0
    a = np.where(upper, 1.0 - a, a)
    b = np.where(upper, 1.0 - b, b)
    return np.minimum(a, b), np.maximum(a, b)


def _check_eps(eps) -> float:
    return check_real("eps", eps, low=0.0)


def in_region(alpha, beta, eps: float, delta: float):
    """Whether the error pair (alpha, beta) lies in R(eps, delta).

    Parameters
    ----------
    alpha, beta : float or array_like
        Type I (false-positive) and type II (false-negative) error probabilities in [0, 1].
    eps : float
        Privacy parameter, >= 0.
    delta : float
        Privacy parameter in [0, 1).

    Returns
    -------
    bool or ndarray of bool

    Examples
    --------
    >>> bool(in_region(0.05, 0.05, eps=1.0, delta=0.0))   # far too good a test for eps = 1
    False
    >>> bool(in_region(0.3, 0.3, eps=1.0, delta=0.0))
    True
    """
    eps = _check_eps(eps)
    delta = check_delta(delta)
    lo, hi = _fold(alpha, beta)
    return hi + np.exp(eps) * lo >= 1.0 - delta


def in_strength_region(alpha, beta, eps: float, s: float, delta: float):
    """Whether (alpha, beta) lies in R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta)."""
    eps = _check_eps(eps)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    delta = check_delta(delta)
    lo, hi = _fold(alpha, beta)
    inner = hi + np.exp(s * eps) * lo >= 1.0 - s * delta
    return (hi + np.exp(eps) * lo >= 1.0 - delta) & ~inner


def _corner_area(eps, delta):
    # Area of the lower-left part of the unit square cut away by R(eps, delta):
    # (1 - delta)^2 e^-eps / (1 + e^-eps), the union of two triangles minus their overlap.
    return (1.0 - delta) ** 2 / (1.0 + np.exp(eps))


def region_area(eps: float, delta: float) -> float:
    """Area of R(eps, delta): ``1 - 2 (1 - delta)^2 e^-eps / (1 + e^-eps)``.

    Examples
    --------
    >>> round(region_area(0.0, 0.0), 12)
    0.0
    >>> round(region_area(50.0, 0.0), 12)
    1.0
    """
    eps = _check_eps(eps)
    delta = check_delta(delta)
    return float(1.0 - 2.0 * _corner_area(eps, delta))


def strength_region_area(eps: float, s: float, delta: float) -> float:
    """Area of R_s(eps, delta) (the paper's closed form below eq. 3).

    ``|R_s| = 2[(1 - s delta)^2 e^{-s eps} / (1 + e^{-s eps})
    - (1 - delta)^2 e^{-eps} / (1 + e^{-eps})]``

    Examples
    --------
    >>> abs(strength_region_area(2.0, 0.0, 1e-5) - region_area(2.0, 1e-5)) < 1e-15
    True
    """
    eps = _check_eps(eps)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    delta = check_delta(delta)
    return float(2.0 * (_corner_area(s * eps, s * delta) - _corner_area(eps, delta)))


def classical_epsilon(fpr, fnr, delta: float):
    r"""The classical point estimate of eps from observed error rates.

    ``eps_hat = max{log((1 - delta - FPR) / FNR), log((1 - delta - FNR) / FPR)}``, clipped at 0;
    ``inf`` when a rate is 0 (and the matching numerator is positive). Rates with
    FPR + FNR > 1 (an attack worse than guessing, whose flipped decisions have errors
    (1 - FPR, 1 - FNR)) are first reflected through (1/2, 1/2), as the region R(eps, delta) is
    symmetric under that reflection: their evidence comes from the upper constraints of R.

    Parameters
    ----------
    fpr, fnr : float or array_like
        Observed false-positive and false-negative rates in [0, 1].
    delta : float
        In [0, 1).

    Examples
    --------
    >>> round(float(classical_epsilon(0.1, 0.1, 0.0)), 6)   # log(9)
    2.197225
    >>> round(float(classical_epsilon(0.9, 0.9, 0.0)), 6)   # flipped decisions: the same
    2.197225
    >>> float(classical_epsilon(0.0, 0.2, 0.0))
    inf
    """
    delta = check_delta(delta)
    a, b = _check_rates(fpr, fnr)
    out = np.maximum(_eps_lower(a, b, delta), _eps_lower(1.0 - a, 1.0 - b, delta))
    return out if out.ndim else float(out)


def _check_rates(fpr, fnr):
    a = np.asarray(fpr, dtype=np.float64)
    b = np.asarray(fnr, dtype=np.float64)
    if np.any(~np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError(f"`fpr` must lie in [0, 1]; found {fpr!r}")
    if np.any(~np.isfinite(b)) or np.any((b < 0) | (b > 1)):
        raise ValueError(f"`fnr` must lie in [0, 1]; found {fnr!r}")
    return a, b


def _eps_lower(a, b, delta):
    # eps implied by the two lower constraints of R (decreasing in both rates), clipped at 0
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = _safe_log_ratio(1.0 - delta - a, b)
        e2 = _safe_log_ratio(1.0 - delta - b, a)
    return np.maximum(np.maximum(e1, e2), 0.0)


def _safe_log_ratio(num, den):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, -np.inf)
    num, den = np.broadcast_arrays(num, den)
    pos = num > 0
    zero_den = pos & (den == 0)
    out[zero_den] = np.inf
    ok = pos & (den > 0)
    out[ok] = np.log(num[ok]) - np.log(den[ok])
    return out


def clopper_pearson_epsilon(
    fp, n_neg, fn, n_pos, delta: float, confidence: float = 0.95
) -> tuple[float, float]:
    r"""Classical confidence interval for eps from Clopper-Pearson bounds of the error rates.

    For each challenge base the false-positive and false-negative rates get exact two-sided
    Clopper-Pearson intervals (``scipy.stats.beta`` quantiles: the lower bound of x of n is the
    ``a/2`` quantile of Beta(x, n - x + 1), the upper bound the ``1 - a/2`` quantile of
    Beta(x + 1, n - x)), each at level ``1 - a`` with ``a = (1 - confidence) / (2 n)`` for ``n``
    bases, so that by the union bound all 2n intervals hold together with probability at least
    ``confidence``. Below the diagonal FPR + FNR = 1, :func:`classical_epsilon` decreases in
    both rates, so the upper rate bounds give a lower bound of eps and the lower rate bounds an
    upper one (above the diagonal, after reflection, the other way round), per base; the
    maximum over bases is returned.

    The lower end is the usual audit claim: "eps >= lo with probability >= confidence", valid
    for any attack, and it is what the point estimate becomes once sampling error is
    accounted for. The upper end only bounds the classical estimate's target (the eps an
    optimal test would need on the attacked bases), not eps itself: an attack can always be
    weaker than optimal.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int or array_like of int
        Counts per challenge base, as in :class:`~bayes_dp.AttackCounts`.
    delta : float
        In [0, 1).
    confidence : float
        Joint confidence level in (0, 1). Default 0.95.

    Returns
    -------
    (float, float)
        ``(lo, hi)``; ``hi`` may be ``inf`` (a lower rate bound of 0).

    Examples
    --------
    >>> lo, hi = clopper_pearson_epsilon([40, 50], 1000, [250, 200], 1000, delta=1e-5)
    >>> point = float(classical_epsilon([0.04, 0.05], [0.25, 0.2], 1e-5).max())
    >>> bool(lo < point < hi), round(lo, 2)
    (True, 2.51)
    """
    from scipy import stats

    from .observations import AttackCounts

    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    c = AttackCounts(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos)
    a = (1.0 - confidence) / (2 * len(c))

    def bounds(x, n):
        lo = np.where(x > 0, stats.beta.ppf(a / 2, np.maximum(x, 1), n - x + 1), 0.0)
        hi = np.where(x < n, stats.beta.ppf(1 - a / 2, x + 1, np.maximum(n - x, 1)), 1.0)
        return lo, hi

    fpr_lo, fpr_hi = bounds(c.fp, c.n_neg)
    fnr_lo, fnr_hi = bounds(c.fn, c.n_pos)
    # classical_epsilon = max(g(a, b), g(1 - a, 1 - b)) with g decreasing in both rates, so over
    # the box of rates it is at least (and at most) these values
    eps_lo = np.maximum(
        _eps_lower(fpr_hi, fnr_hi, delta), _eps_lower(1.0 - fpr_lo, 1.0 - fnr_lo, delta)
    )
    eps_hi = np.maximum(
        _eps_lower(fpr_lo, fnr_lo, delta), _eps_lower(1.0 - fpr_hi, 1.0 - fnr_hi, delta)
    )
    return float(np.max(eps_lo)), float(np.max(eps_hi))
