"""Stress grid: the sampler at its default settings against the quadrature reference.

For every case of ``benchmarks/_support/stress_cases.py`` (fixed strengths from 0.5 to 1 and free
ones; N from 20 to 1e6; 1 to 1000 bases; perfect, near-perfect and weak attacks; delta 0, 1e-5,
0.1; mixed N; two groups with their own strengths; a bivariate-normal group at fixed tau,
rho) this runs ``bayes_dp.estimate_epsilon(**case_args, seed=0)`` and prints a markdown table:
max r_hat and min ESS_bulk over the variables, the worst quantile error in probability points
(for q = 5, 50, 95%: |F_ref(sampler's q-quantile) - q| * 100, worst over eps and each s) and
the sampler's wall time (after a warm-up call that compiles).  A row passes when r_hat <= 1.01,
ESS_bulk >= 400 for every variable and the error is <= 1.5 points.  References are cached in
``tests/.stress_cache`` (the first run computes them; "ref s" is that computation's time).

Run: ``python benchmarks/stress_grid.py [--quick] [--out FILE.md] [--cases a,b]
[--method NAME] [--kw key=value ...]`` (``--method`` and ``--kw`` are passed to
``estimate_epsilon`` only when given).
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for benchmarks._support

import bayes_dp as bdp  # noqa: E402

from benchmarks._support import stress_cases as sc  # noqa: E402


def _kw(items):
    out = {}
    for it in items or []:
        key, _, val = it.partition("=")
        try:
            out[key] = ast.literal_eval(val)
        except (ValueError, SyntaxError):
            out[key] = val
    return out


def _s_label(case):
    if case.s_prior[0] == "fixed":
        return f"{case.s_prior[1]:g}"
    return "Beta({:g},{:g})".format(*case.s_prior[1:])


def run_case(case, extra):
    t_ref = time.perf_counter()
    gp, _ = sc.reference(case.name)
    ref_s = gp.info.get("seconds", time.perf_counter() - t_ref)
    args = sc.estimate_args(case)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bdp.estimate_epsilon(**args, seed=0, **extra)
    except Exception as e:  # a case the sampler cannot run (e.g. s = 1) fails its row
        return {"error": f"{type(e).__name__}: {e}", "seconds": time.perf_counter() - t0}, ref_s
    seconds = time.perf_counter() - t0
    res = sc.evaluate(post, case.name)
    res["seconds"] = seconds
    return res, ref_s


def table(rows):
    head = (
        "| case | bases | s | delta | max r_hat | min ESS_bulk | worst q err (pp) | seconds "
        "| ref s | result |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for case, res, ref_s in rows:
        pre = f"| {case.name} | {case.n_bases} | {_s_label(case)} | {case.delta:g} "
        if "error" in res:
            msg = res["error"].replace("|", "/")[:80]
            lines.append(f"{pre}| - | - | - | {res['seconds']:.1f} | {ref_s:.1f} | FAIL ({msg}) |")
            continue
        why = []
        if not res["r_hat"] <= sc.RHAT_MAX:
            why.append("r_hat")
        if not res["ess_bulk"] >= sc.ESS_MIN:
            why.append("ESS")
        if not res["q_err"] <= sc.QERR_MAX:
            worst = max(res["q_err_by_var"], key=res["q_err_by_var"].get)
            why.append(f"quantiles ({worst})")
        verdict = "pass" if res["pass"] else "FAIL: " + ", ".join(why)
        lines.append(
            f"{pre}| {res['r_hat']:.3f} | {res['ess_bulk']:.0f} | {res['q_err']:.2f} "
            f"| {res['seconds']:.1f} | {ref_s:.1f} | {verdict} |"
        )
    return head + "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the quick subset of cases")
    ap.add_argument("--out", help="write the markdown table to this file")
    ap.add_argument("--cases", help="comma-separated case names (default: all or --quick)")
    ap.add_argument(
        "--method", choices=("exact", "mhaar"), help="the sampler (default exact; MHAAR's defaults)"
    )
    ap.add_argument("--kw", nargs="*", help="extra estimate_epsilon arguments, key=value")
    args = ap.parse_args(argv)
    extra = _kw(args.kw)
    if args.method is not None:
        extra["sampler"] = bdp.MHAAR() if args.method == "mhaar" else bdp.Exact()
    if args.cases:
        cases = [sc.CASES[n] for n in args.cases.split(",")]
    else:
        cases = sc.quick_cases() if args.quick else list(sc.CASES.values())
    # compile outside the timings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bdp.estimate_epsilon(
            bdp.AttackCounts([40], 1000, [250], 1000),
            delta=1e-5,
            chains=1,
            draws=10,
            tune=10,
            check=False,
            **extra,
        )
    rows = []
    for case in cases:
        res, ref_s = run_case(case, extra)
        rows.append((case, res, ref_s))
        print(table([rows[-1]]).splitlines()[-1], flush=True)
    out = table(rows)
    n_pass = sum(1 for _, r, _ in rows if r.get("pass"))
    out += f"\n{n_pass} of {len(rows)} cases pass.\n"
    print("\n" + out)
    if args.out:
        Path(args.out).write_text(out)


if __name__ == "__main__":
    main()
