"""Simulate attack counts from the model, for calibration studies and tests.

``simulate_counts`` draws (alpha_i, beta_i) uniformly on R_s(eps, delta) (rejection sampling from
the unit square) and then the counts from the chosen likelihood.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_generator, check_delta, check_int_array, check_real
from .observations import AttackCounts

__all__ = ["sample_strength_region", "simulate_counts"]


def sample_strength_region(eps: float, s: float, delta: float, size: int, seed=None):
    """Draw ``size`` points uniformly from R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta).

    Returns
    -------
    alpha, beta : ndarray
        Type I and type II error probabilities.

    Examples
    --------
    >>> a, b = sample_strength_region(2.0, 0.5, 1e-5, 1000, seed=0)
    >>> from bayes_dp import in_strength_region
    >>> bool(in_strength_region(a, b, 2.0, 0.5, 1e-5).all())
    True
    """
    from .region import in_strength_region, strength_region_area

    eps = check_real("eps", eps, low=0.0, low_open=True)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    delta = check_delta(delta)
    rng = as_generator(seed)
    area = strength_region_area(eps, s, delta)
    if not area > 1e-9:
        raise ValueError(f"R_s has area {area:.3g} for eps={eps}, s={s}: too small to sample")
    out_a = np.empty(0)
    out_b = np.empty(0)
    batch = int(min(max(4 * size / area, 1024), 5e6))
    while out_a.size < size:
        a, b = rng.random((2, batch))
        keep = in_strength_region(a, b, eps, s, delta)
        out_a = np.concatenate([out_a, a[keep]])
        out_b = np.concatenate([out_b, b[keep]])
    return out_a[:size], out_b[:size]


def simulate_counts(
    eps, s, delta, n_neg, n_pos, *, likelihood="binomial", tau=0.0, rho=0.0, seed=None
):
    """Simulate one row of counts per challenge base from the model.

    Parameters
    ----------
    eps, s, delta : float
        The privacy and strength parameters.
    n_neg, n_pos : int or array_like of int
        Challenges per hypothesis for each base (their length sets the number of bases).
    likelihood : {"binomial", "bivariate_normal", "beta_binomial"}
        Model of the counts given (alpha, beta). Bivariate-normal draws are rounded to the
        nearest integer and clipped to [0, N] (the model is a normal approximation of integer
        counts).
    tau, rho : float
        Over-dispersion parameters of the correlated likelihoods.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    counts : AttackCounts
    alpha, beta : ndarray
        The true error probabilities of each base.
    """
    rng = as_generator(seed)
    n_neg = check_int_array("n_neg", n_neg, min_value=1)
    n_pos = check_int_array("n_pos", n_pos, min_value=1)
    n = max(n_neg.size, n_pos.size)
    n_neg = np.broadcast_to(n_neg, (n,)).astype(float)
    n_pos = np.broadcast_to(n_pos, (n,)).astype(float)
    alpha, beta = sample_strength_region(eps, s, delta, n, seed=rng)
    if likelihood == "binomial":
        x = rng.binomial(n_neg.astype(np.int64), alpha)
        y = rng.binomial(n_pos.astype(np.int64), beta)
    elif likelihood == "bivariate_normal":
        c0 = 1 + (n_neg - 1) * tau
        c1 = 1 + (n_pos - 1) * tau
        # variances at the rates shrunk by half a count, as in the sampler's likelihood
        sa = (n_neg * alpha + 0.5) / (n_neg + 1)
        sb = (n_pos * beta + 0.5) / (n_pos + 1)
        sx = np.sqrt(sa * (1 - sa) * n_neg * c0)
        sy = np.sqrt(sb * (1 - sb) * n_pos * c1)
        r = rho * np.sqrt(n_neg * n_pos / (c0 * c1))
        if np.any(np.abs(r) >= 1):
            raise ValueError(f"`rho` = {rho} is not admissible at tau = {tau}")
        z1, z2 = rng.standard_normal((2, n))
        x = np.rint(np.clip(n_neg * alpha + sx * z1, 0, n_neg)).astype(np.int64)
        y = np.rint(
            np.clip(n_pos * beta + sy * (r * z1 + np.sqrt(1 - r**2) * z2), 0, n_pos)
        ).astype(np.int64)
    elif likelihood == "beta_binomial":
        tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
        phi = 1 / tau - 1
        x = rng.binomial(n_neg.astype(np.int64), rng.beta(alpha * phi, (1 - alpha) * phi))
        y = rng.binomial(n_pos.astype(np.int64), rng.beta(beta * phi, (1 - beta) * phi))
    else:
        raise ValueError(
            "`likelihood` must be 'binomial', 'bivariate_normal' or 'beta_binomial'; "
            f"found {likelihood!r}"
        )
    return AttackCounts(x, n_neg.astype(np.int64), y, n_pos.astype(np.int64)), alpha, beta
