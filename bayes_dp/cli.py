"""The ``bayes-dp`` command line.

``bayes-dp estimate COUNTS.csv --delta 1e-5 --out DIR`` reads attack counts, samples the
posterior of eps, prints the summary and writes ``DIR/posterior.nc`` and ``DIR/report.html``.
``bayes-dp report DIR/posterior.nc`` (re)writes the HTML report of a saved posterior.
``bayes-dp plan --eps 3 --s 0.7 --delta 1e-5 --bases 10 --n 100 1000 --claim 2`` predicts what
candidate audit designs will show (:func:`bayes_dp.plan_audit`).
``--json`` prints one JSON object to stdout instead of the table; log lines go to stderr
(``--quiet`` silences them); ``bayes-dp --version`` prints the version.

Input files (CSV with a header line, or JSON: a list of row objects or an object of columns)
have the columns ``fp, n_neg, fn, n_pos`` (one row per challenge base) and optionally ``group``
(rows with the same group form one :class:`~bayes_dp.Evidence`; the first group shares the
strength ``s``, later groups get their own ``s_<group>``) and ``likelihood`` (default
"binomial"). Column names are case-insensitive; unknown, duplicate or misspelt columns, empty
cells and invalid group names are errors. A score matrix of your own attack (``.npz`` with arrays
``scores`` and ``keep``, or a long ``.csv`` with columns ``model, target, score, member``) is
turned into cross-fed counts first (``mia.counts_from_score_matrix``; options ``--alpha``,
``--score-method``).

By default ``estimate`` samples until every variable has r_hat <= 1.01 and bulk and tail
ESS >= 4000, extending the run in rounds within a time budget (``--max-time``, default 600 s);
a progress bar (tqdm) shows on stderr. Ctrl-C stops within about a second, with exit status
130 and no files written; files are written under temporary names and renamed when complete.

Exit statuses: 0 success (possibly with warnings); 1 bad input, or a file that cannot be read
or written (one line ``bayes-dp: error: ...`` on stderr naming the file, row and column); 2
usage error (bad, missing or out-of-range options, found before anything is read or run); 3
not converged: the result fails the convergence checks, however its length was set (the
results are written, marked NOT CONVERGED on stdout and not reliable); 130 interrupted.

It is long because it holds every subcommand of ``bayes-dp`` with its argument parsing and the input
checks whose messages name the file, row and column; the statistics live in the library.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import io
import json
import math
import os
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

from .exceptions import TimeBudgetError

__all__ = ["main", "read_counts", "InputError", "EXIT_STATUSES"]

REQUIRED = ("fp", "n_neg", "fn", "n_pos")
OPTIONAL = ("group", "likelihood")
VALID = REQUIRED + OPTIONAL
DEFAULT_GROUP = "counts"
SCORE_METHODS = ("online", "offline", "online-fixed", "offline-fixed")

#: Exit statuses of ``bayes-dp`` and what they mean (also in the ``--json`` output).
EXIT_STATUSES = {
    0: "success (warnings, if any, are listed but do not change the status)",
    1: "bad input, or a file that cannot be read or written; nothing was sampled or the "
    "results were not written",
    2: "usage error: unknown, missing or malformed command-line options",
    3: "not converged: the result fails the convergence checks (the time budget, --max-time, "
    "ran out before every variable reached r_hat <= 1.01 and bulk and tail ESS >= 4000, or a "
    "run of fixed --draws ended with r_hat > 1.01 or an ESS below 100 per chain); the results "
    "were written but are not reliable (nothing is written when not even the warm-up "
    "finished)",
    130: "interrupted (Ctrl-C); no result files were written",
}
#: Exit status of a run that did not converge within its time budget.
NOT_CONVERGED = 3


class InputError(ValueError):
    """A malformed counts file; the message names the file, row and column."""


def _parse_count(text, row: int, col: str, where: str) -> int:
    """One count cell as a non-negative int, or InputError naming the row and column."""
    if isinstance(text, bool):
        raise InputError(f"{where}row {row}, column {col!r}: expected a count, found {text!r}")
    if isinstance(text, (int, np.integer)):
        val = int(text)
    else:
        s = str(text).strip() if text is not None else ""
        if s == "":
            raise InputError(f"{where}row {row}, column {col!r}: empty cell, expected a count")
        try:
            val = int(s)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                raise InputError(
                    f"{where}row {row}, column {col!r}: expected an integer count, found {s!r}"
                ) from None
            if not np.isfinite(f) or f != round(f):
                raise InputError(
                    f"{where}row {row}, column {col!r}: expected an integer count, found {s!r}"
                ) from None
            val = int(f)
    if val < 0:
        raise InputError(f"{where}row {row}, column {col!r}: counts must be >= 0, found {val}")
    return val


def _suggest(name: str) -> str:
    """`` (did you mean 'n_neg'?)`` for the closest valid column name, or ``""``."""
    close = difflib.get_close_matches(name.lower(), VALID, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _canonical_columns(
    where: str, names: list, what: str = "header cell", require: bool = True
) -> list[str]:
    """Map the raw column names to the valid ones (case-insensitive), or raise InputError.

    Checks, in order: names that are not strings or empty, a header that looks semicolon- or
    tab-separated, duplicates (after ignoring case and surrounding spaces), unknown names
    (with the closest valid name suggested) and, with ``require``, missing required columns.
    ``where`` starts every message (the file, and the row for JSON row objects).
    """
    out: list[str] = []
    seen: dict[str, tuple[int, str]] = {}
    for j, raw in enumerate(names, start=1):
        if not isinstance(raw, str):
            raise InputError(f"{where}: {what} {j}: column names must be text; found {raw!r}")
        name = raw.strip()
        if name == "":
            raise InputError(
                f"{where}: {what} {j} is empty (a trailing or doubled comma?); "
                f"valid columns: {', '.join(VALID)}"
            )
        for sep, word in ((";", "semicolon"), ("\t", "tab")):
            if sep in name:
                raise InputError(
                    f"{where}: column {raw!r} holds a {word}: the file looks {word}-separated; "
                    f"bayes-dp reads comma-separated CSV (header like {','.join(REQUIRED)})"
                )
        key = name.lower()
        if key in seen:
            k0, raw0 = seen[key]
            raise InputError(
                f"{where}: duplicate column {key!r} ({what}s {k0} {raw0!r} and {j} {raw!r}; "
                "column names are case-insensitive)"
            )
        seen[key] = (j, raw)
        out.append(key)
    unknown = [(raw, key) for raw, key in zip(names, out, strict=True) if key not in VALID]
    if unknown:
        listed = ", ".join(f"{raw!r}{_suggest(key)}" for raw, key in unknown)
        raise InputError(
            f"{where}: unknown column{'s' if len(unknown) > 1 else ''} {listed}; valid columns: "
            f"{', '.join(VALID)}"
        )
    missing = [c for c in REQUIRED if c not in out]
    if require and missing:
        found = ", ".join(map(repr, names)) or "none"
        raise InputError(f"{where}: missing column {missing[0]!r} (columns found: {found})")
    return out


def _no_duplicate_keys(pairs: list) -> dict:
    """``object_pairs_hook`` for :func:`json.loads` that refuses repeated keys."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise InputError(f"duplicate key {k!r} in a JSON object")
        out[k] = v
    return out


def _rows_from_file(path: Path, fmt: str) -> list[dict]:
    if fmt == "auto":
        suffix = path.suffix.lower()
        if suffix in (".csv", ".json"):
            fmt = suffix[1:]
        else:
            raise InputError(
                f"{path}: unknown file type {suffix or '(no extension)'!r}; use a .csv or "
                ".json file, or --format csv|json"
            )
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise InputError(f"{path}: the file is empty; expected columns {', '.join(REQUIRED)}")
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text))
        header_raw = next(reader, None)
        while header_raw is not None and all(c.strip() == "" for c in header_raw):
            header_raw = next(reader, None)  # blank lines before the header
        if header_raw is None:
            raise InputError(f"{path}: no header line")
        header = _canonical_columns(str(path), header_raw)
        rows = []
        for record in reader:
            if all(c.strip() == "" for c in record):
                continue  # blank line
            if len(record) > len(header):
                raise InputError(
                    f"{path}: row {len(rows) + 1} (line {reader.line_num}): more cells "
                    f"({len(record)}) than header columns ({len(header)})"
                )
            rows.append({h: (record[j] if j < len(record) else None) for j, h in enumerate(header)})
    else:
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}: not valid JSON ({e})") from None
        except InputError as e:
            raise InputError(f"{path}: {e}") from None
        if isinstance(data, dict):
            header = _canonical_columns(str(path), list(data), what="column")
            cols = dict(zip(header, data.values(), strict=True))
            for raw, v in data.items():
                if not isinstance(v, list):
                    raise InputError(
                        f"{path}: column {raw!r} must be a list of values; found {type(v).__name__}"
                    )
            lengths = {raw: len(v) for raw, v in data.items()}
            if len(set(lengths.values())) > 1:
                raise InputError(f"{path}: columns have different lengths: {lengths}")
            n = next(iter(lengths.values()), 0)
            rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
        elif isinstance(data, list):
            rows = []
            for i, r in enumerate(data, start=1):
                if not isinstance(r, dict):
                    raise InputError(
                        f"{path}: row {i}: expected an object with keys "
                        f"{', '.join(REQUIRED)}; found {type(r).__name__}"
                    )
                keys = _canonical_columns(f"{path}: row {i}", list(r), "key", require=False)
                missing = [c for c in REQUIRED if c not in keys]
                if missing:
                    raise InputError(f"{path}: row {i}: missing column {missing[0]!r}")
                rows.append(dict(zip(keys, r.values(), strict=True)))
        else:
            raise InputError(
                f"{path}: expected a list of row objects or an object of columns; found "
                f"{type(data).__name__}"
            )
    if not rows:
        raise InputError(f"{path}: no data rows")
    return rows


def _text_cell(value, row: int, col: str, where: str, has_column: bool, default: str) -> str:
    """Return a ``group`` or ``likelihood`` cell as stripped text; empty cells are errors."""
    if not has_column:
        return default
    text = "" if value is None else str(value).strip()
    if text == "":
        raise InputError(
            f"{where}row {row}, column {col!r}: empty cell; the file has a {col!r} column, so "
            "every row needs a value"
        )
    return text


def read_counts(path, *, fmt: str = "auto") -> list:
    """Read a counts file into a list of :class:`~bayes_dp.Evidence` (one per group).

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file with a header line, or a ``.json`` file holding a list of row objects
        or an object of columns.
    fmt : {"auto", "csv", "json"}
        File format; "auto" goes by the extension.

    Returns
    -------
    list of Evidence
        In order of first appearance of each group; the first shares the strength ``s``, the
        others have ``strength="own"``.

    Raises
    ------
    InputError
        (a ValueError) naming the row and column of the first problem found: a count that is
        not a non-negative integer or exceeds its total, an unknown, duplicate or misspelt
        column (the closest valid name is suggested), an empty ``group`` or ``likelihood``
        cell, an invalid group name, or a semicolon-separated file.
    OSError
        If the file cannot be read.

    Notes
    -----
    Column names are case-insensitive (``FP`` is ``fp``). Without a ``group`` column all rows
    form one group named "counts"; without a ``likelihood`` column every group is "binomial".
    Group names follow :func:`bayes_dp.evidence.check_group_name`: a letter (any script) or an
    underscore first, then letters, digits, underscores, hyphens or single spaces, at most 64
    characters; they are compared after Unicode NFC normalisation.
    """
    return _read_counts(path, fmt=fmt)[0]


def _read_counts(path, *, fmt: str = "auto") -> tuple[list, list[list[int]]]:
    """:func:`read_counts`, and the data rows (from 1) of each group's bases in the file."""
    from .evidence import Evidence, check_group_name
    from .observations import AttackCounts

    if fmt not in ("auto", "csv", "json"):
        raise ValueError(f"`fmt` must be 'auto', 'csv' or 'json'; found {fmt!r}")
    path = Path(path)
    where = f"{path}: "
    rows = _rows_from_file(path, fmt)
    has = {c: any(c in r for r in rows) for c in OPTIONAL}
    groups: dict[str, dict] = {}
    for i, r in enumerate(rows, start=1):
        vals = {c: _parse_count(r.get(c), i, c, where) for c in REQUIRED}
        for count, total in (("fp", "n_neg"), ("fn", "n_pos")):
            if vals[total] < 1:
                raise InputError(
                    f"{where}row {i}, column {total!r}: must be >= 1, found {vals[total]}"
                )
            if vals[count] > vals[total]:
                raise InputError(
                    f"{where}row {i}, column {count!r}: {count}={vals[count]} exceeds "
                    f"{total}={vals[total]}"
                )
        g = _text_cell(r.get("group"), i, "group", where, has["group"], DEFAULT_GROUP)
        try:
            g = check_group_name(g)
        except ValueError as e:
            raise InputError(f"{where}row {i}, column 'group': {e}") from None
        lik = _text_cell(r.get("likelihood"), i, "likelihood", where, has["likelihood"], "binomial")
        entry = groups.setdefault(g, {"rows": [], "likelihood": lik, "first": i})
        if entry["likelihood"] != lik:
            raise InputError(
                f"{where}row {i}, column 'likelihood': group {g!r} has likelihood "
                f"{entry['likelihood']!r} (row {entry['first']}) but {lik!r} here"
            )
        entry["rows"].append(vals)
        entry.setdefault("lines", []).append(i)
    out = []
    for j, (name, entry) in enumerate(groups.items()):
        cols = {c: [v[c] for v in entry["rows"]] for c in REQUIRED}
        try:
            ev = Evidence(
                AttackCounts(**cols),
                likelihood=entry["likelihood"],
                name=name,
                strength="shared" if j == 0 else "own",
            )
        except ValueError as e:
            col = "likelihood" if "likelihood" in str(e) else "group"
            raise InputError(f"{where}row {entry['first']}, column {col!r}: {e}") from None
        out.append(ev)
    return out, [entry["lines"] for entry in groups.values()]


def _number(kind, low, high=None, low_open=False, high_open=False):
    """Return an argparse ``type`` that parses ``kind`` and checks its range at parse time.

    A value out of range is a usage error (exit status 2) naming the option, before anything
    is read or sampled; the range is written as an interval, e.g. ``[0, 1)``.
    """
    what = "an integer" if kind is int else "a number"
    lo_txt, hi_txt = f"{low:g}", f"{high:g}" if high is not None else ""
    if high is None:
        rng = f"{'>' if low_open else '>='} {lo_txt}"
    else:
        rng = f"in {'(' if low_open else '['}{lo_txt}, {hi_txt}{')' if high_open else ']'}"

    def parse(text: str):
        try:
            val = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, found {text!r}") from None
        if kind is float and not math.isfinite(val):
            raise argparse.ArgumentTypeError(f"must be finite, found {text!r}")
        if (val < low or (low_open and val == low)) or (
            high is not None and (val > high or (high_open and val == high))
        ):
            raise argparse.ArgumentTypeError(f"must be {rng}, found {text!r}")
        return val

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


class _UsageError(Exception):
    """Raised by the parser instead of exiting, so that ``main`` can return status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        raise _UsageError(f"{self.prog}: error: {message}")


def _parser() -> argparse.ArgumentParser:
    from . import __version__

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
        "exit status) to stdout and nothing else there",
    )
    common.add_argument(
        "--quiet", "-q", action="store_true", help="no log or progress lines on stderr"
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
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
        help="counts file (.csv or .json), score file (.npz, or .csv with columns model, "
        "target, score, member), or a result folder: LiRA's experiment-*/ folders, Privacy "
        "Meter's log folder (models/memberships.npy, signals/), or privacy-estimates "
        "attack-results *.json files (one per challenge base)",
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
        help="draws per chain (default: run until r_hat <= 1.01 and bulk and tail ESS >= 4000 "
        "for every variable, extending the run in rounds)",
    )
    e.add_argument(
        "--max-time",
        type=_number(float, 0.0, low_open=True),
        default=None,
        metavar="SEC",
        help="time budget of the sampling in seconds (default 600 without --draws, none with "
        "it); when it runs out first the results are written, marked not reliable, and the "
        "exit status is 3",
    )
    e.add_argument("--chains", type=_number(int, 1), default=4, help="number of chains (default 4)")
    e.add_argument(
        "--tune",
        type=_number(int, 0),
        default=None,
        help="warm-up iterations per chain (default 1000)",
    )
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
    e.add_argument(
        "--alpha",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.1,
        help="score files only: target type-I error of the membership test (default 0.1)",
    )
    e.add_argument(
        "--score-method",
        choices=SCORE_METHODS,
        default="online",
        help="score files only: LiRA online or offline test; '-fixed': one variance pooled over "
        "targets (default online)",
    )
    e.add_argument(
        "--epoch",
        type=int,
        default=None,
        help="LiRA folders only: the epoch of scores/<epoch>.npy to read (default the last)",
    )
    e.add_argument(
        "--direction",
        choices=("auto", "higher", "lower"),
        default="auto",
        help="LiRA and Privacy Meter folders: whether higher or lower scores mean member "
        "(default auto: detected from the IN and OUT means, and printed)",
    )
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
    from ._cli_gdp import add_gdp_parser

    add_gdp_parser(sub, common)
    _add_plan_parser(sub, common)
    return p


def _add_prior_options(p, fixed_flag: str, fixed_help: str) -> None:
    """Add --prior-eps-scale and, mutually exclusive, ``fixed_flag`` (s fixed), --prior-s-beta."""
    p.add_argument(
        "--prior-eps-scale",
        type=_number(float, 0.0, low_open=True),
        default=10.0,
        metavar="X",
        help="scale of the HalfNormal prior of eps (default 10)",
    )
    s = p.add_mutually_exclusive_group()
    s.add_argument(
        fixed_flag,
        type=_number(float, 0.0, 1.0),
        default=None,
        metavar="FIXED",
        dest="s_fixed",
        help=fixed_help,
    )
    s.add_argument(
        "--prior-s-beta",
        type=_number(float, 0.0, low_open=True),
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="Beta(A, B) prior of s (default 1 1)",
    )


def _prior_from_args(args):
    """Return the :class:`~bayes_dp.Prior` of the options of :func:`_add_prior_options`."""
    import bayes_dp as bdp

    if args.s_fixed is not None:
        s_prior = args.s_fixed
    else:
        s_prior = bdp.Beta(*(args.prior_s_beta or (1.0, 1.0)))
    return bdp.Prior(eps=bdp.HalfNormal(args.prior_eps_scale), s=s_prior)


def _add_plan_parser(sub, common) -> None:
    """Add the ``plan`` subcommand (:func:`bayes_dp.plan_audit` on the command line)."""
    p = sub.add_parser(
        "plan",
        parents=[common],
        help="predict what candidate audit designs will show, before running them",
        description="Simulate audits from a hypothesised eps and attack strength s for every "
        "design (BASES x N crossed) and print, per design, the median and 10-90%% range of the "
        "credible interval's ends and width, the power to detect a violated --claim and the "
        "ceiling (the largest claim a perfect attack could refute). Binomial counts only.",
    )
    p.add_argument(
        "--eps",
        type=_number(float, 0.0, low_open=True),
        required=True,
        help="hypothesised eps (at --delta)",
    )
    p.add_argument(
        "--s",
        type=_number(float, 0.0, 1.0, high_open=True),
        required=True,
        help="hypothesised attack strength s, in [0, 1)",
    )
    p.add_argument(
        "--delta",
        type=_number(float, 0.0, 1.0, high_open=True),
        required=True,
        help="the known DP delta, in [0, 1)",
    )
    p.add_argument(
        "--bases",
        type=_number(int, 1),
        nargs="+",
        default=[1],
        metavar="B",
        help="challenge bases (default 1)",
    )
    p.add_argument(
        "--n",
        type=_number(int, 1),
        nargs="+",
        required=True,
        metavar="N",
        help="challenges per hypothesis on each base: shadow models, or canaries",
    )
    p.add_argument(
        "--claim",
        type=_number(float, 0.0, low_open=True),
        default=None,
        help="a claimed eps: report the power",
    )
    p.add_argument(
        "--level",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.9,
        help="probability of the interval (default 0.9)",
    )
    p.add_argument(
        "--confidence",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.95,
        help="posterior probability of eps > CLAIM that counts as detection (default 0.95)",
    )
    p.add_argument(
        "--reps", type=_number(int, 1), default=50, help="simulated audits per design (default 50)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_prior_options(
        p, "--prior-s-fixed", "the audit will fix s at this value instead of inferring it"
    )
    p.add_argument(
        "--cores", type=_number(int, 1), default=None, help="threads (default: all cores)"
    )
    p.add_argument("--plot", default=None, metavar="FILE", help="save the width/power figure")


def _plan(args, out, log) -> dict:
    """Run ``bayes-dp plan``: print the plan's table (or return it for ``--json``)."""
    import bayes_dp as bdp

    from . import __version__

    prior = _prior_from_args(args)
    designs = [{"bases": b, "n": n, "level": args.level} for b in args.bases for n in args.n]
    log(f"planning {len(designs)} design(s) x {args.reps} simulated audits")
    plan = bdp.plan_audit(
        {"eps": args.eps, "s": args.s},
        designs,
        delta=args.delta,
        claim=args.claim,
        prior=prior,
        reps=args.reps,
        confidence=args.confidence,
        seed=args.seed,
        cores=args.cores,
    )
    log(f"done in {plan.seconds:.1f} s")
    failed = int(plan.table.failed.sum())
    if failed:
        log(f"warning: {failed} simulated audit(s) had no usable grid posterior (left out)")
    files = {"plot": None}
    if args.plot:
        import matplotlib.pyplot as plt

        ax = plan.plot(x="n" if len(args.bases) == 1 else "total")
        ax.figure.savefig(args.plot, dpi=120)
        plt.close(ax.figure)
        files["plot"] = str(args.plot)
        log(f"wrote {args.plot}")
    if not args.json:
        print(plan, file=out)
    return {
        "exit_status": 0,
        "exit_status_meaning": EXIT_STATUSES[0],
        **plan.to_dict(),
        "files": files,
        "versions": {"bayes-dp": __version__},
    }


def _check_writable_dir(outdir: Path) -> None:
    """Raise InputError unless ``outdir`` is, or can be created as, a writable folder.

    Nothing is left behind: when ``outdir`` does not exist yet, a temporary folder is made and
    removed in its nearest existing parent.
    """
    probe_in = outdir
    while not probe_in.exists():
        if probe_in.parent == probe_in:
            break
        probe_in = probe_in.parent
    if probe_in.exists() and not probe_in.is_dir():
        what = "exists" if probe_in == outdir else f"cannot be created: {probe_in} exists"
        raise InputError(f"--out {outdir} {what} and is not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".bayes-dp-probe-", dir=probe_in))
    except OSError as e:
        raise InputError(
            f"--out {outdir}: cannot create or write files in {probe_in} "
            f"({e.strerror or e}); choose a writable folder"
        ) from None


def _finite(x):
    """``x`` as a float, or None where it is NaN or infinite (JSON has neither)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _prior_text(prior, uses_tau: bool) -> str:
    """Write the prior as ``Prior(eps=..., s=...)``, with tau only when a group has a tau."""
    tau = f", tau={prior.tau!r}" if uses_tau else ""
    return f"Prior(eps={prior.eps!r}, s={prior.s!r}{tau})"


def _uses_tau(likelihoods) -> bool:
    return any(lik in ("bivariate_normal", "beta_binomial") for lik in likelihoods)


def _result_json(post, files: dict, prob: float = 0.9) -> dict:
    """Build the ``--json`` object of a posterior (see the README's command-line section).

    Its exit status is 3 (:data:`NOT_CONVERGED`) when the result fails the convergence checks
    (:func:`~bayes_dp.diagnostics.passes_convergence_checks`), however the run's length was
    set, and 0 otherwise.
    """
    from .claim import audit_claim
    from .diagnostics import passes_convergence_checks
    from .priors import parse_prior
    from .report import plain_warnings

    st = post.settings
    diag = post.diagnostics()
    lo_q, hi_q = (1 - prob) / 2, (1 + prob) / 2
    variables = {}
    for v in post.var_names:
        q = post.quantile([0.05, 0.25, 0.5, 0.75, 0.95], v)
        lo, hi = post.interval(prob, v)
        h_lo, h_hi = post.hdi(prob, v)
        variables[v] = {
            "mean": _finite(post.mean(v)),
            "median": _finite(q[2]),
            "sd": _finite(np.std(post.draws(v))),
            "quantiles": {
                f"{p:g}": _finite(x) for p, x in zip((0.05, 0.25, 0.5, 0.75, 0.95), q, strict=True)
            },
            "interval": [_finite(lo), _finite(hi)],
            "hdi": [_finite(h_lo), _finite(h_hi)],
            "r_hat": _finite(diag[v]["r_hat"]),
            "ess_bulk": _finite(diag[v]["ess_bulk"]),
            "ess_tail": _finite(diag[v]["ess_tail"]),
        }
    eps = variables["eps"]
    converged = passes_convergence_checks(post)
    status = 0 if converged else NOT_CONVERGED
    prior = parse_prior(st.get("prior", ""))
    groups = st.get("groups", [])
    if prior is not None:
        prior = _prior_text(prior, _uses_tau(g.get("likelihood") for g in groups))
    else:
        prior = st.get("prior")
    return {
        "exit_status": status,
        "exit_status_meaning": EXIT_STATUSES[status],
        "converged": converged,
        "stop_reason": st.get("stop_reason"),
        "sampling_seconds": st.get("seconds"),
        "max_time": st.get("max_time"),
        "eps": {
            "median": eps["median"],
            "credible_interval": eps["interval"],
            "prob": prob,
            "quantile_probs": [round(lo_q, 12), 0.5, round(hi_q, 12)],
        },
        "claim": audit_claim(post, hi_q).to_dict(),
        "delta": st.get("delta"),
        "variables": variables,
        "diagnostics": {
            v: {k: _finite(d[k]) for k in ("r_hat", "ess_bulk", "ess_tail")}
            for v, d in diag.items()
        },
        "acceptance": {k: _finite(a) for k, a in post.acceptance.items()},
        "warnings": plain_warnings(post),
        "fixed": st.get("fixed", {}),
        "groups": [
            {k: g.get(k) for k in ("name", "likelihood", "strength")} for g in st.get("groups", [])
        ],
        "seed": st.get("seed"),
        "chains": post.n_chains,
        "draws": post.n_draws,
        "tune": st.get("tune"),
        "prior": prior,
        "versions": st.get("versions", {}),
        "files": files,
    }


def _not_converged_words(post) -> str:
    """Why a result fails the convergence checks and what to do, in one line."""
    from .diagnostics import ESS_PER_CHAIN_MIN, RHAT_MAX, findings

    if post.converged is False:
        return (
            "the run stopped (time budget or largest run) before it converged: the result is "
            "not reliable; give more time (--max-time)"
        )
    found = [f for f in findings(post) if f.convergence]
    vs = ", ".join(dict.fromkeys(f.var for f in found))
    return (
        f"the {post.n_draws} draws per chain fail the convergence checks for {vs} (r_hat above "
        f"{RHAT_MAX} or ESS below {ESS_PER_CHAIN_MIN} per chain): the result is not reliable; "
        "run longer (--draws, or leave --draws out to run until converged)"
    )


def _is_score_file(path: Path, fmt: str) -> bool:
    """Tell whether ``path`` is a score file.

    That is an ``.npz``, or a CSV whose header has the columns ``score`` and ``member``.
    """
    if path.suffix.lower() == ".npz":
        return True
    if fmt == "json" or (fmt == "auto" and path.suffix.lower() != ".csv") or not path.is_file():
        return False
    with path.open(encoding="utf-8-sig") as fh:
        header = {c.strip() for c in fh.readline().split(",")}
    return {"score", "member"} <= header


def _folder_kind(path: Path) -> str:
    """Which result folder ``path`` is: "lira", "privacy_meter" or "attack_results"."""
    if any(p.is_dir() and p.name.startswith("experiment") for p in path.iterdir()):
        return "lira"
    if (path / "models" / "memberships.npy").is_file():
        return "privacy_meter"
    if any(path.glob("*.json")):
        return "attack_results"
    raise InputError(
        f"{str(path)!r} is a folder but none that this command reads: expected LiRA's "
        "experiment-*/ folders, Privacy Meter's models/memberships.npy with signals/, or "
        "privacy-estimates attack-results *.json files"
    )


def _folder_groups(args, log) -> list:
    """Return the Evidence of a result folder (LiRA, Privacy Meter or privacy-estimates)."""
    import mia  # lazily, as in _score_groups

    from . import Evidence

    path = Path(args.counts)
    kind = _folder_kind(path)
    if kind == "attack_results":
        counts = mia.read_attack_results(path)
        log(f"privacy-estimates attack results: {len(counts)} challenge bases from {path}")
        return [Evidence(counts, name="attack")]
    if kind == "lira":
        run = mia.read_lira_runs(path, epoch=args.epoch, direction=args.direction)
    else:
        run = mia.read_privacy_meter(path, direction=args.direction)
    log(f"read {run.describe()}")
    for note in run.notes:
        log(note)
    side = "greater" if run.direction == "higher" else "less"
    return _score_groups(args, log, (run.scores, run.keep), side=side)


def _score_groups(args, log, data=None, side: str = "auto") -> list:
    """Cross-fed counts from a score file, as one binomial Evidence group (docs/lira.md).

    ``data`` = (scores, keep) replaces the file; ``side`` is the offline test's side.
    """
    # Lazy import: mia builds on bayes_dp, so bayes_dp must not import mia at import time.
    import mia

    scores, keep = mia.read_score_file(args.counts) if data is None else data
    method, _, fixed = args.score_method.partition("-")
    res = mia.counts_from_score_matrix(
        scores,
        keep,
        args.alpha,
        method,
        fixed_variance=bool(fixed),
        skip=True,
        side=side if method == "offline" else "auto",
    )
    log(
        f"scores of {keep.shape[1]} targets under {keep.shape[0]} models: "
        f"{args.score_method} test at alpha={res.alpha:g}, {len(res.counts)} targets counted, "
        f"{res.n_skipped} skipped (too few IN/OUT models or no spread)"
    )
    return [res.to_evidence(name="lira")]


def _estimate(args, out, log) -> dict:
    import bayes_dp as bdp

    t0 = time.perf_counter()
    outdir = Path(args.out)
    _check_writable_dir(outdir)
    source = None
    if Path(args.counts).is_dir():
        groups = _folder_groups(args, log)
    elif _is_score_file(Path(args.counts), args.format):
        groups = _score_groups(args, log)
    else:
        groups, rows = _read_counts(args.counts, fmt=args.format)
        # the report numbers the bases by these rows, as the error messages do
        source = {"file": str(args.counts), "rows": rows}
    n_bases = sum(len(g.counts) for g in groups)
    if source is not None and [g.name for g in groups] == [DEFAULT_GROUP]:
        named = f"one group (the file has no 'group' column), named {DEFAULT_GROUP!r}"
    else:
        named = f"{len(groups)} group(s): {', '.join(repr(g.name) for g in groups)}"
    log(f"read {n_bases} challenge bases from {args.counts} in {named}")
    prior = _prior_from_args(args)
    tune = 1000 if args.tune is None else args.tune
    if args.draws is None:
        budget = 600.0 if args.max_time is None else args.max_time
        length = f"until r_hat <= 1.01 and bulk and tail ESS >= 4000 (at most {budget:g} s)"
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
        from ._progress import TqdmProgress

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
        from .diagnostics import glossary

        summ = post.summary()
        print(summ.round(3).to_string(), file=out)
        lo, hi = post.interval(0.9, "eps")
        if result["exit_status"] == NOT_CONVERGED:
            print(f"\nNOT CONVERGED: {_not_converged_words(post)}", file=out)
        print(f"\n90% credible interval for eps: [{lo:.3g}, {hi:.3g}]", file=out)
        acc = ", ".join(f"{k} {v:.2f}" for k, v in post.acceptance.items())
        print(f"acceptance: {acc}", file=out)
        print("\n" + textwrap.fill(result["claim"]["sentence"], width=100), file=out)
        print("\nglossary:", file=out)
        for k, v in glossary([*summ.columns, *post.acceptance]).items():
            print(textwrap.fill(f"{k}: {v}", width=100, subsequent_indent="    "), file=out)
    from .report import plain_warnings

    for w in plain_warnings(post):
        print(f"bayes-dp: warning: {w}", file=sys.stderr)
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
    return result


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


def _print_json(obj: dict, stream) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False), file=stream, flush=True)


def _failure(status: int, message: str) -> dict:
    from . import __version__

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
        args = parser.parse_args(argv)
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
            from ._cli_gdp import run_gdp

            commands = {"estimate": _estimate, "report": _report, "gdp": run_gdp, "plan": _plan}
            run = commands[args.command]
            result = run(args, out, log)
    except TimeBudgetError as e:
        return fail(NOT_CONVERGED, str(e).replace("`max_time`", "--max-time"))
    except NotImplementedError as e:
        return fail(1, str(e))
    except (InputError, ValueError, TypeError) as e:
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


if __name__ == "__main__":
    raise SystemExit(main())
