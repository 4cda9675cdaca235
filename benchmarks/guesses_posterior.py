"""Cost of one-run audits (likelihood "guesses") in the exact sampler's posterior.

Times ``estimate_epsilon`` (default exact sampler, 4 chains, the automatic length: until r_hat
<= 1.01 and bulk and tail ESS >= 4,000) on

1. one guesses row (an audit of k = 1,000 guesses of pairs of models, 930 right);
2. 1,000 challenge bases of 32 + 32 trials drawn from the model (eps = 2, s = 0.5), alone;
3. the same 1,000 bases and the guesses row beside them (eps shared, the row's own strength);

and prints seconds, draws per chain, the smallest ESS and microseconds per evaluation of the
guesses row's likelihood (k = 1,000 and k = 50,000). The kernels are compiled first (not
timed). The row adds one likelihood evaluation (a few microseconds) to each evaluation of the
posterior, beside the bases' thousands.

Run: ``python benchmarks/guesses_posterior.py [--seed S] [--cores C]``. Timings depend on the
machine and on what else it runs; compare the lines of one run.
"""

from __future__ import annotations

import argparse
import math
import time
import timeit
import warnings

import numpy as np

import bayes_dp as bdp
from bayes_dp.results import arviz_adapter


def _bases(seed: int) -> bdp.AttackCounts:
    from bayes_dp.core.simulate import simulate_counts

    return simulate_counts(2.0, 0.5, 1e-5, np.full(1000, 32), np.full(1000, 32), seed=seed)[0]


def _run(counts, seed: int, cores):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        post = bdp.estimate_epsilon(
            counts, delta=1e-5, seed=seed, cores=cores, progress=False, log_likelihood=False
        )
        sec = time.perf_counter() - t0
    ess = min(
        min(arviz_adapter.ess(post.draws(v), "bulk"), arviz_adapter.ess(post.draws(v), "tail"))
        for v in post.var_names
    )
    return sec, post, ess


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cores", type=int, default=None)
    a = ap.parse_args()

    row = bdp.OneRunCounts(m=2000, r=1000, v=930, pairs=True)
    bases = _bases(a.seed)
    # compile (not timed)
    bdp.estimate_epsilon(
        [bdp.Evidence(bases[:8], name="b"), bdp.Evidence(row, name="g", strength="own")],
        delta=1e-5,
        draws=50,
        tune=50,
        seed=0,
        check=False,
        progress=False,
    )
    from samplers.model.guesses import log_lik_row

    for k, v in ((1000, 930), (50_000, 46_500)):
        lc = math.lgamma(k + 1) - math.lgamma(v + 1) - math.lgamma(k - v + 1)
        n = 20_000
        us = timeit.timeit(
            lambda k=k, v=v, lc=lc: log_lik_row(float(k), float(v), 2.0, lc, 7.0, 1.5, 0.6),
            number=n,
        )
        print(f"likelihood of one guesses row, k = {k}: {us / n * 1e6:.2f} us per evaluation")
    cases = [
        ("one guesses row (k = 1,000 pairs)", row),
        ("1,000 bases", bases),
        (
            "1,000 bases + one guesses row",
            [
                bdp.Evidence(bases, name="bases"),
                bdp.Evidence(row, name="game", strength="own"),
            ],
        ),
    ]
    for name, counts in cases:
        sec, post, ess = _run(counts, a.seed, a.cores)
        lo, hi = post.interval(0.9)
        print(
            f"{name}: {sec:.1f} s, {post.n_draws} draws/chain, smallest ESS {ess:.0f}, "
            f"converged {post.converged}, eps 90% interval [{lo:.3g}, {hi:.3g}]"
        )


if __name__ == "__main__":
    main()
