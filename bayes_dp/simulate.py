"""Simulate attack counts from the model, for calibration studies and tests.

``simulate_counts`` draws (alpha_i, beta_i) uniformly on R_s(eps, delta) (rejection sampling from
the unit square) and then the counts from the chosen likelihood.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_generator, check_delta, check_int_array, check_real
from .likelihoods import get_likelihood
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
        Model of the counts given (alpha, beta), a name in
        :data:`bayes_dp.likelihoods.LIKELIHOODS`. Bivariate-normal draws are rounded to the
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
    spec = get_likelihood(likelihood)
    rng = as_generator(seed)
    n_neg = check_int_array("n_neg", n_neg, min_value=1)
    n_pos = check_int_array("n_pos", n_pos, min_value=1)
    n = max(n_neg.size, n_pos.size)
    n_neg = np.broadcast_to(n_neg, (n,)).astype(float)
    n_pos = np.broadcast_to(n_pos, (n,)).astype(float)
    alpha, beta = sample_strength_region(eps, s, delta, n, seed=rng)
    x, y = spec.simulate(rng, n_neg, n_pos, alpha, beta, tau=tau, rho=rho)
    return AttackCounts(x, n_neg.astype(np.int64), y, n_pos.astype(np.int64)), alpha, beta
