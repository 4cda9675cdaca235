"""Special functions callable from numba kernels.

The regularised incomplete beta function and its complement come from SciPy's Cython special
functions (Boost's ``ibeta`` / ``ibetac``), looked up by address with
:func:`numba.extending.get_cython_function_address`, so the kernels use the same well-tested
implementation as :func:`scipy.special.betainc` rather than a hand-written continued fraction.
This is the only module of :mod:`samplers` that touches SciPy, and only to find the address of
compiled code at import time.
"""

from __future__ import annotations

import math

import llvmlite.binding
from numba import njit, types
from numba.extending import get_cython_function_address

from .jit import JIT

__all__ = ["betainc", "betaincc", "lbeta", "xlogy", "expit", "log_expit"]


# double f(double a, double b, double x, int skip_dispatch); fused specialisation 0 is double.
# The addresses are registered as named LLVM symbols and called as external functions (rather
# than through ctypes pointers), so that kernels calling them can be cached on disk: the cached
# code refers to the symbol by name and each process registers the address again on import.
_SIG = types.double(types.double, types.double, types.double, types.intc)


def _external(cython_name: str, symbol: str):
    addr = get_cython_function_address("scipy.special.cython_special", cython_name)
    llvmlite.binding.add_symbol(symbol, addr)
    return types.ExternalFunction(symbol, _SIG)


_betainc = _external("__pyx_fuse_0betainc", "bayes_dp_scipy_betainc")
_betaincc = _external("__pyx_fuse_0betaincc", "bayes_dp_scipy_betaincc")


@njit(**JIT)
def betainc(a, b, x):
    """Regularised incomplete beta I_x(a, b) (SciPy/Boost)."""
    return _betainc(a, b, x, 0)


@njit(**JIT)
def betaincc(a, b, x):
    """Its complement 1 - I_x(a, b), accurate where I_x(a, b) is close to 1."""
    return _betaincc(a, b, x, 0)


@njit(**JIT)
def lbeta(a, b):
    """Return log B(a, b)."""
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


@njit(**JIT)
def xlogy(c, v):
    """Return c * log(v) with 0 * log(0) = 0."""
    if c == 0.0:
        return 0.0
    return c * math.log(v)


@njit(**JIT)
def log_expit(z):
    """log(1 / (1 + e^-z)) without overflow."""
    if z >= 0.0:
        return -math.log1p(math.exp(-z))
    return z - math.log1p(math.exp(z))


@njit(**JIT)
def expit(z):
    """1 / (1 + e^-z) without overflow."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)
