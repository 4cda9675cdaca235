"""The correlated Gaussian random-walk proposal both samplers use (numpy and numba only)."""

from __future__ import annotations

from numba import njit

from ..numerics.jit import JIT

__all__ = ["gaussian_step"]


@njit(**JIT)
def gaussian_step(z, chol, sc, rng, xi, zp):
    """Set zp = z + sc * chol @ xi, xi standard normal (drawn into ``xi``), chol lower-triangular.

    The joint random walk of :mod:`samplers.exact.chain` and of MHAAR's move 1
    (:mod:`samplers.mhaar.chain`).
    """
    d = z.shape[0]
    for a in range(d):
        xi[a] = rng.standard_normal()
    for a in range(d):
        acc = 0.0
        for b in range(a + 1):
            acc += chol[a, b] * xi[b]
        zp[a] = z[a] + sc * acc
