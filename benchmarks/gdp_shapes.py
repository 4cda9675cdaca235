"""Audits of score mechanisms with known eps by the whole-ROC claim (docs/validation/gdp.md section
9).

Prints one line per mechanism: how often the whole-ROC (Gaussian) 90% interval covers the true
eps, its lower end lies above it, the fit check fails, and the claim's stated lower end (the
shape-free bound) lies above the truth; medians of the lower ends. Every audit is also
written as a JSON line to ``--out``.

    PYTHONPATH=. python benchmarks/gdp_shapes.py --audits 20 --n 1000
    PYTHONPATH=. python benchmarks/gdp_shapes.py --audits 10 --n 10000 --fit-only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

from benchmarks._support.gdp_shapes import MECHANISMS, audit, draw  # noqa: E402


def fit_only(name: str, n: int, seed: int) -> float:
    """Fit check p-value of one audit (no shape-free table)."""
    import bayes_dp as bdp

    x_in, x_out = draw(name, n, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(x_in, x_out, delta=1e-5, seed=seed, draws=500, shape_free=False)
    return float(post.settings["fit_check"]["gdp"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=20)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS))
    ap.add_argument("--fit-only", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    fh = open(args.out, "a") if args.out else None
    for name in args.mechanisms.split(","):
        t0 = time.perf_counter()
        if args.fit_only:
            ps = np.array([fit_only(name, args.n, 1000 + i) for i in range(args.audits)])
            print(
                f"{name:12s} n={args.n} audits={args.audits} fit fails {np.sum(ps < 0.01)}/"
                f"{ps.size}, median p {np.median(ps):.3g} ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
            continue
        rows = [audit(name, args.n, 1000 + i) for i in range(args.audits)]
        if fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
            fh.flush()
        k = len(rows)

        def c(key, rows=rows):
            return sum(r[key] for r in rows)

        print(
            f"{name:12s} truth {rows[0]['truth']:.3g}: GDP covers {c('gdp_covers')}/{k}, "
            f"GDP lower above truth {c('gdp_lower_above')}/{k} (median "
            f"{np.median([r['gdp_lower'] for r in rows]):.3g}), fit fails "
            f"{sum(r['shape'] == 'does not fit' for r in rows)}/{k}, claim above truth "
            f"{c('claim_above')}/{k} (median claim "
            f"{np.median([r['claim_lower'] for r in rows]):.3g}, picked single "
            f"{np.median([r['picked_single'] for r in rows]):.3g}) "
            f"({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
