"""The ``bayes-dp gdp`` subcommand: Gaussian-DP posterior from in/out score files.

Kept apart from ``cli.py`` (which only registers it) so that the two evolve independently.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np


def add_gdp_parser(sub, common: argparse.ArgumentParser) -> None:
    """Register ``bayes-dp gdp`` on the subparsers ``sub``."""
    g = sub.add_parser(
        "gdp",
        parents=[common],
        help="posterior of Gaussian-DP mu and eps(delta) from in/out score files",
        description="Read members' scores (IN) and non-members' scores (OUT), one number a "
        "line (a header line and '#' comments are skipped; higher means 'member'), bin them at "
        "pooled quantiles and compute the posterior of mu and of eps at --delta "
        "(bayes_dp.estimate_gdp; docs/gdp.md). One-run audits may be added as evidence.",
    )
    g.add_argument("in_scores", metavar="IN", help="file of members' scores")
    g.add_argument("out_scores", metavar="OUT", help="file of non-members' scores")
    g.add_argument("--delta", type=float, required=True, help="delta of eps, in (0, 1)")
    g.add_argument("--bins", type=int, default=None, help="number of bins (default: auto)")
    g.add_argument("--s", type=float, default=1.0, help="attack strength s in [0, 1] (default 1)")
    g.add_argument("--draws", type=int, default=4000, help="draws per chain (default 4000)")
    g.add_argument("--chains", type=int, default=4, help="chains (default 4)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument(
        "--one-run",
        action="append",
        default=[],
        metavar="M,R,V",
        help="a one-run audit (canaries, guesses, right guesses) sharing mu; repeatable",
    )
    g.add_argument("--out", default=None, metavar="DIR", help="write DIR/posterior.nc")


def read_scores(path) -> np.ndarray:
    """Read one score a line from ``path`` (a header line and ``#`` comments are skipped)."""
    path = Path(path)
    values = []
    with path.open(encoding="utf-8-sig") as fh:
        for i, line in enumerate(fh, start=1):
            text = line.split("#", 1)[0].strip().rstrip(",")
            if not text:
                continue
            try:
                values.append(float(text))
            except ValueError:
                if values or i > 1:
                    raise ValueError(
                        f"{str(path)!r} line {i}: expected one number, found {text!r}"
                    ) from None
    if not values:
        raise ValueError(f"{str(path)!r} holds no scores")
    return np.asarray(values)


def _one_run(items: list[str]):
    from .one_run import OneRunCounts

    rows = []
    for item in items:
        parts = item.split(",")
        try:
            m, r, v = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"--one-run must be M,R,V (three integers); found {item!r}") from None
        rows.append((m, r, v))
    if not rows:
        return None
    m, r, v = zip(*rows, strict=True)
    return OneRunCounts(m=list(m), r=list(r), v=list(v))


def run_gdp(args, out, log) -> dict:
    """Run ``bayes-dp gdp``; return the JSON-ready result."""
    import bayes_dp as bdp

    ev = bdp.gdp_evidence(read_scores(args.in_scores), read_scores(args.out_scores), bins=args.bins)
    evidence = [ev]
    runs = _one_run(args.one_run)
    if runs is not None:
        evidence.append(runs)
    log(f"read {ev.n_in} in- and {ev.n_out} out-scores into {ev.n_bins} bins")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(
            evidence,
            delta=args.delta,
            s=args.s,
            chains=args.chains,
            draws=args.draws,
            seed=args.seed,
        )
    notes = [str(w.message) for w in caught if issubclass(w.category, bdp.GdpFitWarning)]
    for note in notes:
        print(f"bayes-dp: warning: {note}", file=sys.stderr)
    files = {}
    if args.out is not None:
        outdir = Path(args.out)
        outdir.mkdir(parents=True, exist_ok=True)
        files["posterior"] = str(post.to_netcdf(outdir / "posterior.nc"))
        log(f"wrote {files['posterior']}")
    qs = [0.05, 0.5, 0.95]
    result = {
        "exit_status": 0,
        "command": "gdp",
        "delta": args.delta,
        "s": args.s,
        "quantiles": {
            v: dict(
                zip(("5%", "50%", "95%"), (float(x) for x in post.quantile(qs, v)), strict=True)
            )
            for v in ("mu", "eps")
        },
        "fit_check": post.settings["fit_check"],
        "warnings": notes,
        "seed": args.seed,
        "files": files,
    }
    if not args.json:
        print(post.summary().round(3).to_string(), file=out)
        lo, hi = post.interval(0.9, "eps")
        print(
            f"\n90% credible interval for eps at delta={args.delta:g}: [{lo:.3g}, {hi:.3g}]",
            file=out,
        )
        print(f"fit check p-value: {post.settings['fit_check']}", file=out)
    return result
