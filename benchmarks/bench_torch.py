"""Models per second: PyTorch (``mia.pytorch.TorchAlgorithm``) against the built-in numpy MLP.

Same network (64-128-10 ReLU, softmax), same training (SGD, learning rate 0.01, momentum 0.9,
minibatch 100, random initialisation) on 999 digits rows, one thread each (torch intra-op
threads and numpy's BLAS), and the test accuracy on the other 798 rows, so the speeds are
compared at equal accuracy. The numpy MLP trains a chunk of models at once (``fit_losses``, as
the audit runner calls it) and one at a time (``fit``); torch trains one model per ``fit``.
With ``--dp`` the DP-SGD variants are timed too (numpy ``DPSGD`` against Opacus). Timings are
the best of ``--repeats`` runs.

    python benchmarks/bench_torch.py                  # 50 epochs
    python benchmarks/bench_torch.py --epochs 20 --dp
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import mia


def mlp_net():
    """The benchmark network (module level so that it pickles)."""
    import torch

    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def numpy_accuracy(params, X, y) -> float:
    w1, b1, w2, b2 = params
    logits = np.maximum(X @ w1 + b1, 0.0) @ w2 + b2
    return float((logits.argmax(1) == y).mean())


def torch_accuracy(module, X, y) -> float:
    import torch

    with torch.no_grad():
        return float((module(torch.tensor(X)).argmax(1).numpy() == y).mean())


def best_rate(fn, n_models: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n_models / best


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--models", type=int, default=20, help="models per timing (numpy chunk)")
    p.add_argument("--torch-models", type=int, default=5, help="models per torch timing")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dp", action="store_true", help="also time DP-SGD (numpy and Opacus)")
    args = p.parse_args(argv)

    import torch
    from threadpoolctl import threadpool_limits

    from mia.pytorch import TorchAlgorithm

    X, y = mia.load_digits()
    perm = np.random.default_rng(0).permutation(len(X))
    Xd, yd, Xt, yt = X[perm[:999]], y[perm[:999]], X[perm[999:]], y[perm[999:]]
    E, k, kt = args.epochs, args.models, args.torch_models
    print(
        f"torch {torch.__version__}, numpy {np.__version__}, {os.cpu_count()} cores; "
        f"|D| = 999, test 798 rows, {E} epochs, minibatch 100, 1 thread each"
    )
    rows = []
    settings = [("", None)]
    if args.dp:
        settings.append((" DP-SGD", mia.DPSGD(noise_multiplier=1.0, clip_norm=1.0)))
    with threadpool_limits(1):
        for label, dp in settings:
            npm = mia.MLP(epochs=E, init="random", dp=dp)
            tm = TorchAlgorithm(mlp_net, epochs=E, dp=dp, threads=1)
            rngs = [np.random.default_rng(i) for i in range(k)]
            acc_np = np.mean([numpy_accuracy(npm.fit(Xd, yd, r), Xt, yt) for r in rngs[:kt]])
            acc_t = np.mean(
                [
                    torch_accuracy(tm.fit(Xd, yd, np.random.default_rng(i)), Xt, yt)
                    for i in range(kt)
                ]
            )
            r_chunk = best_rate(
                lambda npm=npm: npm.fit_losses(
                    Xd, yd, Xt[:1], yt[:1], [np.random.default_rng(i) for i in range(k)]
                ),
                k,
                args.repeats,
            )
            r_one = best_rate(
                lambda npm=npm: [npm.fit(Xd, yd, np.random.default_rng(i)) for i in range(kt)],
                kt,
                args.repeats,
            )
            r_t = best_rate(
                lambda tm=tm: [tm.fit(Xd, yd, np.random.default_rng(i)) for i in range(kt)],
                kt,
                args.repeats,
            )
            rows += [
                (f"numpy MLP{label}, {k} at once", r_chunk, acc_np),
                (f"numpy MLP{label}, one at a time", r_one, acc_np),
                (f"torch{label}, one at a time", r_t, acc_t),
            ]
            if dp is not None:
                eps_t = tm.epsilon(1e-5, 1000)
                print(f"DP-SGD sigma=1, C=1: Opacus RDP eps at delta=1e-5, n=1000: {eps_t:.2f}")
    print(f"\n{'':<34}{'models/s':>10}{'test accuracy':>16}")
    for name, rate, acc in rows:
        print(f"{name:<34}{rate:>10.2f}{acc:>16.3f}")


if __name__ == "__main__":
    main()
