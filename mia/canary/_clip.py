"""L2 clipping of one client update, shared by DP-FedAvg (``fedavg``) and CANIFE (``canife``)."""

from __future__ import annotations

import numpy as np


def clip_l2(u: np.ndarray, c: float) -> np.ndarray:
    """Return ``u`` scaled down to L2 norm ``c`` if it is longer, else ``u`` itself (not a copy).

    ``u * min(1, c / ||u||)``: the per-client clipping of DP-FedAvg and DP-FedSGD, so that adding
    or removing one client changes the sum of updates by at most ``c``. Callers validate ``c``
    (> 0) once, outside the training loop.

    Examples
    --------
    >>> clip_l2(np.array([3.0, 4.0]), 1.0)
    array([0.6, 0.8])
    >>> clip_l2(np.array([0.3, 0.4]), 1.0)
    array([0.3, 0.4])
    """
    n = np.linalg.norm(u)
    return u if n <= c else u * (c / n)
