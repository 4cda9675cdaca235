"""One-shot empirical privacy estimation with random canaries (Andrew et al.).

``one_shot_gaussian_mechanism`` runs Algorithm 1 on the Gaussian mechanism: k random unit
canaries are added to the sum, noise ``N(0, sigma^2 I_d)`` is added once, and the cosines
between each canary and the release are turned into an epsilon estimate by
``epsilon_from_cosines``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from bayes_dp.core.validation import (
    as_generator,
    check_delta,
    check_positive_int,
    check_real,
    check_scores,
)

from ._gaussians import epsilon_two_gaussians, gaussian_mechanism_epsilon
from ._null import epsilon_cosine_null_vs_gaussian

__all__ = [
    "CosineEstimate",
    "OneShotResult",
    "check_scores",
    "epsilon_from_cosines",
    "epsilon_from_two_samples",
    "one_shot_gaussian_mechanism",
    "simulate_canary_cosines",
]

METHODS = ("two_gaussians", "mean_only")
NULLS = ("gaussian", "exact")
SIMULATIONS = ("vectors", "gram")


@dataclass(frozen=True)
class CosineEstimate:
    """Epsilon estimated from the cosines of observed canaries.

    Attributes
    ----------
    epsilon : float
        The estimate.
    mean, std : float
        Sample mean and standard deviation (``1/k`` normalisation) of the cosines.
    method : str
        ``"two_gaussians"`` or ``"mean_only"``.
    null : str
        Null law used by ``"two_gaussians"``: ``"gaussian"`` (``N(0, 1/d)``) or ``"exact"``.
    d : int
        Dimension.
    delta : float
        Target delta.
    """

    epsilon: float
    mean: float
    std: float
    method: str
    null: str
    d: int
    delta: float

    @property
    def sigma_hat(self) -> float:
        """Noise multiplier implied by the mean alone, ``1 / (mean sqrt(d))`` (inf if mean <= 0)."""
        return 1.0 / (self.mean * math.sqrt(self.d)) if self.mean > 0 else math.inf


def epsilon_from_cosines(cosines, d, delta, *, method="two_gaussians", null="gaussian"):
    """Estimate epsilon from the cosines of observed (inserted) canaries with the release.

    Parameters
    ----------
    cosines : array_like of float
        One cosine per observed canary (at least 2 for ``"two_gaussians"``, which fits a
        variance; at least 1 for ``"mean_only"``).
    d : int
        Dimension of the release (>= 2).
    delta : float
        Target delta in (0, 1).
    method : {"two_gaussians", "mean_only"}
        ``"two_gaussians"`` (v1/v2 of the paper): fit ``N(mean, std^2)`` to the cosines and return
        the exact epsilon between the null and that Gaussian. ``"mean_only"`` (earliest version):
        set ``sigma_hat = 1 / (mean sqrt(d))`` and return the Gaussian-mechanism epsilon of
        ``sigma_hat`` (Balle and Wang 2018); no variance is fitted. A mean <= 0 gives 0.
    null : {"gaussian", "exact"}
        Null law of an unobserved canary's cosine for ``"two_gaussians"``: ``N(0, 1/d)`` or the
        exact Beta law (``CosineNull``). The exact null is lighter-tailed than any Gaussian fit,
        so at small d it inflates epsilon (see ``docs/validation/canary.md``); it is exact only for
        counts.

    Returns
    -------
    CosineEstimate

    Examples
    --------
    >>> g = np.full(1000, 1 / (1.54 * 1000.0))
    >>> g[::2] += 1e-4; g[1::2] -= 1e-4
    >>> round(epsilon_from_cosines(g, 10**6, 1e-6, method="mean_only").epsilon, 3)
    3.008
    """
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    g = check_scores("cosines", cosines, min_size=2 if method == "two_gaussians" else 1)
    d = check_positive_int("d", d, minimum=2)
    delta = check_delta(delta, positive=True)
    if null not in NULLS:
        raise ValueError(f"`null` must be one of {NULLS}; found {null!r}")
    mean = float(g.mean())
    std = float(g.std())
    if method == "mean_only":
        eps = gaussian_mechanism_epsilon(1.0 / (mean * math.sqrt(d)), delta) if mean > 0 else 0.0
    elif std == 0.0:
        raise ValueError("`cosines` are all equal; the variance cannot be fitted")
    elif null == "gaussian":
        eps = epsilon_two_gaussians(0.0, 1.0 / math.sqrt(d), mean, std, delta)
    else:
        eps = epsilon_cosine_null_vs_gaussian(d, mean, std, delta)
    return CosineEstimate(
        eps, mean, std, method, null if method == "two_gaussians" else "-", d, delta
    )


def epsilon_from_two_samples(null_scores, observed_scores, delta) -> float:
    """Epsilon between Gaussians fitted to unobserved and observed canary scores.

    Used for the all-iterates threat model (Andrew et al., Alg. 3), where the null law of the
    max-over-rounds cosine has no closed form and is estimated from canaries never inserted.

    Parameters
    ----------
    null_scores : array_like of float
        Scores of unobserved canaries (at least 2, not all equal).
    observed_scores : array_like of float
        Scores of observed canaries (at least 2, not all equal).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float

    Examples
    --------
    >>> z = np.array([-1.0, 1.0])
    >>> round(epsilon_from_two_samples(z, z + 0.5, 1e-6), 4)
    2.2541
    """
    g0 = check_scores("null_scores", null_scores, min_size=2)
    g1 = check_scores("observed_scores", observed_scores, min_size=2)
    delta = check_delta(delta, positive=True)
    for name, g in (("null_scores", g0), ("observed_scores", g1)):
        if g.std() == 0.0:
            raise ValueError(f"`{name}` are all equal; the variance cannot be fitted")
    return epsilon_two_gaussians(g0.mean(), g0.std(), g1.mean(), g1.std(), delta)


# -- simulation of Algorithm 1 ----------------------------------------------------------------
def _cosines_vectors(d, k, sigma, rng, chunk_bytes):
    """Explicit canaries in R^d, generated twice chunk by chunk from stored seeds."""
    rows = max(1, min(k, int(chunk_bytes // (8 * d))))
    starts = list(range(0, k, rows))
    seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(len(starts))

    def chunk(i):
        m = min(rows, k - starts[i])
        y = np.random.default_rng(seeds[i]).standard_normal((m, d))
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        return y

    rho = sigma * rng.standard_normal(d)
    for i in range(len(starts)):
        rho += chunk(i).sum(axis=0)
    rho /= np.linalg.norm(rho)
    return np.concatenate([chunk(i) @ rho for i in range(len(starts))])


def _cosines_gram(d, k, sigma, rng):
    """Draw the same joint law from a Bartlett factor of Wishart(d, I_{k+1}); O(k^2) memory."""
    n = k + 1
    a = np.tril(rng.standard_normal((n, n)), -1)
    a[np.diag_indices(n)] = np.sqrt(rng.chisquare(d - np.arange(n)))
    # rows of `a` have the Gram matrix of n i.i.d. N(0, I_d) vectors; the last one is the noise
    c = a[:k] / np.linalg.norm(a[:k], axis=1, keepdims=True)
    rho = c.sum(axis=0) + sigma * a[k]
    return c @ rho / np.linalg.norm(rho)


def simulate_canary_cosines(d, k, sigma, *, simulation="vectors", chunk_bytes=2**25, seed=None):
    """Cosines of k random unit canaries with ``sum(canaries) + N(0, sigma^2 I_d)``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    k : int
        Number of canaries (>= 1).
    sigma : float
        Noise standard deviation (> 0); the sensitivity is 1 (unit canaries).
    simulation : {"vectors", "gram"}
        ``"vectors"`` draws the canaries in R^d, ``chunk_bytes`` at a time, and regenerates each
        chunk from its stored seed for the second pass, so memory is O(d + chunk), never O(d k).
        ``"gram"`` draws the same joint law exactly from the Gram matrix of the k + 1 Gaussian
        vectors (Bartlett decomposition of a Wishart matrix); it needs ``d > k`` and O(k^2)
        memory, and its cost does not depend on d.
    chunk_bytes : int, default 32 MiB
        Memory for one chunk of canaries (``"vectors"`` only).
    seed : int or numpy.random.Generator, optional
        Random seed.

    Returns
    -------
    numpy.ndarray
        The k cosines.

    Examples
    --------
    Each cosine is about 1 / sqrt(k + sigma^2 d), the norm of the sum:

    >>> cos = simulate_canary_cosines(1000, 50, 1.0, simulation="gram", seed=0)
    >>> cos.shape
    (50,)
    >>> print(round(float(cos.mean()), 2), round(1 / np.sqrt(50 + 1000), 2))
    0.03 0.03
    """
    d = check_positive_int("d", d, minimum=2)
    k = check_positive_int("k", k, minimum=1)
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    chunk_bytes = check_positive_int("chunk_bytes", chunk_bytes)
    rng = as_generator(seed)
    if simulation == "vectors":
        return _cosines_vectors(d, k, sigma, rng, chunk_bytes)
    if simulation == "gram":
        if d <= k:
            raise ValueError(f'`simulation="gram"` needs d > k; found d={d}, k={k}')
        return _cosines_gram(d, k, sigma, rng)
    raise ValueError(f"`simulation` must be one of {SIMULATIONS}; found {simulation!r}")


@dataclass(frozen=True)
class OneShotResult:
    """Result of ``one_shot_gaussian_mechanism``.

    Attributes
    ----------
    epsilon : float
        Estimated epsilon.
    epsilon_analytic : float
        True epsilon of the Gaussian mechanism with this sigma (Balle and Wang 2018).
    estimate : CosineEstimate
        Fitted statistics (``mean``, ``std``, ``sigma_hat``) and settings.
    sigma : float
        Noise standard deviation used.
    cosines : numpy.ndarray
        The k cosines.
    """

    epsilon: float
    epsilon_analytic: float
    estimate: CosineEstimate
    sigma: float
    cosines: np.ndarray = field(repr=False)

    @property
    def mean(self) -> float:
        """Mean cosine."""
        return self.estimate.mean

    @property
    def std(self) -> float:
        """Standard deviation of the cosines (``1/k`` normalisation)."""
        return self.estimate.std


def one_shot_gaussian_mechanism(
    d: int,
    k: int,
    sigma: float,
    delta: float,
    *,
    method: str = "two_gaussians",
    null: str = "gaussian",
    simulation: str = "vectors",
    chunk_bytes: int = 2**25,
    seed: int | np.random.Generator | None = None,
) -> OneShotResult:
    """Audit the Gaussian mechanism in one run with k random canaries (Alg. 1).

    Parameters
    ----------
    d : int
        Dimension (>= 2).
    k : int
        Number of canaries (>= 1; >= 2 for ``"two_gaussians"``); the estimate assumes
        ``k << d``.
    sigma : float
        Noise standard deviation (> 0) for sensitivity 1.
    delta : float
        Target delta in (0, 1).
    method : {"two_gaussians", "mean_only"}
        Estimator, see ``epsilon_from_cosines``.
    null : {"gaussian", "exact"}
        Null law for ``"two_gaussians"``.
    simulation : {"vectors", "gram"}
        How the cosines are simulated, see ``simulate_canary_cosines``.
    chunk_bytes : int, default 32 MiB
        Memory for one chunk of canaries.
    seed : int or numpy.random.Generator, optional
        Random seed.

    Returns
    -------
    OneShotResult

    Raises
    ------
    ValueError
        If ``d < 2``, ``k < 1`` (``k < 2`` with ``"two_gaussians"``), ``sigma <= 0`` or
        ``delta`` is outside (0, 1).

    Examples
    --------
    >>> r = one_shot_gaussian_mechanism(10**5, 500, 1.54, 1e-6, method="mean_only",
    ...                                 simulation="gram", seed=1)
    >>> abs(r.epsilon - r.epsilon_analytic) < 0.6
    True
    """
    d = check_positive_int("d", d, minimum=2)
    k = check_positive_int("k", k, minimum=1)
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    delta = check_delta(delta, positive=True)
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; found {method!r}")
    if method == "two_gaussians" and k < 2:
        raise ValueError(
            f'`k` must be >= 2 with method="two_gaussians" (a variance is fitted); found {k}'
        )
    g = simulate_canary_cosines(
        d, k, sigma, simulation=simulation, chunk_bytes=chunk_bytes, seed=seed
    )
    est = epsilon_from_cosines(g, d, delta, method=method, null=null)
    return OneShotResult(est.epsilon, gaussian_mechanism_epsilon(sigma, delta), est, sigma, g)
