"""What every posterior records about its run: the seed (reproducible) and the versions.

A leaf of the package (it imports only ``core.validation``), shared by the samplers'
front ends (:mod:`bayes_dp.inference.estimate`, :mod:`bayes_dp.gdp.core`,
:mod:`bayes_dp.one_run.core`).
"""

from __future__ import annotations

import importlib.metadata
import platform

import numpy as np

from bayes_dp.core.validation import as_generator


def _generator(seed) -> tuple[np.random.Generator, int | str]:
    """Return the run's Generator, and the seed as recorded.

    The seed is fresh entropy when ``seed`` is None.
    """
    if seed is None:
        # record fresh entropy so that the run can be reproduced
        entropy = np.random.SeedSequence().entropy
        return np.random.default_rng(entropy), entropy
    rng = as_generator(seed)
    return rng, int(seed) if isinstance(seed, (int, np.integer)) else "Generator"


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("bayes-dp", "numpy", "scipy", "numba", "arviz"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            out[pkg] = "unknown"
    return out
