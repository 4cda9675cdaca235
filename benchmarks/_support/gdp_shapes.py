"""Score mechanisms with known eps, and one audit of each by the whole-ROC posterior's claim.

Shared by ``benchmarks/gdp_shapes.py`` (the table of docs/validation/gdp.md section 9) and the slow
tests
of ``tests/bayes_dp/gdp/test_gdp_shapes.py``. Each mechanism draws in-scores (members) and
out-scores (non-members); its true eps at delta comes from the pair's privacy-loss distribution
(``tests.reference.privacy_loss``), or from the closed forms of the Gaussian and Laplace pairs.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy import stats

from tests.reference.privacy_loss import laplace_epsilon, mixture_logpdf, pair_epsilon

#: name -> (kind, parameter(s))
MECHANISMS = {
    "gauss_0.5": ("gauss", 0.5),
    "gauss_1": ("gauss", 1.0),
    "gauss_2": ("gauss", 2.0),
    "laplace_0.5": ("laplace", 0.5),
    "laplace_1": ("laplace", 1.0),
    "laplace_3": ("laplace", 3.0),
    "t3_2": ("t3", 2.0),
    "mix_10%_4": ("mix", (0.1, 4.0)),
    "mix_2%_6": ("mix", (0.02, 6.0)),
    "mix_0.5%_6": ("mix", (0.005, 6.0)),
}


def draw(name: str, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Return (in_scores, out_scores), ``n`` of each, of mechanism ``name``."""
    kind, par = MECHANISMS[name]
    if kind == "gauss":
        return rng.normal(par, 1.0, n), rng.normal(0.0, 1.0, n)
    if kind == "laplace":
        return rng.laplace(par, 1.0, n), rng.laplace(0.0, 1.0, n)
    if kind == "t3":
        return (
            stats.t.rvs(3, loc=par, size=n, random_state=rng),
            stats.t.rvs(3, size=n, random_state=rng),
        )
    w, shift = par
    exposed = rng.random(n) < w
    return np.where(exposed, rng.normal(shift, 1.0, n), rng.normal(0.0, 1.0, n)), rng.normal(
        0.0, 1.0, n
    )


@functools.cache
def true_epsilon(name: str, delta: float) -> float:
    """The mechanism's eps at ``delta`` (closed forms; the privacy-loss distribution else)."""
    import bayes_dp as bdp

    kind, par = MECHANISMS[name]
    if kind == "gauss":
        return float(bdp.gdp_epsilon(par, delta))
    if kind == "laplace":
        return laplace_epsilon(par, delta)
    if kind == "t3":
        return pair_epsilon(
            lambda x: stats.t.logpdf(x, 3, loc=par),
            lambda x: stats.t.logpdf(x, 3),
            delta,
            -1e4,
            1e4,
        )
    return pair_epsilon(mixture_logpdf(*par), stats.norm.logpdf, delta, -40.0, 40.0)


def audit(name: str, n: int, seed: int, delta: float = 1e-5, prob: float = 0.95) -> dict:
    """One audit of mechanism ``name`` with ``estimate_gdp``'s defaults; what its claim says."""
    import bayes_dp as bdp

    rng = np.random.default_rng(seed)
    x_in, x_out = draw(name, n, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(x_in, x_out, delta=delta, seed=seed, draws=1000)
    claim = bdp.audit_claim(post, prob)
    truth = true_epsilon(name, delta)
    lo, hi = post.interval(2 * prob - 1, "eps")
    # the best single threshold picked on the data, no correction (flattering)
    rec = post.settings["shape_free"]
    picked = max(
        float(np.interp(np.log(1 - prob), np.log(rec["levels"]), r["quantiles"]))
        for r in rec["thresholds"]
    )
    return {
        "mechanism": name,
        "n": n,
        "seed": seed,
        "truth": truth,
        "gdp_lower": lo,
        "gdp_upper": hi,
        "gdp_covers": bool(lo <= truth <= hi),
        "gdp_lower_above": bool(lo > truth),
        "fit_p": float(post.settings["fit_check"]["gdp"]),
        "shape": claim.gaussian_shape,
        "claim_lower": claim.lower,
        "claim_above": bool(claim.lower > truth),
        "shape_free": claim.shape_free_lower,
        "picked_single": picked,
        "sentence_flags": claim.sentence.startswith("THE GAUSSIAN SHAPE DOES NOT FIT"),
    }
