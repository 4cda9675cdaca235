"""Sums of exponentials in log space, for the kernels (numba only).

Each is written in the one order of operations the kernels used before it was shared, so that
calling it gives the same bits as the inline code it replaced.
"""

from __future__ import annotations

import math

from numba import njit

from .jit import JIT

__all__ = ["logaddexp", "lse_push", "logsumexp"]


@njit(**JIT)
def logaddexp(u, v):
    """Return log(e^u + e^v) as m + log(e^(u - m) + e^(v - m)), m = max(u, v).

    nan when both are -inf (callers test for that case first where it can occur).
    """
    m = max(u, v)
    return m + math.log(math.exp(u - m) + math.exp(v - m))


@njit(**JIT)
def lse_push(m, acc, term):
    """Add e^term to a running sum held as acc e^m; return the new (m, acc).

    The running maximum m only grows, so acc stays in [1, count] and nothing overflows;
    log of the sum is m + log(acc). Start from (-inf, 0.0).
    """
    if term > m:
        return term, acc * math.exp(m - term) + 1.0
    return m, acc + math.exp(term - m)


@njit(**JIT)
def logsumexp(x):
    """Return log(sum(e^x)) of a 1-d array (-inf when every entry is -inf, or x is empty)."""
    m = -math.inf
    for i in range(x.shape[0]):
        m = max(m, x[i])
    if m == -math.inf:
        return -math.inf
    tot = 0.0
    for i in range(x.shape[0]):
        tot += math.exp(x[i] - m)
    return m + math.log(tot)
