"""Throughput of the built-in training algorithms and wall time of a full LiRA audit on digits.

Prints models/second for softmax regression and the MLP (one process, one chunk of models
trained together), then runs the full audit of the paper's size (20 bases x 2 hypotheses x 100
models = 4,000 models) for each with the default joblib backend, in a temporary directory.

    python benchmarks/bench_training.py                 # both, 50 epochs each
    python benchmarks/bench_training.py --epochs 200    # the paper's epochs (slow)
    python benchmarks/bench_training.py --no-full       # throughput only
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import mia


def throughput(algo, base, n_models: int) -> float:
    X, y = base.dataset(1)
    rngs = [np.random.default_rng(i) for i in range(n_models)]
    t0 = time.perf_counter()
    algo.fit_losses(X, y, base.z_x[None], [base.z_y], rngs)
    return n_models / (time.perf_counter() - t0)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--bases", type=int, default=20)
    p.add_argument("--models", type=int, default=100)
    p.add_argument("--jobs", type=int, default=-1)
    p.add_argument("--no-full", action="store_true", help="skip the full audits")
    args = p.parse_args(argv)

    X, y = mia.load_digits()
    bases = mia.draw_challenge_bases(X, y, args.bases, size=999, seed=0)
    algos = {
        "softmax": mia.SoftmaxRegression(epochs=args.epochs, init="random"),
        "mlp": mia.MLP(epochs=args.epochs, init="random"),
    }
    print(f"cpu cores: {os.cpu_count()}, |D| = 999, epochs = {args.epochs}, minibatch 100")
    for name, algo in algos.items():
        rate = throughput(algo, bases[0], 20)
        print(f"{name:<8} {rate:8.1f} models/s  (1 process, 20 models per chunk)")
    if args.no_full:
        return
    total = args.bases * 2 * args.models
    for name, algo in algos.items():
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            res = mia.run_audit(algo, bases, args.models, d, n_jobs=args.jobs, progress=False)
            wall = time.perf_counter() - t0
            counts = res.counts(0.1)
        print(
            f"{name:<8} full audit {args.bases} x 2 x {args.models} = {total} models: "
            f"{wall:7.1f} s wall ({total / wall:.1f} models/s, joblib n_jobs={args.jobs}); "
            f"FP {counts.fp.sum()}, FN {counts.fn.sum()} of {counts.n_neg.sum()}"
        )


if __name__ == "__main__":
    main()
