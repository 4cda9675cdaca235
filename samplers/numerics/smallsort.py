"""Insertion sorts for the kernels' short arrays (numpy and numba only).

The quadratures sort a handful of break points (at most a few dozen) per call. ``np.sort`` and
``np.argsort`` would do, but in numba each of them compiles a quicksort of its own (~1 s of a
first run's compile time each, for arrays this short); an insertion sort is a few lines, and
it is what numba's quicksort does itself below 16 elements, so the order is the same.
"""

from __future__ import annotations

from numba import njit

from .jit import JIT

__all__ = ["sort_small", "argsort_desc_small"]


@njit(**JIT)
def sort_small(v, n):
    """Sort v[:n] in place, ascending."""
    for i in range(1, n):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key


@njit(**JIT)
def argsort_desc_small(v, n, order):
    """Fill order[:n] with the indices of v[:n] by decreasing value.

    Stable (ties keep their order), as ``np.argsort(-v[:n])`` is for n < 16.
    """
    for i in range(n):
        order[i] = i
    for i in range(1, n):
        cur = order[i]
        key = v[cur]
        j = i - 1
        while j >= 0 and v[order[j]] < key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = cur
