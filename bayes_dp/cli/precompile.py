"""Fill numba's compile cache ahead: :func:`precompile` (``bayes-dp precompile``).

Runs each kernel entry point once on tiny inputs through the functions real runs use, so that
a Docker image or a CI cache holds the compiled kernels and no run pays the compilation
(``bayes_dp.inference.first_run`` says why and how a first run is detected).
"""

from __future__ import annotations

import sys
import time
import warnings

from bayes_dp.core.likelihoods import LIKELIHOODS
from bayes_dp.inference import first_run
from bayes_dp.inference.runners import warm_up
from bayes_dp.inference.settings import MHAAR, Exact
from bayes_dp.planning.core import _warm_up as warm_up_plan

__all__ = ["precompile"]


def _steps() -> dict:
    """Return what :func:`precompile` compiles, in order: name -> (kernel family, warm-up)."""
    liks = list(LIKELIHOODS)
    # MHAAR samples groups of attack counts only (not one-run audits)
    counts = [lik for lik in liks if LIKELIHOODS[lik].counts == "AttackCounts"]
    over = [lik for lik in counts if lik != "binomial"]
    return {
        f"exact sampler ({', '.join(liks)}; pointwise log-likelihood)": (
            "exact",
            lambda: warm_up(Exact(), liks),
        ),
        f"MHAAR ({', '.join(counts)})": ("mhaar", lambda: warm_up(MHAAR(), counts)),
        f"MHAAR, integrated latents ({', '.join(over)})": (
            "mhaar",
            lambda: warm_up(MHAAR(integrate_latents=True), over),
        ),
        "planner grid": ("plan", warm_up_plan),
    }


def precompile(*, verbose: bool = False) -> dict[str, float]:
    """Compile every numba kernel once on tiny inputs, so that later runs start at once.

    Runs each sampler briefly (the exact sampler with its pointwise log-likelihood and the
    fallback moves a run compiles only when a chain needs them, and MHAAR, for every
    likelihood: binomial, bivariate normal, beta-binomial; the exact binomial also on bases of
    equal sizes, as a score matrix's; MHAAR's integrated latents) and the planner's grid,
    through the functions real runs use. That fills numba's
    on-disk cache: ``__pycache__`` next to the kernels' modules, or ``NUMBA_CACHE_DIR`` when
    set. Use it when building a Docker image or a CI cache (``bayes-dp precompile`` does the
    same). Gaussian-DP and one-run posteriors (``estimate_gdp``, ``estimate_one_run``) use
    numpy and scipy only: they have nothing to compile. On a warm cache it only loads the
    kernels (seconds).

    Parameters
    ----------
    verbose : bool
        Print one line per step to stderr as it finishes.

    Returns
    -------
    dict
        Seconds per step, keyed by what it compiled.

    Raises
    ------
    TypeError
        When ``verbose`` is not True or False.

    Examples
    --------
    >>> import bayes_dp as bdp
    >>> took = bdp.precompile()  # doctest: +SKIP
    >>> list(took)[-1]  # doctest: +SKIP
    'planner grid'
    """
    if not isinstance(verbose, bool):
        raise TypeError(f"`verbose` must be True or False; found {verbose!r}")
    out = {}
    with warnings.catch_warnings(), first_run.every_kernel():
        warnings.simplefilter("ignore")  # tiny runs: their convergence is not the point
        for name, (family, step) in _steps().items():
            first_run.mark_compiled(family)  # compiled here: no notice in this process
            t0 = time.perf_counter()
            step()
            out[name] = time.perf_counter() - t0
            if verbose:
                print(f"compiled {name}: {out[name]:.1f} s", file=sys.stderr, flush=True)
    return out
