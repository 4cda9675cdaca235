"""The Gauss-Legendre rules the kernels integrate with (numpy only, built once per caller)."""

from __future__ import annotations

import numpy as np

__all__ = ["gauss_legendre_table"]


def gauss_legendre_table(n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Rules on [-1, 1] for 1..n_max nodes: row n of (nodes, weights) holds the n-point rule.

    Row 0 is unused (zeros); in row n only the first n entries are set
    (``numpy.polynomial.legendre.leggauss(n)``), the rest are zero.
    """
    X = np.zeros((n_max + 1, n_max))
    W = np.zeros((n_max + 1, n_max))
    for n in range(1, n_max + 1):
        X[n, :n], W[n, :n] = np.polynomial.legendre.leggauss(n)
    return X, W
