"""LiRA at real scale (issue 23): simulated score matrices -> counts -> posterior of eps.

Scores are Gaussian: a model's score of a target is N(0, 1) when OUT and N(mu_t, 1) when IN.
The effect sizes mu_t are spread widely, as in real LiRA runs: 95% of the targets are barely
exposed (mu_t ~ Exponential(mean 0.1)) and 5% very exposed (mu_t ~ Uniform(1, 4)). Halves are
"balanced" (every target IN for exactly half of the models: the LiRA reference ``train.py``
run with ``--expid``/``--num_experiments``, whose ``get_data`` ranks uniform draws per example,
and Privacy Meter, whose ``split_dataset_for_training`` trains complementary pairs of models) or
"independent" (each model keeps each target on its own coin flip, so the IN/OUT counts differ
per target: ``train.py`` run with ``--seed`` only, ``keep = uniform <= pkeep``, and other
random-subset pipelines). The counts come from ``mia.counts_from_score_matrix`` (online test,
alpha 0.1), the posterior from ``bayes_dp.estimate_epsilon`` with default settings (automatic
length, 4 chains) and the likelihood asked for; ``--as-made`` reads each target's decisions as
made (``to_evidence(reflect=False)``, "Decisions as made in the model" in docs/validation/lira.md).

Each case runs in its own subprocess, which reports its wall time (scores -> counts and
sampling separately, compilation on first use included), its peak resident memory (RSS,
``ru_maxrss`` of the subprocess: the whole process, Python and numba included), the largest
r_hat and smallest bulk/tail ESS over the variables, and the 90% interval of eps. Nothing is
written into the repository.

    python benchmarks/bench_lira_scale.py                                 # 64 x 1,000, binomial
    python benchmarks/bench_lira_scale.py --sizes 64x1000 64x10000 --likelihood binomial
    python benchmarks/bench_lira_scale.py --sizes 64x50000 256x50000 --halves independent
    python benchmarks/bench_lira_scale.py --likelihood bivariate_normal --max-time 300
    python benchmarks/bench_lira_scale.py --sizes 64x50000 --likelihood exposure_mixture --as-made
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

SIZES = ("64x1000", "64x10000", "64x50000", "256x50000")
HALVES = ("balanced", "independent")
LIKELIHOODS = ("exposure_mixture", "binomial", "bivariate_normal")


def simulate(n_models: int, n_targets: int, halves: str, seed: int):
    """Return (scores, keep, mu) of the simulated LiRA run described in the module docstring."""
    import numpy as np

    rng = np.random.default_rng(seed)
    exposed = rng.random(n_targets) < 0.05
    mu = np.where(exposed, rng.uniform(1.0, 4.0, n_targets), rng.exponential(0.1, n_targets))
    if halves == "balanced":
        keep = np.zeros((n_models, n_targets), dtype=bool)
        half = n_models // 2
        for t in range(n_targets):
            keep[rng.permutation(n_models)[:half], t] = True
    else:
        keep = rng.random((n_models, n_targets)) < 0.5
    scores = rng.standard_normal((n_models, n_targets))
    scores += keep * mu
    return scores, keep, mu


def _child(
    size: str, halves: str, likelihood: str, max_time: float, seed: int, as_made: bool
) -> None:
    import warnings

    import bayes_dp as bdp
    import mia

    m, t = (int(v) for v in size.split("x"))
    scores, keep, _ = simulate(m, t, halves, seed)
    t0 = time.perf_counter()
    res = mia.counts_from_score_matrix(scores, keep, 0.1, skip=True)
    t_counts = time.perf_counter() - t0
    del scores
    ev = res.to_evidence(name="lira", likelihood=likelihood, reflect=not as_made)
    t1 = time.perf_counter()
    out = {"size": size, "halves": halves, "likelihood": likelihood, "counted": len(res.counts)}
    out.update(as_made=as_made)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bdp.estimate_epsilon(
                ev, delta=1e-5, seed=seed, max_time=max_time, progress=False
            )
    except bdp.TimeBudgetError as e:
        out.update(error=f"TimeBudgetError: {e}")
    except MemoryError as e:
        out.update(error=f"MemoryError: {e}")
    else:
        diag = post.diagnostics()
        lo, hi = post.interval(0.9, "eps")
        out.update(
            draws=post.n_draws,
            converged=post.converged,
            stop=post.settings.get("stop_reason"),
            r_hat=max(d["r_hat"] for d in diag.values()),
            ess_bulk=min(d["ess_bulk"] for d in diag.values()),
            ess_tail=min(d["ess_tail"] for d in diag.values()),
            eps_lo=lo,
            eps_hi=hi,
            log_lik=None if post.log_likelihood is None else list(post._loglik["counts"].shape),
        )
    out.update(
        seconds_counts=t_counts,
        seconds_sampling=time.perf_counter() - t1,
        peak_rss_gib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    )
    print(json.dumps(out))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="+", choices=SIZES, default=["64x1000"])
    p.add_argument("--halves", nargs="+", choices=HALVES, default=["balanced"])
    p.add_argument("--likelihood", nargs="+", choices=LIKELIHOODS, default=["binomial"])
    p.add_argument("--max-time", type=float, default=600.0, help="sampling budget per case (s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--as-made", action="store_true", help="to_evidence(reflect=False): decisions as made"
    )
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        _child(*a.child, max_time=a.max_time, seed=a.seed, as_made=a.as_made)
        return
    head = (
        f"{'models x targets':>16} {'halves':>11} {'likelihood':>16} {'counts s':>8} "
        f"{'sampling s':>10} {'peak RSS GiB':>12} {'draws':>7} {'r_hat':>6} {'ESS bulk/tail':>13} "
        f"{'eps 90% interval':>18}"
    )
    print(head)
    for size in a.sizes:
        for halves in a.halves:
            for lik in a.likelihood:
                cmd = [sys.executable, __file__, "--child", size, halves, lik]
                cmd += ["--max-time", str(a.max_time), "--seed", str(a.seed)]
                cmd += ["--as-made"] if a.as_made else []
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0 or not r.stdout.strip():
                    tail = (r.stderr or "").strip().splitlines()[-1:] or ["no output"]
                    why = f"FAILED (exit {r.returncode}): {tail[0]}"
                    print(f"{size:>16} {halves:>11} {lik:>16}  {why}")
                    continue
                o = json.loads(r.stdout.strip().splitlines()[-1])
                row = (
                    f"{size:>16} {halves:>11} {lik:>16} {o['seconds_counts']:8.1f} "
                    f"{o['seconds_sampling']:10.1f} {o['peak_rss_gib']:12.2f} "
                )
                if "error" in o:
                    print(row + o["error"][:80])
                    continue
                flag = "" if o["converged"] else f"  NOT CONVERGED ({o['stop']})"
                if o["log_lik"]:  # what the pointwise log likelihood keeps: chains x draws x rows
                    flag += "  log-lik kept " + " x ".join(str(v) for v in o["log_lik"])
                print(
                    row + f"{o['draws']:7d} {o['r_hat']:6.3f} "
                    f"{o['ess_bulk']:6.0f}/{o['ess_tail']:<6.0f} "
                    f"[{o['eps_lo']:.3g}, {o['eps_hi']:.3g}]{flag}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
