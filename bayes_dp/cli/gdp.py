"""The ``bayes-dp gdp`` subcommand: Gaussian-DP posterior from in/out score files.

Kept apart from ``cli.py`` (which only registers it) so that the two evolve independently.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from bayes_dp.cli.printing import add_output_options, print_claim, print_files, print_warnings
from bayes_dp.cli.result import SHAPE_NOT_FIT
from bayes_dp.core.thresholds import GRID_DRAWS
from bayes_dp.io import detect_input, read_in_out_scores, read_one_run, read_scores


def add_gdp_parser(sub, common: argparse.ArgumentParser) -> None:
    """Register ``bayes-dp gdp`` on the subparsers ``sub``."""
    g = sub.add_parser(
        "gdp",
        parents=[common],
        help="posterior of Gaussian-DP mu and eps(delta) from in/out score files",
        description="Read members' scores (IN) and non-members' scores (OUT), one number a "
        "line (a header line and '#' comments are skipped; higher means 'member'), bin them at "
        "pooled quantiles and compute the posterior of mu and of eps at --delta "
        "(bayes_dp.estimate_gdp; docs/validation/gdp.md). One-run audits may be added as evidence.",
    )
    g.add_argument("in_scores", metavar="IN", help="file of members' scores")
    g.add_argument("out_scores", metavar="OUT", help="file of non-members' scores")
    g.add_argument("--delta", type=float, required=True, help="delta of eps, in (0, 1)")
    g.add_argument("--bins", type=int, default=None, help="number of bins (default: auto)")
    g.add_argument("--s", type=float, default=1.0, help="attack strength s in [0, 1] (default 1)")
    g.add_argument(
        "--draws", type=int, default=GRID_DRAWS, help=f"draws per chain (default {GRID_DRAWS})"
    )
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
    add_output_options(g)


def _one_run(items: list[str]):
    from bayes_dp.one_run.core import OneRunCounts

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


def estimate_noting_fit(evidence, **kwargs):
    """Run :func:`~bayes_dp.estimate_gdp`; return the posterior and the fit warnings' texts."""
    import bayes_dp as bdp

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bdp.GdpFitWarning)
        post = bdp.estimate_gdp(evidence, **kwargs)
    return post, [str(w.message) for w in caught if issubclass(w.category, bdp.GdpFitWarning)]


def run_gdp(args, out, log) -> dict:
    """Run ``bayes-dp gdp``; return the JSON-ready result."""
    import bayes_dp as bdp

    ev = bdp.gdp_evidence(read_scores(args.in_scores), read_scores(args.out_scores), bins=args.bins)
    evidence = [ev]
    runs = _one_run(args.one_run)
    if runs is not None:
        evidence.append(runs)
    log(f"read {ev.n_in} in- and {ev.n_out} out-scores into {ev.n_bins} bins")
    post, notes = estimate_noting_fit(
        evidence, delta=args.delta, s=args.s, chains=args.chains, draws=args.draws, seed=args.seed
    )
    for note in notes:
        print(f"bayes-dp: warning: {note}", file=sys.stderr)
    files = {}
    if args.out is not None:
        outdir = Path(args.out)
        outdir.mkdir(parents=True, exist_ok=True)
        files["posterior"] = str(post.to_netcdf(outdir / "posterior.nc"))
        log(f"wrote {files['posterior']}")
    qs = [0.05, 0.5, 0.95]
    claim = bdp.audit_claim(post).to_dict()
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
        "claim": claim,
        "warnings": notes,
        "seed": args.seed,
        "files": files,
    }
    shape_status(result, claim)
    if not args.json:
        _print_summary(post, args.delta, out, claim)
        print(f"fit check p-value: {post.settings['fit_check']}", file=out)
        print_claim(claim, out, args.explain)
    return result


def _print_summary(post, delta: float, out, claim: dict) -> None:
    """Print the summary table, the shape-free bound and the (Gaussian) 90% interval of eps."""
    print(post.summary().round(3).to_string(), file=out)
    lo, hi = post.interval(0.9, "eps")
    shape = claim.get("gaussian_shape")
    if claim.get("shape_free_lower") is not None:
        print(
            f"\nshape-free: eps >= {claim['shape_free_lower']:.3g} at delta={delta:g} with "
            f"{100 * claim['prob']:g}% posterior probability (any mechanism)",
            file=out,
        )
    if shape == "does not fit":
        print(
            f"NOT A FINDING (the Gaussian shape does not fit): 90% credible interval for eps at "
            f"delta={delta:g}: [{lo:.3g}, {hi:.3g}]",
            file=out,
        )
    else:
        print(
            f"if the mechanism is Gaussian (shape {shape}): 90% credible interval for eps at "
            f"delta={delta:g}: [{lo:.3g}, {hi:.3g}]",
            file=out,
        )


def shape_status(result: dict, claim: dict) -> None:
    """Add the Gaussian shape's verdict to ``result``; exit status 4 when the shape fails."""
    from bayes_dp.cli.result import EXIT_STATUSES

    result["gaussian_shape"] = claim.get("gaussian_shape")
    result["shape_free_lower"] = claim.get("shape_free_lower")
    if claim.get("gaussian_shape") == "does not fit" and result.get("exit_status", 0) == 0:
        result["exit_status"] = SHAPE_NOT_FIT
        result["exit_status_meaning"] = EXIT_STATUSES[SHAPE_NOT_FIT]


# -- `bayes-dp estimate` with GDP score files, one-run summaries and counts in one posterior ------
GDP_SCORE_LAYOUT = (
    "in/out score file: .npz with arrays in_scores and out_scores, or .csv with columns score "
    "and member (1/0 or true/false; no model/target columns)"
)
ONE_RUN_LAYOUT = "one-run file: .csv with columns m, r, v (one audit a row)"


def add_estimate_gdp_options(e: argparse.ArgumentParser) -> None:
    """Add the options of ``bayes-dp estimate`` that route it to :func:`~bayes_dp.estimate_gdp`."""
    from bayes_dp.cli.options import (
        _number,  # out-of-range values are usage errors (exit 2) naming the option
    )

    g = e.add_argument_group(
        "Gaussian DP (whole ROC) and one-run audits",
        "With an in/out score file or a one-run file as COUNTS, or with --gdp-scores or "
        "--one-run, estimate computes one Gaussian-DP posterior of mu and eps(--delta) from "
        "all the evidence (bayes_dp.estimate_gdp; a counts file then adds count groups "
        f"audited at --counts-delta). Layouts: {GDP_SCORE_LAYOUT}; {ONE_RUN_LAYOUT}. The attack "
        "strength s is fixed at 1 unless --s or --prior-s-beta is given; --draws defaults "
        f"to {GRID_DRAWS} (exact, independent draws).",
    )
    g.add_argument(
        "--gdp-scores",
        action="append",
        default=[],
        metavar="FILE",
        help="an in/out score file to add as GDP evidence (repeatable; group named by the "
        "file's stem)",
    )
    g.add_argument(
        "--one-run",
        action="append",
        default=[],
        metavar="M,R,V",
        help="a one-run audit: canaries, guesses, right guesses (repeatable)",
    )
    g.add_argument(
        "--counts-delta",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=None,
        metavar="D",
        help="delta at which the counts of a counts file were audited (default --delta)",
    )
    g.add_argument(
        "--bins", type=_number(int, 2), default=None, help="bins of score files (default auto)"
    )
    g.add_argument(
        "--compare",
        action="store_true",
        help="also run bayes_dp.compare_estimators on the first score file (single-threshold "
        "posterior, Clopper-Pearson, GDP and one-run bounds, one-run posterior): shown in the "
        "report and in --json as 'comparison' (adds a sampler run)",
    )
    g.add_argument(
        "--prior-mu-scale",
        type=_number(float, 0.0, low_open=True),
        default=5.0,
        metavar="X",
        help="scale of the HalfNormal prior of mu (default 5)",
    )


def wants_gdp(args) -> bool:
    """Whether ``bayes-dp estimate`` goes the Gaussian-DP way (see the option group)."""
    return bool(args.gdp_scores or args.one_run) or _gdp_kind(args.counts) is not None


def _gdp_kind(path) -> str | None:
    """Return "gdp_scores" or "one_run" for such files (bayes_dp.io.detect_input), else None."""
    kind = detect_input(path)
    return kind if kind in ("gdp_scores", "one_run") else None


def _whole_roc_input(args) -> bool:
    """Whether a score matrix or result folder is read as whole ROCs (GdpEvidence).

    One model's scores under a global threshold (``--score-method global``), attack results
    read as one game's ROC (``--same-challenges roc``), or a privacy-estimates game's scores and
    challenge bits (``mia.read_challenge_scores``).
    """
    path = Path(args.counts)
    if getattr(args, "score_method", None) == "global":
        return True
    if getattr(args, "same_challenges", None) == "roc":
        return True
    return path.is_dir() and (
        (path / "challenge_bits").is_dir() or any(path.glob("challenge_bits.json*"))
    )


def _group_name(path: Path, taken: set[str]) -> str:
    from bayes_dp.core.evidence import check_group_name

    try:
        name = check_group_name(path.stem)
    except (TypeError, ValueError):
        name = "scores"
    base, k = name, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _gdp_evidence_of(args, log, read=None, in_out=None) -> list:
    """Return the evidence of a Gaussian-DP ``estimate``: score files, one-run audits, counts.

    ``read``: the whole-ROC evidence already read from a result folder (``bayes-dp estimate``
    reads it first), with ``in_out`` its in- and out-scores where it came from scores.
    """
    import bayes_dp as bdp
    from bayes_dp.cli.reading import check_folder_options, mia_groups
    from bayes_dp.io.counts import _read_counts

    evidence, taken = [], set()
    kind = _gdp_kind(args.counts)
    score_files = list(args.gdp_scores)
    args.first_scores = in_out
    if read is None and not _whole_roc_input(args):
        what = {"gdp_scores": "an in/out score file", "one_run": "a one-run file"}
        check_folder_options(args, what.get(kind, "a counts file"))
    if read is not None:
        evidence.extend(read)
        taken.update(ev.name for ev in read)
    elif kind == "gdp_scores":
        score_files.insert(0, args.counts)
    elif kind == "one_run":
        runs = read_one_run(args.counts)
        evidence.append(runs)
        log(f"read {len(runs)} one-run audit(s) from {args.counts}")
    elif Path(args.counts).is_dir() or Path(args.counts).suffix.lower() == ".npz":
        if not _whole_roc_input(args):
            raise ValueError(
                f"{args.counts!r} is a score matrix or a result folder: its cross-fed counts "
                "are correlated (bivariate normal) and do not combine with --gdp-scores/"
                "--one-run; run estimate on it alone (or read it as a whole ROC: --score-method "
                "global)"
            )
        args.more_counts = getattr(args, "more_counts", [])
        extras: dict = {}
        kind = "result_folder" if Path(args.counts).is_dir() else "score_matrix"
        groups = mia_groups(args, kind, log, extras)
        if not all(isinstance(g, bdp.GdpEvidence) for g in groups):
            raise ValueError(
                f"{args.counts!r} is a score matrix or a result folder: its cross-fed counts "
                "are correlated (bivariate normal) and do not combine with --gdp-scores/"
                "--one-run; run estimate on it alone (or read it as a whole ROC: --score-method "
                "global)"
            )
        evidence.extend(groups)
        taken.update(g.name for g in groups)
        args.first_scores = extras.get("in_out")
    else:
        groups, _ = _read_counts(args.counts, fmt=args.format)
        evidence.extend(groups)
        n = sum(len(g.counts) for g in groups)
        log(f"read {n} challenge bases from {args.counts} as count evidence")
    scores = []
    for f in score_files:
        x_in, x_out = read_in_out_scores(f)
        if args.first_scores is None:
            args.first_scores = (x_in, x_out)
        name = _group_name(Path(f), taken)
        scores.append(bdp.gdp_evidence(x_in, x_out, bins=args.bins, name=name))
        log(f"read {x_in.size} in- and {x_out.size} out-scores from {f} (group {name!r})")
    evidence = scores + evidence
    runs = _one_run(args.one_run)
    if runs is not None:
        evidence.append(runs)
    return evidence


def run_gdp_estimate(args, out, log, read=None, in_out=None) -> dict:
    """``bayes-dp estimate`` on Gaussian-DP evidence; the result object of ``estimate``.

    ``read``, ``in_out``: whole-ROC evidence already read from a result folder (and its in-
    and out-scores), as :func:`_gdp_evidence_of` takes them.
    """
    import bayes_dp as bdp
    from bayes_dp.cli.result import _check_writable_dir, _result_json
    from bayes_dp.report import plain_warnings

    outdir = Path(args.out)
    _check_writable_dir(outdir)
    evidence = _gdp_evidence_of(args, log, read, in_out)
    if args.s_fixed is not None:
        s = args.s_fixed
    elif args.prior_s_beta is not None:
        s = bdp.Beta(*args.prior_s_beta)
    else:
        s = 1.0
    for opt in ("tune", "max_time", "cores"):
        if getattr(args, opt) is not None:
            log(f"--{opt.replace('_', '-')} does not apply to the Gaussian-DP grid: ignored")
    has_counts = any(isinstance(e, bdp.Evidence) for e in evidence)
    log(f"Gaussian-DP posterior on a grid: delta={args.delta:g}, s={s!r}, seed {args.seed}")
    post, fits = estimate_noting_fit(
        evidence,
        delta=args.delta,
        s=s,
        mu_prior=bdp.HalfNormal(args.prior_mu_scale),
        counts_delta=args.counts_delta if has_counts else None,
        chains=args.chains,
        draws=GRID_DRAWS if args.draws is None else args.draws,
        seed=args.seed,
    )
    outdir.mkdir(parents=True, exist_ok=True)
    nc = post.to_netcdf(outdir / "posterior.nc")
    log(f"wrote {nc}")
    result = _result_json(post, {})
    result["warnings"] = fits + result["warnings"]
    result["fit_check"] = post.settings.get("fit_check", {})
    result["model"] = "gdp"
    shape_status(result, result["claim"])
    comparison = None
    if args.compare:
        if args.first_scores is None:
            raise ValueError("--compare needs an in/out score file (COUNTS or --gdp-scores)")
        log("comparing estimators on the first score file (compare_estimators)")
        comparison = bdp.compare_estimators(
            *args.first_scores, delta=args.delta, s=s, bins=args.bins, seed=args.seed
        )
        result["comparison"] = {
            name: {
                k: (None if isinstance(v, float) and not np.isfinite(v) else v)
                for k, v in row.items()
            }
            for name, row in comparison.to_dict(orient="index").items()
        }
    if not args.json:
        _print_summary(post, args.delta, out, result["claim"])
        if result["fit_check"]:
            fit = ", ".join(f"{k} {v:.3g}" for k, v in result["fit_check"].items())
            print(f"fit check (posterior predictive p-value, below 0.01 fails): {fit}", file=out)
        print_claim(result["claim"], out, args.explain)
        if comparison is not None:
            print("\n" + comparison.drop(columns="assumes").round(3).to_string(), file=out)
    print_warnings(fits + plain_warnings(post), args.explain)
    if result["exit_status"] == SHAPE_NOT_FIT:
        print(
            f"bayes-dp: warning: the Gaussian shape does not fit (exit status {SHAPE_NOT_FIT}): "
            "the whole-ROC figures are not a finding; the claim states the shape-free bound",
            file=sys.stderr,
        )
    html = None if args.no_report else outdir / "report.html"
    if html is not None:
        try:
            post.report(html, comparison=comparison)
            log(f"wrote {html}")
        except Exception as e:  # the posterior is written; say what was skipped and why
            html.unlink(missing_ok=True)
            print(f"bayes-dp: warning: the HTML report was not written ({e})", file=sys.stderr)
            html = None
    result["files"] = {"posterior": str(nc), "report": None if html is None else str(html)}
    if not args.json:
        print_files(result["files"], out)
    return result
