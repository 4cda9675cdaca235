"""A cheap check that the exact sampler's chains did not miss a dominant mode at eps ~ 0.

The chains of the exact sampler start near the best point of a grid that begins at eps = 0.01
(``samplers.exact.driver.starting_points``). A posterior can have a second mode far below that:
with many barely exposed bases (LiRA score matrices), the model's uniform density on R_s(eps,
delta) puts those bases' error points on the diagonal alpha + beta = 1 when eps << delta, and
that mode can carry almost all of the posterior while no chain ever visits it
(``docs/validation/lira.md``,
"Which likelihood for a score matrix"). The chains then agree with each other and r_hat says
nothing.

:func:`find_better_mode` fixes eps at delta / 10 (where that mode lies: there the band of R_s
around the diagonal has the same width everywhere) and maximises the exact log posterior (the
kernel's own ``samplers.exact.posterior.log_posterior``) over the other coordinates (Nelder-Mead
in the sampler's coordinates z, a fixed number of evaluations, so that the answer does not
depend on the machine's speed), then compares the value found with the best value among the
draws of the chains that never went below delta / 10. A point whose log density is
:data:`MARGIN` above every such draw's is reported: those chains sit in a minor mode. The check
needs delta > 0 and runs for models of at least :data:`MIN_BASES` bases (a mode of this kind
needs many weak bases).

What the sampler does with it (``samplers.exact.run_exact``, which
``bayes_dp.inference.runners.sample_exact`` hands this check): an automatic run checks before
each extension and at its end, and on a report samples again, every chain
started near the point found (the posterior's mass is there); only when the second run misses
a mode again is the run marked not converged (``stop_reason`` ``"minor_mode"``). The check only
looks below delta: a missed mode elsewhere is not looked for.
"""

from __future__ import annotations

import math

import numpy as np

#: Log posterior density by which a point found must beat every draw to be reported. The
#: largest log density among thousands of draws of a d-dimensional posterior lies within a few
#: units of its mode (d / 2 on average for a normal one), so 5 units above every draw is a
#: region the chains did not visit, not their own mode's peak.
MARGIN = 5.0
#: Evaluations of the log posterior per free coordinate besides eps.
EVALS_PER_COORD = 60
#: Draws per chain at which the chains' log density is evaluated (evenly spaced).
DRAWS_EVALUATED = 25
#: Fewest bases (with multiplicity) for which the check runs.
MIN_BASES = 20


def find_better_mode(kmodel, corr, names, z: np.ndarray, delta: float) -> dict | None:
    """Look for a point of much higher log posterior than all draws, at eps = delta / 10.

    Parameters
    ----------
    kmodel, corr, names
        The exact sampler's model (``samplers.exact.driver.build_model``).
    z : numpy.ndarray, shape (chains, draws, d)
        The chains' draws in the sampler's coordinates (z[..., 0] = log eps).
    delta : float
        The model's delta.

    Returns
    -------
    dict or None
        None when nothing was found; else ``{"log_post": value found, "log_post_draws": best
        value among the draws evaluated, "eps": eps of the point found, "z": its coordinates
        (list), "chains": the chains that missed it (list)}``. Only chains that never went
        below delta / 10 are compared with the point: chains split between the two modes (some
        at eps ~ 0, some above) are reported when the point beats those above.
    """
    from scipy.optimize import minimize

    from samplers.exact import chain as exact

    n_b = kmodel.b_grp.shape[0]
    n_c = 0 if corr is None else corr.P.shape[0]
    ll_b, ll_c = np.empty(n_b), np.empty(n_c)

    def log_post(zz) -> float:
        v = exact.log_posterior(np.asarray(zz, dtype=np.float64), kmodel, corr, ll_b, ll_c)
        return float(v) if math.isfinite(v) else -math.inf

    chains, n, d = z.shape
    e = 0.1 * delta
    n_bases = kmodel.b_mult.sum() + (0 if corr is None else corr.c_mult.sum())
    if n_bases < MIN_BASES or not delta > 0:
        return None  # too few bases; no diagonal mode without delta
    # the chains that never went down to eps ~ 0 (those that did found the mode themselves)
    high = np.flatnonzero(z[:, :, 0].min(axis=1) > math.log(e))
    if high.size == 0:
        return None
    idx = np.unique(np.linspace(0, n - 1, min(n, DRAWS_EVALUATED)).astype(np.int64))
    best_draw = max(log_post(z[c, i]) for c in high for i in idx)
    # start from the end of the first such chain, the strengths at 1/2
    z0 = z[high[0], -1].copy()
    for a, nm in enumerate(names):
        if nm != "eps" and nm[0] == "s":
            z0[a] = 0.0

    def neg(w):
        v = log_post(np.concatenate(([math.log(e)], w)))
        return -v if math.isfinite(v) else 1e300

    if d == 1:
        found, found_z = -neg(z0[1:]), np.array([math.log(e)])
    else:
        r = minimize(
            neg, z0[1:], method="Nelder-Mead", options={"maxfev": EVALS_PER_COORD * (d - 1)}
        )
        found, found_z = float(-r.fun), np.concatenate(([math.log(e)], r.x))
    if not found > best_draw + MARGIN:
        return None
    return {
        "log_post": found,
        "log_post_draws": best_draw,
        "eps": float(math.exp(found_z[0])),
        "z": [float(v) for v in found_z],
        "chains": [int(c) for c in high],
    }
