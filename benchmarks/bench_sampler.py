"""Speed of the two samplers: ESS_bulk/s of every variable, the scale curve, the first run.

1. ESS/s: the paper's strong-attack counts (Sec. 4.1, 10 bases, N = 1000, delta = 1e-5) with s
   free and with s fixed at 0.95, for ``sampler=bdp.Exact()`` (the default) and
   ``sampler=bdp.MHAAR()`` (Alg. 1 with its default auxiliary proposals), 4 chains at fixed
   lengths.  ESS/s is the smallest ESS_bulk over the variables divided by the wall time
   (compilation excluded).
2. Scale: 10 to 1,000 bases at N = 100 (counts drawn from the model, s free), each method at
   its default run length (``draws=None``; exact: until r_hat <= 1.01 and bulk and tail ESS >=
   4,000, within ``--max-time`` seconds; MHAAR: a fixed 5,000 draws per chain); prints
   seconds, r_hat and ESS and whether the run meets the issue's bar (r_hat <= 1.01 and
   ESS_bulk >= 400 for every variable), and plots the curve to
   ``docs/validation/figures/scale_curve.png``
   (runs that miss the bar are marked).
3. Start-up: the first posterior in a fresh interpreter with an empty numba cache, import
   included, in a subprocess (``NUMBA_CACHE_DIR`` set to an empty folder).
4. With ``--blocks`` (only): microseconds per likelihood evaluation, bases one by one vs one
   shared block, beside the cost rule that chooses between them.

Run: ``python benchmarks/bench_sampler.py [--quick] [--no-scale] [--max-time S] [--blocks]``.
Timings depend on the machine and on what else it runs; compare ratios taken in one run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import bayes_dp as bdp
from bayes_dp.results import arviz_adapter

STRONG = bdp.AttackCounts(
    fp=[40, 50, 60, 100, 100, 110, 120, 200, 200, 200],
    n_neg=1000,
    fn=[250, 200, 150, 100, 120, 100, 100, 80, 70, 60],
    n_pos=1000,
)
FIG = Path(__file__).resolve().parents[1] / "docs" / "validation" / "figures" / "scale_curve.png"
#: The issue's bar for a run: every variable's r_hat at most this and ESS_bulk at least that.
BAR_RHAT, BAR_ESS = 1.01, 400


def _diag(post):
    rh = max(arviz_adapter.rhat(post.draws(v)) for v in post.var_names)
    ess = min(arviz_adapter.ess(post.draws(v), "bulk") for v in post.var_names)
    return rh, ess


def _run(counts, prior, method, draws, tune, max_time=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        post = bdp.estimate_epsilon(
            counts,
            delta=1e-5,
            prior=prior,
            sampler=bdp.MHAAR() if method == "mhaar" else bdp.Exact(),
            chains=4,
            draws=draws,
            tune=tune,
            seed=1,
            check=False,
            max_time=max_time,
        )
        wall = time.perf_counter() - t0
    return wall, post


def ess_table(draws):
    print(f"== ESS/s on the strong-attack data, 4 chains x {draws} draws (compile excluded)")
    print(f"{'method':<7} {'s':<7} {'wall s':>7} {'max r_hat':>9} {'min ESS':>8} {'ESS/s':>7}")
    for method in ("exact", "mhaar"):
        _run(STRONG, None, method, 20, 20)  # compile
        for label, prior in (("free", None), ("0.95", bdp.Prior(s=0.95))):
            wall, post = _run(STRONG, prior, method, draws, None)
            rh, ess = _diag(post)
            print(f"{method:<7} {label:<7} {wall:7.1f} {rh:9.3f} {ess:8.0f} {ess / wall:7.0f}")


def model_counts(n_bases, n=100, eps=2.0, s=0.5, seed=7):
    """Counts of n_bases bases at N = n drawn from the model (s free in the fit)."""
    return bdp.simulate.simulate_counts(eps, s, 1e-5, [n] * n_bases, n, seed=seed)[0]


def scale_curve(sizes, max_time):
    print(f"\n== scale: N = 100 per base, s free, automatic run length (max {max_time:g} s)")
    print(f"{'bases':>6} {'method':<7} {'seconds':>8} {'draws':>7} {'max r_hat':>9} {'min ESS':>8}")
    rows = []
    for k in sizes:
        counts = model_counts(k)
        for method in ("exact", "mhaar"):
            wall, post = _run(counts, None, method, None, None, max_time=max_time)
            rh, ess = _diag(post)
            # the same bar for both methods (MHAAR's post.converged is None: it has no target)
            ok = bool(rh <= BAR_RHAT and ess >= BAR_ESS)
            if method == "exact" and not post.settings.get("converged"):
                ok = False  # stopped by the time budget
            rows.append((k, method, wall, rh, ess, ok))
            print(
                f"{k:6d} {method:<7} {wall:8.1f} {post.n_draws:7d} {rh:9.3f} {ess:8.0f}"
                + ("" if ok else "  (bar not met)"),
                flush=True,
            )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.2), constrained_layout=True)
        for method, mk in (("exact", "o-"), ("mhaar", "s--")):
            r = [row for row in rows if row[1] == method]
            ax.plot([row[0] for row in r], [row[2] for row in r], mk, label=method)
            for row in r:
                if not row[5]:
                    ax.annotate("bar not met", (row[0], row[2]), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("challenge bases (N = 100 each)")
        ax.set_ylabel("seconds at the default run length")
        ax.legend()
        FIG.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(FIG, dpi=120)
        print(f"figure: {FIG}")
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        pass


def block_costs():
    """Microseconds per likelihood evaluation: every base on its own vs one shared block.

    Counts drawn at eps = 2, s = 0.5 (N0 = N1 = N); nine points around them (eps x 0.8-1.25,
    s x 0.8-1.2). Prints the cost rule's estimates (samplers.model.binomial_block.block_cost) beside
    the measured times, so the rule's constants can be checked on the machine at hand.
    """
    import numpy as np

    from samplers.model import binomial, binomial_block

    print("\n== likelihood evaluation: bases one by one vs one block (us per evaluation)")
    print(
        f"{'N':>5} {'bases':>6} {'per base':>9} {'us/base':>8} {'block':>8}  rule: single / block"
    )
    for n in (30, 100, 300, 1000):
        for nb in (3, 10, 30, 100, 300):
            c = model_counts(nb, n=n, seed=9)
            B = binomial.binomial_bases(c.fp, c.n_neg, c.fn, c.n_pos)
            k = np.zeros(nb, dtype=np.int64)
            forced = binomial_block.make_blocks(B, k, always=True)
            alone = None  # every base on its own
            pts = [(2.0 * f, 0.5 * g) for f in (0.8, 1.0, 1.25) for g in (0.8, 1.0, 1.2)]
            ll = np.empty(nb)
            us = []
            for Q in (alone, forced):
                binomial_block.fill_log_lik(B, Q, k, 2.0, np.array([0.5]), 1e-5, -1, ll, False)
                t0 = time.perf_counter()
                for _ in range(3):
                    for e, sv in pts:
                        binomial_block.fill_log_lik(B, Q, k, e, np.array([sv]), 1e-5, -1, ll, False)
                us.append((time.perf_counter() - t0) / (3 * len(pts)) * 1e6)
            rule_block, rule_single = binomial_block.block_cost(nb, n, n)
            print(
                f"{n:5d} {nb:6d} {us[0]:9.0f} {us[0] / nb:8.1f} {us[1]:8.0f}  "
                f"{rule_single:.0f} / {rule_block:.0f}",
                flush=True,
            )


def first_run(repeats: int = 1):
    """Time the first posterior in a fresh interpreter, empty numba cache then filled.

    ``repeats`` cold runs (each with a new empty cache; the machine is shared and one run can
    be off by 10-20 %), then one with the cache the last left.
    """
    code = textwrap.dedent(
        """
        import time
        t0 = time.perf_counter()
        import bayes_dp as bdp
        c = bdp.AttackCounts([40, 50, 60], 1000, [250, 200, 150], 1000)
        post = bdp.estimate_epsilon(c, delta=1e-5, chains=4, draws=1000, tune=1000, seed=0)
        print(f"{time.perf_counter() - t0:.1f}")
        """
    )

    def run(env):
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return float(out.stdout.strip().splitlines()[-1])

    print("\n== first posterior in a fresh interpreter (import included, 3 bases, 4 x 1000)")
    cold = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            cold.append(run(env))
            print(f"empty numba cache: {cold[-1]:.1f} s", flush=True)
            if len(cold) == repeats:
                print(f"cache filled: {run(env):.1f} s")
    if repeats > 1:
        print(f"empty numba cache, best of {repeats}: {min(cold):.1f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs, scale up to 100 bases")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale curve")
    ap.add_argument("--max-time", type=float, default=300.0, help="per run of the scale curve")
    ap.add_argument(
        "--blocks", action="store_true", help="only the per-base vs block likelihood costs"
    )
    ap.add_argument(
        "--first-run", type=int, metavar="K", help="only the first-run timing, K cold runs"
    )
    args = ap.parse_args()
    if args.first_run is not None and args.first_run < 1:
        ap.error(f"--first-run K needs K >= 1 cold runs; found {args.first_run}")
    if args.blocks:
        block_costs()
        return
    if args.first_run:
        first_run(args.first_run)
        return
    first_run()
    ess_table(2000 if args.quick else 10000)
    if not args.no_scale:
        scale_curve([10, 30, 100] if args.quick else [10, 30, 100, 300, 1000], args.max_time)


if __name__ == "__main__":
    main()
