"""Padding: does adding targets that show nothing move the lower end of eps (issue 32)?

A simulated score matrix (64 models, balanced halves, online test at alpha 0.1): ``--exposed``
targets with effect sizes mu ~ Uniform(2, 4) (scores N(0, 1) OUT, N(mu, 1) IN), then ``--pad``
targets with mu = 0 (they show nothing) added to them. The online test of a target uses only
that target's scores, so the exposed targets' counts are the same in every row. Each row is a
default run of ``bayes_dp.estimate_epsilon`` on ``to_evidence(likelihood=...)`` (default: the
exposure mixture, ``to_evidence()``'s default) and reports the 5/50/95% quantiles of eps, the
5% quantile's ratio to the exposed-only row, whether the run converged (and why it stopped),
the largest r_hat, the smallest ESS and P(eps < 0.01) among the draws. ``--grid`` also prints
the quadrature posterior of the same model (``tests.reference.mixture``; minutes per row).

    python benchmarks/lira_padding.py                         # 15 exposed, + 300 / 1,000
    python benchmarks/lira_padding.py --pad 300 1000 10000 --likelihood binomial
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.lira_sim import padded_run as run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exposed", type=int, default=15)
    ap.add_argument("--pad", type=int, nargs="+", default=[300, 1000])
    ap.add_argument("--likelihood", default="exposure_mixture")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grid", action="store_true", help="also the quadrature posterior")
    ap.add_argument(
        "--as-made", action="store_true", help="Evidence(reflect=False): decisions as made"
    )
    args = ap.parse_args()
    print(f"{args.exposed} exposed targets, likelihood {args.likelihood}, seed {args.seed}")
    print(
        "| added | eps 5% | 50% | 95% | 5% / exposed-only | converged (stop) | max r_hat | "
        "min ESS | P(eps < 0.01) | s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    base = None
    for n_pad in [0, *args.pad]:
        r = run(args.exposed, n_pad, args.seed, args.likelihood, reflect=not args.as_made)
        base = r["q"][0] if base is None else base
        print(
            f"| {n_pad:,} | {r['q'][0]:.3f} | {r['q'][1]:.3f} | {r['q'][2]:.3f} | "
            f"{r['q'][0] / base:.3f} | {r['converged']} ({r['stop']}) | {r['r_hat']:.4f} | "
            f"{r['ess']:.0f} | {r['p_small']:.3g} | {r['seconds']:.0f} |",
            flush=True,
        )
        if args.grid:
            from benchmarks._support.lira_sim import padded_counts
            from tests.reference.mixture import mixture_posterior_grid

            c = padded_counts(args.exposed, n_pad, args.seed).counts
            rows = np.stack([c.fp, c.n_neg, c.fn, c.n_pos], 1)
            g = mixture_posterior_grid(rows, 1e-5)
            print(
                f"|   quadrature | {g['quantile'](0.05):.3f} | {g['quantile'](0.5):.3f} | "
                f"{g['quantile'](0.95):.3f} | | | | | | |",
                flush=True,
            )


if __name__ == "__main__":
    main()
