"""The ``bayes-dp`` command line.

``bayes-dp estimate COUNTS.csv --delta 1e-5 --out DIR`` reads attack counts, samples the
posterior of eps, prints the summary and writes ``DIR/posterior.nc`` and ``DIR/report.html``.
``bayes-dp report DIR/posterior.nc`` (re)writes the HTML report of a saved posterior.

Input files (CSV with a header line, or JSON: a list of row objects or an object of columns)
have the columns ``fp, n_neg, fn, n_pos`` (one row per challenge base) and optionally ``group``
(rows with the same group form one :class:`~bayes_dp.Evidence`; the first group shares the
strength ``s``, later groups get their own ``s_<group>``) and ``likelihood`` (default
"binomial"). A score matrix of your own attack (``.npz`` with arrays ``scores`` and ``keep``, or a
long ``.csv`` with columns ``model, target, score, member``) is turned into cross-fed counts first
(``mia.counts_from_score_matrix``; options ``--alpha``, ``--score-method``). Bad input ends
with exit status 1 and one line ``bayes-dp: error: ...`` naming the row and column; usage errors
with status 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

__all__ = ["main", "read_counts", "InputError"]

REQUIRED = ("fp", "n_neg", "fn", "n_pos")
OPTIONAL = ("group", "likelihood")
DEFAULT_GROUP = "counts"
SCORE_METHODS = ("online", "offline", "online-fixed", "offline-fixed")


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
        reader = csv.DictReader(text.splitlines())
        if reader.fieldnames is None:
            raise InputError(f"{path}: no header line")
        rows = []
        for r in reader:
            if None in r:
                raise InputError(
                    f"{path}: row {len(rows) + 1} (line {reader.line_num}): more cells than "
                    f"header columns ({len(reader.fieldnames)})"
                )
            if all((v is None or str(v).strip() == "") for v in r.values()):
                continue  # blank line
            rows.append({str(k).strip(): v for k, v in r.items()})
        header = [str(h).strip() for h in reader.fieldnames]
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}: not valid JSON ({e})") from None
        if isinstance(data, dict):
            cols = {str(k): v for k, v in data.items()}
            for k, v in cols.items():
                if not isinstance(v, list):
                    raise InputError(
                        f"{path}: column {k!r} must be a list of values; found {type(v).__name__}"
                    )
            lengths = {k: len(v) for k, v in cols.items()}
            if len(set(lengths.values())) > 1:
                raise InputError(f"{path}: columns have different lengths: {lengths}")
            n = next(iter(lengths.values()), 0)
            rows = [{k: v[i] for k, v in cols.items()} for i in range(n)]
            header = list(cols)
        elif isinstance(data, list):
            rows = []
            for i, r in enumerate(data, start=1):
                if not isinstance(r, dict):
                    raise InputError(
                        f"{path}: row {i}: expected an object with keys "
                        f"{', '.join(REQUIRED)}; found {type(r).__name__}"
                    )
                rows.append({str(k): v for k, v in r.items()})
            header = sorted({k for r in rows for k in r})
        else:
            raise InputError(
                f"{path}: expected a list of row objects or an object of columns; found "
                f"{type(data).__name__}"
            )
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(
            f"{path}: missing column {missing[0]!r} (columns found: {', '.join(header) or 'none'})"
        )
    if not rows:
        raise InputError(f"{path}: no data rows")
    if fmt == "json":
        for i, r in enumerate(rows, start=1):
            for c in REQUIRED:
                if c not in r:
                    raise InputError(f"{path}: row {i}: missing column {c!r}")
    return rows


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
        (a ValueError) naming the row and column of the first problem found.
    OSError
        If the file cannot be read.
    """
    from .evidence import Evidence
    from .observations import AttackCounts

    if fmt not in ("auto", "csv", "json"):
        raise ValueError(f"`fmt` must be 'auto', 'csv' or 'json'; found {fmt!r}")
    path = Path(path)
    where = f"{path}: "
    rows = _rows_from_file(path, fmt)
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
        g = r.get("group")
        g = DEFAULT_GROUP if g is None or str(g).strip() == "" else str(g).strip()
        lik = r.get("likelihood")
        lik = "binomial" if lik is None or str(lik).strip() == "" else str(lik).strip()
        entry = groups.setdefault(g, {"rows": [], "likelihood": lik, "first": i})
        if entry["likelihood"] != lik:
            raise InputError(
                f"{where}row {i}, column 'likelihood': group {g!r} has likelihood "
                f"{entry['likelihood']!r} (row {entry['first']}) but {lik!r} here"
            )
        entry["rows"].append(vals)
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
    return out


class _Ticker:
    """Print a line to ``stream`` every ``every`` seconds while sampling runs."""

    def __init__(self, stream, every: float):
        self.stream, self.every = stream, every
        self._stop = threading.Event()
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(self.every):
            s = time.perf_counter() - self._t0
            print(f"  ... still sampling ({s:.0f} s)", file=self.stream, flush=True)

    def __enter__(self):
        if self.every > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bayes-dp",
        description="Bayesian estimation of differential privacy (eps at a known delta) from "
        "membership-inference-attack error counts (MCMC-DP-Est).",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    e = sub.add_parser(
        "estimate",
        help="sample the posterior of eps from a counts file",
        description="Read counts (columns fp, n_neg, fn, n_pos; optional group, likelihood), "
        "sample the posterior, print its summary, write DIR/posterior.nc and DIR/report.html.",
    )
    e.add_argument(
        "counts",
        metavar="COUNTS",
        help="counts file (.csv or .json), or score file (.npz, or .csv with columns model, "
        "target, score, member)",
    )
    e.add_argument("--delta", type=float, required=True, help="the known DP delta, in [0, 1)")
    e.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    e.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    e.add_argument("--draws", type=int, default=5000, help="draws per chain (default 5000)")
    e.add_argument("--chains", type=int, default=4, help="number of chains (default 4)")
    e.add_argument("--tune", type=int, default=2000, help="warm-up per chain (default 2000)")
    e.add_argument(
        "--prior-eps-scale",
        type=float,
        default=10.0,
        metavar="X",
        help="scale of the HalfNormal prior of eps (default 10)",
    )
    s = e.add_mutually_exclusive_group()
    s.add_argument(
        "--s",
        type=float,
        default=None,
        metavar="FIXED",
        help="fix the attack strength s at this value in [0, 1) instead of inferring it",
    )
    s.add_argument(
        "--prior-s-beta",
        type=float,
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="Beta(A, B) prior of s (default 1 1)",
    )
    e.add_argument("--cores", type=int, default=None, help="threads for the chains")
    e.add_argument("--format", choices=("auto", "csv", "json"), default="auto")
    e.add_argument(
        "--alpha",
        type=float,
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
    e.add_argument("--no-report", action="store_true", help="skip the HTML report")
    e.add_argument(
        "--progress-every",
        type=float,
        default=10.0,
        metavar="SEC",
        help="print a progress line this often while sampling (0: never; default 10)",
    )
    r = sub.add_parser("report", help="write the HTML report of a saved posterior")
    r.add_argument("posterior", metavar="POSTERIOR.nc")
    r.add_argument("--out", default=None, help="HTML file (default: beside the posterior)")
    return p


def _is_score_file(path: Path, fmt: str) -> bool:
    """An ``.npz``, or a CSV whose header has the columns ``score`` and ``member``."""
    if path.suffix.lower() == ".npz":
        return True
    if fmt == "json" or (fmt == "auto" and path.suffix.lower() != ".csv") or not path.is_file():
        return False
    with path.open(encoding="utf-8-sig") as fh:
        header = {c.strip() for c in fh.readline().split(",")}
    return {"score", "member"} <= header


def _score_groups(args, out) -> list:
    """Cross-fed counts from a score file, as one bivariate-normal Evidence group."""
    # Lazy import: mia builds on bayes_dp, so bayes_dp must not import mia at import time.
    import mia

    scores, keep = mia.read_score_file(args.counts)
    method, _, fixed = args.score_method.partition("-")
    res = mia.counts_from_score_matrix(
        scores, keep, args.alpha, method, fixed_variance=bool(fixed), skip=True
    )
    print(
        f"bayes-dp: scores of {keep.shape[1]} targets under {keep.shape[0]} models: "
        f"{args.score_method} test at alpha={res.alpha:g}, {len(res.counts)} targets counted, "
        f"{res.n_skipped} skipped (too few IN/OUT models or no spread)",
        file=out,
    )
    return [res.to_evidence(name="lira")]


def _estimate(args, out, err) -> int:
    import bayes_dp as bdp

    t0 = time.perf_counter()
    if _is_score_file(Path(args.counts), args.format):
        groups = _score_groups(args, out)
    else:
        groups = read_counts(args.counts, fmt=args.format)
    n_bases = sum(len(g.counts) for g in groups)
    print(
        f"bayes-dp: read {n_bases} challenge bases in {len(groups)} group(s) from {args.counts}",
        file=out,
    )
    if args.s is not None:
        s_prior = args.s
    elif args.prior_s_beta is not None:
        s_prior = bdp.Beta(*args.prior_s_beta)
    else:
        s_prior = bdp.Beta(1.0, 1.0)
    prior = bdp.Prior(eps=bdp.HalfNormal(args.prior_eps_scale), s=s_prior)
    outdir = Path(args.out)
    if outdir.exists() and not outdir.is_dir():
        raise InputError(f"--out {outdir} exists and is not a folder")
    print(
        f"bayes-dp: sampling {args.chains} chains x ({args.tune} warm-up + {args.draws} draws), "
        f"delta={args.delta:g}, {prior}, seed {args.seed} "
        "(the first run also compiles the sampler, ~10-20 s)",
        file=out,
        flush=True,
    )
    t1 = time.perf_counter()
    with _Ticker(err, args.progress_every):
        post = bdp.estimate_epsilon(
            groups,
            delta=args.delta,
            prior=prior,
            chains=args.chains,
            draws=args.draws,
            tune=args.tune,
            seed=args.seed,
            cores=args.cores,
            check=False,
        )
    print(f"bayes-dp: sampling done in {time.perf_counter() - t1:.1f} s", file=out)
    print("", file=out)
    print(post.summary().round(3).to_string(), file=out)
    lo, hi = post.interval(0.9, "eps")
    print(f"\n90% credible interval for eps: [{lo:.3g}, {hi:.3g}]", file=out)
    print(f"acceptance: {', '.join(f'{k} {v:.2f}' for k, v in post.acceptance.items())}", file=out)
    from .report import plain_warnings

    for w in plain_warnings(post):
        print(f"bayes-dp: warning: {w}", file=err)
    outdir.mkdir(parents=True, exist_ok=True)
    nc = post.to_netcdf(outdir / "posterior.nc")
    print(f"\nwrote {nc}", file=out)
    if not args.no_report:
        html_path = post.report(outdir / "report.html")
        print(f"wrote {html_path}", file=out)
    print(f"bayes-dp: total {time.perf_counter() - t0:.1f} s", file=out)
    return 0


def _report(args, out) -> int:
    import bayes_dp as bdp

    post = bdp.load_posterior(args.posterior)
    target = Path(args.out) if args.out else Path(args.posterior).with_name("report.html")
    post.report(target)
    print(f"wrote {target}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the ``bayes-dp`` command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 for bad input (a one-line message on stderr), 2 for usage errors.

    Examples
    --------
    >>> main(["estimate", "no-such-file.csv", "--delta", "1e-5", "--out", "x"])
    1
    """
    out, err = sys.stdout, sys.stderr
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse has printed its message
        return int(e.code or 0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if args.command == "estimate":
                return _estimate(args, out, err)
            return _report(args, out)
    except NotImplementedError as e:
        print(f"bayes-dp: error: {e}", file=err)
        return 1
    except (InputError, ValueError, TypeError) as e:
        msg = " ".join(str(e).split())
        print(f"bayes-dp: error: {msg}", file=err)
        return 1
    except OSError as e:
        name = e.filename if getattr(e, "filename", None) else ""
        print(f"bayes-dp: error: {name}: {e.strerror or e}".replace(": : ", ": "), file=err)
        return 1
    except KeyboardInterrupt:
        print("bayes-dp: interrupted", file=err)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
