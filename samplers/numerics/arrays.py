"""Small array helpers for the kernels (numba only)."""

from __future__ import annotations

from numba import njit

from .jit import JIT

__all__ = ["copy_into"]


@njit(**JIT)
def copy_into(dst, src):
    """Set dst[:] = src for 1-d arrays.

    A slice assignment from an array would do, but numba compiles its shape-mismatch error
    message with it (~1 s of a first run's compile time for each array rank).
    """
    for i in range(src.shape[0]):
        dst[i] = src[i]
