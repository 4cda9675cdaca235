"""The ``bayes-dp`` command line.

``bayes-dp estimate COUNTS.csv --delta 1e-5 --out DIR`` reads attack counts, samples the
posterior of eps, prints the summary and writes ``DIR/posterior.nc`` and ``DIR/report.html``.
``bayes-dp report DIR/posterior.nc`` (re)writes the HTML report of a saved posterior.
``bayes-dp plan --eps 3 --s 0.7 --delta 1e-5 --bases 10 --n 100 1000 --claim 2`` predicts what
candidate audit designs will show (:func:`bayes_dp.plan_audit`).
``bayes-dp precompile`` compiles the numba kernels ahead (:func:`bayes_dp.precompile`).
``--json`` prints one JSON object to stdout instead of the table (numbers that are infinite or
NaN written as null, so that it is always valid JSON); log lines go to stderr (``--quiet``
silences them); ``bayes-dp --version`` prints the version.

Input files (CSV with a header line, or JSON: a list of row objects or an object of columns)
have the columns ``fp, n_neg, fn, n_pos`` (one row per challenge base) and optionally ``group``
(rows with the same group form one :class:`~bayes_dp.Evidence`; the first group shares the
strength ``s``, later groups get their own ``s_<group>``) and ``likelihood`` (default
"binomial"). Column names are case-insensitive; unknown, duplicate or misspelt columns, empty
cells and invalid group names are errors. A score matrix of your own attack (``.npz`` with arrays
``scores`` and ``keep``, or a long ``.csv`` with columns ``model, target, score, member``) is
turned into cross-fed counts first (``mia.counts_from_score_matrix``; options ``--alpha``,
``--score-method``); so are the result folders of the LiRA reference code, its PyTorch port and
Privacy Meter (``mia.read_results``; options ``--epoch``, ``--signals``, ``--indices``,
``--select``, ``--skip-one-sided``, ``--direction``), while privacy-estimates attack-results
files (a folder, one ``.json`` file or several) are counts already (``--same-challenges`` for
files of one challenge set). Whole ROCs (``--score-method global``: one model's scores under one
threshold; ``--same-challenges roc``; a privacy-estimates game's scores and challenge bits) go
to the Gaussian-DP posterior. The reading options are in ``bayes_dp.cli.reading``;
``docs/reference/readers.md`` lists each tool's variants. Input paths may stand anywhere on
the line. In/out score files (``.npz`` with ``in_scores`` and ``out_scores``, or a
``.csv`` with columns ``score, member``), one-run files (``.csv`` with ``m, r, v``),
``--gdp-scores`` and ``--one-run`` give a Gaussian-DP posterior instead (``bayes_dp.cli.gdp``).

By default ``estimate`` samples until every variable has r_hat <= 1.01 and bulk and tail
ESS >= 4000, extending the run in rounds within a time budget (``--max-time``, default 600 s);
a progress bar (tqdm) shows on stderr. Ctrl-C stops within about a second, with exit status
130 and no files written; files are written under temporary names and renamed when complete.

Exit statuses: 0 success (possibly with warnings); 1 bad input, or a file that cannot be read
or written (one line ``bayes-dp: error: ...`` on stderr naming the file, row and column); 2
usage error (bad, missing or out-of-range options, found before anything is read or run); 3
not converged: the result fails the convergence checks, however its length was set (the
results are written, marked NOT CONVERGED on stdout and not reliable); 130 interrupted.

Its parts: input files are read by ``bayes_dp.io`` (format detection, count files, Gaussian-DP
files, and mia's readers through one entry); option types and shared options
(``bayes_dp.cli.options``), the ``--json`` object and exit statuses (``bayes_dp.cli.result``),
``plan`` (``bayes_dp.cli.plan``) and the Gaussian-DP options (``bayes_dp.cli.gdp``); this
module holds the parser of every subcommand (hence a little over 600 lines), ``estimate``,
``report``, ``precompile`` and ``main``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

from bayes_dp.cli.options import (
    _add_prior_options,
    _add_sampler_options,
    _check_sampler_args,
    _number,
    _prior_from_args,
    _sampler_from_args,
)
from bayes_dp.cli.plan import (
    _add_plan_parser,
    _plan,
)
from bayes_dp.cli.printing import add_output_options, print_claim, print_files, print_warnings
from bayes_dp.cli.reading import add_reading_options, check_folder_options, mia_groups
from bayes_dp.cli.result import (
    EXIT_STATUSES,
    NOT_CONVERGED,
    _check_writable_dir,
    _not_converged_words,
    _prior_text,
    _result_json,
    _uses_tau,
)
from bayes_dp.core.exceptions import TimeBudgetError
from bayes_dp.core.thresholds import AUTO_ESS_MIN, AUTO_MAX_TIME, RHAT_MAX
from bayes_dp.inference import first_run
from bayes_dp.inference.settings import MHAAR, Exact
from bayes_dp.io import detect_input
from bayes_dp.io.counts import DEFAULT_GROUP, InputError, _read_counts, read_counts

__all__ = ["main", "read_counts", "InputError", "EXIT_STATUSES", "json_safe"]


class _UsageError(Exception):
    """Raised by the parser instead of exiting, so that ``main`` can return status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        raise _UsageError(f"{self.prog}: error: {message}")


def _parser() -> argparse.ArgumentParser:
    from bayes_dp import __version__

    p = _Parser(
        prog="bayes-dp",
        description="Bayesian estimation of differential privacy (eps at a known delta) from "
        "membership-inference-attack error counts (MCMC-DP-Est).",
        epilog="exit statuses: 0 success (warnings do not change it); 1 bad input or a file "
        "that cannot be read or written; 2 usage error; 3 not converged (results written, "
        "marked not reliable); 130 interrupted (Ctrl-C).",
    )
    p.add_argument("--version", action="version", version=f"bayes-dp {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (interval, quantiles, diagnostics, warnings, versions, seed, "
        "exit status) to stdout and nothing else there; numbers that are infinite or NaN (an "
        "unbounded bound, an undefined r_hat) are written as null, so the object is always "
        "valid JSON",
    )
    common.add_argument(
        "--quiet", "-q", action="store_true", help="no log or progress lines on stderr"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    p.estimate_parser = _add_estimate_parser(sub, common)
    _add_report_parser(sub, common)
    from bayes_dp.cli.gdp import add_gdp_parser

    add_gdp_parser(sub, common)
    _add_plan_parser(sub, common)
    _add_precompile_parser(sub, common)
    return p


def _add_estimate_parser(sub, common) -> argparse.ArgumentParser:
    """Add the ``estimate`` subcommand (counts, score files and result folders; GDP options).

    Returns its parser, which ``main`` uses to read paths and options in any order.
    """
    e = sub.add_parser(
        "estimate",
        parents=[common],
        help="sample the posterior of eps from a counts file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read attack counts, sample the posterior of eps (and the attack strength "
        "s), print its summary\nand what the audit shows, write DIR/posterior.nc and "
        "DIR/report.html.\n\n"
        "The counts file has one row per challenge base:\n"
        "  fp     false positives: challenges under H0 (the target NOT in the training data) "
        "that the\n         attack called members\n"
        "  n_neg  challenges under H0 (the number fp is out of)\n"
        "  fn     false negatives: challenges under H1 (the target in the training data) "
        "that the\n         attack called non-members\n"
        "  n_pos  challenges under H1 (the number fn is out of)\n"
        "  group, likelihood  optional: rows of one group form one body of evidence; "
        "likelihood binomial\n         (default), bivariate_normal or beta_binomial. Without "
        f"a group column all rows form\n         one group, named {DEFAULT_GROUP!r}.",
        epilog="example:\n"
        "  printf 'fp,n_neg,fn,n_pos\\n40,1000,250,1000\\n50,1000,200,1000\\n' > counts.csv\n"
        "  bayes-dp estimate counts.csv --delta 1e-5 --out results --seed 0\n\n"
        "exit statuses: 0 success; 1 bad input; 2 usage error; 3 not converged (results "
        "written, not reliable);\n130 interrupted.",
    )
    e.add_argument(
        "counts",
        metavar="COUNTS",
        nargs="+",
        help="counts file (.csv or .json), score file (.npz, or .csv with columns model, "
        "target, score, member), or a result folder: LiRA's experiment-*/ folders (at any "
        "depth), Privacy Meter's log folder (models/memberships.npy, signals/), or "
        "privacy-estimates attack-results *.json files (one per challenge base; a folder of "
        "them, one file or several files); for a Gaussian-DP posterior an in/out score file "
        "(.npz with in_scores, out_scores; .csv with columns score, member) or a one-run file "
        "(.csv with columns m, r, v): see the Gaussian DP options",
    )
    e.add_argument(
        "--delta",
        type=_number(float, 0.0, 1.0, high_open=True),
        required=True,
        help="the known DP delta, in [0, 1)",
    )
    e.add_argument(
        "--out", required=True, metavar="DIR", help="output folder (created; checked first)"
    )
    e.add_argument("--seed", type=_number(int, 0), default=0, help="random seed, >= 0 (default 0)")
    e.add_argument(
        "--draws",
        type=_number(int, 1),
        default=None,
        help=f"draws per chain (default: run until r_hat <= {RHAT_MAX} and bulk and tail ESS >= "
        f"{AUTO_ESS_MIN} for every variable, extending the run in rounds)",
    )
    e.add_argument(
        "--max-time",
        type=_number(float, 0.0, low_open=True),
        default=None,
        metavar="SEC",
        help=f"time budget of the sampling in seconds (default {AUTO_MAX_TIME:g} without --draws, "
        "none with it); when it runs out first the results are written, marked not reliable, "
        "and the exit status is 3",
    )
    e.add_argument("--chains", type=_number(int, 1), default=4, help="number of chains (default 4)")
    e.add_argument(
        "--tune",
        type=_number(int, 0),
        default=None,
        help=f"warm-up iterations per chain (default {Exact.default_tune} for the exact "
        f"sampler, {MHAAR.default_tune} for MHAAR)",
    )
    _add_sampler_options(e)
    _add_prior_options(
        e,
        "--s",
        "fix the attack strength s at this value in [0, 1] instead of inferring it "
        "(1: an optimal attack on a worst-case base; the interval then holds only if the "
        "attack is that strong)",
    )
    e.add_argument(
        "--cores",
        type=_number(int, 1),
        default=None,
        help="threads for the chains (default: all cores)",
    )
    e.add_argument(
        "--format",
        choices=("auto", "csv", "json"),
        default="auto",
        help="format of COUNTS (default auto: by the file's extension, .csv or .json)",
    )
    add_reading_options(e)
    add_output_options(e)
    e.add_argument(
        "--no-report",
        action="store_true",
        help="skip the HTML report (and remove a report.html left in DIR by an earlier run)",
    )
    e.add_argument(
        "--progress-every",
        type=_number(float, 0.0),
        default=None,
        metavar="SEC",
        help="redraw the progress bar on stderr at most this often (default 0.1 in a terminal, "
        "10 when stderr is a file or pipe; 0: no bar)",
    )
    from bayes_dp.cli.gdp import add_estimate_gdp_options

    add_estimate_gdp_options(e)
    return e


def _add_report_parser(sub, common) -> None:
    """Add the ``report`` subcommand."""
    r = sub.add_parser(
        "report",
        parents=[common],
        help="write the HTML report of a saved posterior",
        description="(Re)write the self-contained HTML report of a posterior saved by "
        "`bayes-dp estimate` (DIR/posterior.nc) or Posterior.to_netcdf; with --json, print "
        "the same JSON object as estimate.",
        epilog="example: bayes-dp report results/posterior.nc --out results/report.html",
    )
    r.add_argument(
        "posterior", metavar="POSTERIOR.nc", help="a posterior netCDF file (DIR/posterior.nc)"
    )
    r.add_argument("--out", default=None, help="HTML file (default: beside the posterior)")


def _add_precompile_parser(sub, common) -> None:
    """Add the ``precompile`` subcommand."""
    sub.add_parser(
        "precompile",
        parents=[common],
        help="compile the numba kernels ahead (Docker images, CI caches)",
        description="Compile every numba kernel once on tiny inputs (bayes_dp.precompile), "
        "filling numba's on-disk cache (__pycache__ next to the kernels, or NUMBA_CACHE_DIR), "
        "so that later runs do not compile. Prints the seconds of each step.",
        epilog="example: NUMBA_CACHE_DIR=/opt/numba-cache bayes-dp precompile",
    )


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _split_inputs(args) -> None:
    """Keep the first input in ``args.counts``, the others in ``args.more_counts``.

    Several inputs are privacy-estimates attack-results files only; anything else is a usage
    error.
    """
    args.counts, args.more_counts = args.counts[0], args.counts[1:]
    if args.more_counts:
        bad = [p for p in (args.counts, *args.more_counts) if Path(p).suffix.lower() != ".json"]
        if bad or args.gdp_scores or args.one_run:
            raise _UsageError(
                "bayes-dp estimate: error: several inputs are read only as privacy-estimates "
                f"attack-results .json files; found {bad[0] if bad else args.counts!r} "
                "(give one counts file, score file or result folder)"
            )


def _estimate(args, out, log) -> dict:
    import bayes_dp as bdp
    from bayes_dp.cli.gdp import run_gdp_estimate, wants_gdp

    if wants_gdp(args):  # in/out scores, one-run audits: bayes_dp.estimate_gdp
        return run_gdp_estimate(args, out, log)

    t0 = time.perf_counter()
    outdir = Path(args.out)
    _check_writable_dir(outdir)
    source = None
    extras: dict = {}
    kind = "attack_results" if args.more_counts else detect_input(args.counts, args.format)
    if kind == "score_matrix":
        check_folder_options(args, "a score file")
    if kind in ("result_folder", "attack_results", "score_matrix"):
        groups = mia_groups(args, kind, log, extras)
        if any(isinstance(g, bdp.GdpEvidence) for g in groups):  # whole ROCs: Gaussian DP
            return run_gdp_estimate(args, out, log, read=groups, in_out=extras.get("in_out"))
    else:
        check_folder_options(args, "a counts file")
        groups, rows = _read_counts(args.counts, fmt=args.format)
        # the report numbers the bases by these rows, as the error messages do
        source = {"file": str(args.counts), "rows": rows}
    n_runs = sum(len(g.counts) for g in groups if isinstance(g.counts, bdp.OneRunCounts))
    n_bases = sum(len(g.counts) for g in groups) - n_runs
    if source is not None and [g.name for g in groups] == [DEFAULT_GROUP]:
        named = f"one group (the file has no 'group' column), named {DEFAULT_GROUP!r}"
    else:
        named = f"{len(groups)} group(s): {', '.join(repr(g.name) for g in groups)}"
    shown = " ".join([args.counts, *args.more_counts])
    what = [f"{n_bases} challenge bases"] if n_bases or not n_runs else []
    what += [f"{n_runs} one-run audit(s) (a guessing game's guesses)"] if n_runs else []
    log(f"read {' and '.join(what)} from {shown} in {named}")
    prior = _prior_from_args(args)
    sampler = _sampler_from_args(args)
    tune = sampler.default_tune if args.tune is None else args.tune
    if args.draws is None and args.sampler == MHAAR.method:
        length = f"{MHAAR.default_draws} draws (MHAAR's fixed length)"
    elif args.draws is None:
        budget = AUTO_MAX_TIME if args.max_time is None else args.max_time
        length = (
            f"until r_hat <= {RHAT_MAX} and bulk and tail ESS >= {AUTO_ESS_MIN} "
            f"(at most {budget:g} s)"
        )
    else:
        length = f"{args.draws} draws" + (
            f" (at most {args.max_time:g} s)" if args.max_time is not None else ""
        )
    log(
        f"sampling {args.chains} chains: {tune} warm-up iterations, then {length}; "
        f"delta={args.delta:g}, {_prior_text(prior, _uses_tau(g.likelihood for g in groups))}, "
        f"seed {args.seed}"
    )
    every = args.progress_every
    if every is None:
        every = 0.1 if _isatty(sys.stderr) else 10.0
    bar = None
    if not args.quiet and every > 0:
        from bayes_dp.inference.progress import TqdmProgress

        bar = TqdmProgress(desc="sampling", file=sys.stderr, mininterval=every)
    t1 = time.perf_counter()
    try:
        post = bdp.estimate_epsilon(
            groups,
            delta=args.delta,
            prior=prior,
            chains=args.chains,
            draws=args.draws,
            tune=args.tune,
            sampler=sampler,
            max_time=args.max_time,
            seed=args.seed,
            cores=args.cores,
            progress=False if bar is None else bar,
            check=False,
        )
    finally:
        if bar is not None:
            bar.close()
    if source is not None:
        post.settings["input"] = source
    if "companion" in extras:
        post.settings["companion"] = extras["companion"]
    # one meaning of the sampling time: the sampler's own (set-up and compilation included),
    # the `sampling_seconds` of --json and the report
    seconds = post.settings.get("seconds", time.perf_counter() - t1)
    log(f"sampling done in {seconds:.1f} s")
    # the posterior is written first: a later step (summary, report) must not lose the run
    outdir.mkdir(parents=True, exist_ok=True)
    nc = post.to_netcdf(outdir / "posterior.nc")
    log(f"wrote {nc}")
    result = _result_json(post, {})
    if not args.json:
        from bayes_dp.results.diagnostics import glossary

        summ = post.summary()
        print(summ.round(3).to_string(), file=out)
        if result["exit_status"] == NOT_CONVERGED:
            print(f"\nNOT CONVERGED: {_not_converged_words(post)}", file=out)
        if args.explain:
            # the interval line (which points to the claim below it), the acceptance rates
            print("\n" + textwrap.fill(result["claim"]["interval_words"], width=100), file=out)
            acc = ", ".join(f"{k} {v:.2f}" for k, v in post.acceptance.items())
            print(f"acceptance: {acc}", file=out)
        print_claim(result["claim"], out, args.explain)
        comp = result.get("companion")
        if comp and args.explain:
            print(
                f"\nfrequentist lower bounds of eps at {100 * comp['confidence']:g}% confidence:",
                file=out,
            )
            for b in comp["bounds"]:
                val = "n/a" if b["eps"] is None else f"{b['eps']:.3g}"
                line = f"{b['name']}: {val} ({b['assumes']})"
                print(textwrap.fill(line, width=100, subsequent_indent="    "), file=out)
        if args.glossary:
            print("\nglossary:", file=out)
            for k, v in glossary([*summ.columns, *post.acceptance]).items():
                print(textwrap.fill(f"{k}: {v}", width=100, subsequent_indent="    "), file=out)
    print_warnings(result["warnings"], args.explain)
    html_path = outdir / "report.html"
    if args.no_report:
        if html_path.is_file():
            html_path.unlink()
            log(f"removed {html_path} left by an earlier run (--no-report)")
        html_path = None
    else:
        try:
            post.report(html_path)
            log(f"wrote {html_path}")
        except Exception as e:  # the posterior is written; say what was skipped and why
            html_path.unlink(missing_ok=True)  # an earlier run's report would mislead
            print(
                f"bayes-dp: warning: the HTML report was not written ({type(e).__name__}: {e}); "
                f"the posterior is complete in {nc} (`bayes-dp report {nc}` retries)",
                file=sys.stderr,
            )
            html_path = None
    log(f"total {time.perf_counter() - t0:.1f} s")
    result["files"] = {
        "posterior": str(nc),
        "report": None if html_path is None else str(html_path),
    }
    if not args.json:
        print_files(result["files"], out)
    return result


def _precompile(args, out, log) -> dict:
    """``bayes-dp precompile``: fill numba's compile cache, print the seconds per step."""
    from bayes_dp.cli.precompile import precompile

    log("compiling every kernel on tiny inputs (a warm cache only loads them)")
    took = precompile(verbose=not args.quiet)
    total = sum(took.values())
    if not args.json:
        for name, sec in took.items():
            print(f"{sec:7.1f} s  {name}", file=out)
        print(f"{total:7.1f} s  in all", file=out)
    return {"exit_status": 0, "compiled": took, "seconds": total}


def _report(args, out, log) -> dict:
    import bayes_dp as bdp

    post = bdp.load_posterior(args.posterior)
    target = Path(args.out) if args.out else Path(args.posterior).with_name("report.html")
    post.report(target)
    log(f"wrote {target}")
    result = _result_json(post, {"posterior": str(args.posterior), "report": str(target)})
    # writing the report succeeded: `converged` in the object tells about the run itself
    result.update(exit_status=0, exit_status_meaning=EXIT_STATUSES[0])
    return result


def json_safe(obj):
    """Return ``obj`` with every infinite or NaN number as None and numpy values as Python's.

    JSON has no inf or NaN (``json.dumps`` would write ``Infinity``, which strict parsers
    refuse); ``--json`` writes them as null.

    Examples
    --------
    >>> json_safe({"eps": float("inf"), "r_hat": [1.0, float("nan")], "n": np.int64(3)})
    {'eps': None, 'r_hat': [1.0, None], 'n': 3}
    """
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def _print_json(obj: dict, stream) -> None:
    text = json.dumps(json_safe(obj), indent=2, ensure_ascii=False, allow_nan=False)
    print(text, file=stream, flush=True)


def _failure(status: int, message: str) -> dict:
    from bayes_dp import __version__

    return {
        "exit_status": status,
        "exit_status_meaning": EXIT_STATUSES[status],
        "error": message,
        "versions": {"bayes-dp": __version__},
    }


def main(argv: list[str] | None = None) -> int:
    """Run the ``bayes-dp`` command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success (warnings do not change it), 1 for bad input or a file that cannot be read
        or written (a one-line message on stderr), 2 for usage errors, 3 when the result fails
        the convergence checks (results written, marked not reliable), 130 when
        interrupted; see :data:`EXIT_STATUSES`.

    Notes
    -----
    The results (summary table, or with ``--json`` one JSON object) go to stdout; log lines,
    progress lines, warnings and errors go to stderr. ``--quiet`` silences the log and progress
    lines. With ``--json`` a failure also prints a JSON object, with ``exit_status`` and
    ``error`` (usage errors too, when ``--json`` is among the arguments).

    Examples
    --------
    >>> main(["estimate", "no-such-file.csv", "--delta", "1e-5", "--out", "x"])
    1
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = sys.stdout, sys.stderr
    parser = _parser()
    want_json = "--json" in argv
    try:
        if argv[:1] == ["estimate"]:
            # input paths anywhere on the line: `estimate a.json --delta 1e-5 b.json ...`
            args = parser.estimate_parser.parse_intermixed_args(argv[1:])
            args.command = "estimate"
        else:
            args = parser.parse_args(argv)
        if args.command == "estimate":
            _split_inputs(args)
        why = _check_sampler_args(args) if args.command == "estimate" else None
        if why:  # an option of the other sampler: a usage error, before anything runs
            raise _UsageError(f"bayes-dp estimate: error: {why}")
    except _UsageError as e:
        print(str(e), file=err)
        if want_json:
            _print_json(_failure(2, str(e)), out)
        return 2
    except SystemExit as e:  # --help and --version have printed and exit with 0
        return int(e.code or 0)

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"bayes-dp: {msg}", file=err, flush=True)

    def fail(status: int, msg: str) -> int:
        msg = " ".join(msg.split())
        print(f"bayes-dp: {'interrupted' if status == 130 else 'error: ' + msg}", file=err)
        if args.json:
            _print_json(_failure(status, msg), out)
        return status

    try:
        # with --json nothing but the JSON object may reach stdout: anything printed on the
        # way (by us or a library) goes to stderr instead
        redirect = contextlib.redirect_stdout(err) if args.json else contextlib.nullcontext()
        with warnings.catch_warnings(), redirect:
            warnings.simplefilter("ignore", FutureWarning)
            from bayes_dp.cli.gdp import run_gdp

            commands = {
                "estimate": _estimate,
                "report": _report,
                "gdp": run_gdp,
                "plan": _plan,
                "precompile": _precompile,
            }
            run = commands[args.command]
            quiet, first_run.QUIET = first_run.QUIET, args.quiet  # the notice is a log line
            try:
                result = run(args, out, log)
            finally:
                first_run.QUIET = quiet
    except TimeBudgetError as e:
        return fail(NOT_CONVERGED, str(e).replace("`max_time`", "--max-time"))
    except NotImplementedError as e:
        return fail(1, str(e))
    except (InputError, ValueError, TypeError) as e:
        return fail(1, str(e))
    except FileNotFoundError as e:
        if getattr(e, "filename", None):
            return fail(1, f"no such file or folder: {e.filename}")
        return fail(1, str(e))
    except OSError as e:
        name = e.filename if getattr(e, "filename", None) else ""
        return fail(1, f"{name}: {e.strerror or e}".removeprefix(": "))
    except KeyboardInterrupt:
        return fail(130, "interrupted")
    if args.json:
        _print_json(result, out)
    if result["exit_status"] == NOT_CONVERGED:
        print(
            f"bayes-dp: warning: not converged (exit status {NOT_CONVERGED}): the results were "
            "written "
            "but are not reliable; see the warnings above",
            file=err,
        )
    return result["exit_status"]
