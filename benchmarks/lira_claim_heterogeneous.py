"""Heterogeneous exposure at scale: is the claim ever above the strongest target's own eps?

A simulated score matrix (``--models`` models, balanced halves; ``mia.simulate_score_matrix``:
scores N(0, 1) OUT and N(mu_t, 1) IN) whose targets' shifts mu_t are log-normal,
exp(N(log ``--median``, ``--sigma``^2)), so that they spread over orders of magnitude. Target t
alone is a Gaussian mechanism of sensitivity mu_t; its eps(delta) is
``mia.canary.gaussian_mechanism_epsilon(1, delta, sensitivity=mu_t)`` (the GDP conversion), and
no target's membership is more exposed than the strongest one's. Counted by the online test at
alpha 0.1 (``mia.counts_from_score_matrix``), the default evidence (``to_evidence()``: binomial
on raw counts) sampled with ``--chains`` x ``--draws`` after ``--tune`` (default: 4 chains of
the sampler's own length, as ``bdp.estimate_epsilon`` runs by default; one core), and
``bdp.audit_claim(post, 0.95)`` read: its lower end, its frequentist part, the posterior's 5%
and 95% quantiles, the strongest target's eps, ``claim.upper_source``, why the sampler stopped
and whether it sampled again from a mode at eps ~ 0 its first chains missed
(``settings["mode_restart"]``), and the sentence about the upper end (printed in full below the
table).

    python benchmarks/lira_claim_heterogeneous.py --targets 1000 10000 50000
    python benchmarks/lira_claim_heterogeneous.py --models 256 --median 0.03 --sigma 1 \
        --targets 1000 10000
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import bayes_dp as bdp
import mia
from mia.canary import gaussian_mechanism_epsilon

DELTA = 1e-5


def run(n_models, n_targets, median, sigma, seed, chains, draws, tune):
    """One audit; returns the figures of a row and the claim."""
    rng = np.random.default_rng(seed)
    mu = np.exp(rng.normal(np.log(median), sigma, n_targets))
    scores, keep = mia.simulate_score_matrix(n_models, n_targets, mu, seed=rng)
    res = mia.counts_from_score_matrix(scores, keep, 0.1)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = bdp.estimate_epsilon(
            res.to_evidence(),
            delta=DELTA,
            chains=chains,
            draws=draws,
            tune=tune,
            seed=rng,
            progress=False,
            cores=1,
        )
        claim = bdp.audit_claim(post, 0.95)
    strongest = float(gaussian_mechanism_epsilon(1.0, DELTA, sensitivity=float(mu.max())))
    return {
        "mu": np.quantile(mu, [0.5, 0.99]).tolist() + [float(mu.max())],
        "strongest": strongest,
        "claim": claim,
        "seconds": time.perf_counter() - t0,
        "r_hat": max(d["r_hat"] for d in post.diagnostics().values()),
        "stop": post.settings.get("stop_reason"),
        "restart": post.settings.get("mode_restart"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=64)
    ap.add_argument("--targets", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--median", type=float, default=0.1, help="median shift mu_t")
    ap.add_argument("--sigma", type=float, default=1.5, help="sd of log mu_t")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=None, help="default: the sampler's own length")
    ap.add_argument("--tune", type=int, default=None)
    args = ap.parse_args()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average "
        f"{os.getloadavg()[0]:.2f} at the start; {args.models} models, mu_t log-normal (median "
        f"{args.median}, sd of log {args.sigma}), binomial on raw counts, {args.chains} x "
        f"{args.draws} draws after {args.tune}"
    )
    print(
        "| targets | seed | mu_t median / 99% / max | strongest target's eps | claim | "
        "frequentist | posterior 5% | posterior 95% | claim <= strongest | upper_source | "
        "max r_hat | stop (sampled again from eps ~ 0) | s |"
    )
    print("|" + " --- |" * 13)
    sentences = []
    for n_targets in args.targets:
        for seed in args.seeds:
            r = run(
                args.models,
                n_targets,
                args.median,
                args.sigma,
                seed,
                args.chains,
                args.draws,
                args.tune,
            )
            c = r["claim"]
            m = r["mu"]
            print(
                f"| {n_targets:,} | {seed} | {m[0]:.3g} / {m[1]:.3g} / {m[2]:.3g} | "
                f"{r['strongest']:.3g} | {c.lower:.3f} | {c.frequentist_lower:.3f} | "
                f"{c.posterior_lower:.3f} | {c.upper:.3f} | {c.lower <= r['strongest']} | "
                f"{c.upper_source} | {r['r_hat']:.3f} | {r['stop']} "
                f"({'yes' if r['restart'] else 'no'}) | {r['seconds']:.0f} |",
                flush=True,
            )
            sentences.append((n_targets, seed, c.sentence))
    for n_targets, seed, s in sentences:
        print(f"\n{n_targets:,} targets, seed {seed}:\n{s}")


if __name__ == "__main__":
    main()
