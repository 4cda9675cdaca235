"""How the exact sampler mixes on simulated LiRA counts (issue 23, items 1-2).

Simulates a LiRA run (``benchmarks/_support/lira_sim.py``: Gaussian scores, every target IN for a
random half of the models, per-target effect sizes mostly tiny, a few large), turns it
into cross-fed counts with ``mia.counts_from_score_matrix`` (alpha = 0.05), and runs
``bayes_dp.estimate_epsilon`` at its defaults (seed 0, delta 1e-5, no pointwise
log-likelihood). Prints the number of distinct count rows, the seconds, the draws per chain,
convergence and the summary. Run it twice: the first run of a changed kernel includes numba's
compilation.

Run: ``python benchmarks/lira_mixing.py --models 64 --targets 10000 --likelihood binomial``
(``--likelihood bivariate_normal`` was the default of ``res.to_evidence()`` before it became
the binomial; ``docs/validation/lira.md``, "Which likelihood for a score matrix").

``--modes`` (bivariate normal, tau and rho free) instead maximises the exact log posterior in
z = (log eps, logit s, logit tau, atanh(rho / rho_max)) from two starts, one near eps ~ 3 and
one near eps ~ 0 (Nelder-Mead), and prints each maximum, its point and the log of a Laplace
approximation of its mass (docs/validation/correlated.md, *At LiRA scale*).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

import bayes_dp as bdp  # noqa: E402

from benchmarks._support.lira_sim import lira_counts, one_group_model  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", type=int, default=64)
    p.add_argument("--targets", type=int, default=1000)
    p.add_argument("--likelihood", default="bivariate_normal")
    p.add_argument("--max-time", type=float, default=300.0)
    p.add_argument("--seed", type=int, default=1, help="seed of the simulated scores")
    p.add_argument("--modes", action="store_true", help="locate the posterior's modes instead")
    a = p.parse_args(argv)
    if a.models < 6 or a.targets < 1:
        p.error(f"need at least 6 models and 1 target; found {a.models} and {a.targets}")
    res = lira_counts(a.models, a.targets, a.seed)
    c = res.counts
    rows = np.stack([c.fp, c.n_neg, c.fn, c.n_pos], axis=1)
    print(
        f"{a.models} models x {a.targets} targets, {a.likelihood}: "
        f"{len(np.unique(rows, axis=0))} distinct count rows"
    )
    if a.modes:
        return modes(c)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        post = bdp.estimate_epsilon(
            res.to_evidence(likelihood=a.likelihood),
            delta=1e-5,
            seed=0,
            max_time=a.max_time,
            log_likelihood=False,
        )
    seconds = time.perf_counter() - t0
    print(f"seconds {seconds:.1f}; draws per chain {post.n_draws}; converged {post.converged}")
    for w in caught:
        print(f"warning: {str(w.message).splitlines()[0]}")
    print(post.summary().to_string())
    return 0


def modes(c) -> int:
    """Maximise the bivariate-normal log posterior (tau, rho free) from two starts."""
    from scipy.optimize import minimize

    from samplers.exact import chain as exact
    from samplers.model.codes import LIK_BIVARIATE_NORMAL

    model, corr, _, _ = one_group_model(c, LIK_BIVARIATE_NORMAL, free=True)
    ll_b, ll_c = np.empty(0), np.empty(corr.P.shape[0])

    def neg(z):
        v = exact.log_posterior(np.asarray(z, dtype=float), model, corr, ll_b, ll_c)
        return -v if np.isfinite(v) else 1e10

    def expit(x):
        return 1.0 / (1.0 + np.exp(-x))

    for z0 in ([1.5, -5.5, -4.6, -1.5], [np.log(1e-4), -0.85, -2.0, 0.5]):
        r = minimize(neg, z0, method="Nelder-Mead", options={"maxfev": 600, "xatol": 1e-3})
        x, h, d = r.x, 1e-3, len(z0)
        H = np.empty((d, d))
        for i in range(d):
            for j in range(d):
                ei, ej = np.eye(d)[i] * h, np.eye(d)[j] * h
                H[i, j] = (
                    neg(x + ei + ej) - neg(x + ei - ej) - neg(x - ei + ej) + neg(x - ei - ej)
                ) / (4 * h * h)
        w = np.linalg.eigvalsh(H)
        mass = -r.fun - 0.5 * np.log(w).sum() if (w > 0).all() else float("nan")
        print(
            f"from z {np.round(z0, 2)}: max log posterior {-r.fun:.2f} at eps {np.exp(x[0]):.3g}, "
            f"s {expit(x[1]):.3g}, tau {expit(x[2]):.3g}, rho/rho_max {np.tanh(x[3]):.3f}; "
            f"log Laplace mass {mass:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
