"""The claim's bounds when a target's decision depends on the other targets' memberships.

The pooled bound assumes it does not (``docs/validation/pooled_bound.md``,
"The repair, part 1"); trained models break that assumption (a model's scores follow its whole
training set). Per configuration (coupling, strength ``g``, models, targets;
``benchmarks/_support/pooled_coupling.py``: Laplace score channels of shift ``mu`` = 1 coupled
to the other targets' memberships, the total eps exactly known), over ``--audits`` score
matrices counted as ``bayes-dp`` counts them:

* ``chan``: the channel's eps (every target's own score: the reference the pooled point stays
  inside when the assumption holds); ``total``: the mechanism's eps (at delta = 0, an upper
  bound), the truth a false accusation is judged against;
* ``claim>total``: audits whose claim (``score_matrix_bound``: the per-target bound on
  effective counts or a pooled bound, the larger) lies above the total eps, with its exact 95%
  CI; ``claim>chan``, ``pooled>chan``: the same against the channel's eps;
* ``rej all`` / ``rej sel``: audits where the test of either lower constraint of R rejects the
  channel's eps at error 0.025 each (the pooled bound's guarantee, checked where it is sharp;
  nominal at most 5%), over all targets and over the most exposed ones, with the CI;
* ``pt all`` / ``pt sel``: the median eps of the mean per-model rates (no interval) over the
  channel's eps: above 1 in the median is a bias the bound's slack would have to absorb;
  ``excess``: the largest such eps over all audits (either pool) minus the channel's, over
  the total minus the channel's (what the coupling itself costs): 1 would reach the total;
* ``fixed rej``: audits where the prototype with fixed denominators
  (``pooled_coupling.fixed_rates``) rejects the channel's eps (either pool, either
  constraint, 0.025 each); ``fixed/pooled``: its bound's median over the claim's pooled
  bound's median (the larger pool each, at the claim's share of the error): its power.

Run (about 33 minutes on 2 cores)::

    python benchmarks/pooled_coupling.py --audits 200

Every audit's generator is ``SeedSequence(seed, spawn_key=(row, audit))``: a row reproduces
alone (``--rows``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.pooled_coupling import audit, channel_eps, total_eps  # noqa: E402

DELTA = 1e-5


def grid() -> list[dict]:
    """The configurations: each coupling in both directions, and a control without coupling."""
    rows = []
    sizes = ((64, 64), (256, 64), (1024, 64), (64, 1000), (256, 1000))
    for coupling, gs in (
        ("pairs", (0.0, -1.0, 1.0)),
        ("size", (-2.0, -1.0, 1.0)),
        ("block", (-0.5, 0.5)),
        ("canaries", (0.0, -0.5, 0.5)),
    ):
        for g in gs:
            for models, targets in sizes:
                rows.append(
                    {
                        "coupling": coupling,
                        "g": g,
                        "mu": 1.0,
                        "models": models,
                        "targets": targets,
                        "alpha": 0.1,
                    }
                )
    # the adversary's case: the model releases its training-set size with Laplace noise at
    # eps_s a record, and the scores follow it; the own channel fixed at 1 (mu offsets the
    # record's own share of the size); few targets (the kept counts vary most), 1,024 models
    for targets in (8, 16, 64):
        for eps_s in (0.25, 0.5, 1.0, 2.0):
            for g in (-0.5, -1.0):
                rows.append(
                    {
                        "coupling": "noisy_size",
                        "g": g,
                        "eps_s": eps_s,
                        "mu": 1.0 - g / (targets**0.5 / 2),
                        "models": 1024,
                        "targets": targets,
                        "alpha": 0.1,
                    }
                )
    return rows


def _ci(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return float(ci.low), float(ci.high)


def _one(cfg, seed, row, j):
    return audit(
        cfg, np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(row, j))), DELTA
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--audits", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=int, nargs="*", help="row numbers of the grid (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the per-row figures here")
    a = ap.parse_args(argv)
    if a.audits < 1:
        raise SystemExit(f"--audits must be >= 1; found {a.audits}")
    rows = grid()
    which = range(len(rows)) if not a.rows else a.rows
    print(
        "| row | coupling | g | eps_s | models | targets | chan | total | audits | claim>total "
        "(95% CI) | claim>chan | pooled>chan | rej all (95% CI) | rej sel (95% CI) | pt all | "
        "pt sel | excess | fixed rej | fixed/pooled | s |"
    )
    print("|" + " --- |" * 20)
    out = []
    for i in which:
        cfg = rows[i]
        t0 = time.perf_counter()
        res = Parallel(n_jobs=a.jobs)(delayed(_one)(cfg, a.seed, i, j) for j in range(a.audits))
        sec = time.perf_counter() - t0
        chan, tot, n = channel_eps(cfg, DELTA), total_eps(cfg), len(res)
        k_tot = sum(r["lower"] > tot for r in res)
        k_chan = sum(r["lower"] > chan for r in res)
        k_pool = sum((r["pooled"] or 0.0) > chan for r in res)
        rej_a = [r["all_rej"] for r in res if "all_rej" in r]
        rej_s = [r["selected_rej"] for r in res if "selected_rej" in r]
        pt_a = np.median([r["all_point"] / chan for r in res if "all_point" in r])
        pt_s = [r["selected_point"] / chan for r in res if "selected_point" in r]
        pt_s = float(np.median(pt_s)) if pt_s else float("nan")
        ca, cs = _ci(sum(rej_a), len(rej_a)), _ci(sum(rej_s), len(rej_s))
        ct = _ci(k_tot, n)
        # the largest excess of the mean rates' eps over the channel's, as a share of the
        # coupling's own cost (total - channel): 1 would reach the total eps
        pts = [max(r.get("all_point", 0.0), r.get("selected_point", 0.0)) for r in res]
        # (no coupling: the total is the channel's to rounding, and there is no such share)
        excess = (max(pts) - chan) / (tot - chan) if tot - chan > 1e-3 else float("nan")
        ex = "n/a" if np.isnan(excess) else f"{excess:.3f}"
        fixed_rej = sum(
            r.get("fixed_all_rej", False) or r.get("fixed_selected_rej", False) for r in res
        )
        pooled = [r["pooled"] for r in res if r["pooled"]]
        fixed = [
            max(r.get("fixed_all_eps", 0.0), r.get("fixed_selected_eps", 0.0))
            for r in res
            if r["pooled"]
        ]
        ratio = float(np.median(fixed) / np.median(pooled)) if pooled else float("nan")
        print(
            f"| {i} | {cfg['coupling']} | {cfg['g']:g} | {cfg.get('eps_s', '')} | "
            f"{cfg['models']} | {cfg['targets']} | "
            f"{chan:.3f} | {tot:.3f} | {n} | {k_tot} ({ct[0]:.3f}, {ct[1]:.3f}) | {k_chan} | "
            f"{k_pool} | {sum(rej_a)}/{len(rej_a)} ({ca[0]:.3f}, {ca[1]:.3f}) | "
            f"{sum(rej_s)}/{len(rej_s)} ({cs[0]:.3f}, {cs[1]:.3f}) | {pt_a:.3f} | {pt_s:.3f} | "
            f"{ex} | {fixed_rej} | {ratio:.3f} | {sec:.0f} |",
            flush=True,
        )
        out.append(
            {
                "row": i,
                **cfg,
                "channel_eps": chan,
                "total_eps": tot,
                "audits": n,
                "claim_above_total": k_tot,
                "claim_above_channel": k_chan,
                "pooled_above_channel": k_pool,
                "rejects_all": [int(sum(rej_a)), len(rej_a)],
                "rejects_selected": [int(sum(rej_s)), len(rej_s)],
                "point_all": float(pt_a),
                "point_selected": pt_s,
                "excess": excess,
                "fixed_rejects": int(fixed_rej),
                "fixed_over_pooled": ratio,
                "seconds": sec,
            }
        )
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
