"""How the score-matrix binomial's 90% interval moves as the FN counts are deflated.

Laplace mechanism (Laplace(0, 1) OUT, Laplace(mu, 1) IN, eps = mu exactly at delta -> 0), 64
models x 64 targets with balanced halves, online test at alpha 0.1, delta 1e-5. Every matrix's
counts go to the binomial after deflating the FN side by each factor of ``--factors``
(:func:`mia.effective_counts` with the FN design effect set to the factor; 1 = raw FN counts,
about 2.6 = the estimated design effect) and the FP side by its own estimated design effect
(floored at 1). Prints, per factor, how many intervals lie entirely above the truth and the
median lower end, upper end and width (``docs/validation/lira.md``, "Effective counts against false
accusations").

    python benchmarks/lira_deflation_trend.py --audits 12
"""

from __future__ import annotations

import argparse
import dataclasses
import warnings

import numpy as np

import bayes_dp as bdp
from mia.dependence import effective_counts
from mia.scores import counts_from_score_matrix, simulate_score_matrix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--audits", type=int, default=12)
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--factors", type=float, nargs="+", default=[1.0, 2.6, 6.0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    truth = args.mu + 2.0 * np.log1p(-1e-5)
    out = {f: [] for f in args.factors}
    for rng in np.random.default_rng(args.seed).spawn(args.audits):
        scores, keep = simulate_score_matrix(64, 64, args.mu, seed=rng)
        scores = rng.laplace(0.0, 1.0, keep.shape) + args.mu * keep
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = counts_from_score_matrix(scores, keep, 0.1, "online")
        seed = int(rng.integers(2**31))
        for f in args.factors:
            dep = dataclasses.replace(res.dependence, fn_within=f, fn_between=0.0)
            ev = bdp.Evidence(effective_counts(res.counts, dep), likelihood="binomial", name="lira")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                post = bdp.estimate_epsilon(
                    ev, delta=1e-5, chains=2, draws=1000, tune=500, seed=seed, cores=1, check=False
                )
            out[f].append(post.interval(0.9, "eps"))
    print(f"Laplace mu = {args.mu}, true eps {truth:.3f}, {args.audits} matrices, seed {args.seed}")
    print("| FN deflation | above truth | median lower | median upper | median width |")
    print("| --- | --- | --- | --- | --- |")
    for f in args.factors:
        a = np.array(out[f])
        print(
            f"| {f:g} | {(a[:, 0] > truth).sum()} / {len(a)} | {np.median(a[:, 0]):.3f} | "
            f"{np.median(a[:, 1]):.3f} | {np.median(a[:, 1] - a[:, 0]):.3f} |"
        )


if __name__ == "__main__":
    main()
