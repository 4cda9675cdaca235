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
the same reduction (``samplers.model.band_geometry``); this module is the plain-numpy public
version.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.validation import check_delta, check_int_array, check_positive_int, check_real

__all__ = [
    "in_region",
    "in_strength_region",
    "region_area",
    "strength_region_area",
    "classical_epsilon",
    "largest_classical_epsilon",
    "clopper_pearson_epsilon",
    "clopper_pearson_interval",
    "clopper_pearson_target_bounds",
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


def classical_epsilon(fpr, fnr, delta: float, *, reflect: bool = True):
    r"""Return the classical point estimate of eps from observed error rates.

    An (eps, delta)-DP algorithm forces every membership test's error rates to satisfy the two
    lower constraints of R(eps, delta) (Kairouz et al. 2015, Thm. 2.1),
    ``FPR + e^eps FNR >= 1 - delta`` and ``FNR + e^eps FPR >= 1 - delta``. Solved for eps, each
    gives a lower bound, and the estimate is the larger one, clipped at 0 (the formula of
    CANIFE, Maddock et al. 2023, Sec. 3.4, and of Nasr et al. 2021)::

        eps_hat = max{log((1 - delta - FPR) / FNR), log((1 - delta - FNR) / FPR), 0}

    **Zero denominators.** A term with a zero denominator and a positive numerator is ``inf``:
    with FNR = 0 the first constraint reads ``FPR >= 1 - delta``, which fails for every finite
    eps once ``FPR < 1 - delta``; observed rates that no finite eps allows give the point
    estimate ``inf`` (the CANIFE paper, Sec. 3.4, reports ``inf`` for a perfect attack in the
    same way). A term whose numerator is ``<= 0`` is vacuous (the constraint holds for every
    eps) and drops out, also when its denominator is 0. So ``(FPR, FNR) = (0, 0.75)`` gives
    ``inf``, and ``(1 - delta, 0)`` gives 0. A zero rate is sampling evidence, not proof; use
    :func:`clopper_pearson_epsilon` for a bound that accounts for it.

    With ``reflect=True`` (the default) rates with FPR + FNR > 1 (an attack worse than
    guessing, whose flipped decisions have errors (1 - FPR, 1 - FNR)) also count: R(eps, delta)
    is symmetric under the reflection through (1/2, 1/2), and the two upper constraints of R
    give ``max{log((FPR - delta) / (1 - FNR)), log((FNR - delta) / (1 - FPR))}`` by the same
    rule; the estimate is the larger of the two sides. With ``reflect=False`` only the lower
    constraints are used (the decision as given, as CANIFE scores one threshold direction);
    for FPR + FNR <= 1 both give the same value.

    Parameters
    ----------
    fpr, fnr : float or array_like
        Observed false-positive and false-negative rates in [0, 1].
    delta : float
        In [0, 1).
    reflect : bool, default True
        Also use the upper constraints of R (the flipped test).

    Returns
    -------
    float or ndarray
        eps_hat >= 0, possibly ``inf``; a float for scalar rates.

    Examples
    --------
    >>> round(float(classical_epsilon(0.1, 0.1, 0.0)), 6)   # log(9)
    2.197225
    >>> round(float(classical_epsilon(0.9, 0.9, 0.0)), 6)   # flipped decisions: the same
    2.197225
    >>> float(classical_epsilon(0.9, 0.9, 0.0, reflect=False))
    0.0
    >>> float(classical_epsilon(0.0, 0.75, 0.01))   # FNR = 0.75 < 0.99 with FPR = 0
    inf
    """
    delta = check_delta(delta)
    if not isinstance(reflect, (bool, np.bool_)):
        raise TypeError(f"`reflect` must be True or False; found {reflect!r}")
    a, b = _check_rates(fpr, fnr)
    out = _eps_lower(a, b, delta)
    if reflect:
        out = np.maximum(out, _eps_lower(1.0 - a, 1.0 - b, delta))
    return out if out.ndim else float(out)


def largest_classical_epsilon(counts, delta: float) -> float:
    """Return the classical point estimate of eps from several challenge bases: the largest.

    Each base's :func:`classical_epsilon` of its observed rates is a lower estimate of eps (an
    optimal attack on a worst-case base), so the most distinguishable base gives the estimate;
    inf when some base has no errors on one side and too few on the other to fit any finite eps.

    Parameters
    ----------
    counts : AttackCounts
        The bases (``fpr`` and ``fnr`` are read).
    delta : float
        In [0, 1).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``counts`` is not an :class:`~bayes_dp.AttackCounts`.
    ValueError
        If ``delta`` is not in [0, 1).

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> c = bdp.AttackCounts(fp=[4, 5], n_neg=100, fn=[25, 20], n_pos=100)
    >>> round(largest_classical_epsilon(c, 1e-5), 4) == round(float(max(
    ...     classical_epsilon(0.04, 0.25, 1e-5), classical_epsilon(0.05, 0.2, 1e-5))), 4)
    True
    """
    from bayes_dp.core.observations import AttackCounts

    if not isinstance(counts, AttackCounts):
        raise TypeError(f"`counts` must be a bayes_dp.AttackCounts; found {type(counts).__name__}")
    return float(np.max(classical_epsilon(counts.fpr, counts.fnr, delta)))


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
    # log(num / den) with the rule of classical_epsilon: num <= 0 -> -inf (vacuous), num > 0 and
    # den = 0 -> inf
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
    Clopper-Pearson intervals (:func:`clopper_pearson_interval`), each at level ``1 - a`` with
    ``a = (1 - confidence) / (2 n)`` for ``n`` bases, so that by the union bound all 2n
    intervals hold together with probability at least ``confidence``. Below the diagonal
    FPR + FNR = 1, :func:`classical_epsilon` decreases in both rates, so the upper rate bounds
    give a lower bound of eps and the lower rate bounds an upper one (above the diagonal, after
    reflection, the other way round), per base; the
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
    from bayes_dp.core.observations import AttackCounts

    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    c = AttackCounts(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos)
    level = 1.0 - (1.0 - confidence) / (2 * len(c))
    fpr_lo, fpr_hi = _cp_interval(c.fp, c.n_neg, level)
    fnr_lo, fnr_hi = _cp_interval(c.fn, c.n_pos, level)
    # classical_epsilon = max(g(a, b), g(1 - a, 1 - b)) with g decreasing in both rates, so over
    # the box of rates it is at least (and at most) these values
    eps_lo = np.maximum(
        _eps_lower(fpr_hi, fnr_hi, delta), _eps_lower(1.0 - fpr_lo, 1.0 - fnr_lo, delta)
    )
    eps_hi = np.maximum(
        _eps_lower(fpr_lo, fnr_lo, delta), _eps_lower(1.0 - fpr_hi, 1.0 - fnr_hi, delta)
    )
    return float(np.max(eps_lo)), float(np.max(eps_hi))


def clopper_pearson_target_bounds(
    fp,
    n_neg,
    fn,
    n_pos,
    delta: float,
    confidence: float = 0.95,
    *,
    n_rates: int | None = None,
    fp_design_effect: float = 1.0,
    fn_design_effect: float = 1.0,
    reflect: bool = False,
    share: float = 1.0,
) -> np.ndarray:
    r"""Per-target Clopper-Pearson lower bounds of eps, on counts deflated by design effects.

    Every target's FP count and trials are divided by ``max(fp_design_effect, 1)``, its FN
    count and trials by ``max(fn_design_effect, 1)`` (fractional, not rounded: the effective
    counts of a score matrix, ``docs/validation/lira.md``, "Dependence of the pooled counts"); each
    of its
    two rates gets the exact two-sided Clopper-Pearson interval at level
    ``1 - share (1 - confidence) / n_rates`` (Bonferroni over ``n_rates`` rates, by default the
    ``2 T`` rates of these ``T`` targets; ``share`` < 1 when these rates get only part of the
    error, the rest going to other rates: a weighted Bonferroni correction), and the target's
    bound is the smallest eps whose
    region R(eps, delta) meets the box of its rates (as in :func:`clopper_pearson_epsilon`).
    With design effects 1 the maximum over targets is the lower end of
    :func:`clopper_pearson_epsilon`. The one place the package computes the bound on effective
    counts: ``mia.companion_bounds`` and :func:`bayes_dp.audit_claim` call it.

    What it assumes: a binomial with the deflated number of trials has the tail of the real
    count (the deflated count has its variance). The maximum over targets holds with
    probability at least ``confidence`` when all ``n_rates`` intervals do.

    Parameters
    ----------
    fp, n_neg, fn, n_pos : int or array_like of int
        Counts per target, as in :class:`~bayes_dp.AttackCounts`.
    delta : float
        In [0, 1).
    confidence : float
        Joint confidence of all ``n_rates`` intervals, in (0, 1). Default 0.95.
    n_rates : int, optional
        Number of rates the Bonferroni correction covers, at least ``2 T`` (more when these
        targets are part of a larger family, e.g. several groups of one posterior).
    share : float, default 1
        Share of ``1 - confidence`` that these ``n_rates`` rates get, in (0, 1]. A weighted
        Bonferroni correction: targets declared before the audit (canaries) get ``share`` of
        it over their rates, the others ``1 - share`` over theirs; the maximum over both holds
        with probability at least ``confidence`` when all intervals do. Default 1 (plain
        Bonferroni).
    fp_design_effect, fn_design_effect : float
        Design effects of the FP and FN counts, > 0; values below 1 count as 1 (counts are
        never inflated).
    reflect : bool, default False
        False: only the decisions as made, FPR and FNR small. True: also the reflected rates
        (1 - FPR, 1 - FNR), the test that says the opposite (a bound that is never smaller).
        The default is False because cross-fed decisions of a target that shows nothing can be
        wrong on both sides together (``docs/validation/lira.md``, "Cross-fed decisions that point
        the
        wrong way"), which the reflection reads as evidence: reflected, the bound accused an
        eps = 0 mechanism on 10 of 10 score matrices at 256 models.

    Returns
    -------
    numpy.ndarray of float, shape (T,)
        Each target's lower bound of eps (>= 0).

    Examples
    --------
    >>> b = clopper_pearson_target_bounds([40, 50], [1000, 1000], [250, 200], [1000, 1000], 1e-5)
    >>> lo, _ = clopper_pearson_epsilon([40, 50], 1000, [250, 200], 1000, delta=1e-5)
    >>> bool(b.max() == lo)
    True
    >>> d = clopper_pearson_target_bounds([40, 50], 1000, [250, 200], 1000, 1e-5,
    ...                                   fn_design_effect=2.0)
    >>> bool(d.max() < lo)   # half the FN trials: a wider interval, a lower bound
    True
    """
    from bayes_dp.core.observations import AttackCounts

    delta = check_delta(delta)
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    f_fp = check_real("fp_design_effect", fp_design_effect, low=0.0, low_open=True)
    f_fn = check_real("fn_design_effect", fn_design_effect, low=0.0, low_open=True)
    c = AttackCounts(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos)
    if n_rates is None:
        n_rates = 2 * len(c)
    else:
        n_rates = check_positive_int("n_rates", n_rates, minimum=2 * len(c))
    share = check_real("share", share, low=0.0, high=1.0, low_open=True)
    f_fp, f_fn = max(f_fp, 1.0), max(f_fn, 1.0)
    level = 1.0 - share * (1.0 - confidence) / n_rates
    fpr_lo, fpr_hi = _cp_interval(c.fp / f_fp, c.n_neg / f_fp, level)
    fnr_lo, fnr_hi = _cp_interval(c.fn / f_fn, c.n_pos / f_fn, level)
    out = _eps_lower(fpr_hi, fnr_hi, delta)
    if reflect:
        out = np.maximum(out, _eps_lower(1.0 - fpr_lo, 1.0 - fnr_lo, delta))
    return out


def clopper_pearson_interval(k, n, confidence: float = 0.95):
    """Return the exact two-sided Clopper-Pearson interval of a binomial proportion.

    The lower end for ``k`` successes of ``n`` is the ``a/2`` quantile of Beta(k, n - k + 1)
    (0 when ``k = 0``), the upper end the ``1 - a/2`` quantile of Beta(k + 1, n - k) (1 when
    ``k = n``), with ``a = 1 - confidence``: the interval of
    ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="exact")``, vectorised. It
    covers the true proportion with probability at least ``confidence`` for every proportion.
    The one place the package computes it (:func:`clopper_pearson_epsilon`, the error bars of
    :func:`bayes_dp.plots.plot_region`, ``mia.canary.empirical_epsilon``).

    Parameters
    ----------
    k : int or array_like of int
        Successes (e.g. false positives), ``0 <= k <= n``.
    n : int or array_like of int
        Trials (>= 1); broadcasts against ``k``.
    confidence : float
        Two-sided confidence level in (0, 1). Default 0.95.

    Returns
    -------
    (lo, hi) : floats, or ndarrays when ``k`` or ``n`` is an array

    Examples
    --------
    >>> lo, hi = clopper_pearson_interval(0, 10)
    >>> lo, round(hi, 4)
    (0.0, 0.3085)
    >>> [round(float(v), 4) for v in clopper_pearson_interval(5, 10, 0.9)]
    [0.2224, 0.7776]
    """
    scalar = np.ndim(k) == 0 and np.ndim(n) == 0
    k_arr = check_int_array("k", k, min_value=0)
    n_arr = check_int_array("n", n, min_value=1)
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError:
        raise ValueError(
            f"`k` and `n` must broadcast; found lengths {k_arr.size} and {n_arr.size}"
        ) from None
    over = k_arr > n_arr
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise ValueError(f"`k` must be <= `n`; found k={k_arr[i]} > n={n_arr[i]} at index {i}")
    confidence = check_real(
        "confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True
    )
    lo, hi = _cp_interval(k_arr, n_arr, confidence)
    if scalar:
        return float(lo[0]), float(hi[0])
    return lo, hi


def _cp_interval(k, n, confidence):
    """Clopper-Pearson interval of checked int arrays ``k <= n`` (no validation)."""
    from scipy import special

    a = 1.0 - confidence
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, special.betaincinv(np.maximum(k, 1), n - k + 1, a / 2), 0.0)
        hi = np.where(k < n, special.betaincinv(k + 1, np.maximum(n - k, 1), 1 - a / 2), 1.0)
    return lo, hi
