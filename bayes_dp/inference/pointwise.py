"""The pointwise log likelihood of an exact-sampler run, computed after the sampling.

The kernel does not record it per draw (that array would grow as draws x bases). Instead
:func:`compute` evaluates the deterministic likelihood at a
thinned, evenly spaced subset of the stored draws (:func:`thin_step`), for the distinct bases
only; the :class:`~bayes_dp.results.posterior.Posterior` keeps that compact array with the index of
each base's distinct row and expands it on request. ``docs/validation/lira.md`` ("At scale") has
the numbers. A failure here never loses the run: the posterior comes without the
``log_likelihood`` group and an :class:`~bayes_dp.core.exceptions.OutputSkippedWarning` says why.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from bayes_dp.core.exceptions import OutputSkippedWarning

#: At most this many draws per chain are kept for the pointwise log likelihood (PSIS-LOO needs
#: a few hundred to a few thousand draws in all, not 100,000 per chain).
LOGLIK_MAX_DRAWS = 1000
#: ... and fewer when chains x kept draws x bases would exceed this many values once expanded
#: to one column per base (2**24 float64 = 128 MiB) ...
LOGLIK_MAX_VALUES = 2**24
#: ... but never fewer than this many per chain (when the run has them).
LOGLIK_MIN_DRAWS = 100


def thin_step(n_draws: int, chains: int, n_bases: int) -> int:
    """Return the stride of the draws whose pointwise log likelihood is kept.

    Draws 0, step, 2 step, ... of each chain are kept: at most :data:`LOGLIK_MAX_DRAWS` per
    chain, fewer when chains x kept x bases would exceed :data:`LOGLIK_MAX_VALUES`, but at
    least :data:`LOGLIK_MIN_DRAWS` (or all draws of a shorter run).
    """
    if n_draws <= 0:
        return 1
    by_size = LOGLIK_MAX_VALUES // max(1, chains * n_bases)
    keep = min(n_draws, LOGLIK_MAX_DRAWS, max(LOGLIK_MIN_DRAWS, by_size))
    return max(1, math.ceil(n_draws / keep))


def compute(kmodel, corr, base_map: np.ndarray, z: np.ndarray, *, cores: int | None) -> dict:
    """Return the run's pointwise log likelihood, compact, for ``out`` of the exact sampler.

    Keys: ``log_lik`` (chains, kept draws, distinct rows) or None when it could not be built,
    ``log_lik_index`` (observations,) the distinct row of each observation (``base_map``, of
    :func:`bayes_dp.inference.runners.kernel_model`: the bases and one-run rows of the groups
    in group order), ``log_lik_thin`` the stride of the kept draws, and ``log_lik_skipped``
    (why it is missing) when it is None.
    """
    from samplers.exact.pointwise import pointwise_guesses, pointwise_log_lik

    chains, n_draws = z.shape[:2]
    step = thin_step(n_draws, chains, base_map.shape[0])
    try:
        ll_b, ll_c, n_bad = pointwise_log_lik(kmodel, corr, z[:, ::step], cores=cores or 1)
        if n_bad:
            raise ValueError(f"{n_bad} stored draws have log posterior -inf")
        n_b = ll_b.shape[2]
        index = np.where(base_map[:, 0] == 0, base_map[:, 1], n_b + base_map[:, 1])
        compact = np.concatenate([ll_b, ll_c], axis=2) if ll_c.shape[2] else ll_b
        if kmodel.G.r.size:
            # the one-run audits' rows after the bases' distinct rows
            guesses = base_map[:, 0] == 2
            index[guesses] = compact.shape[2] + base_map[guesses, 1]
            compact = np.concatenate([compact, pointwise_guesses(kmodel, z[:, ::step])], axis=2)
    except Exception as e:  # MemoryError included: the draws must survive
        why = f"{type(e).__name__}: {e}"
        warnings.warn(
            OutputSkippedWarning(
                f"the pointwise log likelihood (for az.loo) was not computed ({why}); the "
                "posterior is complete without it",
                output="log_likelihood",
                reason=why,
            ),
            stacklevel=4,
        )
        return {"log_lik": None, "log_lik_skipped": why, "log_lik_thin": step}
    return {"log_lik": compact, "log_lik_index": index, "log_lik_thin": step}
