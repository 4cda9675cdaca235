"""Simulation-based calibration of the score-matrix models at the shape of a score matrix.

A score matrix of 64 models, each target IN for half of them, gives per target n = 32 decisions
under each hypothesis. Each replicate draws the truth from the model's prior (the default
``bdp.Prior()``: eps ~ HalfNormal(10), s ~ Beta(1, 1); for the exposure mixture pi ~ Beta(1, 1)
and kappa = 1e-15^u, u ~ Beta(1, 1)), one error pair per target from the model (exact draws,
``bayes_dp.core.simulate.sample_band``), binomial counts, and fits the same model with the exact
sampler (``bayes_dp.evaluation.calibration.sbc_replicate`` under ``run_sbc``). Models:

* ``binomial``: the band model of ``ScoreMatrixCounts.to_evidence()`` (the paper's region, both
  halves);
* ``as_made``: the binomial read as made (``Evidence(reflect=False)``: error points in the
  lower-left half of the band only);
* ``mixture``: the exposure mixture read as made (``likelihood="exposure_mixture"``,
  ``reflect=False``), ranking pi and kappa too.

For each model and T it prints replicates, seconds per replicate, the effective sample size of
the fits, and per variable the 90% coverage with its exact binomial 95% interval and the
rank-uniformity p-values (``SBCResult.uniformity``: chi-square on 10 bins, Kolmogorov-Smirnov).
Calibrated inference gives coverage 0.90 (binomial sd sqrt(0.09 / reps): 1.7 points at 300,
3 points at 100) and uniform ranks.

Run: ``python benchmarks/sbc_score_matrix.py --model binomial --targets 100 --reps 300
[--draws 1000 --tune 500 --thin 10 --seed 32 --jobs 1 --json out.json]``
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import numpy as np

import bayes_dp as bdp
from bayes_dp.evaluation.calibration import run_sbc, sbc_replicate

#: decisions per hypothesis and target: 64 models, each target IN for half of them
N = 32
DELTA = 1e-5
MODELS = {
    "binomial": {"likelihood": "binomial", "reflect": True},
    "as_made": {"likelihood": "binomial", "reflect": False},
    "mixture": {"likelihood": "exposure_mixture", "reflect": False},
}


def timed_replicate(rng, **kwargs):
    """``sbc_replicate`` with the seconds it took and its ESS and r_hat (the third element)."""
    t0 = time.perf_counter()
    truth, post = sbc_replicate(rng, **kwargs)
    seconds = time.perf_counter() - t0
    summ = post.summary()
    names = [v for v in truth if v in summ.index]
    stats = {"seconds": seconds}
    for v in names:
        stats[f"ess_{v}"] = float(min(summ.loc[v, "ess_bulk"], summ.loc[v, "ess_tail"]))
        stats[f"rhat_{v}"] = float(summ.loc[v, "r_hat"])
    return truth, post, stats


def sbc(
    model: str = "binomial",
    targets: int = 100,
    reps: int = 300,
    *,
    draws: int = 1000,
    tune: int = 500,
    chains: int = 2,
    thin: int = 10,
    seed: int = 32,
    n_jobs: int = 1,
) -> bdp.calibration.SBCResult:
    """SBC of ``model`` on ``targets`` targets of n = 32 decisions per hypothesis each."""
    replicate = functools.partial(
        timed_replicate,
        prior=bdp.Prior(),
        delta=DELTA,
        n_neg=[N] * targets,
        n_pos=[N] * targets,
        chains=chains,
        draws=draws,
        tune=tune,
        log_likelihood=False,
        **MODELS[model],
    )
    return run_sbc(replicate, reps, seed=seed, n_jobs=n_jobs, level=0.9, thin=thin)


def table(out, model: str, targets: int) -> list[dict]:
    """One row per variable: coverage, its 95% interval, the uniformity p-values, the ESS."""
    rows = []
    sec = out.stats["seconds"]
    for v in out.names:
        lo, hi = out.coverage.ci(v)
        ess = out.stats[f"ess_{v}"]
        rows.append(
            {
                "model": model,
                "targets": targets,
                "var": v,
                "reps": out.n_reps,
                "s_per_rep": float(np.median(sec)),
                "coverage": out.coverage.rate(v),
                "ci": [lo, hi],
                "below": out.coverage.below(v),
                "above": out.coverage.above(v),
                "chi2_p": out.uniformity(v),
                "ks_p": out.uniformity(v, method="ks"),
                "ranked": int(np.median(out.n_ranked[v])),
                "ess_median": float(np.median(ess)),
                "ess_min": float(np.min(ess)),
                "ess_below_ranked": int(np.sum(ess < out.n_ranked[v])),
                "rhat_max": float(np.max(out.stats[f"rhat_{v}"])),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="binomial", choices=list(MODELS))
    ap.add_argument("--targets", type=int, default=100)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--draws", type=int, default=1000, help="draws per chain (2 chains)")
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--thin", type=int, default=10, help="rank among every thin-th draw")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--jobs", type=int, default=1, help="parallel replicates (default 1)")
    ap.add_argument("--json", default=None, help="write the rows and the ranks here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = sbc(
        args.model,
        args.targets,
        args.reps,
        draws=args.draws,
        tune=args.tune,
        thin=args.thin,
        seed=args.seed,
        n_jobs=args.jobs,
    )
    rows = table(out, args.model, args.targets)
    print(
        f"{args.model}, T = {args.targets} targets x n = {N}: {out.n_reps} replicates in "
        f"{time.perf_counter() - t0:.0f} s (median {rows[0]['s_per_rep']:.1f} s a replicate), "
        f"2 x {args.draws} draws after {args.tune}, ranks among every {args.thin}th draw; "
        f"nominal 0.90 (binomial sd {np.sqrt(0.09 / out.n_reps):.3f})"
    )
    for r in rows:
        print(
            f"  {r['var']:<8} coverage {r['coverage']:.3f} (95% CI {r['ci'][0]:.3f}-"
            f"{r['ci'][1]:.3f}; below {r['below']:.3f}, above {r['above']:.3f})  "
            f"chi2 p = {r['chi2_p']:.3g}, KS p = {r['ks_p']:.3g}  ESS median {r['ess_median']:.0f}"
            f", min {r['ess_min']:.0f} ({r['ess_below_ranked']} below the {r['ranked']} ranked); "
            f"max r_hat {r['rhat_max']:.3f}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "args": vars(args),
                    "rows": rows,
                    "ranks": {v: out.ranks[v].tolist() for v in out.names},
                    "n_ranked": {v: out.n_ranked[v].tolist() for v in out.names},
                    "stats": {k: v.tolist() for k, v in out.stats.items()},
                    "truth": {v: out.coverage.target[v].tolist() for v in out.names},
                },
                f,
            )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
