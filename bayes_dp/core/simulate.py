"""Simulate attack counts from the model, for calibration studies, planning and tests.

``simulate_counts`` draws (alpha_i, beta_i) uniformly on R_s(eps, delta) (rejection sampling from
the unit square) and then the counts from the chosen likelihood; ``simulate_gdp_counts`` does the
same for a mu-GDP mechanism, with (alpha_i, beta_i) uniform on the band between the Gaussian
trade-off curves of mu and s mu. ``sample_band`` draws from R_s(eps, delta) exactly (inverse
distribution functions, no rejection), at any area, optionally in its lower-left half only.
"""

from __future__ import annotations

import numpy as np

from bayes_dp.core.likelihoods import get_likelihood
from bayes_dp.core.observations import AttackCounts
from bayes_dp.core.validation import (
    as_generator,
    check_delta,
    check_int_array,
    check_positive_int,
    check_real,
)

__all__ = [
    "gdp_region_area",
    "sample_band",
    "sample_gdp_region",
    "sample_strength_region",
    "simulate_counts",
    "simulate_gdp_counts",
]


def _sample_uniform(inside, area: float, size: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``size`` points uniformly from {inside(a, b)} in the unit square (by rejection)."""
    out_a = np.empty(0)
    out_b = np.empty(0)
    batch = int(min(max(4 * size / area, 1024), 5e6))
    while out_a.size < size:
        a, b = rng.random((2, batch))
        keep = inside(a, b)
        out_a = np.concatenate([out_a, a[keep]])
        out_b = np.concatenate([out_b, b[keep]])
    return out_a[:size], out_b[:size]


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
    from bayes_dp.core.region import in_strength_region, strength_region_area

    eps = check_real("eps", eps, low=0.0, low_open=True)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    delta = check_delta(delta)
    rng = as_generator(seed)
    area = strength_region_area(eps, s, delta)
    if not area > 1e-9:
        raise ValueError(f"R_s has area {area:.3g} for eps={eps}, s={s}: too small to sample")
    return _sample_uniform(lambda a, b: in_strength_region(a, b, eps, s, delta), area, size, rng)


def sample_band(eps: float, s: float, delta: float, size: int, *, reflect: bool = True, seed=None):
    """Draw ``size`` points uniformly from R_s(eps, delta), exactly and at any area.

    R_s(eps, delta) = R(eps, delta) minus R(s eps, s delta); ``s = 0`` gives the whole region
    R(eps, delta) (R(0, 0) is the diagonal), e.g. the unexposed component R(kappa eps, delta) of
    the exposure mixture, a strip of width about delta + kappa eps / 2 when kappa eps is tiny.
    Unlike :func:`sample_strength_region` (rejection from the unit square, which refuses areas
    below 1e-9) it samples by inverse distribution functions. In the quarter
    {a <= b, a + b <= 1} of the region the admissible b for a given a form the interval
    [max(a, 1 - delta - e^eps a), 1 - s delta - e^(s eps) a), whose length is piecewise linear in
    a: (1 - s) delta + (e^eps - e^(s eps)) a up to a1 = (1 - delta) / (1 + e^eps), then falling
    linearly to 0 at a2 = (1 - s delta) / (1 + e^(s eps)). The draw picks one of the three
    pieces (a constant, a rising and a falling triangle) by its area, a from that piece's law,
    b uniformly on its interval, then swaps a and b with probability 1/2 (the region is
    symmetric about a = b) and, with ``reflect``, maps (a, b) to (1 - a, 1 - b) with
    probability 1/2 (symmetric through (1/2, 1/2)). A reflected point is rounded to the doubles
    near 1: where the band hugs the axes (large eps, s near 1: widths below 1e-13) a few of them
    fall just outside it by that rounding.

    Parameters
    ----------
    eps : float
        Privacy parameter, >= 0 and finite.
    s : float
        Attack strength in [0, 1).
    delta : float
        Privacy parameter in [0, 1); ``eps = delta = 0`` (an empty region) is refused.
    size : int
        Number of points, >= 0.
    reflect : bool, default True
        Whether to draw from the whole band (the paper's model) or from its lower-left half
        {alpha + beta <= 1} only, with twice the density (``Evidence(reflect=False)``, the
        decisions as made).
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    alpha, beta : ndarray
        Type I and type II error probabilities.

    Examples
    --------
    >>> a, b = sample_band(30.0, 0.99, 1e-5, 1000, reflect=False, seed=0)  # area 7e-14
    >>> from bayes_dp import in_strength_region
    >>> bool(in_strength_region(a, b, 30.0, 0.99, 1e-5).all())
    True
    >>> a, b = sample_band(1e-12, 0.0, 1e-5, 1000, reflect=False, seed=0)  # the strip
    >>> bool((a + b <= 1).all()), bool((1 - a - b).max() < 2e-5)
    (True, True)
    """
    eps = check_real("eps", eps, low=0.0)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    delta = check_delta(delta)
    size = check_positive_int("size", size, minimum=0)
    if not isinstance(reflect, (bool, np.bool_)):
        raise TypeError(f"`reflect` must be True or False; found {reflect!r}")
    if eps == 0.0 and delta == 0.0:
        raise ValueError("R(0, 0) is the diagonal, of area 0: `eps` or `delta` must be > 0")
    rng = as_generator(seed)
    a1, gap, lpk, d, g, weights = _band_pieces(eps, s, delta)
    t0 = s * eps
    piece = np.searchsorted(np.cumsum(weights) / np.sum(weights), rng.random(size), side="right")
    piece = np.minimum(piece, 2)
    u, v = rng.random((2, size))
    # r = a / a1 on the rising pieces: uniform (constant length d) or sqrt(U) (length g r)
    r = np.where(piece == 0, u, np.sqrt(u))
    left = piece < 2
    a = np.where(left, a1 * r, a1 + gap * (1.0 - np.sqrt(u)))
    # lower end of b: 1 - delta - e^eps a = 1 - delta - r (1 - delta) / (1 + e^-eps) left of a1,
    # a right of it; the interval's length d + g r left of a1, lpk sqrt(U) right of it
    lower = np.where(left, 1.0 - delta - r * (1.0 - delta) / (1.0 + np.exp(-eps)), a)
    length = np.where(left, d + g * r, lpk * np.sqrt(u))
    b = lower + v * length
    b = np.minimum(b, 1.0 - s * delta - np.exp(t0) * a)  # rounding: stay below the inner curve
    swap = rng.random(size) < 0.5
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    if reflect:
        flip = rng.random(size) < 0.5
        a, b = np.where(flip, 1.0 - a, a), np.where(flip, 1.0 - b, b)
    return a, b


def _band_pieces(eps: float, s: float, delta: float):
    """Return the pieces of :func:`sample_band`'s law of a = min(alpha, beta) (lower-left half).

    They are a1 (where the lower end of b switches from the eps-curve to the diagonal a = b),
    the falling piece's width a2 - a1, the interval's length at a1, its length d = (1 - s) delta
    at a = 0, its rise g = (e^eps - e^(s eps)) a1 over [0, a1], and the areas of the three pieces
    (constant, rising, falling) of the quarter {a <= b, a + b <= 1}; they add up to
    |R_s(eps, delta)| / 4. Written with expm1 and e^-eps so that it neither overflows at large
    eps nor cancels when eps (s = 0) is tiny.
    """
    t0 = s * eps
    d = (1.0 - s) * delta
    a1 = (1.0 - delta) / (1.0 + np.exp(eps))
    shrink = -np.expm1(t0 - eps)  # 1 - e^(s eps - eps)
    g = (1.0 - delta) * shrink / (1.0 + np.exp(-eps))
    gap = d / (1.0 + np.exp(eps)) + (1.0 - s * delta) * shrink / (
        (1.0 + np.exp(t0)) * (1.0 + np.exp(-eps))
    )
    lpk = d + g
    weights = np.array([d * a1, g * a1 / 2.0, lpk * gap / 2.0])
    return float(a1), float(gap), float(lpk), float(d), float(g), weights


def _check_mu_s(mu, s) -> tuple[float, float]:
    mu = check_real("mu", mu, low=0.0, low_open=True)
    s = check_real("s", s, low=0.0, high=1.0, high_open=True)
    return mu, s


def gdp_region_area(mu: float, s: float = 0.0) -> float:
    """Area of the band between the Gaussian trade-off curves of mu and s mu (both halves).

    The error pairs of a mu-GDP mechanism's tests are the (alpha, beta) with beta >=
    G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) and their mirror images (1 - alpha, 1 - beta).
    Below G_mu lies the area E[Phi(Z - mu)] = Phi(-mu / sqrt 2) (Z standard normal), and as
    much above the mirrored curve, so the band has area 2 [Phi(-s mu / sqrt 2) -
    Phi(-mu / sqrt 2)].

    Parameters
    ----------
    mu : float
        GDP parameter, > 0.
    s : float
        Attack strength, in [0, 1) (default 0: the whole region of the mu-GDP mechanism).

    Returns
    -------
    float

    Examples
    --------
    >>> round(gdp_region_area(1.0), 4)
    0.5205
    """
    from scipy.special import ndtr

    mu, s = _check_mu_s(mu, s)
    return float(2.0 * (ndtr(-s * mu / np.sqrt(2.0)) - ndtr(-mu / np.sqrt(2.0))))


def _in_gdp_band(alpha, beta, mu: float, s: float) -> np.ndarray:
    """Whether (alpha, beta) lies between the trade-off curves of mu and s mu (or mirrored)."""
    from scipy.special import ndtr, ndtri

    upper = alpha + beta > 1.0
    a = np.where(upper, 1.0 - alpha, alpha)
    b = np.where(upper, 1.0 - beta, beta)
    q = ndtri(1.0 - a)
    return (b >= ndtr(q - mu)) & (b < ndtr(q - s * mu))


def sample_gdp_region(mu: float, s: float, size: int, seed=None):
    """Draw ``size`` error pairs uniformly from the band of strength s of a mu-GDP mechanism.

    The band lies between the Gaussian trade-off curve G_mu (the mechanism's tests can do no
    better) and G_{s mu} (what an attack of strength s does at least), together with its mirror
    image: every point lies on the curve G_{mu_i} of some mu_i in [s mu, mu]. It is the GDP
    counterpart of R_s(eps, delta) (:func:`sample_strength_region`);
    ``docs/validation/planning.md``.

    Parameters
    ----------
    mu : float
        GDP parameter, > 0.
    s : float
        Attack strength, in [0, 1).
    size : int
        Number of pairs.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    alpha, beta : ndarray
        Type I and type II error probabilities.

    Examples
    --------
    >>> a, b = sample_gdp_region(1.0, 0.5, 1000, seed=0)
    >>> from bayes_dp import gdp_epsilon, in_region  # mu-GDP is (eps(mu, delta), delta)-DP
    >>> bool(in_region(a, b, gdp_epsilon(1.0, 1e-5), 1e-5).all())
    True
    """
    mu, s = _check_mu_s(mu, s)
    size = check_positive_int("size", size)
    area = gdp_region_area(mu, s)
    if not area > 1e-6:  # rejection from the unit square: 5e6 candidates keep ~5
        raise ValueError(
            f"the GDP band has area {area:.3g} for mu={mu}, s={s}: too small to sample"
        )
    rng = as_generator(seed)
    return _sample_uniform(lambda a, b: _in_gdp_band(a, b, mu, s), area, size, rng)


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
        :data:`bayes_dp.core.likelihoods.LIKELIHOODS`. Bivariate-normal draws are rounded to the
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
    rates = lambda n, rng: sample_strength_region(eps, s, delta, n, seed=rng)  # noqa: E731
    return _simulate(rates, n_neg, n_pos, likelihood, tau, rho, as_generator(seed))


def simulate_gdp_counts(mu, s, n_neg, n_pos, *, likelihood="binomial", tau=0.0, rho=0.0, seed=None):
    """Simulate one row of counts per challenge base from a mu-GDP mechanism.

    Per base the error pair (alpha, beta) is uniform on the band between the Gaussian
    trade-off curves of mu and s mu (:func:`sample_gdp_region`); the counts are then drawn as
    in :func:`simulate_counts`. A mu-GDP mechanism is (eps, delta)-DP with eps =
    :func:`bayes_dp.gdp_epsilon` (mu, delta) at every delta, so these counts are evidence about
    that eps.

    Parameters
    ----------
    mu : float
        GDP parameter, > 0.
    s : float
        Attack strength, in [0, 1).
    n_neg, n_pos, likelihood, tau, rho, seed
        As in :func:`simulate_counts`.

    Returns
    -------
    counts, alpha, beta
        As in :func:`simulate_counts`.

    Examples
    --------
    >>> c, a, b = simulate_gdp_counts(1.0, 0.5, [100, 100], 100, seed=0)
    >>> len(c)
    2
    """
    mu, s = _check_mu_s(mu, s)
    rates = lambda n, rng: sample_gdp_region(mu, s, n, seed=rng)  # noqa: E731
    return _simulate(rates, n_neg, n_pos, likelihood, tau, rho, as_generator(seed))


def _simulate(draw_rates, n_neg, n_pos, likelihood, tau, rho, seed):
    """Draw the counts of bases whose rates ``draw_rates(n, rng)`` draws (`simulate_counts`)."""
    spec = get_likelihood(likelihood)
    rng = as_generator(seed)
    n_neg = check_int_array("n_neg", n_neg, min_value=1)
    n_pos = check_int_array("n_pos", n_pos, min_value=1)
    n = max(n_neg.size, n_pos.size)
    n_neg = np.broadcast_to(n_neg, (n,)).astype(float)
    n_pos = np.broadcast_to(n_pos, (n,)).astype(float)
    alpha, beta = draw_rates(n, rng)
    x, y = spec.simulate(rng, n_neg, n_pos, alpha, beta, tau=tau, rho=rho)
    return AttackCounts(x, n_neg.astype(np.int64), y, n_pos.astype(np.int64)), alpha, beta
