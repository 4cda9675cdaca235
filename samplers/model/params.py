"""The per-base parameter matrix P of the over-dispersed likelihoods and MHAAR's proposals.

One row per challenge base; its columns are named in :mod:`samplers.model.densities` (A0, ...,
BSD1): the Beta(X + 1, N - X + 1) shapes of the binomial likelihood with their log normalising
constants, the truncated normals that imitate them (MHAAR's ``aux_proposal="normal"``) and the
counts themselves (read by the bivariate-normal and beta-binomial densities). Both samplers fill
it with :func:`aux_params`. Numpy only (``betaln`` and ``norm_cdf`` stand in for SciPy's).
"""

from __future__ import annotations

import math

import numpy as np

from .densities import (
    A0,
    A1,
    B0,
    B1,
    BSD0,
    BSD1,
    LB0,
    LB1,
    LN0,
    LN1,
    M0,
    M1,
    N0,
    N1,
    N_PARAMS,
    SD0,
    SD1,
    X,
    Y,
)

__all__ = ["NORMAL_SD_INFLATION", "aux_params", "betaln", "norm_cdf"]

#: sd inflation of the truncated-normal auxiliary proposal relative to the Beta it imitates.
NORMAL_SD_INFLATION = 1.5


_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _stirling_tail(x):
    """lgamma(x) - [(x - 1/2) log x - x + log(2 pi) / 2]: four terms, < 1e-16 for x >= 30."""
    x2 = x * x
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0) / x2) / x2) / x2) / x


def betaln(a, b) -> np.ndarray:
    """Return log B(a, b), elementwise, for a, b > 0 (in place of ``scipy.special.betaln``).

    Where the larger argument M is >= 30, Stirling's series for lgamma(M) - lgamma(m + M) with
    the ``log1p`` form keeps the digits that plain lgamma differences lose (lgamma(1e7) is
    1.5e8); elsewhere the arguments are small and lgamma is exact to rounding.
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    m, big_m = np.minimum(a, b), np.maximum(a, b)
    out = _lgamma(m) + _lgamma(big_m) - _lgamma(m + big_m)
    far = big_m >= 30.0
    m, big_m = m[far], big_m[far]
    out[far] = (
        _lgamma(m)
        - (big_m - 0.5) * np.log1p(m / big_m)
        - m * np.log(m + big_m)
        + m
        + _stirling_tail(big_m)
        - _stirling_tail(m + big_m)
    )
    return out


def norm_cdf(x) -> np.ndarray:
    """Return the standard normal distribution function, elementwise.

    In place of ``scipy.stats.norm``.
    """
    return 0.5 * _erfc(-np.asarray(x, dtype=np.float64) / math.sqrt(2.0))


def aux_params(fp, n_neg, fn, n_pos) -> np.ndarray:
    """Per-base parameter matrix P (n, N_PARAMS) read by the kernels.

    Its columns are named in :mod:`samplers.model.densities` (A0, ..., BSD1).
    """
    fp, n_neg, fn, n_pos = (np.asarray(v, dtype=np.float64) for v in (fp, n_neg, fn, n_pos))
    P = np.empty((fp.size, N_PARAMS))
    # the false positives of the negatives (alpha), then the false negatives of the positives
    for x, n, cols in (
        (fp, n_neg, (A0, B0, LB0, M0, SD0, LN0, X, N0, BSD0)),
        (fn, n_pos, (A1, B1, LB1, M1, SD1, LN1, Y, N1, BSD1)),
    ):
        c_a, c_b, c_lb, c_m, c_sd, c_ln, c_x, c_n, c_bsd = cols
        a = x + 1.0
        b = n - x + 1.0
        P[:, c_a] = a
        P[:, c_b] = b
        P[:, c_lb] = betaln(a, b)
        m = a / (a + b)
        sd = NORMAL_SD_INFLATION * np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
        z = norm_cdf((1.0 - m) / sd) - norm_cdf(-m / sd)
        P[:, c_m] = m
        P[:, c_sd] = sd
        P[:, c_ln] = np.log(sd * np.sqrt(2.0 * np.pi)) + np.log(z)
        P[:, c_x] = x
        P[:, c_n] = n
        P[:, c_bsd] = sd / NORMAL_SD_INFLATION
    return P
