"""The cost and accuracy of one evaluation of the correlated (eq. 7) log likelihood (issue 23).

Three parts (docs/validation/correlated.md, "One evaluation at LiRA scale"):

``profile``
    Simulated LiRA score matrices (``bench_lira_scale.simulate``) -> counts -> the exact
    sampler's model with ``likelihood="bivariate_normal"``; times
    ``samplers.exact.posterior._corr_log_lik`` (all distinct rows of the group) at a few points
    of (eps, s, tau, rho), with the shared Jacobian tables and without them (every row
    computing the Jacobian at each node, as before), alternating the two in one process so
    that the machine's load affects both alike. CPU time of this process.
``grid``
    The band integral with tables against the one without, row by row, over a grid of sizes,
    counts, tau, rho, eps, s and delta: the worst absolute difference in log.
``posterior``
    A few hundred simulated LiRA targets (``benchmarks/_support/lira_sim.py``) with tau and rho
    fixed, delta = 0: the 5/25/50/75/95% quantiles of eps and s of a default run against the
    quadrature reference ``tests.reference.posterior_grid_groups`` (the reference's grid
    cannot place zero or full counts, so the targets with one are left out). Slow: the
    reference takes minutes.

    python benchmarks/bench_corr_eval.py profile --sizes 64x1000 64x10000
    python benchmarks/bench_corr_eval.py grid
    python benchmarks/bench_corr_eval.py posterior --targets 300
    python benchmarks/bench_corr_eval.py posterior --targets 300 --sampler-seed 5
    python benchmarks/bench_corr_eval.py posterior --targets 300 --draws 20000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: (eps, s, tau, rho / rho_max) of the profile: LiRA-like and far-off points.
POINTS = (
    (4.0, 0.01, 0.02, -0.8),
    (0.5, 0.5, 0.04, 0.86),
    (2.0, 0.3, 0.1, 0.0),
    (1.0, 0.2, 0.3, 0.5),
)


#: (eps, s, delta) of the grid.
BANDS = ((0.05, 0.5, 1e-5), (1.0, 0.2, 1e-5), (4.0, 0.01, 0.0), (2.0, 0.9, 0.05))


def _lira_model(size: str, halves: str):
    from bench_lira_scale import simulate

    import bayes_dp as bdp
    import mia
    from bayes_dp.inference.model import Model
    from bayes_dp.inference.runners import kernel_model

    m, t = (int(v) for v in size.split("x"))
    scores, keep, _ = simulate(m, t, halves, 0)
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    ev = res.to_evidence(name="lira", likelihood="bivariate_normal")
    km, corr, _, _ = kernel_model(Model.build(ev, delta=1e-5, prior=bdp.Prior()))
    return km, corr


def profile(sizes, halves, reps):
    from samplers.exact.posterior import _corr_log_lik

    print(f"{'size':>9} {'halves':>11} {'rows':>5} {'tables':>6} {'point':>22} "
          f"{'no tables ms':>12} {'tables ms':>9} {'ratio':>6} {'max |d ll|':>10}")  # fmt: skip
    for size in sizes:
        for h in halves:
            km, corr = _lira_model(size, h)
            off = corr._replace(c_kx=corr.c_kx * 0 - 1, c_ky=corr.c_ky * 0 - 1)
            n = corr.c_grp.size
            s = np.empty(1)
            for eps, sv, tau, rr in POINTS:
                z = np.array([math.log(eps), math.log(sv / (1 - sv)), math.log(tau / (1 - tau))])
                z = np.append(z, math.atanh(rr))
                s[0] = sv
                ll = {0: np.empty(n), 1: np.empty(n)}
                t = {0: 0.0, 1: 0.0}
                for c in (off, corr):  # compile / warm
                    _corr_log_lik(z, km, c, eps, s, ll[0])
                for _ in range(reps):
                    for k, c in ((0, off), (1, corr)):
                        t0 = time.process_time()
                        _corr_log_lik(z, km, c, eps, s, ll[k])
                        t[k] += time.process_time() - t0
                d = np.abs(ll[0] - ll[1]).max()
                pt = f"{eps:g},{sv:g},{tau:g},{rr:g}"
                t0, t1 = t[0] / reps * 1e3, t[1] / reps * 1e3
                print(f"{size:>9} {h:>11} {n:5d} {corr.k_grp.size:6d} {pt:>22} "
                      f"{t0:12.2f} {t1:9.2f} {t0 / t1:6.2f} {d:10.1e}")  # fmt: skip


def grid():
    from samplers.model import band_quadrature as bq
    from samplers.model.codes import LIK_BIVARIATE_NORMAL
    from samplers.model.densities import rho_max
    from samplers.model.params import aux_params
    from samplers.numerics.quadrature import gauss_legendre_table

    XG, WG = gauss_legendre_table(bq.QUAD_NODES)
    rng = np.random.default_rng(1)
    worst = (0.0, None)
    n_cases = n_tab = n_keys = 0
    for n0, n1 in ((32, 32), (20, 44), (5, 7), (100, 100), (128, 128), (1000, 1000)):
        m = 60
        xs, ys = rng.integers(0, n0 + 1, m), rng.integers(0, n1 + 1, m)
        xs[:4], ys[:4] = [0, n0, 0, 1], [0, n1, n1, 0]
        P = aux_params(xs, np.full(m, n0), ys, np.full(m, n1))
        for tau in (0.0, 0.01, 0.1, 0.5, 0.95):
            k_c = np.concatenate([xs, ys]).astype(float)
            k_n = np.concatenate([np.full(m, n0), np.full(m, n1)]).astype(float)
            JT, JZ = np.empty((2 * m, bq.JAC_POINTS)), np.empty((2 * m, 3))
            bq.fill_jacobian_tables(k_c, k_n, np.full(2 * m, tau), JT, JZ)
            n_tab += int(JZ[:, 2].sum())
            n_keys += 2 * m
            for rr in (0.0, 0.5, -0.9, 0.99):
                rho = rr * rho_max(tau, n0, n1)
                for eps, s, delta in BANDS:
                    for i in range(m):
                        args = (i, LIK_BIVARIATE_NORMAL, tau, rho, eps, s, delta, P, XG, WG)
                        a = bq.log_band_integral(*args)
                        b = bq.log_band_integral_tab(*args, JT, JZ, i, m + i)
                        if a == b == -np.inf:
                            continue
                        n_cases += 1
                        if abs(a - b) > worst[0]:
                            worst = (abs(a - b), (n0, n1, tau, rr, eps, s, delta, xs[i], ys[i], a))
    print(f"{n_cases} finite band integrals; tables passing their check: {n_tab} of {n_keys}")
    print(f"worst |log with tables - log without|: {worst[0]:.2e} at "
          "(N0, N1, tau, rho/rho_max, eps, s, delta, X, Y, log value) =", worst[1])  # fmt: skip


def posterior(n_targets, seed, tau, max_time, sampler_seed=None, draws=None):
    import bayes_dp as bdp

    from benchmarks._support.lira_sim import lira_counts
    from tests.reference import posterior_grid_groups

    c = lira_counts(64, n_targets, seed).counts
    keep = (c.fp > 0) & (c.fp < c.n_neg) & (c.fn > 0) & (c.fn < c.n_pos)
    fp, n0, fn, n1 = (np.asarray(v)[keep] for v in (c.fp, c.n_neg, c.fn, c.n_pos))
    rows = np.unique(np.stack([fp, n0, fn, n1], 1), axis=0).shape[0]
    print(f"{n_targets} targets, {keep.sum()} without a zero or full count, {rows} distinct rows")
    ev = bdp.Evidence(bdp.AttackCounts(fp, n0, fn, n1), likelihood="bivariate_normal", name="lira",
                      fix={"tau": tau, "rho": 0.0})  # fmt: skip
    t0 = time.perf_counter()
    sseed = seed if sampler_seed is None else sampler_seed
    post = bdp.estimate_epsilon(
        ev, delta=0.0, seed=sseed, draws=draws, max_time=max_time, progress=False
    )
    t_s = time.perf_counter() - t0
    diag = post.diagnostics()
    print(f"sampler: {t_s:.0f} s, {post.n_draws} draws per chain, converged {post.converged}, "
          f"r_hat {max(d['r_hat'] for d in diag.values()):.3f}, "
          f"ESS bulk {min(d['ess_bulk'] for d in diag.values()):.0f}")  # fmt: skip
    t0 = time.perf_counter()
    lik = {"likelihood": "bivariate_normal", "tau": tau, "rho": 0.0}
    ref = posterior_grid_groups([((fp, n0, fn, n1), ("beta", 1.0, 1.0), lik)], 0.0,
                                eps_prior=("halfnormal", 10.0))  # fmt: skip
    print(f"reference: {time.perf_counter() - t0:.0f} s")
    qs = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    for var, cdf in (("eps", ref.eps_cdf), ("s", lambda x: ref.s_cdf(0, x))):
        x = post.draws(var).ravel()
        err = cdf(np.quantile(x, qs)) - qs
        print(
            f"{var}: reference CDF at the sampler's quantiles - level (points): "
            + " ".join(f"{100 * e:+.2f}" for e in err)
            + f"; worst {100 * np.abs(err).max():.2f}"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="part", required=True)
    a = sub.add_parser("profile")
    a.add_argument("--sizes", nargs="+", default=["64x1000", "64x10000"])
    a.add_argument("--halves", nargs="+", default=["balanced", "independent"])
    a.add_argument("--reps", type=int, default=10)
    sub.add_parser("grid")
    b = sub.add_parser("posterior")
    b.add_argument("--targets", type=int, default=300)
    b.add_argument("--seed", type=int, default=4, help="seed of the simulated counts")
    b.add_argument("--sampler-seed", type=int, default=None, help="default: --seed")
    b.add_argument("--tau", type=float, default=0.02)
    b.add_argument("--max-time", type=float, default=600.0)
    b.add_argument("--draws", type=int, default=None, help="draws per chain (default: automatic)")
    o = p.parse_args()
    if o.part == "profile":
        profile(o.sizes, o.halves, o.reps)
    elif o.part == "grid":
        grid()
    else:
        posterior(o.targets, o.seed, o.tau, o.max_time, o.sampler_seed, o.draws)


if __name__ == "__main__":
    main()
