"""Audit a small PyTorch network on digits, with and without DP-SGD through Opacus.

A small convolutional network (8x8 image -> 16 channels 3x3 -> max-pool -> 10 logits) is
trained by ``mia.pytorch.TorchAlgorithm`` on challenge bases from scikit-learn's digits
(|D| = 999, z mislabelled), once with plain SGD and once with DP-SGD through Opacus (noise
multiplier 1.0, clip norm 1.0). Each audit gives cross-fed counts at alpha = 0.1 and the
posterior of eps; for DP-SGD the eps of Opacus's RDP accountant is printed next to it. The audit
sees only what this attack can detect, so with a correct DP-SGD the posterior lies below the
accountant's bound; a posterior above it points at a bug (or a wrong accountant setting).

    pip install -e ".[torch]"
    python examples/torch_digits.py            # 10 bases x 2 x 30 models, 10 epochs: ~20 min
    python examples/torch_digits.py --quick    # about a minute on 2 cores

Losses are stored under ``--out`` (default ``torch_digits_audit/``); an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import time
import warnings

import bayes_dp as bdp
import mia


def small_cnn():
    """The audited network; module level so that joblib workers can unpickle it."""
    from torch import nn

    return nn.Sequential(
        nn.Unflatten(1, (1, 8, 8)),
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2 bases, N = 6, 2 epochs")
    p.add_argument("--bases", type=int, default=10)
    p.add_argument("--models", type=int, default=30, help="N, models per hypothesis")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--out", default="torch_digits_audit")
    p.add_argument("--jobs", type=int, default=-1)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument(
        "--likelihood",
        choices=("bivariate_normal", "binomial"),
        default="bivariate_normal",
        help="of the cross-fed counts (correlated: bivariate_normal, the paper's eq. 7)",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.bases, args.models, args.epochs = 2, 6, 2
        args.out += "_quick"

    from mia.pytorch import TorchAlgorithm

    X, y = mia.load_digits()
    bases = mia.draw_challenge_bases(X, y, args.bases, size=999, z="mislabelled", seed=args.seed)
    algos = {
        "SGD": TorchAlgorithm(small_cnn, epochs=args.epochs),
        "DP-SGD": TorchAlgorithm(
            small_cnn, epochs=args.epochs, dp=mia.DPSGD(noise_multiplier=1.0, clip_norm=1.0)
        ),
    }
    rows = []
    for i, (label, algo) in enumerate(algos.items()):
        t0 = time.perf_counter()
        res = mia.run_audit(
            algo,
            bases,
            args.models,
            f"{args.out}/{label}",
            seed=args.seed + i,
            n_jobs=args.jobs,
            progress=not args.quick,
        )
        secs = time.perf_counter() - t0
        counts = res.counts(args.alpha)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", bdp.ConvergenceWarning)
            post = bdp.estimate_epsilon(
                res.to_evidence(args.alpha, name="lira", likelihood=args.likelihood),
                delta=args.delta,
                seed=args.seed,
            )
        lo, hi = post.interval(0.9, "eps")
        rows.append(
            {
                "label": label,
                "fp": int(counts.fp.sum()),
                "fn": int(counts.fn.sum()),
                "n": int(counts.n_neg.sum()),
                "median": float(post.quantile(0.5, "eps")),
                "interval": (float(lo), float(hi)),
                "opacus_eps": algo.epsilon(args.delta, 1000) if algo.dp is not None else None,
                "warned": any(issubclass(w.category, bdp.ConvergenceWarning) for w in caught),
                "secs": secs,
            }
        )

    print(
        f"{args.bases} bases x 2 x {args.models} models, {args.epochs} epochs, alpha = "
        f"{args.alpha}, delta = {args.delta:g}"
    )
    print(
        f"{'':<8}{'FP':>6}{'FN':>6}{'of':>6}  {'eps median':>10}  {'90% interval':>15}  "
        f"{'Opacus eps':>10}{'time':>8}"
    )
    for r in rows:
        bound = f"{r['opacus_eps']:10.2f}" if r["opacus_eps"] is not None else f"{'-':>10}"
        star = "*" if r["warned"] else " "
        print(
            f"{r['label']:<8}{r['fp']:>6}{r['fn']:>6}{r['n']:>6}  {r['median']:>10.2f}  "
            f"[{r['interval'][0]:5.2f}, {r['interval'][1]:5.2f}]{star}  {bound}{r['secs']:>7.0f}s"
        )
    if any(r["warned"] for r in rows):
        print("* the sampler warned about convergence (short audits give weak evidence)")
    return rows


if __name__ == "__main__":
    main()
